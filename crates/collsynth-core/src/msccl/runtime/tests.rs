use super::*;

#[test]
fn stored_values_are_the_low_bits() {
    assert_eq!(CType::I8.store(127), 127);
    assert_eq!(CType::I8.store(128), -128);
    assert_eq!(CType::I8.store(131), -125);
    assert_eq!(CType::I8.store(175), -81);
    assert_eq!(CType::I16.store(39999), -25537);
    assert_eq!(CType::I16.store(-1), -1);
    assert_eq!(CType::U8.store(256), 0);
    assert_eq!(CType::U16.store(65536 + 3), 3);
    assert_eq!((CType::I8.max(), CType::U8.max(), CType::I16.max(), CType::U16.max()), (127, 255, 32767, 65535));
}

#[test]
fn strtol_reads_as_the_runtime() {
    for (text, v) in [
        ("10", 10),
        ("010", 8),
        ("0x10", 16),
        ("0X1f", 31),
        ("0x", 0),
        ("09", 0),
        ("+7", 7),
        ("-1", -1),
        (" 5", 5),
        ("1x", 1),
        ("", 0),
        ("4294967297", 1),
        ("99999999999999999999", -1),
    ] {
        assert_eq!(strtol(text, false), v, "{text:?}");
    }
    assert_eq!(strtol("99999999999999999999", true), i64::MAX);
    assert_eq!(strtol("4294967297", true), 4294967297);
}

#[test]
fn the_tables_differ_where_the_sources_do() {
    let (a, r, l) = (Runtime::MscclNccl.limits(), Runtime::Rccl.limits(), Runtime::MscclLegacy.limits());
    assert_eq!((a.thread_blocks, r.thread_blocks, l.thread_blocks), (1024, 64, 216));
    assert_eq!((a.channels, r.channels, l.channels), (32, 128, 32));
    assert_eq!((a.steps, r.steps, l.steps), (64, 64, 256));
    assert_eq!((a.channel_id, l.channel_id), (CType::I16, CType::I8));
    assert!(Runtime::ALL.iter().all(|r| r.limits().dependent_bid == CType::I8));
    for name in ["msccl-nccl", "rccl", "msccl-legacy"] {
        assert_eq!(Runtime::parse(name).unwrap().name(), name);
    }
    assert_eq!(Runtime::parse("new").unwrap(), Runtime::MscclNccl);
    assert!(Runtime::parse("nccl").is_err());
}
