//! `POST /v1/messages`: read, restore and repair, forward, stream back and record, and retry once
//! on a recoverable 400.

use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderValue};
use http::request::Parts;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use turnkeeper_guard::{StoredTurn, TurnKeys, TurnStore};
use turnkeeper_model::{BodyKind, Format, FormatHint, Role, read};
use turnkeeper_prevent::{ChangeAction, Options, RequestChange, repair};
use turnkeeper_recover::{Action, Attempts, classify, recover_with};

use crate::forward::{
    Tee, end_to_end, send_upstream, set_header, stream_back, unreachable_upstream,
};
use crate::{Body, State, full};

/// Error bodies are small; a 400 longer than this is passed back without being classified.
const MAX_ERROR_BODY: usize = 1024 * 1024;

/// The request body as read.
enum Read {
    /// Whole, within the limit.
    Whole(Bytes),
    /// Over the limit: what was read, and the rest still to come.
    TooLarge(Vec<Bytes>, Incoming),
    /// The client went away or sent a broken body.
    Failed(hyper::Error),
}

async fn read_bounded(mut body: Incoming, limit: usize, hint: Option<usize>) -> Read {
    let mut buf = BytesMut::with_capacity(hint.unwrap_or(0).min(limit));
    let mut chunks: Vec<Bytes> = Vec::new();
    loop {
        match body.frame().await {
            None => break,
            Some(Err(e)) => return Read::Failed(e),
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                if buf.len() + data.len() > limit {
                    chunks.push(buf.freeze());
                    chunks.push(data);
                    return Read::TooLarge(chunks, body);
                }
                buf.extend_from_slice(&data);
            }
        }
    }
    Read::Whole(buf.freeze())
}

/// The body to send, and what was done to it.
struct Prepared {
    body: Bytes,
    /// Rule ids of the changes made, in order, without repeats.
    rules: Vec<String>,
    changes: usize,
    restored: usize,
    /// `anthropic-beta` values the repair asks for.
    betas: Vec<String>,
    /// The turns found for this request, for a recovery that restores from the store.
    store: TurnStore,
    /// The betas the request is sent with (prevent's options).
    sent_betas: Vec<String>,
}

fn betas_of(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all("anthropic-beta")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Repairs `bytes` when they are a Messages request. `Err(reason)` means: forward unchanged.
async fn prepare(
    state: &State,
    headers: &HeaderMap,
    bytes: Bytes,
) -> Result<Prepared, (&'static str, Bytes)> {
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err(("unparsable", bytes));
    };
    let t = match read(text, FormatHint::Exactly(Format::Anthropic)) {
        Ok(t) if t.body == BodyKind::Request => t,
        Ok(_) => return Err(("not_a_request", bytes)),
        Err(e) => {
            tracing::debug!(error = %e, "not a readable Messages request; forwarded unchanged");
            return Err(("unparsable", bytes));
        }
    };
    let wanted: Vec<TurnKeys> = (0..t.messages.len())
        .filter(|&i| t.messages[i].role == Role::Assistant)
        .map(|i| TurnKeys::of(&t, i))
        .filter(|k| !k.is_empty())
        .collect();
    let found = state.turns.lookup(&wanted).await;
    if found.error {
        state
            .metrics
            .inc("store_lookups_total", &[("result", "error")]);
    } else {
        state
            .metrics
            .add("store_lookups_total", &[("result", "hit")], found.hits);
        state
            .metrics
            .add("store_lookups_total", &[("result", "miss")], found.misses);
    }
    tracing::debug!(
        hits = found.hits,
        misses = found.misses,
        "turn store lookup"
    );
    let sent_betas = betas_of(headers);
    let opts = Options {
        betas: sent_betas.clone(),
        store: Some(&found.store),
        ..Options::default()
    };
    let repaired = match repair(&t, &opts) {
        Ok(r) => r,
        Err(e) => {
            // A guard violation is a turnkeeper bug: the repair failed closed, so the request
            // goes as it came.
            tracing::error!(error = %e, "repair failed closed; forwarded unchanged");
            return Err(("guard", bytes));
        }
    };
    let report = repaired.report;
    let mut rules: Vec<String> = Vec::new();
    let mut restored = 0;
    for c in &report.changes {
        let id = c.rule.to_string();
        state.metrics.inc("repairs_total", &[("rule", id.as_str())]);
        if c.action == ChangeAction::RestoredMessage {
            restored += 1;
        }
        tracing::info!(rule = %c.rule, action = %c.action, path = %c.path, reason = %c.reason, "repaired");
        if !rules.contains(&id) {
            rules.push(id);
        }
    }
    if restored > 0 {
        state.metrics.add("restores_total", &[], restored as u64);
    }
    let betas = report
        .request_changes
        .iter()
        .filter_map(|c| match c {
            RequestChange::AddBeta { value, .. } => Some(value.clone()),
            _ => None,
        })
        .collect();
    for f in report
        .findings_left
        .iter()
        .filter(|f| f.severity == turnkeeper_prevent::Severity::Error)
    {
        tracing::info!(rule = %f.rule, path = %f.path, "left for the provider to judge: {}", f.message);
    }
    let body = match repaired.body {
        std::borrow::Cow::Borrowed(_) => bytes.clone(),
        std::borrow::Cow::Owned(s) => Bytes::from(s),
    };
    Ok(Prepared {
        body,
        changes: report.changes.len(),
        rules,
        restored,
        betas,
        store: found.store,
        sent_betas,
    })
}

