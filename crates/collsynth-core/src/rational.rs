//! Exact rational numbers for bandwidths and optima.
//!
//! `Ratio<i128>` is enough for bandwidths written as decimals (denominators are powers of
//! ten) and for the cut ratios built from them; release builds keep overflow checks on, so
//! an overflow is an error, never a wrong answer.

use crate::error::{CollsynthError, Result};
use num_rational::Ratio;
use num_traits::{One, Signed, Zero};

pub type Rat = Ratio<i128>;

/// Parse a decimal number (`12.5`, `-3`, `1e3`, `2.5E-1`) or a fraction `p/q` exactly.
pub fn parse_exact(text: &str) -> Result<Rat> {
    let t = text.trim();
    if let Some((p, q)) = t.split_once('/') {
        let p = parse_exact(p)?;
        let q = parse_exact(q)?;
        if q.is_zero() {
            return Err(CollsynthError::bad(format!("division by zero in '{text}'")));
        }
        return Ok(p / q);
    }
    let bad = || CollsynthError::bad(format!("'{text}' is not a number"));
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().map_err(|_| bad())?),
        None => (t, 0),
    };
    let (neg, digits) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty()
        || !int_part.chars().all(|c| c.is_ascii_digit())
        || !frac_part.chars().all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let all: String = format!("{int_part}{frac_part}");
    let all = all.trim_start_matches('0');
    if all.len() > 36 {
        return Err(CollsynthError::bad(format!("'{text}' has too many digits")));
    }
    let num: i128 = if all.is_empty() { 0 } else { all.parse().map_err(|_| bad())? };
    let scale = exponent - frac_part.len() as i32;
    if scale.abs() > 30 {
        return Err(CollsynthError::bad(format!("'{text}' is out of range")));
    }
    let pow = 10i128.pow(scale.unsigned_abs());
    // 36 digits times 10^30 leaves i128: an error, never an overflow panic.
    let value = if scale >= 0 {
        Rat::from_integer(num.checked_mul(pow).ok_or_else(|| CollsynthError::bad(format!("'{text}' is out of range")))?)
    } else {
        Rat::new(num, pow)
    };
    Ok(if neg { -value } else { value })
}

/// The exact decimal text of `r` if its denominator has only factors 2 and 5, else `None`.
pub fn to_decimal(r: &Rat) -> Option<String> {
    let mut d = *r.denom();
    let (mut twos, mut fives) = (0u32, 0u32);
    while d % 2 == 0 {
        d /= 2;
        twos += 1;
    }
    while d % 5 == 0 {
        d /= 5;
        fives += 1;
    }
    if d != 1 {
        return None;
    }
    let places = twos.max(fives);
    let scaled = r * Rat::from_integer(10i128.checked_pow(places)?);
    let digits = scaled.to_integer().abs().to_string();
    let sign = if r.is_negative() { "-" } else { "" };
    if places == 0 {
        return Some(format!("{sign}{digits}"));
    }
    let p = places as usize;
    let padded = format!("{:0>width$}", digits, width = p + 1);
    let (i, f) = padded.split_at(padded.len() - p);
    Some(format!("{sign}{i}.{f}"))
}

/// `"p/q"` (or `"p"` for integers): the exact string form used in JSON outputs.
pub fn to_fraction_string(r: &Rat) -> String {
    if r.denom().is_one() {
        r.numer().to_string()
    } else {
        format!("{}/{}", r.numer(), r.denom())
    }
}

pub fn to_f64(r: &Rat) -> f64 {
    // Both parts convert exactly up to 2^53; beyond that the relative error stays ~1e-16.
    *r.numer() as f64 / *r.denom() as f64
}

pub fn rat(n: i128) -> Rat {
    Rat::from_integer(n)
}

#[cfg(test)]
mod tests;
