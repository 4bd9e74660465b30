//! Reading the input: a file, standard input, or an OpenCode storage directory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use turnkeeper::opencode::Session;
use turnkeeper::stores::opencode::{Located, locate};
use turnkeeper::{Format, FormatHint};

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum FormatArg {
    /// Tell from the input.
    #[default]
    Auto,
    /// Anthropic Messages request or response body.
    Anthropic,
    /// OpenCode export (`opencode export` output, or `[{info, parts}]`) or storage directory.
    Opencode,
    /// Gemini generateContent body.
    Gemini,
    /// OpenAI Chat Completions body (OpenAI and every OpenAI-compatible vendor: DeepSeek, Kimi,
    /// Qwen, OpenRouter, vLLM, ...).
    Chat,
    /// OpenAI Responses body (`input` items).
    Responses,
    /// Bedrock Converse body.
    Converse,
}

impl FormatArg {
    pub fn hint(self) -> FormatHint {
        match self {
            FormatArg::Auto => FormatHint::Auto,
            FormatArg::Anthropic => FormatHint::Exactly(Format::Anthropic),
            FormatArg::Opencode => FormatHint::Exactly(Format::Opencode),
            FormatArg::Gemini => FormatHint::Exactly(Format::Gemini),
            FormatArg::Chat => FormatHint::Exactly(Format::Chat),
            FormatArg::Responses => FormatHint::Exactly(Format::Responses),
            FormatArg::Converse => FormatHint::Exactly(Format::Converse),
        }
    }
}

/// The input, read whole.
pub enum Input {
    /// A body (file or stdin), with the name to show; [`text`] checks it is UTF-8.
    Text { name: String, bytes: Bytes },
    /// An OpenCode storage directory.
    Storage(PathBuf),
}

/// A body's bytes: read into memory, or (a large regular file, on Linux) mapped
/// ([`crate::mapped`]).
pub enum Bytes {
    /// Read.
    Read(Vec<u8>),
    /// Mapped.
    #[cfg(target_os = "linux")]
    Mapped(crate::mapped::Mapped),
}

impl Bytes {
    /// Where a repair tells how far it has gone through the input, when its pages can be let
    /// go of behind it (a mapped file).
    pub fn pages(&self) -> Option<&dyn turnkeeper::ReadBehind> {
        match self {
            Bytes::Read(_) => None,
            #[cfg(target_os = "linux")]
            Bytes::Mapped(m) => Some(m),
        }
    }

    /// An error naming `name` when the file was truncated while it was mapped and read
    /// ([`crate::mapped::torn`]): what was found is not what the file held.
    pub fn torn(&self, name: &str) -> Result<(), String> {
        match self {
            Bytes::Read(_) => Ok(()),
            #[cfg(target_os = "linux")]
            Bytes::Mapped(_) if crate::mapped::torn() => Err(format!(
                "{name}: the file was truncated while it was read, so what was read is not what it held; nothing was written (run the command again)"
            )),
            #[cfg(target_os = "linux")]
            Bytes::Mapped(_) => Ok(()),
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read(v) => v,
            #[cfg(target_os = "linux")]
            Bytes::Mapped(m) => m.bytes(),
        }
    }
}

/// Reads `path` (`None` or `-`: standard input). A directory is OpenCode storage.
pub fn read_input(path: Option<&Path>) -> Result<Input, String> {
    read_input_as(path, false)
}

/// [`read_input`], mapping a large regular file instead of reading it (on Linux; see
/// [`crate::mapped`]). The caller must look at [`Bytes::torn`] before it stands by what it found
/// or writes anything: `check` and `repair` do.
pub fn read_input_mapped(path: Option<&Path>) -> Result<Input, String> {
    read_input_as(path, true)
}

fn read_input_as(path: Option<&Path>, map: bool) -> Result<Input, String> {
    let path = path.unwrap_or(Path::new("-"));
    if path.as_os_str() != "-" && path.is_dir() {
        return Ok(Input::Storage(path.to_owned()));
    }
    let (name, bytes) = read_bytes_as(path, map)?;
    Ok(Input::Text { name, bytes })
}

/// The bytes of `path` (`-`: standard input), and the name to show for it.
pub fn read_bytes(path: &Path) -> Result<(String, Bytes), String> {
    read_bytes_as(path, false)
}

fn read_bytes_as(path: &Path, map: bool) -> Result<(String, Bytes), String> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("<stdin>: {e}"))?;
        return Ok(("<stdin>".to_owned(), Bytes::Read(bytes)));
    }
    let bytes = read_file(path, map).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path.display().to_string(), bytes))
}

