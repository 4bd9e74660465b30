//! `turnkeeper::doctor` on the doctor corpus: every broken session is repaired in both stores to
//! exactly the expected form, checks clean afterwards, and `undo` gives back the original bytes.
//! Also: path traversal, malformed files, conflicts.
//!
//! Refresh the expected forms with `UPDATE_EXPECT=1 cargo test -p turnkeeper --test doctor`,
//! then review the diff of `corpus/opencode/doctor/after/`.

mod doctor_support;

use std::fs;
use std::path::Path;

use doctor_support::{Kind, R, copy_dir, corpus, fresh, repair, sessions, tree};
use turnkeeper::doctor::StoreRef;
use turnkeeper::doctor::{self, PlanOptions};
use turnkeeper::opencode::check_session;
use turnkeeper::opencode::{Origin, PartChange, Plan, ProblemKind};
use turnkeeper::stores::opencode::list_backups;
use turnkeeper::stores::{BACKUP_DIR, WriteError};
use turnkeeper::{Options, Severity};

fn update() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

/// Compares (or, with UPDATE_EXPECT, writes) the expected repaired form of one store.
fn expect(kind: Kind, work: &Path) -> R {
    match kind {
        Kind::Json => {
            let want_dir = corpus().join("after/storage");
            if update() {
                let _ = fs::remove_dir_all(&want_dir);
                copy_dir(&work.join("storage"), &want_dir)?;
                let _ = fs::remove_dir_all(want_dir.join(BACKUP_DIR));
            }
            let got = tree(&work.join("storage"))?;
            let want = tree(&want_dir)?;
            let names = |m: &std::collections::BTreeMap<String, Vec<u8>>| {
                m.keys().cloned().collect::<Vec<_>>()
            };
            assert_eq!(
                names(&got),
                names(&want),
                "the repaired tree has other files"
            );
            for (name, bytes) in &want {
                assert!(
                    got.get(name) == Some(bytes),
                    "{name} differs from corpus/opencode/doctor/after/storage/{name}"
                );
            }
        }
        Kind::Sqlite => {
            let file = corpus().join("after/opencode.rows.txt");
            let got = doctor_support::rows(&work.join("opencode.db"))?;
            if update() {
                fs::write(&file, &got)?;
            }
            assert_eq!(
                got,
                fs::read_to_string(&file)?,
                "rows differ from {}",
                file.display()
            );
        }
    }
    Ok(())
}

