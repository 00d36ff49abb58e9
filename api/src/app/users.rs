//! People: sign-up, e-mail verification, password reset, and who-am-I.

use chrono::Utc;
use moke_iam::token::{plain_hash, random_secret};
use moke_iam::{OrgRole, PrincipalKind, password};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::audit::{self, AuditRecord};
use super::error::{Validator, or_unique};
use super::{App, Error, RequestContext, Result, validate};
use crate::ids::{OrgId, UserId};
use crate::model::*;

pub(super) struct UserRow {
    pub id: Uuid,
    pub email: String,
    pub display_name: String,
    pub email_verified_at: Option<chrono::DateTime<Utc>>,
    pub created_at: chrono::DateTime<Utc>,
}

impl UserRow {
    pub fn into_view(self) -> UserView {
        UserView {
            id: UserId::from_uuid(self.id),
            email: self.email,
            display_name: self.display_name,
            email_verified: self.email_verified_at.is_some(),
            created_at: self.created_at,
        }
    }
}

/// Hashes a password off the async workers (argon2id takes tens of milliseconds).
pub(super) async fn hash_password(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || password::hash(&password))
        .await
        .map_err(|e| Error::Internal(anyhow::anyhow!("password hashing task: {e}")))
}

/// Creates a single-use e-mail token for `purpose` and returns its text.
pub(super) async fn email_token(
    tx: &mut PgConnection,
    user: Uuid,
    purpose: &str,
    lifetime: chrono::Duration,
) -> Result<String> {
    let secret = random_secret(43);
    sqlx::query!(
        "INSERT INTO email_tokens (token_hash, user_id, purpose, expires_at) VALUES ($1, $2, $3, $4)",
        &plain_hash(&secret)[..],
        user,
        purpose,
        Utc::now() + lifetime,
    )
    .execute(tx)
    .await?;
    Ok(secret)
}

/// Spends a single-use e-mail token; its user, or an invalid-field error.
async fn spend_email_token(tx: &mut PgConnection, token: &str, purpose: &str) -> Result<Uuid> {
    sqlx::query_scalar!(
        "UPDATE email_tokens SET used_at = now()
         WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
         RETURNING user_id",
        &plain_hash(token)[..],
        purpose,
    )
    .fetch_optional(tx)
    .await?
    .ok_or_else(|| Error::invalid_field("token", "invalid_token", "unknown, used or expired link"))
}

