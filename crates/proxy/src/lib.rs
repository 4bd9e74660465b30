//! `turnkeeper proxy`: a local endpoint for Anthropic Messages, OpenAI Chat Completions (and the
//! OpenAI-compatible vendors: DeepSeek, Kimi, OpenRouter, vLLM, ...), OpenAI Responses and
//! Gemini `generateContent`, that sits between an agent and the provider, so every transcript
//! passes through turnkeeper with no change to the agent but its base URL.
//!
//! For each route of a family it reads (see the table in `family.rs`: `POST /v1/messages`,
//! `/v1/chat/completions`, `/v1/responses`, `/v1beta/models/{model}:generateContent` and their
//! variants) the proxy
//! 1. reads the body (up to [`Config::max_body`], decoding a `Content-Encoding` of gzip,
//!    deflate, br or zstd within that limit; a larger body, or one that is not a request of its
//!    family, is forwarded unchanged: the proxy never blocks a request because of itself);
//! 2. repairs it under the rules of its target (the model the body or, for Gemini, the path
//!    names): for Messages it looks up the assistant turns the body carries in the turn store (a
//!    directory, or Redis for several instances) and restores a turn the agent altered to the
//!    bytes the provider sent (AN-22); the other families go through
//!    `turnkeeper_prevent::wire::repair_wire` (Chat, Responses) or `repair` (Gemini). A valid
//!    body is forwarded byte-identical, to the family's own upstream;
//! 3. forwards it with every header but the hop-by-hop ones, and streams the response back as
//!    it arrives (SSE events are never buffered whole), recording a complete assistant
//!    response in the turn store. A stream cut short on either side is not recorded;
//! 4. on a 400 the classifier says a repair can fix, applies the planned recovery and retries
//!    once; the client sees the retried response, and `x-turnkeeper-recovered` says what was
//!    done. 429, 5xx and 529 go back unchanged (the client's SDK retries them).
//!
//! A request whose upstream connection (a pooled one, closed by the upstream while idle) fails
//! before any response byte is sent once more on a fresh connection.
//!
//! Every other path is forwarded untouched. `GET /metrics` answers in Prometheus' text format,
//! each request-scoped series labelled with its `route`.
//! Headers that carry credentials are forwarded but never logged, and the store holds response
//! content only.
//!
//! ```no_run
//! # async fn demo() -> Result<(), turnkeeper_proxy::ProxyError> {
//! use turnkeeper_proxy::{Config, Proxy};
//! let proxy = Proxy::start(Config::default()).await?;
//! println!("listening on http://{}", proxy.local_addr());
//! proxy.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod buffers;
mod decode;
mod family;
mod forward;
mod handler;
mod http;
mod metrics;
mod readings;
mod turns;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ::http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

pub use metrics::Metrics;

use crate::http::{Body, text_response};

/// Anthropic's documented request size limit for the Messages API (32 MB), the default for
/// [`Config::max_body`].
pub const DEFAULT_MAX_BODY: usize = 32 * 1024 * 1024;

/// Where the turn store lives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StoreConfig {
    /// In memory only: turns are lost when the proxy stops.
    #[default]
    Memory,
    /// A directory of JSON files, one per turn, readable by the user only.
    Dir(PathBuf),
    /// A Redis server (`redis://host:port/db`), shared by several proxies.
    Redis(String),
}

impl StoreConfig {
    /// Reads `--store`: `redis://…` or `rediss://…` is Redis, `memory` is memory, anything else a
    /// directory.
    pub fn parse(s: &str) -> StoreConfig {
        if s.starts_with("redis://") || s.starts_with("rediss://") || s.starts_with("redis+unix://")
        {
            StoreConfig::Redis(s.to_owned())
        } else if s == "memory" {
            StoreConfig::Memory
        } else {
            StoreConfig::Dir(PathBuf::from(s))
        }
    }
}

