//! The `deployments` table, and the rollout Operations it watches.

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::DeploymentSpecStored;
use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::kernel::jsonb;
use crate::app::region::observed::ObservedStored;
use crate::app::{Error, PageRequest, Result};
use crate::model::{DeploymentSpec, Labels, OperationError, PodView};

/// A stored deployment: desired spec, revisions, rollout, and the status
/// its region last observed.
pub(in crate::app) struct DeploymentRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub cluster_id: Uuid,
    pub namespace: String,
    pub name: String,
    pub labels: serde_json::Value,
    pub spec: serde_json::Value,
    pub generation: i64,
    pub version: i64,
    pub revision: i64,
    pub template_revision: i64,
    pub last_good_revision: Option<i64>,
    pub requested_cpu_millis: i64,
    pub rollout_operation_id: Option<Uuid>,
    pub last_error: Option<serde_json::Value>,
    pub status: serde_json::Value,
    pub observed_generation: i64,
    pub observed_at: Option<DateTime<Utc>>,
    pub deletion_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl DeploymentRow {
    pub fn spec(&self) -> Result<DeploymentSpec> {
        read_spec(&self.spec)
    }
}

/// A stored deployment spec (of a deployment or a revision).
pub(super) fn read_spec(column: &serde_json::Value) -> Result<DeploymentSpec> {
    jsonb::from_column::<DeploymentSpecStored>("deployment spec", column).map(DeploymentSpec::from)
}

/// A deployment spec as stored.
pub(super) fn write_spec(spec: &DeploymentSpec) -> serde_json::Value {
    jsonb::to_column(&DeploymentSpecStored::from(spec))
}

/// `sqlx::query_as!` over `deployments` with `DeploymentRow`'s columns and
/// the rest of the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            DeploymentRow,
            "SELECT id, org_id, cluster_id, namespace, name, labels, spec, generation, version, revision,
                    template_revision, last_good_revision, requested_cpu_millis, rollout_operation_id, last_error,
                    status, observed_generation, observed_at, deletion_requested_at, created_at, updated_at
             FROM deployments " + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            DeploymentRow,
            "SELECT id, org_id, cluster_id, namespace, name, labels, spec, generation, version, revision,
                    template_revision, last_good_revision, requested_cpu_millis, rollout_operation_id, last_error,
                    status, observed_generation, observed_at, deletion_requested_at, created_at, updated_at
             FROM deployments " + $rest
            $(, $arg)*
        )
    };
}

/// A deployment of a cluster's namespace by id or name.
pub(in crate::app::workloads) async fn find(
    conn: &mut PgConnection,
    cluster: Uuid,
    namespace: &str,
    id: Option<Uuid>,
    name: Option<&str>,
    lock: Lock,
) -> Result<Option<DeploymentRow>> {
    Ok(match lock {
        Lock::None => {
            select!("WHERE cluster_id = $1 AND namespace = $2 AND (id = $3 OR name = $4)", cluster, namespace, id, name)
                .fetch_optional(conn)
                .await?
        }
        Lock::ForUpdate => {
            select!(locked "WHERE cluster_id = $1 AND namespace = $2 AND (id = $3 OR name = $4)",
                cluster, namespace, id, name)
            .fetch_optional(conn)
            .await?
        }
    })
}

/// Locks a deployment by id, for the server's own work (rollout deadlines,
/// webhook deliveries); callers check whose it is.
pub(in crate::app::workloads) async fn lock_by_id(conn: &mut PgConnection, id: Uuid) -> Result<Option<DeploymentRow>> {
    Ok(select!(locked "WHERE id = $1", id).fetch_optional(conn).await?)
}

/// The cluster a deployment belongs to, unlocked (see `lock_with_cluster`).
pub(in crate::app::workloads) async fn cluster_of(conn: &mut PgConnection, id: Uuid) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!("SELECT cluster_id FROM deployments WHERE id = $1", id).fetch_optional(conn).await?)
}

