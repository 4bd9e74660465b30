//! Regression (real OpenCode 1.18.33 in `integrations/opencode/e2e`): `opencode repair` on a
//! SQLite store whose write-ahead log holds data (OpenCode's own, as it leaves it) repaired the
//! session, then said "now: 2 error(s) left": it read the session back through the store it had
//! opened before writing, a private copy of the database as it was. The session is now read
//! back from the store opened again, and what `repair` says is left is what `check` finds.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn turnkeeper(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
        .args(args)
        .env_remove("OPENCODE_DB")
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("turnkeeper runs");
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// The doctor corpus's database copied into `dir` with a write-ahead log that holds data: the
/// three files are copied while a writer in WAL mode has written and not checkpointed (as a
/// copy of a store OpenCode is using, or has just left, looks).
fn store_with_a_live_log(dir: &Path) -> std::path::PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    let db = src.join("opencode.db");
    std::fs::copy(
        root().join("corpus/opencode/doctor/before/opencode.db"),
        &db,
    )
    .expect("copy");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.pragma_update(None, "journal_mode", "wal")
        .expect("wal");
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .expect("no checkpoint");
    conn.execute("UPDATE session SET time_updated = time_updated + 1", [])
        .expect("a write into the log");
    let out = dir.join("store");
    std::fs::create_dir_all(&out).expect("mkdir");
    for name in ["opencode.db", "opencode.db-wal", "opencode.db-shm"] {
        std::fs::copy(src.join(name), out.join(name)).expect("copy the store");
    }
    drop(conn);
    assert!(
        std::fs::metadata(out.join("opencode.db-wal")).is_ok_and(|m| m.len() > 0),
        "the copy's log holds data"
    );
    out
}

#[test]
fn what_repair_says_is_left_is_what_check_finds() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = store_with_a_live_log(tmp.path());
    let dir = store.to_str().expect("utf-8 path");
    let (code, out) = turnkeeper(&["opencode", "repair", "--all", "--storage", dir]);
    assert!(out.contains("repair(s) will be made"), "{out}");
    let left: Vec<&str> = out.lines().filter(|l| l.contains("now:")).collect();
    let (check_code, checked) = turnkeeper(&["opencode", "check", "--all", "--storage", dir]);
    assert_eq!(code, check_code, "{out}\n---\n{checked}");
    assert!(
        left.iter().all(|l| l.contains("now: no error")),
        "repair: {left:?}\ncheck after it:\n{checked}"
    );
    assert!(!checked.contains("error["), "{checked}");
}
