//! Crash test of `opencode repair`: a repair run is killed at random moments, and afterwards
//! every file is either its old or its new content, nothing else appeared or vanished, and
//! `undo` restores the original exactly. Both stores.
//!
//! How the run is killed: this test binary re-runs itself as a child process (the
//! `crash_child` test with `TK_CRASH_CHILD_DIR` set) that repairs the broken sessions of the
//! doctor corpus. Most runs set `TURNKEEPER_CRASH_AFTER=N` (the write layer then aborts the
//! process, as `kill -9` would, at its N-th write step, N drawn uniformly over every step of a
//! full repair, which covers every point between two writes); the other runs SIGKILL the child
//! after a random delay.
//!
//! `TURNKEEPER_CRASH_RUNS` (default 10) runs per store; `TURNKEEPER_CRASH_SEED` repeats a
//! sequence. `cargo xtask crash` runs it with many more runs.

mod doctor_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use doctor_support::{Kind, R, fresh, repair, sessions};
use turnkeeper::doctor;
use turnkeeper::stores::opencode::{CRASH_ENV, TMP_SUFFIX, crash_steps};
use turnkeeper::stores::{BACKUP_DIR, WriteError};

const CHILD_DIR: &str = "TK_CRASH_CHILD_DIR";
const CHILD_KIND: &str = "TK_CRASH_CHILD_KIND";

/// The broken sessions, repaired in this order by the child.
fn targets() -> R<Vec<String>> {
    let s = sessions()?;
    Ok(vec![s["broken"].clone(), s["interrupted"].clone()])
}

/// The child: repairs the broken sessions in `TK_CRASH_CHILD_DIR` and prints the number of
/// write steps. Run directly (no child environment), it repairs a fresh copy and checks that
/// the write steps are counted.
#[test]
fn crash_child() -> R {
    let kind = match std::env::var(CHILD_KIND).as_deref() {
        Ok("sqlite") => Kind::Sqlite,
        _ => Kind::Json,
    };
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        let work = fresh()?;
        let before = crash_steps();
        for id in targets()? {
            assert!(repair(kind, work.path(), &id)? > 0);
        }
        assert!(crash_steps() > before, "write steps are not counted");
        return Ok(());
    };
    for id in targets()? {
        repair(kind, Path::new(&dir), &id)?;
    }
    println!("steps={}", crash_steps());
    Ok(())
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn child(kind: Kind, dir: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap_or_default());
    c.args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, dir)
        .env(
            CHILD_KIND,
            if kind == Kind::Sqlite {
                "sqlite"
            } else {
                "json"
            },
        )
        .env_remove(CRASH_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    c
}

/// A snapshot of the store and the temporary files found in it.
type State = (BTreeMap<String, Vec<u8>>, Vec<String>);

/// Files of the store other than backups, and temporary files outside the backups.
fn state(kind: Kind, work: &Path) -> R<State> {
    if kind == Kind::Sqlite {
        // Opening read-write lets SQLite roll back a hot journal left by the kill.
        let conn = rusqlite::Connection::open(work.join("opencode.db"))?;
        let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        assert_eq!(ok, "ok", "database damaged");
        drop(conn);
    }
    let mut snap = kind.snapshot(work)?;
    let mut tmp = Vec::new();
    snap.retain(|name, _| {
        let is_tmp = name
            .rsplit('/')
            .next()
            .is_some_and(|f| f.starts_with('.') && f.ends_with(TMP_SUFFIX));
        if is_tmp {
            tmp.push(name.clone());
        }
        !is_tmp
    });
    if kind == Kind::Sqlite {
        // Besides the database and the backups, no file may appear in the directory; SQLite's
        // own rollback journal may stay behind a kill (it is ignored or rolled back on the next
        // open, which is SQLite's all-or-nothing guarantee).
        for e in std::fs::read_dir(work)? {
            let name = e?.file_name().to_string_lossy().into_owned();
            assert!(
                ["opencode.db", "opencode.db-journal", "storage", BACKUP_DIR]
                    .contains(&name.as_str()),
                "unexpected file {name} after a crash"
            );
        }
    }
    Ok((snap, tmp))
}

