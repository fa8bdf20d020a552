//! Reference tools the tests compare against. A missing tool fails the
//! test that needs it, naming the tool and how to install it; the only way
//! to skip is to say so, with `NIWATORI_ALLOW_MISSING_TOOLS=1`.

use std::path::PathBuf;

/// The environment variable that lets a test skip a missing tool.
pub const ALLOW_MISSING: &str = "NIWATORI_ALLOW_MISSING_TOOLS";

/// The tool's path: `name` as a path if it has a slash, else found on
/// `PATH`. Missing: a panic that says what to install, or `None` (with the
/// skip printed) when [`ALLOW_MISSING`] is set.
pub fn tool(name: &str) -> Option<PathBuf> {
    let found = if name.contains('/') {
        Some(PathBuf::from(name)).filter(|p| p.is_file())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    };
    if found.is_some() {
        return found;
    }
    let package = match name.rsplit('/').next().unwrap_or(name) {
        "liblinear-train" | "liblinear-predict" => "liblinear-tools",
        "gpsusi" => "gpsshogi",
        "mpirun" => "openmpi-bin",
        other => other,
    };
    let what = format!(
        "{name} is not installed: `bash scripts/setup.sh` installs it (Debian package {package})"
    );
    if std::env::var_os(ALLOW_MISSING).is_some_and(|v| !v.is_empty() && v != "0") {
        eprintln!("SKIPPED ({ALLOW_MISSING} is set): {what}");
        None
    } else {
        panic!("{what}; set {ALLOW_MISSING}=1 to skip the tests that need it");
    }
}
