//! `cargo xtask rules`: writes `docs/rules.md` from the rule files' documentation, and
//! `--check` (a `verify` step, and the `tidy` test below) fails when it is stale, when a rule id
//! has no documented section or no damaged corpus case, or when recover's planner names an id
//! no rule reports.
//!
//! Everything is read as text (xtask has no dependencies): the ids from
//! `crates/prevent/src/id.rs` (`Variant = "ID", "summary";`), the running order from the `file:`
//! entries of `crates/prevent/src/rules/mod.rs`, each rule file's `//!` documentation (one
//! `## ID: title` section per id it reports), the `"rules"` lists of
//! `corpus/damaged/*.expect.json`, and the `RuleId::Variant` names in
//! `crates/recover/src/plan.rs`.

use std::fs;
use std::path::Path;

/// The ids of `RuleId` that name no rule of the catalogue (`RuleId::is_rule` is false for them):
/// changes made by recovery, inputs the rules could not run on, and damage to a session store's
/// own structure. They have no rule file and no damaged case.
const NOT_RULES: [&str; 3] = ["recover", "unchecked", "store"];

use crate::{Result, fail};

/// Where the generated catalogue goes, relative to the workspace root.
pub const OUTPUT: &str = "docs/rules.md";

/// One id of `RuleId`.
#[derive(Debug, Clone)]
struct Id {
    /// The enum variant (`An05`).
    variant: String,
    /// The id (`AN-05`).
    id: String,
    /// The one-line summary.
    summary: String,
}

/// The ids declared in `id.rs`, in declaration order.
fn parse_ids(src: &str) -> Vec<Id> {
    src.lines()
        .filter_map(|line| {
            let line = line.trim();
            let (variant, rest) = line.split_once(" = \"")?;
            if variant.is_empty() || !variant.chars().all(|c| c.is_ascii_alphanumeric()) {
                return None;
            }
            let (id, rest) = rest.split_once("\", \"")?;
            let summary = rest.strip_suffix("\";")?;
            Some(Id {
                variant: variant.to_owned(),
                id: id.to_owned(),
                summary: summary.to_owned(),
            })
        })
        .collect()
}

/// The rule files in running order (the `file: "…"` entries of `rules/mod.rs`).
fn parse_order(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("file: \"")?;
            Some(rest.split('"').next()?.to_owned())
        })
        .collect()
}

/// A file's leading `//!` documentation, without the markers.
fn module_doc(src: &str) -> String {
    let mut out = String::new();
    for line in src.lines() {
        let Some(rest) = line.strip_prefix("//!") else {
            break;
        };
        out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        out.push('\n');
    }
    out
}

/// The ids a documentation string has a `## ID:` section for.
fn documented_ids(doc: &str) -> Vec<String> {
    doc.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("## ")?;
            Some(rest.split(':').next()?.trim().to_owned())
        })
        .collect()
}

/// The ids an expect file lists under `"rules"`, `"warnings"` and `"changes"` (what check
/// reports and what repair does).
fn expect_rules(json: &str) -> Vec<String> {
    ["rules", "warnings", "changes"]
        .iter()
        .flat_map(|key| expect_list(json, key))
        .collect()
}

