//! Changes to a stored session's parts ([`Plan`], [`PartChange`]): what a doctor decides and a
//! store's write layer applies. Pure data, with the two helpers a plan needs: formatting new
//! JSON the way OpenCode writes it, and minting part ids.

use crate::opencode::convert::compact_json;

/// One change to one part of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartChange {
    /// Delete the part (its file or row).
    Remove {
        /// The message the part belongs to.
        message_id: String,
        /// The part.
        part_id: String,
        /// The part's stored text the plan was computed from ([`super::StoredPart::raw`]).
        old_raw: String,
    },
    /// Replace the part's stored text.
    Replace {
        /// The message the part belongs to.
        message_id: String,
        /// The part.
        part_id: String,
        /// The part's stored text the plan was computed from.
        old_raw: String,
        /// The new stored text, in the store's own form (a whole file for the JSON tree, the
        /// `data` column for SQLite).
        new_raw: String,
    },
    /// Create a new part.
    Create {
        /// The message the part belongs to.
        message_id: String,
        /// The new part's id (it must not exist yet).
        part_id: String,
        /// The whole part as compact JSON, ids included; each store writes it in its own form
        /// (2-space pretty JSON file, or a `data` column without the id fields).
        json: String,
        /// `time_created` for a SQLite row, epoch milliseconds.
        time: i64,
    },
}

impl PartChange {
    /// The message id.
    pub fn message_id(&self) -> &str {
        match self {
            PartChange::Remove { message_id, .. }
            | PartChange::Replace { message_id, .. }
            | PartChange::Create { message_id, .. } => message_id,
        }
    }

    /// The part id.
    pub fn part_id(&self) -> &str {
        match self {
            PartChange::Remove { part_id, .. }
            | PartChange::Replace { part_id, .. }
            | PartChange::Create { part_id, .. } => part_id,
        }
    }
}

/// The changes to make to one session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The session.
    pub session_id: String,
    /// The changes, applied in order.
    pub changes: Vec<PartChange>,
}

