//! Writing a file so that a reader sees the old bytes or the new ones, never half of them: the
//! bytes go to a temporary file in the same directory, which is flushed, renamed over the
//! target, and the directory synced. Used by the turn store and by the command line. (The
//! OpenCode write layer has its own, instrumented for its crash test.)

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (see the module docs). The temporary file,
/// `.<name>.<pid>.turnkeeper.tmp`, is removed when a step fails.
///
/// # Errors
/// The first I/O error; `path` is then unchanged.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"))?;
    let tmp = dir.join(format!(
        ".{}.{}.turnkeeper.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // The rename is durable once the directory is; a failure here leaves the new file in place.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
