//! The Node.js binding of turnkeeper: `require("turnkeeper")`.
//!
//! Each function takes the body as a `string` or a `Buffer` and returns plain objects whose
//! fields are those the command line prints with `--json` / `--report`. A repaired body comes
//! back as the type it came in; a `Buffer` that needed no repair comes back as the very object
//! passed in.
//!
//! Errors are JS `Error`s whose `code` names the kind (`ERR_TURNKEEPER_READ`, `..._FORMAT`,
//! `..._REPAIR`, `..._STORE`, `..._ATTEMPTS`, `..._OPTION`; see [`Code`]); nothing here panics
//! across the FFI (the workspace lints forbid `unwrap`, and every input path returns a
//! `Result`). The JSON each function returns is built as the Python binding builds it
//! (`bindings/python/src/lib.rs`), field for field, and both are tested against the command line.

use std::borrow::Cow;
use std::path::PathBuf;

use napi::Env;

/// mimalloc allocates for the addon's Rust code (JavaScript's heap is V8's own): see Cargo.toml.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use napi::bindgen_prelude::{Buffer, ClassInstance, Either, JsValue, Object, Undefined};
use napi_derive::napi;
use serde_json::{Value, json};
use turnkeeper::opencode::load_export;
use turnkeeper::recovery::{Attempts as RustAttempts, classify as classify_error, plan};
use turnkeeper::{
    BodyKind, Format, FormatHint, MissingThinking, Mode, Options, Policy, PrefixEdit,
    ProfileOverrides, TurnStore as RustTurnStore,
};

/// The kind of a failure: the `code` property of the JS error thrown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// The input is not UTF-8, not JSON, or cannot be read at all.
    Read,
    /// Valid JSON of no format turnkeeper reads, or not of the format asked.
    Format,
    /// A repair failed closed (a thinking block would have changed).
    Repair,
    /// The turn store could not be opened or written, or a response is not one.
    Store,
    /// An attempts document that is not one.
    Attempts,
    /// An option the library does not take, or of the wrong type.
    Option,
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        match self {
            Code::Read => "ERR_TURNKEEPER_READ",
            Code::Format => "ERR_TURNKEEPER_FORMAT",
            Code::Repair => "ERR_TURNKEEPER_REPAIR",
            Code::Store => "ERR_TURNKEEPER_STORE",
            Code::Attempts => "ERR_TURNKEEPER_ATTEMPTS",
            Code::Option => "ERR_TURNKEEPER_OPTION",
        }
    }
}

/// A failure, thrown as a JS `Error` with its `code`.
#[derive(Debug)]
struct Failure {
    code: Code,
    message: String,
}

impl Failure {
    fn new(code: Code, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }

    fn option(message: impl Into<String>) -> Self {
        Failure::new(Code::Option, message)
    }
}

impl From<Failure> for napi::Error<Code> {
    fn from(f: Failure) -> Self {
        napi::Error::new(f.code, f.message)
    }
}

impl From<turnkeeper::ErrorClass> for Code {
    fn from(c: turnkeeper::ErrorClass) -> Self {
        match c {
            turnkeeper::ErrorClass::Read => Code::Read,
            turnkeeper::ErrorClass::Format => Code::Format,
            turnkeeper::ErrorClass::Store => Code::Store,
            // A repair that failed closed, and any class a later library adds.
            _ => Code::Repair,
        }
    }
}

/// Every error the library returns, thrown under the code of its class (the library's
/// [`turnkeeper::ErrorClass`], which the Python package maps to its exception classes too).
impl<E: turnkeeper::HasErrorClass + std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(e.error_class().into(), e.to_string())
    }
}

type Done<T> = Result<T, Failure>;

// ---------------------------------------------------------------------------------------------
// Inputs

/// A body as the caller passed it.
type BodyArg = Either<String, Buffer>;

/// The bytes of a body.
fn bytes_of(body: &BodyArg) -> &[u8] {
    match body {
        Either::A(s) => s.as_bytes(),
        Either::B(b) => b,
    }
}

