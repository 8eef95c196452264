//! Reading MSCCL XML the way the runtimes read it.
//!
//! The tokenizer deliberately mimics the runtimes' hand-rolled parser
//! (`mscclXmlGetNode` / `mscclXmlGetToken` / `mscclXmlGetValue`, identical in microsoft/msccl,
//! msccl-executor-nccl and RCCL) instead of using a general XML library: the point of the
//! validator is to reject exactly what the runtime rejects (tabs, `<?xml ...?>`, single quotes,
//! two spaces between attributes, a tag split over lines), which a conforming XML parser accepts.
//! Two layers: [`parse_tree`] (syntax, first error only, as the runtime aborts on the first) and
//! [`program`] (attributes per runtime, every problem collected).

use super::model::{
    Buf, Gpu, Program, Protocol, Runtime, Step, StepType, ThreadBlock, MAX_ATTRS_PER_NODE, MAX_CHILDREN_PER_NODE,
    MAX_STRING_LEN,
};
use super::runtime::strtol;
use crate::ir::Collective;
use std::fmt;

/// One problem found in an XML file; `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: Option<usize>,
    pub message: String,
}

impl Problem {
    fn at(line: usize, message: impl Into<String>) -> Problem {
        Problem { line: Some(line), message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// One XML element as the runtime parser sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    /// In file order; values with `&amp;`-style references decoded.
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    /// Texts of the `<!--...-->` comments directly inside this element, in file order.
    pub comments: Vec<String>,
    /// 1-based line of the element's `<`.
    pub line: usize,
}

impl Element {
    /// The first attribute called `key` (the runtime's `mscclXmlGetAttr` also takes the first).
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Parses `text` into its single root element, or returns the first problem the runtime parser
/// would stop at (with its line). Guarantees: the root is the only top-level element, every tag
/// is closed by a matching tag, and no node exceeds the runtime's attribute/child/string limits.
pub fn parse_tree(text: &str) -> Result<Element, Problem> {
    let mut r = Scanner { bytes: text.as_bytes(), pos: 0, line: 1 };
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        r.skip_blank()?;
        let Some(c) = r.peek() else { break };
        if c != b'<' {
            return Err(
                r.problem(format!("expected '<', got {}: the runtime parser accepts no text between tags", show(c)))
            );
        }
        if r.starts_with(b"<!--") {
            let comment = r.comment()?;
            if let Some(parent) = stack.last_mut() {
                parent.comments.push(comment);
            }
        } else if r.starts_with(b"</") {
            let (name, line) = r.close_tag()?;
            let Some(el) = stack.pop() else {
                return Err(Problem::at(line, format!("closing tag </{name}> without an open element")));
            };
            if el.name != name {
                let msg = format!("closing tag </{name}> does not match <{}> opened at line {}", el.name, el.line);
                return Err(Problem::at(line, msg));
            }
            attach(&mut stack, &mut root, el)?;
        } else {
            let (el, single) = r.open_tag()?;
            if stack.is_empty() {
                if let Some(first) = &root {
                    let msg = format!("second root element <{}> after <{}> (line {})", el.name, first.name, first.line);
                    return Err(Problem::at(el.line, msg));
                }
            }
            if single {
                attach(&mut stack, &mut root, el)?;
            } else {
                stack.push(el);
            }
        }
    }
    if let Some(open) = stack.pop() {
        return Err(Problem::at(open.line, format!("<{}> is never closed (unexpected end of file)", open.name)));
    }
    root.ok_or_else(|| Problem::at(r.line, "no element: the file has no <algo>"))
}

/// Puts a finished element under its parent (or makes it the root).
fn attach(stack: &mut [Element], root: &mut Option<Element>, el: Element) -> Result<(), Problem> {
    match stack.last_mut() {
        Some(parent) if parent.children.len() >= MAX_CHILDREN_PER_NODE => Err(Problem::at(
            el.line,
            format!("<{}> has more than {MAX_CHILDREN_PER_NODE} children (runtime parser limit)", parent.name),
        )),
        // mscclAlgoXmlStep loads a step's children with one handler from a null table: any
        // element inside <step> crashes the runtime's parser.
        Some(parent) if parent.name == "step" => Err(Problem::at(
            el.line,
            format!("<{}> inside <step>: the runtime's parser crashes on any element there", el.name),
        )),
        Some(parent) => {
            parent.children.push(el);
            Ok(())
        }
        None => {
            *root = Some(el);
            Ok(())
        }
    }
}

fn show(c: u8) -> String {
    match c {
        b'\n' => "a newline".to_string(),
        b'\r' => "a carriage return".to_string(),
        b'\t' => "a tab".to_string(),
        _ => format!("'{}'", c as char),
    }
}

/// Byte cursor with line tracking. Only ASCII delimiters are matched, so slicing between them
/// keeps multi-byte UTF-8 intact.
struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

const TAB_MSG: &str = "tab character: the runtime parser skips only spaces and newlines (indent with spaces)";
const NEWLINE_MSG: &str = "newline inside a tag: the runtime parser needs each tag on one line";

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }
    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }
    fn starts_with(&self, s: &[u8]) -> bool {
        self.bytes[self.pos..].starts_with(s)
    }
    fn problem(&self, msg: impl Into<String>) -> Problem {
        Problem::at(self.line, msg)
    }
    fn text(&self, from: usize, to: usize) -> String {
        String::from_utf8_lossy(&self.bytes[from..to]).into_owned()
    }
    fn eof(&self, what: &str) -> Problem {
        self.problem(format!("unexpected end of file inside {what}"))
    }

    /// Skips what the runtime skips between elements: spaces, '\n' and '\r' only.
    fn skip_blank(&mut self) -> Result<(), Problem> {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\n' | b'\r' => {
                    self.bump();
                }
                b'\t' => return Err(self.problem(TAB_MSG)),
                _ => break,
            }
        }
        Ok(())
    }

    /// Reads a name the way `mscclXmlGetToken` does: up to ' ', '>', '/', '\n', '\r' or '='.
    /// Returns the name and the terminator (consumed).
    fn token(&mut self, what: &str) -> Result<(String, u8), Problem> {
        let start = self.pos;
        loop {
            let Some(c) = self.peek() else { return Err(self.eof(what)) };
            match c {
                b' ' | b'>' | b'/' | b'\n' | b'\r' | b'=' => {
                    let name = self.text(start, self.pos);
                    self.bump();
                    return Ok((name, c));
                }
                b'\t' => return Err(self.problem(TAB_MSG)),
                _ => {
                    self.pos += 1;
                }
            }
        }
    }

    /// `<!--text-->`; returns `text`. The runtime first reads the comment's first word as a
    /// tag name, so an '=' there or an overlong word fails it; we reject those too.
    fn comment(&mut self) -> Result<String, Problem> {
        let line = self.line;
        self.pos += 4;
        let start = self.pos;
        let word_end = self.bytes[start..]
            .iter()
            .position(|c| matches!(c, b' ' | b'>' | b'/' | b'\n' | b'\r' | b'='))
            .map(|i| start + i);
        let Some(word_end) = word_end else { return Err(Problem::at(line, "unterminated comment")) };
        if self.bytes[word_end] == b'=' {
            let msg = "'=' in the first word of a comment: the runtime parser reads that word as a tag name and fails";
            return Err(Problem::at(line, msg));
        }
        if word_end - start + 3 >= MAX_STRING_LEN {
            return Err(Problem::at(line, format!("comment's first word is {MAX_STRING_LEN} or more characters")));
        }
        let Some(len) = self.bytes[start..].windows(3).position(|w| w == b"-->") else {
            return Err(Problem::at(line, "unterminated comment"));
        };
        let text = self.text(start, start + len);
        while self.pos < start + len + 3 {
            self.bump();
        }
        Ok(text)
    }

    /// `</name>` exactly (no space before '>'); returns the name and its line.
    fn close_tag(&mut self) -> Result<(String, usize), Problem> {
        let line = self.line;
        self.pos += 2;
        let (name, term) = self.token("a closing tag")?;
        match term {
            b'>' if !name.is_empty() => Ok((name, line)),
            b'>' => Err(Problem::at(line, "empty closing tag </>")),
            b'\n' | b'\r' => Err(Problem::at(line, NEWLINE_MSG)),
            _ => Err(Problem::at(line, format!("unexpected {} in closing tag </{name}", show(term)))),
        }
    }

    /// `<name a="v" b="w">` or `.../>`; returns the element (no children yet) and whether it
    /// closed itself.
    fn open_tag(&mut self) -> Result<(Element, bool), Problem> {
        let line = self.line;
        if self.starts_with(b"<?xml") {
            let msg =
                "XML declaration `<?xml ...?>` is not accepted by the MSCCL runtime parser: remove the first line";
            return Err(Problem::at(line, msg));
        }
        if self.starts_with(b"<?") || self.starts_with(b"<!") {
            return Err(Problem::at(line, "processing instructions and <!...> declarations are not accepted"));
        }
        self.pos += 1;
        let (name, mut term) = self.token("a tag")?;
        if name.is_empty() {
            return Err(Problem::at(line, format!("'<' followed by {} instead of an element name", show(term))));
        }
        if term == b'=' {
            return Err(Problem::at(line, format!("'=' right after the element name <{name}")));
        }
        // mscclXmlGetToken stores the name and its terminator and fails on reaching index
        // MAX_STR_LEN-1: a name of 254 characters is refused.
        if name.len() >= MAX_STRING_LEN - 1 {
            return Err(Problem::at(
                line,
                format!("element name of {} characters (limit {})", name.len(), MAX_STRING_LEN - 2),
            ));
        }
        let mut el = Element { name, attrs: Vec::new(), children: Vec::new(), comments: Vec::new(), line };
        let mut slots = 0;
        while term == b' ' {
            let (key, t) = self.token("a tag")?;
            if key.is_empty() && (t == b'/' || t == b'>') {
                // `<a x="1" />`: the runtime reads an empty attribute here; being last, it can
                // only push out itself, so it is accepted without counting.
                term = t;
                break;
            }
            term = self.attribute(&mut el, key, t)?;
            slots += 1;
            if slots > MAX_ATTRS_PER_NODE {
                let msg = format!(
                    "<{}> has more than {MAX_ATTRS_PER_NODE} attributes: the runtime parser keeps only the first {MAX_ATTRS_PER_NODE}",
                    el.name
                );
                return Err(Problem::at(line, msg));
            }
        }
        match term {
            b'>' => Ok((el, false)),
            b'/' if self.peek() == Some(b'>') => {
                self.bump();
                Ok((el, true))
            }
            b'/' => Err(self.problem(format!("expected '>' after '/' in <{}>", el.name))),
            b'\n' | b'\r' => Err(Problem::at(line, NEWLINE_MSG)),
            _ => Err(Problem::at(line, format!("unexpected {} in <{}>", show(term), el.name))),
        }
    }

    /// One `key="value"` after its key was read (terminated by `t`); stores it and returns the
    /// character after the closing quote, which must be ' ', '/' or '>'.
    fn attribute(&mut self, el: &mut Element, key: String, t: u8) -> Result<u8, Problem> {
        let line = self.line;
        let tag = el.name.clone();
        match t {
            b'=' if key.is_empty() => return Err(Problem::at(line, format!("attribute without a name in <{tag}>"))),
            b'=' => {}
            b' ' if key.is_empty() => {
                let msg =
                    format!("more than one space between attributes of <{tag}>: the runtime parser needs exactly one");
                return Err(Problem::at(line, msg));
            }
            b'\n' | b'\r' => return Err(Problem::at(line, NEWLINE_MSG)),
            _ => {
                return Err(Problem::at(
                    line,
                    format!("attribute {key} of <{tag}> has no value (expected {key}=\"...\")"),
                ))
            }
        }
        // The '=' ends the key before the length test, so a key may hold one more character
        // than an element name.
        if key.len() >= MAX_STRING_LEN {
            return Err(Problem::at(
                line,
                format!("attribute name longer than {} characters in <{tag}>", MAX_STRING_LEN - 1),
            ));
        }
        match self.bump() {
            Some(b'"') => {}
            Some(b'\'') => {
                let msg =
                    format!("single-quoted value of attribute {key}: the runtime parser accepts only double quotes");
                return Err(Problem::at(line, msg));
            }
            Some(c) => {
                let msg = format!("value of attribute {key} must start with a double quote, got {}", show(c));
                return Err(Problem::at(line, msg));
            }
            None => return Err(self.eof("a tag")),
        }
        // The runtime reads the value up to the next '"' whatever it contains (tabs and
        // newlines included), so we do too.
        let start = self.pos;
        let Some(len) = self.bytes[start..].iter().position(|&c| c == b'"') else { return Err(self.eof("a value")) };
        if len > MAX_STRING_LEN {
            return Err(Problem::at(
                line,
                format!("value of attribute {key} is longer than {MAX_STRING_LEN} characters"),
            ));
        }
        let value = unescape(&self.text(start, start + len));
        while self.pos <= start + len {
            self.bump();
        }
        el.attrs.push((key.clone(), value));
        match self.bump() {
            Some(c @ (b' ' | b'/' | b'>')) => Ok(c),
            Some(b'\t') => Err(Problem::at(line, TAB_MSG)),
            Some(b'\n' | b'\r') => Err(Problem::at(line, NEWLINE_MSG)),
            Some(c) => {
                Err(Problem::at(line, format!("expected a space, '/>' or '>' after attribute {key}, got {}", show(c))))
            }
            None => Err(self.eof("a tag")),
        }
    }
}

