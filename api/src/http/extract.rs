//! Request extractors that turn HTTP into app-layer inputs and answer every
//! rejection as problem+json naming what is wrong.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::objects_only::ObjectsOnly;
use super::problem::ApiError;
use crate::app::{App, Error, FieldError, PageRequest, RequestContext, RequestMeta};

/// The authenticated caller and request metadata.
pub struct Ctx(pub RequestContext);

fn header_text(parts: &Parts, name: &str) -> Option<String> {
    parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// A header that changes what a request does: sent but not visible ASCII,
/// it is kept as U+FFFD, which no ETag or idempotency key accepts, so it is
/// refused instead of being taken as absent.
fn control_header(parts: &Parts, name: &str) -> Option<String> {
    parts.headers.get(name).map(|v| v.to_str().map_or_else(|_| "\u{fffd}".to_string(), str::to_string))
}

/// The `Idempotency-Key` header as the OpenAPI document states it.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IdempotencyKeyHeader {
    /// Any 1-255 printable ASCII characters, unique per intended change (a
    /// UUID is good). A retry with the same key and body within 24 hours
    /// gets the first answer again and changes nothing; the same key with
    /// another body is refused (422); while the first is still running, 409.
    #[serde(rename = "Idempotency-Key")]
    #[param(pattern = "^[ -~]*[!-~][ -~]*$", max_length = 255)]
    pub idempotency_key: Option<String>,
}

/// The `If-Match` header as the OpenAPI document states it.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IfMatchHeader {
    /// The `etag` of the resource as last read (or a comma-separated list
    /// of them, or `*`): the change is made only if the resource is still
    /// at one of them, else 412 with the current ETag.
    #[serde(rename = "If-Match")]
    pub if_match: Option<String>,
}

/// Whether a request asks for a dry run (`?dry_run=true`). Any value but
/// `true` or `false` is refused, so a typo never runs for real. Which
/// operations have one is `http::dry_run_answers`' to say (no read has: a
/// kubeconfig's read signs a certificate, which would not be dry).
pub(super) fn dry_run_asked(query: Option<&str>) -> Result<bool, ApiError> {
    let mut asked = false;
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if key == "dry_run" {
            asked = match value.as_ref() {
                "true" => true,
                "false" => false,
                _ => return Err(Error::invalid_field("dry_run", "invalid", "must be true or false").into()),
            };
        }
    }
    Ok(asked)
}

/// Refuses a dry run of an operation that offers none (sign-in, sign-up and
/// the other flows without a bearer token), before it acts.
fn refuse_dry_run(parts: &Parts) -> Result<(), ApiError> {
    if dry_run_asked(parts.uri.query())? {
        return Err(Error::invalid_field("dry_run", "unsupported", "this operation has no dry run").into());
    }
    Ok(())
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
        idempotency_key: control_header(parts, "idempotency-key"),
    })
}

/// The `Authorization` header, if sent (any value: a malformed one, even
/// one that is not text, is refused rather than ignored).
fn authorization(parts: &Parts) -> Option<String> {
    parts.headers.get(header::AUTHORIZATION).map(|value| value.to_str().unwrap_or_default().to_string())
}

async fn authenticated(parts: &Parts, app: &App, authorization: &str) -> Result<RequestContext, ApiError> {
    let (ctx, allowance) = app.authenticate_request_counted(authorization, metadata(parts)).await?;
    if let Some(seen) = parts.extensions.get::<super::RateLimitSeen>() {
        seen.principal(allowance);
    }
    Ok(ctx)
}

impl<S: Send + Sync> FromRequestParts<S> for Meta {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        refuse_dry_run(parts)?;
        Ok(Meta(metadata(parts)))
    }
}

impl FromRequestParts<Arc<App>> for Ctx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        let dry_run = dry_run_asked(parts.uri.query())?;
        let authorization = authorization(parts).ok_or(Error::Unauthenticated)?;
        let ctx = authenticated(parts, app, &authorization).await?;
        Ok(Ctx(if dry_run { ctx.dry_run() } else { ctx }))
    }
}

/// The caller and the bearer text it authenticated with: for an answer that
/// streams past the request's own check and authenticates again as it goes.
pub struct CtxWithBearer(pub RequestContext, pub String);

impl FromRequestParts<Arc<App>> for CtxWithBearer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        refuse_dry_run(parts)?;
        let authorization = authorization(parts).ok_or(Error::Unauthenticated)?;
        let ctx = authenticated(parts, app, &authorization).await?;
        let bearer = crate::app::iam::principals::bearer_of(&authorization)?.to_string();
        Ok(CtxWithBearer(ctx, bearer))
    }
}

impl FromRequestParts<Arc<App>> for MaybeCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        refuse_dry_run(parts)?;
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
        Ok(IfMatch(control_header(parts, header::IF_MATCH.as_str())))
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
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// `next_page` of the previous page (opaque; empty means the first page).
    #[param(pattern = "^([A-Za-z0-9_-]{21}[AQgw])?$")]
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
    let mut document = serde_json::from_slice::<UniqueKeys>(bytes)
        .map_err(|e| ApiError(Error::Malformed(format!("invalid JSON: {e}"))))?
        .0;
    // Every request body is an object, and so is every struct inside one
    // (see [`ObjectsOnly`]).
    if !document.is_object() {
        return Err(ApiError(Error::invalid_field("body", "invalid", "must be a JSON object")));
    }
    integral_numbers_as_integers(&mut document);
    let value = serde_path_to_error::deserialize(ObjectsOnly(document)).map_err(|error| {
        let path = error.path().to_string();
        let message = error.into_inner().to_string();
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
    Ok(value)
}

/// A JSON document in which no object names a key twice: parsers differ on
/// which of two values wins, so a gateway and a proxy in front of it could
/// read different requests from the same bytes.
struct UniqueKeys(serde_json::Value);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor).map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = serde_json::Map::new();
        while let Some((key, UniqueKeys(value))) = map.next_entry::<String, UniqueKeys>()? {
            if fields.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!("the key {key:?} appears twice")));
            }
            fields.insert(key, value);
        }
        Ok(serde_json::Value::Object(fields))
    }
}

/// JSON does not tell `3` from `3.0`, and neither does JSON Schema's
/// `integer`: a number with no fractional part that fits an `i64` becomes an
/// integer, so clients whose JSON encoders write `3.0` are understood.
fn integral_numbers_as_integers(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Number(number) if number.is_f64() => {
            if let Some(float) = number.as_f64()
                && float.fract() == 0.0
                && float >= i64::MIN as f64
                && float < i64::MAX as f64
            {
                *value = serde_json::Value::from(float as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_numbers_as_integers),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(integral_numbers_as_integers),
        _ => {}
    }
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

    #[test]
    fn a_key_named_twice_is_refused() {
        let twice = r#"{"name":"a","spec":{"region":"r","control_plane":{"replicas":1,"replicas":3}}}"#;
        assert!(matches!(parse_json::<ClusterCreate>(twice.as_bytes()), Err(ApiError(Error::Malformed(_)))));
        // A struct's fields as an array are no object.
        assert!(matches!(parse_json::<ClusterCreate>(b"[\"prod\", null]"), Err(ApiError(Error::Invalid(_)))));
    }

    #[test]
    fn integers_may_be_written_with_a_zero_fraction() {
        assert!(fields(r#"{"name":"a","spec":{"region":"r","control_plane":{"replicas":3.0}}}"#).is_empty());
        assert_eq!(
            fields(r#"{"name":"a","spec":{"region":"r","control_plane":{"replicas":3.5}}}"#),
            ["spec.control_plane.replicas"]
        );
    }
}
