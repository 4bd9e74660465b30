//! What every rule sees besides its [`Fixer`](crate::fix::Fixer): the target (profile, mode,
//! betas), the policy and the store.

use turnkeeper_guard::TurnStore;

use crate::policy::Policy;
use crate::profile::{Mode, Profile};

/// The target of a check: the model's profile and the request's own settings.
#[derive(Clone, Debug)]
pub struct Ctx<'s> {
    /// The model profile.
    pub profile: Profile,
    /// Where the request goes, as its model id tells: the provider, and the router in front
    /// when the id names one (`deepseek/deepseek-v4` on a gateway).
    pub target: crate::wire::Target,
    /// The thinking mode in force (updated when a rule changes it, e.g. AN-16 disabling thinking).
    pub mode: Mode,
    /// The mode as the request gave it, before any rule changed it.
    pub requested_mode: Option<Mode>,
    /// The policy.
    pub policy: &'s Policy,
    /// The turn store, if one was given.
    pub store: Option<&'s TurnStore>,
    /// `anthropic-beta` values the request is sent with.
    pub betas: Vec<String>,
    /// True when `thinking.block_binding.prefix_mismatch_behavior` is `drop_block` and the beta
    /// is sent: the API drops blocks whose prefix changed instead of failing.
    pub drop_block: bool,
    /// The first message the API reads: the one holding the latest `compaction` block, since the
    /// API ignores everything before it (threshold compaction, api-rules-2026-11.md AN-34); 0
    /// without one. Rules look at messages from here on, so what the API ignores is never
    /// reported or edited.
    pub horizon: usize,
}

/// The beta header that enables `block_binding` (api-rules.md §1.2, AN-25).
pub const BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";

impl Ctx<'_> {
    /// True when thinking is on (manual or adaptive).
    pub fn thinking_on(&self) -> bool {
        self.mode != Mode::Off
    }
}
