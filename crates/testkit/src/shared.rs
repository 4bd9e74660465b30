//! Where the third-party data of `../shared` is, for tests that read it.
//!
//! The project's checkout sits beside `shared/` (real traffic, real session stores, research).
//! None of it is copied into the repository, so a clone without it must still pass its tests:
//! a test that needs it asks [`shared_dir`], which prints one line and answers `None` when the
//! folder is absent, and fails the test when `CI=true` (CI always has it).
//!
//! This file is also included by path (`#[path = ...] mod shared;`) in the tests of crates
//! that testkit itself depends on, so there is one copy of the rule.

use std::path::{Path, PathBuf};

/// `../shared/<sub>` from the workspace root, when it exists.
///
/// # Panics
/// When it is absent and the environment has `CI=true`.
pub fn shared_dir(sub: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("../shared").join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{} is absent, and CI=true requires it (CI runs beside shared/)",
            dir.display()
        );
    }
    println!(
        "skipped: {} is absent (tests that read ../shared need it; CI=true requires it)",
        dir.display()
    );
    None
}