/// A body as text: a `string` as it is (UTF-8 already, not checked again), a `Buffer` checked.
fn text_of<'a>(body: &'a BodyArg, what: &str) -> Done<&'a str> {
    match body {
        Either::A(s) => Ok(s),
        Either::B(b) => utf8(b, what),
    }
}

/// Bytes as text.
fn utf8<'a>(bytes: &'a [u8], what: &str) -> Done<&'a str> {
    // Checked with SIMD where the processor has it; the offset comes from the error.
    turnkeeper::utf8(bytes).map_err(|e| Failure::new(Code::Read, format!("{what}: {e}")))
}

/// A new body of the caller's type holding `text`.
fn same_type(input: &BodyArg, text: String) -> BodyArg {
    match input {
        Either::A(_) => Either::A(text),
        Either::B(_) => Either::B(Buffer::from(text.into_bytes())),
    }
}

/// `format`: the names the command line's `--format` takes.
fn format_hint(name: Option<&str>) -> Done<FormatHint> {
    let f = match name {
        None | Some("auto") => return Ok(FormatHint::Auto),
        Some("anthropic") => Format::Anthropic,
        Some("opencode") => Format::Opencode,
        Some("gemini") => Format::Gemini,
        Some("chat") => Format::Chat,
        Some("responses") => Format::Responses,
        Some("converse") => Format::Converse,
        Some(other) => {
            return Err(Failure::option(format!(
                "format {other:?}: expected one of auto, anthropic, opencode, gemini, chat, responses, converse"
            )));
        }
    };
    Ok(FormatHint::Exactly(f))
}

/// `thinking`: as `--thinking`.
fn thinking_mode(name: Option<&str>) -> Done<Option<Mode>> {
    Ok(match name {
        None => None,
        Some("enabled") => Some(Mode::Manual),
        Some("adaptive") => Some(Mode::Adaptive),
        Some("disabled") => Some(Mode::Off),
        Some(other) => {
            return Err(Failure::option(format!(
                "thinking {other:?}: expected enabled, adaptive or disabled"
            )));
        }
    })
}

/// The repair policy from `onMissingThinking` and `onPrefixEdit` (the command line's
/// `--on-missing-thinking` and `--on-prefix-edit`).
fn policy(missing: Option<Vec<String>>, prefix: Option<&str>) -> Done<Policy> {
    let mut p = Policy::default();
    if let Some(list) = missing {
        let mut chosen = Vec::new();
        for name in &list {
            chosen.push(match name.replace('_', "-").as_str() {
                "restore" => MissingThinking::Restore,
                "disable-thinking" => MissingThinking::DisableThinking,
                "adaptive" => MissingThinking::Adaptive,
                "close-loop" => MissingThinking::CloseLoop,
                // As on the command line: `fail` ends the list.
                "fail" => break,
                other => {
                    return Err(Failure::option(format!(
                        "onMissingThinking: {other:?} is none of restore, disable-thinking, adaptive, close-loop, fail"
                    )));
                }
            });
        }
        p.on_missing_thinking = chosen;
    }
    if let Some(name) = prefix {
        p.on_prefix_edit = match name.replace('_', "-").as_str() {
            "strip-after-edit" => PrefixEdit::StripAfterEdit,
            "drop-block" => PrefixEdit::DropBlock,
            "fail" => PrefixEdit::Fail,
            other => {
                return Err(Failure::option(format!(
                    "onPrefixEdit {other:?}: expected strip-after-edit, drop-block or fail"
                )));
            }
        };
    }
    Ok(p)
}

/// Reads an optional property of `options`, saying which one when it has the wrong type.
fn prop<V: napi::bindgen_prelude::FromNapiValue>(
    obj: &Object<'_>,
    key: &str,
    expected: &str,
) -> Done<Option<V>> {
    // `undefined` and `null` both mean "not given".
    match obj.get::<Either<Undefined, napi::bindgen_prelude::Null>>(key) {
        Ok(Some(_)) | Ok(None) => return Ok(None),
        Err(_) => {}
    }
    obj.get::<V>(key)
        .map_err(|_| Failure::option(format!("options.{key} must be {expected}")))
}

