//! Organization memberships and project roles. The last owner of an
//! organization can neither leave nor be demoted.

use moke_iam::{Action, OrgRole, ProjectRole};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::Validator;
use crate::app::iam::store;
use crate::app::iam::store::memberships::MemberRow;
use crate::app::infra::clusters::pki::Reach;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag};
use crate::ids::{OrgId, ProjectKind, ServiceAccountId, UserId};
use crate::model::*;

/// Parses an organization role the caller may grant, naming `field` when it cannot.
pub(in crate::app) fn grantable_role(
    v: &mut Validator,
    ctx: &RequestContext,
    field: &str,
    text: &str,
) -> Option<OrgRole> {
    match OrgRole::parse(text) {
        None => {
            v.push(field, "invalid", "must be owner, admin, billing, member or viewer");
            None
        }
        Some(role) if !moke_iam::may_grant(&ctx.principal, role) => {
            v.push(
                field,
                "exceeds_own_role",
                format!("cannot grant more than your own role ({})", ctx.principal.role.as_str()),
            );
            None
        }
        Some(role) => Some(role),
    }
}

/// Refuses giving someone `role` in the organization (an invitation, a
/// role change, a new service account) when that role could do anything
/// the caller's credential may not (see [`moke_iam::may_confer`]). Such a
/// role lasts, so a credential with an expiry may not grant it.
pub(in crate::app) fn check_role_grant(ctx: &RequestContext, role: OrgRole) -> Result<()> {
    let grantee = moke_iam::Principal {
        role,
        project_roles: Vec::new(),
        scope: moke_iam::Scope::default(),
        expires_at: None,
        ..ctx.principal.clone()
    };
    Ok(moke_iam::may_confer(&ctx.principal, &grantee)?)
}

/// The same for a project role in one project.
fn check_project_role_grant(ctx: &RequestContext, project: Uuid, role: ProjectRole) -> Result<()> {
    let grantee = moke_iam::Principal {
        role: OrgRole::Viewer,
        project_roles: vec![(project, role)],
        scope: moke_iam::Scope::default(),
        expires_at: None,
        ..ctx.principal.clone()
    };
    Ok(moke_iam::may_confer(&ctx.principal, &grantee)?)
}

/// A member as it stands, locked until the transaction ends.
struct LockedMember {
    role: OrgRole,
    /// The membership's ETag.
    etag: String,
    /// The organization's owner count.
    owners: i64,
}

/// A member's current role and ETag and the organization's owner count,
/// with the organization locked against concurrent owner changes and the
/// membership against any other change.
async fn lock_member(tx: &mut PgConnection, org: OrgId, user: UserId) -> Result<LockedMember> {
    store::orgs::lock_for_owner_change(&mut *tx, org.uuid()).await?;
    let owners = store::memberships::owner_count(&mut *tx, org.uuid()).await?;
    let (role, version) = store::memberships::lock(&mut *tx, org.uuid(), user.uuid())
        .await?
        .ok_or_else(|| Error::not_found("member", user.to_string()))?;
    Ok(LockedMember {
        role: OrgRole::parse(&role).unwrap_or(OrgRole::Viewer),
        etag: etag(user.uuid(), version),
        owners,
    })
}

impl MemberRow {
    fn into_view(self) -> MemberView {
        MemberView {
            user: UserId::from_uuid(self.user_id),
            email: self.email,
            display_name: self.display_name,
            role: OrgRole::parse(&self.role).unwrap_or(OrgRole::Viewer),
            etag: etag(self.user_id, self.version),
            joined_at: self.created_at,
        }
    }
}

/// A `usr_…` or `sa_…` id of a principal of the caller's organization
/// whose project roles the caller may change; its organization role is held
/// (FOR SHARE) until the caller's transaction ends, so a promotion to owner
/// meanwhile waits for the change.
async fn org_principal(tx: &mut sqlx::PgConnection, ctx: &RequestContext, text: &str) -> Result<Uuid> {
    let found = if let Ok(user) = text.parse::<UserId>() {
        store::memberships::share_role(&mut *tx, ctx.principal.org_id, user.uuid()).await?
    } else if let Ok(account) = text.parse::<ServiceAccountId>() {
        store::service_accounts::share_role(&mut *tx, ctx.principal.org_id, account.uuid()).await?
    } else {
        None
    };
    let (id, role) = found.ok_or_else(|| Error::not_found("member", text))?;
    // Project roles of an owner (and the certificates they back) are an owner's to change.
    if !moke_iam::may_change_holder_of(&ctx.principal, OrgRole::parse(&role).unwrap_or(OrgRole::Owner)) {
        return Err(Error::Forbidden);
    }
    Ok(id)
}

