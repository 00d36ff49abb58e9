//! API tokens: service-account tokens (`moke_sat_`), personal tokens
//! (`moke_pat_`) and the foundation's organization tokens, which are now
//! service-account tokens. Minted (shown once), listed, revoked; stored only
//! as a peppered hash. Authentication lives in [`crate::app::iam::principals`].

use chrono::{DateTime, Utc};
use moke_iam::token::{NewToken, TokenKind, peppered_hash};
use moke_iam::{Action, OrgRole, PrincipalKind, Target};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::Validator;
use crate::app::iam::store;
use crate::app::iam::store::tokens::TokenRow;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::quotas::Counted;
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result};
use crate::ids::{OrgId, ProjectId, ServiceAccountId, TokenId, UserId};
use crate::model::{Page, ScopedTokenCreate, TokenCreate, TokenCreated, TokenView};

const MIN_LIFETIME_SECONDS: i64 = 300;
const MAX_LIFETIME_SECONDS: i64 = 365 * 24 * 3600;

impl TokenRow {
    fn into_view(self) -> TokenView {
        let kind = match self.kind.as_str() {
            "sat" => "service_account",
            "pat" => "personal",
            _ => "legacy",
        };
        TokenView {
            id: TokenId::from_uuid(self.id),
            name: self.name,
            kind: kind.to_string(),
            service_account: self.service_account_id.map(ServiceAccountId::from_uuid),
            user: self.user_id.map(UserId::from_uuid),
            role: OrgRole::parse(&self.role).unwrap_or(OrgRole::Viewer),
            project: self.project_id.map(ProjectId::from_uuid),
            scopes: self.scopes.map(|s| s.iter().filter_map(|a| Action::parse(a)).collect()),
            hint: self.token_hint,
            created_at: self.created_at,
            expires_at: self.expires_at,
            last_used_at: self.last_used_at,
            revoked_at: self.revoked_at,
        }
    }
}

/// Whose token it is.
#[derive(Debug, Clone, Copy)]
pub(in crate::app) enum TokenOwner {
    ServiceAccount { id: Uuid, role: OrgRole },
    User { id: Uuid, role: OrgRole },
}

