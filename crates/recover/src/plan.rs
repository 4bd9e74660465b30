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
//! | `thinking_block_order` | repair AN-16/AN-18 → restore → disable thinking → give up (DeepSeek DS-03/DS-04, Kimi KM-01, not repaired yet: disable thinking → give up) |
//! | `thinking_disabled_violation` | repair AN-20 → strip thinking from the message → give up |
//! | `thinking_block_modified` | restore → (prefix-bound: drop-block beta) → strip thinking from the message → disable thinking → give up |
//! | `thinking_signature_invalid` | prefix-bound (AN-25): drop-block beta → strip → disable → give up; Gemini: repair GM-01 → restore → give up (GM-08, a corrupted signature: restore → give up); else repair AN-23 (AN-06) → restore → strip → disable → give up |
//! | `thinking_block_trailing` | repair AN-19 → restore → disable thinking → give up |
//! | `tool_result_missing` | repair AN-08/AN-09/AN-11 (Gemini GM-10/GM-03) → restore → give up |
//! | `tool_use_id_mismatch` | repair AN-10 (+AN-15; Gemini GM-09) → restore → give up |
//! | `tool_use_id_format` | repair AN-12 with the id form the error names (Anthropic pattern, Mistral's 9 alphanumerics, a length cap) → give up; Responses item prefixes (RS-08): give up |
//! | `empty_content` | repair AN-04/AN-05 → give up |
//! | `role_order` | repair AN-01/AN-02/AN-03 (Gemini GM-09/GM-12) → give up |
//! | `context_length_exceeded` | compact → give up |
//! | `request_config_invalid` | fix the config, naming the field or the parameter the error names (model without thinking: disable; manual unsupported: adaptive) → give up |
//! | `retryable_*` | retry (provider's delay, else exponential backoff) × [`MAX_RETRIES`] → give up |
//! | `reasoning_item_orphan`, OpenAI-format tool errors, `unknown` | give up (not repaired yet) |
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
            if d.provider == Provider::DeepSeek || says("reasoning_content") || says("passedback") {
                // DeepSeek's and Kimi's `reasoning_content` rules (api-rules.md DS-03, DS-04,
                // KM-01) have no prevent rule yet: nothing to repair, so thinking goes off.
                vec![Action::DisableThinking]
            } else {
                vec![
                    repair(&[RuleId::An16, RuleId::An18], d),
                    Action::RestoreFromStore,
                    Action::DisableThinking,
                ]
            }
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
            } else if says("thought_signature") || says("thoughtsignature") {
                if says("corrupted") {
                    // A corrupted signature (api-rules.md GM-08) has no prevent rule: only the
                    // stored original can help.
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
        ErrorKind::ToolUseIdFormat if says("expectedanidthat") => vec![give_up(
            "OpenAI Responses item ids from another API (RS-08: drop the item `id`) are not repaired yet",
        )],
        ErrorKind::ToolUseIdFormat => vec![repair(&[RuleId::An12], d)],
        ErrorKind::EmptyContent => vec![repair(&[RuleId::An04, RuleId::An05], d)],
        ErrorKind::RoleOrder => {
            let rules: &[RuleId] = if says("functioncallturn") || says("multiturnrequests") {
                &[RuleId::Gm09, RuleId::Gm12]
            } else if says("firstmessage") || says("startwithausermessage") {
                &[RuleId::An01]
            } else if says("prefill") || says("endwithausermessage") {
                &[RuleId::An03]
            } else {
                &[RuleId::An02]
            };
            vec![repair(rules, d)]
        }
        ErrorKind::ReasoningItemOrphan => vec![give_up(
            "OpenAI Responses reasoning items (RS-01..RS-04) are not repaired yet",
        )],
        ErrorKind::ContextLengthExceeded => vec![Action::Compact],
        ErrorKind::RequestConfigInvalid => match d.config {
            Some(ConfigField::ModelWithoutThinking) => vec![Action::DisableThinking],
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
        ErrorKind::Unknown => vec![give_up("the error was not recognised")],
    }
}
