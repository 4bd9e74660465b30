//! `turnkeeper proxy`: a local endpoint for Anthropic Messages, OpenAI Chat Completions and
//! Responses, and Gemini, in the path of an agent's traffic.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use turnkeeper_proxy::{Config, Proxy, StoreConfig};

use crate::fail;

/// Options of `turnkeeper proxy`.
#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// Where to listen (loopback only unless --allow-remote).
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// Allow a non-loopback --listen address. Anyone who reaches it can use the keys sent
    /// through it.
    #[arg(long)]
    allow_remote: bool,
    /// The Anthropic upstream's base URL (`/v1/messages`).
    #[arg(long, default_value = "https://api.anthropic.com")]
    upstream: String,
    /// The OpenAI-compatible upstream's base URL (`/v1/chat/completions`, `/chat/completions`,
    /// `/v1/responses`, `/responses`): the client's path is appended, so
    /// `https://api.deepseek.com` with a client path `/chat/completions` reaches
    /// `https://api.deepseek.com/chat/completions`.
    #[arg(long, default_value = "https://api.openai.com")]
    upstream_openai: String,
    /// The Gemini upstream's base URL (`/v1beta/models/{model}:generateContent`,
    /// `:streamGenerateContent`, and under `/v1/`).
    #[arg(long, default_value = "https://generativelanguage.googleapis.com")]
    upstream_gemini: String,
    /// Close pooled upstream connections idle for this many seconds (keep it below the
    /// upstream's own idle timeout).
    #[arg(long, default_value_t = 20)]
    pool_idle_timeout: u64,
    /// The turn store: a directory, `memory`, or `redis://HOST:PORT/DB` to share it between
    /// proxies.
    #[arg(long, default_value = "memory")]
    store: String,
    /// At most this many turns kept in memory or in the store directory.
    #[arg(long, default_value_t = 10_000)]
    store_limit: usize,
    /// How long a turn lives in Redis, in seconds.
    #[arg(long, default_value_t = 7 * 24 * 3600)]
    store_ttl: u64,
    /// The largest request body repaired, in bytes; a larger one is forwarded unchanged.
    #[arg(long, default_value_t = turnkeeper_proxy::DEFAULT_MAX_BODY)]
    max_body: usize,
    /// Do not retry a 400 that a repair can fix; pass every error back as it came.
    #[arg(long)]
    no_recover: bool,
    /// How many readings of recent request bodies to keep (every route), so
    /// that the next request of a conversation is read at the cost of what it adds; 0 reads
    /// every body whole.
    #[arg(long, default_value_t = 8)]
    keep_readings: usize,
}

pub fn run(a: &ProxyArgs) -> ExitCode {
    let config = Config {
        listen: a.listen,
        allow_remote: a.allow_remote,
        upstream: a.upstream.clone(),
        upstream_openai: a.upstream_openai.clone(),
        upstream_gemini: a.upstream_gemini.clone(),
        pool_idle_timeout: Duration::from_secs(a.pool_idle_timeout),
        store: StoreConfig::parse(&a.store),
        store_limit: a.store_limit,
        store_ttl: Duration::from_secs(a.store_ttl),
        max_body: a.max_body,
        recover: !a.no_recover,
        keep_readings: a.keep_readings,
        ..Config::default()
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    runtime.block_on(async {
        let proxy = match Proxy::start(config).await {
            Ok(p) => p,
            Err(e) => return fail(e),
        };
        // The one line a user (or a script waiting for the port) reads.
        eprintln!(
            "turnkeeper proxy listening on http://{} -> {} (openai: {}, gemini: {})",
            proxy.local_addr(),
            a.upstream,
            a.upstream_openai,
            a.upstream_gemini
        );
        proxy.run_until_signal().await;
        ExitCode::SUCCESS
    })
}