/// What a new token may reach.
#[derive(Debug, Clone, Default)]
pub(in crate::app) struct TokenLimits {
    pub project: Option<Uuid>,
    pub scopes: Option<Vec<Action>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// Mints a token inside the caller's transaction and audits it.
pub(in crate::app) async fn insert_token(
    tx: &mut PgConnection,
    app: &App,
    ctx: &RequestContext,
    owner: TokenOwner,
    name: &str,
    limits: &TokenLimits,
) -> Result<TokenCreated> {
    let (kind, sa, user, role) = match owner {
        TokenOwner::ServiceAccount { id, role } => (TokenKind::ServiceAccount, Some(id), None, role),
        TokenOwner::User { id, role } => (TokenKind::Personal, None, Some(id), role),
    };
    crate::app::iam::principals::hold_live_credential(&mut *tx, ctx, ctx.principal.org_id).await?;
    let secret = NewToken::generate(kind);
    let hash = peppered_hash(app.vault().pepper(), &secret.plaintext);
    let id = TokenId::generate();
    let creator = (!ctx.principal.id.is_nil()).then_some(ctx.principal.id);
    let scopes: Option<Vec<String>> =
        limits.scopes.as_ref().map(|s| s.iter().map(|a| a.as_str().to_string()).collect());
    crate::app::kernel::quotas::check_count(tx, app.config(), ctx.principal.org_id, Counted::ApiTokens, 1).await?;
    let hint = secret.hint();
    let new = store::tokens::NewToken {
        id: id.uuid(),
        org: ctx.principal.org_id,
        name,
        role: role.as_str(),
        token_hash: &hash[..],
        token_hint: &hint,
        created_by: creator,
        expires_at: limits.expires_at,
        kind: if kind == TokenKind::Personal { "pat" } else { "sat" },
        service_account: sa,
        user,
        project: limits.project,
        scopes: scopes.as_deref(),
        issued_via: ctx.principal.credential.method(),
    };
    let row = store::tokens::insert(&mut *tx, new).await?;
    audit::record(
        tx,
        ctx,
        AuditRecord {
            action: "token.create",
            resource_type: "token",
            resource_id: Some(id.to_string()),
            details: json!({
                "name": name, "kind": row.kind, "role": role.as_str(),
                "service_account": sa.map(|id| ServiceAccountId::from_uuid(id).to_string()),
                "project": limits.project.map(|id| ProjectId::from_uuid(id).to_string()),
                "scopes": scopes, "expires_at": limits.expires_at,
            }),
        },
    )
    .await?;
    Ok(TokenCreated { view: row.into_view(), token: secret.plaintext })
}

/// The organization's longest token lifetime, if it sets one.
async fn max_token_lifetime(app: &App, org: Uuid) -> Result<Option<i64>> {
    store::credential_policies::max_token_lifetime(&mut *app.db().acquire().await?, org).await
}

/// Applies the organization's token lifetime limit (a token asked for
/// without an expiry gets the longest allowed) and refuses a token that
/// could do more, or live longer, than the credential creating it.
pub(in crate::app) async fn confer_token(
    app: &App,
    ctx: &RequestContext,
    owner: TokenOwner,
    owner_project_roles: Vec<(Uuid, moke_iam::ProjectRole)>,
    limits: &mut TokenLimits,
) -> Result<()> {
    if let Some(max) = max_token_lifetime(app, ctx.principal.org_id).await? {
        let latest = Utc::now() + chrono::Duration::seconds(max);
        match limits.expires_at {
            None => limits.expires_at = Some(latest),
            Some(at) if at > latest + chrono::Duration::seconds(5) => {
                return Err(Error::invalid_field(
                    "expires_in_seconds",
                    "exceeds_policy",
                    format!("this organization allows tokens of at most {max} seconds"),
                ));
            }
            Some(_) => {}
        }
    }
    let (id, kind, role) = match owner {
        TokenOwner::ServiceAccount { id, role } => (id, PrincipalKind::ServiceAccount, role),
        TokenOwner::User { id, role } => (id, PrincipalKind::User, role),
    };
    let token = moke_iam::Principal {
        id,
        kind,
        credential: moke_iam::Credential::None,
        org_id: ctx.principal.org_id,
        role,
        project_roles: owner_project_roles,
        scope: moke_iam::Scope { project: limits.project, actions: limits.scopes.clone() },
        expires_at: limits.expires_at.map(|at| at.timestamp()),
    };
    Ok(moke_iam::may_confer(&ctx.principal, &token)?)
}

/// A service account's project roles.
pub(in crate::app) async fn project_roles_of(app: &App, principal: Uuid) -> Result<Vec<(Uuid, moke_iam::ProjectRole)>> {
    let rows = store::memberships::project_roles_of(&mut *app.db().acquire().await?, principal).await?;
    Ok(rows
        .into_iter()
        .filter_map(|(project, role)| moke_iam::ProjectRole::parse(&role).map(|role| (project, role)))
        .collect())
}

/// Checks a token's name and lifetime.
fn check_name_and_lifetime(v: &mut Validator, name: &str, expires_in_seconds: Option<i64>) -> Option<DateTime<Utc>> {
    v.check(!name.trim().is_empty() && name.chars().count() <= 100, "name", "invalid", "must be 1-100 characters");
    let seconds = expires_in_seconds?;
    v.check(
        (MIN_LIFETIME_SECONDS..=MAX_LIFETIME_SECONDS).contains(&seconds),
        "expires_in_seconds",
        "out_of_range",
        format!("must be between {MIN_LIFETIME_SECONDS} and {MAX_LIFETIME_SECONDS}"),
    );
    Some(Utc::now() + chrono::Duration::seconds(seconds.clamp(0, MAX_LIFETIME_SECONDS)))
}

/// Validates a [`ScopedTokenCreate`] into limits, resolving the project in the caller's organization.
pub(in crate::app) async fn scoped_limits(
    app: &App,
    ctx: &RequestContext,
    input: &ScopedTokenCreate,
) -> Result<TokenLimits> {
    let mut v = Validator::new();
    let expires_at = check_name_and_lifetime(&mut v, &input.name, input.expires_in_seconds);
    let mut scopes = None;
    if let Some(names) = &input.scopes {
        let parsed: Vec<Option<Action>> = names.iter().map(|n| Action::parse(n)).collect();
        v.check(
            !names.is_empty() && parsed.iter().all(Option::is_some),
            "scopes",
            "invalid",
            format!(
                "must be a non-empty list of: {}",
                Action::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", ")
            ),
        );
        scopes = Some(parsed.into_iter().flatten().collect());
    }
    let mut project = None;
    if let Some(reference) = &input.project {
        let mut conn = app.db().acquire().await?;
        let reference = ResourceRef::parse(reference);
        let lookup = crate::app::infra::projects::lookup(&mut conn, ctx, &reference, Action::Read, Lock::None);
        match lookup.await {
            Ok(row) => project = Some(row.id),
            Err(Error::NotFound { .. }) => v.push("project", "not_found", "no such project in this organization"),
            Err(other) => return Err(other),
        }
    }
    v.finish()?;
    Ok(TokenLimits { project, scopes, expires_at })
}