/// Decodes `&amp; &lt; &gt; &quot; &apos; &#N; &#xH;` (what the writer produces); anything
/// else is kept literally, as the runtime keeps everything literally.
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let decoded = rest.find(';').and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let code = if let Some(hex) = name.strip_prefix("#x") {
                u32::from_str_radix(hex, 16).ok()?
            } else {
                name.strip_prefix('#')?.parse().ok()?
            };
            char::from_u32(code)
        }
    }
}

/// Parses `text` and builds the program with `runtime`'s requirements (see [`program`]).
pub fn parse(text: &str, runtime: Runtime) -> Result<Program, Vec<Problem>> {
    let tree = parse_tree(text).map_err(|p| vec![p])?;
    program(&tree, runtime)
}

/// Builds the [`Program`] from a parsed tree. Every attribute the `runtime`'s runtime requires
/// must be present and well formed (integers strictly `-?[0-9]+`, in range for their field);
/// unknown elements and attributes are ignored, as the runtime ignores them. Returns every
/// problem found, in file order, rather than stopping at the first. Structural rules (ids,
/// bounds, dependencies) are not checked here: see `rules::check`.
pub fn program(tree: &Element, runtime: Runtime) -> Result<Program, Vec<Problem>> {
    let mut b = Builder { runtime, problems: Vec::new() };
    if tree.name != "algo" {
        return Err(vec![Problem::at(tree.line, format!("root element is <{}>, expected <algo>", tree.name))]);
    }
    let header = b.algo(tree);
    let gpus: Vec<Option<Gpu>> = tree.children.iter().filter(|e| e.name == "gpu").map(|e| b.gpu(e)).collect();
    match header {
        Some(mut p) if b.problems.is_empty() => {
            p.gpus = gpus.into_iter().flatten().collect();
            let problems = limits(&p, tree);
            if problems.is_empty() {
                Ok(p)
            } else {
                Err(problems)
            }
        }
        _ => Err(b.problems),
    }
}

