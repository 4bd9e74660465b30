//! Writing a file so that a reader sees the old bytes or the new ones, never half of them: the
//! bytes go to a temporary file in the same directory, which is synced (when it replaces a
//! file), renamed over the target, and the directory synced. Used by the turn store and by the command line. (The
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
    stage_with(path, bytes, true, true)?.commit()
}

/// Writes `bytes` to `path` atomically (see the module docs). The temporary file,
/// `.<name>.<pid>.turnkeeper.tmp`, is removed when a step fails.
///
/// A `path` that exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is
/// written into as it is: renaming a file over it would replace the device or pipe with a
/// regular file (as root, `-o /dev/null` replaced the machine's `/dev/null`).
///
/// A file that replaces another is made durable before the rename (`sync_all`, then the
/// directory), so a crash leaves the old bytes or the new ones, never an empty file where the
/// old ones were. A new file replaces nothing and is not synced: a crash may lose it, no other
/// bytes (on a 1 MB `repair -o FILE` the sync was two thirds of the process's time; issue 24).
///
/// # Errors
/// The first I/O error; `path` is then unchanged.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match stage(path, bytes)? {
        Some(staged) => staged.commit(),
        None => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes).and_then(|()| f.flush())
        }
    }
}

/// The first half of [`write_atomically`]: writes `bytes` to the temporary file beside `path`
/// and returns it, to be renamed over `path` by [`Staged::commit`] once the caller knows that
/// these are the bytes it wants there. A [`Staged`] dropped without a commit removes its
/// temporary file, and `path` is as it was. A caller can so write a body while it is still
/// deciding whether the body is final.
///
/// `None` when `path` exists and is not a regular file (a device, a FIFO): such a path is not
/// replaced, and nothing was written (write to it with [`write_atomically`]).
///
/// # Errors
/// The first I/O error; `path` is then unchanged and no temporary file is left.
pub fn stage(path: &Path, bytes: &[u8]) -> std::io::Result<Option<Staged>> {
    let replaces = match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => return Ok(None),
        Ok(_) => true,
        Err(_) => false,
    };
    stage_with(path, bytes, false, replaces).map(Some)
}

/// A body written to the temporary file beside its target, not yet renamed over it ([`stage`]).
#[derive(Debug)]
#[must_use = "a staged file is removed unless it is committed"]
pub struct Staged {
    /// The target.
    path: PathBuf,
    /// The target's directory, synced after the rename when `sync`.
    dir: PathBuf,
    /// The temporary file; `None` once renamed.
    tmp: Option<PathBuf>,
    /// Whether the target is replaced, so the file and the rename are made durable.
    sync: bool,
}