/// Checks one killed run, then restores the original (by undo, or by finishing the repair and
/// undoing both runs). Returns how far the run had got.
fn verify_run(
    kind: Kind,
    work: &Path,
    old: &BTreeMap<String, Vec<u8>>,
    new: &BTreeMap<String, Vec<u8>>,
    finish_first: bool,
) -> R<&'static str> {
    let (now, tmp) = state(kind, work)?;
    let keys: std::collections::BTreeSet<&String> =
        old.keys().chain(new.keys()).chain(now.keys()).collect();
    let mut changed = 0;
    for k in keys {
        let (o, n, c) = (old.get(k), new.get(k), now.get(k));
        assert!(
            c == o || c == n,
            "{kind:?}: {k} is neither its old nor its new content after a crash"
        );
        if c != o {
            changed += 1;
        }
    }
    let path = kind.path(work);
    let stage = if now == *old {
        "before any change"
    } else if now == *new {
        "after every change"
    } else {
        "between changes"
    };
    assert!(
        stage != "before any change" || changed == 0,
        "{kind:?}: {changed} file(s) changed before any change"
    );
    assert!(
        tmp.iter().all(|t| t.starts_with("part/")),
        "{kind:?}: temporary files outside part directories: {tmp:?}"
    );
    if finish_first {
        // The next run completes the repair from wherever the killed one stopped.
        for id in targets()? {
            repair(kind, work, &id)?;
        }
        assert!(
            state(kind, work)?.0 == *new,
            "{kind:?}: a re-run did not complete the repair"
        );
    }
    // Undo everything there is to undo.
    for id in targets()? {
        loop {
            match doctor::undo(kind.store_ref(&path), &id, false) {
                Ok(_) => {}
                Err(WriteError::NoBackup { .. }) => break,
                Err(e) => return Err(e.into()),
            }
        }
    }
    let (back, tmp_left) = state(kind, work)?;
    assert!(
        back == *old,
        "{kind:?}: undo did not restore the original ({stage})"
    );
    assert!(
        tmp_left.is_empty() || stage == "before any change",
        "{kind:?}: temporary files left after undo: {tmp_left:?}"
    );
    Ok(stage)
}

fn crash_runs(kind: Kind) -> R {
    let runs: u64 = std::env::var("TURNKEEPER_CRASH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let seed: u64 = std::env::var("TURNKEEPER_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
        | 1;
    let mut rng = Rng(seed);

    // The reference run: the new state, the number of write steps, the time it takes.
    let reference = fresh()?;
    let old = state(kind, reference.path())?.0;
    let start = Instant::now();
    let out = child(kind, reference.path()).output()?;
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{kind:?}: the reference repair failed"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let steps: u64 = stdout
        .lines()
        .find_map(|l| l.split_once("steps=").map(|(_, n)| n))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .ok_or("the child did not report its steps")?;
    let new = state(kind, reference.path())?.0;
    assert!(old != new);

    let mut stages: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut points, mut kills) = (0, 0);
    for run in 0..runs {
        // What this run does, printed first: a failure names it (with the seed, to repeat it).
        eprintln!("crash {kind:?}: seed {seed}, run {run}");
        let work = fresh()?;
        let mut cmd = child(kind, work.path());
        if run % 5 == 4 {
            kills += 1;
            let mut c = cmd.spawn()?;
            let delay = rng.below(took.as_micros() as u64 * 12 / 10 + 1);
            std::thread::sleep(Duration::from_micros(delay));
            let _ = c.kill();
            let _ = c.wait();
        } else {
            points += 1;
            let k = 1 + rng.below(steps);
            eprintln!("crash {kind:?}: run {run} stops at write step {k} of {steps}");
            let status = cmd.env(CRASH_ENV, k.to_string()).status()?;
            assert!(
                !status.success(),
                "{kind:?}: crash point {k} of {steps} did not crash"
            );
        }
        let stage = verify_run(kind, work.path(), &old, &new, run % 2 == 1)?;
        *stages.entry(stage).or_default() += 1;
    }
    println!(
        "crash {kind:?}: {runs} runs (seed {seed}; {points} crash points of {steps} write steps, \
         {kills} SIGKILLs): {stages:?}; every file old or new, undo restored the original every time"
    );
    Ok(())
}

#[test]
fn crash_json_store() -> R {
    crash_runs(Kind::Json)
}

#[test]
fn crash_sqlite_store() -> R {
    crash_runs(Kind::Sqlite)
}
