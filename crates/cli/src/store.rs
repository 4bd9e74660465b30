//! `turnkeeper store add`: record provider responses in the turn store.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use turnkeeper::TurnStore;

use crate::fail;

/// Subcommands of `store`.
#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// Record response bodies as they arrived: Anthropic Messages, OpenAI Chat Completions,
    /// OpenAI Responses, Gemini generateContent (JSON, or the raw SSE stream) and Bedrock
    /// Converse (JSON); the family is told from each file. A stream cut short is refused.
    Add {
        /// The store directory.
        #[arg(long, default_value = ".turnkeeper/store")]
        store: PathBuf,
        /// Response files.
        #[arg(required = true)]
        responses: Vec<PathBuf>,
    },
}

pub fn run(c: &StoreCommand) -> ExitCode {
    match c {
        StoreCommand::Add { store, responses } => {
            let mut s = match TurnStore::open(store) {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            for p in responses {
                let text = match std::fs::read_to_string(p) {
                    Ok(t) => t,
                    Err(e) => return fail(format!("{}: {e}", p.display())),
                };
                match s.add_any_response(&text) {
                    Ok(r) => {
                        let id = r.response_id.as_deref().unwrap_or("(no id)");
                        eprintln!("stored {id} ({}) from {}", r.family.name(), p.display());
                    }
                    Err(e) => return fail(format!("{}: {e}", p.display())),
                }
            }
            eprintln!("{} turn(s) in {}", s.len(), store.display());
            ExitCode::SUCCESS
        }
    }
}