/// The options a call was given, checked: plain Rust values, and the `TurnStore` object passed
/// as `store`, borrowed for the call.
struct Opts<'env> {
    hint: FormatHint,
    model: Option<String>,
    thinking: Option<Mode>,
    betas: Vec<String>,
    policy: Policy,
    profile: Option<PathBuf>,
    status: Option<u16>,
    store_path: Option<PathBuf>,
    store: Option<ClassInstance<'env, TurnStore>>,
}

/// What a `store` path or `profile` file gave, owned for the length of the call.
struct Loaded {
    store: Option<RustTurnStore>,
    overrides: Option<ProfileOverrides>,
}

impl<'env> Opts<'env> {
    /// Reads `options`, refusing a key that is none of `allowed` (a misspelt option must not be
    /// silently ignored).
    fn read(options: Option<&Object<'env>>, allowed: &[&str]) -> Done<Self> {
        let mut o = Opts {
            hint: FormatHint::Auto,
            model: None,
            thinking: None,
            betas: Vec::new(),
            policy: Policy::default(),
            profile: None,
            status: None,
            store_path: None,
            store: None,
        };
        let Some(obj) = options else {
            return Ok(o);
        };
        let keys = Object::keys(obj).map_err(|e| Failure::option(e.reason.clone()))?;
        if let Some(k) = keys.iter().find(|k| !allowed.contains(&k.as_str())) {
            return Err(Failure::option(format!(
                "unknown option {k:?}: expected one of {}",
                allowed.join(", ")
            )));
        }
        let has = |k: &str| allowed.contains(&k);
        if has("format") {
            o.hint = format_hint(prop::<String>(obj, "format", "a string")?.as_deref())?;
        }
        if has("model") {
            o.model = prop(obj, "model", "a string")?;
        }
        if has("thinking") {
            o.thinking = thinking_mode(prop::<String>(obj, "thinking", "a string")?.as_deref())?;
        }
        if has("betas") {
            o.betas = prop(obj, "betas", "an array of strings")?.unwrap_or_default();
        }
        if has("profile") {
            o.profile = prop::<String>(obj, "profile", "a path")?.map(PathBuf::from);
        }
        if has("onMissingThinking") {
            let missing = prop(obj, "onMissingThinking", "an array of strings")?;
            let prefix: Option<String> = prop(obj, "onPrefixEdit", "a string")?;
            o.policy = policy(missing, prefix.as_deref())?;
        }
        if has("status") {
            o.status = prop::<u32>(obj, "status", "an HTTP status number")?
                .map(|s| {
                    u16::try_from(s).map_err(|_| {
                        Failure::option(format!("options.status {s}: not an HTTP status"))
                    })
                })
                .transpose()?;
        }
        if has("store") {
            match prop::<Either<String, ClassInstance<'env, TurnStore>>>(
                obj,
                "store",
                "a TurnStore or the path of a store directory",
            )? {
                None => {}
                Some(Either::A(path)) => o.store_path = Some(PathBuf::from(path)),
                Some(Either::B(store)) => o.store = Some(store),
            }
        }
        Ok(o)
    }

    /// Opens what is named by path.
    fn load(&self) -> Done<Loaded> {
        let store = match &self.store_path {
            Some(p) => Some(RustTurnStore::open(p)?),
            None => None,
        };
        let overrides = match &self.profile {
            Some(p) => {
                Some(ProfileOverrides::from_file(p).map_err(|e| Failure::option(e.to_string()))?)
            }
            None => None,
        };
        Ok(Loaded { store, overrides })
    }

    fn options<'s>(&'s self, l: &'s Loaded) -> Options<'s> {
        Options {
            model: self.model.clone(),
            thinking: self.thinking,
            betas: self.betas.clone(),
            policy: self.policy.clone(),
            store: self.store.as_ref().map(|s| &s.inner).or(l.store.as_ref()),
            overrides: l.overrides.as_ref(),
            input_pages: None,
        }
    }
}

