//! Atomic file writes: the bytes go to `PATH.tmp`, are synced, and the file
//! is renamed over `PATH`, so an interrupted run leaves the old file or the
//! new one, never half of one.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("model.txt");
//! niwatori::atomic::write_atomic(&path, b"w\n0.5\n").unwrap();
//! assert_eq!(std::fs::read(&path).unwrap(), b"w\n0.5\n");
//! assert!(!dir.path().join("model.txt.tmp").exists());
//!
//! // A writer that fails leaves the old file and no temporary one.
//! let failed = niwatori::atomic::replace_atomically(&path, ".tmp", |tmp| {
//!     std::fs::write(tmp, b"half")?;
//!     Err(std::io::Error::other("disk full"))
//! });
//! assert!(failed.is_err());
//! assert_eq!(std::fs::read(&path).unwrap(), b"w\n0.5\n");
//! assert!(!dir.path().join("model.txt.tmp").exists());
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically, creating its folder if need be.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    write_via(path, ".tmp", bytes.as_ref())
}

/// [`write_atomic`] for a file that several processes may write at once
/// (the shards of one extraction write the same `extract.json`): the
/// temporary file is `PATH.<pid>.tmp`, so that one's rename cannot take
/// another's half-written file.
pub fn write_atomic_shared(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    write_via(
        path,
        &format!(".{}.tmp", std::process::id()),
        bytes.as_ref(),
    )
}

fn write_via(path: &Path, suffix: &str, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    replace_atomically(path, suffix, |tmp| {
        let mut f = std::fs::File::create(tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })
}

/// Has `make` write the file at `PATH` + `suffix` (a writer that picks the
/// format by extension gets one, e.g. `.tmp.png`), then renames it over
/// `path` (whose folder must exist). A failed attempt leaves no temporary
/// file behind.
pub fn replace_atomically<E: From<std::io::Error>>(
    path: &Path,
    suffix: &str,
    make: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(suffix);
    let tmp = PathBuf::from(tmp);
    let made = make(&tmp).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| {
            let message = format!("cannot rename {} to {}: {e}", tmp.display(), path.display());
            std::io::Error::new(e.kind(), message).into()
        })
    });
    if made.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    made
}