/// How the proxy runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen. Loopback only unless [`Config::allow_remote`].
    pub listen: SocketAddr,
    /// Allow a non-loopback listen address (anyone who can reach it can spend the keys sent
    /// through it).
    pub allow_remote: bool,
    /// The Anthropic upstream's base URL (`/v1/messages`, and other requests carrying
    /// Anthropic's headers); never taken from a request.
    pub upstream: String,
    /// The base URL of the OpenAI-compatible upstream (Chat Completions and Responses, and other
    /// requests with a bearer token): `https://api.openai.com`, `https://api.deepseek.com`, ...
    /// The client's path is appended as it came.
    pub upstream_openai: String,
    /// The base URL of the Gemini upstream (`generateContent`, and other requests to Google's
    /// paths or with its key).
    pub upstream_gemini: String,
    /// The turn store.
    pub store: StoreConfig,
    /// At most this many turns kept in memory or in the directory (the oldest are forgotten).
    pub store_limit: usize,
    /// How long a turn lives in Redis.
    pub store_ttl: Duration,
    /// The largest request body the proxy reads to repair; a larger one is forwarded unchanged.
    pub max_body: usize,
    /// Retry once, repaired, on a 400 the classifier says a repair can fix.
    pub recover: bool,
    /// Give up connecting to the upstream after this time (a 502 goes back to the client).
    pub connect_timeout: Duration,
    /// Close pooled upstream connections idle for this long. Shorter than common upstream idle
    /// timeouts (load balancers close at 60 s, some gateways sooner), so a request rarely meets
    /// a connection the upstream is closing.
    pub pool_idle_timeout: Duration,
    /// How many readings of recent request bodies are kept, so that the next request of the
    /// same conversation is read at the cost of what it adds (its earlier messages compared
    /// byte for byte, not scanned again); 0 keeps none. Bodies of up to 16 MiB, 64 MiB in all.
    pub keep_readings: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            allow_remote: false,
            upstream: "https://api.anthropic.com".to_owned(),
            upstream_openai: "https://api.openai.com".to_owned(),
            upstream_gemini: "https://generativelanguage.googleapis.com".to_owned(),
            store: StoreConfig::Memory,
            store_limit: 10_000,
            store_ttl: Duration::from_secs(7 * 24 * 3600),
            max_body: DEFAULT_MAX_BODY,
            recover: true,
            connect_timeout: Duration::from_secs(30),
            pool_idle_timeout: Duration::from_secs(20),
            keep_readings: 8,
        }
    }
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The listen address is not loopback and remote access was not allowed.
    #[error(
        "{0} is not a loopback address; the proxy forwards your API keys, so it listens on loopback only unless --allow-remote is given"
    )]
    NotLoopback(SocketAddr),
    /// The upstream URL is not an http(s) URL.
    #[error("upstream {0:?} is not an http:// or https:// URL")]
    BadUpstream(String),
    /// Binding the listen address failed.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The turn store could not be opened.
    #[error("turn store: {0}")]
    Store(String),
    /// The HTTP client could not be built.
    #[error("HTTP client: {0}")]
    Client(String),
}

/// Whether an upstream base URL names this machine (plain `http://` to `127.0.0.1`,
/// `localhost` or `[::1]`, a port or a path after it); `None` when it is not an http(s) URL.
fn loopback_base(base: &str) -> Option<bool> {
    match base.strip_prefix("http://") {
        Some(rest) => {
            let host = match rest.strip_prefix('[') {
                Some(v6) => v6.split(']').next() == Some("::1"),
                None => matches!(
                    rest.split(['/', ':']).next(),
                    Some("127.0.0.1" | "localhost")
                ),
            };
            Some(host)
        }
        None if base.starts_with("https://") => Some(false),
        None => None,
    }
}

/// True when every upstream is on this machine (the client then ignores `HTTP(S)_PROXY`);
/// an upstream that is not an http(s) URL is refused.
fn all_loopback<S: AsRef<str>>(upstreams: &[S]) -> Result<bool, ProxyError> {
    upstreams
        .iter()
        .map(AsRef::as_ref)
        .try_fold(true, |all, base| match loopback_base(base) {
            Some(loopback) => Ok(all && loopback),
            None => Err(ProxyError::BadUpstream(base.to_owned())),
        })
}

/// What every request handler shares.
pub(crate) struct State {
    pub(crate) config: Config,
    /// Each family's upstream base URL, without a trailing slash (`Family::index`).
    pub(crate) upstreams: [String; 4],
    pub(crate) client: reqwest::Client,
    /// A client that keeps no idle connection: every request it sends opens a fresh one (the
    /// retry after a pooled connection failed).
    pub(crate) fresh: reqwest::Client,
    pub(crate) turns: turns::Turns,
    pub(crate) metrics: Metrics,
    /// Request-body buffers kept for the next request.
    pub(crate) buffers: buffers::Buffers,
    /// Readings of recent request bodies, for the next request of each conversation.
    pub(crate) readings: readings::Readings,
    /// The Messages upstream has refused a mid-conversation `system` message (DeepSeek's
    /// Anthropic-compatible endpoint, CX-02): every later request is sent with them folded
    /// into the user turn, instead of failing once each.
    pub(crate) messages_refuse_system: std::sync::atomic::AtomicBool,
    next_id: AtomicU64,
}

