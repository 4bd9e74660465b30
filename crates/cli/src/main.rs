//! The `turnkeeper` command-line tool: inspect, check and repair LLM conversation transcripts,
//! record provider responses in a turn store, classify provider errors and plan the retry,
//! doctor OpenCode and Claude Code sessions on disk, and run a local proxy that does all of it on
//! live traffic.
//!
//! Exit codes: 0 success (for `check`: no error-level finding); 1 `check` found errors; 2
//! unreadable input or a usage error; 3 `repair` left errors the policy cannot repair, or
//! `recover` gives up or hands the decision back to the caller.

mod check;
mod classify;
mod claude_code;
mod codex;
#[cfg(all(target_os = "linux", not(feature = "mimalloc")))]
mod hugepages;
mod input;
mod inspect;
#[cfg(target_os = "linux")]
mod mapped;
mod openclaw;
mod opencode;
mod proxy;
mod recover;
mod render;
mod store;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// With the `mimalloc` feature, mimalloc allocates for the whole process.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Without it, on Linux, the system's allocator with huge pages for large buffers
/// ([`hugepages`]).
#[cfg(all(target_os = "linux", not(feature = "mimalloc")))]
#[global_allocator]
static GLOBAL: hugepages::HugePages = hugepages::HugePages;

/// Keep LLM conversation transcripts valid for the provider APIs that check them.
#[derive(Parser, Debug)]
#[command(name = "turnkeeper", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise a transcript: format, model, messages, blocks by type, thinking mode.
    Inspect(inspect::InspectArgs),
    /// Find what the provider would reject (exit 1 when an error is found).
    Check(check::CheckArgs),
    /// Repair what can be repaired safely; never alters a thinking block.
    Repair(check::RepairArgs),
    /// The turn store: provider responses kept as they arrived, for restoring altered turns.
    Store {
        #[command(subcommand)]
        command: store::StoreCommand,
    },
    /// Classify a provider error (however wrapped) and say what to do.
    Classify(classify::ClassifyArgs),
    /// Plan the next step after a provider error and apply it to the failed request (exit 0:
    /// a body to send; 3: nothing to send, the caller must act or stop).
    Recover(recover::RecoverArgs),
    /// OpenCode's stored sessions: list, check, repair in place, undo a repair.
    Opencode {
        #[command(subcommand)]
        command: opencode::OpencodeCommand,
    },
    /// A local Anthropic endpoint: point an agent's base URL at it and every request is
    /// restored, repaired and recovered on its way (runs until Ctrl-C).
    Proxy(proxy::ProxyArgs),
    /// Claude Code's sessions (~/.claude/projects): list, check, repair by whole lines, undo.
    #[command(name = "claude-code")]
    ClaudeCode {
        #[command(subcommand)]
        command: claude_code::ClaudeCodeCommand,
    },
    /// Codex CLI's rollouts (~/.codex/sessions): list, check, repair into a new rollout, undo.
    Codex {
        #[command(subcommand)]
        command: codex::CodexCommand,
    },
    /// openclaw's sessions (~/.openclaw/agents/*/sessions): list, check, repair by whole lines, undo.
    Openclaw {
        #[command(subcommand)]
        command: openclaw::OpenclawCommand,
    },
}

fn main() -> ExitCode {
    // A closed output (`turnkeeper ... | head`) ends the process as it ends any Unix tool, by
    // SIGPIPE, instead of a panic with a backtrace from the next `println!`.
    sigpipe::reset();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("TURNKEEPER_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Inspect(a) => inspect::run(&a),
        Command::Check(a) => check::run_check(&a),
        Command::Repair(a) => check::run_repair(&a),
        Command::Store { command } => store::run(&command),
        Command::Classify(a) => classify::run(&a),
        Command::Recover(a) => recover::run(&a),
        Command::Opencode { command } => opencode::run(&command),
        Command::ClaudeCode { command } => claude_code::run(&command),
        Command::Codex { command } => codex::run(&command),
        Command::Openclaw { command } => openclaw::run(&command),
        Command::Proxy(a) => proxy::run(&a),
    }
}

/// Prints a one-line error and returns exit code 2.
fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("turnkeeper: {msg}");
    ExitCode::from(2)
}
