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

/// Appends one row: the target (centipawns, scaled here) and the features
/// as sorted 0-based indices with their values (written 1-based).
pub fn write_row(out: &mut Vec<u8>, target_cp: i32, features: &[(u32, u8)]) {
    push_target(out, target_cp);
    for &(idx, v) in features {
        out.push(b' ');
        push_u64(out, u64::from(idx) + 1);
        out.push(b':');
        push_u64(out, u64::from(v));
    }
    out.push(b'\n');
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
