//! ## GM-12: Gemini, a role other than user or model
//!
//! **The API.** Roles are `user` and `model` only; the SDK raises on anything else. Source:
//! api-rules.md GM-12 (python-genai `chats.py`; songquanpeng/one-api#836).
//!
//! **Repair.** None: which role was meant cannot be known. Reported only.

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// Reports contents with an unknown role.
pub fn run(_ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    for i in 0..f.len() {
        if f.role(i) == Role::Other {
            f.find(
                RuleId::Gm12,
                Severity::Error,
                i,
                None,
                "a content whose role is neither `user` nor `model`",
                None,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{Expect, check_with};

    fn gemini() -> Options<'static> {
        Options {
            model: Some("gemini-3-pro-preview".to_owned()),
            ..Options::default()
        }
    }

    #[test]
    fn a_system_content_is_reported() {
        let input = r#"{"contents":[{"role":"system","parts":[{"text":"Be brief."}]},{"role":"user","parts":[{"text":"q"}]}]}"#;
        check_with(
            input,
            &gemini(),
            Expect {
                rules: &["GM-12"],
                after: None,
                left: &["GM-12"],
            },
        );
    }
}
