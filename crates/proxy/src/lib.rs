//! `turnkeeper proxy`: a local Anthropic Messages endpoint that sits between an agent and the
//! provider, so every transcript passes through turnkeeper with no change to the agent but its
//! base URL.
//!
//! For `POST /v1/messages` the proxy
//! 1. reads the body (up to [`Config::max_body`]; a larger body, or one that is not a Messages
//!    request, is forwarded unchanged: the proxy never blocks a request because of itself);
//! 2. looks up the assistant turns it carries in the turn store (a directory, or Redis for
//!    several instances) and repairs the body with `turnkeeper_prevent::repair`, which restores
//!    a turn the agent altered to the bytes the provider sent (AN-22) and fixes what the rules
//!    can fix safely. A valid body is forwarded byte-identical;
//! 3. forwards it with every header but the hop-by-hop ones, and streams the response back as
//!    it arrives (SSE events are never buffered whole), recording a complete assistant
//!    response in the turn store. A stream cut short on either side is not recorded;
//! 4. on a 400 the classifier says a repair can fix, applies the planned recovery and retries
//!    once; the client sees the retried response, and `x-turnkeeper-recovered` says what was
//!    done. 429, 5xx and 529 go back unchanged (the client's SDK retries them).
//!
//! Every other path is forwarded untouched. `GET /metrics` answers in Prometheus' text format.
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

mod forward;
mod messages;
mod metrics;
mod turns;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

pub use metrics::Metrics;

/// The body type of every response the proxy sends.
pub(crate) type Body = BoxBody<Bytes, std::io::Error>;

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
    /// The provider's base URL; never taken from a request.
    pub upstream: String,
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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            allow_remote: false,
            upstream: "https://api.anthropic.com".to_owned(),
            store: StoreConfig::Memory,
            store_limit: 10_000,
            store_ttl: Duration::from_secs(7 * 24 * 3600),
            max_body: DEFAULT_MAX_BODY,
            recover: true,
            connect_timeout: Duration::from_secs(30),
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

/// What every request handler shares.
pub(crate) struct State {
    pub(crate) config: Config,
    pub(crate) upstream: String,
    pub(crate) client: reqwest::Client,
    pub(crate) turns: turns::Turns,
    pub(crate) metrics: Metrics,
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
        let upstream = config.upstream.trim_end_matches('/').to_owned();
        let loopback_upstream = match upstream.strip_prefix("http://") {
            Some(rest) => {
                let host = rest.split(['/', ':']).next().unwrap_or("");
                host == "127.0.0.1" || host == "localhost" || host == "[::1]"
            }
            None if upstream.starts_with("https://") => false,
            None => return Err(ProxyError::BadUpstream(config.upstream.clone())),
        };
        let mut builder = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .http1_only();
        if loopback_upstream {
            // A loopback upstream (tests, a local gateway) is never reached through an
            // HTTP(S)_PROXY from the environment.
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| ProxyError::Client(e.to_string()))?;
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
        let state = Arc::new(State {
            config,
            upstream,
            client,
            turns,
            metrics: Metrics::default(),
            next_id: AtomicU64::new(1),
        });
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(serve(listener, state.clone(), stopped));
        tracing::info!(%addr, upstream = %state.upstream, store = state.turns.describe(), "proxy listening");
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
        if path == "/v1/messages" && req.method() == Method::POST {
            state
                .metrics
                .inc("requests_total", &[("route", "messages")]);
            let _in_flight = state.metrics.in_flight();
            return messages::handle(&state, req).await;
        }
        state.metrics.inc("requests_total", &[("route", "other")]);
        forward::passthrough(&state, req).await
    }
    .instrument(span)
    .await
}

/// A small complete response.
pub(crate) fn text_response(
    status: StatusCode,
    content_type: &str,
    body: String,
) -> Response<Body> {
    let mut r = Response::new(full(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = http::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(http::header::CONTENT_TYPE, v);
    }
    r
}

/// A body of known bytes.
pub(crate) fn full(b: Bytes) -> Body {
    http_body_util::Full::new(b)
        .map_err(|never| match never {})
        .boxed()
}

/// The error the proxy answers with when it cannot reach the upstream at all, in the
/// provider's error shape so SDKs report it as they report any API error.
pub(crate) fn proxy_error(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "type": "error",
        "error": {"type": "api_error", "message": format!("turnkeeper proxy: {message}")},
    });
    text_response(status, "application/json", body.to_string())
}
