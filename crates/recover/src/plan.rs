//! The planner: a [`Diagnosis`] and the [`Attempts`] so far in, the next [`Action`] out.
//!
//! # Ladders
//! Each kind has an escalation ladder. The rung is the number of earlier attempts at the *same
//! error* (same kind, same message index), so a repair that did not help is never repeated: the
//! same error twice on the same message moves one rung up. Every ladder ends in
//! [`Action::GiveUp`], and no conversation gets more than [`MAX_ATTEMPTS`] sent attempts in total
//! (rungs `recover` skipped because they could not apply are not counted).
//!
//! | kind | ladder |
//! |---|---|
//! | `thinking_block_order` | repair AN-16/AN-18 → restore → disable thinking → give up (DeepSeek DS-03/DS-04, Kimi KM-01/KM-06: restore `reasoning_content` → its empty value → disable thinking → give up; DS-06 in Anthropic format: restore → disable thinking → give up) |
//! | `thinking_disabled_violation` | repair AN-20 → strip thinking from the message → give up (DS-01, BR-05: drop the unsigned reasoning → give up) |
//! | `thinking_block_modified` | restore → (prefix-bound: drop-block beta) → strip thinking from the message → disable thinking → give up |
//! | `thinking_signature_invalid` | prefix-bound (AN-25): drop-block beta → strip → disable → give up; Gemini: repair GM-01 → restore → give up (GM-08, a corrupted signature: restore → give up); else repair AN-23 (AN-06) → restore → strip → disable → give up |
//! | `thinking_block_trailing` | repair AN-19 → restore → disable thinking → give up |
//! | `tool_result_missing` | repair AN-08/AN-09/AN-11 (Gemini GM-10/GM-03) → restore → give up |
//! | `tool_use_id_mismatch` | repair AN-10 (+AN-15; Gemini GM-09) → restore → give up (OR-14 duplicates: drop the items → give up) |
//! | `tool_use_id_format` | repair AN-12 with the id form the error names (Anthropic pattern, Mistral's 9 alphanumerics, a length cap) → give up; Responses item prefixes (RS-08): strip the item ids → give up |
//! | `empty_content` | repair AN-04/AN-05 (Gemini parts: GM-13) → give up; OR-11: the empty `summary` → give up; BR-04: restore the reasoning text → give up |
//! | `role_order` | repair AN-01/AN-02/AN-03 (Gemini GM-09/GM-12) → give up |
//! | `context_length_exceeded` | compact → give up |
//! | `request_config_invalid` | fix the config, naming the field or the parameter the error names (model without thinking: disable; manual unsupported: adaptive; reasoning items to a model without reasoning: drop them) → give up |
//! | `retryable_*` | retry (provider's delay, else exponential backoff) × [`MAX_RETRIES`] → give up |
//! | `reasoning_item_orphan` | OR-01 orphan, OR-03 unknown id: drop the items → give up; OR-03 under `store: false`: strip every item id → drop the items → give up; OR-02: strip the id of the item that lost its reasoning → give up; OR-04 (encrypted content not verified): drop the items and send **once** → give up |
//! | OpenAI-format tool errors, `unknown` | give up (not repaired yet; a zero quota and a lost `previous_response_id` say so) |
//!
//! Every kind but `retryable_*` is deterministic (`retryable: false`): none is sent again unchanged; OR-04's
//! single resend comes after the drop. The actions on OpenAI Chat/Responses and Bedrock Converse
//! bodies are applied by [`crate::recover`] to a body of that family (`restore_reasoning` and
//! `empty_reasoning` through prevent's wire repair; `drop_items`, `strip_item_ids` and
//! `drop_unsigned_reasoning` by the edits its module docs list) and handed back to the caller for
//! a body of another format.
//!
//! `thinking_block_modified` never leads to a repair that edits thinking: only restoring the
//! original bytes, or removing whole thinking blocks (reported), or turning thinking off.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use turnkeeper_prevent::RuleId;

use crate::diagnosis::{ConfigField, Diagnosis, ErrorKind, Location, Provider};
use crate::normalize::Normalized;

/// At most this many attempts per conversation, whatever the errors.
pub const MAX_ATTEMPTS: usize = 8;
/// At most this many retries of the same retryable error.
pub const MAX_RETRIES: usize = 4;
/// The beta header that enables `prefix_mismatch_behavior: "drop_block"` (api-rules.md AN-25).
pub const DROP_BLOCK_BETA: &str = turnkeeper_prevent::BINDING_BETA;

