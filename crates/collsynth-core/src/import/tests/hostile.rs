//! Hostile and malformed XML: a BadInput error naming the problem, never a panic.

use super::*;
use crate::error::CollsynthError;

fn err(text: &str) -> String {
    match nccl_topology("h", text, &ClusterSpec::single()) {
        Ok(_) => panic!("accepted: {}", &text[..text.len().min(200)]),
        Err(CollsynthError::BadInput(m)) => {
            assert!(!m.contains('\n'), "{m}");
            m
        }
        Err(e) => panic!("not BadInput: {e}"),
    }
}

const GPU: &str = r#"<pci busid="0000:01:00.0" class="0x030200" link_speed="16 GT/s" link_width="16"><gpu dev="0" sm="80" rank="0"/></pci>"#;

fn system(inner: &str) -> String {
    format!("<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">{inner}</cpu></system>")
}

#[test]
fn syntax_errors_name_the_line() {
    assert_eq!(err(""), "no element in the file");
    assert_eq!(err("garbage"), "line 1: text outside a tag (a topology file holds elements only)");
    assert!(err("<system version=\"1\">\n<cpu>").contains("line 2: <cpu> is never closed"));
    assert!(err("<system version=1/>").contains("must be quoted"));
    assert!(err("<system version=\"1\"></cpu>").contains("</cpu> closes <system>"));
    assert!(err("<system version=\"1\"/><system version=\"1\"/>").contains("second top-level element"));
    assert!(err("<!-- never closed").contains("comment is never closed"));
    assert!(err("<system version=\"1").contains("unterminated value"));
    assert!(err("\u{0}\u{1}\u{ff}").contains("a NUL character"));
}

#[test]
fn sizes_are_checked_before_anything_grows() {
    let deep = "<a>".repeat(100_000);
    assert!(err(&deep).contains("nested deeper than 64"));
    let many = format!("<system version=\"1\">{}</system>", "<x/>".repeat(9000));
    assert!(err(&many).contains("more than 8192 elements"));
    let attrs: String = (0..100).map(|i| format!(" a{i}=\"1\"")).collect();
    assert!(err(&format!("<system{attrs}/>")).contains("more than 64 attributes"));
    let long = format!("<system version=\"{}\"/>", "9".repeat(300));
    assert!(err(&long).contains("longer than 255"));
    let huge = " ".repeat(xml::MAX_BYTES + 1);
    assert!(err(&huge).contains("file too large"));
}

#[test]
fn counts_and_numbers_are_bounded() {
    let row = |count: &str| {
        system(&format!(
            r#"<pci busid="0000:01:00.0" class="0x030200" link_width="16"><gpu dev="0" sm="80" rank="0"><nvlink target="x" count="{count}" tclass="0x068000"/></gpu></pci>{}"#,
            GPU.replace("01:00", "02:00").replace("rank=\"0\"", "rank=\"1\"")
        ))
    };
    assert!(err(&row("99999999999999999999")).contains("count=\"99999999999999999999\" is not a whole number"));
    assert!(err(&row("4096")).contains("4096 is larger than 1024"));
    assert!(err(&row("-1")).contains("is not a whole number"));
    let width = system(&GPU.replace("link_width=\"16\"", "link_width=\"100000\""));
    assert!(err(&width).contains("larger than 1024"));
    let speed = system(&format!(r#"{GPU}<nic><net name="x" speed="fast"/></nic>"#));
    assert!(err(&speed).contains("speed=\"fast\" is not a speed"));
    let dup = system(&format!("{GPU}{}", GPU.replace("01:00", "02:00")));
    assert!(err(&dup).contains("rank 0 appears twice"));
}

#[test]
fn structure_errors() {
    assert!(err("<topology/>").contains("the top element of an NCCL topology file is <system>"));
    assert!(err("<system/>").contains("missing version"));
    assert!(err("<system version=\"3\"/>").contains("version=\"3\" is not supported"));
    assert_eq!(
        err("<system version=\"1\"/>"),
        "no <gpu> with a rank in the file: nothing to schedule (give a full NCCL_TOPO_DUMP_FILE dump)"
    );
    // one GPU: a box of one rank, nothing to schedule
    assert!(err(&system(GPU)).contains("one compute node"));
    // two GPUs on separate hosts (different host_hash) are not connected: refused by the model
    let two_hosts = format!(
        "<system version=\"1\"><cpu host_hash=\"1\">{GPU}</cpu><cpu host_hash=\"2\">{}</cpu></system>",
        GPU.replace("rank=\"0\"", "rank=\"1\"").replace("01:00", "02:00")
    );
    assert!(err(&two_hosts).contains("not all mutually reachable"));
}

#[test]
fn what_is_left_out_is_reported() {
    let no_rank = GPU.replace(" rank=\"0\"", "").replace("01:00", "03:00");
    let text = system(&format!(
        r#"{GPU}{no_rank}<pci busid="0000:02:00.0" class="0x030200"><gpu dev="1" sm="80" rank="1"><nvlink target="0000:09:00.0" count="2" tclass="0x030200"/><foo/></gpu></pci>"#
    ));
    let got = nccl_topology("h", &text, &ClusterSpec::single()).unwrap();
    assert_eq!(got.topology.n_ranks(), 2);
    let w = got.warnings.join("\n");
    assert!(w.contains("no rank attribute: not in the communicator"), "{w}");
    assert!(w.contains("target \"0000:09:00.0\" is not in the file"), "{w}");
    assert!(w.contains("<foo>: ignored under <gpu>"), "{w}");
}

#[test]
fn comments_declarations_and_single_quotes() {
    let text = format!("<?xml version='1.0'?>\n<!-- a comment -->\n{}", system(&GPU.replace('"', "'")));
    assert!(err(&text).contains("one compute node"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// Random bytes and random cuts of a real file give an answer or a BadInput, never a panic.
    #[test]
    fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), cut in 0usize..6000) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = nccl_topology("h", &text, &ClusterSpec::single());
        let real = data("rccl-mi250-16gcd.xml");
        let mut end = cut.min(real.len());
        while !real.is_char_boundary(end) { end -= 1; }
        let _ = nccl_topology("h", &real[..end], &ClusterSpec::single());
    }
}

#[test]
fn entities_nul_duplicate_attributes_and_busids_are_refused() {
    let with_dev = |dev: &str| system(&GPU.replace("dev=\"0\"", &format!("dev=\"{dev}\"")));
    for dev in ["&#0;", "&#x110000;", "&bogus;", "0&1", "&amp;", "&lt;", "&#48;"] {
        let m = err(&with_dev(dev));
        assert!(m.contains("'&' (NCCL reads values verbatim"), "{dev}: {m}");
    }
    assert!(err(&with_dev("0\u{1}")).contains("control character \\u{1}"));
    let m = err(&system(&GPU.replace("dev=\"0\"", "dev=\"0\"\0")));
    assert!(m.contains("a NUL character"), "{m}");
    let m = err(&system(&GPU.replace("dev=\"0\"", "dev=\"0\" dev=\"1\"")));
    assert!(m.contains("<gpu dev=: the attribute is given twice"), "{m}");
    // a second device on the same bus id (written differently: NCCL compares the hex digits)
    let second = GPU
        .replace("rank=\"0\"", "rank=\"1\"")
        .replace("dev=\"0\"", "dev=\"1\"")
        .replace("0000:01:00.0", "00:0001:00.0");
    let m = err(&system(&format!("{GPU}{second}")));
    assert!(m.contains("busid=\"00:0001:00.0\" appears twice"), "{m}");
}
