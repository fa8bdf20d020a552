//! Engine SPEC strings: which program plays and with which USI options.
//!
//! A SPEC is one of
//! - `material`, `material-hand`: niwatori's own binary (`niwatori usi`) with
//!   `setoption name Eval value material|material-hand`;
//! - `learned:PATH`: niwatori with `Eval learned` and `EvalFile PATH`;
//! - `usi:COMMAND [ARG …]`: any USI engine.
//!
//! Any of them may be followed by `--option Name=Value` (repeatable), `--name LABEL`
//! and engine quirks, which are data rather than special cases in the referee:
//! `--nodes-fallback-byoyomi MS` says the engine cannot take `go nodes` (gpsusi
//! aborts on it), so a nodes-limited match gives it `byoyomi MS` instead;
//! `--time-margin MS` shows the engine MS less time than the clock allows, for
//! engines that overrun (gpsusi uses its whole byoyomi plus ~100 ms).
//! Words are separated by spaces (paths containing spaces are not supported).
//!
//! ```
//! use niwatori::play::spec::{EngineSpec, Program};
//! let s = EngineSpec::parse("usi:/usr/games/gpsusi --option Thread=1 --nodes-fallback-byoyomi 200").unwrap();
//! assert_eq!(s.program, Program::External("/usr/games/gpsusi".into()));
//! assert_eq!(s.options, vec![("Thread".to_string(), "1".to_string())]);
//! assert_eq!(s.nodes_fallback_byoyomi_ms, Some(200));
//! let m = EngineSpec::parse("learned:model.bin").unwrap();
//! assert_eq!(m.program, Program::Niwatori);
//! assert_eq!(m.options[1], ("EvalFile".to_string(), "model.bin".to_string()));
//! ```

use std::path::PathBuf;

use thiserror::Error;

use crate::eval::EvalSpec;

/// Errors in a SPEC string.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    #[error("empty engine SPEC")]
    Empty,
    #[error(
        "unknown engine SPEC {0:?}: expected material, material-hand, learned:PATH or usi:COMMAND"
    )]
    Unknown(String),
    #[error("SPEC {spec:?}: {what}")]
    Bad { spec: String, what: String },
}

/// Which executable to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// niwatori's own binary, started with the argument `usi`.
    Niwatori,
    /// An external USI engine.
    External(PathBuf),
}

/// A parsed SPEC: how to start an engine and configure it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSpec {
    /// Short name used in reports and records.
    pub label: String,
    pub program: Program,
    /// Extra command-line arguments (external engines only).
    pub args: Vec<String>,
    /// `setoption` pairs, sent in order after `usiok`.
    pub options: Vec<(String, String)>,
    /// Quirk: the engine cannot take `go nodes`; use this byoyomi instead.
    pub nodes_fallback_byoyomi_ms: Option<u64>,
    /// Quirk: time hidden from the engine on every move (milliseconds).
    pub time_margin_ms: u64,
}

impl EngineSpec {
    /// Parses a SPEC string (see the module documentation).
    pub fn parse(spec: &str) -> Result<EngineSpec, SpecError> {
        let words: Vec<&str> = spec.split_whitespace().collect();
        let Some((&head, rest)) = words.split_first() else {
            return Err(SpecError::Empty);
        };
        let bad = |what: String| SpecError::Bad {
            spec: spec.to_string(),
            what,
        };
        let eval = match head.parse::<EvalSpec>() {
            Ok(eval) => Some(eval),
            Err(e) if head.starts_with("learned:") => return Err(bad(e)),
            Err(_) => None,
        };
        let (program, mut options, label, mut rest) = if let Some(eval) = eval {
            let options = eval.usi_options().into_iter();
            let options = options.map(|(k, v)| (k.to_string(), v)).collect();
            let label = match &eval {
                EvalSpec::Learned(path) => format!(
                    "learned:{}",
                    path.file_stem().map_or(path.display().to_string(), |s| s
                        .to_string_lossy()
                        .into_owned())
                ),
                _ => head.to_string(),
            };
            (Program::Niwatori, options, label, rest)
        } else if let Some(cmd) = head.strip_prefix("usi:") {
            if cmd.is_empty() {
                return Err(bad("usi: needs a command".into()));
            }
            let name = std::path::Path::new(cmd)
                .file_name()
                .map_or(cmd.to_string(), |s| s.to_string_lossy().into_owned());
            (
                Program::External(PathBuf::from(cmd)),
                Vec::new(),
                name,
                rest,
            )
        } else {
            return Err(SpecError::Unknown(spec.to_string()));
        };
        let mut args = Vec::new();
        let mut label = label;
        let mut fallback = None;
        let mut time_margin_ms = 0;
        while let Some((&w, tail)) = rest.split_first() {
            rest = tail;
            let mut value = |flag: &str| -> Result<String, SpecError> {
                let Some((&v, tail)) = rest.split_first() else {
                    return Err(bad(format!("{flag} needs a value")));
                };
                rest = tail;
                Ok(v.to_string())
            };
            match w {
                "--option" => {
                    let v = value(w)?;
                    let Some((name, val)) = v.split_once('=') else {
                        return Err(bad(format!("--option {v:?} is not Name=Value")));
                    };
                    if name.is_empty() {
                        return Err(bad(format!("--option {v:?} has an empty name")));
                    }
                    options.push((name.to_string(), val.to_string()));
                }
                "--name" => label = value(w)?,
                "--nodes-fallback-byoyomi" => {
                    let v = value(w)?;
                    fallback = Some(v.parse::<u64>().map_err(|_| {
                        bad(format!(
                            "--nodes-fallback-byoyomi {v:?} is not milliseconds"
                        ))
                    })?);
                }
                "--time-margin" => {
                    let v = value(w)?;
                    time_margin_ms = v
                        .parse::<u64>()
                        .map_err(|_| bad(format!("--time-margin {v:?} is not milliseconds")))?;
                }
                _ if w.starts_with("--") => return Err(bad(format!("unknown flag {w}"))),
                _ if program == Program::Niwatori => {
                    return Err(bad(format!("unexpected word {w:?}")));
                }
                _ => args.push(w.to_string()),
            }
        }
        Ok(EngineSpec {
            label,
            program,
            args,
            options,
            nodes_fallback_byoyomi_ms: fallback,
            time_margin_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_forms_and_rejects_bad_ones() {
        let m = EngineSpec::parse("material-hand --option EvalNoise=20").unwrap();
        assert_eq!(m.program, Program::Niwatori);
        assert_eq!(
            m.options,
            vec![
                ("Eval".into(), "material-hand".into()),
                ("EvalNoise".into(), "20".into())
            ]
        );
        let u = EngineSpec::parse("usi:/usr/games/fairy-stockfish --name fsf --time-margin 150")
            .unwrap();
        assert_eq!(u.label, "fsf");
        assert_eq!(u.time_margin_ms, 150);
        assert!(u.args.is_empty());
        assert_eq!(EngineSpec::parse("  "), Err(SpecError::Empty));
        assert!(matches!(
            EngineSpec::parse("stockfish"),
            Err(SpecError::Unknown(_))
        ));
        assert!(matches!(
            EngineSpec::parse("usi:x --option foo"),
            Err(SpecError::Bad { .. })
        ));
        assert!(matches!(
            EngineSpec::parse("material --option"),
            Err(SpecError::Bad { .. })
        ));
        assert!(matches!(
            EngineSpec::parse("material extra"),
            Err(SpecError::Bad { .. })
        ));
        assert!(matches!(
            EngineSpec::parse("learned:"),
            Err(SpecError::Bad { .. })
        ));
    }
}
