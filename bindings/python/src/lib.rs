//! The Python binding of turnkeeper: `import turnkeeper`.
//!
//! Each function takes the body as Python `str` or `bytes` (borrowed, never copied on the way
//! in), releases the GIL while the Rust library works, and returns plain dicts whose fields are
//! those the command line prints with `--json` / `--report`. A repaired body comes back as the
//! type it came in; a body that needed no repair comes back as the very object passed in.
//!
//! Errors are the exception classes of `turnkeeper._errors` (all subclasses of
//! `turnkeeper.TurnkeeperError`), raised from `Failure`; nothing here panics across the FFI
//! (the workspace lints forbid `unwrap`, and every input path returns a `Result`).

use std::borrow::Cow;
use std::path::PathBuf;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyType};
use serde_json::{Value, json};
use turnkeeper::opencode::load_export;
use turnkeeper::recovery::{Attempts as RustAttempts, classify as classify_error, plan};
use turnkeeper::{
    BodyKind, Format, FormatHint, MissingThinking, Mode, Options, Policy, PrefixEdit,
    ProfileOverrides, TurnStore as RustTurnStore,
};

/// Which exception class of `turnkeeper._errors` a failure raises.
#[derive(Clone, Copy, Debug)]
enum Class {
    /// The input is not UTF-8, not JSON, or cannot be read at all: `ReadError`.
    Read,
    /// Valid JSON of no format turnkeeper reads, or not of the format asked: `FormatError`.
    Format,
    /// A repair failed closed (a thinking block would have changed): `RepairError`.
    Repair,
    /// The turn store could not be opened or written, or a response is not one: `StoreError`.
    Store,
    /// An attempts document that is not one: `AttemptsError`.
    Attempts,
    /// An option value the library does not take: `OptionError`.
    Option,
}

impl Class {
    /// The Python class name.
    fn name(self) -> &'static str {
        match self {
            Class::Read => "ReadError",
            Class::Format => "FormatError",
            Class::Repair => "RepairError",
            Class::Store => "StoreError",
            Class::Attempts => "AttemptsError",
            Class::Option => "OptionError",
        }
    }
}

/// A failure made while the GIL is released, raised as a Python exception once it is held again.
#[derive(Debug)]
struct Failure {
    /// The exception class.
    class: Class,
    /// The message, as the command line would print it.
    message: String,
}

impl Failure {
    fn new(class: Class, message: impl Into<String>) -> Self {
        Failure {
            class,
            message: message.into(),
        }
    }

    /// The Python exception.
    fn into_py(self, py: Python<'_>) -> PyErr {
        let class = py
            .import("turnkeeper._errors")
            .and_then(|m| m.getattr(self.class.name()))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, self.message),
            // The package's own module is missing: say so rather than hide the failure.
            Err(e) => e,
        }
    }
}

impl From<turnkeeper::ErrorClass> for Class {
    fn from(c: turnkeeper::ErrorClass) -> Self {
        match c {
            turnkeeper::ErrorClass::Read => Class::Read,
            turnkeeper::ErrorClass::Format => Class::Format,
            turnkeeper::ErrorClass::Store => Class::Store,
            // A repair that failed closed, and any class a later library adds.
            _ => Class::Repair,
        }
    }
}

/// Every error the library returns, raised as the exception of its class (the library's
/// [`turnkeeper::ErrorClass`], which the Node package maps to its error codes too).
impl<E: turnkeeper::HasErrorClass + std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(e.error_class().into(), e.to_string())
    }
}

type Done<T> = Result<T, Failure>;

// ---------------------------------------------------------------------------------------------
// Inputs

/// A body as the caller passed it: `str` or `bytes`, borrowed.
struct Body<'a> {
    /// The object itself (returned as is when nothing changed).
    obj: &'a Bound<'a, PyAny>,
    /// Its bytes; for `bytes`, not yet known to be UTF-8 (checked with the GIL released).
    bytes: &'a [u8],
    /// Whether it came as `bytes`.
    is_bytes: bool,
}

impl<'a> Body<'a> {
    /// Borrows `obj`, which must be `str` or `bytes`.
    fn of(obj: &'a Bound<'a, PyAny>, what: &str) -> PyResult<Self> {
        if let Ok(s) = obj.cast::<PyString>() {
            let text = s.to_str().map_err(|e| {
                Failure::new(Class::Read, format!("{what}: not encodable as UTF-8: {e}"))
                    .into_py(obj.py())
            })?;
            return Ok(Body {
                obj,
                bytes: text.as_bytes(),
                is_bytes: false,
            });
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Body {
                obj,
                bytes: b.as_bytes(),
                is_bytes: true,
            });
        }
        Err(PyTypeError::new_err(format!(
            "{what} must be str or bytes, not {}",
            obj.get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |n| n.to_string())
        )))
    }

    /// A new body of the caller's type holding `text`.
    fn same_type<'py>(&self, py: Python<'py>, text: &str) -> Bound<'py, PyAny> {
        if self.is_bytes {
            PyBytes::new(py, text.as_bytes()).into_any()
        } else {
            PyString::new(py, text).into_any()
        }
    }
}

