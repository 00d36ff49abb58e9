//! Anti-entropy. Pushing commands is not enough: a command can be lost (a
//! queue purged, an agent's store rolled back), and then a resource would
//! wait forever. Periodically, every cluster, node pool and deployment whose observed
//! generation lags the desired one long after its last command is marked
//! with a `Drifted` condition and gets its latest command again; agents apply
//! commands idempotently, so a repair that was not needed changes nothing.

use crate::app::kernel::jsonb;
use crate::app::region::observed::ConditionStored;
use chrono::Utc;

use crate::app::region::command::ResourceKind;
use crate::app::{App, Result};

impl App {
    /// One anti-entropy pass; returns how many commands were sent again.
    pub async fn repair_drift_once(&self) -> Result<usize> {
        let after = self.config().outbox.repair_after_seconds as f64;
        let mut tx = self.db().begin().await?;
        // Resources behind, whose newest command is old and no longer queued.
        let behind = sqlx::query!(
            r#"WITH behind AS (
                   SELECT id, 'cluster' AS kind, generation, observed_generation FROM clusters
                   WHERE observed_generation < generation
                   UNION ALL
                   SELECT id, 'node_pool', generation, observed_generation FROM node_pools
                   WHERE observed_generation < generation
                   UNION ALL
                   SELECT id, 'deployment', generation, observed_generation FROM deployments
                   WHERE observed_generation < generation
               ), latest AS (
                   -- The newest command carrying the spec: certificate,
                   -- revocation, snapshot and restore commands share the
                   -- cluster's id but not its spec, and so do namespace and service commands.
                   SELECT DISTINCT ON (o.resource_id) o.id, o.resource_id, o.created_at, o.delivered_at
                   FROM outbox o JOIN behind b ON b.id = o.resource_id
                   WHERE o.kind NOT IN ('cluster_certificate', 'cluster_snapshot', 'cluster_restore',
                                        'namespace_create', 'namespace_delete',
                                        'service_create', 'service_update', 'service_delete')
                   ORDER BY o.resource_id, o.id DESC
               )
               SELECT b.id AS "id!", b.kind AS "kind!", b.generation AS "generation!",
                      b.observed_generation AS "observed_generation!", l.id AS "outbox_id!"
               FROM behind b JOIN latest l ON l.resource_id = b.id
               WHERE l.delivered_at IS NOT NULL
                 AND l.created_at < now() - make_interval(secs => $1)
                 AND COALESCE(l.delivered_at, l.created_at) < now() - make_interval(secs => $1)
               -- Clusters before their pools and deployments, the order every
               -- change locks them in, so a repair never deadlocks with one.
               ORDER BY CASE b.kind WHEN 'cluster' THEN 0 WHEN 'node_pool' THEN 1 ELSE 2 END, b.id
               LIMIT 500"#,
            after,
        )
        .fetch_all(&mut *tx)
        .await?;
        for resource in &behind {
            sqlx::query!(
                "INSERT INTO outbox (region, kind, operation_id, resource_id, generation, command)
                 SELECT region, kind, operation_id, resource_id, generation, command
                 FROM outbox WHERE id = $1",
                resource.outbox_id,
            )
            .execute(&mut *tx)
            .await?;
            let condition = jsonb::to_column(&[ConditionStored {
                condition_type: "Drifted".into(),
                status: "True".into(),
                reason: "ObservationBehind".into(),
                message: format!(
                    "desired generation {} but the region reports {}; its command was sent again",
                    resource.generation, resource.observed_generation
                ),
                last_transition_time: Utc::now(),
            }]);
            let update = match ResourceKind::parse(&resource.kind) {
                Some(ResourceKind::Cluster) => {
                    sqlx::query!(
                        "UPDATE clusters SET status = jsonb_set(status, '{conditions}', $2) WHERE id = $1",
                        resource.id,
                        condition,
                    )
                }
                Some(ResourceKind::NodePool) => {
                    sqlx::query!(
                        "UPDATE node_pools SET status = jsonb_set(status, '{conditions}', $2) WHERE id = $1",
                        resource.id,
                        condition,
                    )
                }
                Some(ResourceKind::Deployment) => {
                    sqlx::query!(
                        "UPDATE deployments SET status = jsonb_set(status, '{conditions}', $2) WHERE id = $1",
                        resource.id,
                        condition,
                    )
                }
                // Not selected above: organizations are not regional.
                Some(ResourceKind::Org) | None => continue,
            };
            update.execute(&mut *tx).await?;
            tracing::warn!(resource = %resource.id, generation = resource.generation,
                observed = resource.observed_generation, "drift: command sent again");
        }
        tx.commit().await?;
        Ok(behind.len())
    }
}
