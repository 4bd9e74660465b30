//! Finding a store, and reading it without changing a byte of the user's directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use turnkeeper_stores::StoreError;
use turnkeeper_stores::opencode::{StoreKind, locate};

fn corpus_db() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/opencode/opencode.db")
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("read"),
            )
        })
        .collect()
}

fn sessions(dir: &Path) -> usize {
    let store = locate(Some(dir)).expect("locates");
    assert_eq!(store.kind(), StoreKind::Sqlite);
    store.listing().expect("lists").sessions.len()
}

#[test]
fn kilo_and_channel_databases_are_found() {
    for name in ["kilo.db", "opencode-local.db", "kilo-beta.db"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::copy(corpus_db(), tmp.path().join(name)).expect("copy");
        assert_eq!(sessions(tmp.path()), 2, "{name}");
    }
    // The default name wins over a channel's.
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::copy(corpus_db(), tmp.path().join("opencode.db")).expect("copy");
    std::fs::write(tmp.path().join("opencode-dev.db"), b"not a database").expect("write");
    assert_eq!(sessions(tmp.path()), 2);
}

#[test]
fn a_directory_without_a_store_says_what_was_looked_for() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("notes.txt"), b"x").expect("write");
    match locate(Some(tmp.path())) {
        Err(e @ StoreError::NoStore { .. }) => {
            let text = e.to_string();
            assert!(text.contains("opencode.db"), "{text}");
            assert!(text.contains("kilo.db"), "{text}");
            assert!(text.contains("storage/"), "{text}");
        }
        other => panic!("expected NoStore, got {other:?}"),
    }
    // Two channel databases and no default: the user must choose.
    std::fs::copy(corpus_db(), tmp.path().join("opencode-dev.db")).expect("copy");
    std::fs::copy(corpus_db(), tmp.path().join("opencode-local.db")).expect("copy");
    assert!(matches!(
        locate(Some(tmp.path())),
        Err(StoreError::Ambiguous { .. })
    ));
}

#[test]
fn reading_leaves_the_directory_byte_identical() {
    // Without a log: opened immutable, no -wal or -shm appears.
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::copy(corpus_db(), tmp.path().join("opencode.db")).expect("copy");
    let before = snapshot(tmp.path());
    assert_eq!(sessions(tmp.path()), 2);
    assert_eq!(snapshot(tmp.path()), before);

    // With a live log holding rows the main file lacks (as after a crash, or while OpenCode
    // runs): read from a private copy, the rows in the log are seen, nothing here changes.
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("opencode.db");
    std::fs::copy(corpus_db(), &db).expect("copy");
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.pragma_update(None, "journal_mode", "WAL")
            .expect("wal");
        conn.pragma_update(None, "wal_autocheckpoint", 0)
            .expect("no autocheckpoint");
        conn.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) \
             SELECT 'ses_ffffffffffffLoggedOnly0001', project_id, slug, directory, 'only in the log', version, time_created, time_updated + 1 \
             FROM session LIMIT 1",
            [],
        )
        .expect("insert");
        // Leave the log as a killed process would: copy the three files while the
        // connection is still open, so the copy's -wal still holds the row.
        let frozen = tmp.path().join("frozen");
        std::fs::create_dir(&frozen).expect("mkdir");
        for suffix in ["", "-wal", "-shm"] {
            let from = PathBuf::from(format!("{}{suffix}", db.display()));
            std::fs::copy(&from, frozen.join(format!("opencode.db{suffix}"))).expect("copy");
        }
        drop(conn);
        let before = snapshot(&frozen);
        assert!(
            !before["opencode.db-wal"].is_empty(),
            "the log holds the row"
        );
        let store = locate(Some(&frozen)).expect("locates");
        let titles: Vec<String> = store
            .listing()
            .expect("lists")
            .sessions
            .into_iter()
            .map(|s| s.title)
            .collect();
        assert!(titles.iter().any(|t| t == "only in the log"), "{titles:?}");
        drop(store);
        assert_eq!(snapshot(&frozen), before);
    }
}
