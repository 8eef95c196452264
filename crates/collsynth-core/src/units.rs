//! Units of the topology JSON and zoo specs: bandwidth in GB/s (10^9 bytes/s), latency in
//! microseconds. Strings with units are converted exactly (bandwidth) or to f64 (latency).

use crate::error::{CollsynthError, Result};
use crate::rational::{parse_exact, Rat};
use num_traits::CheckedMul;

/// Split `"12.5 GB/s"` into (`"12.5"`, `"GB/s"`). An exponent (`1e3`, `1e-3`, `1e+2`, the
/// forms Python's `json` writes) belongs to the number.
fn split_number(text: &str) -> (&str, &str) {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '/'
                || c == '-'
                || c == '+'
                || ((c == 'e' || c == 'E') && i > 0 && exponent_follows(&t[i + 1..])))
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    (t[..end].trim(), t[end..].trim())
}

/// `rest` (what follows an `e`) starts an exponent: digits, or a sign then digits.
fn exponent_follows(rest: &str) -> bool {
    let digits = rest.strip_prefix(['-', '+']).unwrap_or(rest);
    digits.starts_with(|d: char| d.is_ascii_digit())
}

/// Bandwidth in GB/s, exactly. Accepts a plain number (GB/s) or a string such as
/// `"100Gbps"` (bits), `"25GB/s"`, `"12.5 GB/s"`, `"50GiB/s"`, `"1/3"`.
pub fn parse_bandwidth(text: &str) -> Result<Rat> {
    let (num, unit) = split_number(text);
    let value = parse_exact(num).map_err(|_| CollsynthError::bad(format!("cannot read bandwidth '{text}'")))?;
    let factor = bandwidth_factor(unit).ok_or_else(|| {
        CollsynthError::bad(format!("unknown bandwidth unit '{unit}' in '{text}' (use e.g. GB/s, Gbps, GiB/s)"))
    })?;
    Ok(value * factor)
}

/// Multiplier from `unit` to GB/s.
fn bandwidth_factor(unit: &str) -> Option<Rat> {
    if unit.is_empty() {
        return Some(Rat::from_integer(1));
    }
    let (prefix, rest) = unit.split_at(unit.find(['b', 'B', 'i']).unwrap_or(unit.len()));
    let (binary, rest) = match rest.strip_prefix('i') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let power = match prefix {
        "" => 0,
        "k" | "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        _ => return None,
    };
    let bits = match rest {
        "bps" | "bit/s" | "b/s" => true,
        "B/s" | "Bps" => false,
        _ => return None,
    };
    if binary && bits {
        return None;
    }
    let base: i128 = if binary { 1024 } else { 1000 };
    let bytes_per_s = Rat::from_integer(base.pow(power));
    let per_gb = bytes_per_s / Rat::from_integer(1_000_000_000);
    Some(if bits { per_gb / Rat::from_integer(8) } else { per_gb })
}

/// Latency in microseconds. Accepts a plain number (us) or `"500ns"`, `"2us"`, `"2µs"`, `"1ms"`, `"1s"`.
pub fn parse_latency(text: &str) -> Result<f64> {
    let (num, unit) = split_number(text);
    let cannot = || CollsynthError::bad(format!("cannot read latency '{text}'"));
    // Validate the syntax exactly, then let Rust's correctly rounded parser give the f64
    // (so a written latency reads back bit for bit).
    // The exact parser's range (10^±30) is narrower than f64's, and a latency needs no
    // exactness: check the characters only, so `1e308` and `1e-308` read as the finite f64s they are.
    if !is_decimal(num) {
        return Err(cannot());
    }
    let value: f64 = num.parse().map_err(|_| cannot())?;
    let factor = match unit {
        "" | "us" | "µs" | "usec" => 1.0,
        "ns" => 1e-3,
        "ms" => 1e3,
        "s" => 1e6,
        _ => {
            return Err(CollsynthError::bad(format!("unknown latency unit '{unit}' in '{text}' (use ns, us, ms or s)")))
        }
    };
    let us = value * factor;
    if !us.is_finite() {
        return Err(CollsynthError::bad(format!("latency '{text}' is beyond the largest finite number")));
    }
    Ok(us)
}

/// `text` is a plain decimal (`-1.5`, `2e-3`, `.5`), the syntax [`parse_exact`] accepts
/// without a fraction `p/q`.
fn is_decimal(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let mantissa = mantissa.strip_prefix(['-', '+']).unwrap_or(mantissa);
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    !(int_part.is_empty() && frac_part.is_empty()) && digits(int_part) && digits(frac_part) && exponent_ok
}

