//! Forwarding: headers without the hop-by-hop ones, bodies streamed both ways, and the tee that
//! hands a complete response to the turn store.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use http::header::{self, HeaderMap};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use tokio::sync::mpsc;

use crate::State;
use crate::family::{Family, other_upstream};
use crate::http::{Body, proxy_error};

/// Headers that describe one connection, not the message (RFC 9110 §7.6.1), plus `host` and
/// `content-length`, which the client library sets for the new connection and body.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// `headers` without hop-by-hop headers (those listed, and those the `Connection` header
/// names).
pub(crate) fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (k, v) in headers {
        let name = k.as_str();
        if HOP_BY_HOP.contains(&name) || named.iter().any(|n| n == name) {
            continue;
        }
        out.append(k.clone(), v.clone());
    }
    out
}

/// The upstream URL for a request's path and query: the family's base URL, the path appended.
fn upstream_url(state: &State, family: Family, uri: &http::Uri) -> String {
    let pq = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    format!("{}{pq}", state.upstreams[family.index()])
}

/// Counts the status an upstream answered with.
fn count_status(state: &State, family: Family, resp: &reqwest::Response) {
    state.metrics.inc(
        "upstream_responses_total",
        &[
            ("route", family.label()),
            ("status", resp.status().as_str()),
        ],
    );
}

