//! People: sign-up, e-mail verification, password reset, and who-am-I.

use chrono::Utc;
use moke_iam::token::{plain_hash, random_secret};
use moke_iam::{OrgRole, PrincipalKind, password};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::Validator;
use crate::app::iam::sessions::SessionMethod;
use crate::app::iam::store;
use crate::app::iam::store::eviction::{made_by, reached_orgs};
use crate::app::iam::store::users::UserRow;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::mail::Mail;
use crate::app::{App, Error, RequestContext, Result, validate};
use crate::ids::{OrgId, UserId};
use crate::model::*;

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
pub(in crate::app) async fn hash_password(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || password::hash(&password))
        .await
        .map_err(|e| Error::Internal(anyhow::anyhow!("password hashing task: {e}")))
}

/// Creates a single-use e-mail token for `purpose` and returns its text.
pub(in crate::app) async fn email_token(
    tx: &mut PgConnection,
    user: Uuid,
    purpose: &str,
    lifetime: chrono::Duration,
) -> Result<String> {
    let secret = random_secret(43);
    store::users::insert_email_token(tx, &plain_hash(&secret)[..], user, purpose, Utc::now() + lifetime).await?;
    Ok(secret)
}

/// The most password-reset messages one address receives in an hour.
const RESET_MAILS_PER_HOUR: i64 = 5;
/// The most sign-up messages one address receives in an hour.
const SIGNUP_MAILS_PER_HOUR: i64 = 5;
/// Wrong passwords a sign-up link takes before it ends.
const SIGNUP_CONFIRM_ATTEMPTS: i32 = 5;

/// Spends a single-use e-mail token; its user, or an invalid-field error.
async fn spend_email_token(tx: &mut PgConnection, token: &str, purpose: &str) -> Result<Uuid> {
    store::users::spend_email_token(tx, &plain_hash(token)[..], purpose)
        .await?
        .ok_or_else(|| Error::invalid_field("token", "invalid_token", "unknown, used or expired link"))
}

