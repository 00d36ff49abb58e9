//! The app layer's one error type. Every surface maps it once (REST to
//! problem+json, later gRPC status codes), so all surfaces agree.

use serde::Serialize;

/// One bad input field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// Dotted path of the field in the request, e.g. `spec.region`.
    pub field: String,
    /// Stable machine code, e.g. `unknown_region`, `out_of_range`.
    pub code: String,
    /// What is wrong, for people.
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, code: &str, message: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), code: code.to_string(), message: message.into() }
    }
}

/// Collects every bad field before answering, so callers fix them all at once.
#[derive(Debug, Default)]
pub struct Validator {
    errors: Vec<FieldError>,
}

impl Validator {
    pub fn new() -> Validator {
        Validator::default()
    }
    pub fn push(&mut self, field: impl Into<String>, code: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, code, message));
    }
    /// Records `message` for `field` unless `ok`.
    pub fn check(&mut self, ok: bool, field: impl Into<String>, code: &str, message: impl Into<String>) {
        if !ok {
            self.push(field, code, message);
        }
    }
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
    /// `Ok(())` when nothing was recorded, else [`Error::Invalid`] with every field.
    pub fn finish(self) -> Result<(), Error> {
        if self.errors.is_empty() { Ok(()) } else { Err(Error::Invalid(self.errors)) }
    }
}

