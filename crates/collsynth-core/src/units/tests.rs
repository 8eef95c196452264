use super::*;

#[test]
fn bandwidth_units() {
    assert_eq!(parse_bandwidth("100Gbps").unwrap(), Rat::new(25, 2));
    assert_eq!(parse_bandwidth("25GB/s").unwrap(), Rat::from_integer(25));
    assert_eq!(parse_bandwidth("12.5 GB/s").unwrap(), Rat::new(25, 2));
    assert_eq!(parse_bandwidth("50GiB/s").unwrap(), Rat::new(50 * (1 << 30), 1_000_000_000));
    assert_eq!(parse_bandwidth("300").unwrap(), Rat::from_integer(300));
    assert_eq!(parse_bandwidth("400Mbps").unwrap(), Rat::new(1, 20));
    assert!(parse_bandwidth("10 furlongs").is_err());
    // exponents in every form Python's json and repr write, exactly
    assert_eq!(parse_bandwidth("1e+2").unwrap(), Rat::from_integer(100));
    assert_eq!(parse_bandwidth("1E+2 GB/s").unwrap(), Rat::from_integer(100));
    assert_eq!(parse_bandwidth("1.25e-1").unwrap(), Rat::new(1, 8));
    assert_eq!(parse_bandwidth("4e+2Gbps").unwrap(), Rat::from_integer(50));
    assert!(parse_bandwidth("1e+").is_err());
    assert!(parse_bandwidth("fast").is_err());
}

#[test]
fn latency_units() {
    assert_eq!(parse_latency("500ns").unwrap(), 0.5);
    assert_eq!(parse_latency("2us").unwrap(), 2.0);
    assert_eq!(parse_latency("1ms").unwrap(), 1000.0);
    assert_eq!(parse_latency("0.7").unwrap(), 0.7);
    assert!(parse_latency("3 parsecs").is_err());
    assert_eq!(parse_latency("1e-05").unwrap(), 1e-5);
    assert_eq!(parse_latency("5e+2ns").unwrap(), 0.5);
}

#[test]
fn size_units() {
    assert_eq!(parse_size("1KiB").unwrap(), Rat::from_integer(1024));
    assert_eq!(parse_size("1MB").unwrap(), Rat::from_integer(1_000_000));
    assert_eq!(parse_size("12").unwrap(), Rat::from_integer(12));
    assert!(parse_size("1 XB").is_err());
    assert_eq!(parse_size("1e+3KiB").unwrap(), Rat::from_integer(1_024_000));
    // one meaning for every command: MB is decimal, MiB binary, a bare K/M/G is refused
    assert_eq!(parse_size("1MB").unwrap(), Rat::from_integer(1_000_000));
    assert_eq!(parse_size("1MiB").unwrap(), Rat::from_integer(1 << 20));
    for ambiguous in ["4K", "1M", "1G"] {
        let e = parse_size(ambiguous).unwrap_err().to_string();
        assert!(e.contains(&format!("{ambiguous}iB")) && e.contains(&format!("{ambiguous}B")), "{e}");
    }
}
