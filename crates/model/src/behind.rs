//! Telling a caller which part of the input a sweep over it has finished with.
//!
//! A repair reads its input twice after the first reading: once to write the new body (the
//! unchanged ranges copied in order) and once to compare the messages the new body kept with
//! the input's (the second reading, [`read_reusing_copies`](crate::read_reusing_copies)). A
//! caller that holds the input in pages it can let go of and get back (a memory map of a file:
//! a page let go is read again from the file when it is touched) can keep only the part still
//! ahead of each sweep resident, instead of the whole input beside the whole new body.
//!
//! The calls are advice about memory, never about meaning: the input is still there, and a sweep
//! that reads behind where it said it had gone (a message moved earlier) reads the same bytes.

use std::fmt::Debug;

/// Receives the progress of each sweep over an input: [`ReadBehind::start`] when one begins at
/// the input's start, then [`ReadBehind::past`] with offsets that never decrease within it.
pub trait ReadBehind: Debug + Sync {
    /// A sweep over the input begins at its first byte.
    fn start(&self);
    /// The sweep has finished with every byte before `offset` (it may still read some, a
    /// message moved earlier than its place, at the cost of that page coming back).
    fn past(&self, offset: usize);
}

/// A sweep's progress, kept monotone: [`Sweep::past`] forwards an offset only when it is beyond
/// the last one forwarded.
pub(crate) struct Sweep<'r> {
    to: Option<&'r dyn ReadBehind>,
    at: std::cell::Cell<usize>,
}

impl<'r> Sweep<'r> {
    /// A sweep reported to `to` (none: nothing is reported), begun now.
    pub(crate) fn begin(to: Option<&'r dyn ReadBehind>) -> Self {
        if let Some(r) = to {
            r.start();
        }
        Sweep {
            to,
            at: std::cell::Cell::new(0),
        }
    }

    /// The sweep has finished with every byte before `offset`.
    pub(crate) fn past(&self, offset: usize) {
        if let Some(r) = self.to
            && offset > self.at.get()
        {
            self.at.set(offset);
            r.past(offset);
        }
    }
}
