//! Operations: the record of long-running work a region carries out, which
//! clients poll or long-poll (`?wait=`).
//!
//! Long-polls are woken by Postgres `NOTIFY moke_operations` (sent by a
//! trigger on every update, from any gateway process; see
//! [`crate::app::region::notifications`]) through one [`OperationWatch`] per process, with
//! a periodic re-read as a fallback.

use std::time::Duration;

use chrono::{DateTime, Utc};
use moke_iam::Action;
use sqlx::PgConnection;
use tokio::sync::broadcast;
use uuid::Uuid;

use crate::app::authz::{Authorized, Lock};
use crate::app::region::command::ResourceKind;
use crate::app::{App, Error, RequestContext, Result};
use crate::ids::OperationId;
use crate::model::{
    OperationError, OperationStatus, OperationStepView, OperationSteps, OperationTarget, OperationView,
};

/// What a new operation acts on.
pub struct NewOperation<'a> {
    pub kind: &'a str,
    pub target_type: ResourceKind,
    pub target_id: Uuid,
    pub target_name: &'a str,
    pub target_generation: i64,
    /// Operations the gateway completes itself start (and end) `succeeded`.
    pub status: OperationStatus,
}

/// Whether an operation of `kind` on `target` is under way (one awaiting
/// approval has changed nothing yet, so it is not).
pub async fn unfinished(conn: &mut PgConnection, target: Uuid, kind: &str) -> Result<bool> {
    let found = sqlx::query_scalar::<_, bool>(
        "SELECT EXISTS (SELECT 1 FROM operations WHERE target_id = $1 AND kind = $2
                          AND status IN ('pending', 'running'))",
    )
    .bind(target)
    .bind(kind)
    .fetch_one(conn)
    .await?;
    Ok(found)
}

/// Inserts an operation inside the caller's transaction.
pub async fn insert(tx: &mut PgConnection, ctx: &RequestContext, new: NewOperation<'_>) -> Result<OperationView> {
    let id = OperationId::generate();
    let (step, progress) = match new.status {
        OperationStatus::Succeeded => ("done", 100),
        OperationStatus::AwaitingApproval => ("awaiting_approval", 0),
        _ => ("queued", 0),
    };
    let row = sqlx::query!(
        // The project and cluster the target lives in: a credential limited
        // to a project sees only that project's operations, and a cluster's
        // page lists the work on its node pools and deployments too.
        r#"INSERT INTO operations (id, org_id, kind, status, step, progress, target_type, target_id,
               target_name, target_generation, created_by, finished_at, project_id, cluster_id)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
                  CASE WHEN $4 IN ('succeeded', 'failed') THEN now() END,
                  c.project_id, c.id
           FROM (SELECT CASE $7
                            WHEN 'cluster' THEN $8
                            WHEN 'node_pool' THEN (SELECT cluster_id FROM node_pools WHERE id = $8)
                            WHEN 'deployment' THEN (SELECT cluster_id FROM deployments WHERE id = $8)
                        END AS id) target
           LEFT JOIN clusters c ON c.id = target.id
           RETURNING created_at, updated_at, finished_at"#,
        id.uuid(),
        ctx.principal.org_id,
        new.kind,
        new.status.as_str(),
        step,
        progress,
        new.target_type.as_str(),
        new.target_id,
        new.target_name,
        new.target_generation,
        ctx.principal.id,
    )
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query!(
        "INSERT INTO operation_steps (operation_id, status, step, progress) VALUES ($1, $2, $3, $4)",
        id.uuid(),
        new.status.as_str(),
        step,
        progress,
    )
    .execute(tx)
    .await?;
    Ok(OperationView {
        id,
        kind: new.kind.to_string(),
        status: new.status,
        step: step.to_string(),
        progress,
        error: None,
        target: target(new.target_type, new.target_id, new.target_name, new.target_generation),
        created_at: row.created_at,
        updated_at: row.updated_at,
        finished_at: row.finished_at,
    })
}

fn target(kind: ResourceKind, id: Uuid, name: &str, generation: i64) -> OperationTarget {
    OperationTarget { target_type: kind.as_str().to_string(), id: kind.id_text(id), name: name.to_string(), generation }
}

pub(in crate::app) struct OperationRow {
    id: Uuid,
    org_id: Uuid,
    /// None for organization-wide work.
    pub project_id: Option<Uuid>,
    pub cluster_id: Option<Uuid>,
    pub kind: String,
    status: String,
    step: String,
    progress: i32,
    error: Option<serde_json::Value>,
    target_type: String,
    pub target_id: Uuid,
    target_name: String,
    pub target_generation: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    finished_at: Option<DateTime<Utc>>,
}

