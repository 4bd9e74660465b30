//! ## BR-15: Converse, an S3-sourced document the target model rejects (turnkeeper's number)
//!
//! **The API.** Two real 400s in real-traffic/bedrock-converse (pydantic-ai's multimodal
//! tool-return matrix; not in the research notes):
//! - Claude (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`) rejects a `document` block whose
//!   `source` is an `s3Location`: ``The model returned the following errors:
//!   messages.2.content.2.document.source.type: Field required``.
//! - Amazon Nova (`us.amazon.nova-2-lite-v1:0`) rejects a `toolResult` whose content holds such a
//!   document: ``The model returned the following errors: Malformed input request:
//!   #/messages/2/content/0: extraneous key [toolResult] is not permitted, please reformat your
//!   input and try again.``
//!
//! Each case was seen once, so the rule is as narrow as the evidence: it runs only for those
//! families, and only on S3 sources (the same requests with other sources were not recorded).
//!
//! **Repair.** None: the document is the user's content. Reported.

use turnkeeper_model::wire::converse::BlockKind;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, Family, dotted};

/// Reports S3 documents the target rejects.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    let family = cx.target.family;
    if !matches!(family, Family::Claude | Family::Nova) {
        return;
    }
    for i in 0..cx.messages().len() {
        for k in cx.alive_blocks(i) {
            let Some(b) = cx.block(i, k) else { continue };
            let msg = match family {
                Family::Claude if b.kind == BlockKind::Document && b.s3_source => format!(
                    "a document from an s3Location: Claude rejects it ({}.document.source.type: Field required)",
                    dotted(i, Some(k))
                ),
                Family::Nova if b.kind == BlockKind::ToolResult && b.result_s3_document => format!(
                    "a toolResult holding a document from an s3Location: Nova rejects it (Malformed input request: #/messages/{i}/content/{k}: extraneous key [toolResult] is not permitted)"
                ),
                _ => continue,
            };
            cx.find(RuleId::Br15, Severity::Error, Some(i), Some(k), msg, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    const DOC: &str =
        r#"{"document":{"name":"d","format":"pdf","source":{"s3Location":{"uri":"s3://b/k"}}}}"#;

    #[test]
    fn claude_is_told_of_an_s3_document_and_nova_of_one_in_a_tool_result() {
        let body =
            format!(r#"{{"messages":[{{"role":"user","content":[{{"text":"see"}},{DOC}]}}]}}"#);
        check(
            &body,
            Some("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Expect {
                found: &[("BR-15", "messages[0].content[1]")],
                repaired: None,
                changes: &[],
                left: &[("BR-15", "messages[0].content[1]")],
            },
        );
        for model in [None, Some("us.amazon.nova-2-lite-v1:0")] {
            check(
                &body,
                model,
                Expect {
                    found: &[],
                    repaired: None,
                    changes: &[],
                    left: &[],
                },
            );
        }
        let nova = format!(
            r#"{{"messages":[{{"role":"user","content":[{{"text":"go"}}]}},{{"role":"assistant","content":[{{"toolUse":{{"toolUseId":"a","name":"f","input":{{}}}}}}]}},{{"role":"user","content":[{{"toolResult":{{"toolUseId":"a","content":[{DOC}],"status":"success"}}}}]}}],"toolConfig":{{"tools":[]}}}}"#
        );
        check(
            &nova,
            Some("us.amazon.nova-2-lite-v1:0"),
            Expect {
                found: &[("BR-15", "messages[2].content[0]")],
                repaired: None,
                changes: &[],
                left: &[("BR-15", "messages[2].content[0]")],
            },
        );
    }
}