impl App {
    /// `signup`: a user, a new organization and its owner membership in one
    /// transaction; a verification e-mail; and a signed-in session.
    pub async fn signup(&self, ctx: &RequestContext, input: SignupRequest) -> Result<SignupResponse> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut v = Validator::new();
        let email = validate::email(&mut v, "email", &input.email);
        if let Err(reason) = password::check_policy(&input.password, &email) {
            v.push("password", "weak_password", reason);
        }
        validate::display_name(&mut v, "display_name", &input.display_name);
        validate::name(&mut v, "organization_name", &input.organization_name);
        v.finish()?;
        let password_hash = hash_password(input.password.clone()).await?;
        let mut tx = self.db().begin().await?;
        let user_id = UserId::generate();
        let user = sqlx::query_as!(
            UserRow,
            "INSERT INTO users (id, email, display_name, password_hash) VALUES ($1, $2, $3, $4)
             RETURNING id, email, display_name, email_verified_at, created_at",
            user_id.uuid(),
            email,
            input.display_name.trim(),
            password_hash,
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(or_unique(|| {
            Error::conflict("email_taken", "an account with this e-mail address exists; sign in instead")
        }))?;
        let org = sqlx::query!(
            "INSERT INTO organizations (id, name, display_name) VALUES ($1, $2, $3) RETURNING id",
            OrgId::generate().uuid(),
            input.organization_name,
            input.organization_name,
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(or_unique(|| {
            Error::invalid_field("organization_name", "taken", "an organization with this name exists")
        }))?
        .id;
        sqlx::query!("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')", org, user.id)
            .execute(&mut *tx)
            .await?;
        let verify = email_token(
            &mut tx,
            user.id,
            "verify_email",
            chrono::Duration::hours(self.config().auth.email_verification_hours),
        )
        .await?;
        let link = format!("{}/verify-email?token={verify}", self.config().http.public_url);
        super::mail::enqueue(
            &mut tx,
            self,
            "verify_email",
            &user.email,
            "Confirm your e-mail address for Moke",
            &format!(
                "Hello {},\n\nConfirm your address by opening this link (valid for {} hours):\n\n{link}\n\n\
                 Or send the token to POST /v1/auth/verify-email: {verify}\n\nIf you did not sign up, ignore this message.\n",
                user.display_name,
                self.config().auth.email_verification_hours
            ),
        )
        .await?;
        let actor = self.user_context(ctx, user.id, org, OrgRole::Owner);
        audit::record(
            &mut tx,
            &actor,
            AuditRecord {
                action: "user.signup",
                resource_type: "user",
                resource_id: Some(UserId::from_uuid(user.id).to_string()),
                details: json!({ "email": user.email, "organization": input.organization_name }),
            },
        )
        .await?;
        let session = self.start_session(&mut tx, &actor, user.id, org).await?;
        tx.commit().await?;
        let organization = self.org_view(&actor, OrgId::from_uuid(org)).await?;
        Ok(SignupResponse { user: user.into_view(), organization, session })
    }

    /// A context acting as `user` in `org` (for audit records written
    /// before the caller holds a token).
    pub(super) fn user_context(&self, meta: &RequestContext, user: Uuid, org: Uuid, role: OrgRole) -> RequestContext {
        let mut ctx = meta.clone();
        ctx.principal = moke_iam::Principal {
            id: user,
            kind: PrincipalKind::User,
            credential: moke_iam::Credential::None,
            org_id: org,
            role,
            project_roles: Vec::new(),
            scope: moke_iam::Scope::default(),
        };
        ctx
    }

    /// `email_verify`: confirms an address with the token from its e-mail.
    pub async fn email_verify(&self, ctx: &RequestContext, input: LinkToken) -> Result<UserView> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut tx = self.db().begin().await?;
        let user = spend_email_token(&mut tx, &input.token, "verify_email").await?;
        let row = sqlx::query_as!(
            UserRow,
            "UPDATE users SET email_verified_at = COALESCE(email_verified_at, now()), updated_at = now()
             WHERE id = $1 RETURNING id, email, display_name, email_verified_at, created_at",
            user,
        )
        .fetch_one(&mut *tx)
        .await?;
        self.audit_in_user_orgs(&mut tx, ctx, user, "user.email_verified", "success", json!({})).await?;
        tx.commit().await?;
        Ok(row.into_view())
    }

