//! A small, bounded XML reader for NCCL / RCCL topology files.
//!
//! The files are machine written (`NCCL_TOPO_DUMP_FILE`): elements, attributes in `"` or `'`,
//! `<!-- -->` comments and an optional `<?xml ?>` declaration; no text content. Every size is
//! checked before anything grows, so a hostile file costs at most [`MAX_BYTES`] of input and
//! [`MAX_ELEMENTS`] elements, and nesting deeper than [`MAX_DEPTH`] is refused, not recursed.

use crate::error::{CollsynthError, Result};

/// Largest file read: the input reader's cap for this kind (a full 16-GPU RCCL dump is about 20 kB).
pub const MAX_BYTES: usize = crate::input::NCCL_XML_BYTES as usize;
/// Elements per file: RCCL's `NCCL_TOPO_XML_MAX_NODES` (NCCL's is 256).
pub const MAX_ELEMENTS: usize = 8192;
/// Nesting depth (real files nest PCI bridges about 8 deep).
pub const MAX_DEPTH: usize = 64;
/// Attributes per element.
pub const MAX_ATTRS: usize = 64;
/// Length of a name or value: NCCL's `MAX_STR_LEN`.
pub const MAX_STR: usize = 255;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    /// 1-based line of the `<`.
    pub line: usize,
}

impl Element {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// `line N: <name>`: where to look, for error messages.
    pub fn at(&self) -> String {
        format!("line {}: <{}>", self.line, self.name)
    }
}

fn err(line: usize, msg: impl std::fmt::Display) -> CollsynthError {
    CollsynthError::bad(format!("line {line}: {msg}"))
}

/// Parse `text` into its root element.
pub fn parse(text: &str) -> Result<Element> {
    if text.len() > MAX_BYTES {
        return Err(CollsynthError::bad(format!("file too large ({} bytes, at most {MAX_BYTES})", text.len())));
    }
    // NUL ends a C string: NCCL's reader would stop there and read something else.
    if let Some(at) = text.find('\0') {
        let line = 1 + text[..at].matches('\n').count();
        return Err(err(line, "a NUL character (a topology file is text)"));
    }
    let mut cur = Cursor { s: text.as_bytes(), pos: 0, line: 1 };
    let mut open: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut count = 0usize;
    loop {
        cur.skip_space();
        if cur.pos >= cur.s.len() {
            break;
        }
        if cur.peek() != b'<' {
            return Err(err(cur.line, "text outside a tag (a topology file holds elements only)"));
        }
        if cur.eat(b"<!--") {
            cur.skip_past(b"-->", "comment")?;
        } else if cur.eat(b"<?") {
            cur.skip_past(b"?>", "declaration")?;
        } else if cur.eat(b"</") {
            let line = cur.line;
            let name = cur.name()?;
            cur.skip_space();
            if !cur.eat(b">") {
                return Err(err(line, format!("</{name}: expected '>'")));
            }
            let el = open.pop().ok_or_else(|| err(line, format!("</{name}> closes nothing")))?;
            if el.name != name {
                return Err(err(line, format!("</{name}> closes <{}> of line {}", el.name, el.line)));
            }
            place(&mut open, &mut root, el);
        } else {
            cur.pos += 1;
            count += 1;
            if count > MAX_ELEMENTS {
                return Err(err(cur.line, format!("more than {MAX_ELEMENTS} elements")));
            }
            if open.len() >= MAX_DEPTH {
                return Err(err(cur.line, format!("elements nested deeper than {MAX_DEPTH}")));
            }
            let (el, closed) = cur.start_tag()?;
            if open.is_empty() && root.is_some() {
                return Err(err(el.line, format!("second top-level element <{}>", el.name)));
            }
            if closed {
                place(&mut open, &mut root, el);
            } else {
                open.push(el);
            }
        }
    }
    if let Some(el) = open.pop() {
        return Err(err(el.line, format!("<{}> is never closed", el.name)));
    }
    root.ok_or_else(|| CollsynthError::bad("no element in the file"))
}

