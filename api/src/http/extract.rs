//! Request extractors that turn HTTP into app-layer inputs and answer every
//! rejection as problem+json naming what is wrong.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::problem::ApiError;
use crate::app::{App, Error, FieldError, PageRequest, RequestContext, RequestMeta};

/// The authenticated caller and request metadata.
pub struct Ctx(pub RequestContext);

fn header_text(parts: &Parts, name: &str) -> Option<String> {
    parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// Request metadata without a caller: for sign-up, sign-in and the other
/// routes that take no bearer token. Audit events name no principal.
pub struct Meta(pub RequestContext);

/// The caller if a bearer token was sent (and is valid), else metadata only.
pub struct MaybeCtx(pub RequestContext);

fn metadata(parts: &Parts) -> RequestContext {
    RequestContext::anonymous(RequestMeta {
        request_id: header_text(parts, "x-request-id"),
        source_ip: parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| addr.ip().to_string()),
        user_agent: header_text(parts, header::USER_AGENT.as_str()),
        idempotency_key: header_text(parts, "idempotency-key"),
    })
}

/// The `Authorization` header, if sent (any value: a malformed one, even
/// one that is not text, is refused rather than ignored).
fn authorization(parts: &Parts) -> Option<String> {
    parts.headers.get(header::AUTHORIZATION).map(|value| value.to_str().unwrap_or_default().to_string())
}

async fn authenticated(parts: &Parts, app: &App, authorization: &str) -> Result<RequestContext, ApiError> {
    Ok(app.authenticate_request(authorization, metadata(parts)).await?)
}

impl<S: Send + Sync> FromRequestParts<S> for Meta {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Meta(metadata(parts)))
    }
}

impl FromRequestParts<Arc<App>> for Ctx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        let authorization = authorization(parts).ok_or(Error::Unauthenticated)?;
        Ok(Ctx(authenticated(parts, app, &authorization).await?))
    }
}

/// The caller and the bearer text it authenticated with: for an answer that
/// streams past the request's own check and authenticates again as it goes.
pub struct CtxWithBearer(pub RequestContext, pub String);

impl FromRequestParts<Arc<App>> for CtxWithBearer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        let authorization = authorization(parts).ok_or(Error::Unauthenticated)?;
        let ctx = authenticated(parts, app, &authorization).await?;
        let bearer = crate::app::iam::principals::bearer_of(&authorization)?.to_string();
        Ok(CtxWithBearer(ctx, bearer))
    }
}

impl FromRequestParts<Arc<App>> for MaybeCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        match authorization(parts) {
            Some(authorization) => Ok(MaybeCtx(authenticated(parts, app, &authorization).await?)),
            None => Ok(MaybeCtx(metadata(parts))),
        }
    }
}

/// The `If-Match` header, if any.
pub struct IfMatch(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(IfMatch(header_text(parts, header::IF_MATCH.as_str())))
    }
}

/// A query string, rejected as problem+json when it does not parse.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let deserializer = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(deserializer).map(Query).map_err(|error| {
            let field = error.path().to_string();
            ApiError(Error::Invalid(vec![FieldError::new(
                if field == "." { "query".to_string() } else { field },
                "invalid",
                error.inner().to_string(),
            )]))
        })
    }
}

/// `limit` and `page_token` of a list operation.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Items per page, 1 to 500 (default 50).
    pub limit: Option<i64>,
    /// `next_page` of the previous page.
    pub page_token: Option<String>,
}

impl ListParams {
    pub fn page(&self) -> Result<PageRequest, ApiError> {
        Ok(PageRequest::parse(self.limit, self.page_token.as_deref())?)
    }
}

/// A JSON request body. Unknown fields, wrong types and syntax errors are
/// answered 400 naming the field.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|mime| {
                let mime = mime.trim();
                mime == "application/json" || mime.ends_with("+json")
            });
        if !is_json {
            return Err(ApiError(Error::Malformed("Content-Type must be application/json".into())));
        }
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|rejection| {
            ApiError(Error::Malformed(format!("could not read the body: {}", rejection.body_text())))
        })?;
        parse_json(&bytes).map(Json)
    }
}

/// Parses JSON, naming the offending field on failure.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if inner.is_syntax() || inner.is_eof() || inner.is_io() {
            return ApiError(Error::Malformed(format!("invalid JSON: {inner}")));
        }
        let message = inner.to_string();
        // Serde names an unknown field in its message, not in the path.
        let field = match message.strip_prefix("unknown field `").and_then(|m| m.split('`').next()) {
            Some(unknown) if path == "." => unknown.to_string(),
            Some(unknown) if !path.ends_with(unknown) => format!("{path}.{unknown}"),
            _ if path == "." => "body".to_string(),
            _ => path,
        };
        let message = match message.rfind(" at line ") {
            Some(at) => message[..at].to_string(),
            None => message,
        };
        let code = if message.starts_with("unknown field") {
            "unknown_field"
        } else if message.starts_with("missing field") {
            "missing_field"
        } else {
            "invalid_type"
        };
        ApiError(Error::Invalid(vec![FieldError::new(field, code, message)]))
    })?;
    deserializer.end().map_err(|e| ApiError(Error::Malformed(format!("invalid JSON: {e}"))))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterCreate;

    fn fields(body: &str) -> Vec<String> {
        match parse_json::<ClusterCreate>(body.as_bytes()) {
            Err(ApiError(Error::Invalid(errors))) => errors.into_iter().map(|e| e.field).collect(),
            Err(ApiError(other)) => vec![format!("other: {other}")],
            Ok(_) => vec![],
        }
    }

    #[test]
    fn unknown_fields_are_named() {
        assert_eq!(fields(r#"{"name":"a","spec":{"region":"r"},"colour":1}"#), ["colour"]);
        assert_eq!(fields(r#"{"name":"a","spec":{"region":"r","size":1}}"#), ["spec.size"]);
    }

    #[test]
    fn wrong_types_and_missing_fields_are_named() {
        assert_eq!(fields(r#"{"name":"a","spec":{"region":7}}"#), ["spec.region"]);
        assert_eq!(fields(r#"{"name":"a"}"#), ["body"]);
    }
}