/// A page of a namespace's deployments in id order.
pub(in crate::app::workloads) async fn list(
    conn: &mut PgConnection,
    cluster: Uuid,
    namespace: &str,
    page: &PageRequest,
) -> Result<Vec<DeploymentRow>> {
    Ok(select!(
        "WHERE cluster_id = $1 AND namespace = $2 AND ($3::uuid IS NULL OR id > $3) ORDER BY id LIMIT $4",
        cluster,
        namespace,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// Every deployment of a cluster (those being deleted included), by
/// namespace and name: what its metrics are made of.
pub(in crate::app) async fn all_in_cluster(conn: &mut PgConnection, cluster: Uuid) -> Result<Vec<DeploymentRow>> {
    Ok(select!("WHERE cluster_id = $1 ORDER BY namespace, name", cluster).fetch_all(conn).await?)
}

/// What a cluster's deployments (those being deleted included) hold of its
/// workload quotas.
pub(in crate::app) struct WorkloadUsage {
    pub deployments: i64,
    pub cpu_millis: i64,
}

pub(in crate::app) async fn usage(conn: &mut PgConnection, cluster: Uuid) -> Result<WorkloadUsage> {
    Ok(sqlx::query_as!(
        WorkloadUsage,
        r#"SELECT count(*) AS "deployments!", COALESCE(sum(requested_cpu_millis), 0)::bigint AS "cpu_millis!"
           FROM deployments WHERE cluster_id = $1"#,
        cluster
    )
    .fetch_one(conn)
    .await?)
}

/// A new deployment at generation and revision 1; a name taken in the
/// namespace is `409 already_exists`.
pub(in crate::app) struct NewDeployment<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub project: Uuid,
    pub cluster: Uuid,
    pub namespace: &'a str,
    pub name: &'a str,
    pub labels: &'a Labels,
    pub spec: &'a DeploymentSpec,
    pub requested_cpu_millis: i64,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewDeployment<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO deployments (id, org_id, project_id, cluster_id, namespace, name, labels, spec,
             requested_cpu_millis)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        new.id,
        new.org,
        new.project,
        new.cluster,
        new.namespace,
        new.name,
        json!(new.labels),
        write_spec(new.spec),
        new.requested_cpu_millis,
    )
    .execute(conn)
    .await
    .map_err(or_unique(|| {
        Error::conflict(
            "already_exists",
            format!("a deployment named {:?} already exists in namespace {:?}", new.name, new.namespace),
        )
    }))?;
    Ok(())
}

/// A deployment's next spec with the counters that move with it.
pub(in crate::app) struct SpecChange<'a> {
    /// Replace the labels, if given.
    pub labels: Option<&'a Labels>,
    pub spec: &'a DeploymentSpec,
    pub generation: i64,
    pub revision: i64,
    pub template_revision: i64,
    pub requested_cpu_millis: i64,
    /// Whether the spec changed, which clears the last rollout's error.
    pub changed: bool,
}

