//! Status ingest: what regions report (`moke.region.v1.Status`) becomes
//! Operation progress and observed state. Reports arrive through the
//! `region_status` inbox (the embedded Postgres transport); applying one is
//! idempotent, so a report seen twice is harmless.

use std::collections::HashMap;

use moke_proto::region::{self as pb, status::Message as StatusMessage};
use prost::Message;

use crate::app::region::command::ResourceKind;
use crate::app::region::observations::{EarlierStep, OperationProgress, ResourceObservation};
use crate::app::region::observed::{NodeObserved, PodObserved, SnapshotObserved, WorkloadObserved};
use crate::app::{App, Result};
use crate::ids::{ClusterId, OperationId};
use crate::model::{Condition, OperationError, OperationStatus};

/// Most reports applied per inbox claim.
const BATCH: i64 = 500;

/// Reports about different resources applied at once.
const PARALLEL_APPLIES: usize = 8;

/// A workload's replica counts and pods as stored in `deployments.status`.
fn workload_observed(w: &pb::WorkloadStatus) -> WorkloadObserved {
    WorkloadObserved {
        replicas: w.replicas,
        updated_replicas: w.updated_replicas,
        ready_replicas: w.ready_replicas,
        available_replicas: w.available_replicas,
        revision: w.revision,
        unschedulable_reason: w.unschedulable_reason.clone(),
        pods: w
            .pods
            .iter()
            .map(|p| PodObserved {
                name: p.name.clone(),
                node: p.node.clone(),
                zone: p.zone.clone(),
                revision: p.revision,
                ready: p.ready,
                ip: p.ip.clone(),
            })
            .collect(),
        cluster_edit: w.cluster_edit.clone(),
    }
}

impl App {
    /// Applies one region report.
    pub async fn apply_region_status(&self, status: pb::Status) -> Result<()> {
        self.apply_region_status_after(status, Vec::new()).await
    }

