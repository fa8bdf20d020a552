//! Atomic file writes: the bytes go to `PATH.<pid>.tmp`, are synced, and the
//! file is renamed over `PATH`, so an interrupted run leaves the old file or
//! the new one, never half of one. The process id keeps writers of one path
//! (the shards of an extraction into one folder) out of each other's way.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("model.txt");
//! niwatori::atomic::write_atomic(&path, b"w\n0.5\n").unwrap();
//! assert_eq!(std::fs::read(&path).unwrap(), b"w\n0.5\n");
//! let only = |d: &std::path::Path| std::fs::read_dir(d).unwrap().count() == 1;
//! assert!(only(dir.path()));
//!
//! // A writer that fails leaves the old file and no temporary one.
//! let failed = niwatori::atomic::replace_atomically(&path, ".tmp", |tmp| {
//!     std::fs::write(tmp, b"half")?;
//!     Err(std::io::Error::other("disk full"))
//! });
//! assert!(failed.is_err());
//! assert_eq!(std::fs::read(&path).unwrap(), b"w\n0.5\n");
//! assert!(only(dir.path()));
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically, creating its folder if need be.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    replace_atomically(path, ".tmp", |tmp| {
        let mut f = std::fs::File::create(tmp)?;
        f.write_all(bytes.as_ref())?;
        f.sync_all()
    })
}

/// Has `make` write the file at `PATH.<pid>` + `suffix` (a writer that
/// picks the format by extension gets one, e.g. `.tmp.png`), then renames it over
/// `path` (whose folder must exist). A failed attempt leaves no temporary
/// file behind.
pub fn replace_atomically<E: From<std::io::Error>>(
    path: &Path,
    suffix: &str,
    make: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}{suffix}", std::process::id()));
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
