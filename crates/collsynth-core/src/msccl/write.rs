//! Writing a [`Program`] as MSCCL XML in the exact byte shape the runtimes' hand-rolled parser
//! accepts (see `parse.rs` for that parser's quirks).

use super::model::{Gpu, Program, Runtime, Step, ThreadBlock};
use std::io::{self, Write};

/// The runtime keeps at most this many bytes of `name` (`strncpy` into a 64-byte buffer).
const MAX_NAME_BYTES: usize = 63;

/// The program as XML for `runtime`'s runtime. Guarantees: no XML declaration, two-space
/// indentation, one tag per line, attributes in double quotes separated by exactly one space,
/// self-closing steps end in `"/>`, '\n' line ends with a final newline; `<algo>` carries all
/// ten attributes (`name proto nchannels nchunksperloop ngpus coll inplace outofplace minBytes
/// maxBytes`, then `nthreads` if set) so both runtimes' parsers find what they require; the name
/// is cut to 63 bytes. A collective with no name in `runtime` (allgatherv) is written under its
/// collsynth name, which the runtime (and `parse`) rejects.
pub fn to_xml(p: &Program, runtime: Runtime) -> String {
    let mut out = Vec::new();
    write_xml(p, runtime, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("the writer writes UTF-8")
}

/// [`to_xml`]'s text written to `out` tag by tag: a program of millions of steps never exists
/// as one text. Give it a buffered writer.
pub fn write_xml(p: &Program, runtime: Runtime, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(open_tag(0, "algo", &algo_attrs(p, runtime), false).as_bytes())?;
    for g in &p.gpus {
        write_gpu(out, g)?;
    }
    out.write_all(b"</algo>\n")
}

fn algo_attrs(p: &Program, runtime: Runtime) -> Vec<(&'static str, String)> {
    let coll = runtime.coll_name(p.collective).unwrap_or(p.collective.name());
    let mut attrs = vec![
        ("name", truncate(&p.name, MAX_NAME_BYTES).to_string()),
        ("proto", p.proto.name().to_string()),
        ("nchannels", p.nchannels.to_string()),
        ("nchunksperloop", p.nchunksperloop.to_string()),
        ("ngpus", p.ngpus.to_string()),
        ("coll", coll.to_string()),
        ("inplace", flag(p.inplace)),
        ("outofplace", flag(p.outofplace)),
        ("minBytes", p.min_bytes.to_string()),
        ("maxBytes", p.max_bytes.to_string()),
    ];
    if let Some(n) = p.nthreads {
        attrs.push(("nthreads", n.to_string()));
    }
    attrs
}

fn write_gpu(out: &mut dyn Write, g: &Gpu) -> io::Result<()> {
    let attrs = [
        ("id", g.id.to_string()),
        ("i_chunks", g.i_chunks.to_string()),
        ("o_chunks", g.o_chunks.to_string()),
        ("s_chunks", g.s_chunks.to_string()),
    ];
    out.write_all(open_tag(1, "gpu", &attrs, false).as_bytes())?;
    for tb in &g.tbs {
        write_tb(out, tb)?;
    }
    out.write_all(b"  </gpu>\n")
}

fn write_tb(out: &mut dyn Write, tb: &ThreadBlock) -> io::Result<()> {
    let attrs = [
        ("id", tb.id.to_string()),
        ("send", tb.send.to_string()),
        ("recv", tb.recv.to_string()),
        ("chan", tb.chan.to_string()),
    ];
    out.write_all(open_tag(2, "tb", &attrs, false).as_bytes())?;
    if let Some(comment) = &tb.comment {
        // One `<!--...-->` per line: the parser joins them back with '\n'.
        for line in comment.split('\n') {
            writeln!(out, "      <!--{}-->", safe_comment(line))?;
        }
    }
    for st in &tb.steps {
        out.write_all(open_tag(3, "step", &step_attrs(st), true).as_bytes())?;
    }
    out.write_all(b"    </tb>\n")
}

fn step_attrs(st: &Step) -> [(&'static str, String); 10] {
    [
        ("s", st.s.to_string()),
        ("type", st.kind.name().to_string()),
        ("srcbuf", st.srcbuf.letter().to_string()),
        ("srcoff", st.srcoff.to_string()),
        ("dstbuf", st.dstbuf.letter().to_string()),
        ("dstoff", st.dstoff.to_string()),
        ("cnt", st.cnt.to_string()),
        ("depid", st.depid.to_string()),
        ("deps", st.deps.to_string()),
        ("hasdep", flag(st.hasdep)),
    ]
}

/// `<name a="v" b="w">` (or `"/>` when `single`) at `depth` levels of two spaces, with '\n'.
fn open_tag(depth: usize, name: &str, attrs: &[(&str, String)], single: bool) -> String {
    let mut s = " ".repeat(2 * depth);
    s.push('<');
    s.push_str(name);
    for (k, v) in attrs {
        s.push_str(&format!(" {k}=\"{}\"", escape(v)));
    }
    s.push_str(if single { "/>\n" } else { ">\n" });
    s
}

fn flag(b: bool) -> String {
    if b { "1" } else { "0" }.to_string()
}

/// At most `max` bytes of `s`, cut on a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Escapes what would end or confuse an attribute value, and the line-breaking characters so
/// every tag stays on one line (the parser decodes them back).
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            _ => out.push(c),
        }
    }
    out
}

/// Comment text the runtime skips safely: no `--` (which would end or break the comment), no
/// trailing '-', and a first word (which the runtime reads as a tag name) without '=' and short
/// enough; a leading space is added when the first word would trip it. Safe text is unchanged.
fn safe_comment(text: &str) -> String {
    let mut t = text.replace('\r', " ");
    while t.contains("--") {
        t = t.replace("--", "- -");
    }
    if t.ends_with('-') {
        t.push(' ');
    }
    let first_word = t.split([' ', '>', '/']).next().unwrap_or("");
    if first_word.contains('=') || first_word.len() > 200 {
        t.insert(0, ' ');
    }
    t
}
