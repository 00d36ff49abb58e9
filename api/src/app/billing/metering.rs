//! Metering: a region's usage sample becomes usage records, one per
//! resource instance (the control plane, each node), meter and sampling
//! period, in the transaction that stores the sample. A repeated sample
//! writes nothing new (the records' key), and nothing is deduplicated
//! before it is written, so a failed write loses nothing: the region sends
//! the sample again.
//!
//! Each record lands on the live invoice of its period's month; once that
//! month is finalized, on the first later month still open, where it is
//! shown as an adjustment.

use chrono::{DateTime, Datelike, TimeZone, Utc};
use moke_billing::{Decimal, Tier};
use moke_proto::region as pb;
use sqlx::PgConnection;
use uuid::Uuid;

use super::prices;
use super::store::{self, NewRecord};
use crate::app::Result;

/// The instance name of a cluster's control plane in usage records.
pub(crate) const CONTROL_PLANE: &str = "control-plane";

/// Records `sample` of `cluster` (already parsed: its period is
/// `[start, end)`); returns how many records were new. A sample of a
/// cluster the gateway never knew, or naming a node pool of another
/// cluster, is dropped with a warning: regions report, the gateway decides
/// who pays and at which price.
pub(crate) async fn record_sample(
    conn: &mut PgConnection,
    region: &str,
    sample_id: &str,
    sample: &pb::UsageSample,
    cluster: Uuid,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<u64> {
    // A period that runs backwards or ends in the future is no usage a
    // region can have measured; an invoice must never be unratable.
    if end < start || end > Utc::now() + chrono::Duration::minutes(10) {
        tracing::warn!(sample = sample_id, %start, %end, "usage sample with an impossible period; dropped");
        return Ok(0);
    }
    let Some(metered) = store::metered(conn, cluster, region).await? else {
        tracing::warn!(sample = sample_id, "usage of a cluster unknown in its region; dropped");
        return Ok(0);
    };
    // No instance ran longer than the period.
    let period_ms = (end - start).num_milliseconds();
    let catalog = prices();
    // SKU ids are stable across versions; the version prices them when the invoice is rated.
    let version = catalog.version_at(start).unwrap_or(&catalog.versions()[0]);
    let period = Decimal::from(period_ms) / Decimal::from(1000);
    let exact = |seconds: f64| {
        Decimal::try_from(seconds).map(|s| s.round_dp(3).clamp(Decimal::ZERO, period)).unwrap_or(Decimal::ZERO)
    };

    let mut records = Vec::new();
    let replicas = match sample.control_plane_replicas {
        0 => metered.control_plane_replicas.unwrap_or(1),
        reported => i64::from(reported),
    };
    let tier = Tier::of_replicas(u32::try_from(replicas).unwrap_or(1));
    if let Some(sku) = version.control_plane(tier) {
        records.push(NewRecord {
            resource_id: cluster,
            instance: CONTROL_PLANE.into(),
            meter: "control_plane",
            resource_kind: "cluster",
            resource_name: metered.cluster_name.clone(),
            sku: sku.id.clone(),
            seconds: exact(sample.cluster_seconds),
        });
    }

    let wanted: Vec<Uuid> = sample
        .nodes
        .iter()
        .filter_map(|node| node.node_pool_id.parse::<crate::ids::NodePoolId>().ok().map(|id| id.uuid()))
        .collect();
    let pools = store::pools(conn, cluster, &wanted).await?;
    for node in &sample.nodes {
        let pool = node.node_pool_id.parse::<crate::ids::NodePoolId>().ok().map(|id| id.uuid());
        let Some((pool_id, pool)) = pool.and_then(|id| pools.get(&id).map(|pool| (id, pool))) else {
            tracing::warn!(sample = sample_id, pool = %node.node_pool_id, "usage of a node pool not in the cluster; dropped");
            continue;
        };
        let sku = match (&pool.machine_type, &pool.recorded_sku) {
            (Some(machine_type), _) => version.node(machine_type).map(|sku| sku.id.clone()),
            (None, recorded) => recorded.clone(),
        };
        let Some(sku) = sku else {
            tracing::error!(sample = sample_id, pool = %node.node_pool_id, "a machine type without a price; usage dropped");
            continue;
        };
        records.push(NewRecord {
            resource_id: pool_id,
            instance: node.name.clone(),
            meter: "node",
            resource_kind: "node_pool",
            resource_name: pool.name.clone(),
            sku,
            seconds: Decimal::from(node.milliseconds.clamp(0, period_ms)) / Decimal::from(1000),
        });
    }
    // A region of the previous release reports node time by machine type only.
    if sample.nodes.is_empty() {
        for (machine_type, seconds) in &sample.node_seconds {
            if let Some(sku) = version.node(machine_type) {
                records.push(NewRecord {
                    resource_id: cluster,
                    instance: format!("{machine_type} nodes"),
                    meter: "node",
                    resource_kind: "cluster",
                    resource_name: metered.cluster_name.clone(),
                    sku: sku.id.clone(),
                    seconds: exact(*seconds),
                });
            }
        }
    }
    if records.is_empty() {
        return Ok(0);
    }

    let invoice = open_invoice(conn, metered.org_id, start, &catalog.currency.code).await?;
    store::insert_records(conn, invoice, sample_id, &metered, cluster, region, (start, end), &records).await
}

/// The invoice usage starting at `at` lands on: its month's, or the first
/// later month's still open when that one is finalized. Share-locked
/// until the transaction ends.
async fn open_invoice(conn: &mut PgConnection, org: Uuid, at: DateTime<Utc>, currency: &str) -> Result<Uuid> {
    let mut month = month_start(at);
    // A month is finalized only after it ended, so a later open one exists;
    // the bound only guards against a voided invoice racing every attempt.
    for _ in 0..36 {
        let next = next_month(month);
        match store::live_for_month(conn, crate::ids::InvoiceId::generate().uuid(), org, month, next, currency).await? {
            Some((id, status)) if status == "draft" => return Ok(id),
            Some(_) => month = next,
            None => {}
        }
    }
    Err(crate::app::Error::Internal(anyhow::anyhow!("no open invoice for usage of {org} at {at}")))
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