impl OperationRow {
    /// What the Operation acts in, as authorization names it: its project,
    /// or the organization for organization-wide work.
    pub(in crate::app) fn authz_target(&self) -> moke_iam::Target {
        match self.project_id {
            Some(project) => moke_iam::Target::project(self.org_id, project),
            None => moke_iam::Target::org(self.org_id),
        }
    }

    pub(in crate::app) fn status(&self) -> Result<OperationStatus> {
        OperationStatus::parse(&self.status)
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown operation status {}", self.status)))
    }

    /// The code of the error it ended with, if it failed.
    pub(in crate::app) fn error_code(&self) -> Option<&str> {
        self.error.as_ref().and_then(|e| e.get("code")).and_then(|c| c.as_str())
    }

    pub(in crate::app) fn into_view(self) -> Result<OperationView> {
        let status = self.status()?;
        let kind = ResourceKind::parse(&self.target_type)
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown operation target {}", self.target_type)))?;
        Ok(OperationView {
            id: OperationId::from_uuid(self.id),
            kind: self.kind,
            status,
            step: self.step,
            progress: self.progress,
            error: self.error.and_then(|e| serde_json::from_value::<OperationError>(e).ok()),
            target: target(kind, self.target_id, &self.target_name, self.target_generation),
            created_at: self.created_at,
            updated_at: self.updated_at,
            finished_at: self.finished_at,
        })
    }
}

/// Fans Postgres notifications about changed operations out to waiters.
pub struct OperationWatch {
    changed: broadcast::Sender<Uuid>,
}

impl Default for OperationWatch {
    fn default() -> Self {
        Self::new()
    }
}

impl OperationWatch {
    pub fn new() -> OperationWatch {
        OperationWatch { changed: broadcast::channel(1024).0 }
    }

    /// Ids of operations as they change, for waiters and subscriptions.
    pub fn subscribe(&self) -> broadcast::Receiver<Uuid> {
        self.changed.subscribe()
    }

    /// Wakes long-polls waiting on operation `id`.
    pub(crate) fn changed(&self, id: Uuid) {
        let _ = self.changed.send(id);
    }
}

/// `sqlx::query_as!` over `operations` with `OperationRow`'s columns and
/// the rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            OperationRow,
            "SELECT id, org_id, project_id, cluster_id, kind, status, step, progress, error, target_type, target_id,
                    target_name, target_generation, created_at, updated_at, finished_at
             FROM operations " + $rest
            $(, $arg)*
        )
    };
}

/// The generation of its target Operation `id` was made at.
pub(in crate::app) async fn target_generation(conn: &mut PgConnection, id: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar("SELECT target_generation FROM operations WHERE id = $1").bind(id).fetch_one(conn).await?)
}

/// Starts Operation `id`, which waited for approval, as the approved
/// `change`'s (the same kind, on the same target): `pending`, queued at its
/// generation. Refused when it no longer waits (rejected, withdrawn or
/// expired meanwhile).
pub(in crate::app) async fn start_approved(
    tx: &mut PgConnection,
    id: Uuid,
    change: &crate::app::kernel::changes::RegionalChange<'_>,
) -> Result<OperationView> {
    let moved = sqlx::query(
        "UPDATE operations SET status = 'pending', step = 'queued', progress = 0, target_generation = $3,
                updated_at = now()
         WHERE id = $1 AND target_id = $2 AND kind = $4 AND status = 'awaiting_approval'",
    )
    .bind(id)
    .bind(change.target_id)
    .bind(change.generation)
    .bind(change.kind.operation_kind())
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if moved == 0 {
        return Err(Error::conflict("approval_closed", "the operation no longer awaits approval"));
    }
    sqlx::query(
        "INSERT INTO operation_steps (operation_id, status, step, progress) VALUES ($1, 'pending', 'queued', 0)",
    )
    .bind(id)
    .execute(&mut *tx)
    .await?;
    select!("WHERE id = $1", id).fetch_one(&mut *tx).await?.into_view()
}

