//! Webhook signatures: Standard Webhooks (<https://www.standardwebhooks.com>)
//! for what Moke sends and for generic deliveries it receives, plus the
//! GitHub (`X-Hub-Signature-256`) and GitLab (`X-Gitlab-Token`) forms. Every
//! comparison is constant-time.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

type HmacSha256 = Hmac<Sha256>;

/// How far a delivery's timestamp may be from now, either way.
pub const TOLERANCE_SECONDS: i64 = 300;
const SECRET_PREFIX: &str = "whsec_";

/// Why a delivery was not accepted. Callers answer 401 without saying
/// which, so an attacker learns nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    MissingHeader,
    BadTimestamp,
    OutsideTolerance,
    NoMatchingSignature,
}

/// A new signing secret: `whsec_` and 32 random bytes in base64.
pub fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The HMAC key of a `whsec_` secret (its base64 part decoded); a secret
/// in another form is used as it is.
fn key(secret: &str) -> Vec<u8> {
    secret
        .strip_prefix(SECRET_PREFIX)
        .and_then(|b64| STANDARD.decode(b64).ok())
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

fn mac(key: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length")
}

/// The `webhook-signature` value for a message: `v1,<base64 HMAC-SHA256
/// of "id.timestamp.body">`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = mac(&key(secret));
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The `webhook-signature` value signed with each of `secrets` in turn,
/// space-separated: after a secret rotation the new secret's and the
/// previous one's, so a receiver that knows either accepts the message.
pub fn sign_with_each(secrets: &[impl AsRef<str>], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets.iter().map(|secret| sign(secret.as_ref(), id, timestamp, body)).collect::<Vec<_>>().join(" ")
}

/// Verifies a Standard Webhooks delivery: the timestamp within
/// [`TOLERANCE_SECONDS`] of `now`, and any one of the space-separated
/// `v1,` signatures (several during a secret rotation) matching.
pub fn verify(
    secret: &str,
    id: Option<&str>,
    timestamp: Option<&str>,
    signatures: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<(), Refusal> {
    let (Some(id), Some(timestamp), Some(signatures)) = (id, timestamp, signatures) else {
        return Err(Refusal::MissingHeader);
    };
    let timestamp: i64 = timestamp.trim().parse().map_err(|_| Refusal::BadTimestamp)?;
    if (now - timestamp).abs() > TOLERANCE_SECONDS {
        return Err(Refusal::OutsideTolerance);
    }
    let key = key(secret);
    let mut expected = mac(&key);
    expected.update(format!("{id}.{timestamp}.").as_bytes());
    expected.update(body);
    let expected = expected.finalize().into_bytes();
    let matched = signatures
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|b64| STANDARD.decode(b64).ok())
        .fold(false, |found, candidate| found | bool::from(candidate.as_slice().ct_eq(expected.as_slice())));
    if matched { Ok(()) } else { Err(Refusal::NoMatchingSignature) }
}

/// Verifies GitHub's `X-Hub-Signature-256: sha256=<hex HMAC of the body>`.
pub fn verify_github(secret: &str, header: Option<&str>, body: &[u8]) -> Result<(), Refusal> {
    let hex = header.and_then(|h| h.strip_prefix("sha256=")).ok_or(Refusal::MissingHeader)?;
    let given = decode_hex(hex).ok_or(Refusal::NoMatchingSignature)?;
    let mut mac = mac(secret.as_bytes());
    mac.update(body);
    mac.verify_slice(&given).map_err(|_| Refusal::NoMatchingSignature)
}

/// Verifies GitLab's `X-Gitlab-Token` (the secret itself).
pub fn verify_gitlab_token(secret: &str, token: Option<&str>) -> Result<(), Refusal> {
    let token = token.ok_or(Refusal::MissingHeader)?;
    // Equal lengths are compared in constant time; the length itself is not secret.
    if bool::from(token.as_bytes().ct_eq(secret.as_bytes())) { Ok(()) } else { Err(Refusal::NoMatchingSignature) }
}

/// GitHub's signature header for a body (for tests and tools).
pub fn github_signature(secret: &str, body: &[u8]) -> String {
    let mut mac = mac(secret.as_bytes());
    mac.update(body);
    let bytes = mac.finalize().into_bytes();
    format!("sha256={}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The Standard Webhooks specification's test vector.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TIMESTAMP: i64 = 1614265330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn check(signatures: &str, body: &[u8], now: i64) -> Result<(), Refusal> {
        verify(SECRET, Some(ID), Some(&TIMESTAMP.to_string()), Some(signatures), body, now)
    }

    #[test]
    fn the_specification_vector_signs_and_verifies() {
        assert_eq!(sign(SECRET, ID, TIMESTAMP, BODY), SIGNATURE);
        assert_eq!(check(SIGNATURE, BODY, TIMESTAMP), Ok(()));
    }

    #[test]
    fn a_changed_body_id_or_signature_is_refused() {
        assert_eq!(check(SIGNATURE, br#"{"test": 2432232315}"#, TIMESTAMP), Err(Refusal::NoMatchingSignature));
        assert_eq!(
            check("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE", BODY, TIMESTAMP),
            Err(Refusal::NoMatchingSignature)
        );
        assert_eq!(
            check("v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", BODY, TIMESTAMP),
            Err(Refusal::NoMatchingSignature)
        );
        let other_id =
            verify(SECRET, Some("msg_other"), Some(&TIMESTAMP.to_string()), Some(SIGNATURE), BODY, TIMESTAMP);
        assert_eq!(other_id, Err(Refusal::NoMatchingSignature));
        assert_eq!(verify(SECRET, None, Some("1"), Some(SIGNATURE), BODY, 1), Err(Refusal::MissingHeader));
        assert_eq!(
            verify(SECRET, Some(ID), Some("yesterday"), Some(SIGNATURE), BODY, TIMESTAMP),
            Err(Refusal::BadTimestamp)
        );
    }

    #[test]
    fn the_tolerance_holds_both_ways_to_the_second() {
        for now in [TIMESTAMP - TOLERANCE_SECONDS, TIMESTAMP + TOLERANCE_SECONDS] {
            assert_eq!(check(SIGNATURE, BODY, now), Ok(()));
        }
        for now in [TIMESTAMP - TOLERANCE_SECONDS - 1, TIMESTAMP + TOLERANCE_SECONDS + 1] {
            assert_eq!(check(SIGNATURE, BODY, now), Err(Refusal::OutsideTolerance));
        }
    }

    #[test]
    fn any_of_several_signatures_may_match_during_rotation() {
        let old = sign("whsec_b2xkIHNlY3JldCBvbGQgc2VjcmV0IG9sZA==", ID, TIMESTAMP, BODY);
        assert_eq!(check(&format!("{old} {SIGNATURE}"), BODY, TIMESTAMP), Ok(()));
        assert_eq!(check(&format!("{SIGNATURE} {old}"), BODY, TIMESTAMP), Ok(()));
        assert_eq!(check(&old, BODY, TIMESTAMP), Err(Refusal::NoMatchingSignature));
    }

    #[test]
    fn a_message_signed_with_both_secrets_verifies_with_either() {
        let old = "whsec_b2xkIHNlY3JldCBvbGQgc2VjcmV0IG9sZA==";
        let both = sign_with_each(&[SECRET, old], ID, TIMESTAMP, BODY);
        assert_eq!(both, format!("{SIGNATURE} {}", sign(old, ID, TIMESTAMP, BODY)));
        assert_eq!(check(&both, BODY, TIMESTAMP), Ok(()));
        let with_old = verify(old, Some(ID), Some(&TIMESTAMP.to_string()), Some(&both), BODY, TIMESTAMP);
        assert_eq!(with_old, Ok(()));
        assert_eq!(sign_with_each(&[SECRET], ID, TIMESTAMP, BODY), SIGNATURE);
    }

    #[test]
    fn github_and_gitlab_forms() {
        // GitHub's documented example: secret "It's a Secret to Everybody", body "Hello, World!".
        let expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(github_signature("It's a Secret to Everybody", b"Hello, World!"), expected);
        assert_eq!(verify_github("It's a Secret to Everybody", Some(expected), b"Hello, World!"), Ok(()));
        assert_eq!(
            verify_github("It's a Secret to Everybody", Some(expected), b"Hello, World?"),
            Err(Refusal::NoMatchingSignature)
        );
        assert_eq!(verify_github("s", Some("sha1=abc"), b""), Err(Refusal::MissingHeader));
        assert_eq!(verify_github("s", Some("sha256=zz"), b""), Err(Refusal::NoMatchingSignature));
        assert_eq!(verify_gitlab_token("token", Some("token")), Ok(()));
        assert_eq!(verify_gitlab_token("token", Some("tokeN")), Err(Refusal::NoMatchingSignature));
        assert_eq!(verify_gitlab_token("token", None), Err(Refusal::MissingHeader));
    }

    #[test]
    fn new_secrets_are_whsec_and_distinct() {
        let (a, b) = (new_secret(), new_secret());
        assert!(a.starts_with("whsec_") && a != b);
        assert_eq!(key(&a).len(), 32);
    }
}
