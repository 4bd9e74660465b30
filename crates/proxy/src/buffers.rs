//! Request-body buffers kept for the next request.
//!
//! A request body is read into one contiguous buffer (the reader needs one `&str`). Allocating
//! it fresh for every request costs more than the copy itself at a megabyte: the allocator
//! hands large blocks back to the kernel when they are freed, and every page of the next block
//! faults in again (5 % of the proxy's time on 1 MB requests in a `perf` profile, BENCHMARKS.md).
//! A body whose last reference the handler holds when the request is done comes back here, and
//! the next request of a similar size reads into it.
//!
//! Bounded: at most [`KEEP`] buffers, each of at most [`MAX_KEPT`] bytes of capacity, so an
//! idle proxy holds at most `KEEP * MAX_KEPT` bytes of them; a larger body is freed as before.

use std::sync::Mutex;

use bytes::{Bytes, BytesMut};

/// How many buffers are kept.
pub(crate) const KEEP: usize = 4;

/// The largest buffer kept, in bytes of capacity.
pub(crate) const MAX_KEPT: usize = 4 * 1024 * 1024;

/// The capacity of a fresh buffer for a body of `hint` bytes that may be kept: an eighth more,
/// within [`MAX_KEPT`]. An agent's next request is its conversation a turn longer; a buffer of
/// exactly this body's size would fit no later body of the conversation, and every request would
/// fault in a fresh one.
fn with_room(hint: usize) -> usize {
    (hint + hint / 8).min(MAX_KEPT).max(hint)
}

/// The kept buffers.
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    kept: Mutex<Vec<BytesMut>>,
}

impl Buffers {
    /// An empty buffer with room for `hint` bytes: a kept one when one is large enough (the
    /// smallest such), else a fresh one.
    pub(crate) fn take(&self, hint: usize) -> BytesMut {
        if hint > 0 && hint <= MAX_KEPT {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            let best = kept
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= hint)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i);
            if let Some(i) = best {
                return kept.swap_remove(i);
            }
            return BytesMut::with_capacity(with_room(hint));
        }
        BytesMut::with_capacity(hint)
    }

    /// Takes `body` back when no one else holds it and it is worth keeping; otherwise it is
    /// simply dropped (another holder frees it later).
    pub(crate) fn give(&self, body: Bytes) {
        let Ok(mut buf) = body.try_into_mut() else {
            return;
        };
        if buf.capacity() == 0 || buf.capacity() > MAX_KEPT {
            return;
        }
        buf.clear();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() < KEEP {
            kept.push(buf);
        } else if let Some((i, _)) = kept
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() < buf.capacity())
            .min_by_key(|(_, b)| b.capacity())
        {
            // Full: the larger buffer replaces the smallest, which serves fewer requests.
            kept[i] = buf;
        }
    }

    /// The number of buffers kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_no_one_else_holds_comes_back_and_is_reused() {
        let pool = Buffers::default();
        let mut b = pool.take(1000);
        b.extend_from_slice(&[b'x'; 1000]);
        let body = b.freeze();
        let ptr = body.as_ptr();
        let other = body.clone();
        pool.give(body);
        assert_eq!(pool.len(), 0, "a shared body is not taken back");
        pool.give(other);
        assert_eq!(pool.len(), 1);
        let again = pool.take(900);
        assert_eq!(again.len(), 0, "a kept buffer comes back empty");
        assert_eq!(again.as_ptr(), ptr, "the same memory is reused");
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn the_pool_is_bounded_in_count_and_size() {
        let pool = Buffers::default();
        pool.give(BytesMut::zeroed(MAX_KEPT + 1).freeze());
        assert_eq!(pool.len(), 0, "a buffer over the size bound is freed");
        for n in 1..=KEEP + 2 {
            pool.give(BytesMut::zeroed(n * 100).freeze());
        }
        assert_eq!(pool.len(), KEEP);
        // Full, the larger buffers were kept: the smallest two went.
        let mut caps: Vec<usize> = (0..KEEP).map(|_| pool.take(1).capacity()).collect();
        caps.sort_unstable();
        assert_eq!(caps, (3..=KEEP + 2).map(|n| n * 100).collect::<Vec<_>>());
        assert_eq!(pool.take(50).capacity(), 56, "empty again: a fresh buffer");
    }

    #[test]
    fn a_body_of_a_few_megabytes_is_kept_up_to_the_bound() {
        let pool = Buffers::default();
        // What an agent sends late in a long session.
        pool.give(BytesMut::zeroed(3_000_000).freeze());
        pool.give(BytesMut::zeroed(MAX_KEPT).freeze());
        assert_eq!(pool.len(), 2, "both kept, the second at the bound exactly");
        assert_eq!(pool.take(MAX_KEPT).capacity(), MAX_KEPT);
        assert_eq!(pool.take(3_000_000).capacity(), 3_000_000);
    }

    #[test]
    fn a_request_of_unknown_size_gets_a_fresh_buffer() {
        let pool = Buffers::default();
        pool.give(BytesMut::zeroed(100).freeze());
        // A chunked body says nothing of its size: no kept buffer is chosen for it.
        assert_eq!(pool.take(0).capacity(), 0);
        assert_eq!(pool.len(), 1);
        // Nor for a body over the bound.
        assert_eq!(pool.take(MAX_KEPT + 1).capacity(), MAX_KEPT + 1);
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn a_full_pool_keeps_its_buffers_against_one_no_larger() {
        let pool = Buffers::default();
        let mut kept = Vec::new();
        for _ in 0..KEEP {
            let b = BytesMut::zeroed(100).freeze();
            kept.push(b.as_ptr());
            pool.give(b);
        }
        pool.give(BytesMut::zeroed(100).freeze());
        let mut now: Vec<_> = (0..KEEP).map(|_| pool.take(100).as_ptr()).collect();
        kept.sort_unstable();
        now.sort_unstable();
        assert_eq!(now, kept, "the same buffers, none swapped for an equal one");
    }

    #[test]
    fn the_smallest_buffer_that_fits_is_taken() {
        let pool = Buffers::default();
        for n in [300, 100, 200] {
            pool.give(BytesMut::zeroed(n).freeze());
        }
        assert_eq!(pool.take(150).capacity(), 200);
        assert_eq!(pool.take(150).capacity(), 300);
        assert_eq!(pool.take(150).capacity(), 168, "none left that fits");
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn a_conversation_a_turn_longer_each_time_reuses_its_buffer() {
        let pool = Buffers::default();
        let mut size = 1_000_000;
        let mut b = pool.take(size);
        let first = b.as_ptr();
        assert_eq!(b.capacity(), 1_125_000, "an eighth more than the body");
        b.resize(size, b'x');
        pool.give(b.freeze());
        // Each later request is a turn (2 KB) longer: the same memory serves it.
        for _ in 0..50 {
            size += 2_000;
            let mut b = pool.take(size);
            assert_eq!(b.as_ptr(), first, "{size} bytes");
            b.resize(size, b'x');
            pool.give(b.freeze());
        }
        // Near the bound, the room stops at it; over it, a fresh buffer is exact.
        assert_eq!(with_room(MAX_KEPT - 10), MAX_KEPT);
        assert_eq!(with_room(MAX_KEPT), MAX_KEPT);
    }
}
