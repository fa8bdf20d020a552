//! Shared helpers for the play tests: scripted USI engines written as shell scripts.
#![allow(dead_code)]

#[path = "../required/mod.rs"]
mod required;

use std::path::{Path, PathBuf};

use niwatori::play::spec::{EngineSpec, Program};

/// What a scripted engine does on `go`.
pub enum OnGo<'a> {
    /// Plays `moves[n]` where n is the number of moves in the last `position`
    /// (resigns past the end), after an `info` line with score and PV.
    Script(&'a [&'a str]),
    Resign,
    Win,
    /// Exits without answering.
    Crash,
    /// Sleeps this many seconds, then plays as `Script`.
    Sleep(u32, &'a [&'a str]),
}

/// Writes an executable shell script speaking enough USI for the referee.
pub fn script_engine(dir: &Path, name: &str, on_go: OnGo) -> EngineSpec {
    let scripted = |moves: &[&str]| {
        format!(
            "set -- {}; i=0; mv=resign; for m in \"$@\"; do if [ $i = $n ]; then mv=$m; fi; i=$((i+1)); done; \
             echo \"info depth 1 score cp $((10 + n)) nodes 7 pv $mv\"; echo \"bestmove $mv\"",
            moves.join(" ")
        )
    };
    let action = match on_go {
        OnGo::Script(m) => scripted(m),
        OnGo::Resign => "echo 'bestmove resign'".into(),
        OnGo::Win => "echo 'bestmove win'".into(),
        OnGo::Crash => "echo 'engine bug: giving up' >&2; exit 3".into(),
        OnGo::Sleep(s, m) => format!("sleep {s}; {}", scripted(m)),
    };
    let text = format!(
        r#"#!/bin/sh
set -f
n=0
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$0.in"
  set -- $line
  case "$1" in
    usi) echo "id name {name}"; echo "option name Dummy type check default false"; echo usiok;;
    isready) echo readyok;;
    position) n=0; seen=0; for w in "$@"; do if [ $seen = 1 ]; then n=$((n+1)); fi; if [ "$w" = moves ]; then seen=1; fi; done;;
    go) {action};;
    quit) exit 0;;
  esac
done
"#
    );
    let path = dir.join(format!("{name}.sh"));
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    EngineSpec {
        label: name.to_string(),
        program: Program::External(path),
        args: Vec::new(),
        options: Vec::new(),
        nodes_fallback_byoyomi_ms: None,
        time_margin_ms: 0,
    }
}

/// niwatori's own binary, for in-process SPECs.
pub fn niwatori_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_niwatori"))
}

/// An external engine: its path, or a failure saying how to install it
/// (`None` only when the skip is asked for; see `tests/required`).
pub fn installed(path: &str) -> Option<PathBuf> {
    required::tool(path)
}