/// The headers for the upstream: the client's end-to-end headers, without `accept-encoding`
/// (the proxy reads the response to record it), with `extra_betas` appended.
fn upstream_headers(parts: &Parts, extra_betas: &[String]) -> HeaderMap {
    let mut h = end_to_end(&parts.headers);
    h.remove(header::ACCEPT_ENCODING);
    for b in extra_betas {
        let already = betas_of(&h).iter().any(|x| x == b);
        if !already && let Ok(v) = HeaderValue::from_str(b) {
            h.append("anthropic-beta", v);
        }
    }
    h
}

async fn send(
    state: &State,
    parts: &Parts,
    headers: HeaderMap,
    body: Bytes,
) -> Result<reqwest::Response, reqwest::Error> {
    send_upstream(state, Method::POST, &parts.uri, headers, body).await
}

/// A tee that records the response in the turn store once it is complete.
fn recorder(state: &Arc<State>) -> Tee {
    let st = state.clone();
    Tee {
        limit: state.config.max_body,
        done: Box::new(move |bytes: Vec<u8>| {
            Box::pin(async move {
                let Ok(text) = String::from_utf8(bytes) else {
                    st.metrics.inc("records_total", &[("result", "not_a_turn")]);
                    return;
                };
                match StoredTurn::from_response(&text) {
                    Ok(turn) => {
                        let id = turn.response_id.clone().unwrap_or_default();
                        match st.turns.record(turn).await {
                            Ok(()) => {
                                st.metrics.inc("records_total", &[("result", "stored")]);
                                tracing::debug!(response = %id, "turn recorded");
                            }
                            Err(e) => {
                                st.metrics.inc("records_total", &[("result", "error")]);
                                tracing::warn!(error = %e, "turn store write failed");
                            }
                        }
                    }
                    Err(e) => {
                        let result = if e.to_string().contains("message_stop")
                            || e.to_string().contains("error event")
                        {
                            "incomplete"
                        } else {
                            "not_a_turn"
                        };
                        st.metrics.inc("records_total", &[("result", result)]);
                        tracing::debug!(error = %e, "response not recorded");
                    }
                }
            })
        }),
    }
}