/// The bytes as text (run with the GIL released; `str` input is UTF-8 already).
fn utf8<'a>(bytes: &'a [u8], what: &str) -> Done<&'a str> {
    // Checked with SIMD where the processor has it; the offset comes from the error.
    turnkeeper::utf8(bytes).map_err(|e| Failure::new(Class::Read, format!("{what}: {e}")))
}

/// `format=`: the names the command line's `--format` takes.
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
            return Err(Failure::new(
                Class::Option,
                format!(
                    "format={other:?}: expected one of auto, anthropic, opencode, gemini, chat, responses, converse"
                ),
            ));
        }
    };
    Ok(FormatHint::Exactly(f))
}

/// `thinking=`: as `--thinking`.
fn thinking_mode(name: Option<&str>) -> Done<Option<Mode>> {
    Ok(match name {
        None => None,
        Some("enabled") => Some(Mode::Manual),
        Some("adaptive") => Some(Mode::Adaptive),
        Some("disabled") => Some(Mode::Off),
        Some(other) => {
            return Err(Failure::new(
                Class::Option,
                format!("thinking={other:?}: expected enabled, adaptive or disabled"),
            ));
        }
    })
}

/// The repair policy from `on_missing_thinking=` and `on_prefix_edit=` (the command line's
/// `--on-missing-thinking` and `--on-prefix-edit`, `_` or `-` alike).
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
                    return Err(Failure::new(
                        Class::Option,
                        format!(
                            "on_missing_thinking: {other:?} is none of restore, disable-thinking, adaptive, close-loop, fail"
                        ),
                    ));
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
                return Err(Failure::new(
                    Class::Option,
                    format!(
                        "on_prefix_edit={other:?}: expected strip-after-edit, drop-block or fail"
                    ),
                ));
            }
        };
    }
    Ok(p)
}

/// `store=`: a `TurnStore` object, or the path of a store directory (opened for the call).
enum StoreArg<'py> {
    None,
    Path(PathBuf),
    Object(PyRef<'py, TurnStore>),
}

impl<'py> StoreArg<'py> {
    fn of(obj: Option<&Bound<'py, PyAny>>) -> PyResult<Self> {
        let Some(obj) = obj.filter(|o| !o.is_none()) else {
            return Ok(StoreArg::None);
        };
        if let Ok(s) = obj.cast::<TurnStore>() {
            return Ok(StoreArg::Object(s.borrow()));
        }
        match obj.extract::<PathBuf>() {
            Ok(p) => Ok(StoreArg::Path(p)),
            Err(_) => Err(PyTypeError::new_err(
                "store must be a turnkeeper.TurnStore or the path of a store directory",
            )),
        }
    }
}

/// What `Options` is made of, gathered with the GIL held and used with it released: plain Rust
/// values, the store a `TurnStore` object holds borrowed from it for the call.
struct OptArgs<'s> {
    model: Option<String>,
    thinking: Option<Mode>,
    betas: Vec<String>,
    policy: Policy,
    profile: Option<PathBuf>,
    store_path: Option<PathBuf>,
    store: Option<&'s RustTurnStore>,
}

/// What a `store=` path or `profile=` file gave, owned for the length of the call.
struct Loaded {
    store: Option<RustTurnStore>,
    overrides: Option<ProfileOverrides>,
}

impl OptArgs<'_> {
    /// Opens what is named by path (GIL released).
    fn load(&self) -> Done<Loaded> {
        let store = match &self.store_path {
            Some(p) => Some(RustTurnStore::open(p)?),
            None => None,
        };
        let overrides = match &self.profile {
            Some(p) => Some(
                ProfileOverrides::from_file(p)
                    .map_err(|e| Failure::new(Class::Option, e.to_string()))?,
            ),
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
            store: self.store.or(l.store.as_ref()),
            overrides: l.overrides.as_ref(),
            input_pages: None,
        }
    }
}

/// The keyword arguments shared by `check` and `repair`, checked with the GIL held.
struct Kw {
    model: Option<String>,
    thinking: Option<Mode>,
    betas: Vec<String>,
    policy: Policy,
    profile: Option<PathBuf>,
}

