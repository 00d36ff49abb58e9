//! What regions report back: progress of operations and observed state of
//! clusters and node pools. The status stream of the regions issue feeds
//! these; until then tests call them directly.

use std::collections::HashMap;
use std::sync::RwLock;

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::kernel::jsonb;
use crate::app::region::command::ResourceKind;
use crate::app::region::observed::{ConditionStored, NodeObserved, ObservedStored, SnapshotObserved, WorkloadObserved};
use crate::app::{App, Result};
use crate::model::{Condition, OperationError, OperationStatus};

/// A region's report on one operation.
#[derive(Debug, Clone)]
pub struct OperationProgress {
    /// The region that reported it: it moves only Operations sent to that
    /// region. `None` for the gateway's own work.
    pub region: Option<String>,
    pub operation_id: Uuid,
    pub status: OperationStatus,
    pub step: String,
    pub progress: i32,
    pub error: Option<OperationError>,
    /// Steps reported before this one in the same batch (oldest first),
    /// kept in the Operation's history though the row moves past them.
    pub earlier: Vec<EarlierStep>,
}

/// A step an Operation passed through between two applied reports.
#[derive(Debug, Clone)]
pub struct EarlierStep {
    pub status: OperationStatus,
    pub step: String,
    pub progress: i32,
}

/// A region's report on one cluster or node pool.
#[derive(Debug, Clone)]
pub struct ResourceObservation {
    /// The region that reported it: applied only to resources of that region.
    pub region: String,
    pub kind: ResourceKind,
    pub resource_id: Uuid,
    pub observed_generation: i64,
    pub phase: String,
    pub conditions: Vec<Condition>,
    /// The region no longer has the resource (after a delete).
    pub gone: bool,
    /// Clusters: where the control plane serves the Kubernetes API.
    pub endpoint: Option<String>,
    /// Deployments: replica counts and pods.
    pub workload: Option<WorkloadObserved>,
    /// Node pools: their nodes.
    pub nodes: Option<Vec<NodeObserved>>,
    /// Clusters: the etcd snapshots kept.
    pub snapshots: Option<Vec<SnapshotObserved>>,
    /// Clusters: the Deployments made with kubectl, the whole list.
    pub unmanaged: Option<Vec<moke_proto::region::UnmanagedWorkload>>,
    /// Clusters: the namespaces made with kubectl, the whole list.
    pub namespaces: Option<Vec<String>>,
}

/// The most kubectl-made Deployments kept per cluster (as many as a region
/// reports), the longest text kept of one, and the largest count.
const MAX_UNMANAGED: usize = 300;
const MAX_UNMANAGED_TEXT: usize = 512;
const MAX_UNMANAGED_COUNT: i64 = 100_000;

/// When each region's agent last reported, to mark what it observed stale
/// once it falls silent. Kept current by `NOTIFY moke_regions` (sent on
/// every heartbeat) and reloaded whenever the listener (re)connects, so a
/// read never queries for it.
#[derive(Debug, Default)]
pub struct RegionClock(RwLock<ClockState>);

#[derive(Debug, Default)]
struct ClockState {
    heartbeats: HashMap<String, DateTime<Utc>>,
    /// False while the notification listener is down: nothing is marked
    /// stale on information we may have missed.
    live: bool,
}

impl RegionClock {
    /// True when the region's agent reported before but not within
    /// `stale_after_seconds`: what it last observed may no longer hold.
    pub fn silent(&self, region: &str, stale_after_seconds: i64) -> bool {
        let state = self.0.read().expect("region clock lock");
        state.live
            && state.heartbeats.get(region).is_some_and(|at| (Utc::now() - *at).num_seconds() > stale_after_seconds)
    }

    /// A heartbeat was recorded.
    pub fn heard(&self, region: &str, at: DateTime<Utc>) {
        let mut state = self.0.write().expect("region clock lock");
        let last = state.heartbeats.entry(region.to_string()).or_insert(at);
        *last = (*last).max(at);
    }

    /// Replaces everything (after a reload) and says whether it is live.
    fn reset(&self, heartbeats: HashMap<String, DateTime<Utc>>, live: bool) {
        *self.0.write().expect("region clock lock") = ClockState { heartbeats, live };
    }

    /// Stops marking anything stale until the next reload.
    pub fn set_unknown(&self) {
        self.0.write().expect("region clock lock").live = false;
    }
}