/// Everything an app-layer call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the request has invalid fields")]
    Invalid(Vec<FieldError>),
    #[error("the request could not be read: {0}")]
    Malformed(String),
    #[error("no credentials or invalid credentials")]
    Unauthenticated,
    #[error("{kind} {name} not found")]
    NotFound { kind: &'static str, name: String },
    #[error("your role does not allow this")]
    Forbidden,
    /// Allowed by role but refused by a rule with its own code: a credential
    /// that may not confer more than it has, an organization policy.
    #[error("{detail}")]
    Refused { code: &'static str, detail: String },
    #[error("{detail}")]
    Conflict { code: &'static str, detail: String },
    /// A one-time code a person typed (a device's user code) that names
    /// nothing usable: none such (`gone: false`, answered as not found), or
    /// one that expired or was used (`gone: true`). The answer names `field`.
    #[error("{detail}")]
    CodeUnusable { field: &'static str, code: &'static str, gone: bool, detail: String },
    /// A token endpoint's refusal of a grant, with the code RFC 6749 §5.2
    /// and RFC 8628 §3.5 give it (`authorization_pending`, `slow_down`,
    /// `access_denied`, `expired_token`, `invalid_grant`,
    /// `unsupported_grant_type`); those RFCs answer it with 400.
    #[error("{detail}")]
    Grant { code: &'static str, detail: String },
    #[error("quota {quota} exceeded: limit {limit}, in use {usage}, requested {requested}")]
    QuotaExceeded { quota: &'static str, limit: i64, usage: i64, requested: i64 },
    #[error("the resource changed since you read it; current ETag is {current_etag}")]
    PreconditionFailed { current_etag: String },
    #[error("this Idempotency-Key was used with a different request")]
    IdempotencyMismatch,
    #[error("a request with this Idempotency-Key is still in progress")]
    IdempotencyInFlight,
    #[error("{detail}")]
    Unavailable { detail: String, retry_after_seconds: u64 },
    #[error("too many requests: the limit is {limit} per {window_seconds} s; retry after {retry_after_seconds} s")]
    RateLimited { limit: u32, window_seconds: u64, retry_after_seconds: u64 },
    #[error("Vault is unavailable, and this needs it: {0}")]
    VaultUnavailable(String),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
    /// Not a failure: a dry run reached its commit and wrote nothing; this
    /// is what it would have done. Surfaces answer it as the request's
    /// success (see `kernel::dry_run`).
    #[error("dry run: nothing was changed")]
    DryRun(Box<crate::model::DryRunView>),
    /// Not a failure either, and never seen by a surface: the approval
    /// policy holds the change, which `App::unless_held` turns into an
    /// Operation awaiting approval.
    #[error("the change waits for approval")]
    Held(Box<crate::app::infra::approvals::Hold>),
}

impl Error {
    pub fn not_found(kind: &'static str, name: impl Into<String>) -> Error {
        Error::NotFound { kind, name: name.into() }
    }
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Error {
        Error::Conflict { code, detail: detail.into() }
    }
    pub fn refused(code: &'static str, detail: impl Into<String>) -> Error {
        Error::Refused { code, detail: detail.into() }
    }
    pub fn invalid_field(field: &str, code: &str, message: impl Into<String>) -> Error {
        Error::Invalid(vec![FieldError::new(field, code, message)])
    }

    /// Whether this is an outage (the database or Vault away or overloaded)
    /// rather than a refusal of what was asked: work that met it is tried
    /// again whole, and it counts against no item of it.
    pub fn is_outage(&self) -> bool {
        match self {
            Error::Unavailable { .. } | Error::VaultUnavailable(_) => true,
            Error::Internal(cause) => cause.downcast_ref::<sqlx::Error>().is_some_and(|e| match e {
                sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::WorkerCrashed
                | sqlx::Error::Protocol(_) => true,
                // The server, not the statement: a connection lost (08), out
                // of resources (53), shut down or cancelled, a statement
                // timeout among them (57), a lock not had in time (55P03),
                // read-only during a failover (25006).
                sqlx::Error::Database(db) => db.code().is_some_and(|code| {
                    ["08", "53", "57"].iter().any(|class| code.starts_with(class))
                        || matches!(code.as_ref(), "55P03" | "25006")
                }),
                _ => false,
            }),
            _ => false,
        }
    }

    /// What went wrong, with an internal error's causes (for logs and
    /// operators, never for clients).
    pub fn detail(&self) -> String {
        match self {
            Error::Internal(cause) => format!("{cause:#}"),
            other => other.to_string(),
        }
    }

    /// The stable machine code shown to clients.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Invalid(_) => "invalid_request",
            Error::Malformed(_) => "malformed_request",
            Error::Unauthenticated => "unauthenticated",
            Error::NotFound { .. } => "not_found",
            Error::Forbidden => "forbidden",
            Error::Refused { code, .. } => code,
            Error::Conflict { code, .. } => code,
            Error::CodeUnusable { code, .. } => code,
            Error::Grant { code, .. } => code,
            Error::QuotaExceeded { .. } => "quota_exceeded",
            Error::PreconditionFailed { .. } => "precondition_failed",
            Error::IdempotencyMismatch => "idempotency_key_reused",
            Error::IdempotencyInFlight => "idempotency_key_in_flight",
            Error::Unavailable { .. } => "unavailable",
            Error::RateLimited { .. } => "rate_limited",
            Error::VaultUnavailable(_) => "vault_unavailable",
            Error::Internal(_) => "internal",
            Error::DryRun(_) => "dry_run",
            Error::Held(_) => "internal",
        }
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Error {
        match error {
            sqlx::Error::PoolTimedOut => {
                Error::Unavailable { detail: "the service is overloaded; retry shortly".into(), retry_after_seconds: 1 }
            }
            // Two requests that each waited for what the other held: one of
            // them is stopped, and retrying it succeeds.
            sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("40P01" | "40001")) => {
                // Each one is a lock-order question worth an answer: keep a trace.
                tracing::warn!(code = ?db.code(), error = %db.message(), "transaction stopped by a concurrent one");
                Error::Unavailable {
                    detail: "a concurrent change got in the way; retry".into(),
                    retry_after_seconds: 1,
                }
            }
            // A parent deleted by a concurrent request between our read and our write.
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => Error::conflict(
                "concurrent_change",
                "a resource this change depends on was changed or deleted at the same time; read it again and retry",
            ),
            other => Error::Internal(other.into()),
        }
    }
}

impl From<crate::vault::VaultUnavailable> for Error {
    fn from(error: crate::vault::VaultUnavailable) -> Error {
        tracing::warn!(error = %error.0, "Vault call failed");
        Error::VaultUnavailable("retry shortly".to_string())
    }
}

impl From<moke_iam::Excess> for Error {
    fn from(excess: moke_iam::Excess) -> Error {
        Error::refused("exceeds_credential", format!("refused: this {}", excess.describe()))
    }
}

impl From<moke_iam::Denied> for Error {
    fn from(denied: moke_iam::Denied) -> Error {
        match denied {
            // The caller learns nothing about what exists elsewhere.
            moke_iam::Denied::NotFound => Error::not_found("resource", "requested"),
            moke_iam::Denied::Forbidden => Error::Forbidden,
        }
    }
}

/// Maps a database error: a unique-constraint violation becomes `on_unique`
/// (a name taken, say), anything else the usual mapping.
/// `.map_err(or_unique(|| Error::conflict(...)))`
pub fn or_unique(on_unique: impl FnOnce() -> Error) -> impl FnOnce(sqlx::Error) -> Error {
    move |error| if is_unique_violation(&error) { on_unique() } else { error.into() }
}

/// Whether a database error is a unique-constraint violation.
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
