use super::*;

#[test]
fn reading_stops_at_the_cap() {
    let e = read(Path::new("/dev/zero"), Kind::NcclXml).unwrap_err().to_string();
    assert!(e.contains("larger than the 4 MiB read for an NCCL topology XML"), "{e}");
}

#[test]
fn a_missing_file_and_a_directory_are_bad_input() {
    let e = read(Path::new("/nonexistent/x.json"), Kind::Topology).unwrap_err().to_string();
    assert!(e.contains("cannot read file: No such file or directory"), "{e}");
    let e = read(Path::new("/"), Kind::Topology).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
}
