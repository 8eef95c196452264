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
    // one token: no white space anywhere, and a unit is a letter or a letter and "iB", once
    for bad in ["1 KiB", "5\u{a0}KiB", "5\n", " 5", "1KiBKiB", "1KiBiB", "1GiBB", "1Ki"] {
        assert!(parse_size(bad).is_err(), "{bad:?}");
        assert!(parse_nccl_tests_size(bad).is_err(), "{bad:?}");
    }
    let err = parse_size("5\n").unwrap_err();
    assert!(!err.message().contains('\n'), "{err}");
    assert_eq!(parse_size("1e+3KiB").unwrap(), Rat::from_integer(1_024_000));
    // one meaning for every command: MB is decimal; MiB and a bare M (nccl-tests' reading) binary
    assert_eq!(parse_size("1MB").unwrap(), Rat::from_integer(1_000_000));
    assert_eq!(parse_size("1MiB").unwrap(), Rat::from_integer(1 << 20));
    for (bare, bytes) in [("4K", 4i128 << 10), ("1m", 1 << 20), ("8G", 8 << 30), ("2t", 2 << 40)] {
        assert_eq!(parse_size(bare).unwrap(), Rat::from_integer(bytes), "{bare}");
    }
    for unknown in ["1Kb", "1Gib", "1GiBB", "1X", "1KK"] {
        assert!(parse_size(unknown).unwrap_err().to_string().contains("unknown size unit"), "{unknown}");
    }
}

#[test]
fn nccl_tests_sizes_are_powers_of_1024() {
    assert_eq!(parse_nccl_tests_size("8").unwrap(), 8);
    assert_eq!(parse_nccl_tests_size("128M").unwrap(), 128 << 20);
    assert_eq!(parse_nccl_tests_size("1G").unwrap(), 1 << 30);
    assert_eq!(parse_nccl_tests_size("8g").unwrap(), 8 << 30);
    assert_eq!(parse_nccl_tests_size("4k").unwrap(), 4096);
    assert_eq!(parse_nccl_tests_size("0.5K").unwrap(), 512);
    // nccl-tests reads only the letter: 8GB is 8 GiB there, and so here
    assert_eq!(parse_nccl_tests_size("8GB").unwrap(), 8 << 30);
    assert_eq!(parse_nccl_tests_size("1MB").unwrap(), 1 << 20);
    assert_eq!(parse_nccl_tests_size("1MiB").unwrap(), 1 << 20);
    assert_eq!(parse_nccl_tests_size("1TiB").unwrap(), 1 << 40); // no T in nccl-tests: ours
    assert!(parse_nccl_tests_size("0.3K").is_err()); // 307.2 bytes
    assert!(parse_nccl_tests_size("-1K").is_err());
    assert!(parse_nccl_tests_size("99999999999G").is_err());
    assert!(parse_nccl_tests_size("8X").is_err());
}

#[test]
fn nccl_tests_sweep() {
    // -b 8 -e 8G -f 2: 8, 16, ..., 2^33 (31 sizes)
    let s = nccl_tests_sizes(8, 8 << 30, 2).unwrap();
    assert_eq!(s.len(), 31);
    assert_eq!((s[0], s[1], s[30]), (8, 16, 8 << 30));
    // max need not be on the grid: -b 1K -e 100K -f 4
    assert_eq!(nccl_tests_sizes(1024, 100 * 1024, 4).unwrap(), vec![1024, 4096, 16384, 65536]);
    assert_eq!(nccl_tests_sizes(5, 5, 2).unwrap(), vec![5]);
    // no overflow at the top of u64
    assert_eq!(nccl_tests_sizes(1 << 63, u64::MAX, 2).unwrap(), vec![1 << 63]);
    assert!(nccl_tests_sizes(0, 8, 2).is_err());
    assert!(nccl_tests_sizes(8, 4, 2).is_err());
    assert!(nccl_tests_sizes(8, 64, 1).is_err());
}

#[test]
fn sizes_stop_at_a_buffer_of_2_pow_63_bytes() {
    assert_eq!(parse_size("8388608TiB").unwrap(), Rat::from_integer(1 << 63));
    assert_eq!(parse_size("9223372036854775808").unwrap(), Rat::from_integer(1 << 63));
    for text in [
        "9223372036854775809",
        "8388609TiB",
        "99999999999999999999999999TiB",
        "1e24TiB",
        "9.3EB".replace("EB", "e18").as_str(),
    ] {
        let err = parse_size(text).unwrap_err();
        assert!(err.message().contains("2^63 bytes"), "{text}: {err}");
    }
    // 36 digits times 10^30: out of range, never an overflow panic
    assert!(parse_exact("999999999999999999999999999999999999e30").unwrap_err().message().contains("out of range"));
    assert!(parse_size("999999999999999999999999999999999999e30").is_err());
    assert!(parse_nccl_tests_size("9999999999G").unwrap_err().message().contains("2^63 bytes"));
    assert!(parse_nccl_tests_size("999999999999999999999999999999999999G").unwrap_err().message().contains("2^63"));
    assert_eq!(parse_nccl_tests_size("8G").unwrap(), 8 << 30);
}

#[test]
fn latencies_are_every_finite_f64() {
    assert_eq!(parse_latency("1e308").unwrap(), 1e308);
    assert_eq!(parse_latency("1e-308").unwrap(), 1e-308);
    assert_eq!(parse_latency("2.5e-310ns").unwrap(), 2.5e-313);
    assert_eq!(parse_latency(".5").unwrap(), 0.5);
    // past f64 (or past it once the unit is applied): refused, never infinite
    assert!(parse_latency("1e309").is_err());
    assert!(parse_latency("1e303s").unwrap_err().message().contains("largest finite"));
    for bad in ["1e", "e5", "1e+", "--1", "1.2.3", "1/3", ".", "1e5.5"] {
        assert!(parse_latency(bad).is_err(), "{bad}");
    }
}