impl Kw {
    fn new(
        py: Python<'_>,
        model: Option<String>,
        thinking: Option<&str>,
        betas: Option<Vec<String>>,
        profile: Option<PathBuf>,
        on_missing_thinking: Option<Vec<String>>,
        on_prefix_edit: Option<&str>,
    ) -> PyResult<Self> {
        Ok(Kw {
            model,
            thinking: thinking_mode(thinking).map_err(|f| f.into_py(py))?,
            betas: betas.unwrap_or_default(),
            policy: policy(on_missing_thinking, on_prefix_edit).map_err(|f| f.into_py(py))?,
            profile,
        })
    }

    /// With the store: `store_obj` is the borrowed `TurnStore` when one was passed.
    fn with<'s>(self, store: &'s StoreArg<'_>) -> OptArgs<'s> {
        let (store_path, store) = match store {
            StoreArg::None => (None, None),
            StoreArg::Path(p) => (Some(p.clone()), None),
            StoreArg::Object(s) => (None, Some(&s.inner)),
        };
        OptArgs {
            model: self.model,
            thinking: self.thinking,
            betas: self.betas,
            policy: self.policy,
            profile: self.profile,
            store_path,
            store,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Outputs

/// A JSON value as Python objects (dict, list, str, int, float, bool, None).
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for x in items {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, x) in map {
                dict.set_item(k, to_py(py, x)?)?;
            }
            dict.into_any()
        }
    })
}

/// A serialisable value as JSON (run with the GIL released).
fn value(v: impl serde::Serialize) -> Done<Value> {
    serde_json::to_value(v).map_err(|e| Failure::new(Class::Read, e.to_string()))
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

/// Checks a transcript; returns `{"findings": [...]}` (see the stubs for every argument).
#[pyfunction]
#[pyo3(signature = (body, model=None, thinking=None, format=None, store=None, *, betas=None, profile=None, on_missing_thinking=None, on_prefix_edit=None))]
#[allow(clippy::too_many_arguments)]
fn check<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    model: Option<String>,
    thinking: Option<&str>,
    format: Option<&str>,
    store: Option<&Bound<'py, PyAny>>,
    betas: Option<Vec<String>>,
    profile: Option<PathBuf>,
    on_missing_thinking: Option<Vec<String>>,
    on_prefix_edit: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let body = Body::of(body, "body")?;
    let hint = format_hint(format).map_err(|f| f.into_py(py))?;
    let kw = Kw::new(
        py,
        model,
        thinking,
        betas,
        profile,
        on_missing_thinking,
        on_prefix_edit,
    )?;
    let store = StoreArg::of(store)?;
    let args = kw.with(&store);
    let bytes = body.bytes;
    let args_ref = &args;
    let done = py.detach(move || -> Done<Value> {
        let text = utf8(bytes, "body")?;
        let loaded = args_ref.load()?;
        run_check(text, hint, &args_ref.options(&loaded))
    });
    to_py(py, &done.map_err(|f| f.into_py(py))?)
}

/// `repair`'s result before it is turned into Python objects.
struct RepairOut {
    /// The new body, or `None` when the input goes as it came.
    body: Option<String>,
    /// `changes`, `request_changes`, `findings_left`.
    report: Value,
}

fn run_repair(text: &str, hint: FormatHint, opts: &Options<'_>) -> Done<RepairOut> {
    let format = match hint {
        FormatHint::Exactly(f) => f,
        FormatHint::Auto => turnkeeper::sniff(text)?.format,
    };
    if format == Format::Opencode {
        return Err(Failure::new(
            Class::Format,
            "an OpenCode export is checked with `check`; stored sessions are repaired with `turnkeeper opencode repair`",
        ));
    }
    let fixed = turnkeeper::repair_as(text, FormatHint::Exactly(format), opts)?;
    let r = &fixed.report;
    let report = json!({
        "changes": value(&r.changes)?,
        "request_changes": value(&r.request_changes)?,
        "findings_left": value(&r.findings_left)?,
    });
    Ok(RepairOut {
        body: match fixed.body {
            Cow::Borrowed(_) => None,
            Cow::Owned(b) => Some(b),
        },
        report,
    })
}

