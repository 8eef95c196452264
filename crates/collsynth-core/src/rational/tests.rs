use super::*;

#[test]
fn parses_decimals_exactly() {
    assert_eq!(parse_exact("12.5").unwrap(), Rat::new(25, 2));
    assert_eq!(parse_exact("0.1").unwrap(), Rat::new(1, 10));
    assert_eq!(parse_exact("1e3").unwrap(), rat(1000));
    assert_eq!(parse_exact("2.5E-1").unwrap(), Rat::new(1, 4));
    assert_eq!(parse_exact("-3").unwrap(), rat(-3));
    assert_eq!(parse_exact("1/3").unwrap(), Rat::new(1, 3));
    assert_eq!(parse_exact(".5").unwrap(), Rat::new(1, 2));
    for bad in ["", "abc", "1.2.3", "1e", "--1", "1/0", "NaN", "inf"] {
        assert!(parse_exact(bad).is_err(), "{bad}");
    }
}

#[test]
fn decimal_round_trip() {
    for s in ["12.5", "0.1", "300", "53.6870912", "0.0001"] {
        assert_eq!(to_decimal(&parse_exact(s).unwrap()).unwrap(), s);
    }
    assert_eq!(to_decimal(&Rat::new(1, 3)), None);
    assert_eq!(to_fraction_string(&Rat::new(6, 4)), "3/2");
}
