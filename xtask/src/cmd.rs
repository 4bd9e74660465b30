//! Running external commands: echo their output live, keep the lines we parse, time them, and show
//! each command as a line a user can paste into a shell to reproduce it alone.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// A command to run from the workspace root, with the environment it needs spelled out so that
/// [`Cmd::display`] is an exact reproduction.
#[derive(Clone, Debug)]
pub struct Cmd {
    /// The program to execute (for cargo, `$CARGO` when set).
    program: OsString,
    /// How the program is shown to the user (`cargo` rather than a toolchain path).
    shown: String,
    /// Arguments, in order.
    args: Vec<String>,
    /// Environment variables set for the child (and shown in the reproduction line).
    envs: Vec<(String, String)>,
    /// Working directory of the child.
    dir: PathBuf,
}

/// What a finished command left behind.
#[derive(Debug)]
pub struct Output {
    /// The exit status of the child.
    pub status: ExitStatus,
    /// The lines (stdout and stderr, interleaved as they arrived) that the caller asked to keep.
    pub lines: Vec<String>,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

impl Cmd {
    /// A cargo invocation through the cargo that runs this xtask (`$CARGO`), shown as `cargo`.
    pub fn cargo(root: &Path) -> Cmd {
        let program = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
        Cmd {
            program,
            shown: "cargo".into(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: root.into(),
        }
    }

    /// A cargo invocation through the rustup proxy on `PATH`, so that `+toolchain` works.
    pub fn rustup_cargo(root: &Path, toolchain: &str) -> Cmd {
        let mut cmd = Cmd::new(root, "cargo");
        cmd.args.push(format!("+{toolchain}"));
        cmd
    }

    /// Any program, found on `PATH`.
    pub fn new(root: &Path, program: &str) -> Cmd {
        Cmd {
            program: program.into(),
            shown: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: root.into(),
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Cmd {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Cmd {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// The command as a shell line: `KEY=value cargo args...`, quoted where needed.
    pub fn display(&self) -> String {
        let mut parts: Vec<String> = self
            .envs
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        parts.push(self.shown.clone());
        parts.extend(self.args.iter().map(|a| shell_quote(a)));
        parts.join(" ")
    }

    /// Builds the `std::process::Command` with stdin closed.
    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        for (k, v) in &self.envs {
            command.env(k, v);
        }
        if std::env::var_os("CARGO_TERM_COLOR").is_none() && io::stderr().is_terminal() {
            command.env("CARGO_TERM_COLOR", "always");
        }
        command
    }

    /// Runs the command silently and reports whether it exited with success (for probes).
    pub fn succeeds(&self) -> bool {
        self.command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Runs the command silently and returns its stdout when it succeeds (for version probes).
    pub fn stdout_text(&self) -> Option<String> {
        let out = self.command().stderr(Stdio::null()).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Runs the command, echoing its stdout and stderr live, and keeps the lines for which `keep`
    /// returns true (ANSI colour codes removed).
    pub fn run(&self, keep: fn(&str) -> bool) -> io::Result<Output> {
        let start = Instant::now();
        let mut child = self
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start `{}`: {e}", self.shown)))?;
        let (tx, rx) = mpsc::channel::<String>();
        let mut pumps = Vec::new();
        if let Some(out) = child.stdout.take() {
            let tx = tx.clone();
            pumps.push(thread::spawn(move || pump(out, &mut io::stdout(), &tx)));
        }
        if let Some(err) = child.stderr.take() {
            let tx = tx.clone();
            pumps.push(thread::spawn(move || pump(err, &mut io::stderr(), &tx)));
        }
        drop(tx);
        let lines: Vec<String> = rx.iter().filter(|l| keep(l)).collect();
        for pump in pumps {
            // A panicking pump thread only loses echoed output; the exit status still decides.
            let _ = pump.join();
        }
        let status = child.wait()?;
        Ok(Output {
            status,
            lines,
            elapsed: start.elapsed(),
        })
    }
}

/// Copies a child's stream line by line to `sink` and sends each line (without ANSI codes) to `tx`.
fn pump(stream: impl Read, sink: &mut dyn Write, tx: &mpsc::Sender<String>) {
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let _ = sink.write_all(&buf);
                let _ = sink.flush();
                let line = String::from_utf8_lossy(&buf);
                let _ = tx.send(strip_ansi(line.trim_end_matches(['\n', '\r'])));
            }
        }
    }
}

/// Removes ANSI escape sequences (`ESC [ ... letter`) from a line.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Quotes a word for a POSIX shell when it contains anything beyond a safe set of characters.
pub fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The target directory: `$CARGO_TARGET_DIR`, else `target/` under the root.
pub fn target_dir(root: &Path) -> PathBuf {
    target_dir_from(root, std::env::var_os("CARGO_TARGET_DIR"))
}

/// [`target_dir`], with `CARGO_TARGET_DIR`'s value given.
fn target_dir_from(root: &Path, var: Option<std::ffi::OsString>) -> PathBuf {
    var.map_or_else(|| root.join("target"), PathBuf::from)
}

/// Formats a duration for humans: `0.4s`, `41.2s`, `2m05s`.
pub fn fmt_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        let whole = d.as_secs();
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

/// Describes an exit status for a message: `exit code 101` or `killed by signal 9`.
pub fn fmt_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_directory_is_cargo_target_dir_or_target() {
        let root = Path::new("/r");
        assert_eq!(target_dir_from(root, None), Path::new("/r/target"));
        assert_eq!(
            target_dir_from(root, Some("/elsewhere".into())),
            Path::new("/elsewhere")
        );
    }

    #[test]
    fn display_quotes_only_what_needs_it() {
        let cmd = Cmd::new(Path::new("/"), "cargo")
            .env("RUSTDOCFLAGS", "-D warnings")
            .env("PROPTEST_CASES", "64")
            .args(["bench", "--bench", "*", "--", "--test"]);
        assert_eq!(
            cmd.display(),
            "RUSTDOCFLAGS='-D warnings' PROPTEST_CASES=64 cargo bench --bench '*' -- --test"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn strip_ansi_removes_colour_codes() {
        assert_eq!(
            strip_ansi("\u{1b}[1m\u{1b}[32mok\u{1b}[0m. 3 passed"),
            "ok. 3 passed"
        );
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(fmt_duration(Duration::from_millis(400)), "0.4s");
        assert_eq!(fmt_duration(Duration::from_secs(125)), "2m05s");
    }
}
