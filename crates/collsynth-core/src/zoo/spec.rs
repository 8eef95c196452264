//! The zoo spec grammar (docs/contracts.md): `family:arg:arg,...,key=value,...`.
//!
//! Positional arguments are separated by `:`; inside an argument, `,` separates list items;
//! an item containing `=` is an option (`bw=`, `lat=`, family-specific ones), wherever it
//! stands. `bw=` and `lat=` take one value, or one per dimension / level separated by `/`.

use crate::error::{CollsynthError, Result};
use crate::rational::Rat;
use crate::units::{parse_bandwidth, parse_latency};

/// Default link bandwidth (GB/s) and latency (us) of the zoo.
pub const DEFAULT_BW: i128 = 100;
pub const DEFAULT_LAT: f64 = 1.0;

#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The spec as written (trimmed): the topology's name.
    pub text: String,
    pub family: String,
    /// Positional arguments, each a list of items.
    pub args: Vec<Vec<String>>,
    /// `key=value` options in order of appearance.
    pub options: Vec<(String, String)>,
}

/// Bandwidth and latency of one dimension / level of a family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkParams {
    pub bw: Rat,
    pub lat: f64,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams { bw: Rat::from_integer(DEFAULT_BW), lat: DEFAULT_LAT }
    }
}

impl LinkParams {
    pub fn new(bw: i128, lat: f64) -> Self {
        LinkParams { bw: Rat::from_integer(bw), lat }
    }
}

impl Spec {
    pub fn parse(text: &str) -> Result<Spec> {
        refuse_control(text)?;
        let text = text.trim();
        let mut parts = text.split(':');
        let head = parts.next().unwrap_or_default();
        // Options may follow an argument-less family directly: `dgx1,bw=20`.
        let (family, head_rest) = match head.split_once(',') {
            Some((f, rest)) => (f.trim().to_string(), Some(rest)),
            None => (head.trim().to_string(), None),
        };
        if family.is_empty() {
            return Err(CollsynthError::bad(format!("'{text}': empty family name")));
        }
        let (mut args, mut options) = (Vec::new(), Vec::new());
        if let Some(rest) = head_rest {
            for item in rest.split(',').map(str::trim) {
                match item.split_once('=') {
                    Some((k, v)) => options.push((k.trim().to_string(), v.trim().to_string())),
                    None => return Err(CollsynthError::bad(format!("'{text}': arguments follow ':', not ','"))),
                }
            }
        }
        for part in parts {
            let mut items = Vec::new();
            for item in part.split(',').map(str::trim) {
                match item.split_once('=') {
                    Some((k, v)) => options.push((k.trim().to_string(), v.trim().to_string())),
                    None => items.push(item.to_string()),
                }
            }
            // `ring::4`, `ring:4:`, `dgx1:` and `ring:4,` name nothing where an argument or
            // list item stands: refused rather than read as something else.
            if items.iter().any(String::is_empty) {
                return Err(CollsynthError::bad(format!("'{text}': empty argument")));
            }
            if !items.is_empty() {
                args.push(items);
            }
        }
        for (i, (key, _)) in options.iter().enumerate() {
            if key.is_empty() {
                return Err(CollsynthError::bad(format!("'{text}': an option has no name before '='")));
            }
            if options[..i].iter().any(|(k, _)| k == key) {
                return Err(CollsynthError::bad(format!("'{text}': option {key}= is given twice")));
            }
        }
        Ok(Spec { text: text.to_string(), family, args, options })
    }

    fn err(&self, msg: impl std::fmt::Display) -> CollsynthError {
        CollsynthError::bad(format!("{}: {msg}", self.text))
    }

    /// Check the number of positional arguments; `usage` is shown on error.
    pub fn expect_args(&self, min: usize, max: usize, usage: &str) -> Result<()> {
        if self.args.len() < min || self.args.len() > max {
            return Err(self.err(format!("expected {usage}")));
        }
        Ok(())
    }

    /// Positional argument `i` as a list of non-negative integers.
    pub fn ints(&self, i: usize, what: &str) -> Result<Vec<usize>> {
        let items = self.args.get(i).ok_or_else(|| self.err(format!("missing {what}")))?;
        items
            .iter()
            .map(|s| {
                crate::units::whole_number(s).ok_or_else(|| self.err(format!("{what}: '{s}' is not a whole number")))
            })
            .collect()
    }

