//! Secrets at rest: every secret column holds only Vault transit ciphertext
//! (`vault:vN:…`) under a key derived per organization. After the key is
//! rotated, a rewrap job moves each organization's ciphertext to the newest
//! version inside Vault (the plaintext never leaves it), reported as an
//! Operation on the organization.

use sqlx::Row;
use uuid::Uuid;

use crate::app::region::observations::OperationProgress;
use crate::app::region::operations::{self, NewOperation};
use crate::app::{App, RequestContext, Result};
use crate::model::{OperationError, OperationStatus, OperationView};

/// Every column that holds a secret: (table, ciphertext column, organization column, key column).
pub const SECRET_COLUMNS: [(&str, &str, &str, &str); 5] = [
    ("sso_providers", "client_secret_enc", "org_id", "org_id"),
    ("deploy_hooks", "secret_enc", "org_id", "id"),
    ("deploy_hooks", "previous_secret_enc", "org_id", "id"),
    ("webhook_endpoints", "secret_enc", "org_id", "id"),
    ("webhook_endpoints", "previous_secret_enc", "org_id", "id"),
];

/// The key version a ciphertext was made with (`vault:v3:…` → 3).
pub fn key_version(ciphertext: &str) -> Option<u64> {
    ciphertext.strip_prefix("vault:v")?.split(':').next()?.parse().ok()
}

impl App {
    /// Re-encrypts, organization by organization, every secret made with an
    /// older key version; returns the Operations it ran.
    pub async fn rewrap_secrets(&self) -> Result<Vec<OperationView>> {
        let latest = self.vault().secrets_key_version().await?;
        let prefix = format!("vault:v{latest}:");
        let mut operations = Vec::new();
        for (table, column, org_column, key_column) in SECRET_COLUMNS {
            let stale: Vec<(Uuid, String)> = sqlx::query(&format!(
                "SELECT DISTINCT t.{org_column}, o.name FROM {table} t JOIN organizations o ON o.id = t.{org_column}
                 WHERE NOT starts_with(t.{column}, $1)"
            ))
            .bind(&prefix)
            .fetch_all(self.db())
            .await?
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect();
            for (org, name) in stale {
                let ctx = RequestContext::system(org);
                let mut conn = self.db().acquire().await?;
                let op = operations::insert(
                    &mut conn,
                    &ctx,
                    NewOperation {
                        kind: "secrets_rewrap",
                        target_type: crate::app::region::command::ResourceKind::Org,
                        target_id: org,
                        target_name: &name,
                        target_generation: latest as i64,
                        status: OperationStatus::Pending,
                    },
                )
                .await?;
                drop(conn);
                let outcome = self.rewrap_org(table, column, org_column, key_column, org, &prefix, op.id.uuid()).await;
                // A failure leaves rows on either version (both decrypt): the Operation says so.
                let (status, step, error) = match &outcome {
                    Ok(()) => (OperationStatus::Succeeded, "done", None),
                    Err(error) => (
                        OperationStatus::Failed,
                        "rewrapping",
                        Some(OperationError { code: error.code().to_string(), message: error.to_string() }),
                    ),
                };
                self.record_operation_progress(OperationProgress {
                    region: None,
                    operation_id: op.id.uuid(),
                    status,
                    step: step.into(),
                    progress: 100,
                    error,
                    earlier: Vec::new(),
                })
                .await?;
                outcome?;
                operations.push(self.operation_view(&ctx, op.id, None).await?);
            }
        }
        Ok(operations)
    }

    /// Rewraps one organization's stale rows of one secret column, reporting progress.
    #[allow(clippy::too_many_arguments)]
    async fn rewrap_org(
        &self,
        table: &str,
        column: &str,
        org_column: &str,
        key_column: &str,
        org: Uuid,
        prefix: &str,
        operation: Uuid,
    ) -> Result<()> {
        let rows: Vec<(Uuid, String)> = sqlx::query(&format!(
            "SELECT {key_column}, {column} FROM {table} WHERE {org_column} = $1 AND NOT starts_with({column}, $2)"
        ))
        .bind(org)
        .bind(prefix)
        .fetch_all(self.db())
        .await?
        .into_iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
        let total = rows.len().max(1);
        for (done, (key, ciphertext)) in rows.into_iter().enumerate() {
            let rewrapped = self.vault().rewrap(org, &ciphertext).await?;
            // Only if nobody changed the secret meanwhile.
            sqlx::query(&format!("UPDATE {table} SET {column} = $3 WHERE {key_column} = $1 AND {column} = $2"))
                .bind(key)
                .bind(&ciphertext)
                .bind(&rewrapped)
                .execute(self.db())
                .await?;
            self.record_operation_progress(OperationProgress {
                region: None,
                operation_id: operation,
                status: OperationStatus::Running,
                step: "rewrapping".into(),
                progress: ((done + 1) * 100 / total) as i32,
                error: None,
                earlier: Vec::new(),
            })
            .await?;
        }
        Ok(())
    }

    /// Makes a new secrets-key version current and rewraps everything under it.
    pub async fn rotate_secrets_key(&self) -> Result<(u64, Vec<OperationView>)> {
        let version = self.vault().rotate_secrets_key().await?;
        Ok((version, self.rewrap_secrets().await?))
    }
}
