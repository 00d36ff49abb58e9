//! `Idempotency-Key` handling for creates.
//!
//! A request with a key first looks for a stored answer (a retry gets it,
//! another request under the same key is refused). Otherwise its mutation
//! runs, and the transaction it begins through [`Claim::begin`] holds the
//! key: a transaction-scoped advisory lock, so a concurrent duplicate is
//! refused at once (409) and a request that dies (a crash, a killed
//! process, a dropped connection) lets go of the key with its connection;
//! the retry proceeds immediately. The mutation stores its answer in that
//! same transaction ([`Claim::complete`]), so an answer exists exactly when
//! the change does. Answers are replayed for `idempotency.retention_hours`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::app::{App, Error, RequestContext, Result};

/// A request's idempotency key, once checked: whose it is and what request
/// it was first used for.
#[derive(Clone)]
struct Key {
    org_id: Uuid,
    principal_id: Uuid,
    key: String,
    request_hash: Vec<u8>,
    /// The advisory lock that holds the key while a mutation runs.
    lock_id: i64,
    retention_hours: f64,
}

/// How a mutation begins its transaction and records its answer: with the
/// request's idempotency key when it has one, plainly when it has none.
pub struct Claim(Option<Key>);

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Claim(key)" } else { "Claim(none)" })
    }
}

impl Default for Claim {
    /// No key: the transaction begins plainly and stores no answer.
    fn default() -> Claim {
        Claim(None)
    }
}

impl Claim {
    /// Begins the mutation's transaction, holding the key in it: refused
    /// with [`Error::IdempotencyInFlight`] while another request holds it,
    /// and when an answer was stored since the request looked.
    pub async fn begin(&self, db: &PgPool) -> Result<Transaction<'static, Postgres>> {
        let mut tx = db.begin().await?;
        let Some(key) = &self.0 else { return Ok(tx) };
        let locked = sqlx::query_scalar!(r#"SELECT pg_try_advisory_xact_lock($1) AS "locked!""#, key.lock_id)
            .fetch_one(&mut *tx)
            .await?;
        if !locked {
            return Err(Error::IdempotencyInFlight);
        }
        let existing = stored(&mut tx, key).await?;
        match existing {
            Some(existing) if existing.request_hash != key.request_hash => Err(Error::IdempotencyMismatch),
            // Finished between the look and this lock, or held by a gateway
            // of the previous release: a retry gets the answer.
            Some(existing) if existing.response_body.is_some() || existing.legacy_claim => {
                Err(Error::IdempotencyInFlight)
            }
            _ => Ok(tx),
        }
    }

    /// Stores the answer inside the mutation's transaction.
    pub async fn complete(&self, tx: &mut PgConnection, status: u16, body: &impl Serialize) -> Result<()> {
        let Some(key) = &self.0 else { return Ok(()) };
        let body = serde_json::to_value(body).map_err(|e| Error::Internal(e.into()))?;
        let stored = sqlx::query!(
            "INSERT INTO idempotency_records (org_id, principal_id, key, request_hash, claim_id, locked_until,
                                              response_status, response_body)
             VALUES ($1, $2, $3, $4, $5, now(), $6, $7)
             ON CONFLICT (org_id, principal_id, key) DO UPDATE
               SET request_hash = EXCLUDED.request_hash, claim_id = EXCLUDED.claim_id,
                   locked_until = EXCLUDED.locked_until, response_status = EXCLUDED.response_status,
                   response_body = EXCLUDED.response_body, created_at = now()
               -- Only a record past its retention, or a dead claim of the
               -- previous release: never one a gateway of that release
               -- claimed or answered meanwhile.
               WHERE idempotency_records.created_at < now() - make_interval(hours => $8::float8::int)
                  OR (idempotency_records.response_status IS NULL AND idempotency_records.locked_until <= now())",
            key.org_id,
            key.principal_id,
            key.key,
            key.request_hash,
            Uuid::now_v7(),
            i32::from(status),
            body,
            key.retention_hours,
        )
        .execute(tx)
        .await?;
        if stored.rows_affected() == 1 { Ok(()) } else { Err(Error::IdempotencyInFlight) }
    }
}

/// A stored record of `key`, within its retention.
struct Stored {
    request_hash: Vec<u8>,
    response_body: Option<serde_json::Value>,
    /// A claim of a gateway of the previous release (which held keys with a
    /// row and a deadline rather than a lock), respected until its deadline.
    legacy_claim: bool,
}

