//! The billing tables: `invoices` (a live draft per organization and month
//! until it is finalized), `invoice_numbers` (the gap-free yearly
//! sequence) and `usage_records` (usage per resource instance, meter and
//! sampling period, each rated into one invoice).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{PageRequest, Result};

/// An invoice as stored: a draft has no number, lines or totals (it is
/// rated from its usage records when read).
pub(in crate::app) struct InvoiceRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    pub status: String,
    pub number: Option<String>,
    pub currency: String,
    pub lines: Option<serde_json::Value>,
    pub subtotal: Option<Decimal>,
    pub credits: Option<Decimal>,
    pub total: Option<Decimal>,
    pub finalized_at: Option<DateTime<Utc>>,
    pub voided_at: Option<DateTime<Utc>>,
}

/// `sqlx::query_as!` over `invoices` with `InvoiceRow`'s columns and the
/// rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            InvoiceRow,
            "SELECT id, org_id, period_start, period_end, status, number, currency, lines, subtotal, credits,
                    total, finalized_at, voided_at
             FROM invoices " + $rest
            $(, $arg)*
        )
    };
}

/// `org`'s invoice `id`; another organization's is `None`.
pub(in crate::app) async fn find(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<Option<InvoiceRow>> {
    Ok(select!("WHERE org_id = $1 AND id = $2", org, id).fetch_optional(conn).await?)
}

/// A page of `org`'s invoices, newest first (by id: the order they were opened in).
pub(in crate::app) async fn list(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<InvoiceRow>> {
    Ok(select!(
        "WHERE org_id = $1 AND ($2::uuid IS NULL OR id < $2) ORDER BY id DESC LIMIT $3",
        org,
        page.after,
        page.fetch_limit()
    )
    .fetch_all(conn)
    .await?)
}

/// The live invoice (draft or finalized) of `org` for the month
/// `[start, end)`, opened as a draft with id `new_id` if there is none.
/// It stays share-locked until the transaction ends, so it cannot be
/// finalized under usage being added to it. `None` only when it was voided
/// in between (try again).
pub(in crate::app) async fn live_for_month(
    conn: &mut PgConnection,
    new_id: Uuid,
    org: Uuid,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    currency: &str,
) -> Result<Option<(Uuid, String)>> {
    sqlx::query!(
        "INSERT INTO invoices (id, org_id, period_start, period_end, status, currency)
         VALUES ($1, $2, $3, $4, 'draft', $5)
         ON CONFLICT (org_id, period_start) WHERE status <> 'void' DO NOTHING",
        new_id,
        org,
        start,
        end,
        currency
    )
    .execute(&mut *conn)
    .await?;
    Ok(sqlx::query!(
        "SELECT id, status FROM invoices WHERE org_id = $1 AND period_start = $2 AND status <> 'void' FOR SHARE",
        org,
        start
    )
    .fetch_optional(conn)
    .await?
    .map(|row| (row.id, row.status)))
}

/// The oldest draft whose month ended before `ended_before`, locked for
/// finalizing (skipped while another gateway finalizes it or usage is being
/// added to it).
pub(in crate::app) async fn next_due(
    conn: &mut PgConnection,
    ended_before: DateTime<Utc>,
) -> Result<Option<InvoiceRow>> {
    Ok(select!(
        "WHERE status = 'draft' AND period_end <= $1 ORDER BY period_end, id LIMIT 1 FOR UPDATE SKIP LOCKED",
        ended_before
    )
    .fetch_optional(conn)
    .await?)
}

/// The next invoice number of `year`: the counter row stays locked until
/// the finalizing transaction ends, and a rollback gives the number back,
/// so numbers have no gaps.
pub(in crate::app) async fn next_number(conn: &mut PgConnection, year: i32) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        "INSERT INTO invoice_numbers (year, last_number) VALUES ($1, 1)
         ON CONFLICT (year) DO UPDATE SET last_number = invoice_numbers.last_number + 1
         RETURNING last_number",
        year
    )
    .fetch_one(conn)
    .await?)
}

/// What a finalized invoice keeps.
pub(in crate::app) struct Finalized<'a> {
    pub number: &'a str,
    pub lines: serde_json::Value,
    pub subtotal: Decimal,
    pub credits: Decimal,
    pub total: Decimal,
    pub at: DateTime<Utc>,
}

