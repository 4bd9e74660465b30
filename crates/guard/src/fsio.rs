//! Writing a file so that a reader sees the old bytes or the new ones, never half of them: the
//! bytes go to a temporary file in the same directory, which is flushed, renamed over the
//! target, and the directory synced. Used by the turn store and by the command line. (The
//! OpenCode write layer has its own, instrumented for its crash test.)

use std::io::Write;
use std::path::{Path, PathBuf};

/// Creates (truncating) the temporary file; `private` makes it readable and writable by its
/// owner only (mode 0600 on Unix).
fn create(path: &Path, private: bool) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    o.open(path)
}

/// Like [`write_atomically`], for a file only its owner may read (mode 0600 on Unix): the turn
/// store's files, which hold transcripts.
///
/// # Errors
/// The first I/O error; `path` is then unchanged.
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, bytes, true)
}

/// Writes `bytes` to `path` atomically (see the module docs). The temporary file,
/// `.<name>.<pid>.turnkeeper.tmp`, is removed when a step fails.
///
/// # Errors
/// The first I/O error; `path` is then unchanged.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, bytes, false)
}

fn write_with(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
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
        let mut f = create(&tmp, private)?;
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

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_private_file_is_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("turn.json");
        write_private_atomically(&p, b"{}").expect("write");
        let mode = std::fs::metadata(&p).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read(&p).expect("read"), b"{}");
        // Nothing is left behind but the file itself.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("turn.json")]);
    }
}