/// Sends one request with a body the proxy holds to the family's upstream (the request's path
/// appended) and counts the status it answers with.
///
/// When the request fails before any response byte came back, on a connection that was open
/// (a pooled connection the upstream closed while it sat idle is the usual cause: the request
/// is written, then the socket reads EOF or a reset), it is sent once more on a fresh
/// connection. A connect error or a timeout is not retried: the fresh connection would meet
/// the same.
pub(crate) async fn send_upstream(
    state: &State,
    family: Family,
    method: Method,
    uri: &Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<reqwest::Response, reqwest::Error> {
    let url = upstream_url(state, family, uri);
    let sent = state
        .client
        .request(method.clone(), &url)
        .headers(headers.clone())
        .body(body.clone())
        .send()
        .await;
    let sent = match sent {
        Err(e) if !e.is_connect() && !e.is_timeout() && !e.is_builder() => {
            tracing::warn!(
                cause = %error_chain(&e),
                "the upstream connection failed before any response byte; sending once more on a fresh connection"
            );
            let again = state
                .fresh
                .request(method, &url)
                .headers(headers)
                .body(body)
                .send()
                .await;
            let result = if again.is_ok() { "ok" } else { "failed" };
            state.metrics.inc(
                "upstream_retries_total",
                &[("route", family.label()), ("result", result)],
            );
            again
        }
        other => other,
    };
    if let Ok(resp) = &sent {
        count_status(state, family, resp);
    }
    sent
}

/// A request error and its causes, without the URL (whose query may hold a key: Gemini's
/// `?key=`).
pub(crate) fn error_chain(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut out = String::new();
    let mut cur: Option<&dyn std::error::Error> = e.source();
    let kind = if e.is_connect() {
        "connect"
    } else if e.is_timeout() {
        "timeout"
    } else if e.is_body() {
        "body"
    } else {
        "request"
    };
    out.push_str(kind);
    while let Some(c) = cur {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cur = c.source();
    }
    out
}

/// Sends a request whose body streams through (too large to hold, or a path the proxy does not
/// read): it cannot be sent twice.
pub(crate) async fn send_streaming(
    state: &State,
    family: Family,
    method: Method,
    uri: &Uri,
    headers: HeaderMap,
    body: reqwest::Body,
) -> Result<reqwest::Response, reqwest::Error> {
    let sent = state
        .client
        .request(method, upstream_url(state, family, uri))
        .headers(headers)
        .body(body)
        .send()
        .await;
    if let Ok(resp) = &sent {
        count_status(state, family, resp);
    }
    sent
}

/// Every request the proxy does not read: forwarded untouched, both bodies streamed, to the
/// upstream its path and credentials name.
pub(crate) async fn passthrough(state: &Arc<State>, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let family = other_upstream(parts.uri.path(), parts.uri.query(), &parts.headers);
    let body = reqwest::Body::wrap_stream(body.into_data_stream());
    let headers = end_to_end(&parts.headers);
    match send_streaming(state, family, parts.method, &parts.uri, headers, body).await {
        Ok(resp) => stream_back(state, "other", resp, None, HeaderMap::new()),
        Err(e) => unreachable_upstream(state, family, "other", &e),
    }
}

/// The 502 for an upstream that could not be reached, in the error shape of `family`.
pub(crate) fn unreachable_upstream(
    state: &State,
    family: Family,
    route: &str,
    e: &reqwest::Error,
) -> Response<Body> {
    state
        .metrics
        .inc("upstream_errors_total", &[("route", route)]);
    let cause = error_chain(e);
    // The cause only: never the URL (a key may ride in its query) nor a header.
    tracing::warn!(%cause, "upstream unreachable");
    proxy_error(
        family,
        StatusCode::BAD_GATEWAY,
        &format!("upstream unreachable: {cause}"),
    )
}

/// What to do with a response's bytes once the upstream has sent all of them.
pub(crate) type OnComplete =
    Box<dyn FnOnce(Vec<u8>) -> futures_util::future::BoxFuture<'static, ()> + Send>;

/// A response to record: the bytes are collected (up to `limit`) as they stream past, and
/// handed to `done` only when the upstream finished the body and the client took every chunk.
pub(crate) struct Tee {
    pub(crate) limit: usize,
    pub(crate) done: OnComplete,
}

/// Streams `resp` back to the client as it arrives, with `extra` headers added. With a tee, the
/// bytes are also collected and recorded once complete; a body cut short on either side is
/// dropped, never recorded.
pub(crate) fn stream_back(
    state: &Arc<State>,
    route: &'static str,
    resp: reqwest::Response,
    tee: Option<Tee>,
    extra: HeaderMap,
) -> Response<Body> {
    let status = resp.status();
    let mut headers = end_to_end(resp.headers());
    for (k, v) in &extra {
        headers.insert(k.clone(), v.clone());
    }
    // A small channel: the pump reads the next chunk from the upstream only when the client has
    // room for it, so a slow client slows the upstream read instead of growing a buffer.
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(4);
    let state2 = state.clone();
    tokio::spawn(async move {
        let mut upstream = resp.bytes_stream();
        let mut acc: Option<Vec<u8>> = tee.as_ref().map(|_| Vec::new());
        loop {
            // A client that leaves while the upstream is silent (a long thought) is noticed at
            // once, not at the upstream's next byte: the upstream stream is dropped then.
            let next = tokio::select! {
                next = upstream.next() => next,
                () = tx.closed() => {
                    state2
                        .metrics
                        .inc("streams_aborted_total", &[("route", route), ("side", "client")]);
                    tracing::info!("client went away while the upstream was silent; nothing recorded");
                    return;
                }
            };
            match next {
                Some(Ok(chunk)) => {
                    if let (Some(buf), Some(t)) = (acc.as_mut(), tee.as_ref()) {
                        if buf.len() + chunk.len() > t.limit {
                            state2.metrics.inc(
                                "records_total",
                                &[("route", route), ("result", "too_large")],
                            );
                            acc = None;
                        } else {
                            buf.extend_from_slice(&chunk);
                        }
                    }
                    if tx.send(Ok(Frame::data(chunk))).await.is_err() {
                        state2.metrics.inc(
                            "streams_aborted_total",
                            &[("route", route), ("side", "client")],
                        );
                        tracing::info!("client went away mid-response; nothing recorded");
                        return;
                    }
                }
                Some(Err(e)) => {
                    state2.metrics.inc(
                        "streams_aborted_total",
                        &[("route", route), ("side", "upstream")],
                    );
                    tracing::warn!(cause = %error_chain(&e), "upstream response cut short; nothing recorded");
                    // An error frame makes the server abort the connection, so the client sees
                    // a truncated body, not a complete-looking one.
                    let _ = tx
                        .send(Err(std::io::Error::other("upstream response cut short")))
                        .await;
                    return;
                }
                None => break,
            }
        }
        if let (Some(buf), Some(t)) = (acc, tee) {
            // Recorded before the client sees the end of the body, so a client that sends its
            // next request as soon as this one ends finds the turn stored.
            (t.done)(buf).await;
        }
        drop(tx);
    });
    let body = StreamBody::new(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    }));
    let mut r = Response::new(BodyExt::boxed(body));
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_dropped() {
        let mut h = HeaderMap::new();
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, x-private"),
        );
        h.insert("x-private", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert("host", HeaderValue::from_static("127.0.0.1:8787"));
        h.insert("content-length", HeaderValue::from_static("12"));
        h.insert("x-api-key", HeaderValue::from_static("sk-ant-test"));
        h.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
        h.append("anthropic-beta", HeaderValue::from_static("a"));
        h.append("anthropic-beta", HeaderValue::from_static("b"));
        let out = end_to_end(&h);
        let mut names: Vec<&str> = out.keys().map(|k| k.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["anthropic-beta", "anthropic-version", "x-api-key"]);
        assert_eq!(out.get_all("anthropic-beta").iter().count(), 2);
    }
}
