//! Invitations: an e-mailed, expiring, single-use offer of membership.

use chrono::Utc;
use moke_iam::token::{plain_hash, random_secret};
use moke_iam::{Action, OrgRole, PrincipalKind};
use serde_json::json;

use crate::app::error::Validator;
use crate::app::iam::store;
use crate::app::iam::store::invitations::InvitationRow;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::mail::Mail;
use crate::app::kernel::quotas::Counted;
use crate::app::{App, Error, PageRequest, RequestContext, Result, validate};
use crate::ids::{InvitationId, OrgId};
use crate::model::*;

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
            let config = self.config();
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org.uuid()).await?;
            crate::app::kernel::quotas::check_count(&mut tx, config, org.uuid(), Counted::PendingInvitations, 1)
                .await?;
            crate::app::kernel::quotas::check_count(&mut tx, config, org.uuid(), Counted::InvitationsLastHour, 1)
                .await?;
            let org_name = crate::app::kernel::mail::quoted(&store::orgs::display_name(&mut tx, org.uuid()).await?);
            let secret = random_secret(43);
            let days = self.config().auth.invitation_days;
            let new = store::invitations::NewInvitation {
                id: InvitationId::generate().uuid(),
                org: org.uuid(),
                email,
                role: role.as_str(),
                token_hash: &plain_hash(&secret)[..],
                invited_by: ctx.principal.id,
                expires_at: Utc::now() + chrono::Duration::days(days),
            };
            let row = store::invitations::insert(&mut tx, new).await?;
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
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    pub async fn invitation_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<InvitationView>> {
        self.org_authorized(ctx, org, Action::ReadMembers).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::invitations::list(&mut conn, org.uuid(), &page).await?;
        Ok(page.page(rows.into_iter().map(InvitationRow::into_view).collect(), |i| i.id.uuid()))
    }

    /// `invitation_delete`: revokes a pending invitation.
    pub async fn invitation_delete(&self, ctx: &RequestContext, org: OrgId, id: InvitationId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageMembers).await?;
        let mut tx = self.db().begin().await?;
        if !store::invitations::revoke(&mut tx, org.uuid(), id.uuid()).await? {
            return Err(Error::not_found("invitation", id.to_string()));
        }
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
        self.commit(ctx, tx).await?;
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
        let invitation =
            store::invitations::lock_pending(&mut tx, &plain_hash(&input.token)[..]).await?.ok_or_else(|| {
                Error::invalid_field("token", "invalid_token", "unknown, used, revoked or expired invitation")
            })?;
        let user = store::users::get(&mut tx, ctx.principal.id).await?;
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
        if !store::memberships::join_invited(&mut tx, invitation.org_id, ctx.principal.id, &invitation.role).await? {
            return Err(Error::conflict("already_member", "you already belong to this organization"));
        }
        store::invitations::accept(&mut tx, invitation.id, ctx.principal.id).await?;
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
        self.commit(ctx, tx).await?;
        Ok(MembershipSummary {
            organization: OrgId::from_uuid(invitation.org_id),
            organization_name: invitation.org_name,
            role,
        })
    }
}
