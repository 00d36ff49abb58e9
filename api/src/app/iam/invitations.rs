//! Invitations: an e-mailed, expiring, single-use offer of membership.

use chrono::Utc;
use moke_iam::token::{plain_hash, random_secret};
use moke_iam::{Action, OrgRole, PrincipalKind};
use serde_json::json;
use uuid::Uuid;

use crate::app::error::Validator;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::mail::Mail;
use crate::app::kernel::quotas::Counted;
use crate::app::{App, Error, PageRequest, RequestContext, Result, validate};
use crate::ids::{InvitationId, OrgId};
use crate::model::*;

struct InvitationRow {
    id: Uuid,
    email: String,
    role: String,
    created_at: chrono::DateTime<Utc>,
    expires_at: chrono::DateTime<Utc>,
    accepted_at: Option<chrono::DateTime<Utc>>,
    revoked_at: Option<chrono::DateTime<Utc>>,
}

impl InvitationRow {
    fn into_view(self) -> InvitationView {
        InvitationView {
            id: InvitationId::from_uuid(self.id),
            email: self.email,
            role: OrgRole::parse(&self.role).unwrap_or(OrgRole::Viewer),
            created_at: self.created_at,
            expires_at: self.expires_at,
            accepted_at: self.accepted_at,
            revoked_at: self.revoked_at,
        }
    }
}

