//! Atomic file operations confined to a storage root, and the crash-test hook.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use super::WriteError;
use turnkeeper_model::opencode::check_id;

/// The environment variable of the crash-test hook: when it holds a number N ≥ 1, the process
/// aborts at the N-th write step (see [`crash_steps`]).
pub const CRASH_ENV: &str = "TURNKEEPER_CRASH_AFTER";

/// The suffix of temporary files (`.<name>.turnkeeper-tmp`, next to their target). OpenCode
/// lists `*.json` only, so a leftover is never read; the next apply or undo removes it.
pub const TMP_SUFFIX: &str = ".turnkeeper-tmp";

static STEPS: AtomicU64 = AtomicU64::new(0);

/// How many write steps this process has passed (each file written, flushed, renamed, removed,
/// each directory synced, each SQLite backup page batch and statement).
pub fn crash_steps() -> u64 {
    STEPS.load(Ordering::SeqCst)
}

/// Counts one write step, and aborts the process there when [`CRASH_ENV`] says so.
pub(crate) fn step() {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    let n = STEPS.fetch_add(1, Ordering::SeqCst) + 1;
    let limit = LIMIT.get_or_init(|| {
        std::env::var(CRASH_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&n| n > 0)
    });
    if *limit == Some(n) {
        // As abrupt as `kill -9`: no destructors, no buffered output flushed.
        std::process::abort();
    }
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Checks an id that becomes one path component.
pub(crate) fn safe_id(id: &str) -> Result<(), WriteError> {
    check_id(id).map_err(|reason| WriteError::UnsafeId {
        id: id.to_owned(),
        reason,
    })
}

/// `root` joined with `rel` (plain components only), with its existing ancestors resolved and
/// checked to stay under `root` (which must be canonical). The file itself, when it exists, must
/// not be a symlink.
pub(crate) fn confined(root: &Path, rel: &Path) -> Result<PathBuf, WriteError> {
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(WriteError::OutsideRoot {
            path: root.join(rel),
        });
    }
    let path = root.join(rel);
    // Resolve the deepest existing ancestor; everything below it will be created by us.
    let mut existing = path.as_path();
    while !existing.exists() {
        match existing.parent() {
            Some(p) => existing = p,
            None => break,
        }
    }
    let real = fs::canonicalize(existing).map_err(io_err(existing))?;
    if !real.starts_with(root) {
        return Err(WriteError::OutsideRoot { path });
    }
    if let Ok(meta) = fs::symlink_metadata(&path)
        && meta.file_type().is_symlink()
    {
        return Err(WriteError::OutsideRoot { path });
    }
    Ok(path)
}

/// Syncs a directory so that renames and removals in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), WriteError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err(dir))?;
    }
    step();
    Ok(())
}

/// Creates `dir` and its missing parents (all under `root`), syncing each parent.
pub(crate) fn create_dirs(root: &Path, rel: &Path) -> Result<PathBuf, WriteError> {
    let dir = confined(root, rel)?;
    let mut missing = Vec::new();
    let mut cur = dir.as_path();
    while !cur.exists() {
        missing.push(cur.to_owned());
        match cur.parent() {
            Some(p) => cur = p,
            None => break,
        }
    }
    for d in missing.iter().rev() {
        match fs::create_dir(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_err(d)(e)),
        }
        if let Some(parent) = d.parent() {
            sync_dir(parent)?;
        }
    }
    Ok(dir)
}

/// The temporary file next to `path`.
fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}{TMP_SUFFIX}"))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed,
/// renamed over `path`, the directory synced. `path` must come from [`confined`].
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let dir = path.parent().ok_or_else(|| WriteError::OutsideRoot {
        path: path.to_owned(),
    })?;
    let tmp = tmp_path(path);
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        // Two halves, so a crash can land between them (a half-written temporary file).
        let half = bytes.len() / 2;
        f.write_all(&bytes[..half]).map_err(io_err(&tmp))?;
        step();
        f.write_all(&bytes[half..]).map_err(io_err(&tmp))?;
        f.sync_all().map_err(io_err(&tmp))?;
        step();
        fs::rename(&tmp, path).map_err(io_err(path))?;
        step();
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes `path` (which must come from [`confined`]) and syncs its directory. A missing file
/// is not an error.
pub(crate) fn remove_durable(path: &Path) -> Result<(), WriteError> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(path)(e)),
    }
    step();
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Removes temporary files a killed run left in `dir`.
pub(crate) fn sweep_tmp(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(TMP_SUFFIX) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Reads a file under the root, `None` when it does not exist.
pub(crate) fn read_opt(path: &Path) -> Result<Option<Vec<u8>>, WriteError> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// Hex SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    turnkeeper_guard::hex(&Sha256::digest(bytes))
}

/// A sortable UTC time stamp for a backup directory: `20261122T181444.123Z`.
pub(crate) fn stamp_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ms = now.as_millis();
    let secs = (ms / 1000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_414), (2025, 11, 22));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn confined_refuses_escapes() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("tk-confined-{}", std::process::id()));
        fs::create_dir_all(dir.join("part"))?;
        let root = fs::canonicalize(&dir)?;
        assert!(confined(&root, Path::new("part/x.json")).is_ok());
        assert!(confined(&root, Path::new("../x.json")).is_err());
        assert!(confined(&root, Path::new("/etc/passwd")).is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/tmp", root.join("link"))?;
            assert!(confined(&root, Path::new("link/x.json")).is_err());
        }
        fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
