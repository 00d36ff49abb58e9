//! Sends Moke's namespaces and services made before their kind's commands
//! existed to their clusters' own API, once each, so that kubectl shows
//! them without waiting for their next change (migration 61 marks them).

use serde_json::json;

use crate::app::infra::clusters;
use crate::app::region::command::ChangeKind;
use crate::app::workloads::store::{namespaces, services};
use crate::app::{App, RequestContext, Result};

/// The most rows one pass sends of each kind; the rest wait for the next.
const PER_PASS: i64 = 100;

impl App {
    /// One backfill pass: each namespace, then each service, not yet sent
    /// becomes a change the system makes (`namespace_create`,
    /// `service_update`; an Operation on the cluster, audited), in a
    /// transaction of its own that locks the cluster first, as every
    /// change in it does. Rows of clusters being deleted are only marked.
    /// Returns how many commands were sent.
    pub async fn backfill_cluster_objects_once(&self) -> Result<usize> {
        let mut sent = 0;
        let unsent = namespaces::unsent(&mut *self.db().acquire().await?, PER_PASS).await?;
        for (id, cluster) in unsent {
            let mut tx = self.db().begin().await?;
            let cluster_row = clusters::find_by_id(&mut tx, cluster).await?;
            let Some(row) = namespaces::take_unsent(&mut tx, id).await? else { continue };
            if cluster_row.deletion_requested_at.is_none() {
                let ctx = RequestContext::system(cluster_row.org_id);
                let change = (ChangeKind::NamespaceCreate, row.id);
                self.record_namespace_change(&mut tx, &ctx, &cluster_row, change, &row.name).await?;
                sent += 1;
            }
            tx.commit().await?;
        }
        let unsent = services::unsent(&mut *self.db().acquire().await?, PER_PASS).await?;
        for (id, cluster) in unsent {
            let mut tx = self.db().begin().await?;
            let cluster_row = clusters::find_by_id(&mut tx, cluster).await?;
            let Some(row) = services::take_unsent(&mut tx, id).await? else { continue };
            if cluster_row.deletion_requested_at.is_none() {
                let ctx = RequestContext::system(cluster_row.org_id);
                let details = json!({
                    "name": row.name, "namespace": row.namespace,
                    "reason": "made before services reached the cluster's API: sent there once",
                });
                self.record_service_change(&mut tx, &ctx, &cluster_row, (ChangeKind::ServiceUpdate, &row), details)
                    .await?;
                sent += 1;
            }
            tx.commit().await?;
        }
        Ok(sent)
    }
}
