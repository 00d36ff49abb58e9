//! What goes wrong, as a page shows it: the API's problem+json (status,
//! title, detail, the fields it names, the request id) or the console's own.
//!
//! A form's error travels back to the form's page in the URL (Leptos's
//! no-JavaScript path: `?__path=…&__err=…`). So that nobody can craft a link
//! that shows a made-up error on a Moke page, the encoded error carries an
//! HMAC under the console's key; one that does not verify shows as a
//! generic error.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use leptos::prelude::*;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use moke_sdk::types;
use serde::{Deserialize, Serialize};

use crate::Console;

/// An error a page or form shows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConsoleError {
    /// The HTTP status the API answered (or the console chose).
    pub status: u16,
    pub title: String,
    pub detail: String,
    /// The API's machine-readable code (`invalid_request`, `not_found`, …).
    #[serde(default)]
    pub code: String,
    /// Field-level problems, by the API's field name.
    #[serde(default)]
    pub fields: Vec<FieldProblem>,
    /// The request id to quote to support.
    #[serde(default)]
    pub request_id: Option<String>,
    /// What the person had typed (never a secret), by input name, so that
    /// the form comes back filled in.
    #[serde(default)]
    pub values: Vec<(String, String)>,
}

/// One field's problem.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FieldProblem {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConsoleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.title, self.detail)
    }
}

impl std::error::Error for ConsoleError {}

impl ConsoleError {
    pub fn new(status: u16, title: &str, detail: impl Into<String>) -> ConsoleError {
        ConsoleError {
            status,
            title: title.into(),
            detail: detail.into(),
            code: String::new(),
            fields: Vec::new(),
            request_id: None,
            values: Vec::new(),
        }
    }

    /// Keeps what the person typed into the inputs `values` (no passwords
    /// or tokens: the error travels in the page's URL).
    /// The problems the API named `from` shown at the input of `to` (a
    /// rule over several inputs, shown beside the last of them).
    pub fn shown_at(mut self, from: &str, to: &str) -> ConsoleError {
        for problem in self.fields.iter_mut().filter(|p| p.field == from) {
            problem.field = to.to_string();
        }
        self
    }

    pub fn keep(mut self, values: &[(&str, &str)]) -> ConsoleError {
        self.values = values.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect();
        self
    }

    /// What the person had typed into the input `name`.
    pub fn value(&self, name: &str) -> Option<String> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }

    /// The `code` of [`ConsoleError::estimate`].
    pub const ESTIMATE: &'static str = "estimate";

    /// Not an error: the cluster form sent back to be priced, its values
    /// kept (they return to the form sealed, as a form's errors do).
    pub fn estimate() -> ConsoleError {
        ConsoleError { code: Self::ESTIMATE.into(), ..ConsoleError::new(200, "Estimate", "") }
    }

    /// Not signed in, or the session ended: the page sends the browser to sign in.
    pub fn signed_out() -> ConsoleError {
        ConsoleError { code: "signed_out".into(), ..ConsoleError::new(401, "Signed out", "Sign in to continue.") }
    }

    /// A form without this browser's CSRF token.
    pub fn csrf() -> ConsoleError {
        ConsoleError {
            code: "csrf".into(),
            ..ConsoleError::new(
                403,
                "This form has expired",
                "The page was open too long, or the form came from elsewhere. Reload the page and try again.",
            )
        }
    }

    /// Problems with the form's own fields, found before any API call.
    pub fn invalid(fields: Vec<FieldProblem>) -> ConsoleError {
        ConsoleError {
            code: "invalid_request".into(),
            fields,
            ..ConsoleError::new(400, "Some fields need attention", "Correct the marked fields and send again.")
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.status == 404
    }

    /// The messages for the form field `name` (API field names may have a
    /// path below it: `spec.region` belongs to a field named `spec.region`
    /// and to `spec`).
    pub fn field_messages(&self, name: &str) -> Vec<String> {
        self.fields
            .iter()
            .filter(|problem| {
                problem.field == name
                    || problem.field.strip_prefix(name).is_some_and(|rest| rest.starts_with(['.', '[']))
            })
            .map(|problem| problem.message.clone())
            .collect()
    }
}

impl ConsoleError {
    /// The API's problem answer, with its field errors.
    pub(crate) fn from_problem(status: u16, problem: types::Problem) -> ConsoleError {
        ConsoleError {
            status,
            title: problem.title,
            detail: problem.detail,
            code: problem.code,
            fields: problem.errors.into_iter().map(|e| FieldProblem { field: e.field, message: e.message }).collect(),
            request_id: problem.request_id,
            values: Vec::new(),
        }
    }
}