fn principal_text(app_kind_is_user: bool, id: Uuid) -> String {
    if app_kind_is_user { UserId::from_uuid(id).to_string() } else { ServiceAccountId::from_uuid(id).to_string() }
}

impl App {
    /// `member_list`: the organization's people and their roles.
    pub async fn member_list(&self, ctx: &RequestContext, org: OrgId, page: PageRequest) -> Result<Page<MemberView>> {
        self.org_authorized(ctx, org, Action::ReadMembers).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::memberships::list(&mut conn, org.uuid(), &page).await?;
        Ok(page.page(rows.into_iter().map(MemberRow::into_view).collect(), |m| m.user.uuid()))
    }

    /// `member_update`: changes a member's role; `if_match` guards against lost updates.
    pub async fn member_update(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        user: UserId,
        if_match: Option<&str>,
        input: MemberUpdate,
    ) -> Result<MemberView> {
        self.org_authorized(ctx, org, Action::ManageMembers).await?;
        let mut v = Validator::new();
        let role = grantable_role(&mut v, ctx, "role", &input.role);
        v.finish()?;
        let role = role.expect("validated");
        check_role_grant(ctx, role)?;
        let mut tx = self.db().begin().await?;
        let LockedMember { role: current, etag: current_etag, owners } = lock_member(&mut tx, org, user).await?;
        if !moke_iam::may_change_holder_of(&ctx.principal, current) {
            return Err(Error::Forbidden);
        }
        check_if_match(if_match, &current_etag)?;
        if current == OrgRole::Owner && role != OrgRole::Owner && owners <= 1 {
            return Err(Error::conflict(
                "last_owner",
                "the last owner cannot be demoted; make someone else owner first",
            ));
        }
        let row = store::memberships::set_role(&mut tx, org.uuid(), user.uuid(), role.as_str()).await?;
        // Any permission taken away: certificates issued under the old role stop working.
        if moke_iam::role_loses(current, role) {
            crate::app::infra::clusters::pki::revoke_principal_credentials(
                self,
                &mut tx,
                ctx,
                org.uuid(),
                user.uuid(),
                &user.to_string(),
                "member_demoted",
                Reach::Organization,
            )
            .await?;
        }
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "member.role_change",
                resource_type: "member",
                resource_id: Some(user.to_string()),
                details: json!({ "from": current.as_str(), "to": role.as_str() }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        // Every gateway drops the member's cached principals (`moke_principals`).
        self.principal_cache().evict(user.uuid());
        Ok(row.into_view())
    }

    /// `member_remove`: removes a member, or lets a member leave.
    pub async fn member_remove(&self, ctx: &RequestContext, org: OrgId, user: UserId) -> Result<()> {
        let leaving = ctx.principal.id == user.uuid() && ctx.principal.kind == moke_iam::PrincipalKind::User;
        let action = if leaving { Action::Read } else { Action::ManageMembers };
        self.org_authorized(ctx, org, action).await?;
        // Leaving is the person's own act: not one for a credential limited
        // to a project, some actions or some minutes.
        if leaving && (ctx.principal.scope != moke_iam::Scope::default() || ctx.principal.expires_at.is_some()) {
            return Err(Error::refused(
                "exceeds_credential",
                "refused: leave an organization signed in, or with a token that is neither limited nor expiring",
            ));
        }
        let mut tx = self.db().begin().await?;
        let LockedMember { role: current, owners, .. } = lock_member(&mut tx, org, user).await?;
        if !leaving && !moke_iam::may_change_holder_of(&ctx.principal, current) {
            return Err(Error::Forbidden);
        }
        if current == OrgRole::Owner && owners <= 1 {
            return Err(Error::conflict("last_owner", "the last owner cannot leave; make someone else owner first"));
        }
        store::memberships::delete(&mut tx, org.uuid(), user.uuid()).await?;
        store::memberships::delete_project_roles_in(&mut tx, org.uuid(), user.uuid()).await?;
        let reason = if leaving { "member_left" } else { "member_removed" };
        crate::app::infra::clusters::pki::revoke_principal_credentials(
            self,
            &mut tx,
            ctx,
            org.uuid(),
            user.uuid(),
            &user.to_string(),
            reason,
            Reach::Organization,
        )
        .await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: if leaving { "member.leave" } else { "member.remove" },
                resource_type: "member",
                resource_id: Some(user.to_string()),
                details: json!({ "role": current.as_str() }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        self.principal_cache().evict(user.uuid());
        Ok(())
    }

    /// `project_member_list`: who holds a role in the project, in principal-id order.
    pub async fn project_member_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        page: PageRequest,
    ) -> Result<Page<ProjectMemberView>> {
        let mut conn = self.db().acquire().await?;
        let row = crate::app::infra::projects::lookup(&mut conn, ctx, project, Action::Read, Lock::None).await?;

        let members = store::memberships::project_members(&mut conn, row.id, &page).await?;
        let Page { items, next_page } = page.page(members, |m| m.principal_id);
        let items = items
            .into_iter()
            .map(|m| ProjectMemberView {
                principal: principal_text(m.is_user, m.principal_id),
                role: ProjectRole::parse(&m.role).unwrap_or(ProjectRole::Viewer),
                etag: etag(m.principal_id, m.version),
                created_at: m.created_at,
            })
            .collect();
        Ok(Page { items, next_page })
    }

    /// `project_member_set`: grants (or changes) a project role of a member
    /// or service account of the organization; `if_match` guards against
    /// lost updates (while no role is granted, any `If-Match` fails).
    pub async fn project_member_set(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        principal: &str,
        if_match: Option<&str>,
        input: ProjectMemberSet,
    ) -> Result<ProjectMemberView> {
        let mut conn = self.db().acquire().await?;
        let row =
            crate::app::infra::projects::lookup(&mut conn, ctx, project, Action::ManageProjectMembers, Lock::None)
                .await?;
        drop(conn);
        let role = ProjectRole::parse(&input.role)
            .ok_or_else(|| Error::invalid_field("role", "invalid", "must be admin, developer or viewer"))?;
        check_project_role_grant(ctx, row.id, role)?;
        let mut tx = self.db().begin().await?;
        let member = org_principal(&mut tx, ctx, principal).await?;
        let locked = store::memberships::lock_project_role(&mut tx, row.id, member).await?;
        let current = locked.as_ref().map(|(_, version)| etag(member, *version));
        crate::app::check_if_match_creating(if_match, current.as_deref())?;
        let previous = locked.and_then(|(role, _)| ProjectRole::parse(&role));
        let set = store::memberships::set_project_role(&mut tx, row.id, row.org_id, member, role.as_str()).await?;
        // A permission taken away: certificates issued under the old role stop working.
        if moke_iam::project_role_loses(previous, Some(role)) {
            crate::app::infra::clusters::pki::revoke_principal_credentials(
                self,
                &mut tx,
                ctx,
                row.org_id,
                member,
                principal,
                "project_role_lowered",
                Reach::Project(row.id),
            )
            .await?;
        }
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "project_member.set",
                resource_type: "project",
                resource_id: Some(crate::ids::ProjectId::from_uuid(row.id).to_string()),
                details: json!({ "principal": principal, "role": role.as_str() }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        self.principal_cache().evict(member);
        Ok(ProjectMemberView {
            principal: principal.to_string(),
            role,
            etag: etag(member, set.version),
            created_at: set.created_at,
        })
    }

    /// `project_member_remove`: takes a project role away.
    pub async fn project_member_remove(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        principal: &str,
    ) -> Result<()> {
        let mut conn = self.db().acquire().await?;
        let row =
            crate::app::infra::projects::lookup(&mut conn, ctx, project, Action::ManageProjectMembers, Lock::None)
                .await?;
        drop(conn);
        let mut tx = self.db().begin().await?;
        let member = org_principal(&mut tx, ctx, principal).await?;
        let removed = store::memberships::delete_project_role(&mut tx, row.id, member)
            .await?
            .ok_or_else(|| Error::not_found("project member", principal))?;
        crate::app::infra::clusters::pki::revoke_principal_credentials(
            self,
            &mut tx,
            ctx,
            row.org_id,
            member,
            principal,
            "project_role_removed",
            Reach::Project(row.id),
        )
        .await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "project_member.remove",
                resource_type: "project",
                resource_id: Some(crate::ids::ProjectId::from_uuid(row.id).to_string()),
                details: json!({ "principal": principal, "role": removed }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        self.principal_cache().evict(member);
        Ok(())
    }
}

/// Where billing news of `org` goes: its owners' and billing members'
/// verified addresses.
pub(crate) async fn billing_contacts(
    conn: &mut sqlx::PgConnection,
    org: uuid::Uuid,
) -> crate::app::Result<Vec<String>> {
    super::store::memberships::verified_addresses_of(conn, org, &["owner", "billing"]).await
}

/// Where news of `org`'s clusters that owners must act on goes (automatic
/// upgrades): its owners' verified addresses.
pub(crate) async fn owner_contacts(conn: &mut sqlx::PgConnection, org: uuid::Uuid) -> crate::app::Result<Vec<String>> {
    super::store::memberships::verified_addresses_of(conn, org, &["owner"]).await
}

/// The name `org`'s people know it by, for mails about it (one person may
/// belong to several organizations).
pub(crate) async fn org_display_name(conn: &mut sqlx::PgConnection, org: uuid::Uuid) -> crate::app::Result<String> {
    super::store::orgs::display_name(conn, org).await
}