    /// Positional argument `i` as one integer in `[min, max]`.
    pub fn int(&self, i: usize, what: &str, min: usize, max: usize) -> Result<usize> {
        let v = self.ints(i, what)?;
        if v.len() != 1 {
            return Err(self.err(format!("{what}: expected one number, got {}", v.len())));
        }
        self.check_range(v[0], what, min, max)
    }

    pub fn check_range(&self, v: usize, what: &str, min: usize, max: usize) -> Result<usize> {
        if v < min || v > max {
            return Err(self.err(format!("{what} must be between {min} and {max}, got {v}")));
        }
        Ok(v)
    }

    /// Positional argument `i` as dimensions `AxBx...` (each >= `min`).
    pub fn dims(&self, i: usize, min: usize) -> Result<Vec<usize>> {
        let items = self.args.get(i).ok_or_else(|| self.err("missing dimensions such as 4x4"))?;
        if items.len() != 1 {
            return Err(self.err("dimensions are written AxBxC, e.g. 4x4x2"));
        }
        let dims: Vec<usize> = items[0]
            .split(['x', 'X'])
            .map(|s| crate::units::whole_number(s.trim()).ok_or_else(|| self.err(format!("bad dimension '{s}'"))))
            .collect::<Result<_>>()?;
        for &d in &dims {
            self.check_range(d, "each dimension", min, 1 << 20)?;
        }
        Ok(dims)
    }

    /// The value of option `key`, if given.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Integer option `key` with a default.
    pub fn int_option(&self, key: &str, default: usize) -> Result<usize> {
        match self.option(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| self.err(format!("option {key}: '{v}' is not a whole number"))),
        }
    }

    /// Reject options other than `bw`, `lat` and `extra`.
    pub fn check_options(&self, extra: &[&str]) -> Result<()> {
        for (k, _) in &self.options {
            if k != "bw" && k != "lat" && !extra.contains(&k.as_str()) {
                let mut known = vec!["bw", "lat"];
                known.extend_from_slice(extra);
                return Err(self.err(format!("unknown option '{k}' (options: {})", known.join(", "))));
            }
        }
        Ok(())
    }

    /// Link parameters for `levels` dimensions / levels, from `bw=` and `lat=`, defaulting
    /// to `defaults` (one per level). One value applies to every level.
    pub fn link_params(&self, defaults: &[LinkParams]) -> Result<Vec<LinkParams>> {
        let levels = defaults.len();
        let mut out = defaults.to_vec();
        if let Some(v) = self.option("bw") {
            let bws = self.per_level(v, "bw", levels, parse_bandwidth)?;
            for (p, bw) in out.iter_mut().zip(bws) {
                if bw <= Rat::from_integer(0) {
                    return Err(self.err("bw: bandwidth must be positive"));
                }
                p.bw = bw;
            }
        }
        if let Some(v) = self.option("lat") {
            let lats = self.per_level(v, "lat", levels, parse_latency)?;
            for (p, lat) in out.iter_mut().zip(lats) {
                if !lat.is_finite() || lat < 0.0 {
                    return Err(self.err("lat: latency must be >= 0"));
                }
                p.lat = lat;
            }
        }
        Ok(out)
    }

    /// Same default for every level.
    pub fn uniform_params(&self, levels: usize) -> Result<Vec<LinkParams>> {
        self.link_params(&vec![LinkParams::default(); levels])
    }

    fn per_level<T: Clone>(
        &self,
        v: &str,
        key: &str,
        levels: usize,
        parse: impl Fn(&str) -> Result<T>,
    ) -> Result<Vec<T>> {
        let values: Vec<T> =
            v.split('/').map(|s| parse(s).map_err(|e| self.err(format!("{key}: {e}")))).collect::<Result<_>>()?;
        match values.len() {
            1 => Ok(vec![values[0].clone(); levels]),
            n if n == levels => Ok(values),
            n => Err(self.err(format!("{key}: expected 1 or {levels} values separated by '/', got {n}"))),
        }
    }
}

/// A spec is one line of plain text: a line break or other control character (a trailing
/// newline from a file or a shell) is refused, not trimmed, and the message escapes it.
fn refuse_control(text: &str) -> Result<()> {
    match text.chars().find(|c| c.is_control()) {
        Some(c) => Err(CollsynthError::bad(format!(
            "topology spec '{}' holds the control character {}",
            text.escape_debug(),
            c.escape_unicode()
        ))),
        None => Ok(()),
    }
}