/// Re-renders valid JSON text as `JSON.stringify(value, null, 2)` would, as if the value sat at
/// nesting `level` (its inner lines are indented by `2 * (level + 1)` spaces). Key order,
/// number spelling and string escapes are kept exactly. This is how OpenCode's JSON store
/// writes its files (opencode-storage.md §3.2).
///
/// ```
/// use turnkeeper_model::opencode::change::pretty_json;
/// assert_eq!(pretty_json(r#"{"a":[1,{}],"b":"x y"}"#, 0), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"x y\"\n}");
/// ```
pub fn pretty_json(json: &str, level: usize) -> String {
    let src = compact_json(json);
    let mut out = String::with_capacity(src.len() * 2);
    let mut depth = level;
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = src.chars().collect();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                let close = if c == '{' { '}' } else { ']' };
                if chars.get(i + 1) == Some(&close) {
                    out.push(c);
                    out.push(close);
                    i += 2;
                    continue;
                }
                out.push(c);
                depth += 1;
                newline(&mut out, depth);
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Mints a part id that sorts after every id in `siblings` under plain string comparison (the
/// order OpenCode reads parts in, opencode-storage.md §3.3) and equals none of them.
///
/// The id has OpenCode's shape, `prt_` + 12 hex digits + 14 base62 characters (§4.1): the hex
/// field is the largest native-shaped sibling's plus one (so the new part lands right after its
/// siblings even after the 2026-08-14 wrap of OpenCode's id clock, where an id minted from the
/// current time would sort first), and the tail is derived from `seed`, so the same repair mints
/// the same id. When the siblings' ids do not have that shape, the largest sibling id is
/// extended instead, which also sorts after it.
pub fn mint_part_id(siblings: &[&str], seed: &str) -> String {
    let tail = tail_from(seed);
    let max = siblings.iter().copied().max().unwrap_or("");
    let native_max = siblings
        .iter()
        .filter_map(|s| native_counter(s))
        .max()
        .unwrap_or(0);
    for counter in (native_max + 1..1 << 48).take(64) {
        let id = format!("prt_{counter:012x}{tail}");
        if id.as_str() > max && !siblings.contains(&id.as_str()) {
            return id;
        }
    }
    // Foreign-shaped siblings (`prt_zzz…`): extend the largest one.
    format!("{max}{tail}")
}

/// The native-shaped part id right after `id` under plain string comparison: the same 12-hex
/// field, the 14 base62 characters after it counted up by one (so `prt_…0Ab` gives `prt_…0Ac`,
/// `prt_…0Az` gives `prt_…0B0`). `None` when `id` does not have OpenCode's shape, or its tail is
/// the last one (`zzzzzzzzzzzzzz`).
pub fn part_id_after(id: &str) -> Option<String> {
    native_counter(id)?;
    let mut tail: Vec<u8> = id[16..].bytes().collect();
    for k in (0..tail.len()).rev() {
        let digit = BASE62.iter().position(|&c| c == tail[k])?;
        if digit + 1 < BASE62.len() {
            tail[k] = BASE62[digit + 1];
            return Some(format!("{}{}", &id[..16], String::from_utf8(tail).ok()?));
        }
        tail[k] = BASE62[0];
    }
    None
}

/// The 48-bit counter of a native-shaped part id.
fn native_counter(id: &str) -> Option<u64> {
    let rest = id.strip_prefix("prt_")?;
    if rest.len() != 26 || !rest.is_ascii() {
        return None;
    }
    let (hex, tail) = rest.split_at(12);
    if !tail.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    if !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// 14 base62 characters from a hash of `seed`.
fn tail_from(seed: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(seed.as_bytes());
    d.iter()
        .take(14)
        .map(|b| BASE62[usize::from(*b) % BASE62.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_matches_json_stringify() {
        let src = r#"{"status":"error","input":{"command":"cargo bench","x":[]},"error":"a,b:{c}\"","time":{"start":1,"end":2}}"#;
        assert_eq!(
            pretty_json(src, 1),
            "{\n    \"status\": \"error\",\n    \"input\": {\n      \"command\": \"cargo bench\",\n      \"x\": []\n    },\n    \"error\": \"a,b:{c}\\\"\",\n    \"time\": {\n      \"start\": 1,\n      \"end\": 2\n    }\n  }"
        );
        assert_eq!(pretty_json("[]", 0), "[]");
        assert_eq!(pretty_json(" 12 ", 0), "12");
    }

    #[test]
    fn the_id_after_counts_the_tail_up() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "prt_ac4bed588044gt6JWjw9MZmzCP",
                Some("prt_ac4bed588044gt6JWjw9MZmzCQ"),
            ),
            (
                "prt_ac4bed588044gt6JWjw9MZmz0z",
                Some("prt_ac4bed588044gt6JWjw9MZmz10"),
            ),
            (
                "prt_ac4bed588044gt6JWjw9MZmzz9",
                Some("prt_ac4bed588044gt6JWjw9MZmzzA"),
            ),
            (
                "prt_ac4bed588044gt6JWjw9MZmzzz",
                Some("prt_ac4bed588044gt6JWjw9MZn000"),
            ),
            ("prt_ac4bed588044zzzzzzzzzzzzzz", None),
            ("prt_0000000000_synthetic_thinking", None),
            ("prt_ac4bed588044gt6JWjw9MZmz", None),
        ];
        for (id, want) in cases {
            let got = part_id_after(id);
            assert_eq!(got.as_deref(), *want, "{id}");
            if let Some(g) = got {
                assert!(g.as_str() > *id);
            }
        }
    }

    #[test]
    fn minted_ids_sort_last_and_are_stable() {
        let sibs = [
            "prt_ac4bed588044gt6JWjw9MZmzCP",
            "prt_ac4bed592045n0DQdq3GTgt6JW",
            "prt_0000000000_synthetic_thinking",
        ];
        let id = mint_part_id(&sibs, "seed");
        assert!(sibs.iter().all(|s| *s < id.as_str()), "{id}");
        assert!(id.starts_with("prt_ac4bed592046"));
        assert_eq!(id.len(), 30);
        assert_eq!(id, mint_part_id(&sibs, "seed"));
        assert_ne!(id, mint_part_id(&sibs, "other"));
        let odd = ["prt_zzz"];
        let id = mint_part_id(&odd, "s");
        assert!(id.as_str() > "prt_zzz");
        assert!(crate::opencode::check_id(&id).is_ok());
        let none = mint_part_id(&[], "s");
        assert!(none.starts_with("prt_000000000001"));
    }
}