/// Most chunk cells (input, output and scratch chunks summed over the ranks) a program may
/// declare: the checker and the interpreter hold one cell per chunk and rank, so a count
/// from the file is bounded before anything is sized by it (2^24 cells is a few GB at most).
pub const MAX_CHUNK_CELLS: usize = 1 << 24;

/// Counts and ids that would size memory, checked against what the file actually holds
/// before anything is allocated: `ngpus` at most the `<gpu>` elements present, a thread
/// block id below its GPU's number of `<tb>` elements (ids are 0..T-1), and the chunk
/// counts within [`MAX_CHUNK_CELLS`].
fn limits(p: &Program, tree: &Element) -> Vec<Problem> {
    let mut out = Vec::new();
    let gpu_elements: Vec<&Element> = tree.children.iter().filter(|e| e.name == "gpu").collect();
    if p.ngpus > gpu_elements.len() {
        let msg =
            format!("ngpus=\"{}\" but the file has {} <gpu> element(s), one per rank", p.ngpus, gpu_elements.len());
        out.push(Problem::at(tree.line, msg));
    }
    for (g, el) in p.gpus.iter().zip(&gpu_elements) {
        let tb_elements: Vec<&Element> = el.children.iter().filter(|e| e.name == "tb").collect();
        for (tb, tb_el) in g.tbs.iter().zip(&tb_elements) {
            if tb.id >= g.tbs.len() {
                let msg = format!(
                    "gpu {} tb {}: id is not 0..{} ({} thread blocks)",
                    g.id,
                    tb.id,
                    g.tbs.len() - 1,
                    g.tbs.len()
                );
                out.push(Problem::at(tb_el.line, msg));
            }
        }
    }
    let main = p.nchunksperloop.checked_mul(2);
    let cells = p.gpus.iter().try_fold(0usize, |sum, g| {
        let in_out = g.i_chunks.checked_add(g.o_chunks)?.max(main?);
        sum.checked_add(in_out.checked_add(g.s_chunks)?)
    });
    if cells.is_none_or(|c| c > MAX_CHUNK_CELLS) || p.nchunksperloop > MAX_CHUNK_CELLS {
        let msg = format!(
            "nchunksperloop, i_chunks, o_chunks and s_chunks declare more than {MAX_CHUNK_CELLS} chunks over all ranks"
        );
        out.push(Problem::at(tree.line, msg));
    }
    out
}

