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
use crate::app::{App, Error, Result};
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
    /// recorded, unless that report fails alone (see [`NotApplied`]).
    /// Returns, for each report in the order given, why it was not applied
    /// (`None`: applied, or replaced by a later one that was). After an
    /// outage nothing more is tried: every report not yet applied is
    /// [`NotApplied::outage`].
    pub async fn apply_region_statuses(&self, statuses: Vec<pb::Status>) -> Vec<Option<NotApplied>> {
        use futures::StreamExt;
        let count = statuses.len();
        // Each report to apply, with the reports (by index) it stands for.
        let mut observations: Vec<(pb::Status, Vec<usize>)> = Vec::new();
        // Reports merge only with their own region's: another region's word never replaces them.
        let mut observation_at: HashMap<(String, String, String), usize> = HashMap::new();
        let mut progress: Vec<(pb::Status, Vec<EarlierStep>, Vec<usize>)> = Vec::new();
        let mut progress_at: HashMap<(String, String), usize> = HashMap::new();
        let mut in_order = Vec::new();
        for (index, status) in statuses.into_iter().enumerate() {
            match &status.message {
                Some(StatusMessage::Observation(o)) if !o.gone => {
                    let key = (status.region.clone(), o.resource_type.clone(), o.resource_id.clone());
                    let generation = o.observed_generation;
                    match observation_at.get(&key) {
                        // An older generation would be ignored one by one too.
                        Some(&at) => {
                            let (kept, covers) = &mut observations[at];
                            let kept_generation = match &kept.message {
                                Some(StatusMessage::Observation(kept)) => kept.observed_generation,
                                _ => i64::MIN,
                            };
                            covers.push(index);
                            if generation >= kept_generation {
                                *kept = status;
                            }
                        }
                        None => {
                            observation_at.insert(key, observations.len());
                            observations.push((status, vec![index]));
                        }
                    }
                }
                Some(StatusMessage::Progress(p)) => {
                    match progress_at.get(&(status.region.clone(), p.operation_id.clone())) {
                        Some(&at) => {
                            let (kept, earlier, covers) = &mut progress[at];
                            covers.push(index);
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
                            progress_at.insert((status.region.clone(), p.operation_id.clone()), progress.len());
                            progress.push((status, Vec::new(), vec![index]));
                        }
                    }
                }
                _ => in_order.push((status, vec![index])),
            }
        }
        let mut outcome: Vec<Option<NotApplied>> = (0..count).map(|_| None).collect();
        let mut record = |covers: &[usize], result: Result<()>| -> bool {
            let Err(error) = result else { return false };
            let failed = NotApplied::of(&error);
            let outage = failed.outage;
            for &index in covers {
                outcome[index] = Some(failed.clone());
            }
            outage
        };
        let applied: Vec<(Vec<usize>, Result<()>)> = futures::stream::iter(observations)
            .map(|(status, covers)| async move { (covers, self.apply_region_status(status).await) })
            .buffer_unordered(PARALLEL_APPLIES)
            .collect()
            .await;
        let mut outage = false;
        for (covers, result) in applied {
            outage |= record(&covers, result);
        }
        let mut in_order = in_order.into_iter();
        if !outage {
            for (status, covers) in in_order.by_ref() {
                if record(&covers, self.apply_region_status(status).await) {
                    outage = true;
                    break;
                }
            }
        }
        let progress = if outage {
            progress
        } else {
            let applied: Vec<(Vec<usize>, Result<()>)> = futures::stream::iter(progress)
                .map(|(status, earlier, covers)| async move {
                    (covers, self.apply_region_status_after(status, earlier).await)
                })
                .buffer_unordered(PARALLEL_APPLIES)
                .collect()
                .await;
            for (covers, result) in applied {
                record(&covers, result);
            }
            Vec::new()
        };
        // What an outage left untried waits for the next round.
        let untried = in_order.flat_map(|(_, covers)| covers).chain(progress.into_iter().flat_map(|(.., c)| c));
        for index in untried {
            outcome[index] = Some(NotApplied { outage: true, error: "not tried: the ingest met an outage".into() });
        }
        outcome
    }

    /// Claims and applies up to a batch of reports from the inbox; returns
    /// how many it settled (applied, replaced or set aside). Applied reports
    /// leave the inbox, and so does any earlier one about the same thing
    /// ([`report_key`]) still waiting to be tried again. An outage (the
    /// database or Vault away or overloaded, see [`Error::is_outage`]) ends
    /// the round with every report left for the next, no attempt counted. A
    /// report that fails alone stays and is tried again on a backoff (1 s
    /// doubling to a minute); once it has failed [`REPORT_ATTEMPTS`] times
    /// and is older than [`App::dead_letter_after`] it is dead-lettered: kept in
    /// the inbox with its last error (30 days), never claimed again, logged
    /// and counted (`dead_letters_total{queue="region_status"}`), so it
    /// never holds up the reports behind it. An unreadable report, or one
    /// naming another region than its row, is dead-lettered at once.
    pub async fn ingest_region_status_once(&self) -> Result<usize> {
        let mut tx = self.db().begin().await?;
        let rows = sqlx::query!(
            "SELECT id, region, message, attempts, created_at FROM region_status
             WHERE dead_lettered_at IS NULL AND (retry_at IS NULL OR retry_at <= now())
             ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
            BATCH,
        )
        .fetch_all(&mut *tx)
        .await?;
        let mut statuses = Vec::with_capacity(rows.len());
        let mut applying = Vec::with_capacity(rows.len());
        let mut unreadable = Vec::new();
        for row in &rows {
            match pb::Status::decode(row.message.as_slice()) {
                // A report counts for the region whose row it is, and no other.
                Ok(status) if status.region == row.region => {
                    applying.push((row, report_key(&status)));
                    statuses.push(status);
                }
                Ok(status) => unreadable.push((row, format!("names region {:?}, not its row's", status.region))),
                Err(error) => unreadable.push((row, format!("undecodable: {error}"))),
            }
        }
        let outcome = self.apply_region_statuses(statuses).await;
        if let Some(outage) = outcome.iter().flatten().find(|failed| failed.outage) {
            tx.rollback().await?;
            return Err(Error::Unavailable { detail: outage.error.clone(), retry_after_seconds: 1 });
        }
        // The latest report applied about each thing: earlier ones about it are replaced.
        let mut latest: HashMap<&str, i64> = HashMap::new();
        for ((row, key), failed) in applying.iter().zip(&outcome) {
            if let (Some(key), None) = (key, failed) {
                let id = latest.entry(key.as_str()).or_insert(row.id);
                *id = (*id).max(row.id);
            }
        }
        let mut settled = Vec::new();
        let now = chrono::Utc::now();
        for ((row, key), failed) in applying.iter().zip(outcome) {
            let replaced = key.as_deref().and_then(|k| latest.get(k)).is_some_and(|later| *later > row.id);
            let Some(failed) = failed.filter(|_| !replaced) else {
                settled.push(row.id);
                continue;
            };
            let attempts = row.attempts + 1;
            let dead = attempts >= REPORT_ATTEMPTS && now - row.created_at >= self.dead_letter_after();
            if dead {
                crate::background::dead_lettered("region_status", &report_name(row.id, &row.region), &failed.error);
            } else {
                tracing::warn!(id = row.id, region = %row.region, attempts, error = ?failed.error,
                    "a region report failed; it will be tried again");
            }
            let retry_in = 2f64.powi(attempts.min(7) - 1).min(60.0);
            inbox::failed(&mut tx, row.id, key.as_deref(), &failed.error, (dead, retry_in)).await?;
        }
        for (row, why) in &unreadable {
            crate::background::dead_lettered("region_status", &report_name(row.id, &row.region), why);
            inbox::failed(&mut tx, row.id, None, why, (true, 0.0)).await?;
        }
        inbox::remove(&mut tx, &settled).await?;
        let (keys, ids): (Vec<String>, Vec<i64>) = latest.into_iter().map(|(k, id)| (k.to_string(), id)).unzip();
        inbox::replace_earlier(&mut tx, &keys, &ids).await?;
        tx.commit().await?;
        Ok(settled.len() + unreadable.len())
    }
}