impl From<moke_sdk::Error<types::Problem>> for ConsoleError {
    fn from(error: moke_sdk::Error<types::Problem>) -> ConsoleError {
        match error {
            moke_sdk::Error::ErrorResponse(answer) => {
                let status = answer.status().as_u16();
                ConsoleError::from_problem(status, answer.into_inner())
            }
            moke_sdk::Error::InvalidRequest(detail) => ConsoleError::new(400, "Invalid input", detail),
            moke_sdk::Error::CommunicationError(_) | moke_sdk::Error::InvalidUpgrade(_) => {
                tracing::warn!("the console could not reach the API");
                ConsoleError::new(503, "Moke is unavailable", "The API could not be reached. Try again in a moment.")
            }
            other => {
                let status = other.status().map_or(502, |s| s.as_u16());
                // Not the error's text: for an unreadable answer it holds the
                // body, which may carry a token or secret.
                tracing::warn!(status, "the API answered the console unexpectedly");
                ConsoleError::new(status, "Unexpected answer", "The API answered in a way the console did not expect.")
            }
        }
    }
}

/// The catalogs' errors (their document states no problem body).
impl From<moke_sdk::Error<()>> for ConsoleError {
    fn from(error: moke_sdk::Error<()>) -> ConsoleError {
        let status = error.status().map_or(503, |s| s.as_u16());
        tracing::warn!(status, "a catalog could not be read");
        ConsoleError::new(status, "Moke is unavailable", "A catalog could not be read. Try again in a moment.")
    }
}

impl FromServerFnError for ConsoleError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> ConsoleError {
        tracing::debug!(error = %value, "a console form could not be read");
        ConsoleError::new(400, "The form could not be read", "Reload the page and send the form again.")
    }

    /// `tag.issued.json`: the tag is an HMAC over this browser's CSRF seed,
    /// the time and the error, so that an error shows only in the browser
    /// whose form made it, for ten minutes.
    fn ser(&self) -> leptos::server_fn::Bytes {
        let session = use_context::<crate::session::RequestSession>();
        let mut error = self.clone();
        if error.request_id.is_none() {
            error.request_id = session.as_ref().and_then(|s| s.request_id());
        }
        let json = serde_json::to_vec(&error).unwrap_or_default();
        let issued = chrono::Utc::now().timestamp();
        let seed = session.map(|s| s.csrf_seed()).unwrap_or_default();
        let tag = use_context::<Arc<Console>>()
            .map(|console| B64.encode(ring::hmac::sign(&console.keys.mac, &signed_error(&seed, issued, &json))))
            .unwrap_or_default();
        let mut out = format!("{tag}.{issued}.").into_bytes();
        out.extend(json);
        out.into()
    }

    fn de(data: leptos::server_fn::Bytes) -> ConsoleError {
        let unverified = || ConsoleError::new(400, "Something went wrong", "Send the form again.");
        let mut parts = data.splitn(3, |b| *b == b'.');
        let (Some(tag), Some(issued), Some(json)) = (parts.next(), parts.next(), parts.next()) else {
            return unverified();
        };
        let Some(issued) = std::str::from_utf8(issued).ok().and_then(|t| t.parse::<i64>().ok()) else {
            return unverified();
        };
        let (Some(console), Some(session)) =
            (use_context::<Arc<Console>>(), use_context::<crate::session::RequestSession>())
        else {
            return unverified();
        };
        let Ok(tag) = B64.decode(tag) else { return unverified() };
        let fresh = (0..=ERROR_SHOWN_SECONDS).contains(&(chrono::Utc::now().timestamp() - issued));
        let mac = signed_error(&session.csrf_seed(), issued, json);
        if !fresh || ring::hmac::verify(&console.keys.mac, &mac, &tag).is_err() {
            return unverified();
        }
        serde_json::from_slice(json).unwrap_or_else(|_| unverified())
    }
}

/// How long a form's error can be shown after the post that made it.
const ERROR_SHOWN_SECONDS: i64 = 600;

/// What a form error's tag signs.
fn signed_error(seed: &str, issued: i64, json: &[u8]) -> Vec<u8> {
    let mut signed = format!("form-error\0{seed}\0{issued}\0").into_bytes();
    signed.extend_from_slice(json);
    signed
}
