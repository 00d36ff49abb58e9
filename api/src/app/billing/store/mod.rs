//! The billing tables: `invoices` (a live draft per organization and month
//! until it is finalized), `invoice_numbers` (the gap-free yearly
//! sequence), `usage_records` (usage per resource instance, meter and
//! sampling period, each rated into one invoice) and `usage_daily` (the
//! records summed per day, kept by a trigger; what drafts are rated from).

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
    pub void_reason: Option<String>,
    /// The void invoice this one replaces.
    pub replaces: Option<Uuid>,
    /// A void invoice: the one issued in its place.
    pub replaced_by: Option<Uuid>,
}

/// `sqlx::query_as!` over `invoices` with `InvoiceRow`'s columns and the
/// rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            InvoiceRow,
            r#"SELECT id, org_id, period_start, period_end, status, number, currency, lines, subtotal, credits,
                    total, finalized_at, voided_at, void_reason, replaces,
                    (SELECT r.id FROM invoices r WHERE r.replaces = invoices.id) AS "replaced_by?"
             FROM invoices "# + $rest
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

/// `org`'s invoice `id`, locked until the transaction ends.
pub(in crate::app) async fn find_locked(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<Option<InvoiceRow>> {
    Ok(select!("WHERE org_id = $1 AND id = $2 FOR UPDATE", org, id).fetch_optional(conn).await?)
}

/// Voids finalized invoice `id` (locked), saying why and who; the trigger
/// keeps it as it is from then on.
pub(in crate::app) async fn void(conn: &mut PgConnection, id: Uuid, reason: &str, voided_by: &str) -> Result<()> {
    sqlx::query!(
        "UPDATE invoices SET status = 'void', voided_at = now(), void_reason = $2, voided_by = $3
         WHERE id = $1 AND status = 'finalized'",
        id,
        reason,
        voided_by
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Opens `new_id` as the draft replacing void invoice `old` for its month,
/// and moves `old`'s usage (records and daily sums) onto it.
pub(in crate::app) async fn open_replacement(conn: &mut PgConnection, old: &InvoiceRow, new_id: Uuid) -> Result<()> {
    sqlx::query!(
        "INSERT INTO invoices (id, org_id, period_start, period_end, status, currency, replaces)
         VALUES ($1, $2, $3, $4, 'draft', $5, $6)",
        new_id,
        old.org_id,
        old.period_start,
        old.period_end,
        old.currency,
        old.id
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!("UPDATE usage_records SET invoice_id = $2 WHERE invoice_id = $1", old.id, new_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query!("UPDATE usage_daily SET invoice_id = $2 WHERE invoice_id = $1", old.id, new_id).execute(conn).await?;
    Ok(())
}

/// Gives `amount` back to credit grant `id` (an invoice that used it was voided).
pub(in crate::app) async fn return_credit(conn: &mut PgConnection, id: Uuid, amount: Decimal) -> Result<()> {
    sqlx::query!("UPDATE credit_grants SET remaining = remaining + $2 WHERE id = $1", id, amount).execute(conn).await?;
    Ok(())
}

/// The oldest draft whose month ended before `ended_before` and that comes
/// after `after` (`(period_end, id)`, the last one this run took), locked
/// for finalizing (skipped while another gateway finalizes it or usage is
/// being added to it). The cursor passes over invoices that failed in one
/// index step each.
pub(in crate::app) async fn next_due(
    conn: &mut PgConnection,
    ended_before: DateTime<Utc>,
    after: Option<(DateTime<Utc>, Uuid)>,
) -> Result<Option<InvoiceRow>> {
    let (after_end, after_id) = after.unzip();
    Ok(select!(
        "WHERE status = 'draft' AND period_end <= $1
           AND ($2::timestamptz IS NULL OR (period_end, id) > ($2, $3))
         ORDER BY period_end, id LIMIT 1 FOR UPDATE SKIP LOCKED",
        ended_before,
        after_end,
        after_id
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
    /// Desired control-plane replicas: the tier charged.
    pub control_plane_replicas: Option<i64>,
    /// A live cluster: when it was created.
    pub created_at: Option<DateTime<Utc>>,
    /// A deleted cluster: when its last recorded usage ended.
    pub last_recorded_end: Option<DateTime<Utc>>,
}

/// Who is charged for `cluster` of `region`: from the cluster itself or,
/// once it is gone, from the usage last recorded for it (a deleted
/// cluster's last minutes are still charged).
pub(in crate::app) async fn metered(conn: &mut PgConnection, cluster: Uuid, region: &str) -> Result<Option<Metered>> {
    let live = sqlx::query_as!(
        Metered,
        r#"SELECT c.org_id, c.project_id, p.name AS project_name, c.name AS cluster_name,
                  (c.spec->'control_plane'->>'replicas')::bigint AS control_plane_replicas,
                  c.created_at AS "created_at?", NULL::timestamptz AS last_recorded_end
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
                  CASE sku WHEN 'control-plane.ha.hour' THEN 3::bigint ELSE 1::bigint END AS control_plane_replicas,
                  NULL::timestamptz AS created_at, period_end AS "last_recorded_end?"
           FROM usage_records
           WHERE resource_id = $1 AND instance = 'control-plane' AND meter = 'control_plane' AND region = $2
           ORDER BY period_start DESC LIMIT 1"#,
        cluster,
        region
    )
    .fetch_optional(conn)
    .await?)
}

/// Stores the raw sample `id` unless it was stored before; true when it is
/// new (its usage records are then still to be written, in this
/// transaction).
pub(in crate::app) async fn insert_sample(
    conn: &mut PgConnection,
    id: &str,
    metered: &Metered,
    cluster: Uuid,
    region: &str,
    period: (DateTime<Utc>, DateTime<Utc>),
    sample: &moke_proto::region::UsageSample,
) -> Result<bool> {
    let inserted = sqlx::query!(
        "INSERT INTO usage_samples (id, org_id, cluster_id, region, period_start, period_end, cluster_seconds,
             node_seconds)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (id) DO NOTHING",
        id,
        metered.org_id,
        cluster,
        region,
        period.0,
        period.1,
        sample.cluster_seconds,
        serde_json::json!(sample.node_seconds),
    )
    .execute(conn)
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

/// A node pool as metering charges it.
pub(in crate::app) struct MeteredPool {
    pub name: String,
    /// The gateway's own record of a live pool's machine type.
    pub machine_type: Option<String>,
    /// A live pool: the machine type it was last moved off (its old nodes
    /// may still run it while they are replaced).
    pub replaced_machine_type: Option<String>,
    /// A deleted pool: the SKU its usage was last recorded under.
    pub recorded_sku: Option<String>,
    /// The most nodes it may have: its size (or autoscaling maximum) while
    /// it lives; the nodes last recorded once it is gone.
    pub max_nodes: i64,
    /// A deleted pool: the only node names still accepted.
    pub recorded_instances: Option<Vec<String>>,
}

/// The node pools of `cluster` among `wanted`: live ones as they are now,
/// deleted ones as their usage was recorded since `since`. A pool of
/// another cluster is not among them.
pub(in crate::app) async fn pools(
    conn: &mut PgConnection,
    cluster: Uuid,
    wanted: &[Uuid],
    since: DateTime<Utc>,
) -> Result<HashMap<Uuid, MeteredPool>> {
    let mut pools: HashMap<Uuid, MeteredPool> = sqlx::query!(
        "SELECT id, name, spec->>'machine_type' AS machine_type, replaced_machine_type, reserved_nodes
         FROM node_pools WHERE id = ANY($1) AND cluster_id = $2",
        wanted,
        cluster
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|row| {
        let pool = MeteredPool {
            name: row.name,
            machine_type: row.machine_type,
            replaced_machine_type: row.replaced_machine_type,
            recorded_sku: None,
            max_nodes: row.reserved_nodes,
            recorded_instances: None,
        };
        (row.id, pool)
    })
    .collect();
    let gone: Vec<Uuid> = wanted.iter().filter(|id| !pools.contains_key(id)).copied().collect();
    if !gone.is_empty() {
        let recorded = sqlx::query!(
            r#"SELECT resource_id, max(resource_name) AS "name!", max(sku) AS "sku!",
                      array_agg(DISTINCT instance) AS "instances!"
               FROM usage_records
               WHERE resource_id = ANY($1) AND cluster_id = $2 AND meter = 'node' AND period_end >= $3
               GROUP BY resource_id"#,
            &gone,
            cluster,
            since
        )
        .fetch_all(conn)
        .await?;
        pools.extend(recorded.into_iter().map(|row| {
            let pool = MeteredPool {
                name: row.name,
                machine_type: None,
                replaced_machine_type: None,
                recorded_sku: Some(row.sku),
                max_nodes: row.instances.len() as i64,
                recorded_instances: Some(row.instances),
            };
            (row.resource_id, pool)
        }));
    }
    Ok(pools)
}

/// `records` without those overlapping usage already recorded for the
/// same instance and meter (a region that reports a period twice, however
/// it shifts it, is charged once). Records never overlap, so only the
/// latest one starting before `period`'s end can. One query for them all.
pub(in crate::app) async fn without_overlaps(
    conn: &mut PgConnection,
    records: Vec<NewRecord>,
    period: (DateTime<Utc>, DateTime<Utc>),
) -> Result<Vec<NewRecord>> {
    let resources: Vec<Uuid> = records.iter().map(|r| r.resource_id).collect();
    let instances: Vec<String> = records.iter().map(|r| r.instance.clone()).collect();
    let meters: Vec<String> = records.iter().map(|r| r.meter.to_string()).collect();
    let latest_ends = sqlx::query!(
        r#"SELECT r.ordinality AS "index!",
                  (SELECT u.period_end FROM usage_records u
                   WHERE u.resource_id = r.resource_id AND u.instance = r.instance AND u.meter = r.meter
                     AND u.period_start < $4
                   ORDER BY u.period_start DESC LIMIT 1) AS latest_end
           FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS r(resource_id, instance, meter)"#,
        &resources,
        &instances,
        &meters,
        period.1
    )
    .fetch_all(&mut *conn)
    .await?;
    let overlapping: std::collections::HashSet<usize> = latest_ends
        .into_iter()
        .filter(|row| row.latest_end.is_some_and(|end| end > period.0))
        .filter_map(|row| usize::try_from(row.index - 1).ok())
        .collect();
    let mut kept = Vec::with_capacity(records.len());
    for (index, record) in records.into_iter().enumerate() {
        if overlapping.contains(&index) {
            tracing::warn!(resource = %record.resource_id, instance = %record.instance, "usage overlapping usage recorded before; dropped");
        } else {
            kept.push(record);
        }
    }
    Ok(kept)
}

/// Writes `records` of one sample into `invoice`, in one statement; a
/// record already written (the same resource instance, meter and period)
/// is left as it is, so a sample sent twice counts once. The database adds
/// the new ones to their days in `usage_daily` (a trigger). Returns how
/// many were new.
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
    let column = |f: fn(&NewRecord) -> String| records.iter().map(f).collect::<Vec<String>>();
    let resources: Vec<Uuid> = records.iter().map(|r| r.resource_id).collect();
    let seconds: Vec<Decimal> = records.iter().map(|r| r.seconds).collect();
    Ok(sqlx::query!(
        "INSERT INTO usage_records (resource_id, instance, meter, period_start, period_end, org_id, project_id,
             project_name, cluster_id, region, resource_kind, resource_name, sku, seconds, sample_id, invoice_id)
         SELECT r.resource_id, r.instance, r.meter, $8, $9, $10, $11, $12, $13, $14, r.resource_kind,
                r.resource_name, r.sku, r.seconds, $15, $16
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[])
              AS r(resource_id, instance, meter, resource_kind, resource_name, sku, seconds)
         ON CONFLICT (resource_id, instance, meter, period_start) DO NOTHING",
        &resources,
        &column(|r| r.instance.clone()),
        &column(|r| r.meter.to_string()),
        &column(|r| r.resource_kind.to_string()),
        &column(|r| r.resource_name.clone()),
        &column(|r| r.sku.clone()),
        &seconds,
        period.0,
        period.1,
        metered.org_id,
        metered.project_id,
        metered.project_name,
        cluster,
        region,
        sample_id,
        invoice
    )
    .execute(&mut *conn)
    .await?
    .rows_affected())
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

/// The usage rated into `invoice`, summed per resource instance, SKU and
/// day (UTC): price versions take effect at midnight, so a day has one
/// price. Read from `usage_daily`, which the database keeps as records are
/// written, so a month of minute samples is at most 31 rows an instance.
pub(in crate::app) async fn records_of(conn: &mut PgConnection, invoice: Uuid) -> Result<Vec<RecordRow>> {
    Ok(sqlx::query_as!(
        RecordRow,
        "SELECT resource_id, resource_kind, resource_name, project_name, instance, sku, seconds, period_start,
                period_end
         FROM usage_daily WHERE invoice_id = $1",
        invoice
    )
    .fetch_all(conn)
    .await?)
}

/// A credit grant as stored.
pub(in crate::app) struct GrantRow {
    pub id: Uuid,
    pub kind: String,
    pub description: String,
    pub amount: Decimal,
    pub remaining: Decimal,
    pub priority: i32,
    pub granted_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// `sqlx::query_as!` over `credit_grants` with `GrantRow`'s columns and the
/// rest of the statement given.
macro_rules! select_grant {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            GrantRow,
            "SELECT id, kind, description, amount, remaining, priority, granted_at, expires_at
             FROM credit_grants " + $rest
            $(, $arg)*
        )
    };
}

/// Every credit grant of `org`, oldest first; locked for update when
/// `lock` (finalizing takes from them).
pub(in crate::app) async fn grants(conn: &mut PgConnection, org: Uuid, lock: bool) -> Result<Vec<GrantRow>> {
    Ok(if lock {
        select_grant!("WHERE org_id = $1 ORDER BY id FOR UPDATE", org).fetch_all(conn).await?
    } else {
        select_grant!("WHERE org_id = $1 ORDER BY id", org).fetch_all(conn).await?
    })
}

/// A page of `org`'s credit grants, newest first.
pub(in crate::app) async fn grant_page(
    conn: &mut PgConnection,
    org: Uuid,
    page: &PageRequest,
) -> Result<Vec<GrantRow>> {
    Ok(select_grant!(
        "WHERE org_id = $1 AND ($2::uuid IS NULL OR id < $2) ORDER BY id DESC LIMIT $3",
        org,
        page.after,
        page.fetch_limit()
    )
    .fetch_all(conn)
    .await?)
}

/// Takes `amount` off grant `id` (locked by [`grants`]); the table refuses
/// to go below zero.
pub(in crate::app) async fn take_credit(conn: &mut PgConnection, id: Uuid, amount: Decimal) -> Result<()> {
    sqlx::query!("UPDATE credit_grants SET remaining = remaining - $2 WHERE id = $1", id, amount).execute(conn).await?;
    Ok(())
}

/// A new grant, all of it remaining.
pub(in crate::app) struct NewGrant<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub kind: &'a str,
    pub description: &'a str,
    pub amount: Decimal,
    pub priority: i32,
    pub expires_at: Option<DateTime<Utc>>,
    pub granted_by: &'a str,
}

pub(in crate::app) async fn insert_grant(conn: &mut PgConnection, grant: NewGrant<'_>) -> Result<GrantRow> {
    Ok(sqlx::query_as!(
        GrantRow,
        "INSERT INTO credit_grants (id, org_id, kind, description, amount, remaining, priority, expires_at, granted_by)
         VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8)
         RETURNING id, kind, description, amount, remaining, priority, granted_at, expires_at",
        grant.id,
        grant.org,
        grant.kind,
        grant.description,
        grant.amount,
        grant.priority,
        grant.expires_at,
        grant.granted_by
    )
    .fetch_one(conn)
    .await?)
}

/// `org`'s live invoice for the month starting `month`, if it has one.
pub(in crate::app) async fn of_month(
    conn: &mut PgConnection,
    org: Uuid,
    month: DateTime<Utc>,
) -> Result<Option<InvoiceRow>> {
    Ok(select!("WHERE org_id = $1 AND period_start = $2 AND status <> 'void'", org, month).fetch_optional(conn).await?)
}

/// True when organization `org` exists (an operator names it by id).
pub(in crate::app) async fn org_exists(conn: &mut PgConnection, org: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!(r#"SELECT EXISTS (SELECT 1 FROM organizations WHERE id = $1) AS "exists!""#, org)
        .fetch_one(conn)
        .await?)
}

/// The database's clock: one clock for every gateway's billing deadlines.
pub(in crate::app) async fn now(conn: &mut PgConnection) -> Result<DateTime<Utc>> {
    Ok(sqlx::query_scalar!(r#"SELECT now() AS "now!""#).fetch_one(conn).await?)
}

/// A budget as stored.
pub(in crate::app) struct BudgetRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub amount: Decimal,
    pub thresholds: Vec<i32>,
    pub basis: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `budgets` with `BudgetRow`'s columns and the rest
/// of the statement given.
macro_rules! select_budget {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            BudgetRow,
            "SELECT id, org_id, name, amount, thresholds, basis, created_at, updated_at FROM budgets " + $rest
            $(, $arg)*
        )
    };
}

/// `org`'s budget `id`; another organization's is `None`.
pub(in crate::app) async fn budget(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<Option<BudgetRow>> {
    Ok(select_budget!("WHERE org_id = $1 AND id = $2", org, id).fetch_optional(conn).await?)
}

/// [`budget`], locked until the transaction ends (a change merges into it).
pub(in crate::app) async fn budget_locked(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<Option<BudgetRow>> {
    Ok(select_budget!("WHERE org_id = $1 AND id = $2 FOR UPDATE", org, id).fetch_optional(conn).await?)
}

/// A page of `org`'s budgets in id (creation) order.
pub(in crate::app) async fn budgets(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<BudgetRow>> {
    Ok(select_budget!(
        "WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        org,
        page.after,
        page.fetch_limit()
    )
    .fetch_all(conn)
    .await?)
}

/// Every organization's budgets after `after`, in id order (the alert job's pages).
pub(in crate::app) async fn all_budgets(
    conn: &mut PgConnection,
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<BudgetRow>> {
    Ok(select_budget!("WHERE ($1::uuid IS NULL OR id > $1) ORDER BY id LIMIT $2", after, limit).fetch_all(conn).await?)
}

/// How many budgets `org` has, with the organization's quota lock held
/// until the transaction ends (so two creates cannot both pass the limit).
pub(in crate::app) async fn count_budgets_locked(conn: &mut PgConnection, org: Uuid) -> Result<i64> {
    crate::app::kernel::quotas::lock_org(conn, org).await?;
    Ok(sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM budgets WHERE org_id = $1"#, org).fetch_one(conn).await?)
}

/// A budget's fields, for insert and update.
pub(in crate::app) struct BudgetFields<'a> {
    pub name: &'a str,
    pub amount: Decimal,
    pub thresholds: &'a [i32],
    pub basis: &'a str,
}

/// A new budget; `None` when `org` has one of that name.
pub(in crate::app) async fn insert_budget(
    conn: &mut PgConnection,
    id: Uuid,
    org: Uuid,
    fields: BudgetFields<'_>,
) -> Result<Option<BudgetRow>> {
    Ok(sqlx::query_as!(
        BudgetRow,
        "INSERT INTO budgets (id, org_id, name, amount, thresholds, basis) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (org_id, name) DO NOTHING
         RETURNING id, org_id, name, amount, thresholds, basis, created_at, updated_at",
        id,
        org,
        fields.name,
        fields.amount,
        fields.thresholds,
        fields.basis
    )
    .fetch_optional(conn)
    .await?)
}

/// Replaces budget `id`'s fields (the caller merged the change into them).
pub(in crate::app) async fn update_budget(
    conn: &mut PgConnection,
    org: Uuid,
    id: Uuid,
    fields: BudgetFields<'_>,
) -> Result<Option<BudgetRow>> {
    sqlx::query_as!(
        BudgetRow,
        "UPDATE budgets SET name = $3, amount = $4, thresholds = $5, basis = $6, version = version + 1,
             updated_at = now()
         WHERE org_id = $1 AND id = $2
         RETURNING id, org_id, name, amount, thresholds, basis, created_at, updated_at",
        org,
        id,
        fields.name,
        fields.amount,
        fields.thresholds,
        fields.basis
    )
    .fetch_optional(conn)
    .await
    .map_err(crate::app::error::or_unique(|| {
        crate::app::Error::conflict("name_taken", "another budget of the organization has that name")
    }))
}

/// Removes budget `id` of `org` (its alerts go with it); false when there is none.
pub(in crate::app) async fn delete_budget(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<bool> {
    Ok(sqlx::query!("DELETE FROM budgets WHERE org_id = $1 AND id = $2", org, id).execute(conn).await?.rows_affected()
        == 1)
}

/// An alert that fired.
pub(in crate::app) struct AlertRow {
    pub budget_id: Uuid,
    pub threshold: i32,
    pub value: Decimal,
    pub fired_at: DateTime<Utc>,
}

/// The alerts of `budgets` in the month starting `period`.
pub(in crate::app) async fn alerts(
    conn: &mut PgConnection,
    budgets: &[Uuid],
    period: DateTime<Utc>,
) -> Result<Vec<AlertRow>> {
    Ok(sqlx::query_as!(
        AlertRow,
        "SELECT budget_id, threshold, value, fired_at FROM budget_alerts
         WHERE budget_id = ANY($1) AND period_start = $2 ORDER BY threshold",
        budgets,
        period
    )
    .fetch_all(conn)
    .await?)
}

/// Records that `budget` reached `threshold` in the month `period`; false
/// when it had already (each fires once per month and threshold).
pub(in crate::app) async fn fire_alert(
    conn: &mut PgConnection,
    budget: Uuid,
    period: DateTime<Utc>,
    threshold: i32,
    value: Decimal,
) -> Result<bool> {
    Ok(sqlx::query!(
        "INSERT INTO budget_alerts (budget_id, period_start, threshold, value) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING",
        budget,
        period,
        threshold,
        value
    )
    .execute(conn)
    .await?
    .rows_affected()
        == 1)
}

/// The name organization `org` goes by (its display name).
pub(in crate::app) async fn org_name(conn: &mut PgConnection, org: Uuid) -> Result<String> {
    Ok(sqlx::query_scalar!("SELECT display_name FROM organizations WHERE id = $1", org)
        .fetch_optional(conn)
        .await?
        .unwrap_or_default())
}

/// `org`'s chosen plan (`None`: the default plan) and when it last changed.
pub(in crate::app) async fn org_plan(
    conn: &mut PgConnection,
    org: Uuid,
) -> Result<(Option<String>, Option<DateTime<Utc>>)> {
    let row = sqlx::query!("SELECT plan, plan_changed_at FROM organizations WHERE id = $1", org)
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| crate::app::Error::not_found("organization", crate::ids::OrgId::from_uuid(org).to_string()))?;
    Ok((row.plan, row.plan_changed_at))
}

/// Puts `org` on `plan`; returns when.
pub(in crate::app) async fn set_org_plan(conn: &mut PgConnection, org: Uuid, plan: &str) -> Result<DateTime<Utc>> {
    Ok(sqlx::query_scalar!(
        r#"UPDATE organizations SET plan = $2, plan_changed_at = now() WHERE id = $1
           RETURNING plan_changed_at AS "changed_at!""#,
        org,
        plan
    )
    .fetch_one(conn)
    .await?)
}

/// One day of usage of one resource at one price.
pub(in crate::app) struct UsageDayRow {
    pub day: chrono::NaiveDate,
    pub project_name: String,
    pub resource_id: Uuid,
    pub resource_kind: String,
    pub resource_name: String,
    pub sku: String,
    pub seconds: Decimal,
}

/// `org`'s usage on the UTC days `[start, end)`, summed per day, project,
/// resource and SKU whichever invoice it was billed on; by day, then
/// project, resource name and SKU; at most `limit` rows.
pub(in crate::app) async fn usage_by_day(
    conn: &mut PgConnection,
    org: Uuid,
    start: chrono::NaiveDate,
    end: chrono::NaiveDate,
    limit: i64,
) -> Result<Vec<UsageDayRow>> {
    Ok(sqlx::query_as!(
        UsageDayRow,
        r#"SELECT d.day, d.project_name, d.resource_id, d.resource_kind, d.resource_name, d.sku,
                  sum(d.seconds) AS "seconds!"
           FROM usage_daily d JOIN invoices i ON i.id = d.invoice_id
           WHERE i.org_id = $1 AND d.day >= $2 AND d.day < $3
             -- Usage is billed in its month or a later one: older invoices hold none of these days.
             AND i.period_end > $2::date::timestamp AT TIME ZONE 'UTC'
           GROUP BY d.day, d.project_name, d.resource_id, d.resource_kind, d.resource_name, d.sku
           ORDER BY d.day, d.project_name, d.resource_name, d.sku
           LIMIT $4"#,
        org,
        start,
        end,
        limit
    )
    .fetch_all(conn)
    .await?)
}
