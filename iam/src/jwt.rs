//! Access tokens: short-lived ES256 JWTs signed by the gateway.
//!
//! Every token names its key (`kid`) and its type (`typ: at+jwt`, RFC 9068).
//! Verification looks the `kid` up among the keys it already holds (an
//! unknown `kid` is refused, nothing is fetched), accepts exactly ES256 for
//! every key (no `none`, no HMAC with a public key), and checks `iss`, `aud`,
//! `exp`, `nbf` and `iat`. Keys rotate: the newest signs, older ones keep
//! verifying until dropped from the ring, which the key store does only
//! after their last token has expired.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use p256::elliptic_curve::sec1::ToSec1Point;
use p256::pkcs8::{EncodePrivateKey, LineEnding};
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// The `typ` header of Moke access tokens.
pub const ACCESS_TOKEN_TYPE: &str = "at+jwt";
/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY_SECONDS: u64 = 30;

/// A signing key as kept in the key store: private PEM plus its id.
#[derive(Clone, Serialize, Deserialize)]
pub struct SigningKey {
    pub kid: String,
    /// PKCS#8 PEM of the P-256 private key.
    pub private_pem: String,
    /// Unix seconds when the key was made.
    pub created_at: i64,
    /// Unix seconds after which the key no longer signs (a newer one does);
    /// `None` while it is the current key.
    pub retired_at: Option<i64>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("kid", &self.kid).field("created_at", &self.created_at).finish()
    }
}

impl SigningKey {
    /// A new random P-256 key.
    pub fn generate(now: i64) -> SigningKey {
        let secret = loop {
            let mut bytes = [0u8; 32];
            rand::rng().fill_bytes(&mut bytes);
            if let Ok(key) = p256::SecretKey::from_slice(&bytes) {
                break key;
            }
        };
        let private_pem = secret.to_pkcs8_pem(LineEnding::LF).expect("PKCS#8 encoding of a P-256 key").to_string();
        let mut kid = [0u8; 12];
        rand::rng().fill_bytes(&mut kid);
        SigningKey { kid: URL_SAFE_NO_PAD.encode(kid), private_pem, created_at: now, retired_at: None }
    }

    fn public_xy(&self) -> Result<(String, String), JwtError> {
        use p256::pkcs8::DecodePrivateKey;
        let secret = p256::SecretKey::from_pkcs8_pem(&self.private_pem).map_err(|_| JwtError::BadKey)?;
        let point = secret.public_key().to_sec1_point(false);
        let (x, y) = (point.x().ok_or(JwtError::BadKey)?, point.y().ok_or(JwtError::BadKey)?);
        Ok((URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y)))
    }
}

/// The claims of a Moke access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    pub aud: String,
    /// `usr_…` for a person, `sa_…` for a service account.
    pub sub: String,
    pub exp: i64,
    pub nbf: i64,
    pub iat: i64,
    pub jti: String,
    /// The organization the token acts in (`org_…`).
    pub org: String,
    /// The login session (refresh-token family) it came from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
}

/// Why a token was refused. Callers answer every kind alike (401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwtError {
    /// Not a JWT, wrong `typ`, wrong algorithm, bad signature, bad claims.
    Invalid,
    /// `kid` missing or not one of ours.
    UnknownKey,
    Expired,
    /// A stored key could not be read.
    BadKey,
}

struct VerifyingKey {
    kid: String,
    key: DecodingKey,
    x: String,
    y: String,
}

/// The keys a gateway signs and verifies with.
pub struct KeyRing {
    signing_kid: String,
    signing: EncodingKey,
    verifying: Vec<VerifyingKey>,
    issuer: String,
    audience: String,
}

