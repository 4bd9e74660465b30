//! A large input file read through a memory map, whose pages a repair lets go of behind it.
//!
//! `repair` holds the input while it writes the new body, and a new body is as large as the
//! input: read into memory of its own, the input and the body were both resident at the end
//! (2.1 × the input's size at 100 MB, BENCHMARKS.md, "The command as a process"). Mapped, the
//! input's pages are the file's own (the page cache's, not copied), and a page the repair has
//! gone past is let go (`MADV_DONTNEED`): as the body grows the input shrinks, and the process
//! peaks at about one input's size. A page let go is not lost: the mapping is private and never
//! written, so touching it again reads it from the file, as it was.
//!
//! A file another process changes while it is mapped shows the change: a page rewritten in place
//! shows the new bytes (as a read racing the writer would), and a page past a truncated end
//! cannot be read at all: the kernel sends `SIGBUS`, which would end the process. The command
//! catches that signal for its mapping ([`torn`]): the page is replaced by zeros, the reading
//! goes on (and fails, or finds nonsense), and the command reports the file torn and writes
//! nothing. turnkeeper itself only ever replaces a file by renaming another over it, which
//! leaves a mapping of the old file whole. The command maps only regular files of [`FROM`] bytes
//! or more, one at a time, and none when `TURNKEEPER_NO_MMAP` is set; the rest are read as
//! before.
//!
//! This module and [`crate::hugepages`] are the only ones of the workspace with `unsafe` code
//! (`cargo xtask verify` holds it to that): `mmap`, `madvise`, `munmap` and `sigaction` are
//! foreign functions, and the bytes of a mapping are a raw pointer until they are a slice.
#![allow(unsafe_code)]

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use turnkeeper::ReadBehind;

/// Files from this size up are mapped; smaller ones are read (a map costs two system calls and
/// a page fault per 64 KiB, a read of a small file one call).
pub const FROM: u64 = 1 << 20;

/// The pages gone past are let go in runs of at least this many bytes (about 50 calls for a
/// 100 MB input).
const RUN: usize = 2 << 20;

/// The page size the offsets are rounded to (the smallest of the platforms the command runs on;
/// a larger page only makes `madvise` round the run's end down further).
const PAGE: usize = 4096;

/// A whole file, mapped read-only and private.
#[derive(Debug)]
pub struct Mapped {
    /// The mapping's first byte.
    ptr: NonNull<u8>,
    /// The file's size, and the mapping's.
    len: usize,
    /// The sweep's pages before this offset have been let go (a multiple of [`PAGE`]).
    from: AtomicUsize,
}

// SAFETY: the mapping is read-only, owned by this value, and unmapped only on drop; the raw
// pointer is not tied to a thread. `from` is atomic.
unsafe impl Send for Mapped {}
// SAFETY: as above: shared references only read the mapping, and `madvise` on it changes which
// pages are resident, never what a read of them returns.
unsafe impl Sync for Mapped {}

/// The mapping `SIGBUS` is caught for: its first byte and length (0: none).
static REGION_START: AtomicUsize = AtomicUsize::new(0);
static REGION_LEN: AtomicUsize = AtomicUsize::new(0);
/// Set when a page of the mapping could not be read and was replaced by zeros.
static TORN: AtomicBool = AtomicBool::new(false);

/// Whether the mapped file was truncated while the command read it: a page of it was past the
/// file's new end, and the command read zeros in its place. What the command found is then not
/// what the file held, and it must neither write a body nor stand by its findings.
pub fn torn() -> bool {
    TORN.load(Ordering::SeqCst)
}

/// The action `SIGBUS` had before [`on_sigbus`] (Rust's own, or the default).
static PREVIOUS: std::sync::OnceLock<libc::sigaction> = std::sync::OnceLock::new();

/// The `SIGBUS` handler: a fault inside the mapping (the file was truncated under it) maps a
/// page of zeros over the faulting page, notes it ([`TORN`]) and returns, so the read is done
/// again and reads zeros. Any other `SIGBUS` gets the action it had before back and happens
/// again on return, so it ends the process as it would have without this handler.
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an `SA_SIGINFO` handler; for `SIGBUS`
    // `si_addr` is the faulting address. `mmap`, `sigaction` and `signal` are system calls that
    // touch no state of this process but its mappings and its handler table, and `PREVIOUS` is
    // only read (it was set before the handler was installed).
    unsafe {
        let addr = (*info).si_addr() as usize;
        let start = REGION_START.load(Ordering::SeqCst);
        let len = REGION_LEN.load(Ordering::SeqCst);
        if len > 0 && addr >= start && addr < start + len {
            let page = addr & !(PAGE - 1);
            let zeros = libc::mmap(
                page as *mut libc::c_void,
                PAGE,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            );
            if zeros != libc::MAP_FAILED {
                TORN.store(true, Ordering::SeqCst);
                return;
            }
        }
        match PREVIOUS.get() {
            Some(previous) => {
                libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
            }
            None => {
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
            }
        }
    }
}

/// Installs [`on_sigbus`] once; false when the system refused it (then nothing is mapped).
fn catch_sigbus() -> bool {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // SAFETY: a zeroed `sigaction` is a valid empty one; the handler is an `extern "C"`
        // function of the `SA_SIGINFO` signature. The action it replaces is kept first, so that
        // the handler can hand back any fault that is not the mapping's.
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return false;
            }
            let _ = PREVIOUS.set(previous);
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_sigbus as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut()) == 0
        }
    })
}