/// Collects problems while reading attributes.
struct Builder {
    runtime: Runtime,
    problems: Vec<Problem>,
}

impl Builder {
    fn runtime(&self) -> &'static str {
        self.runtime.name()
    }
    fn report(&mut self, el: &Element, msg: String) {
        self.problems.push(Problem::at(el.line, msg));
    }

    /// A required attribute's text.
    fn text<'e>(&mut self, el: &'e Element, key: &str) -> Option<&'e str> {
        let v = el.attr(key);
        if v.is_none() {
            let msg = format!("attribute {key} of node {} not found (required by {})", el.name, self.runtime());
            self.report(el, msg);
        }
        v
    }
    /// A required signed integer, as the file means it (decimal) and as the runtime reads it
    /// (`strtol(v, NULL, 0)` into an `int`, `int64_t` for the sizes); refused where the two
    /// differ (`"010"` is 8 to the runtime).
    fn int(&mut self, el: &Element, key: &str) -> Option<i64> {
        let v = self.text(el, key)?;
        let Some(n) = strict_int(v) else {
            self.report(el, format!("attribute {key} of node {} is not an integer: \"{v}\"", el.name));
            return None;
        };
        let read = strtol(v, matches!(key, "minBytes" | "maxBytes"));
        if read != n {
            let why = if v.trim_start_matches('-').starts_with('0') { "a leading 0 is octal" } else { "int holds it" };
            let msg = format!(
                "attribute {key}=\"{v}\" of node {} is read as {read} by {} (strtol base 0: {why})",
                el.name,
                self.runtime()
            );
            self.report(el, msg);
            return None;
        }
        Some(n)
    }
    /// A required non-negative integer.
    fn uint(&mut self, el: &Element, key: &str) -> Option<usize> {
        let n = self.int(el, key)?;
        let u = usize::try_from(n).ok();
        if u.is_none() {
            self.report(el, format!("attribute {key} of node {} must not be negative, got \"{n}\"", el.name));
        }
        u
    }
    /// A required 0/1 flag.
    fn flag(&mut self, el: &Element, key: &str) -> Option<bool> {
        match self.int(el, key)? {
            0 => Some(false),
            1 => Some(true),
            n => {
                self.report(el, format!("attribute {key} of node {} must be 0 or 1, got \"{n}\"", el.name));
                None
            }
        }
    }
    /// An attribute required by the new executor but optional (with `default`) in the old one.
    fn new_only<T>(
        &mut self,
        el: &Element,
        key: &str,
        read: fn(&mut Self, &Element, &str) -> Option<T>,
        default: T,
    ) -> Option<T> {
        if self.runtime.legacy() && el.attr(key).is_none() {
            return Some(default);
        }
        read(self, el, key)
    }
    fn bytes(&mut self, el: &Element, key: &str) -> Option<u64> {
        let n = self.int(el, key)?;
        let u = u64::try_from(n).ok();
        if u.is_none() {
            self.report(el, format!("attribute {key} of node algo cannot be negative, got \"{n}\""));
        }
        u
    }

    /// The `<algo>` header (no gpus yet), in the runtime's reading order.
    fn algo(&mut self, el: &Element) -> Option<Program> {
        let name = match self.runtime.legacy() {
            true => self.text(el, "name").map(str::to_string),
            false => Some(el.attr("name").unwrap_or("").to_string()),
        };
        let proto = self.proto(el);
        let nchannels = self.uint(el, "nchannels");
        let nchunksperloop = self.uint(el, "nchunksperloop");
        let ngpus = self.uint(el, "ngpus");
        let collective = self.coll(el);
        let inplace = self.flag(el, "inplace");
        let outofplace = self.new_only(el, "outofplace", Self::flag, !inplace.unwrap_or(true));
        // Old-runtime defaults when absent: minBytes 0, maxBytes 128 MiB (topo.cc).
        let min_bytes = self.new_only(el, "minBytes", Self::bytes, 0);
        let max_bytes = self.new_only(el, "maxBytes", Self::bytes, 1 << 27);
        let nthreads = if el.attr("nthreads").is_some() { Some(self.uint(el, "nthreads")?) } else { None };
        Some(Program {
            name: name?,
            proto: proto?,
            nchannels: nchannels?,
            nchunksperloop: nchunksperloop?,
            ngpus: ngpus?,
            collective: collective?,
            inplace: inplace?,
            outofplace: outofplace?,
            min_bytes: min_bytes?,
            max_bytes: max_bytes?,
            nthreads,
            gpus: Vec::new(),
        })
    }

    fn proto(&mut self, el: &Element) -> Option<Protocol> {
        let v = self.text(el, "proto")?;
        let p = Protocol::parse(v).ok();
        if p.is_none() {
            self.report(el, format!("proto \"{v}\" is not Simple, LL or LL128"));
        }
        p
    }

    /// `coll`, spelled as this runtime spells it.
    fn coll(&mut self, el: &Element) -> Option<Collective> {
        let v = self.text(el, "coll")?;
        if let Some(c) = Collective::ALL.into_iter().find(|&c| self.runtime.coll_name(c) == Some(v)) {
            return Some(c);
        }
        let other = if self.runtime.legacy() { Runtime::MscclNccl } else { Runtime::MscclLegacy };
        let runtime_only: &[&str] = match self.runtime.legacy() {
            true => &["alltoall", "custom"],
            false => &["send", "recv", "gather", "scatter", "alltoall", "alltoallv"],
        };
        let msg = if let Some(c) = Collective::ALL.into_iter().find(|&c| other.coll_name(c) == Some(v)) {
            let right = self.runtime.coll_name(c).unwrap_or("?");
            format!("coll {v} is not accepted by {} (it spells it {right})", self.runtime())
        } else if runtime_only.contains(&v) {
            format!("coll {v} is not supported by collsynth's validator")
        } else {
            format!("coll {v} is not accepted by {}", self.runtime())
        };
        self.report(el, msg);
        None
    }

    fn gpu(&mut self, el: &Element) -> Option<Gpu> {
        let id = self.uint(el, "id");
        let i_chunks = self.uint(el, "i_chunks");
        let o_chunks = self.uint(el, "o_chunks");
        let s_chunks = self.uint(el, "s_chunks");
        let tbs: Vec<Option<ThreadBlock>> = el.children.iter().filter(|e| e.name == "tb").map(|e| self.tb(e)).collect();
        Some(Gpu {
            id: id?,
            i_chunks: i_chunks?,
            o_chunks: o_chunks?,
            s_chunks: s_chunks?,
            tbs: tbs.into_iter().collect::<Option<_>>()?,
        })
    }

    fn tb(&mut self, el: &Element) -> Option<ThreadBlock> {
        let id = self.uint(el, "id");
        let send = self.int(el, "send");
        let recv = self.int(el, "recv");
        let chan = self.uint(el, "chan");
        let steps: Vec<Option<Step>> = el.children.iter().filter(|e| e.name == "step").map(|e| self.step(e)).collect();
        let comment = if el.comments.is_empty() { None } else { Some(el.comments.join("\n")) };
        Some(ThreadBlock {
            id: id?,
            send: send?,
            recv: recv?,
            chan: chan?,
            steps: steps.into_iter().collect::<Option<_>>()?,
            comment,
        })
    }

    fn step(&mut self, el: &Element) -> Option<Step> {
        let s = self.uint(el, "s");
        let kind = self.step_type(el);
        let srcbuf = self.buf(el, "srcbuf");
        let srcoff = self.int(el, "srcoff");
        let dstbuf = self.buf(el, "dstbuf");
        let dstoff = self.int(el, "dstoff");
        let cnt = self.uint(el, "cnt");
        let depid = self.int(el, "depid");
        let deps = self.int(el, "deps");
        let hasdep = self.flag(el, "hasdep");
        Some(Step {
            s: s?,
            kind: kind?,
            srcbuf: srcbuf?,
            srcoff: srcoff?,
            dstbuf: dstbuf?,
            dstoff: dstoff?,
            cnt: cnt?,
            depid: depid?,
            deps: deps?,
            hasdep: hasdep?,
        })
    }

    fn step_type(&mut self, el: &Element) -> Option<StepType> {
        let v = self.text(el, "type")?;
        let t = StepType::parse(v);
        if t.is_none() {
            let msg = match (v, self.runtime.legacy()) {
                ("ra", true) => "step type ra (residual add) is not supported by collsynth's validator".to_string(),
                _ => format!("step type \"{v}\" is not accepted by {}", self.runtime()),
            };
            self.report(el, msg);
        }
        t
    }

    fn buf(&mut self, el: &Element, key: &str) -> Option<Buf> {
        let v = self.text(el, key)?;
        let b = Buf::parse(v);
        if b.is_none() {
            self.report(el, format!("attribute {key} of node step is \"{v}\", not i, o or s"));
        }
        b
    }
}

/// `-?[0-9]+` fitting an i64; stricter than the runtime's `strtol` on purpose (`"1x"`, `" 1"`,
/// `"0x10"` are generator bugs, not numbers).
fn strict_int(v: &str) -> Option<i64> {
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

#[cfg(test)]
mod tests;