/// The options `check` and `repair` take.
const BODY_OPTIONS: &[&str] = &[
    "model",
    "thinking",
    "format",
    "store",
    "betas",
    "profile",
    "onMissingThinking",
    "onPrefixEdit",
];

/// A serialisable value as JSON.
fn value(v: impl serde::Serialize) -> Done<Value> {
    serde_json::to_value(v).map_err(|e| Failure::new(Code::Read, e.to_string()))
}

// ---------------------------------------------------------------------------------------------
// check / repair / inspect

/// `check`: the findings, as `turnkeeper check --json` prints them.
fn run_check(text: &str, hint: FormatHint, opts: &Options<'_>) -> Done<Value> {
    let format = match hint {
        FormatHint::Exactly(f) => f,
        FormatHint::Auto => turnkeeper::sniff(text)?.format,
    };
    if format == Format::Opencode {
        // An export is checked as the request OpenCode sends for it, as the command line does.
        let session = load_export(text, "<body>")?;
        let checked = turnkeeper::opencode::check_session(&session, opts)?;
        return Ok(json!({ "findings": value(&checked.findings)?, "model": checked.model }));
    }
    let findings = turnkeeper::check_as(text, FormatHint::Exactly(format), opts)?;
    Ok(json!({ "findings": value(&findings)? }))
}

/// Checks a transcript: the fields of `turnkeeper check --json` (`findings`, and `model` for an
/// OpenCode export).
#[napi(
    ts_args_type = "body: string | Buffer, options?: BodyOptions",
    ts_return_type = "CheckResult"
)]
pub fn check(body: BodyArg, options: Option<Object<'_>>) -> napi::Result<Value, Code> {
    let o = Opts::read(options.as_ref(), BODY_OPTIONS)?;
    let text = text_of(&body, "body")?;
    let loaded = o.load()?;
    Ok(run_check(text, o.hint, &o.options(&loaded))?)
}

/// The object `repair` returns.
#[napi(object)]
pub struct RepairResult {
    /// The body to send: the input's type; the very `Buffer` passed in when nothing changed.
    #[napi(ts_type = "string | Buffer")]
    pub body: BodyArg,
    /// The changes made to the messages, each with its rule, location and reason.
    #[napi(ts_type = "Change[]")]
    pub changes: Value,
    /// The changes made to the request outside the messages (e.g. thinking disabled).
    #[napi(js_name = "request_changes", ts_type = "RequestChange[]")]
    pub request_changes: Value,
    /// The findings no repair could resolve.
    #[napi(js_name = "findings_left", ts_type = "Finding[]")]
    pub findings_left: Value,
}

/// Repairs a transcript: the fields of `turnkeeper repair --report`, and `body`.
#[napi(ts_args_type = "body: string | Buffer, options?: BodyOptions")]
pub fn repair(body: BodyArg, options: Option<Object<'_>>) -> napi::Result<RepairResult, Code> {
    let o = Opts::read(options.as_ref(), BODY_OPTIONS)?;
    let text = text_of(&body, "body")?;
    let loaded = o.load()?;
    let opts = o.options(&loaded);
    let format = match o.hint {
        FormatHint::Exactly(f) => f,
        FormatHint::Auto => turnkeeper::sniff(text).map_err(Failure::from)?.format,
    };
    if format == Format::Opencode {
        return Err(Failure::new(
            Code::Format,
            "an OpenCode export is checked with `check`; stored sessions are repaired with `turnkeeper opencode repair`",
        )
        .into());
    }
    let fixed =
        turnkeeper::repair_as(text, FormatHint::Exactly(format), &opts).map_err(Failure::from)?;
    let r = &fixed.report;
    let changes = value(&r.changes)?;
    let request_changes = value(&r.request_changes)?;
    let findings_left = value(&r.findings_left)?;
    let new_body = match fixed.body {
        Cow::Borrowed(_) => None,
        Cow::Owned(b) => Some(b),
    };
    Ok(RepairResult {
        body: match new_body {
            Some(b) => same_type(&body, b),
            None => body,
        },
        changes,
        request_changes,
        findings_left,
    })
}

