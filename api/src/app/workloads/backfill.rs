//! Sends Moke's namespaces and services made before their kind's commands
//! existed to their clusters' own API, once each, so that kubectl shows
//! them without waiting for their next change (migration 61 marks them).

use serde_json::json;
use uuid::Uuid;

use crate::app::infra::clusters;
use crate::app::region::command::ChangeKind;
use crate::app::workloads::store::{namespaces, services};
use crate::app::{App, Error, RequestContext, Result};

/// The most rows one pass sends of each kind; the rest wait for the next.
const PER_PASS: i64 = 100;

/// Why a backfill change is made, as its audit event says.
const REASON: &str = "made before Moke's changes reached the cluster's API: sent there once";

/// A row the backfill sends.
#[derive(Debug, Clone, Copy)]
enum Unsent {
    Namespace(Uuid),
    Service(Uuid),
}

impl App {
    /// One backfill pass: each namespace, then each service whose namespace
    /// went before it, not yet sent becomes a change the system makes
    /// (`namespace_create`, `service_update`; an Operation on the cluster,
    /// audited), in a transaction of its own that locks the cluster first,
    /// as every change in it does. Rows of clusters being deleted are only
    /// marked. A row that cannot be sent for what it holds (a spec past the
    /// bounds a command carries) is marked, logged and counted as a dead
    /// letter, so it never stops the rest; its next change sends it. An
    /// outage ends the pass. Returns how many commands were sent.
    pub async fn backfill_cluster_objects_once(&self) -> Result<usize> {
        let mut sent = 0;
        let unsent = namespaces::unsent(&mut *self.db().acquire().await?, PER_PASS).await?;
        for (id, cluster) in unsent {
            sent += usize::from(self.backfill(Unsent::Namespace(id), cluster).await?);
        }
        let unsent = services::unsent(&mut *self.db().acquire().await?, PER_PASS).await?;
        for (id, cluster) in unsent {
            sent += usize::from(self.backfill(Unsent::Service(id), cluster).await?);
        }
        Ok(sent)
    }

    /// Sends one row; whether a command went.
    async fn backfill(&self, row: Unsent, cluster: Uuid) -> Result<bool> {
        match self.send_unsent(row, cluster).await {
            Err(error) if !error.is_outage() => {
                crate::background::dead_lettered("cluster_object_backfill", &format!("{row:?}"), &error.detail());
                let mut tx = self.db().begin().await?;
                match row {
                    Unsent::Namespace(id) => drop(namespaces::take_unsent(&mut tx, id).await?),
                    Unsent::Service(id) => drop(services::take_unsent(&mut tx, id).await?),
                }
                tx.commit().await?;
                Ok(false)
            }
            outcome => outcome,
        }
    }

    async fn send_unsent(&self, row: Unsent, cluster: Uuid) -> Result<bool> {
        let mut tx = self.db().begin().await?;
        let cluster_row = match clusters::find_by_id(&mut tx, cluster).await {
            // Gone, and its namespaces and services with it.
            Err(Error::NotFound { .. }) => return Ok(false),
            found => found?,
        };
        let ctx = RequestContext::system(cluster_row.org_id);
        let live = cluster_row.deletion_requested_at.is_none();
        match row {
            Unsent::Namespace(id) => {
                let Some(namespace) = namespaces::take_unsent(&mut tx, id).await? else { return Ok(false) };
                if live {
                    let change = (ChangeKind::NamespaceCreate, namespace.id);
                    self.record_namespace_change(&mut tx, &ctx, &cluster_row, change, &namespace.name, Some(REASON))
                        .await?;
                }
            }
            Unsent::Service(id) => {
                let Some(service) = services::take_unsent(&mut tx, id).await? else { return Ok(false) };
                if live {
                    super::services::check_stored(&service.spec()?)?;
                    let details = json!({ "name": service.name, "namespace": service.namespace, "reason": REASON });
                    let change = (ChangeKind::ServiceUpdate, &service);
                    self.record_service_change(&mut tx, &ctx, &cluster_row, change, details).await?;
                }
            }
        }
        tx.commit().await?;
        Ok(live)
    }
}
