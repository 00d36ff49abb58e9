//! Verifying ID tokens from other issuers (CI systems) against their
//! published keys: the algorithm must be asymmetric and match the key, and
//! `iss`, `aud`, `exp`, `iat` and `jti` are required.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

/// Why a foreign ID token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdTokenError {
    Malformed,
    /// The `kid` is not among the issuer's keys (callers may refresh them once).
    UnknownKey,
    /// `none`, HMAC, or an algorithm other than the key's.
    BadAlgorithm,
    BadSignature,
    WrongIssuer,
    WrongAudience,
    Expired,
    NotYetValid,
    MissingClaim,
}

impl IdTokenError {
    pub fn as_str(self) -> &'static str {
        match self {
            IdTokenError::Malformed => "malformed",
            IdTokenError::UnknownKey => "unknown_key",
            IdTokenError::BadAlgorithm => "bad_algorithm",
            IdTokenError::BadSignature => "bad_signature",
            IdTokenError::WrongIssuer => "wrong_issuer",
            IdTokenError::WrongAudience => "wrong_audience",
            IdTokenError::Expired => "expired",
            IdTokenError::NotYetValid => "not_yet_valid",
            IdTokenError::MissingClaim => "missing_claim",
        }
    }
}

const ALLOWED: [Algorithm; 7] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The `iss` a token claims, read without verifying it (to choose keys).
pub fn unverified_issuer(token: &str) -> Option<String> {
    let claims: serde_json::Value = jsonwebtoken::dangerous::insecure_decode(token).ok()?.claims;
    claims["iss"].as_str().map(str::to_string)
}

/// Verifies `token` with `keys` for `issuer` and `audience`; its claims.
pub fn verify(
    token: &str,
    keys: &JwkSet,
    issuer: &str,
    audience: &str,
    leeway_seconds: u64,
) -> Result<serde_json::Value, IdTokenError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| IdTokenError::Malformed)?;
    if !ALLOWED.contains(&header.alg) {
        return Err(IdTokenError::BadAlgorithm);
    }
    let jwk = match &header.kid {
        Some(kid) => keys.find(kid).ok_or(IdTokenError::UnknownKey)?,
        None if keys.keys.len() == 1 => &keys.keys[0],
        None => return Err(IdTokenError::UnknownKey),
    };
    if let Some(alg) = jwk.common.key_algorithm
        && alg != jsonwebtoken::jwk::KeyAlgorithm::from(header.alg)
    {
        return Err(IdTokenError::BadAlgorithm);
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|_| IdTokenError::BadAlgorithm)?;
    if key.family() != header.alg.family() {
        return Err(IdTokenError::BadAlgorithm);
    }
    let mut validation = Validation::new(header.alg);
    validation.leeway = leeway_seconds;
    validation.validate_nbf = true;
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[audience]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
    let data = jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation).map_err(|e| {
        use jsonwebtoken::errors::ErrorKind::*;
        match e.kind() {
            ExpiredSignature => IdTokenError::Expired,
            ImmatureSignature => IdTokenError::NotYetValid,
            InvalidIssuer => IdTokenError::WrongIssuer,
            InvalidAudience => IdTokenError::WrongAudience,
            MissingRequiredClaim(_) => IdTokenError::MissingClaim,
            InvalidSignature => IdTokenError::BadSignature,
            InvalidAlgorithm => IdTokenError::BadAlgorithm,
            _ => IdTokenError::Malformed,
        }
    })?;
    if !data.claims["jti"].is_string() {
        return Err(IdTokenError::MissingClaim);
    }
    Ok(data.claims)
}