impl KeyRing {
    /// A ring over `keys`; the newest unretired key signs.
    pub fn new(keys: &[SigningKey], issuer: &str, audience: &str) -> Result<KeyRing, JwtError> {
        let current =
            keys.iter().filter(|k| k.retired_at.is_none()).max_by_key(|k| k.created_at).ok_or(JwtError::BadKey)?;
        let signing = EncodingKey::from_ec_pem(current.private_pem.as_bytes()).map_err(|_| JwtError::BadKey)?;
        let mut verifying = Vec::new();
        for key in keys {
            let (x, y) = key.public_xy()?;
            let decoding = DecodingKey::from_ec_components(&x, &y).map_err(|_| JwtError::BadKey)?;
            verifying.push(VerifyingKey { kid: key.kid.clone(), key: decoding, x, y });
        }
        Ok(KeyRing {
            signing_kid: current.kid.clone(),
            signing,
            verifying,
            issuer: issuer.to_string(),
            audience: audience.to_string(),
        })
    }

    /// The id of the key new tokens are signed with.
    pub fn signing_kid(&self) -> &str {
        &self.signing_kid
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Signs `claims` with the current key.
    pub fn sign(&self, claims: &AccessClaims) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.signing_kid.clone());
        header.typ = Some(ACCESS_TOKEN_TYPE.to_string());
        jsonwebtoken::encode(&header, claims, &self.signing).expect("ES256 signing with a loaded key")
    }

    /// Verifies a token and returns its claims.
    pub fn verify(&self, token: &str) -> Result<AccessClaims, JwtError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| JwtError::Invalid)?;
        if header.alg != Algorithm::ES256 || header.typ.as_deref() != Some(ACCESS_TOKEN_TYPE) {
            return Err(JwtError::Invalid);
        }
        let kid = header.kid.ok_or(JwtError::UnknownKey)?;
        let key = self.verifying.iter().find(|k| k.kid == kid).ok_or(JwtError::UnknownKey)?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "nbf", "iat", "iss", "aud", "sub", "jti"]);
        let data = jsonwebtoken::decode::<AccessClaims>(token, &key.key, &validation).map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => JwtError::Expired,
            _ => JwtError::Invalid,
        })?;
        let now = chrono::Utc::now().timestamp();
        if data.claims.iat > now + LEEWAY_SECONDS as i64 {
            return Err(JwtError::Invalid);
        }
        Ok(data.claims)
    }

    /// The public keys as a JWK Set (`/.well-known/jwks.json`).
    pub fn jwks(&self) -> serde_json::Value {
        let keys: Vec<_> = self
            .verifying
            .iter()
            .map(|k| {
                serde_json::json!({
                    "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig",
                    "kid": k.kid, "x": k.x, "y": k.y,
                })
            })
            .collect();
        serde_json::json!({ "keys": keys })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(now: i64) -> AccessClaims {
        AccessClaims {
            iss: "https://moke.test".into(),
            aud: "moke-api".into(),
            sub: "usr_1".into(),
            exp: now + 900,
            nbf: now,
            iat: now,
            jti: "j1".into(),
            org: "org_1".into(),
            sid: None,
        }
    }

    fn ring(keys: &[SigningKey]) -> KeyRing {
        KeyRing::new(keys, "https://moke.test", "moke-api").unwrap()
    }

    #[test]
    fn signs_and_verifies_and_rotates() {
        let now = chrono::Utc::now().timestamp();
        let old = SigningKey::generate(now - 100);
        let first = ring(std::slice::from_ref(&old));
        let token = first.sign(&claims(now));
        assert_eq!(first.verify(&token).unwrap(), claims(now));

        let new = SigningKey::generate(now);
        let second = ring(&[SigningKey { retired_at: Some(now), ..old.clone() }, new.clone()]);
        assert_eq!(second.signing_kid(), new.kid);
        assert!(second.verify(&token).is_ok(), "old key still verifies");
        let fresh = second.sign(&claims(now));
        assert_eq!(jsonwebtoken::decode_header(&fresh).unwrap().kid.as_deref(), Some(new.kid.as_str()));
        assert_eq!(second.jwks()["keys"].as_array().unwrap().len(), 2);
        assert_eq!(ring(&[new]).verify(&token), Err(JwtError::UnknownKey));
    }
}
