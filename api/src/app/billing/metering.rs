//! Metering: a region's usage sample becomes usage records, one per
//! resource instance (the control plane, each node), meter and sampling
//! period, in the transaction that stores the sample. A repeated sample
//! writes nothing new (its id, and the records' key), and nothing is
//! deduplicated before it is written, so a failed write loses nothing: the
//! region sends the sample again.
//!
//! Regions report; the gateway decides who pays and at which price. The
//! organization, project, control-plane tier and machine types come from
//! the gateway's own records, never the sample; a sample whose numbers no
//! region can have measured is dropped with a warning rather than billed:
//! a period that runs backwards, is longer than [`MAX_PERIOD`], ends in the
//! future or starts before the cluster existed; a node pool of another
//! cluster, or more nodes than the pool may have; usage of an instance
//! overlapping usage already recorded for it; a deleted cluster or pool
//! reported on more than [`GONE_GRACE`] after its last recorded usage.
//!
//! Each record lands on the live invoice of its period's month; once that
//! month is finalized or past its grace period, on the first later month
//! still open, where it is shown as an adjustment.

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use moke_billing::{Decimal, Tier};
use moke_proto::region as pb;
use sqlx::PgConnection;
use uuid::Uuid;

use super::prices;
use super::store::{self, NewRecord};
use crate::app::Result;

/// The instance name of a cluster's control plane in usage records.
pub(crate) const CONTROL_PLANE: &str = "control-plane";

/// The longest period one sample may cover (regions sample every minute).
pub(crate) const MAX_PERIOD: Duration = Duration::hours(1);

/// How long after its last recorded usage a deleted cluster or node pool
/// may still be reported on (its last sample arrives after the deletion).
pub(crate) const GONE_GRACE: Duration = Duration::hours(1);

/// Nodes a pool may have beyond what it reserves while one is replaced (the
/// first surge node; more are reserved as the pool's upgrade policy allows).
const SURGE_NODES: i64 = 1;

/// The longest node name a region may report (a DNS subdomain).
const MAX_NODE_NAME: usize = 253;