impl Staged {
    /// Renames the temporary file over the target (syncing it first when it replaces a file,
    /// and the directory after).
    ///
    /// # Errors
    /// The first I/O error; the target is then unchanged and the temporary file removed.
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some(tmp) = self.tmp.take() else {
            return Ok(());
        };
        if let Err(e) = std::fs::rename(&tmp, &self.path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // The rename is durable once the directory is; a failure here leaves the new file in
        // place.
        if self.sync
            && let Ok(d) = std::fs::File::open(&self.dir)
        {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for Staged {
    /// Removes the temporary file of a body that was not committed.
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `bytes` to the temporary file for `path` (synced when `sync`), removing it on failure.
fn stage_with(path: &Path, bytes: &[u8], private: bool, sync: bool) -> std::io::Result<Staged> {
    let (dir, tmp) = temp_path(path)?;
    let written = (|| {
        let mut f = create(&tmp, private)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(Staged {
        path: path.to_owned(),
        dir,
        tmp: Some(tmp),
        sync,
    })
}

/// The directory of `path` (`.` for a bare file name) and the temporary file beside it,
/// `.<name>.<pid>.turnkeeper.tmp`.
fn temp_path(path: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
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
    Ok((dir, tmp))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The directory and temporary file for `path`, as strings (`None`: refused).
    fn check(path: &str, expect: Option<(&str, String)>) {
        let got = temp_path(Path::new(path))
            .ok()
            .map(|(d, t)| (d.display().to_string(), t.display().to_string()));
        let expect = expect.map(|(d, t)| (d.to_owned(), t));
        assert_eq!(got, expect, "{path}");
    }

    #[test]
    fn the_temporary_file_sits_beside_the_target() {
        let pid = std::process::id();
        check(
            "/data/store/turn.json",
            Some((
                "/data/store",
                format!("/data/store/.turn.json.{pid}.turnkeeper.tmp"),
            )),
        );
        check(
            "turn.json",
            Some((".", format!("./.turn.json.{pid}.turnkeeper.tmp"))),
        );
        check("/", None);
        check("dir/..", None);
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("a.json");
        std::fs::write(&path, "old")?;
        write_atomically(&path, b"new")?;
        assert_eq!(std::fs::read_to_string(&path)?, "new");
        let names: Vec<String> = std::fs::read_dir(dir.path())?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        assert_eq!(names, ["a.json"]);
        Ok(())
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temporary() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let target = dir.path().join("taken");
        std::fs::create_dir(&target)?;
        std::fs::write(target.join("inside"), "kept")?;
        // Renaming a file over a non-empty directory fails.
        let err = write_atomically(&target, b"new").map(|()| "written");
        assert!(err.is_err(), "{err:?}");
        assert_eq!(std::fs::read_to_string(target.join("inside"))?, "kept");
        let mut names: Vec<String> = std::fs::read_dir(dir.path())?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        names.sort();
        assert_eq!(names, ["taken"]);
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_is_readable_by_its_owner_only() -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("turn.json");
        write_private_atomically(&p, b"{}")?;
        assert_eq!(std::fs::metadata(&p)?.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&p)?, b"{}");
        Ok(())
    }

    /// A FIFO (like `/dev/null` or `/dev/stdout`, not a regular file) is written into, never
    /// replaced by a regular file: `repair -o /dev/null` as root once replaced the machine's
    /// `/dev/null`.
    #[cfg(unix)]
    #[test]
    fn a_path_that_is_no_regular_file_is_written_into_not_replaced() -> std::io::Result<()> {
        use std::io::Read as _;
        use std::os::unix::fs::FileTypeExt as _;
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&p).status();
        if !made.is_ok_and(|s| s.success()) {
            println!("skipped: mkfifo is not available");
            return Ok(());
        }
        let reader = {
            let p = p.clone();
            std::thread::spawn(move || -> std::io::Result<Vec<u8>> {
                let mut out = Vec::new();
                std::fs::File::open(&p)?.read_to_end(&mut out)?;
                Ok(out)
            })
        };
        write_atomically(&p, b"body")?;
        let got = reader
            .join()
            .map_err(|_| std::io::Error::other("reader thread"))??;
        assert_eq!(got, b"body");
        assert!(std::fs::metadata(&p)?.file_type().is_fifo());
        assert_eq!(
            std::fs::read_dir(dir.path())?.count(),
            1,
            "no temporary left"
        );
        Ok(())
    }

    /// What a directory holds, by name.
    fn names(dir: &Path) -> std::io::Result<Vec<String>> {
        let mut n = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<Vec<_>>>()?;
        n.sort();
        Ok(n)
    }

    /// A staged body is in place once committed, and dropped uncommitted it leaves the target
    /// as it was and no temporary file, whether the target existed or not.
    #[test]
    fn a_staged_body_lands_only_when_committed() -> std::io::Result<()> {
        for existed in [false, true] {
            let dir = tempfile::tempdir()?;
            let p = dir.path().join("out.json");
            if existed {
                std::fs::write(&p, "old")?;
            }
            let before = names(dir.path())?;
            let staged = stage(&p, b"new")?.expect("a regular path is staged");
            assert_eq!(
                names(dir.path())?.len(),
                before.len() + 1,
                "the temporary file"
            );
            drop(staged);
            assert_eq!(names(dir.path())?, before, "existed: {existed}");
            assert_eq!(std::fs::read(&p).ok(), existed.then(|| b"old".to_vec()));

            stage(&p, b"new")?.expect("staged again").commit()?;
            assert_eq!(std::fs::read(&p)?, b"new");
            assert_eq!(names(dir.path())?, ["out.json"], "existed: {existed}");
        }
        Ok(())
    }

    /// A device is not staged: it would be replaced by a regular file.
    #[cfg(unix)]
    #[test]
    fn a_device_is_not_staged() -> std::io::Result<()> {
        assert!(stage(Path::new("/dev/null"), b"body")?.is_none());
        Ok(())
    }
}