impl App {
    /// The region clock (no query).
    pub fn region_clock(&self) -> &RegionClock {
        &self.region_clock
    }

    /// True when `region` has fallen silent (see [`RegionClock::silent`]).
    pub fn region_silent(&self, region: &str) -> bool {
        self.region_clock.silent(region, self.config().outbox.region_stale_after_seconds)
    }

    /// Reloads the region clock from `region_health` and marks it live.
    pub async fn reload_region_clock(&self) -> Result<()> {
        let rows = sqlx::query!("SELECT region, last_heartbeat_at FROM region_health").fetch_all(self.db()).await?;
        self.region_clock.reset(rows.into_iter().map(|r| (r.region, r.last_heartbeat_at)).collect(), true);
        Ok(())
    }

    /// Records operation progress. A finished operation never changes again,
    /// so late or repeated reports are harmless.
    pub async fn record_operation_progress(&self, report: OperationProgress) -> Result<()> {
        let mut conn = self.db().acquire().await?;
        record_progress(&mut conn, report).await.map(drop)
    }

    /// Records observed state. Reports about an older generation than one
    /// already recorded are ignored; a `gone` report about a resource whose
    /// deletion was requested removes it.
    pub async fn record_observation(&self, report: ResourceObservation) -> Result<()> {
        use crate::app::infra::store::{clusters, node_pools};
        use crate::app::workloads::store::{deployments, namespaces, unmanaged};
        let status = jsonb::to_column(&ObservedStored {
            phase: report.phase.clone(),
            conditions: report.conditions.iter().map(ConditionStored::from).collect(),
            // Only a plain https:// endpoint ever reaches a kubeconfig.
            endpoint: report.endpoint.as_deref().and_then(crate::app::infra::clusters::pki::serving_endpoint),
            workload: report.workload.clone(),
            nodes: report.nodes.clone(),
            snapshots: report.snapshots.clone(),
        });
        let mut tx = self.db().begin().await?;
        match (report.kind, report.gone) {
            // Regions hold no organizations: nothing reports on one.
            (ResourceKind::Org, _) => {}
            (ResourceKind::Cluster, true) => clusters::remove_gone(&mut tx, report.resource_id, &report.region).await?,
            (ResourceKind::NodePool, true) => {
                node_pools::remove_gone(&mut tx, report.resource_id, &report.region).await?
            }
            (ResourceKind::Cluster, false) => {
                // Locked first, as every change of the cluster locks it, before the rows its report changes.
                let here = clusters::lock_for_report(&mut tx, report.resource_id, &report.region).await?;
                clusters::observe(&mut tx, report.resource_id, &report.region, status, report.observed_generation)
                    .await?;
                if let Some(list) = report.unmanaged.as_ref().filter(|_| here) {
                    // A region's list is text from the cluster's clients: only
                    // short, printable, once-named entries are kept.
                    let mut named = std::collections::HashSet::new();
                    let count = |n: i64| n.clamp(0, MAX_UNMANAGED_COUNT);
                    let reported: Vec<unmanaged::Reported> = list
                        .iter()
                        .filter(|w| {
                            [&w.namespace, &w.name, &w.image]
                                .iter()
                                .all(|t| t.len() <= MAX_UNMANAGED_TEXT && !t.chars().any(char::is_control))
                                && !w.name.is_empty()
                                && named.insert((w.namespace.as_str(), w.name.as_str()))
                        })
                        .take(MAX_UNMANAGED)
                        .map(|w| unmanaged::Reported {
                            namespace: &w.namespace,
                            name: &w.name,
                            image: &w.image,
                            replicas: count(w.replicas),
                            current_replicas: count(w.current_replicas),
                            ready_replicas: count(w.ready_replicas),
                            updated_replicas: count(w.updated_replicas),
                            phase: if w.phase == "running" { "running" } else { "progressing" },
                            created_at: DateTime::parse_from_rfc3339(&w.created_at).ok().map(|t| t.with_timezone(&Utc)),
                        })
                        .collect();
                    unmanaged::replace(&mut tx, report.resource_id, &report.region, &reported).await?;
                }
                if let Some(list) = report.namespaces.as_ref().filter(|_| here) {
                    // Only names Moke's API can address; never `default` or the cluster's own `kube-*`.
                    let mut named = std::collections::HashSet::new();
                    let reported: Vec<&str> = list
                        .iter()
                        .map(String::as_str)
                        .filter(|name| {
                            crate::app::validate::is_dns_label(name)
                                && *name != "default"
                                && !name.starts_with(crate::app::workloads::namespaces::RESERVED_NAMESPACE_PREFIX)
                                && named.insert(*name)
                        })
                        .take(MAX_UNMANAGED)
                        .collect();
                    namespaces::replace_kubectl_made(&mut tx, report.resource_id, &reported).await?;
                }
            }
            (ResourceKind::NodePool, false) => {
                node_pools::observe(&mut tx, report.resource_id, &report.region, status, report.observed_generation)
                    .await?
            }
            (ResourceKind::Deployment, true) => {
                deployments::remove_gone(&mut tx, report.resource_id, &report.region).await?
            }
            (ResourceKind::Deployment, false) => {
                // A report that the current pod template runs everywhere makes it the last good one.
                let rolled_out = report.phase == "running";
                let revision = report.workload.as_ref().map(|w| w.revision);
                let (id, generation) = (report.resource_id, report.observed_generation);
                deployments::observe(&mut tx, id, &report.region, status, generation, rolled_out, revision).await?
            }
        }
        tx.commit().await?;
        // A kubectl edit to adopt is a change of its own, after the
        // observation: it locks as every deployment change does (cluster,
        // then deployment), and whatever becomes of it, the report stays
        // ingested (the region proposes a waiting edit again).
        if let Some(edit) = report.workload.as_ref().and_then(|w| w.cluster_edit.as_ref())
            && report.kind == ResourceKind::Deployment
            && let Err(error) =
                self.adopt_cluster_edit(&report.region, report.resource_id, report.observed_generation, edit).await
        {
            tracing::warn!(deployment = %report.resource_id, error = format!("{error:#}"), "cluster edit not adopted");
        }
        Ok(())
    }
}