/// Records `sample` of `cluster` reported by `region` (already parsed: its
/// period is `[start, end)`); returns how many records were new. Months
/// whose grace period (`grace`) is over take no new usage.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn record_sample(
    conn: &mut PgConnection,
    region: &str,
    sample_id: &str,
    sample: &pb::UsageSample,
    cluster: Uuid,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    grace: Duration,
) -> Result<u64> {
    let now = Utc::now();
    if end <= start || end - start > MAX_PERIOD || end > now + Duration::minutes(10) {
        tracing::warn!(sample = sample_id, %start, %end, "usage sample with an impossible period; dropped");
        return Ok(0);
    }
    let Some(metered) = store::metered(conn, cluster, region).await? else {
        tracing::warn!(sample = sample_id, "usage of a cluster unknown in its region; dropped");
        return Ok(0);
    };
    let started_in_time = metered.created_at.is_none_or(|created| start >= created - Duration::minutes(1));
    let reported_in_time = metered.last_recorded_end.is_none_or(|last| start <= last + GONE_GRACE);
    if !started_in_time || !reported_in_time {
        tracing::warn!(sample = sample_id, %start, "usage outside the cluster's lifetime; dropped");
        return Ok(0);
    }
    if !store::insert_sample(conn, sample_id, &metered, cluster, region, (start, end), sample).await? {
        // Recorded before, with its usage records, in the same transaction as now.
        return Ok(0);
    }

    let catalog = prices();
    let version = catalog.version_at(start).unwrap_or(&catalog.versions()[0]);
    let period_ms = (end - start).num_milliseconds();
    let mut records = Vec::new();
    // The tier is the cluster's spec, not what the region says it runs.
    let replicas = metered.control_plane_replicas.unwrap_or(1);
    let tier = Tier::of_replicas(u32::try_from(replicas).unwrap_or(1));
    if let Some(sku) = version.control_plane(tier) {
        records.push(NewRecord {
            resource_id: cluster,
            instance: CONTROL_PLANE.into(),
            meter: "control_plane",
            resource_kind: "cluster",
            resource_name: metered.cluster_name.clone(),
            sku: sku.id.clone(),
            seconds: Decimal::from(period_ms) / Decimal::from(1000),
        });
    }

    let wanted: Vec<Uuid> = sample
        .nodes
        .iter()
        .filter_map(|node| node.node_pool_id.parse::<crate::ids::NodePoolId>().ok().map(|id| id.uuid()))
        .collect();
    let pools = store::pools(conn, cluster, &wanted, start - GONE_GRACE).await?;
    let mut per_pool = std::collections::HashMap::<Uuid, i64>::new();
    let mut nodes: Vec<&pb::NodeUsage> = sample.nodes.iter().collect();
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    nodes.dedup_by(|a, b| a.name == b.name);
    for node in nodes {
        let name_ok = !node.name.is_empty()
            && node.name.len() <= MAX_NODE_NAME
            && node.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        let pool = node.node_pool_id.parse::<crate::ids::NodePoolId>().ok().map(|id| id.uuid());
        let Some((pool_id, pool)) = pool.and_then(|id| pools.get(&id).map(|pool| (id, pool))).filter(|_| name_ok)
        else {
            tracing::warn!(sample = sample_id, pool = %node.node_pool_id, "usage of a node not in the cluster; dropped");
            continue;
        };
        let counted = per_pool.entry(pool_id).or_default();
        let known = pool.recorded_instances.as_ref().is_none_or(|names| names.contains(&node.name));
        if *counted >= pool.max_nodes + SURGE_NODES || !known {
            tracing::warn!(sample = sample_id, pool = %node.node_pool_id, node = %node.name, "more nodes than the pool may have; dropped");
            continue;
        }
        *counted += 1;
        // The price is the catalog's for the machine type the gateway knows the pool by, or
        // for the one it was moved off when the region reports a node still on that one.
        let still_on_replaced = pool.replaced_machine_type.as_ref().filter(|old| **old == node.machine_type);
        let machine_type = still_on_replaced.or(pool.machine_type.as_ref()).cloned().or_else(|| {
            let recorded = pool.recorded_sku.as_deref()?;
            catalog.versions().iter().find_map(|v| v.sku(recorded).and_then(|sku| sku.machine_type.clone()))
        });
        let Some(sku) = machine_type.as_deref().and_then(|machine_type| version.node(machine_type)) else {
            tracing::error!(sample = sample_id, pool = %node.node_pool_id, "a machine type without a price; usage dropped");
            continue;
        };
        records.push(NewRecord {
            resource_id: pool_id,
            instance: node.name.clone(),
            meter: "node",
            resource_kind: "node_pool",
            resource_name: pool.name.clone(),
            sku: sku.id.clone(),
            seconds: Decimal::from(node.milliseconds.clamp(0, period_ms)) / Decimal::from(1000),
        });
    }
    if sample.nodes.is_empty() && !sample.node_seconds.is_empty() {
        // Regions are upgraded before gateways (ARCHITECTURE.md): a sample
        // without per-node usage comes from a region agent older than that.
        tracing::error!(sample = sample_id, "a usage sample without per-node usage; node time not recorded");
    }
    let records = store::without_overlaps(conn, records, (start, end)).await?;
    if records.is_empty() {
        return Ok(0);
    }
    let invoice = open_invoice(conn, metered.org_id, start, now - grace, &catalog.currency.code).await?;
    store::insert_records(conn, invoice, sample_id, &metered, cluster, region, (start, end), &records).await
}

/// The invoice usage starting at `at` lands on: its month's, unless that
/// month's grace period ended before `grace_start` or it is finalized;
/// then the first later month still open. Share-locked until the
/// transaction ends.
async fn open_invoice(
    conn: &mut PgConnection,
    org: Uuid,
    at: DateTime<Utc>,
    grace_start: DateTime<Utc>,
    currency: &str,
) -> Result<Uuid> {
    let mut month = month_start(at).max(month_start(grace_start));
    loop {
        let next = next_month(month);
        match store::live_for_month(conn, crate::ids::InvoiceId::generate().uuid(), org, month, next, currency).await? {
            Some((id, status)) if status == "draft" => return Ok(id),
            Some(_) => month = next,
            // Voided in between: that month again.
            None => {}
        }
    }
}

/// The first instant of `at`'s month (UTC).
pub(crate) fn month_start(at: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(at.year(), at.month(), 1, 0, 0, 0).single().expect("the first of a month exists")
}

/// The first instant of the month after the one starting at `month`.
pub(crate) fn next_month(month: DateTime<Utc>) -> DateTime<Utc> {
    let (year, month) = if month.month() == 12 { (month.year() + 1, 1) } else { (month.year(), month.month() + 1) };
    Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0).single().expect("the first of a month exists")
}
