//! The zoo spec grammar (DESIGN.md): `family:arg:arg,...,key=value,...`.
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
            if items.iter().any(String::is_empty) && !(items.len() == 1 && options.is_empty()) {
                return Err(CollsynthError::bad(format!("'{text}': empty argument")));
            }
            items.retain(|s| !s.is_empty());
            if !items.is_empty() {
                args.push(items);
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
            .map(|s| s.parse::<usize>().map_err(|_| self.err(format!("{what}: '{s}' is not a whole number"))))
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
            .map(|s| s.trim().parse::<usize>().map_err(|_| self.err(format!("bad dimension '{s}'"))))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        let s = Spec::parse("torus:4x4x2,bw=50/50/25").unwrap();
        assert_eq!(s.family, "torus");
        assert_eq!(s.args, vec![vec!["4x4x2".to_string()]]);
        assert_eq!(s.dims(0, 1).unwrap(), vec![4, 4, 2]);
        let p = s.link_params(&[LinkParams::default(); 3]).unwrap();
        assert_eq!(p[2].bw, Rat::from_integer(25));
        let s = Spec::parse("circulant:16:3,4").unwrap();
        assert_eq!(s.int(0, "n", 1, 100).unwrap(), 16);
        assert_eq!(s.ints(1, "offsets").unwrap(), vec![3, 4]);
        let s = Spec::parse("dgx-a100:2,bw=300/25,lat=2us").unwrap();
        assert_eq!(s.int(0, "boxes", 1, 9).unwrap(), 2);
        let p = s.link_params(&[LinkParams::default(), LinkParams::default()]).unwrap();
        assert_eq!((p[0].bw, p[1].bw, p[1].lat), (Rat::from_integer(300), Rat::from_integer(25), 2.0));
        assert!(s.link_params(&[LinkParams::default(); 3]).is_err());
        assert!(Spec::parse("ring:8,foo=1").unwrap().check_options(&[]).is_err());
        assert_eq!(Spec::parse("dgx1").unwrap().args.len(), 0);
        let s = Spec::parse("dgx1,bw=20").unwrap();
        assert_eq!((s.family.as_str(), s.option("bw")), ("dgx1", Some("20")));
        assert!(Spec::parse("dgx1,3").is_err());
        assert!(Spec::parse("ring:8,bw=0").unwrap().uniform_params(1).is_err());
    }
}