impl App {
    /// `signup`: asks for an account. The account, its organization and a
    /// session come into being when the address's owner follows the mailed
    /// link ([`App::signup_confirm`]). The answer is the same, and costs the
    /// same work, whether or not the address already has an account (its
    /// owner is mailed a note instead), so sign-up tells nobody which
    /// addresses have accounts.
    pub async fn signup(&self, ctx: &RequestContext, input: SignupRequest) -> Result<SignupAccepted> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut v = Validator::new();
        let email = validate::email(&mut v, "email", &input.email);
        if let Err(reason) = password::check_policy(&input.password, &email) {
            v.push("password", "weak_password", reason);
        }
        validate::display_name(&mut v, "display_name", &input.display_name);
        validate::name(&mut v, "organization_name", &input.organization_name);
        v.finish()?;
        // Organization names are public in sign-in URLs; a taken one says nothing about any account.
        let taken = store::orgs::id_by_name(&mut *self.db().acquire().await?, &input.organization_name).await?;
        if taken.is_some() {
            return Err(Error::invalid_field("organization_name", "taken", "an organization with this name exists"));
        }
        let password_hash = hash_password(input.password.clone()).await?;
        let parted = tokio::time::Instant::now();
        let hours = self.config().auth.email_verification_hours;
        let mut tx = self.db().begin().await?;
        let existing = store::users::find_by_email(&mut tx, &email, Lock::None).await?;
        let public_url = &self.config().http.public_url;
        let recent = store::signups::mails_this_hour(&mut tx, &email).await?;
        match &existing {
            _ if recent >= SIGNUP_MAILS_PER_HOUR => {
                tracing::info!("sign-up mail not sent: this address was mailed enough this hour");
            }
            None => {
                let token = random_secret(43);
                let new = store::signups::NewSignup {
                    token_hash: &plain_hash(&token)[..],
                    email: &email,
                    display_name: input.display_name.trim(),
                    password_hash: &password_hash,
                    organization_name: &input.organization_name,
                    expires_at: Utc::now() + chrono::Duration::hours(hours),
                };
                store::signups::insert(&mut tx, new).await?;
                let body = format!(
                    "Hello {},\n\nConfirm your address to create your Moke account and the organization {} \
                     (the link is valid for {hours} hours):\n\n{public_url}/signup/confirm?token={token}\n\n\
                     Or send the token to POST /v1/signup/confirm: {token}\n\nIf you did not sign up, ignore this \
                     message; no account is made.\n",
                    input.display_name.trim(),
                    input.organization_name
                );
                let mail =
                    Mail { kind: "signup", to: &email, subject: "Confirm your Moke sign-up", body: &body, org: None };
                crate::app::kernel::mail::enqueue(&mut tx, self, mail).await?;
            }
            Some(user) => {
                let body = format!(
                    "Hello {},\n\nSomeone, perhaps you, tried to sign up for Moke with this address. It already has \
                     an account: sign in at {public_url}, or if you forgot the password, reset it at \
                     {public_url}/reset-password.\n\nIf it was not you, ignore this message; nothing changed.\n",
                    user.display_name
                );
                let mail = Mail {
                    kind: "signup_existing",
                    to: &email,
                    subject: "Your Moke account already exists",
                    body: &body,
                    org: None,
                };
                crate::app::kernel::mail::enqueue(&mut tx, self, mail).await?;
            }
        }
        let mut actor = ctx.clone();
        if let Some(user) = &existing {
            actor = self.user_context(ctx, user.id, Uuid::nil(), OrgRole::Viewer);
        }
        audit::insert(
            &mut tx,
            &actor,
            None,
            "success",
            AuditRecord {
                action: "user.signup_requested",
                resource_type: "user",
                resource_id: existing.as_ref().map(|u| UserId::from_uuid(u.id).to_string()),
                details: json!({ "email": email, "existing_account": existing.is_some() }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        crate::app::answer_uniformly(parted).await;
        Ok(SignupAccepted {
            email,
            detail: "check your e-mail: the link in it creates your account and signs you in".to_string(),
        })
    }

    /// `signup_confirm`: the mailed sign-up link. Creates the account (its
    /// address verified by this very link), the organization it owns, and a
    /// session; the link works once.
    pub async fn signup_confirm(&self, ctx: &RequestContext, input: SignupConfirm) -> Result<SignupResponse> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        if let Some(name) = &input.organization_name {
            let mut v = Validator::new();
            validate::name(&mut v, "organization_name", name);
            v.finish()?;
        }
        let mut tx = self.db().begin().await?;
        let request = store::signups::lock_live(&mut tx, &plain_hash(&input.token)[..]).await?.ok_or_else(|| {
            Error::invalid_field("token", "invalid_token", "unknown, used or expired link; sign up again")
        })?;
        // Only whoever chose the password may finish: an address's owner
        // clicking a link someone else asked for makes no account.
        let (attempt, stored) = (input.password.clone(), request.password_hash.clone());
        let matches = tokio::task::spawn_blocking(move || password::verify(&attempt, &stored))
            .await
            .map_err(|e| Error::Internal(anyhow::anyhow!("password check task: {e}")))?;
        if !matches {
            store::signups::wrong_password(&mut tx, &plain_hash(&input.token)[..], SIGNUP_CONFIRM_ATTEMPTS).await?;
            self.commit(ctx, tx).await?;
            return Err(Error::invalid_field(
                "password",
                "wrong_password",
                "not the password chosen when signing up (after 5 wrong ones the link ends)",
            ));
        }
        store::signups::spend(&mut tx, &plain_hash(&input.token)[..]).await?;
        let organization_name = input.organization_name.clone().unwrap_or(request.organization_name);
        let user_id = UserId::generate();
        let user = store::users::insert_verified(
            &mut tx,
            user_id.uuid(),
            &request.email,
            &request.display_name,
            &request.password_hash,
        )
        .await?;
        let org = store::orgs::insert_for_signup(&mut tx, OrgId::generate().uuid(), &organization_name).await?;
        store::memberships::insert_owner(&mut tx, org, user.id).await?;
        let actor = self.user_context(ctx, user.id, org, OrgRole::Owner);
        audit::record(
            &mut tx,
            &actor,
            AuditRecord {
                action: "user.signup",
                resource_type: "user",
                resource_id: Some(UserId::from_uuid(user.id).to_string()),
                details: json!({ "email": user.email, "organization": organization_name }),
            },
        )
        .await?;
        let session = self.start_session(&mut tx, &actor, user.id, org, SessionMethod::Password).await?;
        self.commit(ctx, tx).await?;
        let organization = self.org_view(&actor, OrgId::from_uuid(org)).await?;
        Ok(SignupResponse { user: user.into_view(), organization, session })
    }

    /// A context acting as `user` in `org` (for audit records written
    /// before the caller holds a token).
    pub(in crate::app) fn user_context(
        &self,
        meta: &RequestContext,
        user: Uuid,
        org: Uuid,
        role: OrgRole,
    ) -> RequestContext {
        let mut ctx = meta.clone();
        ctx.principal = moke_iam::Principal {
            id: user,
            kind: PrincipalKind::User,
            credential: moke_iam::Credential::None,
            org_id: org,
            role,
            project_roles: Vec::new(),
            scope: moke_iam::Scope::default(),
            expires_at: None,
        };
        ctx
    }

    /// `email_verify`: confirms an address with the token from its e-mail.
    pub async fn email_verify(&self, ctx: &RequestContext, input: LinkToken) -> Result<UserView> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut tx = self.db().begin().await?;
        let user = spend_email_token(&mut tx, &input.token, "verify_email").await?;
        let was_verified = store::users::lock_verified(&mut tx, user).await?;
        if !was_verified {
            // Whoever made this account before its address was proven may
            // hold its password, sessions and tokens (a pre-hijack): all end,
            // and the owner sets a password by resetting it.
            self.evict_everyone_but_the_owner(&mut tx, ctx, user).await?;
        }
        let row = store::users::mark_verified(&mut tx, user).await?;
        self.audit_in_user_orgs(&mut tx, ctx, user, "user.email_verified", "success", json!({})).await?;
        self.commit(ctx, tx).await?;
        if !was_verified {
            // Other gateways learn of the eviction by notification; this one
            // forgets at once, so the next request here already sees it (the
            // accounts and service accounts it reached are many: all go).
            self.principal_cache().clear();
        }
        Ok(row.into_view())
    }

