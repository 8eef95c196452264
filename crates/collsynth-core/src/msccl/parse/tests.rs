use super::*;
use crate::msccl::{rules, write::to_xml};

/// Real generator outputs: the small ones are kept in `tests/data/msccl-xml` (README.md there);
/// the 477 KB TE-CCL file is read from the shared data beside the repository when present.
const REAL_DIRS: [&str; 2] = [
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/msccl-xml"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/msccl-xml"),
];

fn real(file: &str) -> Option<String> {
    let Some(path) = REAL_DIRS.iter().map(|d| format!("{d}/{file}")).find(|p| std::path::Path::new(p).is_file()) else {
        eprintln!("skipping: {file} is in none of {REAL_DIRS:?}");
        return None;
    };
    Some(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
}

fn step(s: usize, kind: StepType, buf: Buf, off: i64) -> Step {
    Step { s, kind, srcbuf: buf, srcoff: off, dstbuf: buf, dstoff: off, cnt: 1, depid: -1, deps: -1, hasdep: false }
}

/// 2-GPU in-place allgather: each GPU sends its own chunk and receives the other one.
fn small() -> Program {
    let gpu = |id: usize| Gpu {
        id,
        i_chunks: 0,
        o_chunks: 2,
        s_chunks: 0,
        tbs: vec![ThreadBlock {
            id: 0,
            send: 1 - id as i64,
            recv: 1 - id as i64,
            chan: 0,
            steps: vec![
                step(0, StepType::Send, Buf::Output, id as i64),
                step(1, StepType::Recv, Buf::Output, 1 - id as i64),
            ],
            comment: (id == 0).then(|| "ring, tb 0".to_string()),
        }],
    };
    Program {
        name: "ag2".to_string(),
        proto: Protocol::Simple,
        nchannels: 1,
        nchunksperloop: 2,
        ngpus: 2,
        collective: Collective::Allgather,
        inplace: true,
        outofplace: false,
        min_bytes: 0,
        max_bytes: 1 << 20,
        nthreads: None,
        gpus: vec![gpu(0), gpu(1)],
    }
}

const SMALL_XML: &str = r#"<algo name="ag2" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" inplace="1" outofplace="0" minBytes="0" maxBytes="1048576">
  <gpu id="0" i_chunks="0" o_chunks="2" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <!--ring, tb 0-->
      <step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="2" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
"#;

#[test]
fn writer_output_is_byte_exact() {
    assert_eq!(to_xml(&small(), Runtime::MscclNccl), SMALL_XML);
    assert_eq!(to_xml(&small(), Runtime::MscclLegacy), SMALL_XML);
}

#[test]
fn writer_adds_nthreads_last_escapes_and_truncates_the_name() {
    let mut p = small();
    p.nthreads = Some(256);
    p.name = format!("a&b \"<c>\"{}", "x".repeat(100));
    let xml = to_xml(&p, Runtime::MscclLegacy);
    let first = xml.lines().next().unwrap();
    let name = format!("a&amp;b &quot;&lt;c&gt;&quot;{}", "x".repeat(63 - 9));
    assert!(first.starts_with(&format!("<algo name=\"{name}\" proto=")), "{first}");
    assert!(first.ends_with(" maxBytes=\"1048576\" nthreads=\"256\">"), "{first}");
    assert_eq!(parse(&xml, Runtime::MscclLegacy).unwrap().name.len(), 63);
}

#[test]
fn writer_uses_the_dialects_reduce_scatter_spelling() {
    let mut p = small();
    p.collective = Collective::ReduceScatter;
    assert!(to_xml(&p, Runtime::MscclLegacy).contains(" coll=\"reduce_scatter\" "));
    assert!(to_xml(&p, Runtime::MscclNccl).contains(" coll=\"reducescatter\" "));
}

#[test]
fn writer_makes_comments_safe_and_splits_lines() {
    let mut p = small();
    p.gpus[0].tbs[0].comment = Some("a--b-\nk=1 x".to_string());
    let xml = to_xml(&p, Runtime::MscclNccl);
    assert!(xml.contains("      <!--a- -b- -->\n      <!-- k=1 x-->\n"), "{xml}");
    assert!(parse(&xml, Runtime::MscclNccl).is_ok());
}

/// A program using every field: scratch, deps, nops, a multi-line comment, odd characters.
fn rich() -> Program {
    let mut p = small();
    p.name = "rich & <odd> \"name\"".to_string();
    p.proto = Protocol::LL128;
    p.nchannels = 2;
    p.nchunksperloop = 4;
    p.collective = Collective::ReduceScatter;
    p.inplace = false;
    p.outofplace = true;
    p.min_bytes = 4096;
    p.max_bytes = 1 << 40;
    p.nthreads = Some(512);
    let g = &mut p.gpus[0];
    (g.i_chunks, g.o_chunks, g.s_chunks) = (4, 2, 3);
    let mut nop = step(0, StepType::Nop, Buf::Input, -1);
    (nop.dstbuf, nop.cnt, nop.depid, nop.deps) = (Buf::Output, 0, 0, 1);
    let mut re = step(1, StepType::LocalReduce, Buf::Scratch, 2);
    (re.srcbuf, re.srcoff, re.depid, re.deps, re.hasdep) = (Buf::Input, 1, 0, 0, true);
    g.tbs[0].steps[0].hasdep = true;
    g.tbs[0].steps[1].hasdep = true;
    g.tbs[0].comment = Some("line one\nline two".to_string());
    g.tbs.push(ThreadBlock { id: 1, send: -1, recv: -1, chan: 1, steps: vec![nop, re], comment: None });
    p
}

#[test]
fn round_trip_both_dialects() {
    for d in [Runtime::MscclLegacy, Runtime::MscclNccl] {
        for p in [small(), rich()] {
            let xml = to_xml(&p, d);
            assert_eq!(parse(&xml, d), Ok(p), "{}:\n{xml}", d.name());
        }
    }
}

#[test]
fn tree_records_lines_comments_and_attribute_order() {
    let tree = parse_tree(SMALL_XML).unwrap();
    assert_eq!((tree.name.as_str(), tree.line, tree.children.len()), ("algo", 1, 2));
    assert_eq!(tree.attrs[1], ("proto".to_string(), "Simple".to_string()));
    let tb = &tree.children[0].children[0];
    assert_eq!((tb.line, tb.comments.clone()), (3, vec!["ring, tb 0".to_string()]));
    assert_eq!(tb.children[1].line, 6);
    assert_eq!(tree.children[1].line, 9);
}

// ---- real files: what each yields under each runtime ----

/// The three problems of a msccl-tools header (name..inplace only) under the new executor.
const MISSING_NEW: [&str; 3] = [
    "line 1: attribute outofplace of node algo not found (required by msccl-nccl)",
    "line 1: attribute minBytes of node algo not found (required by msccl-nccl)",
    "line 1: attribute maxBytes of node algo not found (required by msccl-nccl)",
];

fn messages(r: Result<Program, Vec<Problem>>) -> Vec<String> {
    r.expect_err("expected problems").iter().map(|p| p.to_string()).collect()
}

/// Parses under `d`, asserts no rule problem, and returns the program.
fn clean(text: &str, d: Runtime) -> Program {
    let p = parse(text, d).unwrap_or_else(|e| panic!("{}: {e:?}", d.name()));
    assert_eq!(rules::check(&p, d), Vec::<String>::new(), "{}", d.name());
    p
}

#[test]
fn mscclang_ring3_allreduce_old_clean_new_lacks_three_attributes() {
    let Some(text) = real("mscclang-ring3-allreduce.xml") else { return };
    let p = clean(&text, Runtime::MscclLegacy);
    // Old-runtime defaults: outofplace = !inplace, minBytes 0, maxBytes 128 MiB.
    assert_eq!((p.ngpus, p.outofplace, p.min_bytes, p.max_bytes), (3, false, 0, 1 << 27));
    assert_eq!(rules::tb_usage(&p), vec![(1, 1, 5); 3]);
    assert_eq!(messages(parse(&text, Runtime::MscclNccl)), MISSING_NEW);
}

#[test]
fn mscclang_ring4_allgather_old_clean_new_lacks_three_attributes() {
    let Some(text) = real("mscclang-ring4-allgather.xml") else { return };
    let p = clean(&text, Runtime::MscclLegacy);
    assert_eq!((p.ngpus, p.collective), (4, Collective::Allgather));
    assert_eq!(rules::tb_usage(&p), vec![(1, 1, 4); 4]);
    assert_eq!(messages(parse(&text, Runtime::MscclNccl)), MISSING_NEW);
}

#[test]
fn msccl_tools_dgx1_allgather_old_clean_new_lacks_three_attributes() {
    let Some(text) = real("msccl-tools-dgx1-allgather-2steps.xml") else { return };
    let p = clean(&text, Runtime::MscclLegacy);
    // Out of place: inplace="0", so the old runtime's outofplace default is 1.
    assert_eq!((p.inplace, p.outofplace, p.nchannels), (false, true, 2));
    let deps = p.gpus.iter().flat_map(|g| &g.tbs).flat_map(|tb| &tb.steps).filter(|s| s.depid >= 0).count();
    assert!(deps > 0);
    assert_eq!(messages(parse(&text, Runtime::MscclNccl)), MISSING_NEW);
}

#[test]
fn forestcoll_allgather_clean_in_both_dialects() {
    let Some(text) = real("forestcoll-a100x1-allgather.xml") else { return };
    let old = clean(&text, Runtime::MscclLegacy);
    assert_eq!(clean(&text, Runtime::MscclNccl), old);
    assert_eq!((old.ngpus, old.nchannels, old.max_bytes), (8, 8, 1 << 40));
    assert_eq!(old.gpus[0].tbs[0].comment.as_deref(), Some("ROOT, node0, root0, index0, chunks1, inst0"));
    assert_eq!(rules::tb_usage(&old)[0], (8, 7, 1));
}

#[test]
fn forestcoll_allreduce_clean_in_both_dialects() {
    let Some(text) = real("forestcoll-a100x1-allreduce.xml") else { return };
    let old = clean(&text, Runtime::MscclLegacy);
    assert_eq!(clean(&text, Runtime::MscclNccl), old);
    assert_eq!(old.collective, Collective::Allreduce);
    assert_eq!(rules::tb_usage(&old)[0], (15, 8, 1));
}

#[test]
fn teccl_amd32_allgather_clean_in_both_dialects_copy_elements_ignored() {
    let Some(text) = real("teccl-amd32-allgather.xml") else { return };
    let old = clean(&text, Runtime::MscclLegacy);
    assert_eq!(clean(&text, Runtime::MscclNccl), old);
    assert_eq!((old.ngpus, old.nchunksperloop, old.min_bytes), (32, 64, 1024));
    assert!(parse_tree(&text).unwrap().children[0].children.iter().any(|e| e.name == "copy"));
    let nops = old.gpus.iter().flat_map(|g| &g.tbs).flat_map(|tb| &tb.steps).filter(|s| s.kind == StepType::Nop);
    assert!(nops.count() > 0);
    assert_eq!(rules::tb_usage(&old)[0], (16, 2, 13));
}

#[test]
fn real_files_survive_write_then_parse() {
    for file in ["forestcoll-a100x1-allgather.xml", "forestcoll-a100x1-allreduce.xml", "teccl-amd32-allgather.xml"] {
        let Some(text) = real(file) else { return };
        let p = parse(&text, Runtime::MscclNccl).unwrap();
        assert_eq!(parse(&to_xml(&p, Runtime::MscclNccl), Runtime::MscclNccl), Ok(p), "{file}");
    }
}

// ---- mutations the runtime parser rejects ----

fn tree_err(text: &str) -> String {
    parse_tree(text).expect_err("expected a syntax problem").to_string()
}

fn mutate(from: &str, to: &str) -> String {
    assert!(SMALL_XML.contains(from), "{from}");
    SMALL_XML.replacen(from, to, 1)
}

#[test]
fn tab_indentation_is_rejected_with_its_line() {
    let e = tree_err(&mutate("\n    <tb id=\"0\" send=\"0\"", "\n\t<tb id=\"0\" send=\"0\""));
    assert_eq!(e, "line 10: tab character: the runtime parser skips only spaces and newlines (indent with spaces)");
    let e = tree_err(&mutate("<step s=\"0\" type=\"s\"", "<step s=\"0\"\ttype=\"s\""));
    assert!(e.starts_with("line 5: tab character"), "{e}");
}

#[test]
fn xml_declaration_is_rejected() {
    let e = tree_err(&format!("<?xml version=\"1.0\" ?>\n{SMALL_XML}"));
    assert_eq!(
        e,
        "line 1: XML declaration `<?xml ...?>` is not accepted by the MSCCL runtime parser: remove the first line"
    );
}

#[test]
fn single_quotes_are_rejected() {
    let e = tree_err(&mutate("cnt=\"1\"", "cnt='1'"));
    assert!(e.starts_with("line 5: single-quoted value of attribute cnt"), "{e}");
}

#[test]
fn two_spaces_between_attributes_are_rejected() {
    let e = tree_err(&mutate("srcoff=\"0\" dstbuf", "srcoff=\"0\"  dstbuf"));
    assert!(e.starts_with("line 5: more than one space between attributes of <step>"), "{e}");
}

#[test]
fn newline_inside_a_tag_is_rejected() {
    let e = tree_err(&mutate("cnt=\"1\" depid", "cnt=\"1\"\n        depid"));
    assert!(e.starts_with("line 5: newline inside a tag"), "{e}");
}

#[test]
fn structural_syntax_errors_are_rejected() {
    let cases = [
        (
            mutate("</tb>\n  </gpu>", "</tb>\n  </gpx>"),
            "line 8: closing tag </gpx> does not match <gpu> opened at line 2",
        ),
        (SMALL_XML.replace("</algo>\n", ""), "line 1: <algo> is never closed (unexpected end of file)"),
        (format!("{SMALL_XML}<algo/>\n"), "line 16: second root element <algo> after <algo> (line 1)"),
        (mutate("hasdep=\"0\"/>", "hasdep=\"0\""), "line 5: newline inside a tag"),
        (
            mutate("cnt=\"1\" depid", "cnt=\"1\"depid"),
            "line 5: expected a space, '/>' or '>' after attribute cnt, got 'd'",
        ),
        (mutate("<tb id=\"0\" send=\"1\"", "x <tb id=\"0\" send=\"1\""), "line 3: expected '<', got 'x'"),
        (mutate("</tb>", "</tb >"), "line 7: unexpected ' ' in closing tag </tb"),
        (mutate("cnt=\"1\"", "cnt=1"), "line 5: value of attribute cnt must start with a double quote, got '1'"),
        (String::new(), "line 1: no element: the file has no <algo>"),
    ];
    for (text, want) in cases {
        assert!(tree_err(&text).starts_with(want), "{} instead of {want}", tree_err(&text));
    }
}

#[test]
fn parser_limits_are_enforced() {
    let seventeen: String = (0..17).map(|i| format!(" a{i}=\"0\"")).collect();
    let e = tree_err(&format!("<algo{seventeen}/>"));
    assert!(e.contains("more than 16 attributes"), "{e}");
    let sixteen: String = (0..16).map(|i| format!(" a{i}=\"0\"")).collect();
    assert_eq!(parse_tree(&format!("<algo{sixteen} />")).unwrap().attrs.len(), 16);
    let children = "<x/>\n".repeat(1025);
    assert!(tree_err(&format!("<algo>\n{children}</algo>")).contains("more than 1024 children"));
    assert!(tree_err(&format!("<algo name=\"{}\"/>", "n".repeat(256))).contains("longer than 255"));
    assert!(parse_tree(&format!("<algo name=\"{}\"/>", "n".repeat(255))).is_ok());
}

#[test]
fn comments_are_skipped_between_elements() {
    let text =
        format!("<!-- top -->\n{}", mutate("  <gpu id=\"1\"", "  <!-- a\n multi-line comment -->\n  <gpu id=\"1\""));
    let p = parse(&text, Runtime::MscclNccl).unwrap();
    assert_eq!(p, small());
    // The runtime reads a comment's first word as a tag name.
    assert!(tree_err("<algo><!--a=b --></algo>").contains("'=' in the first word of a comment"));
    assert!(tree_err("<algo><!-- never closed </algo>").contains("unterminated comment"));
}

#[test]
fn missing_step_attribute_is_reported_with_its_line() {
    let text = mutate(" cnt=\"1\"", "");
    let want = "line 5: attribute cnt of node step not found (required by msccl-legacy)";
    assert_eq!(messages(parse(&text, Runtime::MscclLegacy)), [want]);
}

#[test]
fn all_problems_are_collected() {
    let text = mutate(" cnt=\"1\"", "")
        .replace("o_chunks=\"2\"", "o_chunks=\"-2\"")
        .replace("hasdep=\"0\"/>", "hasdep=\"2\"/>");
    let got = messages(parse(&text, Runtime::MscclNccl));
    assert_eq!(got.len(), 2 + 1 + 4, "{got:#?}");
    assert_eq!(got[0], "line 2: attribute o_chunks of node gpu must not be negative, got \"-2\"");
    assert!(got.contains(&"line 5: attribute cnt of node step not found (required by msccl-nccl)".to_string()));
    assert!(got.contains(&"line 11: attribute hasdep of node step must be 0 or 1, got \"2\"".to_string()));
}

#[test]
fn integers_are_parsed_strictly() {
    for bad in ["1x", " 1", "+1", "0x1", "", "1.0", "-"] {
        let got = messages(parse(&mutate("cnt=\"1\"", &format!("cnt=\"{bad}\"")), Runtime::MscclNccl));
        assert_eq!(got, [format!("line 5: attribute cnt of node step is not an integer: \"{bad}\"")]);
    }
}

#[test]
fn an_integer_the_runtime_reads_otherwise_is_refused() {
    // strtol(v, NULL, 0): a leading 0 is octal, so "010" is stored as 8 (msccl_parser.h).
    let got = messages(parse(&mutate("cnt=\"1\"", "cnt=\"010\""), Runtime::MscclNccl));
    assert_eq!(
        got,
        ["line 5: attribute cnt=\"010\" of node step is read as 8 by msccl-nccl (strtol base 0: a leading 0 is octal)"]
    );
    // Octal digits that read the same, and a leading zero alone, are accepted.
    assert!(parse(&mutate("cnt=\"1\"", "cnt=\"01\""), Runtime::Rccl).is_ok());
    // Past int: strtol's long is cast to int.
    let got = messages(parse(&mutate("cnt=\"1\"", "cnt=\"4294967297\""), Runtime::MscclLegacy));
    assert_eq!(got, ["line 5: attribute cnt=\"4294967297\" of node step is read as 1 by msccl-legacy (strtol base 0: int holds it)"]);
}

#[test]
fn coll_names_follow_the_dialect() {
    let with = |coll: &str| SMALL_XML.replace("coll=\"allgather\"", &format!("coll=\"{coll}\""));
    assert_eq!(parse(&with("reduce_scatter"), Runtime::MscclLegacy).unwrap().collective, Collective::ReduceScatter);
    assert_eq!(parse(&with("reducescatter"), Runtime::MscclNccl).unwrap().collective, Collective::ReduceScatter);
    assert_eq!(
        messages(parse(&with("reduce_scatter"), Runtime::MscclNccl)),
        ["line 1: coll reduce_scatter is not accepted by msccl-nccl (it spells it reducescatter)"]
    );
    assert_eq!(
        messages(parse(&with("reducescatter"), Runtime::MscclLegacy)),
        ["line 1: coll reducescatter is not accepted by msccl-legacy (it spells it reduce_scatter)"]
    );
    for (coll, d) in [
        ("alltoall", Runtime::MscclLegacy),
        ("custom", Runtime::MscclLegacy),
        ("alltoall", Runtime::MscclNccl),
        ("send", Runtime::MscclNccl),
    ] {
        assert_eq!(
            messages(parse(&with(coll), d)),
            [format!("line 1: coll {coll} is not supported by collsynth's validator")]
        );
    }
    assert_eq!(
        messages(parse(&with("bogus"), Runtime::MscclNccl)),
        ["line 1: coll bogus is not accepted by msccl-nccl"]
    );
}

#[test]
fn old_dialect_requires_name_new_does_not() {
    let text = SMALL_XML.replace("name=\"ag2\" ", "");
    assert_eq!(parse(&text, Runtime::MscclNccl).unwrap().name, "");
    assert_eq!(
        messages(parse(&text, Runtime::MscclLegacy)),
        ["line 1: attribute name of node algo not found (required by msccl-legacy)"]
    );
}

#[test]
fn unknown_elements_and_attributes_are_ignored() {
    let text = mutate(
        "    <tb id=\"0\" send=\"1\"",
        "    <copy i_off=\"0\" o_off=\"0\"/>\n    <x>\n    </x>\n    <tb id=\"0\" send=\"1\"",
    )
    .replace("inplace=\"1\"", "inplace=\"1\" redop=\"nop\"");
    assert_eq!(parse(&text, Runtime::MscclNccl), Ok(small()));
}

#[test]
fn bad_enum_values_are_reported() {
    let text = SMALL_XML
        .replacen("type=\"s\"", "type=\"ra\"", 1)
        .replacen("srcbuf=\"o\"", "srcbuf=\"x\"", 1)
        .replace("Simple", "LL64");
    let got = messages(parse(&text, Runtime::MscclLegacy));
    assert_eq!(
        got,
        [
            "line 1: proto \"LL64\" is not Simple, LL or LL128",
            "line 5: step type ra (residual add) is not supported by collsynth's validator",
            "line 5: attribute srcbuf of node step is \"x\", not i, o or s",
        ]
    );
    let got = messages(parse(&text.replace("LL64", "LL"), Runtime::MscclNccl));
    assert_eq!(got[0], "line 5: step type \"ra\" is not accepted by msccl-nccl");
}

/// Counts and ids that would size memory are refused by the parser, one problem each, before
/// anything is allocated (ngpus="1000000000" and friends aborted `verify`).
#[test]
fn counts_beyond_the_file_are_refused_before_allocation() {
    let cases = [
        (
            "ngpus=\"2\"",
            "ngpus=\"1000000000\"",
            "line 1: ngpus=\"1000000000\" but the file has 2 <gpu> element(s), one per rank",
        ),
        ("ngpus=\"2\"", "ngpus=\"3\"", "line 1: ngpus=\"3\" but the file has 2 <gpu> element(s), one per rank"),
        (
            "<gpu id=\"0\" i_chunks=\"0\" o_chunks=\"2\" s_chunks=\"0\"",
            "<gpu id=\"0\" i_chunks=\"0\" o_chunks=\"2\" s_chunks=\"2000000000\"",
            "line 1: nchunksperloop, i_chunks, o_chunks and s_chunks declare more than 16777216 chunks over all ranks",
        ),
        (
            "nchunksperloop=\"2\"",
            "nchunksperloop=\"2147483647\"",
            "line 1: nchunksperloop, i_chunks, o_chunks and s_chunks declare more than 16777216 chunks over all ranks",
        ),
        (
            "<tb id=\"0\" send=\"1\"",
            "<tb id=\"2000000000\" send=\"1\"",
            "line 3: gpu 0 tb 2000000000: id is not 0..0 (1 thread blocks)",
        ),
    ];
    for (from, to, want) in cases {
        for d in Runtime::ALL {
            assert_eq!(messages(parse(&mutate(from, to), d)), [want], "{to}");
        }
    }
    // the limit is on declared cells, so a file just within it still parses
    // (two ranks of 2 x nchunksperloop = 4 input and output cells each, plus the scratch)
    let scratch = |s: usize| mutate("s_chunks=\"0\"", &format!("s_chunks=\"{s}\""));
    assert!(parse(&scratch(super::MAX_CHUNK_CELLS - 8), Runtime::MscclNccl).is_ok());
    assert!(parse(&scratch(super::MAX_CHUNK_CELLS - 7), Runtime::MscclNccl).is_err());
}
