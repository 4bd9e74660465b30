//! The proxy's turn store: a bounded [`TurnStore`] in this process (memory, or a directory), or
//! Redis shared by several proxies.
//!
//! For each request the proxy asks for the turns its assistant messages may be copies of, by
//! their [`TurnKeys`], and repairs against a small store holding just those: the shared store is
//! never locked while a repair runs.
//!
//! In Redis a turn is three kinds of keys, all written in one `MULTI`/`EXEC` with the same TTL:
//! `turnkeeper:v1:turn:<fingerprint>` holds the [`StoredTurn`] as JSON, and
//! `turnkeeper:v1:tool:<tool_use id>` and `turnkeeper:v1:text:<text hash>` hold the
//! fingerprint. A reader sees a turn whole or not at all.
//!
//! The wire families' turns (Chat Completions, Responses, Gemini) are found by their namespaced
//! keys ([`WireTurn::keys`]: `chat:call:<id>`, `chat:text:<hash>`, `responses:id:<id>`,
//! `responses:call:<call_id>`, `gemini:id:<id>`, `gemini:call:<hash>`). A key the shared store
//! holds as ambiguous stays so in the store assembled for a request
//! ([`TurnStore::mark_ambiguous`]), so a turn brought over for another key is not found by it. In Redis, `turnkeeper:v1:wire:<fingerprint>` holds the
//! [`WireTurn`] as JSON and `turnkeeper:v1:wkey:<key>` its fingerprint, written in one
//! `MULTI`/`EXEC` like an Anthropic turn. A text key, or a Gemini call key, two different turns
//! share names neither (it holds `!`, as the local store forgets it), so a turn is never found by
//! a text or a call that is not its own alone.

use std::sync::Mutex;
use std::time::Duration;

use redis::AsyncCommands;
use turnkeeper_guard::{StoredTurn, TurnKeys, TurnStore, WireTurn};

use crate::{Config, ProxyError, StoreConfig};

const PREFIX: &str = "turnkeeper:v1:";

/// Where turns live.
pub(crate) enum Turns {
    /// In this process (with or without a directory).
    Local(Box<Mutex<TurnStore>>),
    /// In Redis.
    Redis {
        conn: redis::aio::ConnectionManager,
        ttl: Duration,
    },
}

/// What a lookup found.
pub(crate) struct Found {
    /// The turns, in a store of their own.
    pub(crate) store: TurnStore,
    /// Messages whose turn was found.
    pub(crate) hits: u64,
    /// Messages whose turn was not.
    pub(crate) misses: u64,
    /// The lookup failed (Redis down): the request goes on without the store.
    pub(crate) error: bool,
}

impl Found {
    /// No turn yet: an empty store, no hit, no miss.
    fn nothing() -> Found {
        Found {
            store: TurnStore::in_memory(),
            hits: 0,
            misses: 0,
            error: false,
        }
    }
}

impl Turns {
    pub(crate) async fn open(config: &Config) -> Result<Turns, ProxyError> {
        match &config.store {
            StoreConfig::Memory => Ok(Turns::Local(Box::new(Mutex::new(
                TurnStore::in_memory().with_limit(config.store_limit),
            )))),
            StoreConfig::Dir(dir) => {
                let s = TurnStore::open_bounded(dir, Some(config.store_limit))
                    .map_err(|e| ProxyError::Store(e.to_string()))?;
                for p in &s.problems {
                    tracing::warn!(problem = %p, "turn store: unreadable file skipped");
                }
                tracing::info!(turns = s.len(), dir = %dir.display(), "turn store opened");
                Ok(Turns::Local(Box::new(Mutex::new(s))))
            }
            StoreConfig::Redis(url) => {
                let client = redis::Client::open(url.as_str())
                    .map_err(|e| ProxyError::Store(format!("{}: {e}", redact(url))))?;
                let conn = tokio::time::timeout(
                    Duration::from_secs(5),
                    redis::aio::ConnectionManager::new(client),
                )
                .await
                .map_err(|_| ProxyError::Store(format!("{}: no answer in 5 s", redact(url))))?
                .map_err(|e| ProxyError::Store(format!("{}: {e}", redact(url))))?;
                Ok(Turns::Redis {
                    conn,
                    ttl: config.store_ttl,
                })
            }
        }
    }