/// `inspect` of a block transcript or an OpenAI Chat body, as `turnkeeper inspect --json`.
fn run_inspect(text: &str, hint: FormatHint) -> Done<Value> {
    let i = turnkeeper::inspect(text, hint)?;
    let body = match i.body {
        BodyKind::Request => "request",
        BodyKind::Response => "response",
    };
    Ok(match &i.wire {
        Some(wire) => {
            let rows: Vec<Value> = i
                .messages
                .iter()
                .map(|m| json!({ "role": m.role, "fields": m.parts }))
                .collect();
            json!({
                "format": i.format.name(),
                "why": i.why,
                "body": body,
                "model": i.model,
                "provider": value(wire.provider)?,
                "routed": wire.routed,
                "messages": rows.len(),
                "tools": wire.tools,
                "thinking": i.thinking,
                "rows": rows,
            })
        }
        None => json!({
            "format": i.format.name(),
            "why": i.why,
            "body": body,
            "model": i.model,
            "messages": i.messages.len(),
            "blocks": i.blocks,
            "thinking": i.thinking,
        }),
    })
}

/// A summary of a transcript: the fields of `turnkeeper inspect --json` (format, model,
/// messages, blocks by type, thinking mode).
#[napi(
    ts_args_type = "body: string | Buffer, options?: { format?: Format }",
    ts_return_type = "InspectResult"
)]
pub fn inspect(body: BodyArg, options: Option<Object<'_>>) -> napi::Result<Value, Code> {
    let o = Opts::read(options.as_ref(), &["format"])?;
    Ok(run_inspect(text_of(&body, "body")?, o.hint)?)
}

// ---------------------------------------------------------------------------------------------
// classify / recover

/// The error text: a `string` as it is, a `Buffer` read lossily (as the command line reads a
/// file).
fn error_text(e: &BodyArg) -> Cow<'_, str> {
    match e {
        Either::A(s) => Cow::Borrowed(s),
        Either::B(b) => String::from_utf8_lossy(b),
    }
}

/// What a provider error means and what to do: the fields of `turnkeeper classify --json`.
#[napi(
    ts_args_type = "error: string | Buffer, options?: { status?: number }",
    ts_return_type = "Diagnosis"
)]
pub fn classify(error: BodyArg, options: Option<Object<'_>>) -> napi::Result<Value, Code> {
    let o = Opts::read(options.as_ref(), &["status"])?;
    let d = classify_error(o.status, &error_text(&error));
    let action = plan(&d, &RustAttempts::new());
    let mut v = value(&d)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("action".to_owned(), value(&action)?);
    }
    Ok(v)
}

/// The attempts made so far at one conversation's errors (`--attempts FILE` of the command
/// line, kept in memory). Pass the same object to each `recover` call of a conversation so that
/// the same error twice escalates.
#[napi]
#[derive(Default)]
pub struct Attempts {
    inner: RustAttempts,
}

#[napi]
impl Attempts {
    /// No attempts yet.
    #[napi(constructor)]
    pub fn new() -> Self {
        Attempts::default()
    }

    /// Reads the JSON the command line keeps in its attempts file (see `toJson`).
    #[napi(factory)]
    pub fn from_json(text: String) -> napi::Result<Self, Code> {
        RustAttempts::from_json(&text)
            .map(|inner| Attempts { inner })
            .map_err(|e| Failure::new(Code::Attempts, e.to_string()).into())
    }