pub(in crate::app::workloads) async fn update_spec(
    conn: &mut PgConnection,
    id: Uuid,
    change: SpecChange<'_>,
) -> Result<()> {
    sqlx::query!(
        "UPDATE deployments SET labels = COALESCE($2, labels), spec = $3, generation = $4, revision = $5,
             template_revision = $6, requested_cpu_millis = $7, last_error = CASE WHEN $8 THEN NULL ELSE last_error END,
             version = version + 1, updated_at = now()
         WHERE id = $1",
        id,
        change.labels.map(|l| json!(l)),
        write_spec(change.spec),
        change.generation,
        change.revision,
        change.template_revision,
        change.requested_cpu_millis,
        change.changed,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Watches `operation` as the deployment's rollout (for its progress deadline).
pub(in crate::app::workloads) async fn set_rollout(conn: &mut PgConnection, id: Uuid, operation: Uuid) -> Result<()> {
    sqlx::query!("UPDATE deployments SET rollout_operation_id = $2 WHERE id = $1", id, operation).execute(conn).await?;
    Ok(())
}

/// Marks the deployment as being deleted, at `generation`; its rollout is
/// no longer watched.
pub(in crate::app::workloads) async fn request_deletion(
    conn: &mut PgConnection,
    id: Uuid,
    generation: i64,
) -> Result<()> {
    sqlx::query!(
        "UPDATE deployments SET deletion_requested_at = now(), generation = $2, rollout_operation_id = NULL,
             version = version + 1, updated_at = now()
         WHERE id = $1",
        id,
        generation,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A watched rollout whose Operation is unfinished past the deployment's
/// progress deadline.
pub(in crate::app) struct OverdueRollout {
    pub id: Uuid,
    pub operation_id: Uuid,
    /// The region of the deployment's cluster.
    pub region: String,
}

/// Every [`OverdueRollout`]. The deadline stays a JSON path in SQL: this
/// runs every second over every watched rollout, and in SQL only the
/// overdue ones (usually none) come back instead of every watched spec; it
/// is also measured on the database's clock, as the Operation's
/// `created_at` is, and a spec without a deadline is never overdue.
pub(in crate::app) async fn overdue_rollouts(conn: &mut PgConnection) -> Result<Vec<OverdueRollout>> {
    Ok(sqlx::query_as!(
        OverdueRollout,
        r#"SELECT d.id, d.rollout_operation_id AS "operation_id!", c.region
           FROM deployments d
           JOIN operations o ON o.id = d.rollout_operation_id
           JOIN clusters c ON c.id = d.cluster_id
           WHERE o.status IN ('pending', 'running')
             AND o.created_at + make_interval(secs => (d.spec->'strategy'->>'progress_deadline_seconds')::float8)
                 < now()"#
    )
    .fetch_all(conn)
    .await?)
}

/// Fails a rollout's Operation for its missed deadline, unless it finished
/// meanwhile (then `false`).
pub(in crate::app) async fn fail_rollout_operation(
    conn: &mut PgConnection,
    operation: Uuid,
    error: &OperationError,
) -> Result<bool> {
    let finished = sqlx::query!(
        // The failure is a step of the Operation's history too.
        "WITH failed AS (
             UPDATE operations SET status = 'failed', step = 'progress_deadline_exceeded', progress = 100,
                 error = $2, updated_at = now(), finished_at = now()
             WHERE id = $1 AND status NOT IN ('succeeded', 'failed')
             RETURNING id
         )
         INSERT INTO operation_steps (operation_id, status, step, progress)
         SELECT id, 'failed', 'progress_deadline_exceeded', 100 FROM failed",
        operation,
        json!(error),
    )
    .execute(conn)
    .await?
    .rows_affected();
    Ok(finished > 0)
}

/// Records why the rollout failed and stops watching it.
pub(in crate::app) async fn rollout_failed(conn: &mut PgConnection, id: Uuid, error: &OperationError) -> Result<()> {
    sqlx::query!("UPDATE deployments SET last_error = $2, rollout_operation_id = NULL WHERE id = $1", id, json!(error))
        .execute(conn)
        .await?;
    Ok(())
}

/// Sets the error shown until a person changes the deployment (a change
/// clears it).
pub(in crate::app) async fn set_last_error(conn: &mut PgConnection, id: Uuid, error: &OperationError) -> Result<()> {
    sqlx::query!("UPDATE deployments SET last_error = $2 WHERE id = $1", id, json!(error)).execute(conn).await?;
    Ok(())
}

/// Records `digest` as the cluster edit last refused for the deployment;
/// false when it already was (so its refusal is audited once).
pub(in crate::app) async fn note_refused_edit(conn: &mut PgConnection, id: Uuid, digest: &str) -> Result<bool> {
    let noted = sqlx::query!(
        "UPDATE deployments SET refused_cluster_edit = $2 WHERE id = $1 AND refused_cluster_edit IS DISTINCT FROM $2",
        id,
        digest,
    )
    .execute(conn)
    .await?;
    Ok(noted.rows_affected() > 0)
}

/// How a deploy hook names a deployment of its project: cluster, namespace
/// and deployment, each by id or name.
pub(in crate::app) struct ProjectDeploymentKey<'a> {
    pub project: Uuid,
    pub cluster_id: Option<Uuid>,
    pub cluster_name: Option<&'a str>,
    pub namespace: &'a str,
    pub deployment_id: Option<Uuid>,
    pub deployment_name: Option<&'a str>,
}

/// The id of a project's deployment not being deleted, by
/// [`ProjectDeploymentKey`].
pub(in crate::app::workloads) async fn id_in_project(
    conn: &mut PgConnection,
    key: ProjectDeploymentKey<'_>,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT d.id FROM deployments d JOIN clusters c ON c.id = d.cluster_id
         WHERE c.project_id = $1 AND (c.id = $2 OR c.name = $3) AND d.namespace = $4
           AND (d.id = $5 OR d.name = $6) AND d.deletion_requested_at IS NULL",
        key.project,
        key.cluster_id,
        key.cluster_name,
        key.namespace,
        key.deployment_id,
        key.deployment_name,
    )
    .fetch_optional(conn)
    .await?)
}