/// Handles `POST /v1/messages`.
pub(crate) async fn handle(state: &Arc<State>, req: Request<Incoming>) -> Response<Body> {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let hint = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let bytes = match read_bounded(body, state.config.max_body, hint).await {
        Read::Whole(b) => b,
        Read::TooLarge(head, rest) => {
            state
                .metrics
                .inc("forwarded_unchanged_total", &[("reason", "too_large")]);
            tracing::info!(
                limit = state.config.max_body,
                "body over the limit; forwarded unchanged"
            );
            return forward_large(state, &parts, head, rest).await;
        }
        Read::Failed(e) => {
            tracing::info!(error = %e, "request body could not be read");
            return crate::proxy_error(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
    };
    let (prepared, reason) = match prepare(state, &parts.headers, bytes).await {
        Ok(p) => {
            let reason = if p.changes == 0 && p.betas.is_empty() {
                Some("valid")
            } else {
                None
            };
            (p, reason)
        }
        Err((reason, bytes)) => (
            Prepared {
                body: bytes,
                rules: Vec::new(),
                changes: 0,
                restored: 0,
                betas: Vec::new(),
                store: TurnStore::in_memory(),
                sent_betas: betas_of(&parts.headers),
            },
            Some(reason),
        ),
    };
    if let Some(reason) = reason {
        state
            .metrics
            .inc("forwarded_unchanged_total", &[("reason", reason)]);
    }
    let mut extra = HeaderMap::new();
    if !prepared.rules.is_empty() {
        set_header(
            &mut extra,
            "x-turnkeeper-repaired",
            &prepared.rules.join(","),
        );
    }
    if prepared.restored > 0 {
        set_header(
            &mut extra,
            "x-turnkeeper-restored",
            &prepared.restored.to_string(),
        );
    }
    let headers = upstream_headers(&parts, &prepared.betas);
    let added = started.elapsed();
    state.metrics.observe_added(added);
    tracing::debug!(
        added_us = added.as_micros() as u64,
        bytes = prepared.body.len(),
        changes = prepared.changes,
        "forwarding"
    );
    let resp = match send(state, &parts, headers.clone(), prepared.body.clone()).await {
        Ok(r) => r,
        Err(e) => return unreachable_upstream(state, &e),
    };
    if resp.status() == StatusCode::BAD_REQUEST && state.config.recover {
        return recover_400(state, &parts, headers, prepared, resp, extra).await;
    }
    let tee = resp.status().is_success().then(|| recorder(state));
    stream_back(state, resp, tee, extra)
}

/// A body over the limit: what was read, then the rest, streamed upstream unchanged.
async fn forward_large(
    state: &Arc<State>,
    parts: &Parts,
    head: Vec<Bytes>,
    rest: Incoming,
) -> Response<Body> {
    use futures_util::StreamExt;
    let head = futures_util::stream::iter(head.into_iter().map(Ok::<_, hyper::Error>));
    let stream = head.chain(rest.into_data_stream());
    let mut headers = end_to_end(&parts.headers);
    headers.remove(header::ACCEPT_ENCODING);
    let body = reqwest::Body::wrap_stream(stream);
    match send_upstream(state, Method::POST, &parts.uri, headers, body).await {
        Ok(resp) => {
            let tee = resp.status().is_success().then(|| recorder(state));
            stream_back(state, resp, tee, HeaderMap::new())
        }
        Err(e) => unreachable_upstream(state, &e),
    }
}

/// The upstream said 400: classify it, and when a recovery changes the body, send that once.
async fn recover_400(
    state: &Arc<State>,
    parts: &Parts,
    headers: HeaderMap,
    prepared: Prepared,
    resp: reqwest::Response,
    mut extra: HeaderMap,
) -> Response<Body> {
    let status = resp.status();
    let upstream_headers = end_to_end(resp.headers());
    let error_body = match read_limited(resp, MAX_ERROR_BODY).await {
        Ok(b) => b,
        Err(partial) => {
            // Too long or cut short: hand back what came, as it came.
            state
                .metrics
                .inc("recovery_skipped_total", &[("reason", "failed")]);
            return complete_response(status, upstream_headers, partial, extra);
        }
    };
    let (retried, action, kind) =
        match retry_once(state, parts, headers, &prepared, status, &error_body).await {
            Ok(sent) => sent,
            Err(reason) => {
                state
                    .metrics
                    .inc("recovery_skipped_total", &[("reason", reason)]);
                return complete_response(status, upstream_headers, error_body, extra);
            }
        };
    let class = if retried.status().is_success() {
        "2xx"
    } else {
        "error"
    };
    state
        .metrics
        .inc("recoveries_total", &[("action", action), ("result", class)]);
    tracing::info!(
        kind,
        action,
        status = retried.status().as_u16(),
        "recovered and retried once"
    );
    set_header(&mut extra, "x-turnkeeper-recovered", action);
    set_header(&mut extra, "x-turnkeeper-error-kind", kind);
    let tee = retried.status().is_success().then(|| recorder(state));
    stream_back(state, retried, tee, extra)
}

/// Classifies an upstream 400 (`status`, `error_body`) and, when recovery plans an edit of the
/// body that changes it, sends the recovered request once. `Ok` holds the retried response, the
/// action and the error kind; `Err` why the 400 goes back as it came (the metric's reason).
async fn retry_once(
    state: &Arc<State>,
    parts: &Parts,
    mut headers: HeaderMap,
    prepared: &Prepared,
    status: StatusCode,
    error_body: &Bytes,
) -> Result<(reqwest::Response, &'static str, &'static str), &'static str> {
    let text = String::from_utf8_lossy(error_body);
    let diagnosis = classify(Some(status.as_u16()), &text);
    let kind = diagnosis.kind.as_str();
    tracing::info!(kind, "upstream 400 classified");
    let request = String::from_utf8_lossy(&prepared.body);
    let opts = Options {
        betas: prepared.sent_betas.clone(),
        store: Some(&prepared.store),
        ..Options::default()
    };
    let mut attempts = Attempts::new();
    let recovered = match recover_with(&request, &diagnosis, &mut attempts, &opts) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "recovery failed; the 400 goes back as it came");
            return Err("failed");
        }
    };
    let edits = !matches!(
        recovered.action,
        Action::Retry { .. } | Action::FixConfig { .. } | Action::Compact | Action::GiveUp { .. }
    );
    if !recovered.sends() || !edits {
        tracing::info!(
            kind,
            action = recovered.action.name(),
            "not repairable here; the 400 goes back"
        );
        return Err("not_repairable");
    }
    if recovered.body.as_bytes() == prepared.body.as_ref() && recovered.headers.is_empty() {
        return Err("no_change");
    }
    let action = recovered.action.name();
    for c in &recovered.report.changes {
        tracing::info!(rule = %c.rule, action = %c.action, path = %c.path, reason = %c.reason, "recovery change");
    }
    for (k, v) in &recovered.headers {
        if k.eq_ignore_ascii_case("anthropic-beta") {
            let have = betas_of(&headers);
            if !have.iter().any(|b| b == v)
                && let Ok(v) = HeaderValue::from_str(v)
            {
                headers.append("anthropic-beta", v);
            }
        }
    }
    let retried = match send(state, parts, headers, Bytes::from(recovered.body)).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "the retry could not be sent; the 400 goes back");
            return Err("failed");
        }
    };
    Ok((retried, action, kind))
}

/// Reads a response body up to `limit`; `Err` carries what was read when it is longer or cut.
async fn read_limited(resp: reqwest::Response, limit: usize) -> Result<Bytes, Bytes> {
    use futures_util::StreamExt;
    let mut buf = BytesMut::new();
    let mut s = resp.bytes_stream();
    while let Some(chunk) = s.next().await {
        match chunk {
            Ok(c) if buf.len() + c.len() <= limit => buf.extend_from_slice(&c),
            Ok(c) => {
                buf.extend_from_slice(&c);
                return Err(buf.freeze());
            }
            Err(_) => return Err(buf.freeze()),
        }
    }
    Ok(buf.freeze())
}

fn complete_response(
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    extra: HeaderMap,
) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    for (k, v) in &extra {
        r.headers_mut().insert(k.clone(), v.clone());
    }
    r
}