async fn stored(conn: &mut PgConnection, key: &Key) -> Result<Option<Stored>> {
    Ok(sqlx::query_as!(
        Stored,
        r#"SELECT request_hash, response_body,
                  (response_status IS NULL AND locked_until > now()) AS "legacy_claim!"
           FROM idempotency_records
           WHERE org_id = $1 AND principal_id = $2 AND key = $3
             AND created_at >= now() - make_interval(hours => $4::float8::int)"#,
        key.org_id,
        key.principal_id,
        key.key,
        key.retention_hours,
    )
    .fetch_optional(conn)
    .await?)
}

const MAX_KEY_LEN: usize = 255;

impl App {
    /// Runs `mutation` at most once per (principal, key, request): a retry
    /// with the same request gets the stored answer, another request with the
    /// same key is refused, a concurrent duplicate gets
    /// [`Error::IdempotencyInFlight`]. The mutation begins its transaction
    /// with [`Claim::begin`] and records its answer with [`Claim::complete`].
    pub(crate) async fn idempotent<T, F, Fut>(
        &self,
        ctx: &RequestContext,
        operation: &str,
        request: &impl Serialize,
        mutation: F,
    ) -> Result<T>
    where
        T: DeserializeOwned,
        F: FnOnce(Claim) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let Some(key) = ctx.idempotency_key.as_deref() else {
            return mutation(Claim(None)).await;
        };
        let printable = key.bytes().all(|b| (b' '..=b'~').contains(&b)) && key.bytes().any(|b| b != b' ');
        if key.len() > MAX_KEY_LEN || !printable {
            return Err(Error::invalid_field(
                "Idempotency-Key",
                "invalid",
                format!("must be 1-{MAX_KEY_LEN} printable ASCII characters"),
            ));
        }
        if ctx.is_dry_run() {
            // A dry run neither replays a stored answer nor holds the key.
            return mutation(Claim(None)).await;
        }
        let mut hasher = Sha256::new();
        hasher.update(operation.as_bytes());
        hasher.update([0]);
        hasher.update(serde_json::to_vec(request).map_err(|e| Error::Internal(e.into()))?);
        // A narrower credential of the same principal never gets the stored
        // answer of a wider one (it may not see what that one made).
        let scope = &ctx.principal.scope;
        let actions: Option<Vec<&str>> = scope.actions.as_ref().map(|a| a.iter().map(|a| a.as_str()).collect());
        hasher.update([0]);
        hasher.update(format!("{:?}|{actions:?}", scope.project).as_bytes());
        let request_hash = hasher.finalize().to_vec();
        // Keys belong to one principal in one organization: a person in two
        // organizations never gets one organization's answer in the other.
        let (org_id, principal_id) = (ctx.principal.org_id, ctx.principal.id);
        let lock = Sha256::new()
            .chain_update(b"moke-idempotency\0")
            .chain_update(org_id.as_bytes())
            .chain_update(principal_id.as_bytes())
            .chain_update(key.as_bytes())
            .finalize();
        let config = &self.config().idempotency;
        let key = Key {
            org_id,
            principal_id,
            key: key.to_string(),
            request_hash,
            lock_id: i64::from_be_bytes(lock[..8].try_into().expect("8 bytes")),
            retention_hours: f64::from(config.retention_hours),
        };
        let mut conn = self.db().acquire().await?;
        let existing = stored(&mut conn, &key).await?;
        drop(conn);
        match existing {
            Some(existing) if existing.request_hash != key.request_hash => Err(Error::IdempotencyMismatch),
            Some(Stored { response_body: Some(body), .. }) => {
                serde_json::from_value(body).map_err(|e| Error::Internal(e.into()))
            }
            _ => match mutation(Claim(Some(key.clone()))).await {
                // A change the approval policy holds is recorded afterwards,
                // in a transaction of its own: it answers under the key too.
                Err(Error::Held(mut hold)) => {
                    hold.answer_under(Claim(Some(key)));
                    Err(Error::Held(hold))
                }
                other => other,
            },
        }
    }

    /// Deletes records past their retention; run periodically by `serve`.
    pub async fn purge_idempotency_keys(&self) -> Result<u64> {
        let hours = f64::from(self.config().idempotency.retention_hours);
        let deleted = sqlx::query!(
            "DELETE FROM idempotency_records WHERE created_at < now() - make_interval(hours => $1::float8::int)",
            hours
        )
        .execute(self.db())
        .await?;
        // The table before keys were per organization, until a later release drops it.
        sqlx::query!(
            "DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1::float8::int)",
            hours
        )
        .execute(self.db())
        .await?;
        Ok(deleted.rows_affected())
    }
}