/// Repairs a transcript; returns `{"body", "changes", "request_changes", "findings_left"}`.
#[pyfunction]
#[pyo3(signature = (body, model=None, thinking=None, format=None, store=None, *, betas=None, profile=None, on_missing_thinking=None, on_prefix_edit=None))]
#[allow(clippy::too_many_arguments)]
fn repair<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    model: Option<String>,
    thinking: Option<&str>,
    format: Option<&str>,
    store: Option<&Bound<'py, PyAny>>,
    betas: Option<Vec<String>>,
    profile: Option<PathBuf>,
    on_missing_thinking: Option<Vec<String>>,
    on_prefix_edit: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let body = Body::of(body, "body")?;
    let hint = format_hint(format).map_err(|f| f.into_py(py))?;
    let kw = Kw::new(
        py,
        model,
        thinking,
        betas,
        profile,
        on_missing_thinking,
        on_prefix_edit,
    )?;
    let store = StoreArg::of(store)?;
    let args = kw.with(&store);
    let bytes = body.bytes;
    let args_ref = &args;
    let done = py.detach(move || -> Done<RepairOut> {
        let text = utf8(bytes, "body")?;
        let loaded = args_ref.load()?;
        run_repair(text, hint, &args_ref.options(&loaded))
    });
    let out = done.map_err(|f| f.into_py(py))?;
    let dict = to_py(py, &out.report)?;
    let new_body = match &out.body {
        Some(b) => body.same_type(py, b),
        None => body.obj.clone(),
    };
    dict.set_item("body", new_body)?;
    Ok(dict)
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

/// A summary of a transcript: format, model, messages, blocks by type, thinking mode.
#[pyfunction]
#[pyo3(signature = (body, format=None))]
fn inspect<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let body = Body::of(body, "body")?;
    let hint = format_hint(format).map_err(|f| f.into_py(py))?;
    let bytes = body.bytes;
    let done = py.detach(move || run_inspect(utf8(bytes, "body")?, hint));
    to_py(py, &done.map_err(|f| f.into_py(py))?)
}

// ---------------------------------------------------------------------------------------------
// classify / recover

/// The error text: `str` as it is, `bytes` read lossily (as the command line reads a file).
fn error_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let b = Body::of(obj, "error")?;
    Ok(String::from_utf8_lossy(b.bytes).into_owned())
}

/// What a provider error means and what to do: `turnkeeper classify --json`'s fields.
#[pyfunction]
#[pyo3(signature = (error, status=None))]
fn classify<'py>(
    py: Python<'py>,
    error: &Bound<'py, PyAny>,
    status: Option<u16>,
) -> PyResult<Bound<'py, PyAny>> {
    let text = error_text(error)?;
    let done = py.detach(move || -> Done<Value> {
        let d = classify_error(status, &text);
        let action = plan(&d, &RustAttempts::new());
        let mut v = value(&d)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("action".to_owned(), value(&action)?);
        }
        Ok(v)
    });
    to_py(py, &done.map_err(|f| f.into_py(py))?)
}

/// `recover`'s result before it is turned into Python objects.
struct RecoverOut {
    report: Value,
    /// The body to send: `None` when nothing is sent, `Some(None)` when it is the request as
    /// it came.
    body: Option<Option<String>>,
}

/// The attempts made so far at one conversation's errors (`--attempts FILE` of the command
/// line, kept in memory). Pass the same object to each `recover` call of a conversation so that
/// the same error twice escalates.
#[pyclass(module = "turnkeeper", name = "Attempts")]
#[derive(Default)]
struct Attempts {
    inner: RustAttempts,
}

#[pymethods]
impl Attempts {
    /// No attempts yet.
    #[new]
    fn new() -> Self {
        Attempts::default()
    }

    /// Reads the JSON the command line keeps in its attempts file (see `to_json`).
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<Self> {
        RustAttempts::from_json(text)
            .map(|inner| Attempts { inner })
            .map_err(|e| Failure::new(Class::Attempts, e.to_string()).into_py(py))
    }

    /// The attempts as the command line's attempts file holds them.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .to_json()
            .map_err(|e| Failure::new(Class::Attempts, e.to_string()).into_py(py))
    }

    /// How many attempts were sent (not skipped).
    #[getter]
    fn sent(&self) -> usize {
        self.inner.sent()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!("turnkeeper.Attempts({} attempt(s))", self.inner.len())
    }
}