/// Finalizes draft `id` (locked by [`next_due`]); the table's trigger keeps
/// it as it is from then on.
pub(in crate::app) async fn finalize(conn: &mut PgConnection, id: Uuid, invoice: Finalized<'_>) -> Result<()> {
    sqlx::query!(
        "UPDATE invoices SET status = 'finalized', number = $2, lines = $3, subtotal = $4, credits = $5, total = $6,
             finalized_at = $7
         WHERE id = $1 AND status = 'draft'",
        id,
        invoice.number,
        invoice.lines,
        invoice.subtotal,
        invoice.credits,
        invoice.total,
        invoice.at
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// One usage record to write.
pub(in crate::app) struct NewRecord {
    pub resource_id: Uuid,
    pub instance: String,
    pub meter: &'static str,
    pub resource_kind: &'static str,
    pub resource_name: String,
    pub sku: String,
    pub seconds: Decimal,
}

/// Where a cluster's usage is charged, and the names it is shown with.
pub(in crate::app) struct Metered {
    pub org_id: Uuid,
    pub project_id: Uuid,
    pub project_name: String,
    pub cluster_name: String,
    /// Desired control-plane replicas (for samples that do not say).
    pub control_plane_replicas: Option<i64>,
}

/// Who is charged for `cluster`: from the cluster itself or, once it is
/// gone, from the usage recorded for it before (a deleted cluster's last
/// minutes are still charged).
pub(in crate::app) async fn metered(conn: &mut PgConnection, cluster: Uuid, region: &str) -> Result<Option<Metered>> {
    let live = sqlx::query_as!(
        Metered,
        r#"SELECT c.org_id, c.project_id, p.name AS project_name, c.name AS cluster_name,
                  (c.spec->'control_plane'->>'replicas')::bigint AS control_plane_replicas
           FROM clusters c JOIN projects p ON p.id = c.project_id WHERE c.id = $1 AND c.region = $2"#,
        cluster,
        region
    )
    .fetch_optional(&mut *conn)
    .await?;
    if live.is_some() {
        return Ok(live);
    }
    Ok(sqlx::query_as!(
        Metered,
        r#"SELECT org_id, project_id, project_name, resource_name AS cluster_name,
                  NULL::bigint AS control_plane_replicas
           FROM usage_records
           WHERE resource_id = $1 AND instance = 'control-plane' AND meter = 'control_plane' AND region = $2
           ORDER BY period_start DESC LIMIT 1"#,
        cluster,
        region
    )
    .fetch_optional(conn)
    .await?)
}

/// A node pool as metering charges it.
pub(in crate::app) struct MeteredPool {
    pub name: String,
    /// The gateway's own record of its machine type (a live pool), or the
    /// SKU its usage was last recorded under (a deleted one).
    pub machine_type: Option<String>,
    pub recorded_sku: Option<String>,
}

/// The node pools of `cluster` among `wanted`: live ones as they are now,
/// deleted ones as their usage was last recorded. A pool of another
/// cluster is not among them.
pub(in crate::app) async fn pools(
    conn: &mut PgConnection,
    cluster: Uuid,
    wanted: &[Uuid],
) -> Result<HashMap<Uuid, MeteredPool>> {
    let mut pools: HashMap<Uuid, MeteredPool> = sqlx::query!(
        "SELECT id, name, spec->>'machine_type' AS machine_type FROM node_pools WHERE id = ANY($1) AND cluster_id = $2",
        wanted,
        cluster
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|row| (row.id, MeteredPool { name: row.name, machine_type: row.machine_type, recorded_sku: None }))
    .collect();
    let gone: Vec<Uuid> = wanted.iter().filter(|id| !pools.contains_key(id)).copied().collect();
    if !gone.is_empty() {
        let recorded = sqlx::query!(
            "SELECT DISTINCT ON (resource_id) resource_id, resource_name, sku FROM usage_records
             WHERE resource_id = ANY($1) AND cluster_id = $2 AND meter = 'node'
             ORDER BY resource_id, period_start DESC",
            &gone,
            cluster
        )
        .fetch_all(conn)
        .await?;
        pools.extend(recorded.into_iter().map(|row| {
            (row.resource_id, MeteredPool { name: row.resource_name, machine_type: None, recorded_sku: Some(row.sku) })
        }));
    }
    Ok(pools)
}

/// Writes `records` of one sample into `invoice`; a record already written
/// (the same resource instance, meter and period) is left as it is, so a
/// sample sent twice counts once. Returns how many were new.
#[allow(clippy::too_many_arguments)]
pub(in crate::app) async fn insert_records(
    conn: &mut PgConnection,
    invoice: Uuid,
    sample_id: &str,
    metered: &Metered,
    cluster: Uuid,
    region: &str,
    period: (DateTime<Utc>, DateTime<Utc>),
    records: &[NewRecord],
) -> Result<u64> {
    let mut written = 0;
    for record in records {
        written += sqlx::query!(
            "INSERT INTO usage_records (resource_id, instance, meter, period_start, period_end, org_id, project_id,
                 project_name, cluster_id, region, resource_kind, resource_name, sku, seconds, sample_id, invoice_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
             ON CONFLICT (resource_id, instance, meter, period_start) DO NOTHING",
            record.resource_id,
            record.instance,
            record.meter,
            period.0,
            period.1,
            metered.org_id,
            metered.project_id,
            metered.project_name,
            cluster,
            region,
            record.resource_kind,
            record.resource_name,
            record.sku,
            record.seconds,
            sample_id,
            invoice
        )
        .execute(&mut *conn)
        .await?
        .rows_affected();
    }
    Ok(written)
}

/// A usage record as rating reads it.
pub(in crate::app) struct RecordRow {
    pub resource_id: Uuid,
    pub resource_kind: String,
    pub resource_name: String,
    pub project_name: String,
    pub instance: String,
    pub sku: String,
    pub seconds: Decimal,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
}

/// Every usage record rated into `invoice`.
pub(in crate::app) async fn records_of(conn: &mut PgConnection, invoice: Uuid) -> Result<Vec<RecordRow>> {
    Ok(sqlx::query_as!(
        RecordRow,
        "SELECT resource_id, resource_kind, resource_name, project_name, instance, sku, seconds, period_start,
                period_end
         FROM usage_records WHERE invoice_id = $1",
        invoice
    )
    .fetch_all(conn)
    .await?)
}