impl App {
    /// How old a report that fails alone must be before it is dead-lettered
    /// (`outbox.report_dead_letter_after_seconds`): longer than a database
    /// failover, whose errors may not all show as an outage.
    pub fn dead_letter_after(&self) -> chrono::TimeDelta {
        chrono::TimeDelta::seconds(self.config().outbox.report_dead_letter_after_seconds)
    }

    /// Removes the region reports set aside over 30 days ago; how many.
    pub async fn purge_old_dead_letter_reports(&self) -> Result<u64> {
        let purged = sqlx::query!("DELETE FROM region_status WHERE dead_lettered_at < now() - interval '30 days'")
            .execute(self.db())
            .await?;
        Ok(purged.rows_affected())
    }
}

/// How many times a report that fails alone is tried before it is dead-lettered.
pub const REPORT_ATTEMPTS: i32 = 5;

fn report_name(id: i64, region: &str) -> String {
    format!("report {id} of region {region}")
}

/// What a report is about (`<region>|<thing>`), when a later one about the
/// same thing makes it moot: an observation of one resource, one cluster's
/// certificate request, a heartbeat. Progress and usage reports each count
/// on their own (a final step is never replaced by a later running one; a
/// usage sample is recorded once by its id).
/// Only a thing the gateway knows has a key (a resource kind it keeps, an id
/// that parses), so a key is short and a region cannot make up ever new ones.
pub fn report_key(status: &pb::Status) -> Option<String> {
    let thing = match &status.message {
        Some(StatusMessage::Observation(o)) => {
            let kind = ResourceKind::of_observation(&o.resource_type)?;
            format!("observation/{}/{}", kind.as_str(), kind.parse_id(&o.resource_id)?)
        }
        Some(StatusMessage::ServingCsr(request)) => {
            format!("serving_csr/{}", request.cluster_id.parse::<ClusterId>().ok()?.uuid())
        }
        Some(StatusMessage::Heartbeat(_)) => "heartbeat".into(),
        _ => return None,
    };
    Some(format!("{}|{thing}", status.region))
}