/// Operation `id` of the caller's organization, if the caller may see it
/// (not found otherwise) and may do `action` where it acts (forbidden
/// otherwise). `Lock::ForUpdate` holds the row against other changes until
/// the transaction ends (`FOR NO KEY UPDATE`, so an outbox row may still
/// name it: take it after the target's own lock, as every change does).
pub(in crate::app) async fn lookup(
    conn: &mut PgConnection,
    ctx: &RequestContext,
    id: OperationId,
    action: Action,
    lock: Lock,
) -> Result<Authorized<OperationRow>> {
    let (org, not_found) = (ctx.principal.org_id, || Error::not_found("operation", id.to_string()));
    let row = match lock {
        Lock::None => select!("WHERE id = $1 AND org_id = $2", id.uuid(), org).fetch_optional(conn).await?,
        Lock::ForUpdate => {
            select!("WHERE id = $1 AND org_id = $2 FOR NO KEY UPDATE", id.uuid(), org).fetch_optional(conn).await?
        }
    }
    .ok_or_else(not_found)?;
    let target = match (row.project_id, ResourceKind::parse(&row.target_type)) {
        (Some(project), _) => moke_iam::Target::project(row.org_id, project),
        (None, Some(ResourceKind::Org)) => moke_iam::Target::org(row.org_id),
        // A project resource whose project is no longer known (made
        // before operations named their project): only unscoped credentials see it.
        (None, _) if ctx.principal.scope.project.is_some() => return Err(not_found()),
        (None, _) => moke_iam::Target::org(row.org_id),
    };
    moke_iam::authorize(&ctx.principal, Action::Read, target).map_err(|_| not_found())?;
    Authorized::check(ctx, action, target, row)
}

/// The newest Operation of `kind` on `target` (a repeated delete answers
/// with the delete already under way).
pub(in crate::app) async fn latest_of_kind(
    conn: &mut sqlx::PgConnection,
    target: Uuid,
    kind: crate::app::region::command::ChangeKind,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM operations WHERE target_id = $1 AND kind = $2 ORDER BY id DESC LIMIT 1",
        target,
        kind.operation_kind(),
    )
    .fetch_optional(conn)
    .await?)
}

