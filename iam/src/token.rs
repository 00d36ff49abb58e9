//! API token format and storage.
//!
//! A token is `moke_pat_` (personal) or `moke_sat_` (service account), 32
//! random base62 characters (about 190 bits) and a 6-character base62
//! CRC-32 of everything before it, so secret scanners can recognise a Moke
//! token and discard look-alikes without asking us. Only an HMAC-SHA256 of
//! the whole text under a server-side pepper (kept in Vault) is stored.
//!
//! Tokens minted before typed tokens existed (`moke_` and 40 alphanumerics)
//! still authenticate; they are stored as plain SHA-256 and belong to a
//! service account.

use hmac::{Hmac, Mac};
use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};

/// What a token belongs to, read from its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// `moke_pat_`: acts as the user who made it.
    Personal,
    /// `moke_sat_`: acts as a service account.
    ServiceAccount,
    /// `moke_` + 40: a token from before typed tokens, stored unpeppered.
    Legacy,
}

impl TokenKind {
    pub fn prefix(self) -> &'static str {
        match self {
            TokenKind::Personal => "moke_pat_",
            TokenKind::ServiceAccount => "moke_sat_",
            TokenKind::Legacy => "moke_",
        }
    }
}

const RANDOM_LEN: usize = 32;
const CHECKSUM_LEN: usize = 6;
const LEGACY_RANDOM_LEN: usize = 40;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn checksum(body: &str) -> String {
    let mut value = crc32fast::hash(body.as_bytes()) as u64;
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(value % 62) as usize];
        value /= 62;
    }
    String::from_utf8(out.to_vec()).expect("base62 is ASCII")
}

/// A freshly minted token: the plaintext to show once.
pub struct NewToken {
    pub plaintext: String,
    pub kind: TokenKind,
}

impl std::fmt::Debug for NewToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewToken").field("kind", &self.kind).field("plaintext", &"<redacted>").finish()
    }
}

impl NewToken {
    /// Mints a new random token of `kind` (personal or service account).
    pub fn generate(kind: TokenKind) -> NewToken {
        assert_ne!(kind, TokenKind::Legacy, "legacy tokens are no longer minted");
        let random: String = rand::rng().sample_iter(&Alphanumeric).take(RANDOM_LEN).map(char::from).collect();
        let body = format!("{}{random}", kind.prefix());
        let plaintext = format!("{body}{}", checksum(&body));
        NewToken { plaintext, kind }
    }

    /// The first characters of the token, safe to show in lists.
    pub fn hint(&self) -> String {
        self.plaintext[..self.kind.prefix().len() + 4].to_string()
    }
}

/// The kind of a well-formed token with a correct checksum; `None` for
/// anything else (checked before any lookup).
pub fn parse(text: &str) -> Option<TokenKind> {
    let alnum = |s: &str| s.bytes().all(|b| b.is_ascii_alphanumeric());
    for kind in [TokenKind::Personal, TokenKind::ServiceAccount] {
        if let Some(rest) = text.strip_prefix(kind.prefix()) {
            if rest.len() != RANDOM_LEN + CHECKSUM_LEN || !alnum(rest) {
                return None;
            }
            let (body, sum) = text.split_at(text.len() - CHECKSUM_LEN);
            return (checksum(body) == sum).then_some(kind);
        }
    }
    let rest = text.strip_prefix(TokenKind::Legacy.prefix())?;
    (rest.len() == LEGACY_RANDOM_LEN && alnum(rest)).then_some(TokenKind::Legacy)
}

/// The stored form of a typed token: HMAC-SHA256 under the pepper.
pub fn peppered_hash(pepper: &[u8], text: &str) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(pepper).expect("HMAC takes keys of any length");
    mac.update(text.as_bytes());
    mac.finalize().into_bytes().into()
}

/// The stored form of a legacy token, and of other single-use secrets
/// (refresh, e-mail and invitation tokens) that are random enough alone.
pub fn plain_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// A random opaque secret (refresh tokens, e-mail links, invitations).
pub fn random_secret(len: usize) -> String {
    rand::rng().sample_iter(&Alphanumeric).take(len).map(char::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_parse_and_are_distinct() {
        for kind in [TokenKind::Personal, TokenKind::ServiceAccount] {
            let a = NewToken::generate(kind);
            let b = NewToken::generate(kind);
            assert_eq!(parse(&a.plaintext), Some(kind));
            assert_ne!(a.plaintext, b.plaintext);
            assert!(a.hint().starts_with(kind.prefix()));
            assert!(!format!("{a:?}").contains(&a.plaintext));
        }
    }

    #[test]
    fn a_changed_character_breaks_the_checksum() {
        let token = NewToken::generate(TokenKind::ServiceAccount).plaintext;
        let mut bytes = token.clone().into_bytes();
        bytes[12] = if bytes[12] == b'a' { b'b' } else { b'a' };
        assert_eq!(parse(&String::from_utf8(bytes).unwrap()), None);
        assert_eq!(parse(&token[..token.len() - 1]), None);
    }

    #[test]
    fn legacy_tokens_are_recognised_and_malformed_ones_refused() {
        assert_eq!(parse(&format!("moke_{}", "a".repeat(40))), Some(TokenKind::Legacy));
        assert_eq!(parse("moke_short"), None);
        assert_eq!(parse(&format!("mokx_{}", "a".repeat(40))), None);
        assert_eq!(parse(&format!("moke_{}!", "a".repeat(39))), None);
    }

    #[test]
    fn the_pepper_changes_the_hash() {
        assert_ne!(peppered_hash(b"one", "t"), peppered_hash(b"two", "t"));
        assert_eq!(peppered_hash(b"one", "t"), peppered_hash(b"one", "t"));
    }
}
