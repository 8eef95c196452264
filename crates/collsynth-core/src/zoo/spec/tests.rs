use super::*;

#[test]
fn grammar() {
    let s = Spec::parse("torus:4x4x2,bw=50/50/25").unwrap();
    assert_eq!(s.family, "torus");
    assert_eq!(s.args, vec![vec!["4x4x2".to_string()]]);
    assert_eq!(s.dims(0, 1).unwrap(), vec![4, 4, 2]);
    let p = s.link_params(&[LinkParams::default(); 3]).unwrap();
    assert_eq!(p[2].bw, Rat::from_integer(25));
    let s = Spec::parse("circulant:16:3,4").unwrap();
    assert_eq!(s.int(0, "n", 1, 100).unwrap(), 16);
    assert_eq!(s.ints(1, "offsets").unwrap(), vec![3, 4]);
    let s = Spec::parse("dgx-a100:2,bw=300/25,lat=2us").unwrap();
    assert_eq!(s.int(0, "boxes", 1, 9).unwrap(), 2);
    let p = s.link_params(&[LinkParams::default(), LinkParams::default()]).unwrap();
    assert_eq!((p[0].bw, p[1].bw, p[1].lat), (Rat::from_integer(300), Rat::from_integer(25), 2.0));
    assert!(s.link_params(&[LinkParams::default(); 3]).is_err());
    assert!(Spec::parse("ring:8,foo=1").unwrap().check_options(&[]).is_err());
    assert_eq!(Spec::parse("dgx1").unwrap().args.len(), 0);
    let s = Spec::parse("dgx1,bw=20").unwrap();
    assert_eq!((s.family.as_str(), s.option("bw")), ("dgx1", Some("20")));
    assert!(Spec::parse("dgx1,3").is_err());
    assert!(Spec::parse("ring:8,bw=0").unwrap().uniform_params(1).is_err());
}

#[test]
fn the_grammar_is_strict() {
    for (text, want) in [
        ("ring::4", "empty argument"),
        ("ring:4:", "empty argument"),
        ("ring:4,", "empty argument"),
        ("dgx1:", "empty argument"),
        ("circulant:16:3,,4", "empty argument"),
        ("ring:4,bw=1,bw=2", "option bw= is given twice"),
        ("ring:4,=2", "no name"),
        ("ring:4\n", "control character"),
        ("\tring:4", "control character"),
        ("ring:4\u{0}", "control character"),
    ] {
        let err = crate::zoo::from_spec(text).unwrap_err();
        assert!(matches!(err, CollsynthError::BadInput(_)), "{text:?}");
        assert!(err.message().contains(want), "{text:?}: {err}");
        assert!(!err.message().contains('\n'), "{text:?}: {err}");
    }
    // what stays valid
    for ok in ["ring:4", " ring:4 ", "dgx1", "dgx1,bw=20", "ring:4,bw=1,lat=2", "circulant:16:3,4"] {
        assert!(crate::zoo::from_spec(ok).is_ok(), "{ok}");
    }
}

#[test]
fn expressions_nest_at_most_64_deep() {
    let nested = |kw: &str, depth: usize| format!("{}ring:3{}", kw.repeat(depth), ")".repeat(depth));
    assert!(Expr::parse(&nested("line(", MAX_DEPTH)).is_ok());
    for kw in ["line(", "bi(", "degree*1(", "power^1("] {
        let err = Expr::parse(&nested(kw, MAX_DEPTH + 1)).unwrap_err();
        assert!(err.message().contains("deeper than 64 levels"), "{kw}: {err}");
        // far deeper: the same error, no stack overflow
        assert!(Expr::parse(&nested(kw, 100_000)).is_err());
    }
    let product = format!("{}ring:2{}", "product(ring:2; ".repeat(65), ")".repeat(65));
    assert!(Expr::parse(&product).unwrap_err().message().contains("deeper than 64"));
}