impl App {
    /// `token_create`: the foundation's organization token. It now makes a
    /// service account with that role and name, and a token for it, so
    /// existing callers keep working.
    pub async fn token_create(&self, ctx: &RequestContext, org: OrgId, input: TokenCreate) -> Result<TokenCreated> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let mut v = Validator::new();
        let expires_at = check_name_and_lifetime(&mut v, &input.name, input.expires_in_seconds);
        let role = crate::app::iam::members::grantable_role(&mut v, ctx, "role", &input.role);
        v.finish()?;
        let role = role.expect("validated");
        // It makes a service account, which lasts.
        crate::app::iam::members::check_role_grant(ctx, role)?;
        let mut limits = TokenLimits { expires_at, ..TokenLimits::default() };
        confer_token(self, ctx, TokenOwner::ServiceAccount { id: Uuid::nil(), role }, Vec::new(), &mut limits).await?;
        let input = &input;
        let limits = &limits;
        self.idempotent(ctx, "token_create", &(org, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org.uuid()).await?;
            crate::app::kernel::quotas::check_count(&mut tx, self.config(), org.uuid(), Counted::ServiceAccounts, 1)
                .await?;
            let account = crate::app::iam::service_accounts::insert_unique(&mut tx, ctx, &input.name, "", role).await?;
            let owner = TokenOwner::ServiceAccount { id: account, role };
            let created = insert_token(&mut tx, self, ctx, owner, &input.name, limits).await?;
            // The stored replay never holds the secret: a retry learns the id only.
            let replay = TokenCreated { token: String::new(), ..created.clone() };
            claim.complete(&mut tx, 201, &replay).await?;
            self.commit(ctx, tx).await?;
            Ok(created)
        })
        .await
    }

    /// `service_account_token_create`: a token acting as a service account.
    pub async fn service_account_token_create(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        account: ServiceAccountId,
        input: ScopedTokenCreate,
    ) -> Result<TokenCreated> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let account_view = self.service_account_view(ctx, org, account).await?;
        let mut limits = scoped_limits(self, ctx, &input).await?;
        let owner = TokenOwner::ServiceAccount { id: account.uuid(), role: account_view.role };
        let roles = project_roles_of(self, account.uuid()).await?;
        confer_token(self, ctx, owner, roles, &mut limits).await?;
        let input = &input;
        let limits = &limits;
        self.idempotent(ctx, "service_account_token_create", &(org, account, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let owner = TokenOwner::ServiceAccount { id: account.uuid(), role: account_view.role };
            let created = insert_token(&mut tx, self, ctx, owner, &input.name, limits).await?;
            let replay = TokenCreated { token: String::new(), ..created.clone() };
            claim.complete(&mut tx, 201, &replay).await?;
            self.commit(ctx, tx).await?;
            Ok(created)
        })
        .await
    }

    /// `personal_token_create`: a token acting as the signed-in person, in
    /// their current organization.
    pub async fn personal_token_create(&self, ctx: &RequestContext, input: ScopedTokenCreate) -> Result<TokenCreated> {
        if ctx.principal.kind != PrincipalKind::User {
            return Err(Error::Forbidden);
        }
        moke_iam::authorize(&ctx.principal, Action::Read, Target::org(ctx.principal.org_id))?;
        let mut limits = scoped_limits(self, ctx, &input).await?;
        let owner = TokenOwner::User { id: ctx.principal.id, role: ctx.principal.role };
        confer_token(self, ctx, owner, ctx.principal.project_roles.clone(), &mut limits).await?;
        let input = &input;
        let limits = &limits;
        self.idempotent(ctx, "personal_token_create", input, |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let owner = TokenOwner::User { id: ctx.principal.id, role: ctx.principal.role };
            let created = insert_token(&mut tx, self, ctx, owner, &input.name, limits).await?;
            let replay = TokenCreated { token: String::new(), ..created.clone() };
            claim.complete(&mut tx, 201, &replay).await?;
            self.commit(ctx, tx).await?;
            Ok(created)
        })
        .await
    }

    /// `personal_token_list`: the caller's own tokens in this organization.
    pub async fn personal_token_list(&self, ctx: &RequestContext, page: PageRequest) -> Result<Page<TokenView>> {
        if ctx.principal.kind != PrincipalKind::User {
            return Err(Error::Forbidden);
        }
        let mut conn = self.db().acquire().await?;
        let rows = store::tokens::list_personal(&mut conn, ctx.principal.org_id, ctx.principal.id, &page).await?;
        Ok(page.page(rows.into_iter().map(TokenRow::into_view).collect(), |t| t.id.uuid()))
    }

    /// `personal_token_delete`: revokes one of the caller's own tokens.
    pub async fn personal_token_delete(&self, ctx: &RequestContext, id: TokenId) -> Result<()> {
        // A narrowed credential may end itself, not the person's wider ones.
        let narrowed = ctx.principal.scope != moke_iam::Scope::default() || ctx.principal.expires_at.is_some();
        if narrowed && ctx.principal.credential != moke_iam::Credential::ApiToken(id.uuid()) {
            return Err(Error::refused("exceeds_credential", "refused: a narrowed credential may revoke only itself"));
        }
        let mut conn = self.db().acquire().await?;
        let owned = store::tokens::is_personal_of(&mut conn, ctx.principal.org_id, id.uuid(), ctx.principal.id).await?;
        drop(conn);
        if !owned {
            return Err(Error::not_found("token", id.to_string()));
        }
        self.revoke_token(ctx, OrgId::from_uuid(ctx.principal.org_id), id).await
    }

    /// `token_list`: every token of the organization, never their secrets.
    pub async fn token_list(&self, ctx: &RequestContext, org: OrgId, page: PageRequest) -> Result<Page<TokenView>> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::tokens::list(&mut conn, org.uuid(), &page).await?;
        Ok(page.page(rows.into_iter().map(TokenRow::into_view).collect(), |t| t.id.uuid()))
    }

    /// `token_view`: one token.
    pub async fn token_view(&self, ctx: &RequestContext, org: OrgId, id: TokenId) -> Result<TokenView> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let mut conn = self.db().acquire().await?;
        store::tokens::find(&mut conn, org.uuid(), id.uuid())
            .await?
            .map(TokenRow::into_view)
            .ok_or_else(|| Error::not_found("token", id.to_string()))
    }

    /// `token_delete`: revokes a token; the next request made with it is refused.
    /// Revoking an already revoked token succeeds and changes nothing.
    pub async fn token_delete(&self, ctx: &RequestContext, org: OrgId, id: TokenId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        self.revoke_token(ctx, org, id).await
    }

    async fn revoke_token(&self, ctx: &RequestContext, org: OrgId, id: TokenId) -> Result<()> {
        let mut tx = self.db().begin().await?;
        let owner = store::tokens::lock_owner(&mut tx, org.uuid(), id.uuid())
            .await?
            .ok_or_else(|| Error::not_found("token", id.to_string()))?;
        // Nobody changes the credentials of a principal above their own role.
        let own = owner.user_id == Some(ctx.principal.id);
        if !own && !moke_iam::may_grant(&ctx.principal, OrgRole::parse(&owner.role).unwrap_or(OrgRole::Owner)) {
            return Err(Error::refused("exceeds_credential", "refused: the token's owner has a role above your own"));
        }
        let name = store::tokens::revoke(&mut tx, org.uuid(), id.uuid()).await?;
        if owner.revoked_at.is_none() {
            // What the token may have obtained from hosted clusters ends with it.
            let (principal, text) = match (owner.user_id, owner.service_account_id) {
                (Some(user), _) => (user, UserId::from_uuid(user).to_string()),
                (None, Some(account)) => (account, ServiceAccountId::from_uuid(account).to_string()),
                (None, None) => (id.uuid(), id.to_string()),
            };
            crate::app::infra::clusters::pki::revoke_principal_credentials(
                self,
                &mut tx,
                ctx,
                org.uuid(),
                principal,
                &text,
                "token_revoked",
                crate::app::infra::clusters::pki::Reach::Organization,
            )
            .await?;
        }
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "token.revoke",
                resource_type: "token",
                resource_id: Some(id.to_string()),
                details: json!({ "name": name }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        // Other gateways hear of it through the `moke_tokens` notification.
        self.principal_cache().evict(id.uuid());
        Ok(())
    }
}
