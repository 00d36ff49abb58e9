//! Passwords: the acceptance policy and argon2id hashing.
//!
//! Parameters follow OWASP's first recommendation for argon2id: 19 MiB of
//! memory, 2 passes, 1 lane (about 20 ms per hash on one core of the
//! benchmark machine; see `loadtests/README.md`). They are written into every
//! stored PHC string, so raising them later re-hashes nobody and keeps old
//! hashes verifiable.

use std::collections::HashSet;
use std::sync::LazyLock;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::RngCore;

/// Shortest accepted password, in characters.
pub const MIN_LENGTH: usize = 12;
/// Longest accepted password, in bytes (hashing cost must stay bounded).
pub const MAX_BYTES: usize = 256;

/// argon2id memory cost in KiB.
pub const MEMORY_KIB: u32 = 19 * 1024;
/// argon2id passes.
pub const ITERATIONS: u32 = 2;
/// argon2id lanes.
pub const PARALLELISM: u32 = 1;

static COMMON: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    include_str!("../data/common-passwords.txt").lines().filter(|line| !line.starts_with('#')).collect()
});

fn hasher() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, ITERATIONS, PARALLELISM, None).expect("valid argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Why a password was refused; the text is safe to show to its owner.
pub fn check_policy(password: &str, email: &str) -> Result<(), &'static str> {
    if password.chars().count() < MIN_LENGTH {
        return Err("must be at least 12 characters");
    }
    if password.len() > MAX_BYTES {
        return Err("must be at most 256 bytes");
    }
    let lower = password.to_lowercase();
    // A common password with digits or symbols glued on is still common.
    let stem = lower.trim_end_matches(|c: char| !c.is_alphabetic());
    if COMMON.contains(lower.as_str()) || (stem.len() >= 4 && COMMON.contains(stem)) {
        return Err("is too common; choose a less predictable password");
    }
    let local = email.split('@').next().unwrap_or_default().to_lowercase();
    if local.len() >= 4 && lower.contains(&local) {
        return Err("must not contain your email address");
    }
    Ok(())
}

/// The PHC string (`$argon2id$v=19$m=…`) to store for `password`.
pub fn hash(password: &str) -> String {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    hasher().hash_password_with_salt(password.as_bytes(), &salt).expect("argon2 hashing of a bounded input").to_string()
}

/// True when `password` matches the stored PHC string.
pub fn verify(password: &str, stored: &str) -> bool {
    match PasswordHash::new(stored) {
        Ok(parsed) => hasher().verify_password(password.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

/// Burns the time of one verification, so that an unknown account answers
/// as slowly as a wrong password.
pub fn verify_nothing(password: &str) {
    static DUMMY: LazyLock<String> = LazyLock::new(|| hash("not a real password, only timing"));
    let _ = verify(password, &DUMMY);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_carry_their_parameters() {
        let stored = hash("correct horse battery staple");
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify("correct horse battery staple", &stored));
        assert!(!verify("correct horse battery stapler", &stored));
        assert!(!verify("anything", "not a phc string"));
    }

    #[test]
    fn policy_refuses_short_common_and_personal_passwords() {
        assert_eq!(check_policy("short", "a@b.c"), Err("must be at least 12 characters"));
        assert!(check_policy("1q2w3e4r5t6y", "a@b.c").is_err());
        assert!(check_policy("Password123456!", "a@b.c").is_err());
        assert!(check_policy("alice-in-wonderland-99", "alice@example.com").is_err());
        assert_eq!(check_policy("violet kettle orbit 42", "alice@example.com"), Ok(()));
        assert!(check_policy(&"x".repeat(300), "a@b.c").is_err());
    }
}