    /// A short description for logs (no password).
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Turns::Local(_) => "local",
            Turns::Redis { .. } => "redis",
        }
    }

    /// The stored turns matching `wanted`, one entry per assistant message.
    pub(crate) async fn lookup(&self, wanted: &[TurnKeys]) -> Found {
        let mut found = Found::nothing();
        if wanted.is_empty() {
            return found;
        }
        match self {
            Turns::Local(m) => {
                let Ok(s) = m.lock() else {
                    found.error = true;
                    return found;
                };
                for k in wanted {
                    match s.find_keys(k) {
                        Some(t) => {
                            found.hits += 1;
                            found.store.insert(t.clone());
                        }
                        None => found.misses += 1,
                    }
                }
            }
            Turns::Redis { conn, .. } => {
                let mut conn = conn.clone();
                match redis_lookup(&mut conn, wanted).await {
                    Ok(turns) => {
                        for t in turns {
                            match t {
                                Some(t) => {
                                    found.hits += 1;
                                    found.store.insert(t);
                                }
                                None => found.misses += 1,
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "turn store lookup failed; going on without it");
                        found.error = true;
                    }
                }
            }
        }
        found
    }

    /// The stored wire turns for one request: `wanted` holds, per assistant message or output
    /// item, the keys it is found by, best first. One hit or miss per entry.
    pub(crate) async fn lookup_wire(&self, wanted: &[Vec<String>]) -> Found {
        let mut found = Found::nothing();
        if wanted.is_empty() {
            return found;
        }
        match self {
            Turns::Local(m) => {
                let Ok(s) = m.lock() else {
                    found.error = true;
                    return found;
                };
                let mut turns: Vec<WireTurn> = Vec::new();
                for k in wanted.iter().flatten().filter(|k| s.is_ambiguous(k)) {
                    // Not found by this key here either, whatever turn another key brings over.
                    found.store.mark_ambiguous(k);
                }
                for keys in wanted {
                    match keys.iter().find_map(|k| s.wire_turn(k)) {
                        Some(t) => {
                            found.hits += 1;
                            if !turns.contains(t) {
                                turns.push(t.clone());
                            }
                        }
                        None => found.misses += 1,
                    }
                }
                drop(s);
                // Read back (each turn parsed) outside the shared store's lock.
                for t in turns {
                    found.store.insert_wire(t);
                }
            }
            Turns::Redis { conn, .. } => {
                let mut conn = conn.clone();
                match redis_lookup_wire(&mut conn, wanted).await {
                    Ok((turns, hits, ambiguous)) => {
                        found.hits = hits;
                        found.misses = wanted.len() as u64 - hits;
                        for k in &ambiguous {
                            found.store.mark_ambiguous(k);
                        }
                        for t in turns {
                            found.store.insert_wire(t);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "turn store lookup failed; going on without it");
                        found.error = true;
                    }
                }
            }
        }
        found
    }

    /// Records a wire family's turn (Chat Completions, Responses, Gemini).
    pub(crate) async fn record_wire(&self, turn: WireTurn) -> Result<(), String> {
        match self {
            Turns::Local(m) => {
                let mut s = m
                    .lock()
                    .map_err(|_| "turn store lock poisoned".to_owned())?;
                s.add_wire(turn).map_err(|e| e.to_string())
            }
            Turns::Redis { conn, ttl } => {
                let record = turn.record().map_err(|e| e.to_string())?;
                let keys = WireTurn::keys(&record);
                let fp = turn.fingerprint();
                let json = serde_json::to_string(&turn).map_err(|e| e.to_string())?;
                let ttl = ttl.as_secs().max(1);
                let mut pipe = redis::pipe();
                pipe.atomic()
                    .set_ex(format!("{PREFIX}wire:{fp}"), json, ttl)
                    .ignore();
                for k in &keys {
                    let name = format!("{PREFIX}wkey:{k}");
                    if k.starts_with("chat:text:") || k.starts_with("gemini:") {
                        // A text another turn already has names neither; so does a Gemini call
                        // key (stricter than the local store, which keeps a key two turns hold
                        // with the same signature).
                        pipe.cmd("EVAL")
                            .arg(TEXT_KEY_SCRIPT)
                            .arg(1)
                            .arg(name)
                            .arg(&fp)
                            .arg(ttl)
                            .ignore();
                    } else {
                        pipe.set_ex(name, &fp, ttl).ignore();
                    }
                }
                let mut conn = conn.clone();
                pipe.query_async::<()>(&mut conn)
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// Records a turn.
    pub(crate) async fn record(&self, turn: StoredTurn) -> Result<(), String> {
        match self {
            Turns::Local(m) => {
                let mut s = m
                    .lock()
                    .map_err(|_| "turn store lock poisoned".to_owned())?;
                s.add(turn).map(|_| ()).map_err(|e| e.to_string())
            }
            Turns::Redis { conn, ttl } => {
                let keys = turn.keys().map_err(|e| e.to_string())?;
                let fp = turn.fingerprint();
                let json = serde_json::to_string(&turn).map_err(|e| e.to_string())?;
                let ttl = ttl.as_secs().max(1);
                let mut pipe = redis::pipe();
                pipe.atomic()
                    .set_ex(format!("{PREFIX}turn:{fp}"), json, ttl)
                    .ignore();
                for id in &keys.tool_ids {
                    pipe.set_ex(format!("{PREFIX}tool:{id}"), &fp, ttl).ignore();
                }
                if let Some(h) = &keys.text {
                    pipe.set_ex(format!("{PREFIX}text:{h}"), &fp, ttl).ignore();
                }
                let mut conn = conn.clone();
                pipe.query_async::<()>(&mut conn)
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    }
}

/// Two round trips: the fingerprints of every key, then the turns they name.
async fn redis_lookup(
    conn: &mut redis::aio::ConnectionManager,
    wanted: &[TurnKeys],
) -> redis::RedisResult<Vec<Option<StoredTurn>>> {
    // The keys each message is found by, in order of preference (tool ids, then the text hash).
    let mut names: Vec<String> = Vec::new();
    let mut ranges = Vec::with_capacity(wanted.len());
    for k in wanted {
        let start = names.len();
        names.extend(k.tool_ids.iter().map(|id| format!("{PREFIX}tool:{id}")));
        names.extend(k.text.iter().map(|h| format!("{PREFIX}text:{h}")));
        ranges.push(start..names.len());
    }
    if names.is_empty() {
        return Ok(vec![None; wanted.len()]);
    }
    let fps: Vec<Option<String>> = conn.mget(&names).await?;
    let chosen: Vec<Option<&String>> = ranges
        .iter()
        .map(|r| fps[r.clone()].iter().flatten().next())
        .collect();
    let mut unique: Vec<&String> = chosen.iter().flatten().copied().collect();
    unique.sort_unstable();
    unique.dedup();
    if unique.is_empty() {
        return Ok(vec![None; wanted.len()]);
    }
    let turn_keys: Vec<String> = unique
        .iter()
        .map(|fp| format!("{PREFIX}turn:{fp}"))
        .collect();
    let bodies: Vec<Option<String>> = conn.mget(&turn_keys).await?;
    let parsed: Vec<Option<StoredTurn>> = bodies
        .into_iter()
        .map(|b| b.and_then(|b| serde_json::from_str(&b).ok()))
        .collect();
    Ok(chosen
        .into_iter()
        .map(|fp| {
            fp.and_then(|fp| unique.binary_search(&fp).ok())
                .and_then(|i| parsed[i].clone())
        })
        .collect())
}

/// Sets a text key to the turn's fingerprint, or to `!` when another turn already has it.
const TEXT_KEY_SCRIPT: &str = "local cur = redis.call('GET', KEYS[1]) \
if cur and cur ~= ARGV[1] then redis.call('SET', KEYS[1], '!', 'EX', ARGV[2]) \
else redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end \
return 1";

/// Two round trips, as [`redis_lookup`]: the fingerprints of every key, then the turns. Returns
/// the distinct turns found, how many entries of `wanted` found one, and the keys that name
/// no turn because two turns share them (`!`).
async fn redis_lookup_wire(
    conn: &mut redis::aio::ConnectionManager,
    wanted: &[Vec<String>],
) -> redis::RedisResult<(Vec<WireTurn>, u64, Vec<String>)> {
    let mut names: Vec<String> = Vec::new();
    let mut ranges = Vec::with_capacity(wanted.len());
    for keys in wanted {
        let start = names.len();
        names.extend(keys.iter().map(|k| format!("{PREFIX}wkey:{k}")));
        ranges.push(start..names.len());
    }
    if names.is_empty() {
        return Ok((Vec::new(), 0, Vec::new()));
    }
    let fps: Vec<Option<String>> = conn.mget(&names).await?;
    let ambiguous: Vec<String> = wanted
        .iter()
        .flatten()
        .zip(&fps)
        .filter(|(_, fp)| fp.as_deref() == Some("!"))
        .map(|(k, _)| k.clone())
        .collect();
    let chosen: Vec<Option<&String>> = ranges
        .iter()
        .map(|r| fps[r.clone()].iter().flatten().find(|fp| *fp != "!"))
        .collect();
    let mut unique: Vec<&String> = chosen.iter().flatten().copied().collect();
    unique.sort_unstable();
    unique.dedup();
    if unique.is_empty() {
        return Ok((Vec::new(), 0, ambiguous));
    }
    let turn_keys: Vec<String> = unique
        .iter()
        .map(|fp| format!("{PREFIX}wire:{fp}"))
        .collect();
    let bodies: Vec<Option<String>> = conn.mget(&turn_keys).await?;
    let parsed: Vec<Option<WireTurn>> = bodies
        .into_iter()
        .map(|b| b.and_then(|b| serde_json::from_str(&b).ok()))
        .collect();
    let hits = chosen
        .iter()
        .filter(|fp| {
            fp.and_then(|fp| unique.binary_search(&fp).ok())
                .is_some_and(|i| parsed[i].is_some())
        })
        .count() as u64;
    Ok((parsed.into_iter().flatten().collect(), hits, ambiguous))
}

/// `redis://user:secret@host` with the password hidden.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}***{}", &url[..s + 3], &url[at..]),
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn a_redis_password_never_reaches_a_message() {
        assert_eq!(
            redact("redis://:hunter2@127.0.0.1:6379/0"),
            "redis://***@127.0.0.1:6379/0"
        );
        assert_eq!(
            redact("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
    }
}