/// A deployment's spec alone, by id.
pub(in crate::app::workloads) async fn spec_of(conn: &mut PgConnection, id: Uuid) -> Result<Option<DeploymentSpec>> {
    sqlx::query_scalar!("SELECT spec FROM deployments WHERE id = $1", id)
        .fetch_optional(conn)
        .await?
        .map(|spec| read_spec(&spec))
        .transpose()
}

/// A deployment's pod labels and the pods its region last saw.
pub(in crate::app) struct DeploymentPods {
    pub pod_labels: Labels,
    pub pods: Vec<PodView>,
}

/// The pods of a namespace's deployments not being deleted, in deployment
/// name order (a service's endpoints are chosen from them).
pub(in crate::app) async fn pods_in_namespace(
    conn: &mut PgConnection,
    cluster: Uuid,
    namespace: &str,
) -> Result<Vec<DeploymentPods>> {
    let rows = sqlx::query!(
        "SELECT spec, status FROM deployments
         WHERE cluster_id = $1 AND namespace = $2 AND deletion_requested_at IS NULL
         ORDER BY name",
        cluster,
        namespace
    )
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|row| {
            let spec: DeploymentSpecStored = jsonb::from_column("deployment spec", &row.spec)?;
            let status: ObservedStored = jsonb::from_column("deployment status", &row.status)?;
            let pods = status.workload.unwrap_or_default().pods.into_iter().map(PodView::from).collect();
            Ok(DeploymentPods { pod_labels: spec.pod_labels, pods })
        })
        .collect()
}

/// Records what `region` observed of a deployment at `generation`; a report
/// older than one recorded, or from a region its cluster is not in, changes
/// nothing. A report that `revision` runs everywhere (`rolled_out`) at the
/// current generation makes it the last good revision and ends the rollout.
pub(in crate::app) async fn observe(
    conn: &mut PgConnection,
    id: Uuid,
    region: &str,
    status: serde_json::Value,
    generation: i64,
    rolled_out: bool,
    revision: Option<i64>,
) -> Result<()> {
    sqlx::query!(
        "UPDATE deployments d SET status = $2, observed_generation = $3, observed_at = now(),
             last_good_revision = CASE WHEN $4 AND d.template_revision = $5 AND d.generation = $3
                 THEN d.template_revision ELSE d.last_good_revision END,
             rollout_operation_id = CASE WHEN $4 AND d.generation = $3
                 THEN NULL ELSE d.rollout_operation_id END
         FROM clusters c
         WHERE d.id = $1 AND d.observed_generation <= $3 AND c.id = d.cluster_id AND c.region = $6",
        id,
        status,
        generation,
        rolled_out,
        revision,
        region,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes a deployment its region reports gone, if its deletion was
/// requested and its cluster lives in that region.
pub(in crate::app) async fn remove_gone(conn: &mut PgConnection, id: Uuid, region: &str) -> Result<()> {
    sqlx::query!(
        "DELETE FROM deployments d USING clusters c
         WHERE d.id = $1 AND d.deletion_requested_at IS NOT NULL AND c.id = d.cluster_id AND c.region = $2",
        id,
        region,
    )
    .execute(conn)
    .await?;
    Ok(())
}
