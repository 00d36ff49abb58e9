//! Automatic persisted queries (Apollo's APQ protocol, version 1): a client
//! sends only a document's SHA-256 in `extensions.persistedQuery`; the first
//! time, the server answers `PersistedQueryNotFound` and the client sends the
//! document with its hash once, after which the hash alone runs it.
//!
//! A document is kept for the principal that sent it (never for anonymous
//! callers), so no caller can learn by probing hashes what another sent and
//! nobody fills the store without a credential, and only once it passed the
//! limits of a request. The store is bounded: at most [`PERSISTED_QUERIES`]
//! documents of at most [`MAX_PERSISTED_QUERY_BYTES`], [`PER_PRINCIPAL`] of
//! one principal; when it is full an arbitrary one makes room, and its
//! client only sends the text once more.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_graphql::{ErrorExtensions, ServerError};
use sha2::Digest;
use uuid::Uuid;

use crate::app::{Error, RequestContext};

/// The most documents kept, over every principal.
pub const PERSISTED_QUERIES: usize = 1024;
/// The most documents kept for one principal.
pub const PER_PRINCIPAL: usize = 64;
/// The longest document kept (a longer one is run, but must be sent whole each time).
pub const MAX_PERSISTED_QUERY_BYTES: usize = 16 * 1024;
/// The extension a client names its document's hash in.
const EXTENSION: &str = "persistedQuery";

/// A kept document's key: the principal that sent it, and its SHA-256.
type Key = (Uuid, [u8; 32]);

/// Documents by (principal, SHA-256 of the text).
#[derive(Default)]
pub struct PersistedQueries {
    kept: Mutex<HashMap<Key, Arc<str>>>,
}

/// A document sent with its hash by a signed-in caller, to keep once it
/// proved a valid request ([`PersistedQueries::keep`]).
#[derive(Debug)]
pub struct Sent {
    key: Key,
}

impl PersistedQueries {
    /// Fills in the document of a request that names one by hash; a
    /// request without the extension is left alone. A document sent with
    /// its hash is checked against it and, for a signed-in caller, returned
    /// as [`Sent`], to keep once it passed the limits. Errors are the
    /// protocol's: `PersistedQueryNotFound` asks the client to send the
    /// text, and a hash that does not match its text is invalid input.
    pub fn resolve(
        &self,
        request: &mut async_graphql::Request,
        caller: Option<&RequestContext>,
    ) -> Result<Option<Sent>, ServerError> {
        let Some(extension) = request.extensions.0.get(EXTENSION) else { return Ok(None) };
        let hash = hash_of(extension)?;
        let principal = caller.map(|caller| caller.principal.id);
        if request.query.is_empty() {
            let kept = principal.and_then(|principal| self.lock().get(&(principal, hash)).cloned());
            let Some(text) = kept else { return Err(not_found()) };
            request.query = text.to_string();
            return Ok(None);
        }
        if <[u8; 32]>::from(sha2::Sha256::digest(request.query.as_bytes())) != hash {
            return Err(invalid("sha256Hash", "hash_mismatch", "is not the SHA-256 of the query sent with it"));
        }
        Ok(principal.filter(|_| request.query.len() <= MAX_PERSISTED_QUERY_BYTES).map(|p| Sent { key: (p, hash) }))
    }

