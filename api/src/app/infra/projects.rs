//! Projects: the gateway completes these itself (201/200, no Operation).

use moke_iam::{Action, Target};
use serde_json::json;
use sqlx::PgConnection;

use crate::app::authz::{Authorized, Lock};
use crate::app::error::Validator;
use crate::app::infra::store::projects::{self as store, ProjectRow};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag, validate};
use crate::ids::{OrgId, ProjectId, ProjectKind};
use crate::model::{Labels, Page, ProjectCreate, ProjectSpec, ProjectUpdate, ProjectView};

const MAX_DESCRIPTION: usize = 1024;

impl ProjectRow {
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
    let org = ctx.principal.org_id;
    // A credential limited to one project finds no other: the same answer
    // as for a project that does not exist.
    store::find(conn, org, project.id(), project.name(), ctx.principal.scope.project, lock)
        .await?
        .ok_or_else(|| Error::not_found("project", project.describe()))
}

impl App {
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
            let row = store::insert(&mut tx, id.uuid(), org.uuid(), &input.name, &input.labels, &input.spec).await?;
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
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `project_list`: an organization's projects, oldest first.
    pub async fn project_list(&self, ctx: &RequestContext, org: OrgId, page: PageRequest) -> Result<Page<ProjectView>> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let mut conn = self.db().acquire().await?;
        // A token limited to one project lists only that one.
        let rows = store::list(&mut conn, org.uuid(), ctx.principal.scope.project, &page).await?;
        Ok(page.page(rows.into_iter().map(ProjectRow::into_view).collect::<Result<Vec<_>>>()?, |p| p.id.uuid()))
    }

    pub async fn project_view(&self, ctx: &RequestContext, project: &ResourceRef<ProjectKind>) -> Result<ProjectView> {
        let mut conn = self.db().acquire().await?;
        let row = lookup(&mut conn, ctx, project, Action::Read, Lock::None).await?.into_inner();
        row.into_view()
    }

    /// `project_update`: name, labels and spec; `if_match` guards against lost updates.
    pub async fn project_update(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        if_match: Option<&str>,
        update: ProjectUpdate,
    ) -> Result<ProjectView> {
        let mut v = Validator::new();
        if let Some(name) = &update.name {
            validate::name(&mut v, "name", name);
        }
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
        let renamed_from = update.name.as_ref().filter(|name| **name != row.name).map(|_| row.name.clone());
        let row =
            store::update(&mut tx, row.id, update.name.as_deref(), update.labels.as_ref(), &spec, spec_changed).await?;
        let view = row.into_view()?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "project.update",
                resource_type: "project",
                resource_id: Some(view.id.to_string()),
                details: json!({
                    "name": update.name,
                    "renamed_from": renamed_from,
                    "labels": update.labels,
                    "spec": update.spec,
                }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
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
        let clusters = store::cluster_count(&mut tx, row.id).await?;
        if clusters > 0 {
            return Err(Error::conflict(
                "project_not_empty",
                format!("project {} still has {clusters} cluster(s); delete them first", row.name),
            ));
        }
        store::delete(&mut tx, row.id).await?;
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
        self.commit(ctx, tx).await?;
        Ok(())
    }
}