/// A whole number written in ASCII digits only (`+4`, `4 `, `٤` and `` are not, where Rust's
/// own parser takes a sign): rank lists and zoo arguments.
pub fn whole_number(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The largest size any command takes: 2^63 bytes, what a buffer can be (a signed 64-bit
/// byte count, as the runtimes and MPI hold it). Beyond it exact arithmetic on sizes could leave i128.
pub const MAX_SIZE_BYTES: i128 = 1 << 63;

/// `value` times `mult` bytes, refused above [`MAX_SIZE_BYTES`] (checked: no overflow panic).
fn bytes_of(text: &str, value: Rat, mult: i128) -> Result<Rat> {
    let too_large = || CollsynthError::bad(format!("size '{text}' is above the largest buffer, 2^63 bytes (8 EiB)"));
    let bytes = value.checked_mul(&Rat::from_integer(mult)).ok_or_else(too_large)?;
    if bytes > Rat::from_integer(MAX_SIZE_BYTES) {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Data size in bytes, the one rule of every size option (`synth --size`, `compare --sizes`,
/// `--size-range`, `run --size`, `bench-mpi --sizes`, ...): a bare number is bytes; `K`, `M`,
/// `G`, `T` (either case) and `KiB`, `MiB`, `GiB`, `TiB` are powers of 1024, a bare letter
/// read as nccl-tests reads it; `KB`, `MB`, `GB`, `TB` are powers of 1000.
pub fn parse_size(text: &str) -> Result<Rat> {
    one_token(text)?;
    let (num, unit) = split_number(text);
    let value = parse_exact(num).map_err(|_| CollsynthError::bad(format!("cannot read size '{text}'")))?;
    let mult: i128 = match unit {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => match binary_power(unit) {
            Some(p) if unit.len() == 1 || unit.get(1..) == Some("iB") => 1 << (10 * p),
            _ => {
                return Err(CollsynthError::bad(format!(
                    "unknown size unit '{unit}' in '{text}' (B; K, M, G, T or KiB, MiB, GiB, TiB: powers of 1024; KB, MB, GB, TB: powers of 1000)"
                )))
            }
        },
    };
    if value < Rat::from_integer(0) {
        return Err(CollsynthError::bad(format!("size '{text}' is negative")));
    }
    bytes_of(text, value, mult)
}

/// A size is one token, as on a command line: no space, tab, line break or other white space
/// inside or around it (`5\u{a0}KiB` pasted from a page is refused, not read as 5 KiB).
fn one_token(text: &str) -> Result<()> {
    if text.chars().any(char::is_whitespace) {
        return Err(CollsynthError::bad(format!(
            "cannot read size {text:?}: it has white space in it (write e.g. 8GiB)"
        )));
    }
    Ok(())
}

/// The power of 1024 a unit's first letter stands for (`K` 1 up to `T` 4, either case).
fn binary_power(unit: &str) -> Option<u32> {
    match unit.chars().next()? {
        'K' | 'k' => Some(1),
        'M' | 'm' => Some(2),
        'G' | 'g' => Some(3),
        'T' | 't' => Some(4),
        _ => None,
    }
}

/// A size as nccl-tests reads `-b` and `-e` (src/common.cu, `parsesize`): the letter after the
/// number is all it looks at, so `8GB` is 8 GiB there as `8G` and `8GiB` are; a pasted
/// nccl-tests command line sweeps the sizes it sweeps in nccl-tests. Every other spelling is
/// read by [`parse_size`]. Whole bytes only (the sweep counts bytes).
pub fn parse_nccl_tests_size(text: &str) -> Result<u64> {
    one_token(text)?;
    let (num, unit) = split_number(text);
    let power = match binary_power(unit) {
        Some(p) if p <= 3 && matches!(&unit[1..], "" | "B" | "iB") => Some(p),
        _ => None,
    };
    let bytes = match power {
        Some(p) => {
            let value = parse_exact(num).map_err(|_| CollsynthError::bad(format!("cannot read size '{text}'")))?;
            if value < Rat::from_integer(0) {
                return Err(CollsynthError::bad(format!("size '{text}' is negative")));
            }
            bytes_of(text, value, 1i128 << (10 * p))?
        }
        None => parse_size(text)?,
    };
    if !bytes.is_integer() {
        return Err(CollsynthError::bad(format!("size '{text}' is not a whole number of bytes")));
    }
    Ok(*bytes.numer() as u64)
}

/// nccl-tests' size sweep `-b min -e max -f factor`: min, min*factor, ... while at most max
/// (the loop of `TimeTest` in nccl-tests src/common.cu with stepFactor > 1). A factor below 2
/// or a zero min would never grow, so they are refused rather than looped on.
pub fn nccl_tests_sizes(min: u64, max: u64, factor: u64) -> Result<Vec<u64>> {
    if factor < 2 {
        return Err(CollsynthError::bad(format!("step factor must be at least 2, got {factor}")));
    }
    if min == 0 {
        return Err(CollsynthError::bad("minbytes must be at least 1 (0 never grows by a factor)"));
    }
    if min > max {
        return Err(CollsynthError::bad(format!("minbytes {min} is more than maxbytes {max}")));
    }
    let mut sizes = vec![min];
    while let Some(next) = sizes[sizes.len() - 1].checked_mul(factor).filter(|&s| s <= max) {
        sizes.push(next);
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests;