/// `bytes` as text, borrowed (checked once, with SIMD instructions where the processor has
/// them: no second check, as `String::from_utf8` would be), or an error naming `name` and the
/// first byte that is not UTF-8.
pub fn text<'a>(name: &str, bytes: &'a [u8]) -> Result<&'a str, String> {
    turnkeeper::utf8(bytes).map_err(|e| format!("{name}: {e}"))
}

/// Files from this size up are read in two halves at once.
#[cfg(unix)]
const PARALLEL_READ_FROM: u64 = 16 << 20;

/// Reads a whole file. A large regular file is read in two halves on two threads: on a 100 MB
/// body most of the time of `std::fs::read` is the kernel copying into fresh pages and faulting
/// them in (BENCHMARKS.md, CLI), and both halves of that work run in parallel. When the file's
/// size or modification time changed meanwhile, it is read again the plain way. (A plain read of
/// a file being rewritten can tear too; turnkeeper only ever replaces files by renaming.)
///
/// With `map`, on Linux, a regular file of [`crate::mapped::FROM`] bytes or more is mapped
/// instead, unless `TURNKEEPER_NO_MMAP` is set.
#[cfg(unix)]
fn read_file(path: &Path, map: bool) -> std::io::Result<Bytes> {
    use std::os::unix::fs::FileExt;

    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let Ok(len) = usize::try_from(meta.len()) else {
        return std::fs::read(path).map(Bytes::Read);
    };
    #[cfg(target_os = "linux")]
    if map
        && meta.is_file()
        && meta.len() >= crate::mapped::FROM
        && std::env::var_os("TURNKEEPER_NO_MMAP").is_none()
        && let Some(m) = crate::mapped::Mapped::map(&file, len)
    {
        return Ok(Bytes::Mapped(m));
    }
    if !meta.is_file() || meta.len() < PARALLEL_READ_FROM {
        return std::fs::read(path).map(Bytes::Read);
    }
    // Zeroed memory from the allocator is fresh pages, not a memset.
    let mut buf = vec![0u8; len];
    let mid = len / 2;
    let (head, tail) = buf.split_at_mut(mid);
    let read = std::thread::scope(|scope| {
        let second = scope.spawn(|| file.read_exact_at(tail, mid as u64));
        let first = file.read_exact_at(head, 0);
        let second = second
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("reader thread failed")));
        first.and(second)
    });
    let unchanged = file
        .metadata()
        .is_ok_and(|m| m.len() == meta.len() && m.modified().ok() == meta.modified().ok());
    match read {
        Ok(()) if unchanged => Ok(Bytes::Read(buf)),
        _ => std::fs::read(path).map(Bytes::Read),
    }
}

/// Reads a whole file (elsewhere than Unix, the plain way).
#[cfg(not(unix))]
fn read_file(path: &Path, _map: bool) -> std::io::Result<Bytes> {
    std::fs::read(path).map(Bytes::Read)
}

/// Opens the OpenCode (or Kilo) store at `dir` (see [`turnkeeper::stores::opencode::locate`]).
pub fn open_store(dir: &Path) -> Result<Located, String> {
    locate(Some(dir)).map_err(|e| e.to_string())
}

/// Loads one session of `store`; with `None`, the most recently updated one.
pub fn load_session(store: &Located, id: Option<&str>) -> Result<Session, String> {
    let id = match id {
        Some(id) => id.to_owned(),
        None => store
            .listing()
            .map_err(|e| e.to_string())?
            .sessions
            .first()
            .map(|s| s.id.clone())
            .ok_or_else(|| format!("{}: the store holds no session", store.path().display()))?,
    };
    store.load(&id).map_err(|e| e.to_string())
}

/// Whether an output path names standard output: `-`, as for the input.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes an output a command names with `-o` or `--report`: to standard output for `-`
/// ([`is_stdout`]), else to the file, atomically ([`write_file`]).
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if !is_stdout(path) {
        return write_file(path, bytes);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| format!("<stdout>: {e}"))
}

/// Refuses a `--report -` when the body goes to standard output too (`body_to` is where the
/// body is written: `None` or `-` for standard output): the two would be mixed in one stream.
pub fn report_not_on_body(report: Option<&Path>, body_to: Option<&Path>) -> Result<(), String> {
    match report {
        Some(r) if is_stdout(r) && body_to.is_none_or(is_stdout) => Err(
            "--report -: standard output already carries the body; write the body with -o FILE (or --in-place), or the report to a file"
                .to_owned(),
        ),
        _ => Ok(()),
    }
}

/// Writes `bytes` to `path` atomically ([`turnkeeper::write_atomically`]), with
/// the error as the command line shows it.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    turnkeeper::write_atomically(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}