    /// Keeps a document that passed: a principal holding
    /// [`PER_PRINCIPAL`] already makes room among its own, so no caller can
    /// push everyone else's out.
    pub fn keep(&self, sent: Sent, text: &str) {
        let mut kept = self.lock();
        if kept.contains_key(&sent.key) {
            return;
        }
        let principal = sent.key.0;
        let own: Vec<Key> = kept.keys().filter(|(p, _)| *p == principal).copied().collect();
        let room = if own.len() >= PER_PRINCIPAL {
            own.first().copied()
        } else if kept.len() >= PERSISTED_QUERIES {
            kept.keys().next().copied()
        } else {
            None
        };
        if let Some(any) = room {
            kept.remove(&any);
        }
        kept.insert(sent.key, Arc::from(text));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<str>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The hash an extension names: `{"version": 1, "sha256Hash": "<64 hex>"}`.
fn hash_of(extension: &async_graphql::Value) -> Result<[u8; 32], ServerError> {
    let async_graphql::Value::Object(fields) = extension else {
        return Err(invalid("", "invalid", "must be an object with version and sha256Hash"));
    };
    match fields.get("version") {
        Some(async_graphql::Value::Number(version)) if version.as_u64() == Some(1) => {}
        _ => return Err(invalid("version", "unsupported", "must be 1")),
    }
    let hex_text = match fields.get("sha256Hash") {
        Some(async_graphql::Value::String(text)) => text,
        _ => return Err(invalid("sha256Hash", "required", "must be the query's SHA-256 in hex")),
    };
    let mut hash = [0u8; 32];
    hex::decode_to_slice(hex_text, &mut hash)
        .map_err(|_| invalid("sha256Hash", "invalid", "must be 64 hexadecimal digits"))?;
    Ok(hash)
}

fn invalid(field: &str, code: &str, message: &str) -> ServerError {
    let field =
        if field.is_empty() { format!("extensions.{EXTENSION}") } else { format!("extensions.{EXTENSION}.{field}") };
    super::error(Error::invalid_field(&field, code, message)).into_server_error(Default::default())
}

/// The answer Apollo's clients know to send the text after.
fn not_found() -> ServerError {
    async_graphql::Error::new("PersistedQueryNotFound")
        .extend_with(|_, extensions| extensions.set("code", "PERSISTED_QUERY_NOT_FOUND"))
        .into_server_error(Default::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(query: &str, hash: &str) -> async_graphql::Request {
        let mut request = async_graphql::Request::new(query);
        let extension = serde_json::json!({ "version": 1, "sha256Hash": hash });
        request.extensions.0.insert(EXTENSION.into(), async_graphql::Value::from_json(extension).unwrap());
        request
    }

    fn caller(id: Uuid) -> RequestContext {
        let mut caller = RequestContext::system(Uuid::nil());
        caller.principal.id = id;
        caller
    }

    #[test]
    fn a_document_is_kept_for_its_principal_only() {
        let store = PersistedQueries::default();
        let text = "{ me { id } }";
        let hash = hex::encode(sha2::Sha256::digest(text));
        let (alice, bob) = (caller(Uuid::now_v7()), caller(Uuid::now_v7()));

        let unknown = store.resolve(&mut request("", &hash), Some(&alice)).unwrap_err();
        assert_eq!(unknown.message, "PersistedQueryNotFound");
        let sent = store.resolve(&mut request(text, &hash), Some(&alice)).unwrap().expect("to keep");
        store.keep(sent, text);
        let mut by_hash = request("", &hash);
        store.resolve(&mut by_hash, Some(&alice)).unwrap();
        assert_eq!(by_hash.query, text);
        // Another principal, or nobody, cannot use (or learn of) Alice's document.
        assert!(store.resolve(&mut request("", &hash), Some(&bob)).is_err());
        assert!(store.resolve(&mut request("", &hash), None).is_err());
        // An anonymous caller's document is checked but not kept.
        assert!(store.resolve(&mut request(text, &hash), None).unwrap().is_none());
    }

    #[test]
    fn a_wrong_hash_or_version_is_refused() {
        let store = PersistedQueries::default();
        let alice = caller(Uuid::now_v7());
        let wrong = hex::encode([7u8; 32]);
        assert!(store.resolve(&mut request("{ me { id } }", &wrong), Some(&alice)).is_err());
        assert!(store.resolve(&mut request("", "not hex"), Some(&alice)).is_err());
        let mut version_2 = request("", &wrong);
        let extension = serde_json::json!({ "version": 2, "sha256Hash": wrong });
        version_2.extensions.0.insert(EXTENSION.into(), async_graphql::Value::from_json(extension).unwrap());
        assert!(store.resolve(&mut version_2, Some(&alice)).is_err());
    }

    #[test]
    fn the_store_stays_bounded_for_everyone_and_each_principal() {
        let store = PersistedQueries::default();
        let send = |who: &RequestContext, n: usize| {
            let text = format!("{{ q{n}: me {{ id }} }}");
            let hash = hex::encode(sha2::Sha256::digest(&text));
            let sent = store.resolve(&mut request(&text, &hash), Some(who)).unwrap().expect("to keep");
            store.keep(sent, &text);
        };
        let greedy = caller(Uuid::now_v7());
        for n in 0..PER_PRINCIPAL * 3 {
            send(&greedy, n);
        }
        assert_eq!(store.lock().len(), PER_PRINCIPAL, "one principal holds at most its share");
        for n in 0..PERSISTED_QUERIES + 10 {
            send(&caller(Uuid::now_v7()), n);
        }
        assert_eq!(store.lock().len(), PERSISTED_QUERIES);
    }
}