impl App {
    /// `invitation_create`: invites an address with a role (not above the inviter's).
    pub async fn invitation_create(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        input: InvitationCreate,
    ) -> Result<InvitationView> {
        self.org_authorized(ctx, org, Action::ManageMembers).await?;
        let mut v = Validator::new();
        let email = validate::email(&mut v, "email", &input.email);
        let role = crate::app::iam::members::grantable_role(&mut v, ctx, "role", &input.role);
        v.finish()?;
        let role = role.expect("validated");
        crate::app::iam::members::check_role_grant(ctx, role)?;
        let input = &input;
        let email = &email;
        self.idempotent(ctx, "invitation_create", &(org, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let quotas = &self.config().quotas;
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org.uuid()).await?;
            crate::app::kernel::quotas::check_count(&mut tx, quotas, org.uuid(), Counted::PendingInvitations, 1)
                .await?;
            crate::app::kernel::quotas::check_count(&mut tx, quotas, org.uuid(), Counted::InvitationsLastHour, 1)
                .await?;
            let org_name = sqlx::query_scalar!("SELECT display_name FROM organizations WHERE id = $1", org.uuid())
                .fetch_one(&mut *tx)
                .await?;
            let secret = random_secret(43);
            let days = self.config().auth.invitation_days;
            let row = sqlx::query_as!(
                InvitationRow,
                "INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 RETURNING id, email, role, created_at, expires_at, accepted_at, revoked_at",
                InvitationId::generate().uuid(),
                org.uuid(),
                email,
                role.as_str(),
                &plain_hash(&secret)[..],
                ctx.principal.id,
                Utc::now() + chrono::Duration::days(days),
            )
            .fetch_one(&mut *tx)
            .await?;
            let body = format!(
                "You have been invited to join {org_name} on Moke as {}.\n\nSign in (or sign up with this \
                 address) and accept within {days} days:\n\n{}/invitations/accept?token={secret}\n\nOr send the \
                 token to POST /v1/invitations/accept: {secret}\n",
                role.as_str(),
                self.config().http.public_url
            );
            let subject = format!("You are invited to {org_name} on Moke");
            let mail = Mail { kind: "invitation", to: email, subject: &subject, body: &body, org: Some(org.uuid()) };
            crate::app::kernel::mail::enqueue(&mut tx, self, mail).await?;
            let view = row.into_view();
            audit::record(
                &mut tx,
                ctx,
                AuditRecord {
                    action: "invitation.create",
                    resource_type: "invitation",
                    resource_id: Some(view.id.to_string()),
                    details: json!({ "email": email, "role": role.as_str() }),
                },
            )
            .await?;
            claim.complete(&mut tx, 201, &view).await?;
            tx.commit().await?;
            Ok(view)
        })
        .await
    }

    /// `invitation_list`.
    pub async fn invitation_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<InvitationView>> {
        self.org_authorized(ctx, org, Action::ReadMembers).await?;
        let rows = sqlx::query_as!(
            InvitationRow,
            "SELECT id, email, role, created_at, expires_at, accepted_at, revoked_at FROM invitations
             WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
            org.uuid(),
            page.after,
            page.fetch_limit(),
        )
        .fetch_all(self.db())
        .await?;
        Ok(page.page(rows.into_iter().map(InvitationRow::into_view).collect(), |i| i.id.uuid()))
    }

    /// `invitation_delete`: revokes a pending invitation.
    pub async fn invitation_delete(&self, ctx: &RequestContext, org: OrgId, id: InvitationId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageMembers).await?;
        let mut tx = self.db().begin().await?;
        sqlx::query!(
            "UPDATE invitations SET revoked_at = COALESCE(revoked_at, now())
             WHERE org_id = $1 AND id = $2 AND accepted_at IS NULL RETURNING id",
            org.uuid(),
            id.uuid(),
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| Error::not_found("invitation", id.to_string()))?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "invitation.revoke",
                resource_type: "invitation",
                resource_id: Some(id.to_string()),
                details: json!({}),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// `invitation_accept`: the signed-in person whose address was invited
    /// joins the organization. The token works once.
    pub async fn invitation_accept(&self, ctx: &RequestContext, input: LinkToken) -> Result<MembershipSummary> {
        if ctx.principal.kind != PrincipalKind::User {
            return Err(Error::Forbidden);
        }
        // Joining another organization is the person's own act, not a
        // token's; and a session from an identity provider acts only there.
        if !matches!(ctx.principal.credential, moke_iam::Credential::Session { sso_org: None, .. }) {
            return Err(Error::refused(
                "password_session_required",
                "sign in with your password to accept invitations (API tokens and SSO sessions act only in \
                 their own organization)",
            ));
        }
        let mut tx = self.db().begin().await?;
        let invitation = sqlx::query!(
            "SELECT i.id, i.org_id, i.email, i.role, o.name AS org_name
             FROM invitations i JOIN organizations o ON o.id = i.org_id
             WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
             FOR UPDATE OF i",
            &plain_hash(&input.token)[..],
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| {
            Error::invalid_field("token", "invalid_token", "unknown, used, revoked or expired invitation")
        })?;
        let user = sqlx::query!("SELECT email, email_verified_at FROM users WHERE id = $1", ctx.principal.id)
            .fetch_one(&mut *tx)
            .await?;
        let email = user.email;
        if email != invitation.email {
            return Err(Error::invalid_field(
                "token",
                "wrong_account",
                "this invitation is for another e-mail address",
            ));
        }
        // An address nobody proved is not matched to an invitation (pre-hijack).
        if user.email_verified_at.is_none() {
            return Err(Error::refused(
                "email_unverified",
                "prove your e-mail address first (reset your password: the mailed link proves it), then accept",
            ));
        }
        let joined = sqlx::query!(
            "INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING role",
            invitation.org_id,
            ctx.principal.id,
            invitation.role,
        )
        .fetch_optional(&mut *tx)
        .await?;
        if joined.is_none() {
            return Err(Error::conflict("already_member", "you already belong to this organization"));
        }
        sqlx::query!(
            "UPDATE invitations SET accepted_at = now(), accepted_by = $2 WHERE id = $1",
            invitation.id,
            ctx.principal.id
        )
        .execute(&mut *tx)
        .await?;
        let role = OrgRole::parse(&invitation.role).unwrap_or(OrgRole::Viewer);
        let actor = self.user_context(ctx, ctx.principal.id, invitation.org_id, role);
        audit::record(
            &mut tx,
            &actor,
            AuditRecord {
                action: "invitation.accept",
                resource_type: "invitation",
                resource_id: Some(InvitationId::from_uuid(invitation.id).to_string()),
                details: json!({ "email": email, "role": invitation.role }),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(MembershipSummary {
            organization: OrgId::from_uuid(invitation.org_id),
            organization_name: invitation.org_name,
            role,
        })
    }
}
