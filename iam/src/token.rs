//! API token format: `moke_` followed by 40 random alphanumeric characters
//! (about 238 bits). Only the SHA-256 of the whole text is stored; the text is
//! shown once, when the token is created.

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};

/// The prefix every Moke API token starts with, so secret scanners can find
/// leaked ones.
pub const TOKEN_PREFIX: &str = "moke_";
const RANDOM_LEN: usize = 40;

/// A freshly minted token: the plaintext to show once and the hash to store.
pub struct NewToken {
    pub plaintext: String,
    pub hash: [u8; 32],
}

impl std::fmt::Debug for NewToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewToken").field("plaintext", &"<redacted>").finish_non_exhaustive()
    }
}

impl NewToken {
    /// Mints a new random token from the operating system's CSPRNG.
    pub fn generate() -> NewToken {
        let random: String = rand::rng().sample_iter(&Alphanumeric).take(RANDOM_LEN).map(char::from).collect();
        let plaintext = format!("{TOKEN_PREFIX}{random}");
        let hash = hash_token(&plaintext);
        NewToken { plaintext, hash }
    }

    /// The first characters of the token, safe to show in lists.
    pub fn hint(&self) -> String {
        self.plaintext[..TOKEN_PREFIX.len() + 4].to_string()
    }
}

/// True when `text` has the shape of a Moke token (checked before any lookup).
pub fn is_well_formed(text: &str) -> bool {
    text.len() == TOKEN_PREFIX.len() + RANDOM_LEN
        && text.starts_with(TOKEN_PREFIX)
        && text[TOKEN_PREFIX.len()..].bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The stored form of a token.
pub fn hash_token(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_well_formed_and_distinct() {
        let a = NewToken::generate();
        let b = NewToken::generate();
        assert!(is_well_formed(&a.plaintext));
        assert_ne!(a.plaintext, b.plaintext);
        assert_eq!(hash_token(&a.plaintext), a.hash);
        assert!(a.hint().starts_with("moke_"));
        assert!(!format!("{a:?}").contains(&a.plaintext));
    }

    #[test]
    fn malformed_tokens_are_rejected() {
        assert!(!is_well_formed("moke_short"));
        assert!(!is_well_formed(&format!("mokx_{}", "a".repeat(40))));
        assert!(!is_well_formed(&format!("moke_{}!", "a".repeat(39))));
    }
}