    /// `password_reset_request`: mails a reset link if the address has an
    /// account. Answers the same either way, so addresses cannot be probed.
    pub async fn password_reset_request(&self, ctx: &RequestContext, input: PasswordResetRequest) -> Result<()> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut v = Validator::new();
        let email = validate::email(&mut v, "email", &input.email);
        v.finish()?;
        let mut tx = self.db().begin().await?;
        let user =
            sqlx::query!("SELECT id, display_name FROM users WHERE email = $1", email).fetch_optional(&mut *tx).await?;
        if let Some(user) = user {
            let minutes = self.config().auth.password_reset_minutes;
            let token = email_token(&mut tx, user.id, "password_reset", chrono::Duration::minutes(minutes)).await?;
            super::mail::enqueue(
                &mut tx,
                self,
                "password_reset",
                &email,
                "Reset your Moke password",
                &format!(
                    "Hello {},\n\nSomeone asked to reset the password of this account. If it was you, open this \
                     link within {minutes} minutes:\n\n{}/reset-password?token={token}\n\nOr send the token to \
                     POST /v1/auth/password-reset/confirm: {token}\n\nIf it was not you, ignore this message; \
                     your password is unchanged.\n",
                    user.display_name,
                    self.config().http.public_url
                ),
            )
            .await?;
            self.audit_in_user_orgs(&mut tx, ctx, user.id, "user.password_reset_requested", "success", json!({}))
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// `password_reset_confirm`: sets a new password with a reset token and
    /// ends every session of the account.
    pub async fn password_reset_confirm(&self, ctx: &RequestContext, input: PasswordResetConfirm) -> Result<()> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut tx = self.db().begin().await?;
        let user = spend_email_token(&mut tx, &input.token, "password_reset").await?;
        let email = sqlx::query_scalar!("SELECT email FROM users WHERE id = $1", user).fetch_one(&mut *tx).await?;
        let mut v = Validator::new();
        if let Err(reason) = password::check_policy(&input.password, &email) {
            v.push("password", "weak_password", reason);
        }
        v.finish()?;
        let hash = hash_password(input.password.clone()).await?;
        sqlx::query!(
            "UPDATE users SET password_hash = $2, email_verified_at = COALESCE(email_verified_at, now()),
                 updated_at = now(), version = version + 1 WHERE id = $1",
            user,
            hash,
        )
        .execute(&mut *tx)
        .await?;
        sqlx::query!(
            "UPDATE sessions SET revoked_at = now(), revoked_reason = 'password_reset'
             WHERE user_id = $1 AND revoked_at IS NULL",
            user,
        )
        .execute(&mut *tx)
        .await?;
        sqlx::query!("DELETE FROM login_failures WHERE email = $1", email).execute(&mut *tx).await?;
        self.audit_in_user_orgs(&mut tx, ctx, user, "user.password_reset", "success", json!({})).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records a security event about `user` in each organization they
    /// belong to (or in no organization when they belong to none).
    pub(super) async fn audit_in_user_orgs(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        user: Uuid,
        action: &str,
        outcome: &str,
        details: serde_json::Value,
    ) -> Result<()> {
        let orgs =
            sqlx::query!("SELECT org_id, role FROM memberships WHERE user_id = $1", user).fetch_all(&mut *tx).await?;
        let record = |details: serde_json::Value| AuditRecord {
            action,
            resource_type: "user",
            resource_id: Some(UserId::from_uuid(user).to_string()),
            details,
        };
        if orgs.is_empty() {
            let actor = self.user_context(ctx, user, Uuid::nil(), OrgRole::Viewer);
            return audit::insert(tx, &actor, None, outcome, record(details)).await;
        }
        for org in orgs {
            let role = OrgRole::parse(&org.role).unwrap_or(OrgRole::Viewer);
            let actor = self.user_context(ctx, user, org.org_id, role);
            audit::insert(tx, &actor, org.org_id, outcome, record(details.clone())).await?;
        }
        Ok(())
    }

    /// `me`: the caller, its current organization and role, and (for people)
    /// every organization they belong to.
    pub async fn me(&self, ctx: &RequestContext) -> Result<MeView> {
        let principal = &ctx.principal;
        let (kind, user, memberships) = match principal.kind {
            PrincipalKind::User => {
                let user = sqlx::query_as!(
                    UserRow,
                    "SELECT id, email, display_name, email_verified_at, created_at FROM users WHERE id = $1",
                    principal.id,
                )
                .fetch_optional(self.db())
                .await?
                .ok_or(Error::Unauthenticated)?;
                let memberships = sqlx::query!(
                    "SELECT m.org_id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
                     WHERE m.user_id = $1 ORDER BY m.created_at",
                    principal.id,
                )
                .fetch_all(self.db())
                .await?
                .into_iter()
                .map(|m| MembershipSummary {
                    organization: OrgId::from_uuid(m.org_id),
                    organization_name: m.name,
                    role: OrgRole::parse(&m.role).unwrap_or(OrgRole::Viewer),
                })
                .collect();
                ("user", Some(user.into_view()), memberships)
            }
            _ => ("service_account", None, Vec::new()),
        };
        Ok(MeView {
            kind: kind.to_string(),
            id: super::principal_ref(principal),
            user,
            organization: OrgId::from_uuid(principal.org_id),
            role: principal.role,
            memberships,
        })
    }
}
