//! `cargo xtask publish`: the crates a user can add, checked as crates.io would take them.
//!
//! `cargo publish --dry-run --workspace` packages every publishable crate in dependency order
//! (model, guard, prevent, recover, stores, proxy, the facade `turnkeeper-kit`, the CLI
//! `turnkeeper-cli`), each verified by building the packaged sources against the ones before it
//! (cargo's local overlay of the crates not yet on the registry). `testkit` and `xtask` are
//! `publish = false`.
//!
//! [`no_sqlite_below_stores`] checks the layering the stores and proxy crates exist for: the
//! base crate and the facade without its default feature link no SQLite, and the facade (with
//! its default features) links no async runtime or HTTP stack.

use std::path::Path;
use std::process::Command;

use crate::cmd::Cmd;
use crate::{Result, fail};

/// The dry run; `build` verifies each package by building it (slower), else it is packaged only.
pub fn command(root: &Path, build: bool) -> Cmd {
    let mut cmd = Cmd::cargo(root).args([
        "publish",
        "--dry-run",
        "--workspace",
        "--exclude",
        "xtask",
        "--exclude",
        "turnkeeper-testkit",
        // The dry run uploads nothing; a work tree with edits may still be checked.
        "--allow-dirty",
    ]);
    if !build {
        cmd = cmd.args(["--no-verify"]);
    }
    cmd
}

/// The crates that must not link SQLite, each with the `cargo tree` flags that select it.
const PURE: [(&str, &[&str]); 3] = [
    ("turnkeeper-model", &[]),
    ("turnkeeper-kit", &["--no-default-features"]),
    // SQLite is expected here (the default feature `stores`); the check is for the proxy's
    // runtime, which must never reach the facade.
    ("turnkeeper-kit", &[]),
];

/// Fails when `rusqlite` is among the normal dependencies of a crate that must stay pure.
pub fn no_sqlite_below_stores(root: &Path) -> Result<()> {
    for (krate, flags) in PURE {
        let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(root)
            .args(["tree", "-p", krate, "-e", "normal", "--prefix", "none"])
            .args(flags)
            .output()?;
        if !out.status.success() {
            return Err(fail(format!(
                "cargo tree -p {krate} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let tree = String::from_utf8_lossy(&out.stdout).into_owned();
        if krate == "turnkeeper-kit"
            && flags.is_empty()
            && let Some(l) = tree.lines().find(|l| {
                l.starts_with("tokio ") || l.starts_with("hyper ") || l.starts_with("redis ")
            })
        {
            return Err(fail(format!(
                "turnkeeper-kit links `{l}`: the proxy's runtime belongs in turnkeeper-proxy"
            )));
        }
        let stores_expected = krate == "turnkeeper-kit" && flags.is_empty();
        if !stores_expected
            && tree
                .lines()
                .any(|l| l.starts_with("rusqlite ") || l.starts_with("libsqlite3-sys "))
        {
            return Err(fail(format!(
                "{krate} {} links SQLite: storage belongs in turnkeeper-stores",
                flags.join(" ")
            )));
        }
    }
    Ok(())
}

/// Runs `cargo xtask publish`: the layering check, then the dry run.
pub fn publish(root: &Path, build: bool) -> Result<()> {
    no_sqlite_below_stores(root)?;
    println!("no SQLite in turnkeeper-model, nor in turnkeeper-kit without its default features");
    let cmd = command(root, build);
    println!("==> {}", cmd.display());
    let out =
        cmd.run(|l| l.contains("Packaging") || l.contains("Uploading") || l.starts_with("error"))?;
    if !out.status.success() {
        return Err(fail(format!("the dry run failed: {}", cmd.display())));
    }
    Ok(())
}