    /// The attempts as the command line's attempts file holds them.
    #[napi]
    pub fn to_json(&self) -> napi::Result<String, Code> {
        self.inner
            .to_json()
            .map_err(|e| Failure::new(Code::Attempts, e.to_string()).into())
    }

    /// How many attempts were sent (not skipped).
    #[napi(getter)]
    pub fn sent(&self) -> u32 {
        u32::try_from(self.inner.sent()).unwrap_or(u32::MAX)
    }

    /// How many attempts were made, sent or skipped.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        u32::try_from(self.inner.len()).unwrap_or(u32::MAX)
    }
}

/// The options `recover` takes.
const RECOVER_OPTIONS: &[&str] = &["status", "model", "betas", "store"];

/// The request as `recover` reads it, as the command line does: a block transcript must be
/// readable before anything else; a Chat, Responses or Converse body is read by its own reader
/// inside `recover`.
fn readable_request(bytes: &[u8]) -> Done<&str> {
    let text = utf8(bytes, "request")?;
    let wire = turnkeeper::sniff(text).is_ok_and(|s| !s.format.is_transcript());
    if wire {
        return Ok(text);
    }
    turnkeeper::read(text, FormatHint::Auto).map_err(|e| {
        let f = Failure::from(e);
        Failure::new(
            f.code,
            format!("request: not a readable request: {}", f.message),
        )
    })?;
    Ok(text)
}

/// Classifies `error`, plans the next step and applies it to `request`, the body that failed:
/// the fields of `turnkeeper recover --report`, and `body`, what to send (`null`: nothing).
#[napi(
    ts_args_type = "request: string | Buffer, error: string | Buffer, attempts?: Attempts | null, options?: RecoverOptions",
    ts_return_type = "RecoverResult"
)]
pub fn recover<'env>(
    env: &'env Env,
    request: BodyArg,
    error: BodyArg,
    attempts: Option<&mut Attempts>,
    options: Option<Object<'_>>,
) -> napi::Result<Object<'env>, Code> {
    let o = Opts::read(options.as_ref(), RECOVER_OPTIONS)?;
    let err = error_text(&error);
    let mut mine = Attempts::default();
    let tried: &mut RustAttempts = match attempts {
        Some(a) => &mut a.inner,
        None => &mut mine.inner,
    };
    let bytes = bytes_of(&request);
    let text = readable_request(bytes)?;
    let loaded = o.load()?;
    let opts = Options {
        thinking: None,
        policy: Policy::default(),
        ..o.options(&loaded)
    };
    let d = classify_error(o.status, &err);
    let r = turnkeeper::recovery::recover_with(text, &d, tried, &opts).map_err(Failure::from)?;
    let headers: Vec<Value> = r
        .headers
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    let report = json!({
        "diagnosis": value(&d)?,
        "action": value(&r.action)?,
        "outcome": value(r.outcome)?,
        "wait_ms": r.wait().map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX)),
        "headers": headers,
        "changes": value(&r.report.changes)?,
        "request_changes": value(&r.report.request_changes)?,
        "addressing": r.report.addressing,
        "findings_left": value(&r.report.findings_left)?,
        "skipped": value(&r.report.skipped)?,
        "notes": r.report.notes,
        "attempts": tried.len(),
    });
    // What to send: nothing (`null`), the request as it came, or the new body in its type.
    let body = match r.sends() {
        false => None,
        true if r.body.as_bytes() == bytes => Some(request),
        true => Some(same_type(&request, r.body)),
    };
    let mut out: Object<'env> = env
        .to_js_value(&report)
        .and_then(|v| v.coerce_to_object())
        .map_err(|e| Failure::new(Code::Read, e.reason.clone()))?;
    out.set("body", body)
        .map_err(|e| Failure::new(Code::Read, e.reason.clone()))?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The turn store

/// A turn store: the provider's responses as they arrived, so that `check` and `repair` can put
/// back an assistant turn an agent altered (pass it as `options.store`). With a path, every
/// response added is also written there (as `turnkeeper store add` does) and the store is
/// loaded from it.
#[napi]
pub struct TurnStore {
    inner: RustTurnStore,
    path: Option<String>,
}