    /// `password_reset_request`: mails the address a reset link if it has an
    /// account, or a note saying it has none. Same answer and the same work
    /// either way, so addresses cannot be probed; at most
    /// [`RESET_MAILS_PER_HOUR`] messages an hour reach one address.
    pub async fn password_reset_request(&self, ctx: &RequestContext, input: PasswordResetRequest) -> Result<()> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut v = Validator::new();
        let email = validate::email(&mut v, "email", &input.email);
        v.finish()?;
        let parted = tokio::time::Instant::now();
        let mut tx = self.db().begin().await?;
        let recent = store::users::reset_mails_this_hour(&mut tx, &email).await?;
        let user = store::users::find_by_email(&mut tx, &email, Lock::None).await?;
        let public_url = &self.config().http.public_url;
        if recent >= RESET_MAILS_PER_HOUR {
            tracing::info!("password reset mail not sent: this address was mailed enough this hour");
        } else if let Some(user) = &user {
            let minutes = self.config().auth.password_reset_minutes;
            let token = email_token(&mut tx, user.id, "password_reset", chrono::Duration::minutes(minutes)).await?;
            let body = format!(
                "Hello {},\n\nSomeone asked to reset the password of this account. If it was you, open this \
                 link within {minutes} minutes:\n\n{public_url}/reset-password?token={token}\n\nOr send the token \
                 to POST /v1/auth/password-reset/confirm: {token}\n\nIf it was not you, ignore this message; \
                 your password is unchanged.\n",
                user.display_name,
            );
            let mail = Mail {
                kind: "password_reset",
                to: &email,
                subject: "Reset your Moke password",
                body: &body,
                org: None,
            };
            crate::app::kernel::mail::enqueue(&mut tx, self, mail).await?;
        } else {
            let body = format!(
                "Hello,\n\nSomeone asked to reset the password of a Moke account at this address, but this address \
                 has no account. You can sign up at {public_url}/signup.\n\nIf it was not you, ignore this message.\n"
            );
            let mail = Mail {
                kind: "password_reset_unknown",
                to: &email,
                subject: "Reset your Moke password",
                body: &body,
                org: None,
            };
            crate::app::kernel::mail::enqueue(&mut tx, self, mail).await?;
        }
        match &user {
            Some(user) => {
                self.audit_in_user_orgs(&mut tx, ctx, user.id, "user.password_reset_requested", "success", json!({}))
                    .await?
            }
            None => {
                audit::insert(
                    &mut tx,
                    ctx,
                    None,
                    "success",
                    AuditRecord {
                        action: "user.password_reset_requested",
                        resource_type: "user",
                        resource_id: None,
                        details: json!({ "email": email, "reason": "unknown_email" }),
                    },
                )
                .await?
            }
        }
        self.commit(ctx, tx).await?;
        crate::app::answer_uniformly(parted).await;
        Ok(())
    }

    /// `password_reset_confirm`: sets a new password with a reset token and
    /// ends every session of the account.
    pub async fn password_reset_confirm(&self, ctx: &RequestContext, input: PasswordResetConfirm) -> Result<()> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut tx = self.db().begin().await?;
        let user = spend_email_token(&mut tx, &input.token, "password_reset").await?;
        let email = store::users::email(&mut tx, user).await?;
        let mut v = Validator::new();
        if let Err(reason) = password::check_policy(&input.password, &email) {
            v.push("password", "weak_password", reason);
        }
        v.finish()?;
        let hash = hash_password(input.password.clone()).await?;
        let was_verified = store::users::lock_verified(&mut tx, user).await?;
        if !was_verified {
            // Whoever made this account before its address was proven may
            // hold credentials and have set things up with it (a
            // pre-hijack): they all end, as when the address is proven.
            self.evict_everyone_but_the_owner(&mut tx, ctx, user).await?;
        }
        store::users::set_password_from_reset(&mut tx, user, &hash).await?;
        store::sessions::revoke_all_of_user(&mut tx, user, "password_reset").await?;
        store::users::clear_login_failures(&mut tx, &email).await?;
        // Whoever held the account may hold kubeconfigs from it: they end too.
        let orgs = store::memberships::org_ids_of_user(&mut tx, user).await?;
        for org in orgs {
            let text = UserId::from_uuid(user).to_string();
            let reach = crate::app::infra::clusters::pki::Reach::Organization;
            crate::app::infra::clusters::pki::revoke_principal_credentials(
                self,
                &mut tx,
                ctx,
                org,
                user,
                &text,
                "password_reset",
                reach,
            )
            .await?;
        }
        self.audit_in_user_orgs(&mut tx, ctx, user, "user.password_reset", "success", json!({})).await?;
        self.commit(ctx, tx).await?;
        // The sessions just ended (and an evicted maker's credentials) stop
        // here at once, not when the notification arrives.
        if was_verified {
            self.principal_cache().evict(user);
        } else {
            self.principal_cache().clear();
        }
        Ok(())
    }

    /// Ends everything an account's maker may hold before its address was
    /// proven, and what they set up with it: the account's password,
    /// sessions, tokens, SSO links and cluster credentials; every credential
    /// (tokens, trust policies, exchanged CI tokens, cluster certificates)
    /// of the service accounts it made or gave credentials to, and of those
    /// such service accounts did the same for; invitations any of them sent;
    /// deploy hooks they made or last received the secret of (deleted), and
    /// a hook secret they held before a rotation (ended);
    /// event endpoints they made (disabled), single sign-on settings they
    /// made and domains they proved (deleted), with the links and sessions of
    /// whoever signed in through such an identity provider. Each organization
    /// gets an audit entry naming what ended and who joined through the
    /// maker's invitations or identity provider, for its owners to review.
    ///
    /// Accounts such an identity provider made rest on its word for their
    /// address: they become unproven (no password, sessions or personal
    /// tokens until someone proves the address by mail). What they set up
    /// themselves stays, for the owners to review: going further would let
    /// one eviction reach, unbounded, into other organizations.
    async fn evict_everyone_but_the_owner(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        user: Uuid,
    ) -> Result<()> {
        let made = self.evict_maker(tx, ctx, user).await?;
        for account in made {
            store::users::unprove(&mut *tx, account).await?;
            store::sessions::revoke_all_of_user(&mut *tx, account, "address_proven").await?;
            store::tokens::revoke_personal(&mut *tx, account).await?;
            self.revoke_user_cluster_credentials(tx, ctx, account, None, "address_proven").await?;
            let details = json!({ "reason": "made_through_an_evicted_identity_provider" });
            self.audit_in_user_orgs(tx, ctx, account, "user.address_unproven", "success", details).await?;
        }
        Ok(())
    }

    /// The maker's share of [`App::evict_everyone_but_the_owner`]; answers
    /// the accounts the identity providers it set up made.
    async fn evict_maker(&self, tx: &mut PgConnection, ctx: &RequestContext, user: Uuid) -> Result<Vec<Uuid>> {
        store::users::clear_password(&mut *tx, user).await?;
        // Hold every organization the maker reached (as
        // principals::hold_live_credential does) before reading what they
        // made: nothing made there meanwhile escapes the eviction.
        let before: Vec<Uuid> =
            std::iter::once(user).chain(made_by(&mut *tx, user).await?.into_iter().map(|(a, _)| a)).collect();
        for org in reached_orgs(&mut *tx, user, &before).await? {
            crate::app::kernel::quotas::lock_org(&mut *tx, org).await?;
        }
        let accounts = made_by(&mut *tx, user).await?;
        let account_ids: Vec<Uuid> = accounts.iter().map(|(account, _)| *account).collect();
        let makers: Vec<Uuid> = std::iter::once(user).chain(account_ids.iter().copied()).collect();
        let orgs = reached_orgs(&mut *tx, user, &makers).await?;
        store::sessions::revoke_all_of_user(&mut *tx, user, "address_proven").await?;
        store::tokens::revoke_held_or_made_by(&mut *tx, user, &account_ids).await?;
        store::service_accounts::delete_trust_policies_made_by(&mut *tx, &makers, &account_ids).await?;
        store::service_accounts::revoke_exchanged_tokens(&mut *tx, &account_ids).await?;
        // Who may sign in to an organization, and as what: settings the
        // maker made go (single sign-on is off until an owner sets it again).
        // Domains first, in the order `domain_delete` takes them.
        let domains = store::domains::delete_verified_by(&mut *tx, &makers).await?;
        // Pending link requests before the settings, in the order a link
        // confirmation takes them.
        store::sso::delete_link_requests_made_by(&mut *tx, &makers).await?;
        let sso = store::sso::delete_made_by(&mut *tx, &makers).await?;
        // Whoever signed in through the maker's identity provider signs in
        // that way no more: their links and single sign-on sessions end.
        let mut through_sso: Vec<(Uuid, Uuid)> = Vec::new();
        let mut made_through_sso: Vec<Uuid> = Vec::new();
        for provider in &sso {
            let users = store::sso::delete_identities_of(&mut *tx, provider.org_id, &provider.issuer).await?;
            store::sessions::revoke_through_sso(&mut *tx, provider.org_id).await?;
            through_sso.extend(users.into_iter().filter(|u| *u != user).map(|u| (provider.org_id, u)));
            made_through_sso
                .extend(store::users::made_through_sso(&mut *tx, provider.org_id, &provider.issuer, user).await?);
        }
        store::sso::delete_identities_of_user(&mut *tx, user).await?;
        let invitations = store::invitations::revoke_sent_by(&mut *tx, &makers).await?;
        let joined = store::invitations::joined_through(&mut *tx, &makers).await?;
        let hooks = store::eviction::delete_hooks(&mut *tx, &makers).await?;
        // A secret the maker held before someone else rotated it stops now,
        // not when its grace period would have ended.
        let old_secrets = store::eviction::end_previous_hook_secrets(&mut *tx, &makers).await?;
        for hook in hooks.iter().map(|h| h.id).chain(old_secrets.iter().map(|h| h.id)) {
            self.hook_secrets.forget(hook);
        }
        let endpoints = store::eviction::endpoints(&mut *tx, &makers).await?;
        for endpoint in &endpoints {
            let reason = "made or pointed at its URL by whoever held an account before its address was proven";
            self.disable_endpoint(&mut *tx, endpoint.org_id, endpoint.id, &endpoint.url, reason).await?;
        }
        self.revoke_user_cluster_credentials(tx, ctx, user, None, "address_proven").await?;
        for (account, org) in &accounts {
            let text = crate::ids::ServiceAccountId::from_uuid(*account).to_string();
            let reach = crate::app::infra::clusters::pki::Reach::Organization;
            crate::app::infra::clusters::pki::revoke_principal_credentials(
                self,
                tx,
                ctx,
                *org,
                *account,
                &text,
                "address_proven",
                reach,
            )
            .await?;
        }
        for org in orgs {
            let system = RequestContext { principal: RequestContext::system(org).principal, ..ctx.clone() };
            let in_org = |o: &Uuid| *o == org;
            audit::record(
                &mut *tx,
                &system,
                AuditRecord {
                    action: "user.maker_evicted",
                    resource_type: "user",
                    resource_id: Some(UserId::from_uuid(user).to_string()),
                    details: json!({
                        "service_accounts_revoked": accounts.iter().filter(|(_, o)| in_org(o))
                            .map(|(a, _)| crate::ids::ServiceAccountId::from_uuid(*a)).collect::<Vec<_>>(),
                        "invitations_revoked": invitations.iter().filter(|o| in_org(o)).count(),
                        "deploy_hooks_deleted": hooks.iter().filter(|h| in_org(&h.org_id))
                            .map(|h| crate::ids::DeployHookId::from_uuid(h.id)).collect::<Vec<_>>(),
                        "webhook_endpoints_disabled": endpoints.iter().filter(|e| in_org(&e.org_id))
                            .map(|e| crate::ids::WebhookEndpointId::from_uuid(e.id)).collect::<Vec<_>>(),
                        "sso_settings_deleted": sso.iter().any(|p| in_org(&p.org_id)),
                        "verified_domains_deleted": domains.iter().filter(|d| in_org(&d.org_id))
                            .map(|d| d.domain.clone()).collect::<Vec<_>>(),
                        "members_they_invited": joined.iter().filter(|j| in_org(&j.org_id))
                            .filter_map(|j| j.accepted_by.map(UserId::from_uuid)).collect::<Vec<_>>(),
                        "previous_hook_secrets_ended": old_secrets.iter().filter(|h| in_org(&h.org_id))
                            .map(|h| crate::ids::DeployHookId::from_uuid(h.id)).collect::<Vec<_>>(),
                        "members_through_their_sso": through_sso.iter().filter(|(o, _)| in_org(o))
                            .map(|(_, u)| UserId::from_uuid(*u)).collect::<Vec<_>>(),
                    }),
                },
            )
            .await?;
        }
        Ok(made_through_sso)
    }

    /// Records a security event about `user` in each organization they
    /// belong to (or in no organization when they belong to none).
    pub(in crate::app) async fn audit_in_user_orgs(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        user: Uuid,
        action: &str,
        outcome: &str,
        details: serde_json::Value,
    ) -> Result<()> {
        let orgs = store::memberships::of_user(&mut *tx, user).await?;
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
                let mut conn = self.db().acquire().await?;
                let user = store::users::find(&mut conn, principal.id).await?.ok_or(Error::Unauthenticated)?;
                // A session from an identity provider, and an API token (which
                // acts in one organization), see only that organization.
                let bound = match principal.credential {
                    moke_iam::Credential::Session { sso_org, .. } => sso_org,
                    _ => Some(principal.org_id),
                };
                let memberships = store::memberships::summaries(&mut conn, principal.id, bound)
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
            id: crate::app::principal_ref(principal),
            user,
            organization: OrgId::from_uuid(principal.org_id),
            role: principal.role,
            memberships,
        })
    }
}
