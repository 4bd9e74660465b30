//! ## OR-04: Responses, reasoning `encrypted_content` OpenAI did not write
//!
//! OR-04 (OpenAI Responses): `encrypted_content` is verified when it comes back; another
//! organisation's blob, an edited or truncated one, or text that was never encrypted fails. What
//! can be told offline is the blob's form: OpenAI's is a Fernet token, URL-safe base64 starting
//! `gAAAAA` (every real one in ../shared: Codex rollouts, openclaw `thinkingSignature`s); text
//! with characters no token has (spaces, punctuation) was never encrypted. Some
//! Responses-compatible servers store something else there: the Ollama shim Codex uses for
//! `ollama-launch` writes the **plain reasoning text** into `encrypted_content` (real rollout,
//! `kimi-k2.5:cloud`). Resumed on an OpenAI model such a session fails every request.
//!
//! The error (api-rules-reasoning-2026-11.md §3.2, OR-04; V-Obs, openai/codex#8145 cluster,
//! openai/codex#36551 for items a third-party provider wrote): `The encrypted content … could not
//! be verified. Reason: Encrypted content could not be decrypted or parsed.` (`code:
//! invalid_encrypted_content`)
//!
//! Repair (safe): the item goes whole (fingerprint reported); a reasoning item is never edited,
//! and nothing else depends on an id-less one (OR-02 strips the ids of what an id-bearing one
//! produced). Found only on an OpenAI target (xAI: warning), never on the server that wrote the
//! item: there its own form is what it reads back.
//!
//! Scope: format `responses`; OpenAI (xAI: warning); fix: safe.

use turnkeeper_model::wire::responses::{Encrypted, ItemKind};

use crate::id::RuleId;
use crate::wire::responses::ResponsesCx;

/// True for text that can be an OpenAI `encrypted_content`: base64 characters only (OpenAI's
/// is a Fernet token, URL-safe base64 starting `gAAAAA`). Only what cannot be a token at all
/// (plain text, with its spaces and punctuation) is judged foreign: a short or unusual token is
/// left to the server, since a finding on a valid session is worse than a miss.
pub fn openai_form(blob: &str) -> bool {
    blob.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'=' | b'+' | b'/'))
}

/// Runs OR-04.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    for i in cx.kept(ItemKind::Reasoning) {
        let Encrypted::Text(s) = cx.item(i).encrypted else {
            continue;
        };
        if s.span.is_empty() {
            continue;
        }
        let blob = cx.text(s);
        if openai_form(&blob) {
            continue;
        }
        let plain = blob.contains(char::is_whitespace);
        cx.find(
            RuleId::Or04,
            i,
            format!(
                "a reasoning item whose `encrypted_content` OpenAI did not write ({}): \"The \
                 encrypted content could not be verified. Reason: Encrypted content could not be \
                 decrypted or parsed.\"",
                if plain {
                    "plain text, as a Responses-compatible server such as Ollama stores it"
                } else {
                    "not an OpenAI token"
                }
            ),
            Some("remove the reasoning item whole (it is never edited)"),
        );
        cx.remove(
            RuleId::Or04,
            i,
            "its encrypted_content is another provider's, which OpenAI cannot decrypt; a \
             reasoning item is never edited: it goes whole"
                .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::openai_form;

    #[test]
    fn the_openai_form_is_a_fernet_token() {
        for (blob, ok) in [
            ("gAAAAABp2R6n8XQ2pqtrmDOvtDPDdBA==", true),
            ("gAAAAABp2R6n8XQ2pqtrmDOvtDPDdBA", true),
            ("The user wants me to look at the file.", false),
            ("gB", true),
            ("eyJhbGciOiJIUzI1NiJ9.e30.sig", false),
        ] {
            assert_eq!(openai_form(blob), ok, "{blob}");
        }
    }
}
