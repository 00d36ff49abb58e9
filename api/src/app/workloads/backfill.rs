//! Sends Moke's namespaces and services made before their kind's commands
//! existed to their clusters' own API, once each, so that kubectl shows
//! them without waiting for their next change. Migration 61 left every row
//! made before it unchecked (`sent_to_cluster` NULL); this job looks at
//! each: one whose audit events show no command is sent, and each is
//! marked.

use serde_json::json;
use uuid::Uuid;

use crate::app::infra::clusters;
use crate::app::kernel::audit;
use crate::app::region::command::ChangeKind;
use crate::app::workloads::store::{namespaces, services};
use crate::app::{App, Error, RequestContext, Result};
use crate::ids::{ClusterId, ServiceId};

/// The most rows one pass looks at of each kind; the rest wait for the next.
const PER_PASS: i64 = 100;

/// Outages in one pass past which it ends (the database is away, not one
/// region's backlog full).
const OUTAGES_PER_PASS: usize = 3;

/// Why a backfill change is made, as its audit event says.
const REASON: &str = "made before Moke's changes reached the cluster's API: sent there once";

/// A row the backfill looks at.
#[derive(Debug, Clone, Copy)]
enum Unchecked {
    Namespace(Uuid),
    Service(Uuid),
}

impl App {
    /// One backfill pass: each unchecked namespace, then each unchecked
    /// service whose namespace was looked at, in a transaction of its own
    /// that locks the cluster first, as every change in it does. A row that
    /// never carried a command becomes a change the system makes
    /// (`namespace_create`, `service_update`; an Operation on the cluster,
    /// audited); rows of clusters being deleted, `default` and kubectl's
    /// namespaces are only marked. A row that cannot be sent for what it
    /// holds (a spec past the bounds a command carries) is marked, logged
    /// and counted as a dead letter; its next change sends it. A row that
    /// meets an outage (its region's backlog full) stays unchecked, and the
    /// rest of its cluster waits for the next pass. Returns how many
    /// commands were sent.
    pub async fn backfill_cluster_objects_once(&self) -> Result<usize> {
        let mut pass = Pass::default();
        let rows = namespaces::unchecked(&mut *self.db().acquire().await?, PER_PASS).await?;
        for (id, cluster) in rows {
            self.backfill(&mut pass, Unchecked::Namespace(id), cluster).await?;
        }
        let rows = services::unchecked(&mut *self.db().acquire().await?, PER_PASS).await?;
        for (id, cluster) in rows {
            self.backfill(&mut pass, Unchecked::Service(id), cluster).await?;
        }
        Ok(pass.sent)
    }

    async fn backfill(&self, pass: &mut Pass, row: Unchecked, cluster: Uuid) -> Result<()> {
        if pass.held_clusters.contains(&cluster) {
            return Ok(());
        }
        match self.look_at(row, cluster).await {
            Ok(sent) => pass.sent += usize::from(sent),
            Err(error) if error.is_outage() => {
                tracing::warn!(?row, error = %error.detail(), "the backfill met an outage; the row waits");
                pass.held_clusters.push(cluster);
                if pass.held_clusters.len() >= OUTAGES_PER_PASS {
                    return Err(error);
                }
            }
            Err(error) => {
                crate::background::dead_lettered("cluster_object_backfill", &format!("{row:?}"), &error.detail());
                let mut tx = self.db().begin().await?;
                match row {
                    Unchecked::Namespace(id) => drop(namespaces::take_unchecked(&mut tx, id).await?),
                    Unchecked::Service(id) => drop(services::take_unchecked(&mut tx, id).await?),
                }
                tx.commit().await?;
            }
        }
        Ok(())
    }

    /// Looks at one row, sending it if it never carried a command; whether it was sent.
    async fn look_at(&self, row: Unchecked, cluster: Uuid) -> Result<bool> {
        let mut tx = self.db().begin().await?;
        let cluster_row = match clusters::find_by_id(&mut tx, cluster).await {
            // Gone, and its namespaces and services with it.
            Err(Error::NotFound { .. }) => return Ok(false),
            found => found?,
        };
        let ctx = RequestContext::system(cluster_row.org_id);
        let live = cluster_row.deletion_requested_at.is_none();
        let sent = match row {
            Unchecked::Namespace(id) => {
                let Some(namespace) = namespaces::take_unchecked(&mut tx, id).await? else { return Ok(false) };
                let audited_as = format!("{}/{}", ClusterId::from_uuid(cluster), namespace.name);
                let moke_made = namespace.made_with == "moke" && namespace.name != "default";
                let send = live
                    && moke_made
                    && !audit::carried_a_command(&mut tx, cluster_row.org_id, "namespace", &audited_as).await?;
                if send {
                    let change = (ChangeKind::NamespaceCreate, namespace.id);
                    self.record_namespace_change(&mut tx, &ctx, &cluster_row, change, &namespace.name, Some(REASON))
                        .await?;
                }
                send
            }
            Unchecked::Service(id) => {
                let Some(service) = services::take_unchecked(&mut tx, id).await? else { return Ok(false) };
                let audited_as = ServiceId::from_uuid(service.id).to_string();
                let send =
                    live && !audit::carried_a_command(&mut tx, cluster_row.org_id, "service", &audited_as).await?;
                if send {
                    super::services::check_stored(&service.spec()?)?;
                    let details = json!({ "name": service.name, "namespace": service.namespace, "reason": REASON });
                    let change = (ChangeKind::ServiceUpdate, &service);
                    self.record_service_change(&mut tx, &ctx, &cluster_row, change, details).await?;
                }
                send
            }
        };
        tx.commit().await?;
        Ok(sent)
    }
}

/// What one backfill pass did.
#[derive(Default)]
struct Pass {
    sent: usize,
    /// Clusters whose rows wait for the next pass (an outage met).
    held_clusters: Vec<Uuid>,
}
