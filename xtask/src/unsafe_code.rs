//! Where the workspace may hold `unsafe` code: two modules of the command, its huge-page
//! allocator and its memory map of a large input.
//!
//! Every crate denies or forbids `unsafe_code`; a `deny` can be lifted by an `allow` in the
//! source, so this check reads every Rust file of the workspace and refuses an
//! `allow(unsafe_code)` (or `expect`) anywhere but the files of [`ALLOWED`]. (The `#[napi]` glue of the Node
//! binding, which allows it in generated code, is not in any source file.) It is a test
//! (`cargo test -p xtask unsafe_code`), so `cargo test` and verify's `test` step run it.

use std::path::{Path, PathBuf};

use crate::{Result, fail};

/// The files that may allow `unsafe` code, from the workspace root.
pub const ALLOWED: &[&str] = &["crates/cli/src/hugepages.rs", "crates/cli/src/mapped.rs"];

/// This check's own file, whose test cases spell the attribute out; it is not compiled into
/// anything but xtask, which forbids `unsafe_code` through the workspace lints.
const THIS: &str = "xtask/src/unsafe_code.rs";

/// The folders whose Rust files are read.
const ROOTS: &[&str] = &["crates", "bindings", "integrations", "xtask", "fuzz"];

/// Folders never read: build output and installed packages.
const SKIP: &[&str] = &["target", "node_modules", ".venv", "corpus", "artifacts"];

/// Errors naming each Rust file, other than those of [`ALLOWED`], that allows `unsafe_code`.
pub fn only_where_allowed(root: &Path) -> Result<()> {
    let mut files = Vec::new();
    for dir in ROOTS {
        rust_files(&root.join(dir), &mut files)?;
    }
    let mut offenders = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        let rel = file.strip_prefix(root).unwrap_or(&file);
        if allows_unsafe(&text)
            && !ALLOWED.iter().any(|a| rel == Path::new(a))
            && rel != Path::new(THIS)
        {
            offenders.push(rel.display().to_string());
        }
    }
    if offenders.is_empty() {
        Ok(())
    } else {
        Err(fail(format!(
            "`allow(unsafe_code)` outside {}: {}",
            ALLOWED.join(" and "),
            offenders.join(", ")
        )))
    }
}

/// Whether a Rust source allows `unsafe_code`, by `allow` or `expect`, in any spacing and
/// among other lints.
fn allows_unsafe(text: &str) -> bool {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    ["allow(", "expect("].iter().any(|attr| {
        compact.match_indices(attr).any(|(at, _)| {
            let args = &compact[at + attr.len()..];
            let args = &args[..args.find(')').unwrap_or(args.len())];
            args.split(',').any(|lint| lint == "unsafe_code")
        })
    })
}

/// Collects the `.rs` files under `dir` (none when it does not exist).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        if entry.file_type()?.is_dir() {
            if !SKIP.iter().any(|s| name == *s) {
                rust_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(source: &str, expect: bool) {
        assert_eq!(allows_unsafe(source), expect, "{source}");
    }

    #[test]
    fn an_allow_of_unsafe_code_is_seen_in_any_spelling() {
        check("#![allow(unsafe_code)]", true);
        check("#[allow( unsafe_code )]\nfn f() {}", true);
        check("#[allow(dead_code, unsafe_code)]", true);
        check("#[expect(unsafe_code)]", true);
        check("#![cfg_attr(test, allow(unsafe_code))]", true);
        check("#[allow(unsafe_code_extra)]", false);
        check("#![forbid(unsafe_code)]", false);
        check("#![deny(unsafe_code)]", false);
        check("fn main() {}", false);
    }

    #[test]
    fn the_workspace_allows_it_only_in_the_listed_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask sits in the workspace");
        only_where_allowed(root).expect("no other file allows unsafe code");
    }
}
