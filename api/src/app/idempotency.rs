//! `Idempotency-Key` handling for creates.
//!
//! A key is claimed in its own short statement before the mutation runs, so a
//! concurrent duplicate sees it in flight (409) at once. The mutation then
//! stores its answer in the *same* transaction as its writes
//! ([`Claim::complete`]), so an answer exists exactly when the change does. A
//! failed mutation releases the key; a crashed one leaves a claim that frees
//! up after `idempotency.lock_seconds`. Answers are replayed for
//! `idempotency.retention_hours`.

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use sqlx::PgConnection;
use uuid::Uuid;

use super::{App, Error, RequestContext, Result};

/// The right to perform the request that holds a key.
pub struct Claim {
    org_id: Uuid,
    principal_id: Uuid,
    key: String,
    claim_id: Uuid,
}

impl Claim {
    /// Stores the answer inside the mutation's transaction. Fails (and so
    /// rolls the mutation back) if the claim was lost to an expired lock.
    pub async fn complete(&self, tx: &mut PgConnection, status: u16, body: &impl Serialize) -> Result<()> {
        let body = serde_json::to_value(body).map_err(|e| Error::Internal(e.into()))?;
        let updated = sqlx::query!(
            "UPDATE idempotency_records SET response_status = $4, response_body = $5
             WHERE org_id = $6 AND principal_id = $1 AND key = $2 AND claim_id = $3 AND response_status IS NULL",
            self.principal_id,
            self.key,
            self.claim_id,
            i32::from(status),
            body,
            self.org_id,
        )
        .execute(tx)
        .await?;
        if updated.rows_affected() == 1 { Ok(()) } else { Err(Error::IdempotencyInFlight) }
    }
}

/// Completes the claim when there is one.
pub async fn complete(claim: Option<&Claim>, tx: &mut PgConnection, status: u16, body: &impl Serialize) -> Result<()> {
    match claim {
        Some(claim) => claim.complete(tx, status, body).await,
        None => Ok(()),
    }
}

const MAX_KEY_LEN: usize = 255;

impl App {
    /// Runs `mutation` at most once per (principal, key, request): a retry
    /// with the same request gets the stored answer, another request with the
    /// same key is refused, a concurrent duplicate gets
    /// [`Error::IdempotencyInFlight`].
    pub(crate) async fn idempotent<T, F, Fut>(
        &self,
        ctx: &RequestContext,
        operation: &str,
        request: &impl Serialize,
        mutation: F,
    ) -> Result<T>
    where
        T: DeserializeOwned,
        F: FnOnce(Option<Claim>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let Some(key) = ctx.idempotency_key.as_deref() else {
            return mutation(None).await;
        };
        if key.is_empty() || key.len() > MAX_KEY_LEN || !key.is_ascii() {
            return Err(Error::invalid_field(
                "Idempotency-Key",
                "invalid",
                format!("must be 1-{MAX_KEY_LEN} ASCII characters"),
            ));
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
        let org_id = ctx.principal.org_id;
        let principal_id = ctx.principal.id;
        let claim_id = Uuid::now_v7();
        let config = &self.config().idempotency;
        let retention_hours = f64::from(config.retention_hours);
        let lock_seconds = f64::from(config.lock_seconds);

        // Claim the key, or take over one that expired or whose holder died.
        let claimed = sqlx::query_scalar!(
            r#"INSERT INTO idempotency_records (org_id, principal_id, key, request_hash, claim_id, locked_until)
               VALUES ($7, $1, $2, $3, $4, now() + make_interval(secs => $5))
               ON CONFLICT (org_id, principal_id, key) DO UPDATE
                 SET request_hash = EXCLUDED.request_hash, claim_id = EXCLUDED.claim_id,
                     locked_until = EXCLUDED.locked_until, response_status = NULL,
                     response_body = NULL, created_at = now()
                 WHERE idempotency_records.created_at < now() - make_interval(hours => $6::float8::int)
                    OR (idempotency_records.response_status IS NULL
                        AND idempotency_records.locked_until < now())
               RETURNING claim_id"#,
            principal_id,
            key,
            request_hash,
            claim_id,
            lock_seconds,
            retention_hours,
            org_id,
        )
        .fetch_optional(self.db())
        .await?;

        if claimed.is_none() {
            let existing = sqlx::query!(
                "SELECT request_hash, response_body FROM idempotency_records
                 WHERE org_id = $3 AND principal_id = $1 AND key = $2",
                principal_id,
                key,
                org_id,
            )
            .fetch_optional(self.db())
            .await?;
            let Some(existing) = existing else {
                // Deleted between the two statements (released by a failed
                // original): the caller can simply retry.
                return Err(Error::IdempotencyInFlight);
            };
            if existing.request_hash != request_hash {
                return Err(Error::IdempotencyMismatch);
            }
            return match existing.response_body {
                Some(body) => serde_json::from_value(body).map_err(|e| Error::Internal(e.into())),
                None => Err(Error::IdempotencyInFlight),
            };
        }

        let claim = Claim { org_id, principal_id, key: key.to_string(), claim_id };
        let result = mutation(Some(claim)).await;
        if result.is_err() {
            // Nothing was written; free the key so a corrected request can use it.
            sqlx::query!(
                "DELETE FROM idempotency_records WHERE org_id = $4 AND principal_id = $1 AND key = $2
                   AND claim_id = $3 AND response_status IS NULL",
                principal_id,
                key,
                claim_id,
                org_id,
            )
            .execute(self.db())
            .await?;
        }
        result
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
