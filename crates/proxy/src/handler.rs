//! The routes of the families the proxy reads (Messages, Chat, Responses, Gemini): read (and
//! decode), restore and repair, forward, stream back and record, and retry once on a
//! recoverable 400.

use std::sync::Arc;
use std::time::Instant;
use turnkeeper_prevent::wire::WireBody;

use bytes::{Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderValue};
use http::request::Parts;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use turnkeeper_guard::{StoredTurn, TurnKeys, TurnStore, WireFamily, WireTurn};
use turnkeeper_model::{BodyKind, Role, Transcript};
use turnkeeper_prevent::{ChangeAction, Options, Report, RequestChange, repair};
use turnkeeper_recover::{Action, Attempts, classify, recover_with};

use crate::State;
use crate::decode::{self, NotDecoded};
use crate::family::{Family, Route};
use crate::forward::{
    Tee, end_to_end, send_streaming, send_upstream, stream_back, unreachable_upstream,
};
use crate::http::{Body, full, proxy_error, set_header};
use crate::readings::{Keepable, Reading};

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

async fn read_bounded(mut body: Incoming, limit: usize, mut buf: BytesMut) -> Read {
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
    /// The body to send (decoded, when it came encoded).
    body: Bytes,
    /// The body is valid UTF-8 (it was read as a request of its family).
    text: bool,
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
    /// The model the path names (Gemini), for the rules and the recovery.
    model: Option<String>,
    /// Fold `system` messages into the user turn whatever the model (CX-02): the upstream
    /// has refused one.
    fold_system: bool,
}

impl Prepared {
    /// A body forwarded as it came.
    fn unchanged(body: Bytes, headers: &HeaderMap, route: &Route) -> Prepared {
        Prepared {
            body,
            text: false,
            rules: Vec::new(),
            changes: 0,
            restored: 0,
            betas: Vec::new(),
            store: TurnStore::in_memory(),
            sent_betas: betas_of(headers),
            model: route.model.clone(),
            fold_system: false,
        }
    }

    /// True when the body goes as it came.
    fn is_unchanged(&self) -> bool {
        self.changes == 0 && self.betas.is_empty()
    }

    /// Prevent's options for this request, as it was repaired.
    fn options(&self) -> Options<'_> {
        let mut o = Options {
            model: self.model.clone(),
            betas: self.sent_betas.clone(),
            store: Some(&self.store),
            ..Options::default()
        };
        if self.fold_system {
            o.policy.fold_system_messages = Some(true);
        }
        o
    }
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

/// Looks up the turns the assistant messages of a Messages request may be copies of.
async fn lookup(
    state: &State,
    route: &'static str,
    t: &turnkeeper_model::Transcript<'_>,
) -> TurnStore {
    let wanted: Vec<TurnKeys> = (0..t.messages.len())
        .filter(|&i| t.messages[i].role == Role::Assistant)
        .map(|i| TurnKeys::of(t, i))
        .filter(|k| !k.is_empty())
        .collect();
    let found = state.turns.lookup(&wanted).await;
    count_lookup(state, route, &found);
    found.store
}