/// After the repair: no error through `check_stored`, and the next request passes `check`.
fn assert_clean(kind: Kind, work: &Path, id: &str) -> R {
    let session = kind.load(work, id)?;
    let opts = Options::default();
    let checked = doctor::check_stored(&session, &opts)?;
    let errors: Vec<_> = checked
        .findings
        .iter()
        .filter(|f| f.finding.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{kind:?} {id}: {errors:#?}");
    // The converted request of the next turn, through the ordinary `check`.
    let request = check_session(&session, &opts)?.request;
    let body = doctor::next_turn_body(&request.body).unwrap_or(request.body);
    let model = checked.model.clone();
    assert!(model.is_some(), "the session records its model");
    let findings = turnkeeper::check_str(
        &body,
        &Options {
            model,
            ..Options::default()
        },
    )?;
    let errors: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(
        errors.is_empty(),
        "{kind:?} {id}: turnkeeper check: {errors:#?}"
    );
    Ok(())
}

fn round_trip(kind: Kind) -> R {
    let work = fresh()?;
    let w = work.path();
    let original = kind.snapshot(w)?;
    let ids = sessions()?;
    // Every broken session is broken to begin with.
    for name in ["broken", "interrupted"] {
        let s = kind.load(w, &ids[name])?;
        assert!(doctor::has_errors(&doctor::check_stored(
            &s,
            &Options::default()
        )?));
    }
    let mut made = 0;
    for id in ids.values() {
        made += repair(kind, w, id)?;
    }
    assert_eq!(
        made, 17,
        "11 repairs in the broken session (two of its parts moved after their reasoning, a removal and a creation each), 6 in the interrupted one"
    );
    for id in ids.values() {
        assert_clean(kind, w, id)?;
    }
    expect(kind, w)?;
    // A second run finds nothing to do.
    for id in ids.values() {
        assert_eq!(
            repair(kind, w, id)?,
            0,
            "{id}: the repair is not idempotent"
        );
    }
    // Undo gives back the original bytes.
    let path = kind.path(w);
    for name in ["broken", "interrupted"] {
        doctor::undo(kind.store_ref(&path), &ids[name], false)?;
    }
    assert!(
        kind.snapshot(w)? == original,
        "{kind:?}: undo did not restore the original"
    );
    // Nothing left to undo.
    assert!(matches!(
        doctor::undo(kind.store_ref(&path), &ids["broken"], false),
        Err(WriteError::NoBackup { .. })
    ));
    Ok(())
}

#[test]
fn json_store_is_repaired_to_the_expected_form_and_undone() -> R {
    round_trip(Kind::Json)
}

#[test]
fn sqlite_store_is_repaired_to_the_expected_form_and_undone() -> R {
    round_trip(Kind::Sqlite)
}

#[test]
fn healthy_session_needs_nothing() -> R {
    let work = fresh()?;
    let id = &sessions()?["healthy"];
    for kind in [Kind::Json, Kind::Sqlite] {
        let s = kind.load(work.path(), id)?;
        assert!(doctor::plan(&s, &PlanOptions::default()).is_empty());
        assert_clean(kind, work.path(), id)?;
    }
    Ok(())
}

#[test]
fn malformed_files_are_reported_with_their_path_and_left_alone() -> R {
    let work = fresh()?;
    let w = work.path();
    let id = &sessions()?["broken"];
    let session = Kind::Json.load(w, id)?;
    let bad: Vec<String> = session
        .problems
        .iter()
        .filter(|p| matches!(p.kind, ProblemKind::InvalidJson { .. }))
        .filter_map(|p| match &p.origin {
            Origin::File(f) => Some(f.file_name()?.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for name in [
        "prt_ffffffffff01Truncated00001.json",
        "prt_ffffffffff02ZeroBytes00001.json",
        "prt_ffffffffff03NulFilled00001.json",
    ] {
        assert!(
            bad.iter().any(|b| b == name),
            "{name} not reported: {bad:?}"
        );
    }
    let before = tree(&w.join("storage"))?;
    assert_eq!(
        repair(Kind::Json, w, id)?,
        11,
        "the rest of the session is still repaired"
    );
    let after = tree(&w.join("storage"))?;
    for (name, bytes) in &before {
        if name.contains("prt_ffffffffff") || name.ends_with("/..json") {
            assert_eq!(after.get(name), Some(bytes), "{name} was touched");
        }
    }
    Ok(())
}

#[test]
fn unsafe_ids_and_symlinks_never_lead_outside_the_root() -> R {
    let work = fresh()?;
    let w = work.path();
    let outside = tempfile::tempdir()?;
    let victim = outside.path().join("victim.json");
    fs::write(&victim, "{}")?;
    let storage = w.join("storage");
    let db = w.join("opencode.db");
    let id = sessions()?["broken"].clone();
    // Ids with `..`, separators or an absolute path, in every position.
    for (mid, pid) in [
        ("../../x", "prt_a"),
        ("msg_a", "../../../victim"),
        ("msg_a", "/etc/passwd"),
        ("..", "prt_a"),
    ] {
        let plan = Plan {
            session_id: id.clone(),
            changes: vec![PartChange::Create {
                message_id: mid.to_owned(),
                part_id: pid.to_owned(),
                json: "{}".to_owned(),
                time: 0,
            }],
        };
        assert!(matches!(
            doctor::apply_plan(StoreRef::Json(&storage), &plan),
            Err(WriteError::UnsafeId { .. })
        ));
        assert!(matches!(
            doctor::apply_plan(StoreRef::Sqlite(&db), &plan),
            Err(WriteError::UnsafeId { .. })
        ));
    }
    let evil_session = Plan {
        session_id: "../../evil".to_owned(),
        changes: Vec::new(),
    };
    assert!(doctor::apply_plan(StoreRef::Json(&storage), &evil_session).is_err());
    assert!(list_backups(&storage, "../x").is_err());
    // A part directory that is a symlink out of the root.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path(), storage.join("part/msg_symlinked"))?;
        let plan = Plan {
            session_id: id.clone(),
            changes: vec![PartChange::Remove {
                message_id: "msg_symlinked".to_owned(),
                part_id: "victim".to_owned(),
                old_raw: "{}".to_owned(),
            }],
        };
        assert!(matches!(
            doctor::apply_plan(StoreRef::Json(&storage), &plan),
            Err(WriteError::OutsideRoot { .. })
        ));
        assert_eq!(fs::read_to_string(&victim)?, "{}");
    }
    // The corpus's traversal files are reported, not followed, and a repair leaves them as they
    // are; no backup was made by the refused plans.
    let session = Kind::Json.load(w, &id)?;
    assert!(session.problems.iter().any(|p| matches!(
        &p.kind,
        ProblemKind::UnsafeId { id, .. } if id.contains("..")
    )));
    assert!(!storage.join(BACKUP_DIR).exists());
    assert!(!w.join(BACKUP_DIR).exists());
    let sqlite_session = Kind::Sqlite.load(w, &id)?;
    assert!(sqlite_session.problems.iter().any(|p| matches!(
        &p.kind,
        ProblemKind::UnsafeId { id, .. } if id == "../../x"
    )));
    Ok(())
}

#[test]
fn a_part_changed_since_planning_stops_the_repair_before_any_write() -> R {
    let work = fresh()?;
    let w = work.path();
    let id = &sessions()?["interrupted"];
    for kind in [Kind::Json, Kind::Sqlite] {
        let session = kind.load(w, id)?;
        let plan = doctor::plan(&session, &PlanOptions::default());
        let victim = plan
            .repairs
            .iter()
            .find(|r| matches!(r.change, PartChange::Replace { .. }))
            .ok_or("no replace in the plan")?;
        // Someone (OpenCode) rewrites that part in the meantime.
        match kind {
            Kind::Json => fs::write(
                w.join("storage/part")
                    .join(&victim.message_id)
                    .join(format!("{}.json", victim.part_id)),
                "{\"type\":\"text\",\"text\":\"new\"}",
            )?,
            Kind::Sqlite => {
                let conn = rusqlite::Connection::open(w.join("opencode.db"))?;
                conn.execute(
                    "UPDATE part SET data = '{\"type\":\"text\",\"text\":\"new\"}' WHERE id = ?1",
                    [&victim.part_id],
                )?;
            }
        }
        let before = kind.snapshot(w)?;
        let path = kind.path(w);
        assert!(matches!(
            doctor::apply(kind.store_ref(&path), &plan),
            Err(WriteError::Conflict { .. })
        ));
        assert!(
            kind.snapshot(w)? == before,
            "{kind:?}: something was written"
        );
        let root = if kind == Kind::Json {
            path.clone()
        } else {
            w.to_owned()
        };
        assert!(
            list_backups(&root, id)?
                .iter()
                .all(|b| b.manifest.is_none()),
            "{kind:?}: a complete backup was written for a refused repair"
        );
    }
    Ok(())
}

#[test]
fn undo_refuses_to_lose_a_later_change() -> R {
    let work = fresh()?;
    let w = work.path();
    let id = &sessions()?["interrupted"];
    assert_eq!(repair(Kind::Json, w, id)?, 6);
    let session = Kind::Json.load(w, id)?;
    let tool = session
        .messages
        .iter()
        .flat_map(|m| &m.parts)
        .find(|p| p.raw.contains("toolu_01InterruptEdit"))
        .ok_or("tool part")?;
    let path = w
        .join("storage/part")
        .join(&tool.message_id)
        .join(format!("{}.json", tool.id));
    fs::write(&path, "{\"later\":true}")?;
    let storage = w.join("storage");
    assert!(matches!(
        doctor::undo(StoreRef::Json(&storage), id, false),
        Err(WriteError::ChangedSinceRepair { .. })
    ));
    assert_eq!(fs::read_to_string(&path)?, "{\"later\":true}");
    doctor::undo(StoreRef::Json(&storage), id, true)?;
    assert_ne!(fs::read_to_string(&path)?, "{\"later\":true}");
    Ok(())
}