/// Why a region report was not applied.
#[derive(Debug, Clone)]
pub struct NotApplied {
    /// The database or Vault was away: every report would have failed, so
    /// the batch is tried again whole and this counts against none of them.
    /// Otherwise the report failed alone (what it carries: a value the
    /// database refuses), and is tried again a few times, then set aside.
    pub outage: bool,
    pub error: String,
}

impl NotApplied {
    fn of(error: &Error) -> NotApplied {
        NotApplied { outage: error.is_outage(), error: error.detail() }
    }
}

/// The `region_status` inbox's bookkeeping.
mod inbox {
    use sqlx::PgConnection;

    use crate::app::Result;

    /// Removes the reports applied.
    pub(super) async fn remove(conn: &mut PgConnection, ids: &[i64]) -> Result<()> {
        sqlx::query!("DELETE FROM region_status WHERE id = ANY($1)", ids).execute(conn).await?;
        Ok(())
    }

    /// Counts a failed attempt of report `id` (about `key`), with its
    /// error; `dead` sets it aside, else it is tried again in `retry_in` seconds.
    pub(super) async fn failed(
        conn: &mut PgConnection,
        id: i64,
        key: Option<&str>,
        error: &str,
        (dead, retry_in): (bool, f64),
    ) -> Result<()> {
        let error: String = error.chars().take(2000).collect();
        sqlx::query!(
            "UPDATE region_status SET attempts = attempts + 1, last_error = $2, report_key = $3,
                 retry_at = now() + make_interval(secs => $4),
                 dead_lettered_at = CASE WHEN $5 THEN now() END
             WHERE id = $1",
            id,
            error,
            key,
            retry_in,
            dead,
        )
        .execute(conn)
        .await?;
        Ok(())
    }

    /// Removes the reports waiting to be tried again that a later one about
    /// the same thing replaced: for each `keys[i]`, those before `ids[i]`.
    pub(super) async fn replace_earlier(conn: &mut PgConnection, keys: &[String], ids: &[i64]) -> Result<()> {
        sqlx::query!(
            "DELETE FROM region_status r USING unnest($1::text[], $2::bigint[]) AS applied(key, id)
             WHERE r.report_key = applied.key AND r.id < applied.id AND r.dead_lettered_at IS NULL",
            keys,
            ids,
        )
        .execute(conn)
        .await?;
        Ok(())
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