#[napi]
impl TurnStore {
    /// Opens (creating it) the store directory `path`, or an in-memory store without one.
    #[napi(constructor)]
    pub fn new(path: Option<String>) -> napi::Result<Self, Code> {
        let inner = match &path {
            Some(p) => RustTurnStore::open(p).map_err(Failure::from)?,
            None => RustTurnStore::in_memory(),
        };
        Ok(TurnStore { inner, path })
    }

    /// Records a response body (a Messages API response as JSON, or its whole SSE stream);
    /// returns its response id (`msg_...`), or `null` when it has none.
    #[napi(ts_args_type = "response: string | Buffer")]
    pub fn add(&mut self, response: BodyArg) -> napi::Result<Option<String>, Code> {
        let text = text_of(&response, "response")?;
        let added = self.inner.add_response(text).map_err(Failure::from)?;
        Ok(added.response_id.clone())
    }

    /// The store directory, or `null` for an in-memory store.
    #[napi(getter)]
    pub fn path(&self) -> Option<String> {
        self.path.clone()
    }

    /// Files in the directory that could not be read, with the reason.
    #[napi(getter)]
    pub fn problems(&self) -> Vec<String> {
        self.inner.problems.clone()
    }

    /// How many turns the store holds.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        u32::try_from(self.inner.len()).unwrap_or(u32::MAX)
    }
}

/// The version of the native library.
#[napi]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

// ---------------------------------------------------------------------------------------------
// OpenCode

/// The OpenCode doctor on the messages OpenCode is about to send (`{info, parts}[]`, as an
/// export holds them, or as its `experimental.chat.messages.transform` hook sees them): the
/// session's target, the findings on the request it would send, the part repairs the doctor
/// plans for that target (`turnkeeper opencode repair`'s plan, without writing anything), and
/// the findings left once they are applied. A repair removes, replaces or adds whole parts;
/// none edits a reasoning part (one that can never verify is removed, and the removal reported).
#[napi(
    ts_args_type = "messages: string | Buffer, options?: { model?: string }",
    ts_return_type = "OpencodePlan"
)]
pub fn opencode_doctor(
    messages: BodyArg,
    options: Option<Object<'_>>,
) -> napi::Result<Value, Code> {
    use turnkeeper::opencode::{plan_checked, simulate};
    let o = Opts::read(options.as_ref(), &["model"])?;
    let text = text_of(&messages, "messages")?;
    let session = load_export(text, "<messages>").map_err(Failure::from)?;
    let opts = Options {
        model: o.model.clone(),
        ..Options::default()
    };
    let before = turnkeeper::opencode::check_session(&session, &opts).map_err(Failure::from)?;
    // The plan takes its request-level repairs from this check's findings (no second check).
    let planned = plan_checked(
        &session,
        &plan_options(&session, o.model.as_deref()),
        &before,
    );
    // With nothing planned the session after the plan is this one: its findings are `before`'s
    // (the plugin's common case, a valid session, pays for one check, not two).
    let after = if planned.repairs.is_empty() {
        None
    } else {
        Some(
            turnkeeper::opencode::check_session(&simulate(&session, &planned), &opts)
                .map_err(Failure::from)?,
        )
    };
    let left = after.as_ref().map_or(&before.findings, |a| &a.findings);
    let repairs = repairs_json(&planned)?;
    Ok(json!({
        "session_id": planned.session_id,
        "target": value(&before.target)?,
        "model": before.model,
        "findings": value(&before.findings)?,
        "repairs": repairs,
        "left_alone": planned.left_alone,
        "findings_left": value(left)?,
    }))
}

/// The doctor's options for `session`: its own target (or `model`'s), nothing live (OpenCode is
/// not writing the messages the caller hands over).
fn plan_options(
    session: &turnkeeper::opencode::Session,
    model: Option<&str>,
) -> turnkeeper::opencode::PlanOptions {
    turnkeeper::opencode::PlanOptions {
        last_message_live: false,
        target: Some(turnkeeper::opencode::session_target(session, model)),
    }
}