/// What to do next about a failed request.
///
/// Serialised with a `type` tag: `{"type":"retry","after_ms":644}`,
/// `{"type":"repair","rules":["AN-08"],"location":{"message":33,"block":null}}`, …
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// Send the same request again after waiting.
    Retry {
        /// How long to wait.
        #[serde(rename = "after_ms", with = "crate::duration_ms")]
        after: Duration,
    },
    /// Run these prevent rules (ids from `api-rules.md`) on the transcript.
    Repair {
        /// Rule ids (serialised as `"AN-08"`, ...).
        rules: Vec<RuleId>,
        /// Where the error points.
        location: Location,
    },
    /// Replace assistant content with the provider's original bytes from the turn store.
    RestoreFromStore,
    /// Send this request with thinking disabled (AN-16's documented escape, AN-20 permitting).
    DisableThinking,
    /// Switch manual thinking to `{"type":"adaptive"}` (AN-17).
    UseAdaptive,
    /// Remove every thinking and redacted-thinking block from message `from` on (all when
    /// `None`), whole blocks only, each removal reported.
    StripThinking {
        /// First message index to strip from.
        from: Option<u32>,
    },
    /// Send `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` with the beta header
    /// [`DROP_BLOCK_BETA`] (AN-25).
    RequestDropBlock,
    /// Change a request parameter; no transcript change helps.
    FixConfig {
        /// Which parameter, as a [`ConfigField`] name, or a short description.
        what: String,
    },
    /// Shrink the transcript (compaction) to fit the context window.
    Compact,
    /// Put back the `reasoning_content` (DeepSeek, Kimi; Bedrock `reasoningText.text`) that
    /// assistant messages from message `from` on lost, from where the caller stored the
    /// provider's response (DS-03, KM-01, KM-06, BR-04). Never written anew.
    RestoreReasoning {
        /// First message index the error names (all messages when `None`).
        from: Option<u32>,
    },
    /// Give the reasoning units that lack it the provider's own empty value: `reasoning_content:
    /// ""` on DeepSeek and Kimi assistant messages (DS-04, KM-07), `summary: []` on an OpenAI
    /// Responses reasoning item (OR-11). No reasoning text is written; the turn is marked lossy
    /// (api-rules-reasoning-2026-11 §0.3, item 4).
    EmptyReasoning {
        /// First message (or input item) index the error names (all when `None`).
        from: Option<u32>,
    },
    /// Remove reasoning the provider refuses to read back, whole: `reasoning_content` for the
    /// legacy `deepseek-reasoner` (DS-01), unsigned Bedrock `reasoningContent` blocks (BR-05).
    DropUnsignedReasoning,
    /// Remove these OpenAI Responses input items, whole (every reasoning and compaction item when
    /// `ids` is empty), and strip the `id` of the items that followed a removed reasoning item,
    /// keeping their `call_id` (OR-02): orphans (OR-01), items the server cannot resolve (OR-03),
    /// items whose encrypted content failed to verify (OR-04, sent once), items the
    /// `previous_response_id` chain already holds (OR-14), reasoning sent to a model without
    /// reasoning (OR-13).
    DropItems {
        /// The item ids the error names.
        ids: Vec<String>,
    },
    /// Remove the `id` of these OpenAI Responses input items, keeping the items and their
    /// `call_id`s (every server item id when `ids` is empty): an item whose reasoning is gone
    /// (OR-02), ids under `store: false` (OR-03; reasoning keeps its `encrypted_content`), an id
    /// from another API (OR-08).
    StripItemIds {
        /// The item ids the error names.
        ids: Vec<String>,
    },
    /// Stop: nothing safe is left to try.
    GiveUp {
        /// Why.
        reason: String,
    },
}

impl Action {
    /// The serde tag of this action (`"retry"`, `"repair"`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Action::Retry { .. } => "retry",
            Action::Repair { .. } => "repair",
            Action::RestoreFromStore => "restore_from_store",
            Action::DisableThinking => "disable_thinking",
            Action::UseAdaptive => "use_adaptive",
            Action::StripThinking { .. } => "strip_thinking",
            Action::RequestDropBlock => "request_drop_block",
            Action::FixConfig { .. } => "fix_config",
            Action::Compact => "compact",
            Action::RestoreReasoning { .. } => "restore_reasoning",
            Action::EmptyReasoning { .. } => "empty_reasoning",
            Action::DropUnsignedReasoning => "drop_unsigned_reasoning",
            Action::DropItems { .. } => "drop_items",
            Action::StripItemIds { .. } => "strip_item_ids",
            Action::GiveUp { .. } => "give_up",
        }
    }
}