/// The keys each assistant turn of a Chat or Responses request is found by in the turn store,
/// best first ([`turnkeeper_guard::WireTurn::keys`]): per Chat assistant message, its tool call
/// ids, else the hash of its text; per Responses reasoning item or item a response produced,
/// its `call_id`, then its `id`. From the body's one reading, which the repair then uses.
fn wire_wanted(body: &WireBody<'_>, text: &str) -> Vec<Vec<String>> {
    use turnkeeper_model::wire::{chat, responses};
    let mut wanted = Vec::new();
    match body {
        WireBody::Chat(body) => {
            for m in &body.messages {
                if m.role != chat::ChatRole::Assistant {
                    continue;
                }
                let ids: Vec<String> = m
                    .calls
                    .iter()
                    .filter_map(|c| c.id.map(|id| format!("chat:call:{}", id.decode(text))))
                    .collect();
                let keys = if ids.is_empty() {
                    match m.content {
                        chat::ChatContent::Text { text: t, .. } => {
                            turnkeeper_guard::wire_turn::text_key(&t.decode(text))
                                .map(|h| vec![format!("chat:text:{h}")])
                                .unwrap_or_default()
                        }
                        _ => Vec::new(),
                    }
                } else {
                    ids
                };
                if !keys.is_empty() {
                    wanted.push(keys);
                }
            }
        }
        WireBody::Responses(body) => {
            for it in &body.items {
                if it.kind != responses::ItemKind::Reasoning && !it.is_model_output() {
                    continue;
                }
                let mut keys = Vec::with_capacity(2);
                if let Some(c) = it.call_id {
                    keys.push(format!("responses:call:{}", c.decode(text)));
                }
                if let Some(id) = it.id {
                    keys.push(format!("responses:id:{}", id.decode(text)));
                }
                if !keys.is_empty() {
                    wanted.push(keys);
                }
            }
        }
    }
    wanted
}

/// The keys the first `functionCall` of each model content of a Gemini request is found by in
/// the turn store, when it has no `thoughtSignature` (the call GM-01 signs:
/// [`turnkeeper_guard::gemini_call_keys`], its id, then its name and arguments). A request whose
/// calls are all signed asks the store nothing.
fn gemini_wanted(t: &turnkeeper_model::Transcript<'_>) -> Vec<Vec<String>> {
    (0..t.messages.len())
        .filter(|&i| t.messages[i].role == Role::Assistant)
        .filter_map(|i| {
            t.blocks_of(i)
                .iter()
                .find(|b| b.kind() == turnkeeper_model::BlockKind::ToolCall)
        })
        .filter(|b| b.signature.is_none())
        .map(|b| {
            let id = b.id.map(|s| s.decode(t.src));
            let name = b.name.map(|s| s.decode(t.src)).unwrap_or_default();
            let args = b.content.map(|c| c.get(t.src));
            turnkeeper_guard::gemini_call_keys(id.as_deref(), &name, args)
        })
        .filter(|k| !k.is_empty())
        .collect()
}

/// Counts a lookup's hits and misses (or its failure).
fn count_lookup(state: &State, route: &'static str, found: &crate::turns::Found) {
    if found.error {
        state.metrics.inc(
            "store_lookups_total",
            &[("route", route), ("result", "error")],
        );
    } else {
        state.metrics.add(
            "store_lookups_total",
            &[("route", route), ("result", "hit")],
            found.hits,
        );
        state.metrics.add(
            "store_lookups_total",
            &[("route", route), ("result", "miss")],
            found.misses,
        );
    }
    tracing::debug!(
        hits = found.hits,
        misses = found.misses,
        "turn store lookup"
    );
}