/// An expansion expression (docs/contracts.md; the direct-connect paper's §5): a zoo spec, or one of
/// `line^k(E)` (`line(E)` is `line^1(E)`), `degree*n(E)`, `power^n(E)`,
/// `product(E; E; ...)`, `bi(E)` over expressions `E`. Whitespace around every token is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A plain zoo spec `family:args,...` (trimmed), built by its family.
    Spec(String),
    /// The k-fold line digraph L^k(E), k >= 1.
    Line(usize, Box<Expr>),
    /// The degree expansion E * n, n >= 1.
    Degree(usize, Box<Expr>),
    /// The Cartesian power E^(□n), n >= 1.
    Power(usize, Box<Expr>),
    /// The Cartesian product of at least two factors, in the order written.
    Product(Vec<Expr>),
    /// The union E ∪ E^T of E and its transpose (the direct-connect paper's appendix A.6).
    Bi(Box<Expr>),
}

/// Largest k of `line^k` and n of `power^n` (any larger one exceeds the size limits unless
/// the graph is a directed cycle, where it changes nothing).
pub const MAX_EXPONENT: usize = 64;

/// Largest n of `degree*n` (the node limit stops it long before).
pub const MAX_COPIES: usize = 1 << 20;

/// Deepest nesting of expansions: parsing, building and printing recurse once per level,
/// and a few hundred levels would overflow the stack (no useful expression nests this deep).
pub const MAX_DEPTH: usize = 64;

impl Expr {
    /// Parse an expression. A text without expansion keywords and without `(`, `)` or `;`
    /// is returned as [`Expr::Spec`] unchecked (its family validates it). Errors are BadInput
    /// naming the text, the 1-based character position and the problem.
    pub fn parse(text: &str) -> Result<Expr> {
        refuse_control(text)?;
        if text.trim().is_empty() {
            return Err(CollsynthError::bad("empty topology spec"));
        }
        let mut p = ExprParser { text: text.trim(), pos: 0, depth: 0 };
        let expr = p.expr()?;
        p.skip_ws();
        match p.peek() {
            None => Ok(expr),
            Some(c) => Err(p.unexpected(c)),
        }
    }
}

/// The normalised form: keywords as in the grammar, no spaces except after `;`, `line^1`
/// written `line`, inner specs trimmed. Parsing it again gives the same expression.
impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expr::Spec(s) => f.write_str(s),
            Expr::Line(1, e) => write!(f, "line({e})"),
            Expr::Line(k, e) => write!(f, "line^{k}({e})"),
            Expr::Degree(n, e) => write!(f, "degree*{n}({e})"),
            Expr::Power(n, e) => write!(f, "power^{n}({e})"),
            Expr::Product(factors) => {
                let parts: Vec<String> = factors.iter().map(Expr::to_string).collect();
                write!(f, "product({})", parts.join("; "))
            }
            Expr::Bi(e) => write!(f, "bi({e})"),
        }
    }
}

/// Recursive-descent parser over `text`; `pos` is a byte offset (always on a char boundary).
struct ExprParser<'a> {
    text: &'a str,
    pos: usize,
    /// Open parentheses around `pos`.
    depth: usize,
}

/// Keywords and the operator that must follow each (`(` directly for `line`, `product` and
/// `bi`). No keyword is a prefix of another, and a zoo family such as `biring` is no keyword
/// because an operator or `(` must follow the keyword itself.
const KEYWORDS: [&str; 5] = ["line", "degree", "power", "product", "bi"];

