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
use crate::ids::ServiceId;

/// The most rows one pass looks at of each kind; the rest wait for the next.
const PER_PASS: i64 = 100;

/// Outages in a row past which a pass ends (the database is away, not one
/// region's backlog full).
const OUTAGES_IN_A_ROW: usize = 3;

/// Why a backfill change is made, as its audit event says.
const REASON: &str = "made before Moke's changes reached the cluster's API: sent there once";

impl App {
    /// One backfill pass: unchecked namespaces, then unchecked services
    /// whose namespace was looked at, each in a transaction of its own that
    /// locks the cluster first, as every change in it does. A row that
    /// never carried a command (its audit events, read before the lock,
    /// say so) becomes a change the system makes (`namespace_create`,
    /// `service_update`; an Operation on the cluster, audited); rows of
    /// clusters being deleted, `default` and kubectl's namespaces are only
    /// marked. A row that cannot be sent for what it holds (a spec past the
    /// bounds a command carries) is marked, logged and counted as a dead
    /// letter; its next change sends it. A row that meets an outage (its
    /// region's backlog full) stays unchecked, and the rest of its cluster
    /// waits for a later pass; rows are taken in no set order, so such rows
    /// hold up no others. Returns how many commands were sent.
    pub async fn backfill_cluster_objects_once(&self) -> Result<usize> {
        let mut pass = Pass::default();
        let rows = namespaces::unchecked(&mut *self.db().acquire().await?, PER_PASS).await?;
        for row in rows {
            self.backfill(&mut pass, Kind::Namespace, row).await?;
        }
        let rows = services::unchecked(&mut *self.db().acquire().await?, PER_PASS).await?;
        for row in rows {
            self.backfill(&mut pass, Kind::Service, row).await?;
        }
        Ok(pass.sent)
    }

    async fn backfill(&self, pass: &mut Pass, kind: Kind, row: namespaces::Unchecked) -> Result<()> {
        if pass.held_clusters.contains(&row.cluster_id) {
            return Ok(());
        }
        match self.look_at(kind, &row).await {
            Ok(sent) => {
                pass.sent += usize::from(sent);
                pass.outages_in_a_row = 0;
            }
            Err(error) if error.is_outage() => {
                tracing::warn!(?kind, id = %row.id, error = %error.detail(), "the backfill met an outage; the row waits");
                pass.held_clusters.push(row.cluster_id);
                pass.outages_in_a_row += 1;
                if pass.outages_in_a_row >= OUTAGES_IN_A_ROW {
                    return Err(error);
                }
            }
            Err(error) => {
                let what = format!("{kind:?} {}", row.id);
                crate::background::dead_lettered("cluster_object_backfill", &what, &error.detail());
                let mut tx = self.db().begin().await?;
                match kind {
                    Kind::Namespace => drop(namespaces::take_unchecked(&mut tx, row.id).await?),
                    Kind::Service => drop(services::take_unchecked(&mut tx, row.id).await?),
                }
                tx.commit().await?;
            }
        }
        Ok(())
    }

    /// Looks at one row, sending it if it never carried a command; whether it was sent.
    async fn look_at(&self, kind: Kind, row: &namespaces::Unchecked) -> Result<bool> {
        // The audit history only grows: read it before taking the cluster's lock.
        let (resource_type, audited_as) = match kind {
            Kind::Namespace => ("namespace", super::namespaces::audit_ref(row.cluster_id, &row.name)),
            Kind::Service => ("service", ServiceId::from_uuid(row.id).to_string()),
        };
        let mut conn = self.db().acquire().await?;
        let carried = audit::carried_a_command(&mut conn, row.org_id, resource_type, &audited_as).await?;
        drop(conn);
        let mut tx = self.db().begin().await?;
        let cluster_row = match clusters::find_by_id(&mut tx, row.cluster_id).await {
            // Gone, and its namespaces and services with it.
            Err(Error::NotFound { .. }) => return Ok(false),
            found => found?,
        };
        let ctx = RequestContext::system(cluster_row.org_id);
        let send = !carried && cluster_row.deletion_requested_at.is_none();
        let sent = match kind {
            Kind::Namespace => {
                let Some(namespace) = namespaces::take_unchecked(&mut tx, row.id).await? else { return Ok(false) };
                let send = send && namespace.made_with == "moke" && namespace.name != "default";
                if send {
                    let change = (ChangeKind::NamespaceCreate, namespace.id);
                    self.record_namespace_change(&mut tx, &ctx, &cluster_row, change, &namespace.name, Some(REASON))
                        .await?;
                }
                send
            }
            Kind::Service => {
                let Some(service) = services::take_unchecked(&mut tx, row.id).await? else { return Ok(false) };
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

/// What the backfill looks at.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Namespace,
    Service,
}

/// What one backfill pass did.
#[derive(Default)]
struct Pass {
    sent: usize,
    /// Clusters whose rows wait for a later pass (an outage met).
    held_clusters: Vec<Uuid>,
    outages_in_a_row: usize,
}