/// The strings of the list under `key` in an expect file.
fn expect_list(json: &str, key: &str) -> Vec<String> {
    let quoted = format!("\"{key}\"");
    let Some(at) = json.find(&quoted) else {
        return Vec::new();
    };
    let rest = &json[at + quoted.len()..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    if close < open {
        return Vec::new();
    }
    rest[open + 1..close]
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The `RuleId::Variant` names a source file uses.
fn named_variants(src: &str) -> Vec<String> {
    src.match_indices("RuleId::")
        .map(|(at, m)| {
            src[at + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect()
        })
        .collect()
}

/// The rule files' docs, in running order: (file stem, documentation).
fn rule_docs(root: &Path) -> Result<Vec<(String, String)>> {
    let dir = root.join("crates/prevent/src/rules");
    let order = parse_order(&fs::read_to_string(dir.join("mod.rs"))?);
    let mut out = Vec::new();
    for stem in order {
        let path = dir.join(format!("{stem}.rs"));
        let src =
            fs::read_to_string(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        out.push((stem, module_doc(&src)));
    }
    Ok(out)
}

/// `docs/rules.md` as it should be.
pub fn render(root: &Path) -> Result<String> {
    let ids = parse_ids(&fs::read_to_string(root.join("crates/prevent/src/id.rs"))?);
    let docs = rule_docs(root)?;
    let mut out = String::from(
        "# The rule catalogue\n\n\
         <!-- Generated by `cargo xtask rules` from the documentation of\n\
         crates/prevent/src/rules/*.rs; do not edit by hand. -->\n\n\
         Every rule turnkeeper checks, by id, with the file that holds its code, documentation\n\
         and tests. `AN-xx` are the Anthropic Messages API's rules and `GM-xx` Gemini's\n\
         (numbered as in the research notes `api-rules.md` and `api-rules-2026-11.md`); `CFG-xx`\n\
         are the request settings the API rejects before it reads the transcript; `CX-xx` what\n\
         Anthropic-compatible endpoints of other vendors refuse on that wire. `OA-xx` are\n\
         OpenAI Chat Completions' rules, which every OpenAI-compatible provider enforces, and\n\
         `DS-`, `KM-` and `GM-18` the reasoning rules of DeepSeek, Kimi and Gemini on that wire\n\
         (`api-rules-reasoning-2026-11.md`); each of their files says under *Scope* which formats\n\
         and providers it applies to and whether its fix is safe or a lossy stand-in. Files are\n\
         listed below in the order the pipeline runs them.\n\n\
         | Id | What | File |\n|---|---|---|\n",
    );
    for id in ids.iter().filter(|i| !NOT_RULES.contains(&i.id.as_str())) {
        let file = docs
            .iter()
            .find(|(_, d)| documented_ids(d).contains(&id.id))
            .map(|(f, _)| format!("[`{f}.rs`](../crates/prevent/src/rules/{f}.rs)"))
            .unwrap_or_else(|| "(none)".to_owned());
        out.push_str(&format!("| {} | {} | {file} |\n", id.id, id.summary));
    }
    for (stem, doc) in &docs {
        out.push_str(&format!("\n---\n\n## `{stem}.rs`\n\n"));
        for line in doc.lines() {
            if let Some(rest) = line.strip_prefix("## ") {
                out.push_str("### ");
                out.push_str(rest);
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
    }
    Ok(out)
}

/// Everything that is not tidy about the catalogue, one message each.
pub fn problems(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let ids = parse_ids(&fs::read_to_string(root.join("crates/prevent/src/id.rs"))?);
    if ids.is_empty() {
        problems.push("no rule ids found in crates/prevent/src/id.rs".to_owned());
    }
    let docs = rule_docs(root)?;
    let mut covered: Vec<String> = Vec::new();
    let damaged = root.join("corpus/damaged");
    for entry in fs::read_dir(&damaged)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".expect.json") {
            covered.extend(expect_rules(&fs::read_to_string(&path)?));
        }
    }
    for id in ids.iter().filter(|i| !NOT_RULES.contains(&i.id.as_str())) {
        let files: Vec<&str> = docs
            .iter()
            .filter(|(_, d)| documented_ids(d).contains(&id.id))
            .map(|(f, _)| f.as_str())
            .collect();
        if files.len() != 1 {
            problems.push(format!(
                "{} is documented (a `## {}:` section) in {} rule files, not one: {files:?}",
                id.id,
                id.id,
                files.len()
            ));
        }
        if !covered.contains(&id.id) {
            problems.push(format!(
                "{} has no damaged corpus case (no corpus/damaged/*.expect.json lists it under rules, warnings or changes)",
                id.id
            ));
        }
    }
    for c in &covered {
        if !ids.iter().any(|i| &i.id == c) {
            problems.push(format!("corpus/damaged names {c}, which is not a rule id"));
        }
    }
    let plan = fs::read_to_string(root.join("crates/recover/src/plan.rs"))?;
    for v in named_variants(&plan) {
        match ids.iter().find(|i| i.variant == v) {
            None => problems.push(format!(
                "recover's planner names RuleId::{v}, which does not exist"
            )),
            Some(i) if !docs.iter().any(|(_, d)| documented_ids(d).contains(&i.id)) => {
                problems.push(format!(
                    "recover's planner names {}, which no rule reports",
                    i.id
                ));
            }
            Some(_) => {}
        }
    }
    let want = render(root)?;
    match fs::read_to_string(root.join(OUTPUT)) {
        Ok(have) if have == want => {}
        Ok(_) => problems.push(format!("{OUTPUT} is stale: run `cargo xtask rules`")),
        Err(e) => problems.push(format!("{OUTPUT}: {e} (run `cargo xtask rules`)")),
    }
    Ok(problems)
}

/// `cargo xtask rules [--check]`.
pub fn rules(root: &Path, check: bool) -> Result<()> {
    if check {
        let problems = problems(root)?;
        if problems.is_empty() {
            println!("rules: {OUTPUT} is fresh and the catalogue is tidy");
            return Ok(());
        }
        for p in &problems {
            eprintln!("rules: {p}");
        }
        return Err(fail(format!(
            "{} problem(s) in the rule catalogue",
            problems.len()
        )));
    }
    let out = render(root)?;
    if let Some(dir) = root.join(OUTPUT).parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(root.join(OUTPUT), out)?;
    println!("rules: wrote {OUTPUT}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_read_what_the_sources_hold() {
        let ids = parse_ids("    /// doc\n    An05 = \"AN-05\", \"an empty text block\";\n");
        assert_eq!(ids.len(), 1);
        assert_eq!(
            (ids[0].variant.as_str(), ids[0].id.as_str()),
            ("An05", "AN-05")
        );
        assert_eq!(
            expect_rules(
                "{\"model\": \"m\", \"rules\": [\n  \"AN-08\",\n  \"AN-11\"\n], \"x\": []}"
            ),
            ["AN-08", "AN-11"]
        );
        assert_eq!(
            documented_ids("## AN-08: x\ntext\n## GM-10: y\n"),
            ["AN-08", "GM-10"]
        );
        assert_eq!(
            named_variants("repair(&[RuleId::An16, RuleId::Gm01])"),
            ["An16", "Gm01"]
        );
        assert_eq!(module_doc("//! a\n//!\n//! b\nuse x;\n//! c"), "a\n\nb\n");
    }

    /// The tidy test: `docs/rules.md` is fresh, every id has one documented rule and a damaged
    /// case, and the planner names only ids a rule reports.
    #[test]
    fn rule_catalogue_is_tidy() {
        let root = crate::project_root();
        let problems = problems(&root).expect("the sources read");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
