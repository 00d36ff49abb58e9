//! RFC 9457 problem+json: the one mapping from app-layer errors to HTTP.

use std::collections::BTreeMap;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::{ContentBuilder, RefOr, ResponseBuilder};

use crate::app::{Error, FieldError};

pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error answer (RFC 9457).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Problem {
    /// A URI naming the problem type.
    #[serde(rename = "type")]
    pub problem_type: String,
    pub title: String,
    pub status: u16,
    /// What went wrong, for people.
    pub detail: String,
    /// Stable machine-readable code, e.g. `invalid_request`, `not_found`, `quota_exceeded`.
    pub code: String,
    /// Every bad field, for `invalid_request`; the code's field when a
    /// one-time code is unknown, expired or used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldErrorDoc>,
    /// The limit that was reached, for `quota_exceeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaFailure>,
    /// The request's `x-request-id`: quote it when you ask for help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Which quota a request would exceed, and by how much.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct QuotaFailure {
    /// The quota's name, as in `GET /v1/orgs/{org}/quotas` (e.g. `clusters`).
    pub resource: String,
    pub limit: i64,
    /// What is in use now.
    pub usage: i64,
    /// What the request asked for on top.
    pub requested: i64,
}

/// One bad field in a [`Problem`].
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FieldErrorDoc {
    pub field: String,
    pub code: String,
    pub message: String,
}

impl From<FieldError> for FieldErrorDoc {
    fn from(e: FieldError) -> Self {
        FieldErrorDoc { field: e.field, code: e.code, message: e.message }
    }
}

/// An app-layer error on its way out as problem+json.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError(error)
    }
}

fn status_of(error: &Error) -> StatusCode {
    match error {
        Error::Invalid(_) | Error::Malformed(_) | Error::Grant { .. } => StatusCode::BAD_REQUEST,
        Error::CodeUnusable { gone: false, .. } => StatusCode::NOT_FOUND,
        Error::CodeUnusable { gone: true, .. } => StatusCode::GONE,
        Error::Unauthenticated => StatusCode::UNAUTHORIZED,
        Error::Forbidden | Error::Refused { .. } => StatusCode::FORBIDDEN,
        Error::NotFound { .. } => StatusCode::NOT_FOUND,
        Error::Conflict { .. } | Error::QuotaExceeded { .. } | Error::IdempotencyInFlight => StatusCode::CONFLICT,
        Error::PreconditionFailed { .. } => StatusCode::PRECONDITION_FAILED,
        Error::IdempotencyMismatch => StatusCode::UNPROCESSABLE_ENTITY,
        Error::Unavailable { .. } | Error::VaultUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        Error::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        Error::Internal(_) | Error::Held(_) => StatusCode::INTERNAL_SERVER_ERROR,
        Error::DryRun(_) => StatusCode::OK,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let error = match self.0 {
            // Not an error: the plan of a dry run, the request's answer.
            Error::DryRun(plan) => return dry_run_answer(*plan),
            error => error,
        };
        let status = status_of(&error);
        if let Error::Internal(source) = &error {
            // Details go to the log (with the request id of the span), never to the client.
            tracing::error!(error = format!("{source:#}"), "internal error");
        }
        let code = error.code();
        let retry_after = match &error {
            Error::Unavailable { retry_after_seconds, .. } | Error::RateLimited { retry_after_seconds, .. } => {
                Some(*retry_after_seconds)
            }
            Error::VaultUnavailable(_) => Some(5),
            _ => None,
        };
        let rate_limit = match &error {
            Error::RateLimited { limit, window_seconds, retry_after_seconds } => {
                Some((*limit, *window_seconds, *retry_after_seconds))
            }
            _ => None,
        };
        let detail = match &error {
            Error::Invalid(errors) => {
                let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
                format!("invalid fields: {}", fields.join(", "))
            }
            Error::Internal(_) => "an internal error occurred; it has been logged with this request's id".to_string(),
            other => other.to_string(),
        };
        let quota = match &error {
            Error::QuotaExceeded { quota, limit, usage, requested } => {
                Some(QuotaFailure { resource: quota.to_string(), limit: *limit, usage: *usage, requested: *requested })
            }
            _ => None,
        };
        let errors = match error {
            Error::Invalid(errors) => errors.into_iter().map(FieldErrorDoc::from).collect(),
            Error::CodeUnusable { field, code, detail, .. } => {
                vec![FieldErrorDoc { field: field.to_string(), code: code.to_string(), message: detail }]
            }
            _ => Vec::new(),
        };
        let problem = Problem {
            problem_type: format!("https://docs.moke.dev/problems/{code}"),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail,
            code: code.to_string(),
            errors,
            quota,
            // Filled in on the way out by `problem_request_id`, which knows the request.
            request_id: None,
        };
        let mut response = (status, axum::Json(problem)).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some((limit, window, reset)) = rate_limit {
            crate::http::rate_limit_headers(response.headers_mut(), limit, window, 0, reset);
        }
        response
    }
}

/// The error answers every authenticated operation can give, for the OpenAPI document.
pub struct Problems;

impl utoipa::IntoResponses for Problems {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::response::Response>> {
        [
            ("400", "Invalid or malformed request; `errors` lists every bad field"),
            ("401", "Missing, invalid, expired or revoked token"),
            ("403", "The token's role does not allow this"),
            ("404", "No such resource (or it belongs to another organization)"),
            ("409", "Conflicts with current state, a quota, or an in-flight request with the same Idempotency-Key"),
            ("412", "If-Match does not match the current ETag"),
            ("422", "Idempotency-Key reused with a different request"),
            ("429", "Rate limit reached; retry after Retry-After seconds (RateLimit-* headers tell the policy)"),
            ("503", "Temporarily unavailable; retry after Retry-After seconds"),
        ]
        .into_iter()
        .map(|(status, description)| {
            let response = ResponseBuilder::new()
                .description(description)
                .content(
                    PROBLEM_JSON,
                    ContentBuilder::new().schema(Some(utoipa::openapi::Ref::from_schema_name("Problem"))).build(),
                )
                .build();
            (status.to_string(), RefOr::T(response))
        })
        .collect()
    }
}

/// Marks a dry run's answer, so the layer that checks dry runs
/// (`http::dry_run_answers`) knows the mutation reached its commit.
pub const DRY_RUN_HEADER: &str = "moke-dry-run";

/// A dry run's plan as a `200` answer.
pub fn dry_run_answer(plan: crate::model::DryRunView) -> Response {
    let mut response = (StatusCode::OK, axum::Json(plan)).into_response();
    response.headers_mut().insert(DRY_RUN_HEADER, axum::http::HeaderValue::from_static("true"));
    response
}