/// Repairs `bytes` when they are a request of the route's family. `Err(reason)` means: forward
/// unchanged.
async fn prepare(
    state: &State,
    route: &Route,
    headers: &HeaderMap,
    bytes: Bytes,
) -> Result<Prepared, (&'static str, Bytes)> {
    let label = route.family.label();
    let Ok(text) = turnkeeper_model::utf8(&bytes) else {
        return Err(("unparsable", bytes));
    };
    let mut prepared = Prepared::unchanged(bytes.clone(), headers, route);
    prepared.text = true;
    prepared.fold_system = route.family == Family::Messages
        && state
            .messages_refuse_system
            .load(std::sync::atomic::Ordering::Relaxed);
    let repaired = match route.family {
        Family::Messages | Family::Gemini => {
            // Read against the last request of the conversation when the proxy kept it: the
            // messages it already read are compared, not scanned again (`readings`).
            let Some(reading) = read_kept::<Transcript<'_>>(state, route, text) else {
                return Err(("unparsable", bytes));
            };
            let t = &reading.value;
            let repaired = if t.body != BodyKind::Request {
                None
            } else {
                if route.family == Family::Messages {
                    prepared.store = lookup(state, label, t).await;
                } else {
                    let wanted = gemini_wanted(t);
                    if !wanted.is_empty() {
                        let found = state.turns.lookup_wire(&wanted).await;
                        count_lookup(state, label, &found);
                        prepared.store = found.store;
                    }
                }
                Some(repair(t, &prepared.options()))
            };
            keep_reading(state, &bytes, reading);
            match repaired {
                Some(r) => r,
                None => return Err(("not_a_request", bytes)),
            }
        }
        Family::Chat | Family::Responses => {
            // Read once (against the conversation's last request when it was kept): the turn
            // ids for the store, then the repair on the same reading.
            let Some(reading) = read_kept::<WireBody<'_>>(state, route, text) else {
                return Err(("unparsable", bytes));
            };
            let body = &reading.value;
            let wanted = wire_wanted(body, text);
            let found = state.turns.lookup_wire(&wanted).await;
            count_lookup(state, label, &found);
            prepared.store = found.store;
            let repaired =
                turnkeeper_prevent::wire::repair_wire_read(text, body, &prepared.options());
            keep_reading(state, &bytes, reading);
            repaired
        }
    };
    let repaired = match repaired {
        Ok(r) => r,
        Err(turnkeeper_prevent::PreventError::Model(e)) => {
            tracing::debug!(error = %e, "not a readable request; forwarded unchanged");
            return Err(("unparsable", bytes));
        }
        Err(e) => {
            // A guard violation is a turnkeeper bug: the repair failed closed, so the request
            // goes as it came.
            tracing::error!(error = %e, "repair failed closed; forwarded unchanged");
            return Err(("guard", bytes));
        }
    };
    let (rules, restored, betas) = account(state, label, &repaired.report);
    prepared.changes = repaired.report.changes.len();
    prepared.rules = rules;
    prepared.restored = restored;
    prepared.betas = betas;
    prepared.body = match repaired.body {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(s) => Bytes::from(s),
    };
    Ok(prepared)
}

/// Reads `text` as the route's format, against the kept reading of the conversation's last
/// request when there is one, and counts what was moved over; `None` (logged) when it does not
/// read.
fn read_kept<'a, T: Keepable<'a>>(
    state: &State,
    route: &Route,
    text: &'a str,
) -> Option<Reading<T>> {
    match state.readings.read::<T>(text, route.family.format()) {
        Ok(r) => {
            if r.reused > 0 {
                state.metrics.add(
                    "messages_reused_total",
                    &[("route", route.family.label())],
                    r.reused as u64,
                );
            }
            Some(r)
        }
        Err(e) => {
            tracing::debug!(error = %e, "not a readable request; forwarded unchanged");
            None
        }
    }
}

/// Keeps the client's body and its reading for its next request (what the client sent, not what
/// was repaired: the next request carries the client's bytes again); a body let go goes back to
/// the kept buffers.
fn keep_reading<'a, T: Keepable<'a>>(state: &State, body: &Bytes, reading: Reading<T>) {
    state
        .readings
        .put(body.clone(), reading, |b| state.buffers.give(b));
}