fn place(open: &mut [Element], root: &mut Option<Element>, el: Element) {
    match open.last_mut() {
        Some(parent) => parent.children.push(el),
        None => *root = Some(el),
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> u8 {
        self.s.get(self.pos).copied().unwrap_or(0)
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        let hit = self.s[self.pos..].starts_with(lit);
        if hit {
            self.pos += lit.len();
        }
        hit
    }

    fn skip_space(&mut self) {
        while let Some(&c) = self.s.get(self.pos) {
            match c {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            self.pos += 1;
        }
    }

    /// Move past the next `end`, counting lines.
    fn skip_past(&mut self, end: &[u8], what: &str) -> Result<()> {
        let start_line = self.line;
        while self.pos < self.s.len() {
            if self.eat(end) {
                return Ok(());
            }
            if self.s[self.pos] == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
        Err(err(start_line, format!("{what} is never closed")))
    }

    /// An element or attribute name: ASCII letters, digits, `_`, `-`, `.`, `:`.
    fn name(&mut self) -> Result<String> {
        let start = self.pos;
        while self.pos < self.s.len()
            && (self.s[self.pos].is_ascii_alphanumeric() || matches!(self.s[self.pos], b'_' | b'-' | b'.' | b':'))
        {
            self.pos += 1;
            if self.pos - start > MAX_STR {
                return Err(err(self.line, format!("name longer than {MAX_STR} characters")));
            }
        }
        if start == self.pos {
            return Err(err(self.line, "expected a name"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    /// After `<`: name, attributes, then `>` (false) or `/>` (true).
    fn start_tag(&mut self) -> Result<(Element, bool)> {
        let line = self.line;
        let name = self.name()?;
        let mut el = Element { name, attrs: Vec::new(), children: Vec::new(), line };
        loop {
            self.skip_space();
            if self.eat(b"/>") {
                return Ok((el, true));
            }
            if self.eat(b">") {
                return Ok((el, false));
            }
            if self.pos >= self.s.len() {
                return Err(err(line, format!("<{}: end of file inside the tag", el.name)));
            }
            let key =
                self.name().map_err(|_| err(self.line, format!("<{}: expected an attribute, '>' or '/>'", el.name)))?;
            self.skip_space();
            if !self.eat(b"=") {
                return Err(err(self.line, format!("<{} {key}: expected '='", el.name)));
            }
            self.skip_space();
            let value = self.quoted(&el.name, &key)?;
            if el.attr(&key).is_some() {
                return Err(err(self.line, format!("<{} {key}=: the attribute is given twice", el.name)));
            }
            if el.attrs.len() >= MAX_ATTRS {
                return Err(err(line, format!("<{}> has more than {MAX_ATTRS} attributes", el.name)));
            }
            el.attrs.push((key, value));
        }
    }

    fn quoted(&mut self, tag: &str, key: &str) -> Result<String> {
        let q = self.peek();
        if q != b'"' && q != b'\'' {
            return Err(err(self.line, format!("<{tag} {key}=: the value must be quoted")));
        }
        self.pos += 1;
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos] != q {
            if matches!(self.s[self.pos], b'\n' | b'<') {
                return Err(err(self.line, format!("<{tag} {key}=: unterminated value")));
            }
            self.pos += 1;
            if self.pos - start > MAX_STR {
                return Err(err(self.line, format!("<{tag} {key}=: value longer than {MAX_STR} characters")));
            }
        }
        if self.pos >= self.s.len() {
            return Err(err(self.line, format!("<{tag} {key}=: unterminated value")));
        }
        let value = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        // NCCL's reader copies a value verbatim, expanding no entity or character reference:
        // `&amp;`, `&#0;` or a bare `&` would mean one thing to an XML reader and another to NCCL.
        if value.contains('&') {
            return Err(err(self.line, format!("<{tag} {key}=: '&' (NCCL reads values verbatim, without entities)")));
        }
        if let Some(c) = value.chars().find(|c| c.is_control()) {
            return Err(err(
                self.line,
                format!("<{tag} {key}=: control character {} in the value", c.escape_unicode()),
            ));
        }
        self.pos += 1;
        Ok(value)
    }
}