/// A running proxy.
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<State>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Checks the configuration, opens the turn store, binds the listen address and starts
    /// serving on the current tokio runtime.
    ///
    /// # Errors
    /// See [`ProxyError`].
    pub async fn start(config: Config) -> Result<Proxy, ProxyError> {
        if !config.listen.ip().is_loopback() && !config.allow_remote {
            return Err(ProxyError::NotLoopback(config.listen));
        }
        let bases = [
            &config.upstream,
            &config.upstream_openai,
            &config.upstream_openai,
            &config.upstream_gemini,
        ];
        let all_loopback = all_loopback(&bases)?;
        let upstreams = bases.map(|base| base.trim_end_matches('/').to_owned());
        let build = |idle: usize| {
            let mut builder = reqwest::Client::builder()
                .connect_timeout(config.connect_timeout)
                .pool_idle_timeout(config.pool_idle_timeout)
                .pool_max_idle_per_host(idle)
                .redirect(reqwest::redirect::Policy::none())
                .http1_only();
            if all_loopback {
                // Loopback upstreams (tests, a local gateway) are never reached through an
                // HTTP(S)_PROXY from the environment.
                builder = builder.no_proxy();
            }
            builder
                .build()
                .map_err(|e| ProxyError::Client(e.to_string()))
        };
        let client = build(usize::MAX)?;
        let fresh = build(0)?;
        let turns = turns::Turns::open(&config).await?;
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ProxyError::Listen {
                    addr: config.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| ProxyError::Listen {
            addr: config.listen,
            source,
        })?;
        let readings = readings::Readings::new(config.keep_readings);
        let state = Arc::new(State {
            config,
            upstreams,
            client,
            fresh,
            turns,
            metrics: Metrics::default(),
            buffers: buffers::Buffers::default(),
            readings,
            messages_refuse_system: std::sync::atomic::AtomicBool::new(false),
            next_id: AtomicU64::new(1),
        });
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(serve(listener, state.clone(), stopped));
        tracing::info!(
            %addr,
            upstream = %state.upstreams[0],
            openai = %state.upstreams[1],
            gemini = %state.upstreams[3],
            store = state.turns.describe(),
            "proxy listening"
        );
        Ok(Proxy {
            addr,
            state,
            stop,
            task,
        })
    }

    /// The address it listens on (with the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The metrics, as `GET /metrics` renders them.
    pub fn metrics(&self) -> &Metrics {
        &self.state.metrics
    }

    /// Stops accepting connections and waits for the accept loop to end. Connections already
    /// open finish on their own.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }

    /// Serves until Ctrl-C (SIGINT) or SIGTERM.
    pub async fn run_until_signal(self) {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot listen for SIGTERM");
                        let _ = ctrl_c.await;
                        self.shutdown().await;
                        return;
                    }
                };
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = ctrl_c.await;
        tracing::info!("proxy stopping");
        self.shutdown().await;
    }
}

async fn serve(listener: TcpListener, state: Arc<State>, mut stopped: watch::Receiver<bool>) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stopped.changed() => return,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(state, req).await) }
            });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            if let Err(e) = builder
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Body> {
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    let span = tracing::info_span!("request", id, method = %req.method(), path = req.uri().path());
    async move {
        let path = req.uri().path();
        if path == "/metrics" && req.method() == Method::GET {
            return text_response(
                StatusCode::OK,
                "text/plain; version=0.0.4",
                state.metrics.render(),
            );
        }
        if req.method() == Method::POST
            && let Some(route) = family::route(path)
        {
            let label = route.family.label();
            state.metrics.inc("requests_total", &[("route", label)]);
            let _in_flight = state.metrics.in_flight();
            return handler::handle(&state, req, route).await;
        }
        state.metrics.inc("requests_total", &[("route", "other")]);
        forward::passthrough(&state, req).await
    }
    .instrument(span)
    .await
}

#[cfg(test)]
mod tests {
    use super::{ProxyError, all_loopback, loopback_base};

    /// `http://[::1]:8080` was split at its first `:` and taken for a remote host, so a
    /// proxy in front of an IPv6 loopback upstream went through `HTTP(S)_PROXY`.
    #[test]
    fn an_upstream_on_this_machine_is_told_from_a_remote_one() {
        for (base, expect) in [
            ("http://127.0.0.1:8080", Some(true)),
            ("http://localhost", Some(true)),
            ("http://localhost:4000/v1", Some(true)),
            ("http://[::1]:8080", Some(true)),
            ("http://[::1]", Some(true)),
            ("http://[::2]:8080", Some(false)),
            ("http://127.0.0.10:8080", Some(false)),
            ("http://localhost.example.com", Some(false)),
            ("https://127.0.0.1:8443", Some(false)),
            ("https://api.anthropic.com", Some(false)),
            ("ftp://127.0.0.1", None),
        ] {
            assert_eq!(loopback_base(base), expect, "{base}");
        }
    }

    #[test]
    fn the_environments_proxy_is_ignored_only_when_every_upstream_is_local() {
        let of = |v: &[&str]| all_loopback(v);
        assert!(matches!(
            of(&["http://127.0.0.1:1", "http://localhost:2"]),
            Ok(true)
        ));
        assert!(matches!(
            of(&["http://127.0.0.1:1", "https://api.openai.com"]),
            Ok(false)
        ));
        assert!(matches!(
            of(&["https://api.openai.com", "http://127.0.0.1:1"]),
            Ok(false)
        ));
        assert!(matches!(
            of(&["http://127.0.0.1:1", "ftp://x"]),
            Err(ProxyError::BadUpstream(b)) if b == "ftp://x"
        ));
    }
}