impl Mapped {
    /// Maps all `len` bytes of `file` (which the caller found to be a regular file of that size,
    /// at least one byte); `None` when the system refuses, when another file is mapped already
    /// (the `SIGBUS` handler covers one), and the caller reads it instead.
    pub fn map(file: &File, len: usize) -> Option<Mapped> {
        if len == 0 || REGION_LEN.load(Ordering::SeqCst) != 0 || !catch_sigbus() {
            return None;
        }
        // SAFETY: a new private, read-only mapping of an open file descriptor; the kernel picks
        // the address. The result is checked against `MAP_FAILED` before it is used.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_POPULATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                "mmap refused; reading the file instead"
            );
            return None;
        }
        let ptr = NonNull::new(ptr.cast::<u8>())?;
        REGION_START.store(ptr.as_ptr() as usize, Ordering::SeqCst);
        REGION_LEN.store(len.next_multiple_of(PAGE), Ordering::SeqCst);
        Some(Mapped {
            ptr,
            len,
            from: AtomicUsize::new(0),
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is the start of a live mapping of `len` readable bytes, owned by `self`
        // and unmapped only when `self` is dropped, so the slice cannot outlive it. The bytes do
        // not change while it lives, under the module's promise (nobody rewrites the file in
        // place meanwhile).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Lets go of the pages in `[start, end)` (multiples of [`PAGE`], inside the mapping).
    fn let_go(&self, start: usize, end: usize) {
        if end <= start || end > self.len.next_multiple_of(PAGE) {
            return;
        }
        // SAFETY: `[start, end)` lies inside the mapping (checked above; the last page is whole
        // in the mapping even where the file ends inside it) and starts on a page boundary.
        // `MADV_DONTNEED` on a private file mapping that was never written drops the process's
        // pages; reading them again reads the file, so the bytes every slice of the mapping
        // shows are unchanged.
        let r = unsafe {
            libc::madvise(
                self.ptr.as_ptr().add(start).cast(),
                end - start,
                libc::MADV_DONTNEED,
            )
        };
        if r != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "madvise(MADV_DONTNEED) refused");
        }
    }
}

impl ReadBehind for Mapped {
    fn start(&self) {
        self.from.store(0, Ordering::Relaxed);
    }

    fn past(&self, offset: usize) {
        // The rest of the file, gone past whole, goes at once; otherwise runs of [`RUN`].
        let at_end = offset >= self.len;
        let to = if at_end {
            self.len.next_multiple_of(PAGE)
        } else {
            offset & !(PAGE - 1)
        };
        let from = self.from.load(Ordering::Relaxed);
        if to > from && (to - from >= RUN || at_end) {
            self.let_go(from, to);
            self.from.store(to, Ordering::Relaxed);
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        REGION_LEN.store(0, Ordering::SeqCst);
        // SAFETY: the mapping made in `map`, unmapped once; no slice of it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A temporary file holding `bytes`, and the file opened for reading.
    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, File) {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(bytes).expect("written");
        f.flush().expect("flushed");
        let r = File::open(f.path()).expect("opened");
        (f, r)
    }

    /// The resident size of the mapping starting at `start`, in KiB (`/proc/self/smaps`).
    fn resident_kib(start: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let head = format!("{start:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
        assert!(lines.next().is_some(), "the mapping is listed");
        lines
            .find_map(|l| l.strip_prefix("Rss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("an Rss line")
    }

    /// One test, not several: the `SIGBUS` region and the torn flag are the process's.
    #[test]
    fn pages_gone_past_leave_and_come_back_and_a_truncated_file_reads_torn() {
        let len = 3 * RUN + 1234;
        let content: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        let (file, r) = file_of(&content);
        let m = Mapped::map(&r, len).expect("mapped");
        assert!(Mapped::map(&r, len).is_none(), "one mapping at a time");
        assert_eq!(m.bytes(), &content[..]);
        let start = m.bytes().as_ptr() as usize;
        let whole = resident_kib(start);
        assert!(
            whole >= (len / 1024) as u64 - 4,
            "resident when read: {whole} KiB"
        );

        // Short of a run: nothing goes. A run: the pages before it go. The end: everything.
        m.start();
        m.past(RUN - 1);
        assert_eq!(resident_kib(start), whole);
        m.past(RUN + 10);
        assert_eq!(resident_kib(start), whole - (RUN / 1024) as u64);
        m.past(len);
        assert_eq!(resident_kib(start), 0);
        // Read again, the bytes are the file's, as they were.
        assert_eq!(m.bytes(), &content[..]);
        assert!(resident_kib(start) >= (len / 1024) as u64 - 4);
        assert!(!torn());

        // Truncated under the mapping: the pages past the new end read as zeros, and it is said.
        file.as_file().set_len(RUN as u64).expect("truncated");
        m.start();
        m.past(len);
        let bytes = m.bytes();
        assert_eq!(&bytes[..RUN], &content[..RUN]);
        assert!(bytes[RUN..].iter().all(|&b| b == 0));
        assert!(torn());
        drop(m);
        assert_eq!(REGION_LEN.load(Ordering::SeqCst), 0);
    }
}