/// Classifies `error`, plans the next step and applies it to `request`, the body that failed:
/// the fields of `turnkeeper recover --report`, and `body`, what to send (`None`: nothing).
#[pyfunction]
#[pyo3(signature = (request, error, attempts=None, status=None, *, model=None, betas=None, store=None))]
#[allow(clippy::too_many_arguments)]
fn recover<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    error: &Bound<'py, PyAny>,
    attempts: Option<Bound<'py, Attempts>>,
    status: Option<u16>,
    model: Option<String>,
    betas: Option<Vec<String>>,
    store: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let body = Body::of(request, "request")?;
    let err = error_text(error)?;
    let kw = Kw::new(py, model, None, betas, None, None, None)?;
    let store = StoreArg::of(store)?;
    let args = kw.with(&store);
    let mut mine = Attempts::default();
    let mut theirs = attempts.as_ref().map(|a| a.borrow_mut());
    let tried: &mut RustAttempts = match theirs.as_mut() {
        Some(a) => &mut a.inner,
        None => &mut mine.inner,
    };
    let bytes = body.bytes;
    let args_ref = &args;
    let done = py.detach(move || -> Done<RecoverOut> {
        let text = utf8(bytes, "request")?;
        // As the command line: the request must be a readable request before anything else; a
        // Chat, Responses or Converse body is read by its own reader inside `recover`.
        let wire = turnkeeper::sniff(text).is_ok_and(|s| !s.format.is_transcript());
        if !wire {
            turnkeeper::read(text, FormatHint::Auto).map_err(|e| {
                let f = Failure::from(e);
                Failure::new(
                    f.class,
                    format!("request: not a readable request: {}", f.message),
                )
            })?;
        }
        let loaded = args_ref.load()?;
        let opts = Options {
            thinking: None,
            policy: Policy::default(),
            ..args_ref.options(&loaded)
        };
        let d = classify_error(status, &err);
        let r = turnkeeper::recovery::recover_with(text, &d, tried, &opts)?;
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
        let body = r
            .sends()
            .then(|| (r.body.as_bytes() != bytes).then_some(r.body));
        Ok(RecoverOut { report, body })
    });
    let out = done.map_err(|f| f.into_py(py))?;
    let dict = to_py(py, &out.report)?;
    let to_send = match &out.body {
        None => py.None().into_bound(py),
        Some(None) => body.obj.clone(),
        Some(Some(b)) => body.same_type(py, b),
    };
    dict.set_item("body", to_send)?;
    Ok(dict)
}

// ---------------------------------------------------------------------------------------------
// The turn store

/// A turn store: the provider's responses as they arrived, so that `check` and `repair` can put
/// back an assistant turn an agent altered (pass it as `store=`). With a path, every response
/// added is also written there (as `turnkeeper store add` does) and the store is loaded from it.
#[pyclass(module = "turnkeeper", name = "TurnStore")]
struct TurnStore {
    inner: RustTurnStore,
    path: Option<PathBuf>,
}

#[pymethods]
impl TurnStore {
    /// Opens (creating it) the store directory `path`, or an in-memory store without one.
    #[new]
    #[pyo3(signature = (path=None))]
    fn new(py: Python<'_>, path: Option<PathBuf>) -> PyResult<Self> {
        let opened = py.detach(|| -> Done<RustTurnStore> {
            Ok(match &path {
                Some(p) => RustTurnStore::open(p)?,
                None => RustTurnStore::in_memory(),
            })
        });
        Ok(TurnStore {
            inner: opened.map_err(|f| f.into_py(py))?,
            path,
        })
    }

    /// Records a response body (a Messages API response as JSON, or its whole SSE stream, `str`
    /// or `bytes`); returns its response id (`msg_...`), or `None` when it has none.
    fn add(
        mut slf: PyRefMut<'_, Self>,
        py: Python<'_>,
        response: &Bound<'_, PyAny>,
    ) -> PyResult<Option<String>> {
        let body = Body::of(response, "response")?;
        let bytes = body.bytes;
        let store = &mut slf.inner;
        let done = py.detach(move || -> Done<Option<String>> {
            let text = utf8(bytes, "response")?;
            Ok(store.add_response(text)?.response_id.clone())
        });
        done.map_err(|f| f.into_py(py))
    }

    /// The store directory, or `None` for an in-memory store.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// Files in the directory that could not be read, with the reason.
    #[getter]
    fn problems(&self) -> Vec<String> {
        self.inner.problems.clone()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        match &self.path {
            Some(p) => format!(
                "turnkeeper.TurnStore({:?}, {} turn(s))",
                p.display().to_string(),
                self.inner.len()
            ),
            None => format!(
                "turnkeeper.TurnStore({} turn(s) in memory)",
                self.inner.len()
            ),
        }
    }
}

/// The native module, `turnkeeper._native`; `turnkeeper/__init__.py` re-exports it.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(repair, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(classify, m)?)?;
    m.add_function(wrap_pyfunction!(recover, m)?)?;
    m.add_class::<TurnStore>()?;
    m.add_class::<Attempts>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
