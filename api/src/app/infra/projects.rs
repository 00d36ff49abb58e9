//! Projects: the gateway completes these itself (201/200, no Operation).

use chrono::{DateTime, Utc};
use moke_iam::{Action, Target};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::{Authorized, Lock};
use crate::app::error::{Validator, or_unique};
use crate::app::infra::store::ProjectSpecStored;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::jsonb;
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag, validate};
use crate::ids::{OrgId, ProjectId, ProjectKind};
use crate::model::{Labels, Page, ProjectCreate, ProjectSpec, ProjectUpdate, ProjectView};

const MAX_DESCRIPTION: usize = 1024;

pub(in crate::app) struct ProjectRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub labels: serde_json::Value,
    pub spec: serde_json::Value,
    pub generation: i64,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ProjectRow {
    fn spec(&self) -> Result<ProjectSpec> {
        jsonb::from_column::<ProjectSpecStored>("project spec", &self.spec).map(ProjectSpec::from)
    }

    fn into_view(self) -> Result<ProjectView> {
        let spec = self.spec()?;
        Ok(ProjectView {
            id: ProjectId::from_uuid(self.id),
            org_id: OrgId::from_uuid(self.org_id),
            etag: etag(self.id, self.version),
            name: self.name,
            labels: serde_json::from_value::<Labels>(self.labels).unwrap_or_default(),
            spec,
            generation: self.generation,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

fn check_spec(v: &mut Validator, spec: &ProjectSpec) {
    v.check(
        spec.description.chars().count() <= MAX_DESCRIPTION,
        "spec.description",
        "too_long",
        format!("at most {MAX_DESCRIPTION} characters"),
    );
}

/// A project of the caller's organization, by id or name, if the caller
/// may do `action` in it.
pub(in crate::app) async fn lookup(
    conn: &mut PgConnection,
    ctx: &RequestContext,
    project: &ResourceRef<ProjectKind>,
    action: Action,
    lock: Lock,
) -> Result<Authorized<ProjectRow>> {
    let row = find(conn, ctx, project, lock).await?;
    let target = Target::project(row.org_id, row.id);
    Authorized::check(ctx, action, target, row)
}

/// Finds a project of the caller's organization by id or name (unchecked:
/// only [`lookup`] hands it out).
async fn find(
    conn: &mut PgConnection,
    ctx: &RequestContext,
    project: &ResourceRef<ProjectKind>,
    lock: Lock,
) -> Result<ProjectRow> {
    let row = if lock == Lock::ForUpdate {
        sqlx::query_as!(
            ProjectRow,
            "SELECT id, org_id, name, labels, spec, generation, version, created_at, updated_at
             FROM projects WHERE org_id = $1 AND (id = $2 OR name = $3) AND ($4::uuid IS NULL OR id = $4)
             FOR UPDATE",
            ctx.principal.org_id,
            project.id(),
            project.name(),
            ctx.principal.scope.project,
        )
        .fetch_optional(conn)
        .await?
    } else {
        sqlx::query_as!(
            ProjectRow,
            "SELECT id, org_id, name, labels, spec, generation, version, created_at, updated_at
             FROM projects WHERE org_id = $1 AND (id = $2 OR name = $3) AND ($4::uuid IS NULL OR id = $4)",
            ctx.principal.org_id,
            project.id(),
            project.name(),
            ctx.principal.scope.project,
        )
        .fetch_optional(conn)
        .await?
    };
    // A credential limited to one project finds no other: the same answer
    // as for a project that does not exist.
    row.ok_or_else(|| Error::not_found("project", project.describe()))
}

impl App {
    /// `project_create`.
    pub async fn project_create(&self, ctx: &RequestContext, org: OrgId, input: ProjectCreate) -> Result<ProjectView> {
        self.org_authorized(ctx, org, Action::ManageResources).await?;
        let mut v = Validator::new();
        validate::name(&mut v, "name", &input.name);
        validate::labels(&mut v, "labels", &input.labels);
        check_spec(&mut v, &input.spec);
        v.finish()?;
        let input = &input;
        self.idempotent(ctx, "project_create", &(org, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let id = ProjectId::generate();
            let row = sqlx::query_as!(
                ProjectRow,
                "INSERT INTO projects (id, org_id, name, labels, spec) VALUES ($1, $2, $3, $4, $5)
                 RETURNING id, org_id, name, labels, spec, generation, version, created_at, updated_at",
                id.uuid(),
                org.uuid(),
                input.name,
                json!(input.labels),
                jsonb::to_column(&ProjectSpecStored::from(&input.spec)),
            )
            .fetch_one(&mut *tx)
            .await
            .map_err(or_unique(|| {
                Error::conflict("already_exists", format!("a project named {:?} already exists", input.name))
            }))?;
            let view = row.into_view()?;
            audit::record(
                &mut tx,
                ctx,
                AuditRecord {
                    action: "project.create",
                    resource_type: "project",
                    resource_id: Some(view.id.to_string()),
                    details: json!({ "name": view.name }),
                },
            )
            .await?;
            claim.complete(&mut tx, 201, &view).await?;
            tx.commit().await?;
            Ok(view)
        })
        .await
    }

    /// `project_list`: an organization's projects, oldest first.
    pub async fn project_list(&self, ctx: &RequestContext, org: OrgId, page: PageRequest) -> Result<Page<ProjectView>> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let rows = sqlx::query_as!(
            ProjectRow,
            "SELECT id, org_id, name, labels, spec, generation, version, created_at, updated_at
             FROM projects WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2)
                 AND ($4::uuid IS NULL OR id = $4)
             ORDER BY id LIMIT $3",
            org.uuid(),
            page.after,
            page.fetch_limit(),
            // A token limited to one project lists only that one.
            ctx.principal.scope.project,
        )
        .fetch_all(self.db())
        .await?;
        Ok(page.page(rows.into_iter().map(ProjectRow::into_view).collect::<Result<Vec<_>>>()?, |p| p.id.uuid()))
    }

    /// `project_view`.
    pub async fn project_view(&self, ctx: &RequestContext, project: &ResourceRef<ProjectKind>) -> Result<ProjectView> {
        let mut conn = self.db().acquire().await?;
        let row = lookup(&mut conn, ctx, project, Action::Read, Lock::None).await?.into_inner();
        row.into_view()
    }

    /// `project_update`: labels and spec; `if_match` guards against lost updates.
    pub async fn project_update(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        if_match: Option<&str>,
        update: ProjectUpdate,
    ) -> Result<ProjectView> {
        let mut v = Validator::new();
        if let Some(labels) = &update.labels {
            validate::labels(&mut v, "labels", labels);
        }
        if let Some(spec) = &update.spec {
            check_spec(&mut v, spec);
        }
        v.finish()?;
        let mut tx = self.db().begin().await?;
        let row = lookup(&mut tx, ctx, project, Action::ManageResources, Lock::ForUpdate).await?.into_inner();
        check_if_match(if_match, &etag(row.id, row.version))?;
        let current_spec = row.spec()?;
        let spec = update.spec.clone().unwrap_or(current_spec.clone());
        let spec_changed = spec != current_spec;
        let row = sqlx::query_as!(
            ProjectRow,
            "UPDATE projects SET labels = COALESCE($2, labels), spec = $3,
                 generation = generation + CASE WHEN $4 THEN 1 ELSE 0 END,
                 version = version + 1, updated_at = now()
             WHERE id = $1
             RETURNING id, org_id, name, labels, spec, generation, version, created_at, updated_at",
            row.id,
            update.labels.as_ref().map(|l| json!(l)),
            jsonb::to_column(&ProjectSpecStored::from(&spec)),
            spec_changed,
        )
        .fetch_one(&mut *tx)
        .await?;
        let view = row.into_view()?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "project.update",
                resource_type: "project",
                resource_id: Some(view.id.to_string()),
                details: json!({ "labels": update.labels, "spec": update.spec }),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(view)
    }

    /// `project_delete`: only an empty project can be deleted.
    pub async fn project_delete(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        if_match: Option<&str>,
    ) -> Result<()> {
        let mut tx = self.db().begin().await?;
        let row = lookup(&mut tx, ctx, project, Action::ManageResources, Lock::ForUpdate).await?.into_inner();
        check_if_match(if_match, &etag(row.id, row.version))?;
        let clusters: i64 =
            sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM clusters WHERE project_id = $1"#, row.id)
                .fetch_one(&mut *tx)
                .await?;
        if clusters > 0 {
            return Err(Error::conflict(
                "project_not_empty",
                format!("project {} still has {clusters} cluster(s); delete them first", row.name),
            ));
        }
        sqlx::query!("DELETE FROM projects WHERE id = $1", row.id).execute(&mut *tx).await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "project.delete",
                resource_type: "project",
                resource_id: Some(ProjectId::from_uuid(row.id).to_string()),
                details: json!({ "name": row.name }),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
