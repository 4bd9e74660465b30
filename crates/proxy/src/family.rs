//! The wire families the proxy reads, the routes that carry them, and the upstream each goes to.
//!
//! | route | family | upstream |
//! |---|---|---|
//! | `POST /v1/messages` | Anthropic Messages | `--upstream` |
//! | `POST /v1/chat/completions`, `POST /chat/completions` | OpenAI Chat Completions (OpenAI, DeepSeek, Kimi, OpenRouter, vLLM, ...) | `--upstream-openai` |
//! | `POST /v1/responses`, `POST /responses` | OpenAI Responses | `--upstream-openai` |
//! | `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (and under `/v1/`) | Gemini | `--upstream-gemini` |
//!
//! The client's path and query are appended to the family's upstream base URL as they came. Every
//! other request is forwarded untouched, to the upstream its credentials name (see
//! [`other_upstream`]).

use http::HeaderMap;
use turnkeeper_model::Format;

/// A wire family, as a route of the proxy carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// Anthropic Messages.
    Messages,
    /// OpenAI Chat Completions and the OpenAI-compatible vendors.
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Gemini `generateContent`.
    Gemini,
}

impl Family {
    /// The `route` label of the metrics.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Family::Messages => "messages",
            Family::Chat => "chat",
            Family::Responses => "responses",
            Family::Gemini => "gemini",
        }
    }

    /// The family whose [`Family::label`] is `label`.
    pub(crate) fn of_label(label: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.label() == label)
    }

    /// The body format the rules read.
    pub(crate) fn format(self) -> Format {
        match self {
            Family::Messages => Format::Anthropic,
            Family::Chat => Format::Chat,
            Family::Responses => Format::Responses,
            Family::Gemini => Format::Gemini,
        }
    }

    /// Index into per-family tables.
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// Every family, in index order.
    pub(crate) const ALL: [Family; 4] = [
        Family::Messages,
        Family::Chat,
        Family::Responses,
        Family::Gemini,
    ];
}

/// A request the proxy reads: its family, and what its path says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Route {
    /// The family.
    pub(crate) family: Family,
    /// The model the path names (Gemini: `models/{model}:...`); the other families name it in
    /// the body.
    pub(crate) model: Option<String>,
    /// The path asks for a stream (Gemini's `:streamGenerateContent`); the other families say
    /// so in the body.
    pub(crate) stream: bool,
}

/// The route of a `POST` to `path`, or `None` for a path the proxy forwards untouched.
pub(crate) fn route(path: &str) -> Option<Route> {
    let plain = |family| {
        Some(Route {
            family,
            model: None,
            stream: false,
        })
    };
    match path {
        "/v1/messages" => return plain(Family::Messages),
        "/v1/chat/completions" | "/chat/completions" => return plain(Family::Chat),
        "/v1/responses" | "/responses" => return plain(Family::Responses),
        _ => {}
    }
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))
        .or_else(|| path.strip_prefix("/v1alpha/models/"))?;
    let (model, method) = rest.rsplit_once(':')?;
    if model.is_empty() || model.contains('/') {
        return None;
    }
    let stream = match method {
        "generateContent" => false,
        "streamGenerateContent" => true,
        _ => return None,
    };
    Some(Route {
        family: Family::Gemini,
        model: Some(model.to_owned()),
        stream,
    })
}

/// The family whose upstream a request the proxy does not read goes to: Gemini for Google's
/// paths (`/v1beta/...`) or key (`x-goog-api-key`, `?key=`); Anthropic for its headers
/// (`x-api-key`, `anthropic-version`); OpenAI for a bearer token without them; Anthropic else,
/// as before the other families had routes.
pub(crate) fn other_upstream(path: &str, query: Option<&str>, headers: &HeaderMap) -> Family {
    let google_query = query.is_some_and(|q| q.split('&').any(|p| p.starts_with("key=")));
    if path.starts_with("/v1beta/")
        || path.starts_with("/v1alpha/")
        || headers.contains_key("x-goog-api-key")
        || google_query
    {
        Family::Gemini
    } else if headers.contains_key("x-api-key") || headers.contains_key("anthropic-version") {
        Family::Messages
    } else if headers.contains_key(http::header::AUTHORIZATION) {
        Family::Chat
    } else {
        Family::Messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_path() {
        assert_eq!(
            route("/v1/messages").map(|r| r.family),
            Some(Family::Messages)
        );
        assert_eq!(
            route("/chat/completions").map(|r| r.family),
            Some(Family::Chat)
        );
        assert_eq!(
            route("/v1/chat/completions").map(|r| r.family),
            Some(Family::Chat)
        );
        assert_eq!(
            route("/responses").map(|r| r.family),
            Some(Family::Responses)
        );
        let g = route("/v1beta/models/gemini-3-pro-preview:streamGenerateContent").expect("gemini");
        assert_eq!(g.family, Family::Gemini);
        assert_eq!(g.model.as_deref(), Some("gemini-3-pro-preview"));
        assert!(g.stream);
        let g = route("/v1/models/gemini-2.5-flash:generateContent").expect("gemini v1");
        assert!(!g.stream);
        assert_eq!(route("/v1beta/models/gemini-2.5-flash:countTokens"), None);
        assert_eq!(route("/v1/models"), None);
        assert_eq!(route("/v1/messages/count_tokens"), None);
        // A model name that is empty or holds a slash is no Gemini route.
        assert_eq!(route("/v1beta/models/:generateContent"), None);
        assert_eq!(route("/v1beta/models/a/b:generateContent"), None);
        let g = route("/v1alpha/models/gemini-3-pro-preview:generateContent").expect("v1alpha");
        assert_eq!(g.model.as_deref(), Some("gemini-3-pro-preview"));
    }

    #[test]
    fn other_requests_go_to_the_upstream_their_credentials_name() {
        let mut h = HeaderMap::new();
        assert_eq!(other_upstream("/v1/models", None, &h), Family::Messages);
        h.insert("authorization", "Bearer sk-x".parse().expect("v"));
        assert_eq!(other_upstream("/v1/models", None, &h), Family::Chat);
        h.insert("anthropic-version", "2023-06-01".parse().expect("v"));
        assert_eq!(other_upstream("/v1/models", None, &h), Family::Messages);
        assert_eq!(
            other_upstream("/v1beta/models", None, &HeaderMap::new()),
            Family::Gemini
        );
        assert_eq!(
            other_upstream("/v1/models", Some("key=abc"), &HeaderMap::new()),
            Family::Gemini
        );
        // Each of Google's signs alone is enough.
        assert_eq!(
            other_upstream("/v1alpha/files", None, &HeaderMap::new()),
            Family::Gemini
        );
        let mut g = HeaderMap::new();
        g.insert("x-goog-api-key", "k".parse().expect("v"));
        assert_eq!(other_upstream("/upload/files", None, &g), Family::Gemini);
        assert_eq!(
            other_upstream("/v1/models", Some("pageSize=5&key=abc"), &HeaderMap::new()),
            Family::Gemini
        );
        assert_eq!(
            other_upstream("/v1/models", Some("monkey=1"), &HeaderMap::new()),
            Family::Messages
        );
        let mut a = HeaderMap::new();
        a.insert("x-api-key", "sk-ant".parse().expect("v"));
        a.insert("authorization", "Bearer x".parse().expect("v"));
        assert_eq!(other_upstream("/v1/models", None, &a), Family::Messages);
    }
}
