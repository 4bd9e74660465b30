//! proptest strategies built on the one generator: random bytes mapped through
//! [`arbitrary::Unstructured`]. Shrinking is by shrinking the byte vector (crude, but the
//! generator maps shorter inputs to smaller conversations), and `Debug` prints the JSON.

use arbitrary::Unstructured;
use proptest::prelude::*;

use crate::damage::damage_n;
use crate::generate::{Conversation, Knobs, conversation_with};

fn build(bytes: &[u8], knobs: &Knobs, damaged: bool) -> Conversation {
    let mut u = Unstructured::new(bytes);
    let mut c = match conversation_with(&mut u, knobs) {
        Ok(c) => c,
        // The generator only fails on malformed Unstructured use; fall back to the empty input,
        // which always yields a (small) conversation.
        Err(_) => {
            let mut empty = Unstructured::new(&[]);
            match conversation_with(&mut empty, knobs) {
                Ok(c) => c,
                Err(e) => panic!("the generator failed on empty input: {e}"),
            }
        }
    };
    if damaged {
        // Damage draws from the bytes left after generation; when none are left it still applies
        // one operation.
        let _ = damage_n(&mut u, &mut c, knobs.max_damage);
    }
    c
}

/// Valid-shaped conversations (no damage).
pub fn conversations(knobs: Knobs) -> impl Strategy<Value = Conversation> {
    proptest::collection::vec(any::<u8>(), 64..4096).prop_map(move |b| build(&b, &knobs, false))
}

/// Damaged conversations: [`crate::generate::conversation_with`] then [`crate::damage()`].
pub fn damaged(knobs: Knobs) -> impl Strategy<Value = Conversation> {
    proptest::collection::vec(any::<u8>(), 64..4096).prop_map(move |b| build(&b, &knobs, true))
}

/// Both: about a third untouched, the rest damaged.
pub fn any_conversation(knobs: Knobs) -> impl Strategy<Value = Conversation> {
    prop_oneof![1 => conversations(knobs.clone()), 2 => damaged(knobs)]
}
