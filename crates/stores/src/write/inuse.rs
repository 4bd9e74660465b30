//! Is OpenCode running on this store?
//!
//! How it is told (Linux, through `/proc`; opencode-storage.md §6.2 says OpenCode keeps no lock
//! or pid file, so the process table is the reliable signal):
//!
//! 1. **Open files.** Any other process with a file descriptor open on one of the targets (for
//!    SQLite: `opencode.db`, `opencode.db-wal`, `opencode.db-shm`; for the JSON tree: any file
//!    under `storage/`) is using the store. Every OpenCode process opens the database on first
//!    use and keeps it open until it exits (§5.2), so this catches a TUI, `serve`, `run` or the
//!    desktop sidecar, and also `sqlite3` or any other tool in the middle of a write.
//! 2. **Process names** (JSON tree only, where OpenCode does not keep files open between
//!    writes): a process whose name or executable is `opencode` or `kilo` (the fork, §1).
//!
//! Only processes of the same user can be inspected, which is where OpenCode runs. On systems
//! without `/proc` nothing can be told and [`in_use`] says so.

use std::fs;
use std::path::{Path, PathBuf};

/// Why the store looks in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InUse {
    /// The process id.
    pub pid: u32,
    /// The process name.
    pub name: String,
    /// What it holds (a path), or why it matched.
    pub reason: String,
}

impl std::fmt::Display for InUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {} ({}) {}", self.pid, self.name, self.reason)
    }
}

/// Process names that are OpenCode.
const NAMES: [&str; 4] = ["opencode", ".opencode", "kilo", ".kilo"];

/// Looks for another process using the store: one holding a file open at or under any of
/// `targets`, or, with `by_name`, one named like OpenCode. `Ok(None)`: nothing found;
/// `Err(reason)`: this system cannot be inspected (no `/proc`).
///
/// # Errors
/// A message saying why nothing could be told.
pub fn in_use(targets: &[PathBuf], by_name: bool) -> Result<Option<InUse>, String> {
    in_use_by(
        targets,
        if by_name { &NAMES } else { &[] },
        "is an OpenCode process",
    )
}

/// [`in_use`] for any program: a process holding a file open at or under any of `targets`, or
/// whose name or executable is one of `names` (then `why` is the reason given).
///
/// # Errors
/// A message saying why nothing could be told.
pub fn in_use_by(targets: &[PathBuf], names: &[&str], why: &str) -> Result<Option<InUse>, String> {
    let proc_dir = Path::new("/proc");
    let entries = fs::read_dir(proc_dir)
        .map_err(|e| format!("cannot inspect running processes (/proc: {e})"))?;
    let me = std::process::id();
    let targets: Vec<PathBuf> = targets
        .iter()
        .map(|t| fs::canonicalize(t).unwrap_or_else(|_| t.clone()))
        .collect();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let base = e.path();
        let name = fs::read_to_string(base.join("comm"))
            .map(|s| s.trim().to_owned())
            .unwrap_or_default();
        if !names.is_empty() {
            let exe = fs::read_link(base.join("exe"))
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default();
            if names.contains(&name.as_str()) || names.contains(&exe.as_str()) {
                return Ok(Some(InUse {
                    pid,
                    name,
                    reason: why.to_owned(),
                }));
            }
        }
        let Ok(fds) = fs::read_dir(base.join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(link) = fs::read_link(fd.path()) else {
                continue;
            };
            if targets.iter().any(|t| link.starts_with(t)) {
                return Ok(Some(InUse {
                    pid,
                    name,
                    reason: format!("has {} open", link.display()),
                }));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_holding_the_file_is_seen() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("tk-inuse-{}", std::process::id()));
        fs::create_dir_all(&dir)?;
        let db = dir.join("opencode.db");
        fs::write(&db, b"x")?;
        assert_eq!(in_use(std::slice::from_ref(&db), false)?, None);
        // A child that keeps the file open on its stdin.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .stdin(fs::File::open(&db)?)
            .spawn()?;
        let seen = in_use(std::slice::from_ref(&db), false);
        let _ = child.kill();
        let _ = child.wait();
        let seen = seen?.ok_or("the child was not seen")?;
        assert!(seen.reason.contains("opencode.db"), "{seen}");
        fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