/// Counts and logs what a repair did: the rule ids (in order, without repeats), the turns
/// restored, the betas it asks for.
fn account(
    state: &State,
    route: &'static str,
    report: &Report,
) -> (Vec<String>, usize, Vec<String>) {
    let mut rules: Vec<String> = Vec::new();
    let mut restored = 0;
    for c in &report.changes {
        let id = c.rule.to_string();
        state
            .metrics
            .inc("repairs_total", &[("route", route), ("rule", id.as_str())]);
        if c.action == ChangeAction::RestoredMessage {
            restored += 1;
        }
        tracing::info!(rule = %c.rule, action = %c.action, path = %c.path, reason = %c.reason, "repaired");
        if !rules.contains(&id) {
            rules.push(id);
        }
    }
    if restored > 0 {
        state
            .metrics
            .add("restores_total", &[("route", route)], restored as u64);
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
    (rules, restored, betas)
}

/// The headers for the upstream: the client's end-to-end headers, without `accept-encoding`
/// (the proxy reads the response to record it), with `extra_betas` appended; without
/// `content-encoding` when the body sent is the decoded one.
fn upstream_headers(parts: &Parts, extra_betas: &[String], decoded: bool) -> HeaderMap {
    let mut h = end_to_end(&parts.headers);
    h.remove(header::ACCEPT_ENCODING);
    if decoded {
        h.remove(header::CONTENT_ENCODING);
    }
    for b in extra_betas {
        let already = betas_of(&h).iter().any(|x| x == b);
        if !already && let Ok(v) = HeaderValue::from_str(b) {
            h.append("anthropic-beta", v);
        }
    }
    h
}

/// A tee that records the response in the turn store once it is complete (the families the
/// store reads: Messages, Chat Completions, Responses, Gemini).
fn recorder(state: &Arc<State>, family: Family) -> Option<Tee> {
    match family {
        Family::Messages => {}
        Family::Chat | Family::Responses | Family::Gemini => {
            return Some(wire_recorder(state, family));
        }
    }
    let st = state.clone();
    let route = family.label();
    Some(Tee {
        limit: state.config.max_body,
        done: Box::new(move |bytes: Vec<u8>| {
            Box::pin(async move {
                let Ok(text) = String::from_utf8(bytes) else {
                    st.metrics.inc(
                        "records_total",
                        &[("route", route), ("result", "not_a_turn")],
                    );
                    return;
                };
                match StoredTurn::from_response(&text) {
                    Ok(turn) => {
                        let id = turn.response_id.clone().unwrap_or_default();
                        match st.turns.record(turn).await {
                            Ok(()) => {
                                st.metrics.inc(
                                    "records_total",
                                    &[("route", route), ("result", "stored")],
                                );
                                tracing::debug!(response = %id, "turn recorded");
                            }
                            Err(e) => {
                                st.metrics
                                    .inc("records_total", &[("route", route), ("result", "error")]);
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
                        st.metrics
                            .inc("records_total", &[("route", route), ("result", result)]);
                        tracing::debug!(error = %e, "response not recorded");
                    }
                }
            })
        }),
    })
}

/// The tee of a Chat, Responses or Gemini route: the complete response (JSON, or a stream that
/// finished: a `finish_reason`, `response.completed`, a Gemini `finishReason`) becomes a
/// [`WireTurn`]; anything less is counted and dropped.
fn wire_recorder(state: &Arc<State>, family: Family) -> Tee {
    let st = state.clone();
    let route = family.label();
    let wire = match family {
        Family::Chat => WireFamily::Chat,
        Family::Gemini => WireFamily::Gemini,
        _ => WireFamily::Responses,
    };
    Tee {
        limit: state.config.max_body,
        done: Box::new(move |bytes: Vec<u8>| {
            Box::pin(async move {
                let count = |result: &'static str| {
                    st.metrics
                        .inc("records_total", &[("route", route), ("result", result)]);
                };
                let Ok(text) = turnkeeper_model::utf8(&bytes) else {
                    count("not_a_turn");
                    return;
                };
                let turn = match WireTurn::from_response(text, wire) {
                    Ok(t) => t,
                    Err(e) => {
                        let why = e.to_string();
                        let cut = why.contains("cut short")
                            || why.contains("ended with")
                            || why.contains("only a completed response");
                        count(if cut { "incomplete" } else { "not_a_turn" });
                        tracing::debug!(error = %why, "response not recorded");
                        return;
                    }
                };
                let id = turn.response_id.clone().unwrap_or_default();
                match st.turns.record_wire(turn).await {
                    Ok(()) => {
                        count("stored");
                        tracing::debug!(response = %id, "turn recorded");
                    }
                    Err(e) => {
                        count("error");
                        tracing::warn!(error = %e, "turn store write failed");
                    }
                }
            })
        }),
    }
}

/// Counts a client that left before the response headers went back: hyper drops the handler's
/// future when the connection closes, and this guard's drop is the only trace of it.
struct ClientGone<'a> {
    state: &'a State,
    route: &'static str,
    armed: bool,
}

impl Drop for ClientGone<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.state
                .metrics
                .inc("clients_gone_total", &[("route", self.route)]);
            tracing::info!("client went away before the response headers; nothing recorded");
        }
    }
}

