//! What every handler shares about HTTP: the response body type, small complete responses, the
//! proxy's own errors in each family's error shape, and header helpers.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;

use crate::family::Family;

/// The body type of every response the proxy sends.
pub(crate) type Body = BoxBody<Bytes, std::io::Error>;

/// A small complete response.
pub(crate) fn text_response(
    status: StatusCode,
    content_type: &str,
    body: String,
) -> Response<Body> {
    let mut r = Response::new(full(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
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

/// The error the proxy answers with when it cannot do its part (the upstream unreachable, a
/// body it cannot read), in the error shape of the family the client speaks, so its SDK reports
/// it as it reports any API error.
pub(crate) fn proxy_error(family: Family, status: StatusCode, message: &str) -> Response<Body> {
    let message = format!("turnkeeper proxy: {message}");
    let body = match family {
        Family::Messages => serde_json::json!({
            "type": "error",
            "error": {"type": "api_error", "message": message},
        }),
        Family::Chat | Family::Responses => serde_json::json!({
            "error": {"message": message, "type": "api_error", "param": null, "code": null},
        }),
        Family::Gemini => serde_json::json!({
            "error": {
                "code": status.as_u16(),
                "message": message,
                "status": if status == StatusCode::BAD_REQUEST { "INVALID_ARGUMENT" } else { "UNAVAILABLE" },
            },
        }),
    };
    text_response(status, "application/json", body.to_string())
}

/// Adds `name: value` to `headers` when the value is a valid header value.
pub(crate) fn set_header(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        headers.insert(HeaderName::from_static(name), v);
    }
}
