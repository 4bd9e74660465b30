//! The command's allocator on Linux: the system's, with its large allocations backed by
//! transparent huge pages.
//!
//! A whole-body command holds one or two buffers the size of its input: the bytes read and, for
//! `repair`, the body it writes. Each is fresh memory, and the kernel faults it in 4 KiB at a time:
//! `repair` of a damaged 100 MB body took 54,860 page faults, and the faults, the clearing and
//! the accounting behind them were about a quarter of its time (BENCHMARKS.md, "The command as
//! a process"); with huge pages, 4,270 faults. Most distributions set
//! transparent huge pages to `madvise`: the kernel backs a range with 2 MiB pages only when the
//! process asks. This allocator asks, with `madvise(MADV_HUGEPAGE)`, for every allocation of
//! [`FROM`] bytes or more, and leaves everything else to the system allocator as it is.
//!
//! The advice changes how the kernel backs the memory, never what it holds; a kernel without
//! transparent huge pages, or with them off, refuses it and nothing changes. This is the only
//! module of the workspace with `unsafe` code (`cargo xtask verify` holds it to that): the global
//! allocator trait is unsafe to implement, and `madvise` is a foreign function.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};

/// The size of a transparent huge page (x86-64, and arm64 with 4 KiB pages).
const HUGE: usize = 2 << 20;

/// Allocations from this size up are advised: below it, a range of whole huge pages inside the
/// allocation is too small to be worth a system call, or there is none.
pub const FROM: usize = 2 * HUGE;

/// The system allocator, with allocations of [`FROM`] bytes or more advised to use huge pages.
pub struct HugePages;

/// The whole huge pages inside `[ptr, ptr + len)`, as their start and length, if there are any.
fn huge_range(ptr: usize, len: usize) -> Option<(usize, usize)> {
    let start = ptr.checked_next_multiple_of(HUGE)?;
    let end = ptr.checked_add(len)? & !(HUGE - 1);
    end.checked_sub(start)
        .filter(|&n| n > 0)
        .map(|n| (start, n))
}

/// Whether an allocation of `size` bytes is advised.
fn advised_size(size: usize) -> bool {
    size >= FROM
}

/// Asks the kernel to back the whole huge pages inside `[ptr, ptr + len)` with huge pages.
fn advise(ptr: *mut u8, len: usize) {
    if let Some((start, len)) = huge_range(ptr as usize, len) {
        // SAFETY: `[start, start + len)` lies inside an allocation the caller has just received
        // and owns. `MADV_HUGEPAGE` is advice: it changes neither the mapping's contents nor its
        // protection, and when the kernel refuses it (no transparent huge pages) the memory
        // stays as it was, so the result is not looked at.
        unsafe {
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
}

// SAFETY: every method hands the layout to `System` unchanged and returns what it returned;
// `advise` only adds advice on memory `System` has just allocated.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let ptr = unsafe { System.alloc(layout) };
        if advised_size(layout.size()) && !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if advised_size(layout.size()) && !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`; `ptr` came from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`; `ptr` came from `System` with `layout`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if advised_size(new_size) && !new.is_null() {
            advise(new, new_size);
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping of this process that holds `addr` (`/proc/self/smaps`).
    fn vm_flags(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = first.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&addr);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.trim().to_owned());
            }
        }
        None
    }

    /// Whether this kernel offers transparent huge pages at all.
    fn kernel_has_thp() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|s| !s.contains("[never]"))
    }

    /// Allocates `size` bytes with `how`, and returns the `VmFlags` of the mapping holding the
    /// middle of them (then frees them).
    fn flags_of(size: usize, how: impl Fn(Layout) -> *mut u8) -> Option<String> {
        let layout = Layout::from_size_align(size, 8).expect("a valid layout");
        let ptr = how(layout);
        assert!(!ptr.is_null(), "allocation of {size} bytes failed");
        let flags = vm_flags(ptr as usize + size / 2);
        // SAFETY: `ptr` was allocated just above by `HugePages` with `layout`.
        unsafe { HugePages.dealloc(ptr, layout) };
        flags
    }

    /// `hg` in `VmFlags` is the kernel's record of `MADV_HUGEPAGE` on a mapping.
    fn advised(flags: Option<String>) -> bool {
        flags.is_some_and(|f| f.split_whitespace().any(|x| x == "hg"))
    }

    #[test]
    fn large_allocations_are_advised_huge_pages() {
        if !kernel_has_thp() {
            println!("skipped: this kernel has no transparent huge pages to advise");
            return;
        }
        // SAFETY: non-zero sizes; each pointer is freed once, by `flags_of`.
        let alloc = |l| unsafe { HugePages.alloc(l) };
        let zeroed = |l| unsafe { HugePages.alloc_zeroed(l) };
        assert!(advised(flags_of(3 * FROM, alloc)));
        assert!(advised(flags_of(3 * FROM, zeroed)));
    }

    #[test]
    fn a_buffer_grown_past_the_threshold_is_advised() {
        if !kernel_has_thp() {
            println!("skipped: this kernel has no transparent huge pages to advise");
            return;
        }
        let size = 3 * FROM;
        let grown = |l: Layout| {
            let small = Layout::from_size_align(4096, l.align()).expect("a valid layout");
            // SAFETY: a non-zero size; then `realloc` of that very allocation.
            unsafe {
                let p = HugePages.alloc(small);
                assert!(!p.is_null());
                HugePages.realloc(p, small, l.size())
            }
        };
        assert!(advised(flags_of(size, grown)));
    }

    #[test]
    fn the_advice_covers_whole_huge_pages_inside_the_allocation() {
        let base = 7 * HUGE + 4096;
        // No whole huge page inside: nothing advised.
        assert_eq!(huge_range(base, HUGE), None);
        assert_eq!(huge_range(base, 2 * HUGE - 8192), None);
        // The start rounded up, the end rounded down: never outside the allocation.
        assert_eq!(huge_range(base, 2 * HUGE), Some((8 * HUGE, HUGE)));
        assert_eq!(huge_range(base, 3 * HUGE), Some((8 * HUGE, 2 * HUGE)));
        assert_eq!(huge_range(8 * HUGE, 2 * HUGE), Some((8 * HUGE, 2 * HUGE)));
        // An allocation at the top of the address space does not wrap.
        assert_eq!(huge_range(usize::MAX - HUGE, HUGE), None);
        assert_eq!(huge_range(usize::MAX - 4095, 4095), None);
    }

    #[test]
    fn allocations_from_four_mebibytes_up_are_advised() {
        for (size, expect) in [
            (0, false),
            (HUGE, false),
            (4 * 1024 * 1024 - 1, false),
            (4 * 1024 * 1024, true),
            (100 * 1024 * 1024, true),
        ] {
            assert_eq!(advised_size(size), expect, "{size}");
        }
    }
}