/// One earlier attempt: the error it answered and the action taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The error's kind.
    pub kind: ErrorKind,
    /// The error's location.
    #[serde(default)]
    pub location: Location,
    /// What was done.
    pub action: Action,
    /// Set when the action could not apply to the request (no turn store, nothing to strip, …)
    /// and `recover` moved on to the next rung without sending anything: why. Such attempts move
    /// the ladder on but do not count against [`MAX_ATTEMPTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The attempts made so far for one conversation. The CLI keeps them in a JSON file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempts {
    /// Oldest first.
    #[serde(default)]
    pub entries: Vec<Attempt>,
}

/// Errors reading or writing an attempts file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttemptsError {
    /// The text is not an attempts JSON document.
    #[error("attempts file is not valid: {0}")]
    Json(#[from] serde_json::Error),
}

impl Attempts {
    /// No attempts yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse an attempts file. An empty (or whitespace-only) text is no attempts.
    pub fn from_json(text: &str) -> Result<Self, AttemptsError> {
        if text.trim().is_empty() {
            return Ok(Self::new());
        }
        Ok(serde_json::from_str(text)?)
    }

    /// The attempts as pretty JSON.
    pub fn to_json(&self) -> Result<String, AttemptsError> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    /// Append an attempt.
    pub fn record(&mut self, diagnosis: &Diagnosis, action: Action) {
        self.entries.push(Attempt {
            kind: diagnosis.kind,
            location: diagnosis.location,
            action,
            skipped: None,
        });
    }

    /// Append an attempt that could not apply to the request (nothing was sent), with why.
    pub fn record_skipped(
        &mut self,
        diagnosis: &Diagnosis,
        action: Action,
        why: impl Into<String>,
    ) {
        self.entries.push(Attempt {
            kind: diagnosis.kind,
            location: diagnosis.location,
            action,
            skipped: Some(why.into()),
        });
    }

    /// How many attempts were actually sent (not skipped).
    pub fn sent(&self) -> usize {
        self.entries.iter().filter(|a| a.skipped.is_none()).count()
    }

    /// How many attempts there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Earlier attempts at the same error: same kind, and for repairable kinds the same message.
    fn same_error(&self, d: &Diagnosis) -> usize {
        self.entries
            .iter()
            .filter(|a| {
                a.kind == d.kind
                    && (d.kind.is_retryable() || a.location.message == d.location.message)
            })
            .count()
    }
}

/// The next action for `diagnosis`, given the `attempts` made so far.
///
/// ```
/// use turnkeeper_recover::{classify, plan, Action, Attempts};
/// let d = classify(Some(400), "messages.3.content.4: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified.");
/// let mut attempts = Attempts::new();
/// let first = plan(&d, &attempts);
/// assert_eq!(first, Action::RestoreFromStore);
/// attempts.record(&d, first);
/// assert_eq!(plan(&d, &attempts), Action::StripThinking { from: Some(3) });
/// ```
pub fn plan(diagnosis: &Diagnosis, attempts: &Attempts) -> Action {
    if attempts.sent() >= MAX_ATTEMPTS {
        return Action::GiveUp {
            reason: format!("{MAX_ATTEMPTS} recovery attempts made; stopping"),
        };
    }
    let rung = attempts.same_error(diagnosis);
    if diagnosis.kind.is_retryable() {
        return if rung < MAX_RETRIES {
            Action::Retry {
                after: retry_delay(diagnosis, rung),
            }
        } else {
            Action::GiveUp {
                reason: format!("{} persisted after {MAX_RETRIES} retries", diagnosis.kind),
            }
        };
    }
    ladder(diagnosis)
        .into_iter()
        .nth(rung)
        .unwrap_or_else(|| Action::GiveUp {
            reason: format!(
                "{} at {} persisted after {rung} recovery attempt(s)",
                diagnosis.kind, diagnosis.location
            ),
        })
}

fn retry_delay(d: &Diagnosis, rung: usize) -> Duration {
    if let Some(after) = d.retry_after {
        return after;
    }
    let base_ms: u64 = match d.kind {
        ErrorKind::RetryableRateLimit => 5_000,
        ErrorKind::RetryableOverloaded => 2_000,
        _ => 1_000,
    };
    let factor = 1u64 << rung.min(6);
    Duration::from_millis((base_ms * factor).min(60_000))
}