/// The doctor's repairs as plain objects: rule, kind, action, message and part ids, reason, and
/// the new part as JSON text (key order kept: the whole part for a creation, the stored text for
/// a replacement; none for a removal).
fn repairs_json(planned: &turnkeeper::opencode::DoctorPlan) -> Done<Vec<Value>> {
    use turnkeeper::opencode::PartChange;
    planned
        .repairs
        .iter()
        .map(|r| {
            let part = match &r.change {
                PartChange::Remove { .. } => None,
                PartChange::Replace { new_raw, .. } => Some(new_raw.clone()),
                PartChange::Create { json, .. } => Some(json.clone()),
            };
            Ok(json!({
                "rule": value(r.rule())?,
                "kind": value(r.kind)?,
                "action": r.action(),
                "message_id": r.message_id,
                "part_id": r.part_id,
                "reason": r.reason,
                "part": part,
            }))
        })
        .collect()
}

/// Repairs an OpenCode session where OpenCode stores it (`turnkeeper opencode repair
/// --session ID`): the store is the one `storage` names (a data directory, a `storage/` tree or
/// the database file), else OpenCode's own (`$OPENCODE_DB`, `$XDG_DATA_HOME/opencode`, ...); the
/// doctor plans the part repairs the session's target needs and writes them, a backup and its
/// manifest first, each write atomic (`turnkeeper opencode undo --session ID` takes them back).
/// With `dryRun`, nothing is written. The store is written even while OpenCode has it open: this
/// is for a caller inside OpenCode (its plugin, after a `session.error`), at a moment the session
/// is not running. Returns the repairs made, the backup directory (`null` when nothing was
/// written) and the findings on the session read back from the store.
#[napi(
    ts_args_type = "sessionId: string, options?: { storage?: string, model?: string, dryRun?: boolean }",
    ts_return_type = "OpencodeStoredRepair"
)]
pub fn opencode_repair_stored(
    session_id: String,
    options: Option<Object<'_>>,
) -> napi::Result<Value, Code> {
    use turnkeeper::doctor::{StoreRef, apply};
    use turnkeeper::opencode::{plan, simulate};
    let o = Opts::read(options.as_ref(), &["model", "storage", "dryRun"])?;
    let (storage, dry_run) = match options.as_ref() {
        Some(obj) => (
            prop::<String>(obj, "storage", "a path")?,
            prop::<bool>(obj, "dryRun", "a boolean")?.unwrap_or(false),
        ),
        None => (None, false),
    };
    let loc = turnkeeper::stores::opencode::locate(storage.as_deref().map(std::path::Path::new))
        .map_err(Failure::from)?;
    let session = loc.load(&session_id).map_err(Failure::from)?;
    let planned = plan(&session, &plan_options(&session, o.model.as_deref()));
    let backup = if dry_run || planned.is_empty() {
        None
    } else {
        Some(
            apply(StoreRef::from(&loc), &planned)
                .map_err(Failure::from)?
                .backup,
        )
    };
    // Read back from the store opened again (the open one reads the database as it was).
    let after = match backup {
        Some(_) => loc
            .reopened()
            .and_then(|fresh| fresh.load(&session_id))
            .map_err(Failure::from)?,
        None => simulate(&session, &planned),
    };
    let opts = Options {
        model: o.model.clone(),
        ..Options::default()
    };
    let checked = turnkeeper::opencode::check_session(&after, &opts).map_err(Failure::from)?;
    Ok(json!({
        "session_id": planned.session_id,
        "target": value(&checked.target)?,
        "repairs": repairs_json(&planned)?,
        "left_alone": planned.left_alone,
        "written": backup.is_some(),
        "backup": backup.map(|b| b.display().to_string()),
        "findings_left": value(&checked.findings)?,
    }))
}