/// [`App::record_operation_progress`] in the caller's transaction; whether
/// it recorded a step (false: the Operation had finished, belongs to
/// another region, or already stood at that step).
pub(in crate::app) async fn record_progress(conn: &mut PgConnection, report: OperationProgress) -> Result<bool> {
    // The history: each step (or status) unlike the one before it, the earlier ones first.
    let mut steps: Vec<(&str, String, i32)> = Vec::new();
    let all = report.earlier.iter().map(|e| (e.status, &e.step, e.progress));
    for (status, step, progress) in all.chain(std::iter::once((report.status, &report.step, report.progress))) {
        if steps.last().is_none_or(|(last_status, last, _)| last != step || *last_status != status.as_str()) {
            steps.push((status.as_str(), step.clone(), progress.clamp(0, 100)));
        }
    }
    let (statuses, names, percents): (Vec<&str>, Vec<String>, Vec<i32>) =
        steps.into_iter().fold(Default::default(), |(mut a, mut b, mut c), (x, y, z)| {
            a.push(x);
            b.push(y);
            c.push(z);
            (a, b, c)
        });
    let moved = sqlx::query!(
        // An Operation finished, or sent to another region, is left as it is.
        "WITH moved AS (
             UPDATE operations SET status = $2, step = $3, progress = $4, error = $5, updated_at = now(),
                 finished_at = CASE WHEN $2 IN ('succeeded', 'failed') THEN now() END
             WHERE id = $1 AND status NOT IN ('succeeded', 'failed')
               AND ($6::text IS NULL OR EXISTS (SELECT 1 FROM outbox o WHERE o.operation_id = $1 AND o.region = $6))
             RETURNING id
         ), last AS (
             SELECT status, step FROM operation_steps WHERE operation_id = $1 ORDER BY seq DESC LIMIT 1
         )
         INSERT INTO operation_steps (operation_id, status, step, progress)
         SELECT moved.id, s.status, s.step, s.progress
         FROM moved, unnest($7::text[], $8::text[], $9::int[]) WITH ORDINALITY AS s(status, step, progress, n)
         WHERE s.n > 1 OR NOT EXISTS (SELECT 1 FROM last WHERE last.status = s.status AND last.step = s.step)
         ORDER BY s.n",
        report.operation_id,
        report.status.as_str(),
        report.step,
        report.progress.clamp(0, 100),
        report.error.map(|e| json!(e)),
        report.region,
        &statuses as &[&str],
        &names,
        &percents,
    )
    .execute(conn)
    .await?;
    Ok(moved.rows_affected() > 0)
}
