//! libsvm text rows: `target index:value ...`, 1-based ascending indices,
//! as LIBLINEAR's `train` reads them.
//!
//! Targets are centipawns divided by [`LABEL_SCALE`](super::LABEL_SCALE),
//! written exactly (at most 4 decimals); values are small integers.
//!
//! ```
//! use niwatori::extract::libsvm::{write_row, parse_row};
//! let mut out = Vec::new();
//! write_row(&mut out, -150, &[(0, 3), (41, 1)]);
//! assert_eq!(out, b"-0.015 1:3 42:1\n");
//! let row = parse_row("-0.015 1:3 42:1", 1).unwrap();
//! assert_eq!(row, (-0.015, vec![(1, 3.0), (42, 1.0)]));
//! ```

use super::siblings::LABEL_SCALE;

#[inline]
fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `cp / 10000` in shortest exact decimal form (`0.015`, `-1`, `0`).
pub fn push_target(out: &mut Vec<u8>, cp: i32) {
    let scale = LABEL_SCALE.unsigned_abs();
    if cp < 0 {
        out.push(b'-');
    }
    let a = cp.unsigned_abs();
    push_u64(out, u64::from(a / scale));
    let mut frac = a % scale;
    if frac != 0 {
        out.push(b'.');
        let mut div = scale / 10;
        while frac != 0 {
            out.push(b'0' + (frac / div) as u8);
            frac %= div;
            div /= 10;
        }
    }
}

/// Decimal digits of `n` (at least 1).
#[inline]
fn digits(n: u32) -> usize {
    match n {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        1_000..=9_999 => 4,
        10_000..=99_999 => 5,
        100_000..=999_999 => 6,
        1_000_000..=9_999_999 => 7,
        10_000_000..=99_999_999 => 8,
        100_000_000..=999_999_999 => 9,
        _ => 10,
    }
}

/// Writes `n` in decimal at the start of `buf`; returns its length.
#[inline]
fn put_u32(buf: &mut [u8], mut n: u32) -> usize {
    let len = digits(n);
    for b in buf[..len].iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
    len
}

/// "00" to "99", two bytes each.
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Writes `n` in decimal at the start of `buf`, which has room for 10
/// digits; returns its length. Below 10⁸ the digits come from two
/// independent halves and a shift drops the leading zeros: no chain of
/// divisions, no branch on the length.
#[inline]
fn put_index(buf: &mut [u8], n: u32) -> usize {
    if n >= 100_000_000 {
        return put_u32(buf, n);
    }
    let pair = |x: u32| {
        let i = 2 * x as usize;
        u64::from(u16::from_le_bytes([DIGIT_PAIRS[i], DIGIT_PAIRS[i + 1]]))
    };
    let (hi, lo) = (n / 10_000, n % 10_000);
    // eight digits, the most significant in the lowest byte
    let padded =
        pair(hi / 100) | pair(hi % 100) << 16 | pair(lo / 100) << 32 | pair(lo % 100) << 48;
    let leading_zeros = ((padded ^ 0x3030_3030_3030_3030).trailing_zeros() / 8).min(7) as usize;
    buf[..8].copy_from_slice(&(padded >> (8 * leading_zeros)).to_le_bytes());
    8 - leading_zeros
}

/// Room for one ` index:value` pair: a space, 10 digits, a colon, 3 digits.
const PAIR_MAX: usize = 1 + 10 + 1 + 3;

/// Appends one row: the target (centipawns, scaled here) and the features
/// as sorted 0-based indices with their values (written 1-based).
pub fn write_row(out: &mut Vec<u8>, target_cp: i32, features: &[(u32, u8)]) {
    push_target(out, target_cp);
    // Written into room made in one step: a push per byte and a copy per
    // number cost more than the digits themselves.
    let start = out.len();
    out.resize(start + features.len() * PAIR_MAX + 1, 0);
    let buf = &mut out[start..];
    let mut at = 0;
    for &(idx, v) in features {
        buf[at] = b' ';
        at += 1;
        at += put_index(&mut buf[at..], idx + 1);
        buf[at] = b':';
        at += 1;
        if v < 10 {
            buf[at] = b'0' + v;
            at += 1;
        } else {
            at += put_u32(&mut buf[at..], u32::from(v));
        }
    }
    buf[at] = b'\n';
    out.truncate(start + at + 1);
}

/// An error in a libsvm line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line}: {what}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

/// A parsed row: target and (1-based index, value) pairs.
pub type Row = (f64, Vec<(u32, f64)>);

/// Parses one libsvm line (`line_no` only names it in errors). Indices must
/// be 1-based and strictly ascending.
pub fn parse_row(text: &str, line_no: usize) -> Result<Row, ParseError> {
    let err = |what: String| ParseError {
        line: line_no,
        what,
    };
    let mut parts = text.split_ascii_whitespace();
    let target = parts
        .next()
        .ok_or_else(|| err("empty line".into()))?
        .parse::<f64>()
        .map_err(|e| err(format!("bad target: {e}")))?;
    let mut feats = Vec::new();
    let mut last = 0u32;
    for p in parts {
        let (i, v) = p
            .split_once(':')
            .ok_or_else(|| err(format!("{p:?} is not index:value")))?;
        let i: u32 = i
            .parse()
            .map_err(|e| err(format!("bad index {i:?}: {e}")))?;
        let v: f64 = v
            .parse()
            .map_err(|e| err(format!("bad value {v:?}: {e}")))?;
        if i <= last {
            return Err(err(format!("index {i} not above the previous {last}")));
        }
        last = i;
        feats.push((i, v));
    }
    Ok((target, feats))
}

/// Parses a whole libsvm text.
pub fn parse_rows(text: &str) -> Result<Vec<Row>, ParseError> {
    text.lines()
        .enumerate()
        .map(|(i, l)| parse_row(l, i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index up to 10⁷, then a spread of larger ones and each power of
    /// ten either side, reads back as `to_string` writes it.
    #[test]
    fn indices_are_written_as_decimal() {
        let mut samples: Vec<u32> = (0..10_000_000).collect();
        samples.extend((0..100_000u32).map(|i| i.wrapping_mul(2_654_435_761)));
        for p in 0..10 {
            let t = 10u32.pow(p);
            samples.extend([t - 1, t, t + 1]);
        }
        samples.push(u32::MAX);
        let mut buf = [0u8; 16];
        for n in samples {
            let len = put_index(&mut buf, n);
            assert_eq!(&buf[..len], n.to_string().as_bytes(), "{n}");
        }
    }

    #[test]
    fn rows_keep_every_value() {
        let feats: Vec<(u32, u8)> = (0..300).map(|i| (i * 7919, (i % 12) as u8)).collect();
        let mut out = Vec::new();
        write_row(&mut out, 2345, &feats);
        let row = parse_row(std::str::from_utf8(&out).unwrap().trim_end(), 1).unwrap();
        assert_eq!(row.0, 0.2345);
        let want: Vec<(u32, f64)> = feats.iter().map(|&(i, v)| (i + 1, f64::from(v))).collect();
        assert_eq!(row.1, want);
        assert_eq!(out.last(), Some(&b'\n'));
    }
}