/// Handles a `POST` to a route of `route.family`.
pub(crate) async fn handle(
    state: &Arc<State>,
    req: Request<Incoming>,
    route: Route,
) -> Response<Body> {
    let family = route.family;
    let label = family.label();
    let mut gone = ClientGone {
        state,
        route: label,
        armed: true,
    };
    let response = respond(state, req, &route).await;
    gone.armed = false;
    response
}

async fn respond(state: &Arc<State>, req: Request<Incoming>, route: &Route) -> Response<Body> {
    let family = route.family;
    let label = family.label();
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let hint = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let limit = state.config.max_body;
    let buf = state.buffers.take(hint.unwrap_or(0).min(limit));
    let raw = match read_bounded(body, limit, buf).await {
        Read::Whole(b) => b,
        Read::TooLarge(head, rest) => {
            state.metrics.inc(
                "forwarded_unchanged_total",
                &[("route", label), ("reason", "too_large")],
            );
            tracing::info!(
                limit = state.config.max_body,
                "body over the limit; forwarded unchanged"
            );
            return forward_large(state, family, &parts, head, rest).await;
        }
        Read::Failed(e) => {
            tracing::info!(error = %e, "request body could not be read");
            return proxy_error(
                family,
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
    };
    // How much of the time before forwarding was the client's body arriving (logged below).
    let received = started.elapsed();
    // A body sent with a Content-Encoding is judged decoded; it goes as it came when it needs
    // nothing, decoded (the header dropped) when it was repaired.
    let encodings = decode::encodings(&parts.headers);
    let decoded = if encodings.is_empty() {
        Ok(raw.clone())
    } else {
        match decode::decode(&raw, &encodings, state.config.max_body) {
            Ok(plain) => {
                state.metrics.inc(
                    "decoded_total",
                    &[("route", label), ("encoding", &encodings.join(","))],
                );
                Ok(plain)
            }
            Err(why) => {
                let reason = match why {
                    NotDecoded::TooLarge => "too_large",
                    NotDecoded::Unknown | NotDecoded::Broken => "undecodable",
                };
                tracing::info!(encoding = %encodings.join(","), ?why, "body not decoded; forwarded unchanged");
                Err(reason)
            }
        }
    };
    let (prepared, reason) = match decoded {
        Err(reason) => (
            Prepared::unchanged(raw.clone(), &parts.headers, route),
            Some(reason),
        ),
        Ok(plain) => match prepare(state, route, &parts.headers, plain).await {
            Ok(p) => {
                let reason = p.is_unchanged().then_some("valid");
                (p, reason)
            }
            Err((reason, plain)) => (
                Prepared::unchanged(plain, &parts.headers, route),
                Some(reason),
            ),
        },
    };
    if let Some(reason) = reason {
        state.metrics.inc(
            "forwarded_unchanged_total",
            &[("route", label), ("reason", reason)],
        );
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
    // What goes: the client's own bytes when nothing changed (encoded or not), else the
    // repaired body, decoded.
    let kept = raw.clone();
    let (sent, decoded_sent) = if prepared.is_unchanged() {
        (raw, false)
    } else {
        // Not sent: let it go now, so that its buffer can come back below.
        drop(raw);
        (prepared.body.clone(), !encodings.is_empty())
    };
    let headers = upstream_headers(&parts, &prepared.betas, decoded_sent);
    let added = started.elapsed();
    state
        .metrics
        .observe_added(family, added, added.saturating_sub(received));
    tracing::debug!(
        added_us = added.as_micros() as u64,
        receiving_us = received.as_micros() as u64,
        bytes = sent.len(),
        changes = prepared.changes,
        "forwarding"
    );
    let resp = match send_upstream(
        state,
        family,
        Method::POST,
        &parts.uri,
        headers.clone(),
        sent,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => return unreachable_upstream(state, family, label, &e),
    };
    if resp.status() == StatusCode::BAD_REQUEST && state.config.recover && prepared.text {
        return recover_400(state, route, &parts, headers, prepared, resp, extra).await;
    }
    let tee = if resp.status().is_success() {
        recorder(state, family)
    } else {
        None
    };
    let back = stream_back(state, label, resp, tee, extra);
    // The body was sent: when nothing else holds it now, its buffer serves the next request.
    drop(prepared);
    state.buffers.give(kept);
    back
}

/// A body over the limit: what was read, then the rest, streamed upstream unchanged.
async fn forward_large(
    state: &Arc<State>,
    family: Family,
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
    let label = family.label();
    match send_streaming(state, family, Method::POST, &parts.uri, headers, body).await {
        Ok(resp) => {
            let tee = if resp.status().is_success() {
                recorder(state, family)
            } else {
                None
            };
            stream_back(state, label, resp, tee, HeaderMap::new())
        }
        Err(e) => unreachable_upstream(state, family, label, &e),
    }
}

/// The upstream said 400: classify it, and when a recovery changes the body, send that once.
/// The request is the one `prepare` read and repaired (`prepared`): nothing is read again.
async fn recover_400(
    state: &Arc<State>,
    route: &Route,
    parts: &Parts,
    headers: HeaderMap,
    prepared: Prepared,
    resp: reqwest::Response,
    mut extra: HeaderMap,
) -> Response<Body> {
    let family = route.family;
    let label = family.label();
    let status = resp.status();
    let upstream_headers = end_to_end(resp.headers());
    let error_body = match read_limited(resp, MAX_ERROR_BODY).await {
        Ok(b) => b,
        Err(partial) => {
            // Too long or cut short: hand back what came, as it came.
            state.metrics.inc(
                "recovery_skipped_total",
                &[("route", label), ("reason", "failed")],
            );
            return complete_response(status, upstream_headers, partial, extra);
        }
    };
    let (retried, action, kind) = match retry_once(
        state,
        family,
        parts,
        headers,
        &prepared,
        status,
        &error_body,
    )
    .await
    {
        Ok(sent) => sent,
        Err(reason) => {
            state.metrics.inc(
                "recovery_skipped_total",
                &[("route", label), ("reason", reason)],
            );
            return complete_response(status, upstream_headers, error_body, extra);
        }
    };
    let class = if retried.status().is_success() {
        "2xx"
    } else {
        "error"
    };
    state.metrics.inc(
        "recoveries_total",
        &[("route", label), ("action", action), ("result", class)],
    );
    tracing::info!(
        kind,
        action,
        status = retried.status().as_u16(),
        "recovered and retried once"
    );
    set_header(&mut extra, "x-turnkeeper-recovered", action);
    set_header(&mut extra, "x-turnkeeper-error-kind", kind);
    let tee = if retried.status().is_success() {
        recorder(state, family)
    } else {
        None
    };
    stream_back(state, label, retried, tee, extra)
}

/// Classifies an upstream 400 (`status`, `error_body`) and, when recovery plans an edit of the
/// body that changes it, sends the recovered request once. `Ok` holds the retried response, the
/// action and the error kind; `Err` why the 400 goes back as it came (the metric's reason).
async fn retry_once(
    state: &Arc<State>,
    family: Family,
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
    // `prepare` read the body as UTF-8 (`prepared.text`), so this never copies.
    let Ok(request) = turnkeeper_model::utf8(&prepared.body) else {
        return Err("failed");
    };
    let opts = prepared.options();
    let edits = |r: &turnkeeper_recover::Recovered| {
        r.sends()
            && !matches!(
                r.action,
                Action::Retry { .. }
                    | Action::FixConfig { .. }
                    | Action::Compact
                    | Action::GiveUp { .. }
            )
    };
    // A Chat body whose model the rules do not take for DeepSeek's or Kimi's own API (a
    // gateway's alias, a router's `vendor/model`) is judged by the rules of the API whose exact
    // error came back, first: that API has said it wants the reasoning back.
    let vendor = match (family, judged_by(&text)) {
        (Family::Chat, Some(model)) => {
            let mut o = opts.clone();
            o.model = Some(model.to_owned());
            match recover_with(request, &diagnosis, &mut Attempts::new(), &o) {
                Ok(r) if edits(&r) => {
                    tracing::info!(
                        model,
                        "recovered under the rules of the API the error came from"
                    );
                    Some(r)
                }
                _ => None,
            }
        }
        _ => None,
    };
    let recovered = match vendor {
        Some(r) => r,
        None => match recover_with(request, &diagnosis, &mut Attempts::new(), &opts) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "recovery failed; the 400 goes back as it came");
                return Err("failed");
            }
        },
    };
    // A Responses body the recovery hands back (drop or strip items: OpenAI's "provided without
    // its required following item" and its kin) is repaired, with the turn store, under OpenAI's
    // own rules (the body may name an Azure deployment or a gateway's alias): the API that
    // answered is OpenAI's, and it said what it refuses.
    let recovered = if family == Family::Responses
        && !edits(&recovered)
        && matches!(
            recovered.action,
            Action::DropItems { .. }
                | Action::StripItemIds { .. }
                | Action::RestoreReasoning { .. }
        ) {
        let mut o = opts.clone();
        o.model = Some(OPENAI_RULES_MODEL.to_owned());
        match turnkeeper_prevent::wire::repair_wire(request, family.format(), &o) {
            Ok(r) if !r.report.changes.is_empty() => {
                for c in &r.report.changes {
                    tracing::info!(rule = %c.rule, action = %c.action, path = %c.path, reason = %c.reason, "recovery change");
                }
                let action = recovered.action.name();
                let body = Bytes::from(r.body.into_owned());
                headers.remove(header::CONTENT_ENCODING);
                let retried = match send_upstream(
                    state,
                    family,
                    Method::POST,
                    &parts.uri,
                    headers,
                    body,
                )
                .await
                {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::warn!(cause = %crate::forward::error_chain(&e), "the retry could not be sent; the 400 goes back");
                        return Err("failed");
                    }
                };
                return Ok((retried, action, kind));
            }
            _ => recovered,
        }
    } else {
        recovered
    };
    if !edits(&recovered) {
        tracing::info!(
            kind,
            action = recovered.action.name(),
            "not repairable here; the 400 goes back"
        );
        return Err("not_repairable");
    }
    if family == Family::Messages
        && matches!(&recovered.action, Action::Repair { rules, .. } if rules.contains(&turnkeeper_prevent::RuleId::Cx02))
        && !state
            .messages_refuse_system
            .swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        tracing::info!(
            "the upstream refuses `system` messages (CX-02): they are folded into the user turn from now on"
        );
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
    // The recovered body is always the decoded one.
    headers.remove(header::CONTENT_ENCODING);
    let body = Bytes::from(recovered.body);
    let retried = match send_upstream(state, family, Method::POST, &parts.uri, headers, body).await
    {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(cause = %crate::forward::error_chain(&e), "the retry could not be sent; the 400 goes back");
            return Err("failed");
        }
    };
    Ok((retried, action, kind))
}

/// The model whose rules judge a Responses request after OpenAI's API refused it.
const OPENAI_RULES_MODEL: &str = "gpt-5";

/// The model whose rules judge a Chat request when the upstream answered with DeepSeek's or
/// Kimi's own error text for a missing `reasoning_content` (api-rules: DS-03, KM-01).
fn judged_by(error: &str) -> Option<&'static str> {
    if error.contains("Missing `reasoning_content` field") {
        Some("deepseek-reasoner")
    } else if error.contains("reasoning_content is missing in assistant tool call message") {
        Some("kimi-k2-thinking")
    } else {
        None
    }
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
