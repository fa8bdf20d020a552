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
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes.as_ref())?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}