    /// Applies one region report; a progress report comes with the steps
    /// its Operation was reported at earlier in the batch, for its history.
    async fn apply_region_status_after(&self, status: pb::Status, earlier: Vec<EarlierStep>) -> Result<()> {
        let region = status.region.clone();
        match status.message {
            Some(StatusMessage::Progress(p)) => {
                let Ok(operation) = p.operation_id.parse::<OperationId>() else {
                    tracing::warn!(operation = %p.operation_id, "progress for an unknown operation id; dropped");
                    return Ok(());
                };
                let Some(status) = OperationStatus::parse(&p.status) else {
                    tracing::warn!(status = %p.status, "progress with an unknown status; dropped");
                    return Ok(());
                };
                let error = (!p.error_code.is_empty())
                    .then(|| OperationError { code: p.error_code.clone(), message: p.error_message.clone() });
                self.record_operation_progress(OperationProgress {
                    region: Some(region.clone()),
                    operation_id: operation.uuid(),
                    status,
                    step: p.step,
                    progress: p.progress,
                    error,
                    earlier,
                })
                .await
            }
            Some(StatusMessage::Observation(o)) => {
                let Some(kind) = ResourceKind::of_observation(&o.resource_type) else {
                    tracing::warn!(resource_type = o.resource_type, "observation of an unknown resource type; dropped");
                    return Ok(());
                };
                let Some(resource_id) = kind.parse_id(&o.resource_id) else {
                    tracing::warn!(resource = %o.resource_id, "observation of an unknown id; dropped");
                    return Ok(());
                };
                let now = chrono::Utc::now();
                self.record_observation(ResourceObservation {
                    region: region.clone(),
                    kind,
                    resource_id,
                    observed_generation: o.observed_generation,
                    phase: o.phase,
                    conditions: o
                        .conditions
                        .into_iter()
                        .map(|c| Condition {
                            condition_type: c.r#type,
                            status: c.status,
                            reason: c.reason,
                            message: c.message,
                            last_transition_time: now,
                        })
                        .collect(),
                    gone: o.gone,
                    endpoint: Some(o.endpoint).filter(|e| !e.is_empty()),
                    workload: o.workload.map(|w| workload_observed(&w)),
                    nodes: (kind == ResourceKind::NodePool).then(|| {
                        o.nodes
                            .iter()
                            .map(|n| NodeObserved {
                                name: n.name.clone(),
                                zone: n.zone.clone(),
                                rack: n.rack.clone(),
                                ready: n.ready,
                                unschedulable: n.unschedulable,
                                kubernetes_version: Some(n.kubelet_version.clone()).filter(|v| !v.is_empty()),
                            })
                            .collect()
                    }),
                    snapshots: (kind == ResourceKind::Cluster).then(|| snapshots_observed(&o.snapshots)),
                    unmanaged: (kind == ResourceKind::Cluster).then_some(o.unmanaged_workloads),
                    namespaces: (kind == ResourceKind::Cluster && o.namespaces_reported).then_some(o.namespaces),
                })
                .await
            }
            Some(StatusMessage::Heartbeat(h)) => {
                sqlx::query!(
                    "INSERT INTO region_health (region, last_heartbeat_at, commands_applied) VALUES ($1, now(), $2)
                     ON CONFLICT (region) DO UPDATE SET last_heartbeat_at = now(), commands_applied = $2",
                    status.region,
                    h.commands_applied,
                )
                .execute(self.db())
                .await?;
                Ok(())
            }
            Some(StatusMessage::ServingCsr(request)) => {
                let Ok(cluster) = request.cluster_id.parse::<crate::ids::ClusterId>() else {
                    tracing::warn!(cluster = %request.cluster_id, "certificate request for an unknown id; dropped");
                    return Ok(());
                };
                let mut conn = self.db().acquire().await?;
                let (csr, region) = (&request.csr_pem, &status.region);
                crate::app::infra::store::cluster_cas::accept_serving_request(&mut conn, cluster.uuid(), csr, region)
                    .await?;
                Ok(())
            }
            Some(StatusMessage::Usage(sample)) => {
                let (Ok(cluster), Ok(start), Ok(end)) = (
                    sample.cluster_id.parse::<ClusterId>(),
                    chrono::DateTime::parse_from_rfc3339(&sample.period_start),
                    chrono::DateTime::parse_from_rfc3339(&sample.period_end),
                ) else {
                    tracing::warn!(sample = %sample.id, "unreadable usage sample; dropped");
                    return Ok(());
                };
                // Stored with its usage records in one transaction; who pays is the
                // gateway's own record of the cluster, never the region's word.
                let sample_id = format!("{}/{}", status.region, sample.id);
                let grace = chrono::Duration::hours(i64::from(self.config().billing.grace_hours));
                let mut tx = self.db().begin().await?;
                crate::app::billing::metering::record_sample(
                    &mut tx,
                    &status.region,
                    &sample_id,
                    &sample,
                    cluster.uuid(),
                    start.to_utc(),
                    end.to_utc(),
                    grace,
                )
                .await?;
                tx.commit().await?;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Applies a batch of region reports, as if one by one in their order
    /// but faster: of several observations of one resource only the last of
    /// the newest generation is applied, and of several progress reports of
    /// one operation only the last (a final one is never replaced).
    /// Observations of different resources are applied in parallel; then
    /// `gone` observations and every other report in order; progress comes
    /// last, in parallel, so an Operation never finishes before the report
    /// that finished it (a rollout observed, a deleted resource removed) is
    /// recorded.
    pub async fn apply_region_statuses(&self, statuses: Vec<pb::Status>) -> Result<()> {
        use futures::{StreamExt, TryStreamExt};
        let mut observations: Vec<pb::Status> = Vec::new();
        let mut observation_at: HashMap<(String, String), usize> = HashMap::new();
        let mut progress: Vec<(pb::Status, Vec<EarlierStep>)> = Vec::new();
        let mut progress_at: HashMap<String, usize> = HashMap::new();
        let mut in_order = Vec::new();
        for status in statuses {
            match &status.message {
                Some(StatusMessage::Observation(o)) if !o.gone => {
                    let key = (o.resource_type.clone(), o.resource_id.clone());
                    let generation = o.observed_generation;
                    match observation_at.get(&key) {
                        // An older generation would be ignored one by one too.
                        Some(&at) => {
                            let kept = match &observations[at].message {
                                Some(StatusMessage::Observation(kept)) => kept.observed_generation,
                                _ => i64::MIN,
                            };
                            if generation >= kept {
                                observations[at] = status;
                            }
                        }
                        None => {
                            observation_at.insert(key, observations.len());
                            observations.push(status);
                        }
                    }
                }
                Some(StatusMessage::Progress(p)) => match progress_at.get(&p.operation_id) {
                    Some(&at) => {
                        let (kept, earlier) = &mut progress[at];
                        if let Some(StatusMessage::Progress(before)) = &kept.message
                            && before.status != "succeeded"
                            && before.status != "failed"
                        {
                            // The step it moves past stays in the history.
                            if let Some(status) = OperationStatus::parse(&before.status) {
                                earlier.push(EarlierStep {
                                    status,
                                    step: before.step.clone(),
                                    progress: before.progress,
                                });
                            }
                            *kept = status;
                        }
                    }
                    None => {
                        progress_at.insert(p.operation_id.clone(), progress.len());
                        progress.push((status, Vec::new()));
                    }
                },
                _ => in_order.push(status),
            }
        }
        let in_parallel = |statuses: Vec<pb::Status>| {
            futures::stream::iter(statuses)
                .map(|status| self.apply_region_status(status))
                .buffer_unordered(PARALLEL_APPLIES)
                .try_collect::<Vec<()>>()
        };
        in_parallel(observations).await?;
        for status in in_order {
            self.apply_region_status(status).await?;
        }
        futures::stream::iter(progress)
            .map(|(status, earlier)| self.apply_region_status_after(status, earlier))
            .buffer_unordered(PARALLEL_APPLIES)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    /// Claims and applies up to a batch of reports from the inbox; returns
    /// how many. A report that fails to apply stays for the next round.
    pub async fn ingest_region_status_once(&self) -> Result<usize> {
        let mut tx = self.db().begin().await?;
        let rows = sqlx::query!(
            "DELETE FROM region_status WHERE id IN (
                 SELECT id FROM region_status ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
             RETURNING id, region, message",
            BATCH,
        )
        .fetch_all(&mut *tx)
        .await?;
        let mut rows = rows;
        rows.sort_by_key(|r| r.id);
        let statuses = rows.iter().filter_map(|row| match pb::Status::decode(row.message.as_slice()) {
            // A report counts for the region whose row it is, and no other.
            Ok(status) if status.region == row.region => Some(status),
            Ok(status) => {
                tracing::warn!(id = row.id, row = %row.region, region = %status.region, "status names another region than its row; dropped");
                None
            }
            Err(error) => {
                tracing::warn!(id = row.id, %error, "undecodable region status; dropped");
                None
            }
        });
        self.apply_region_statuses(statuses.collect()).await?;
        tx.commit().await?;
        Ok(rows.len())
    }
}

/// A region's snapshot list as kept: only names that can be asked for in a
/// path and versions that look like one, each name once, the newest
/// [`crate::app::validate::MAX_SNAPSHOTS_KEPT`] (a policy keeps no more).
fn snapshots_observed(reported: &[moke_proto::region::EtcdSnapshot]) -> Vec<SnapshotObserved> {
    let mut kept: Vec<SnapshotObserved> = Vec::new();
    for s in reported.iter().rev() {
        if kept.len() == crate::app::validate::MAX_SNAPSHOTS_KEPT {
            break;
        }
        let valid = crate::app::validate::is_snapshot_name(&s.name)
            && crate::app::validate::is_version_text(&s.kubernetes_version)
            && !kept.iter().any(|k| k.name == s.name);
        let Some(taken_at) = chrono::DateTime::from_timestamp_micros(s.taken_at_unix_micros) else { continue };
        if valid {
            kept.push(SnapshotObserved {
                name: s.name.clone(),
                taken_at,
                size_bytes: s.size_bytes.max(0),
                kubernetes_version: s.kubernetes_version.clone(),
                on_demand: s.on_demand,
            });
        }
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use moke_proto::region::EtcdSnapshot;

    use super::snapshots_observed;

    fn reported(name: &str, version: &str, at: i64) -> EtcdSnapshot {
        EtcdSnapshot {
            name: name.into(),
            taken_at_unix_micros: at,
            size_bytes: -5,
            kubernetes_version: version.into(),
            on_demand: false,
        }
    }

    /// What a region reports is kept only as far as it could be real: names
    /// and versions of their shape, each name once, the newest 50.
    #[test]
    fn a_regions_snapshot_list_is_bounded_and_checked() {
        let mut list: Vec<EtcdSnapshot> = (0..60).map(|i| reported(&format!("prod-etcd-{i}"), "1.33", i)).collect();
        list.push(reported("prod-etcd-59", "1.33", 61));
        list.push(reported("Bad Name\u{1b}[31m", "1.33", 62));
        list.push(reported("prod-etcd-x", "1.33\u{1b}[31m", 63));
        list.push(reported("prod-etcd-y", "1.33", i64::MAX));
        let kept = snapshots_observed(&list);
        assert_eq!(kept.len(), 50);
        assert_eq!(kept.first().unwrap().name, "prod-etcd-10", "the oldest go: {kept:?}");
        assert_eq!(kept.last().unwrap().name, "prod-etcd-59");
        assert_eq!(kept.iter().filter(|s| s.name == "prod-etcd-59").count(), 1, "each name once");
        assert!(kept.iter().all(|s| s.size_bytes == 0 && s.kubernetes_version == "1.33"));
    }
}