fn repair(rules: &[RuleId], d: &Diagnosis) -> Action {
    Action::Repair {
        rules: rules.to_vec(),
        location: d.location,
    }
}

fn give_up(reason: &str) -> Action {
    Action::GiveUp {
        reason: reason.to_owned(),
    }
}

/// The ladder for one diagnosis; the planner takes rung `n` for the `n`-th attempt.
fn ladder(d: &Diagnosis) -> Vec<Action> {
    let msg = Normalized::new(&d.message).lower;
    let says = |s: &str| msg.contains(s);
    let strip = Action::StripThinking {
        from: d.location.message,
    };
    let openai_format = matches!(d.provider, Provider::OpenAi);
    match d.kind {
        ErrorKind::ThinkingBlockOrder => {
            if says("content[].thinking") {
                // DS-06: DeepSeek's Anthropic format; the stored turn holds the thinking.
                vec![Action::RestoreFromStore, Action::DisableThinking]
            } else if d.provider == Provider::DeepSeek
                || says("reasoning_content")
                || says("passedback")
            {
                // DeepSeek's and Kimi's `reasoning_content` (DS-03, DS-04, KM-01, KM-06): put the
                // stored value back, else the provider's empty value, else thinking goes off.
                vec![
                    Action::RestoreReasoning {
                        from: d.location.message,
                    },
                    Action::EmptyReasoning {
                        from: d.location.message,
                    },
                    Action::DisableThinking,
                ]
            } else {
                vec![
                    repair(&[RuleId::An16, RuleId::An18], d),
                    Action::RestoreFromStore,
                    Action::DisableThinking,
                ]
            }
        }
        ErrorKind::ThinkingDisabledViolation
            if says("reasoning_contentisanintermediateresult")
                || says("usermessagescannotcontainreasoningcontent") =>
        {
            vec![Action::DropUnsignedReasoning]
        }
        ErrorKind::ThinkingDisabledViolation => vec![repair(&[RuleId::An20], d), strip],
        ErrorKind::ThinkingBlockModified => {
            let mut l = vec![Action::RestoreFromStore];
            if d.prefix_binding {
                l.push(Action::RequestDropBlock);
            }
            l.extend([strip, Action::DisableThinking]);
            l
        }
        ErrorKind::ThinkingSignatureInvalid => {
            if d.prefix_binding {
                vec![Action::RequestDropBlock, strip, Action::DisableThinking]
            } else if says("openrouterreasoningdetails")
                || (d.provider == Provider::OpenRouter && says("thought_signature"))
            {
                // ORT-05: OpenRouter has no dummy-signature path; only the stored details help.
                vec![Action::RestoreFromStore]
            } else if says("notissuedtothiscaller") || says("forging") {
                // A well-formed signature minted for another key or model: AN-23 cannot see it
                // offline, so the ladder starts at the stored turn.
                vec![Action::RestoreFromStore, strip, Action::DisableThinking]
            } else if says("thought_signature") || says("thoughtsignature") {
                if says("corrupted") || says("notvalid") || says("invalidthoughtsignature") {
                    // A corrupted or invalid signature (api-rules.md GM-08, GM-16, GM-19) has no
                    // prevent rule: only the stored original can help.
                    vec![Action::RestoreFromStore]
                } else {
                    vec![repair(&[RuleId::Gm01], d), Action::RestoreFromStore]
                }
            } else {
                let rules: &[RuleId] = if says("fieldrequired") {
                    &[RuleId::An06, RuleId::An23]
                } else {
                    &[RuleId::An23]
                };
                vec![
                    repair(rules, d),
                    Action::RestoreFromStore,
                    strip,
                    Action::DisableThinking,
                ]
            }
        }
        ErrorKind::ThinkingBlockTrailing => vec![
            repair(&[RuleId::An19], d),
            Action::RestoreFromStore,
            Action::DisableThinking,
        ],
        ErrorKind::ToolResultMissing if openai_format => {
            vec![give_up(
                "repairs of OpenAI-format tool messages (OC-01) are not implemented yet",
            )]
        }
        ErrorKind::ToolResultMissing => {
            let rules: &[RuleId] =
                if d.provider == Provider::Gemini || says("functionresponseparts") {
                    &[RuleId::Gm10, RuleId::Gm03]
                } else {
                    &[RuleId::An08, RuleId::An09, RuleId::An11]
                };
            vec![repair(rules, d), Action::RestoreFromStore]
        }
        ErrorKind::ToolUseIdMismatch if says("duplicateitemfoundwithid") => {
            vec![Action::DropItems {
                ids: d.item_ids.clone(),
            }]
        }
        ErrorKind::ToolUseIdMismatch if openai_format => {
            vec![give_up(
                "repairs of OpenAI-format tool messages (OC-02) are not implemented yet",
            )]
        }
        ErrorKind::ToolUseIdMismatch => {
            let rules: &[RuleId] = if says("functionresponseturn") {
                &[RuleId::Gm09]
            } else if says("server_tool_use") {
                &[RuleId::An10, RuleId::An15]
            } else {
                &[RuleId::An10]
            };
            vec![repair(rules, d), Action::RestoreFromStore]
        }
        ErrorKind::ToolUseIdFormat if says("expectedanidthat") => vec![Action::StripItemIds {
            ids: d.tool_use_ids.clone(),
        }],
        ErrorKind::ToolUseIdFormat => vec![repair(&[RuleId::An12], d)],
        ErrorKind::EmptyContent if says("summary") => vec![Action::EmptyReasoning {
            from: d.location.message,
        }],
        ErrorKind::EmptyContent if says("reasoningtext") => vec![Action::RestoreReasoning {
            from: d.location.message,
        }],
        ErrorKind::EmptyContent if says("parts") => vec![repair(&[RuleId::Gm13], d)],
        ErrorKind::EmptyContent => vec![repair(&[RuleId::An04, RuleId::An05], d)],
        ErrorKind::RoleOrder => {
            let rules: &[RuleId] = if says("functionresponse") && says("mix") {
                &[RuleId::Gm09, RuleId::Gm03]
            } else if says("functioncallturn") || says("multiturnrequests") {
                &[RuleId::Gm09, RuleId::Gm12]
            } else if says("firstmessage") || says("startwithausermessage") {
                &[RuleId::An01]
            } else if says("prefill") || says("endwithausermessage") {
                &[RuleId::An03]
            } else if says("unknownvariantsystem") {
                &[RuleId::Cx02]
            } else {
                &[RuleId::An02]
            };
            vec![repair(rules, d)]
        }
        ErrorKind::ReasoningItemOrphan => {
            let ids = d.reasoning_ids.clone();
            if says("encrypted") || says("organization_id") {
                // OR-04: drop what failed to verify and send once; the same again is final.
                vec![Action::DropItems { ids }]
            } else if says("withoutitsrequiredreasoningitem") {
                // OR-02: the item stays, without the id that ties it to the lost reasoning.
                vec![Action::StripItemIds {
                    ids: d.item_ids.clone(),
                }]
            } else if says("notpersisted") {
                // OR-03 under `store: false`: no server id resolves; send the items inline.
                vec![
                    Action::StripItemIds { ids: Vec::new() },
                    Action::DropItems { ids },
                ]
            } else {
                // OR-01 (an orphan), OR-03 with `store: true` (an id the server never had).
                vec![Action::DropItems { ids }]
            }
        }
        ErrorKind::ContextLengthExceeded => vec![Action::Compact],
        ErrorKind::RequestConfigInvalid => match d.config {
            Some(ConfigField::ModelWithoutThinking) => vec![Action::DisableThinking],
            Some(ConfigField::ReasoningItems) => vec![Action::DropItems { ids: Vec::new() }],
            Some(ConfigField::ManualThinkingUnsupported) => vec![Action::UseAdaptive],
            Some(field) => vec![Action::FixConfig {
                what: field.as_str().to_owned(),
            }],
            None => vec![Action::FixConfig {
                what: d
                    .param
                    .clone()
                    .unwrap_or_else(|| "request parameters".to_owned()),
            }],
        },
        ErrorKind::RetryableOverloaded
        | ErrorKind::RetryableRateLimit
        | ErrorKind::RetryableServer => Vec::new(),
        ErrorKind::Unknown if d.quota_exhausted => vec![give_up(
            "the quota cannot be waited out (billing, or a limit of zero for this model or tier): change the model, the key or the plan",
        )],
        ErrorKind::Unknown if says("previousresponse") => vec![give_up(
            "the previous response is gone (OR-15): send the whole history inline, without previous_response_id",
        )],
        ErrorKind::Unknown => vec![give_up("the error was not recognised")],
    }
}