impl ExprParser<'_> {
    fn err_at(&self, pos: usize, msg: impl std::fmt::Display) -> CollsynthError {
        let column = self.text[..pos].chars().count() + 1;
        CollsynthError::bad(format!("{}: position {column}: {msg}", self.text))
    }

    /// The error for character `c` where an expression had to end.
    fn unexpected(&self, c: char) -> CollsynthError {
        let msg = match c {
            ')' => "unbalanced ')'".to_string(),
            ';' => "';' separates the factors of product(..; ..) only".to_string(),
            '(' => "unexpected '(' (expansions are line^k(..), degree*n(..), power^n(..), product(..; ..), bi(..))"
                .to_string(),
            c => format!("unexpected '{c}'"),
        };
        self.err_at(self.pos, msg)
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn skip_ws(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// Consume `c` (after whitespace) if it is next.
    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += c.len_utf8();
        }
        hit
    }

    fn expr(&mut self) -> Result<Expr> {
        self.skip_ws();
        match self.keyword() {
            Some("line") => {
                let k = if self.eat('^') { self.count("line^k: k", MAX_EXPONENT)? } else { 1 };
                Ok(Expr::Line(k, Box::new(self.parenthesised()?)))
            }
            Some("degree") => {
                self.expect('*', "degree expansion is written degree*n(SPEC)")?;
                Ok(Expr::Degree(self.count("degree*n: n", MAX_COPIES)?, Box::new(self.parenthesised()?)))
            }
            Some("power") => {
                self.expect('^', "Cartesian power is written power^n(SPEC)")?;
                Ok(Expr::Power(self.count("power^n: n", MAX_EXPONENT)?, Box::new(self.parenthesised()?)))
            }
            Some("bi") => {
                // `bi` takes no count: say so rather than "expected '('" after `bi^2`.
                self.skip_ws();
                if self.peek() != Some('(') {
                    return Err(self.err_at(self.pos, "bidirectional union is written bi(SPEC)"));
                }
                Ok(Expr::Bi(Box::new(self.parenthesised()?)))
            }
            Some(_) => self.product(),
            None => self.spec(),
        }
    }

    /// Consume a keyword if the text continues with one followed (after whitespace) by an
    /// operator or `(`: `line:3` stays a (bad) zoo spec, `linear:3` too.
    fn keyword(&mut self) -> Option<&'static str> {
        let rest = &self.text[self.pos..];
        let kw = KEYWORDS.into_iter().find(|kw| rest.starts_with(kw))?;
        let after = rest[kw.len()..].trim_start();
        if !after.starts_with(['^', '*', '(']) {
            return None;
        }
        self.pos += kw.len();
        Some(kw)
    }

    fn expect(&mut self, c: char, usage: &str) -> Result<()> {
        if self.eat(c) {
            return Ok(());
        }
        Err(self.err_at(self.pos, usage))
    }

    /// A whole number in `1..=max` (after whitespace); `what` names it in errors.
    fn count(&mut self, what: &str, max: usize) -> Result<usize> {
        self.skip_ws();
        let start = self.pos;
        let digits = self.text[start..].chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return Err(self.err_at(start, format!("{what}: expected a whole number")));
        }
        self.pos += digits;
        match self.text[start..self.pos].parse::<usize>() {
            Ok(v) if (1..=max).contains(&v) => Ok(v),
            Ok(v) => Err(self.err_at(start, format!("{what} must be between 1 and {max}, got {v}"))),
            Err(_) => Err(self.err_at(start, format!("{what} must be between 1 and {max}"))),
        }
    }

    /// Consume `(`, returning its position.
    fn open(&mut self) -> Result<usize> {
        self.skip_ws();
        let at = self.pos;
        if !self.eat('(') {
            return Err(self.err_at(at, "expected '('"));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err_at(at, format!("expansions nest deeper than {MAX_DEPTH} levels")));
        }
        Ok(at)
    }

    /// Consume the `)` matching the `(` at `open`.
    fn close(&mut self, open: usize) -> Result<()> {
        if self.eat(')') {
            self.depth -= 1;
            return Ok(());
        }
        match self.peek() {
            None => Err(self.err_at(open, "'(' is never closed")),
            Some(c) => Err(self.unexpected(c)),
        }
    }

    /// `( E )`.
    fn parenthesised(&mut self) -> Result<Expr> {
        let open = self.open()?;
        let inner = self.expr()?;
        self.close(open)?;
        Ok(inner)
    }

    /// `( E ; E ; ... )` after the keyword `product`: at least two factors.
    fn product(&mut self) -> Result<Expr> {
        let open = self.open()?;
        let mut factors = vec![self.expr()?];
        while self.eat(';') {
            factors.push(self.expr()?);
        }
        self.close(open)?;
        if factors.len() < 2 {
            return Err(self.err_at(open, "product(..) needs at least two factors separated by ';'"));
        }
        Ok(Expr::Product(factors))
    }

    /// A zoo spec: everything up to the next `(`, `)`, `;` or the end, trimmed.
    fn spec(&mut self) -> Result<Expr> {
        let start = self.pos;
        let end = self.text[start..].find(['(', ')', ';']).map_or(self.text.len(), |i| start + i);
        let spec = self.text[start..end].trim();
        if spec.is_empty() {
            return Err(self.err_at(start, "expected a topology spec"));
        }
        self.pos = end;
        Ok(Expr::Spec(spec.to_string()))
    }
}

#[cfg(test)]
mod tests;