/// The newest operations (at most `limit` each, older than `after` if given)
/// in each of `clusters` of organization `org`: on the cluster, its node
/// pools and its deployments, those since deleted too; newest first, each
/// row's `cluster_id` naming its cluster. With `project`, only that
/// project's (a credential scoped to it). Each cluster reads only its
/// newest rows, through `operations_cluster_idx`; rows written before
/// operations recorded their cluster are found by their target.
pub(in crate::app) async fn of_clusters(
    conn: &mut PgConnection,
    org: Uuid,
    project: Option<Uuid>,
    clusters: &[Uuid],
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<OperationRow>> {
    Ok(sqlx::query_as!(
        OperationRow,
        r#"SELECT ops.id AS "id!", ops.org_id AS "org_id!", ops.project_id, c.id AS "cluster_id",
                  ops.kind AS "kind!", ops.status AS "status!", ops.step AS "step!", ops.progress AS "progress!",
                  ops.error, ops.target_type AS "target_type!", ops.target_id AS "target_id!",
                  ops.target_name AS "target_name!", ops.target_generation AS "target_generation!",
                  ops.created_at AS "created_at!", ops.updated_at AS "updated_at!", ops.finished_at
           FROM unnest($1::uuid[]) AS c(id)
           CROSS JOIN LATERAL (
               SELECT * FROM (
                   (SELECT o.* FROM operations o
                    WHERE o.cluster_id = c.id AND o.org_id = $2 AND ($3::uuid IS NULL OR o.project_id = $3)
                      AND ($4::uuid IS NULL OR o.id < $4)
                    ORDER BY o.id DESC LIMIT $5)
                   UNION ALL
                   (SELECT o.* FROM operations o
                    WHERE o.cluster_id IS NULL AND o.org_id = $2 AND ($3::uuid IS NULL OR o.project_id = $3)
                      AND ($4::uuid IS NULL OR o.id < $4)
                      AND o.target_id IN (SELECT c.id
                                          UNION ALL SELECT n.id FROM node_pools n WHERE n.cluster_id = c.id
                                          UNION ALL SELECT d.id FROM deployments d WHERE d.cluster_id = c.id)
                    ORDER BY o.id DESC LIMIT $5)
               ) recorded_or_found
               ORDER BY id DESC LIMIT $5
           ) ops
           ORDER BY ops.id DESC"#,
        clusters,
        org,
        project,
        after,
        limit,
    )
    .fetch_all(conn)
    .await?)
}

/// Which of a project's operations to list; each filter left out matches all.
#[derive(Debug, Clone, Default)]
pub struct OperationFilter {
    /// The resource acted on: a cluster, node pool or deployment id.
    pub target: Option<Uuid>,
    /// An Operation kind, e.g. `cluster_upgrade`.
    pub kind: Option<String>,
    pub status: Option<OperationStatus>,
}

impl OperationFilter {
    /// The filter from its query text, naming each bad field: `target` is a
    /// `cl_`, `np_` or `dep_` id, `kind` lowercase letters and `_`.
    pub fn parse(target: Option<&str>, kind: Option<&str>, status: Option<OperationStatus>) -> Result<OperationFilter> {
        let mut v = crate::app::error::Validator::new();
        let target = target.filter(|t| !t.is_empty()).and_then(|text| {
            let lowercase = text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            let id = [ResourceKind::Cluster, ResourceKind::NodePool, ResourceKind::Deployment]
                .into_iter()
                .find_map(|kind| kind.parse_id(text))
                .filter(|_| lowercase);
            v.check(
                id.is_some(),
                "target",
                "invalid",
                "must be a cluster (cl_…), node pool (np_…) or deployment (dep_…) id",
            );
            id
        });
        let kind = kind.filter(|k| !k.is_empty()).map(str::to_string);
        if let Some(kind) = &kind {
            let ok = (1..=64).contains(&kind.len()) && kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
            v.check(ok, "kind", "invalid", "an Operation kind: lowercase letters and '_', e.g. cluster_upgrade");
        }
        v.finish()?;
        Ok(OperationFilter { target, kind, status })
    }
}

impl App {
    /// `project_operation_list`: the project's operations, newest first,
    /// those on resources since deleted too, filtered by `filter`.
    pub async fn project_operation_list(
        &self,
        ctx: &RequestContext,
        project: &crate::app::ResourceRef<crate::ids::ProjectKind>,
        filter: OperationFilter,
        page: crate::app::PageRequest,
    ) -> Result<crate::model::Page<OperationView>> {
        let mut conn = self.db().acquire().await?;
        let project =
            crate::app::infra::projects::lookup(&mut conn, ctx, project, moke_iam::Action::Read, Lock::None).await?;
        let rows = sqlx::query_as!(
            OperationRow,
            "SELECT id, org_id, project_id, cluster_id, kind, status, step, progress, error, target_type, target_id,
                    target_name, target_generation, created_at, updated_at, finished_at
             FROM operations
             WHERE org_id = $1 AND project_id = $2
               AND ($3::uuid IS NULL OR target_id = $3)
               AND ($4::text IS NULL OR kind = $4)
               AND ($5::text IS NULL OR status = $5)
               AND ($6::uuid IS NULL OR id < $6)
             ORDER BY id DESC LIMIT $7",
            project.org_id,
            project.id,
            filter.target,
            filter.kind,
            filter.status.map(|s| s.as_str()),
            page.after,
            page.fetch_limit(),
        )
        .fetch_all(&mut *conn)
        .await?;
        let views = rows.into_iter().map(OperationRow::into_view).collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, |o| o.id.uuid()))
    }

    async fn operation_row(&self, ctx: &RequestContext, id: OperationId) -> Result<OperationView> {
        let mut conn = self.db().acquire().await?;
        lookup(&mut conn, ctx, id, Action::Read, Lock::None).await?.into_inner().into_view()
    }

    /// The most recent operations (at most `per_cluster`) in each of several
    /// clusters, for the GraphQL loader of `Cluster.operations`, whose keys
    /// are clusters the caller has already read; limited to the caller's
    /// organization and, for a scoped credential, its project.
    pub(crate) async fn operations_by_cluster(
        &self,
        ctx: &RequestContext,
        clusters: &[Uuid],
        per_cluster: i64,
    ) -> Result<std::collections::HashMap<Uuid, Vec<OperationView>>> {
        moke_iam::authorize(&ctx.principal, moke_iam::Action::Read, moke_iam::Target::org(ctx.principal.org_id))?;
        let mut conn = self.db().acquire().await?;
        let (org, project) = (ctx.principal.org_id, ctx.principal.scope.project);
        let rows = of_clusters(&mut conn, org, project, clusters, None, per_cluster).await?;
        let mut by_cluster = std::collections::HashMap::<Uuid, Vec<OperationView>>::new();
        for row in rows {
            let Some(cluster) = row.cluster_id else { continue };
            by_cluster.entry(cluster).or_default().push(row.into_view()?);
        }
        Ok(by_cluster)
    }

    /// The steps of several operations at once, each as
    /// [`App::operation_step_list`] gives them (the newest 1000, oldest
    /// first), for the GraphQL loader of `Operation.steps`, whose keys are
    /// operations the caller has already read; limited as
    /// [`lookup`] limits them: the caller's organization and, for a scoped
    /// credential, its project and the organization's own operations.
    pub(crate) async fn operation_steps_by_operation(
        &self,
        ctx: &RequestContext,
        operations: &[Uuid],
    ) -> Result<std::collections::HashMap<Uuid, Vec<OperationStepView>>> {
        moke_iam::authorize(&ctx.principal, moke_iam::Action::Read, moke_iam::Target::org(ctx.principal.org_id))?;
        let rows = sqlx::query!(
            r#"SELECT s.operation_id AS "operation_id!", s.status AS "status!", s.step AS "step!",
                      s.progress AS "progress!", s.at AS "at!"
               FROM (
                   SELECT st.*, row_number() OVER (PARTITION BY st.operation_id ORDER BY st.seq DESC) AS newest
                   FROM operation_steps st
                   JOIN operations o ON o.id = st.operation_id
                   WHERE st.operation_id = ANY($1) AND o.org_id = $2
                     AND ($3::uuid IS NULL OR o.project_id = $3 OR (o.project_id IS NULL AND o.target_type = 'org'))
               ) s
               WHERE s.newest <= 1000
               ORDER BY s.operation_id, s.seq"#,
            operations,
            ctx.principal.org_id,
            ctx.principal.scope.project,
        )
        .fetch_all(self.db())
        .await?;
        let mut by_operation = std::collections::HashMap::<Uuid, Vec<OperationStepView>>::new();
        for row in rows {
            let status = OperationStatus::parse(&row.status)
                .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown operation status {}", row.status)))?;
            let step = OperationStepView { status, step: row.step, progress: row.progress, at: row.at };
            by_operation.entry(row.operation_id).or_default().push(step);
        }
        Ok(by_operation)
    }

    /// `operation_step_list`: the steps operation `id` went through (the
    /// newest 1000), oldest first, to whoever may see the operation.
    pub async fn operation_step_list(&self, ctx: &RequestContext, id: OperationId) -> Result<OperationSteps> {
        self.operation_row(ctx, id).await?;
        let rows = sqlx::query!(
            // The newest 1000, oldest first: where it ended is always there.
            "SELECT status, step, progress, at FROM (
                 SELECT seq, status, step, progress, at FROM operation_steps
                 WHERE operation_id = $1 ORDER BY seq DESC LIMIT 1000
             ) newest ORDER BY seq",
            id.uuid(),
        )
        .fetch_all(self.db())
        .await?;
        let items = rows
            .into_iter()
            .map(|row| {
                let status = OperationStatus::parse(&row.status)
                    .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown operation status {}", row.status)))?;
                Ok(OperationStepView { status, step: row.step, progress: row.progress, at: row.at })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(OperationSteps { items })
    }

    /// `operation_view`: an operation; with `wait`, blocks until it finishes,
    /// the wait runs out, or the server shuts down, whichever is first.
    pub async fn operation_view(
        &self,
        ctx: &RequestContext,
        id: OperationId,
        wait: Option<Duration>,
    ) -> Result<OperationView> {
        let Some(wait) = wait else {
            return self.operation_row(ctx, id).await;
        };
        let max = Duration::from_secs(self.config().http.max_wait_seconds);
        let deadline = tokio::time::Instant::now() + wait.min(max);
        let mut changes = self.operation_watch().subscribe();
        loop {
            let view = self.operation_row(ctx, id).await?;
            if view.status.is_terminal() {
                return Ok(view);
            }
            // Wake on a notification for this operation, a fallback tick, the
            // deadline, or shutdown.
            let woke = tokio::time::timeout_at(deadline, async {
                let tick = tokio::time::sleep(Duration::from_secs(2));
                tokio::pin!(tick);
                loop {
                    tokio::select! {
                        _ = self.shutdown_token().cancelled() => return false,
                        _ = &mut tick => return true,
                        changed = changes.recv() => match changed {
                            Ok(changed) if changed == id.uuid() => return true,
                            Ok(_) => continue,
                            Err(broadcast::error::RecvError::Lagged(_)) => return true,
                            Err(broadcast::error::RecvError::Closed) => return false,
                        },
                    }
                }
            })
            .await;
            if !matches!(woke, Ok(true)) {
                return self.operation_row(ctx, id).await;
            }
        }
    }
}
