//! Service accounts: non-human principals of an organization, with their
//! own role, tokens and CI trust policies.

use std::collections::BTreeMap;

use moke_iam::{Action, OrgRole};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::Validator;
use crate::app::iam::store;
use crate::app::iam::store::service_accounts::{AccountRow, PolicyRow};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::quotas::Counted;
use crate::app::{App, Error, PageRequest, RequestContext, Result, validate};
use crate::ids::{OrgId, ServiceAccountId, TrustPolicyId};
use crate::model::*;

impl AccountRow {
    fn into_view(self) -> ServiceAccountView {
        ServiceAccountView {
            id: ServiceAccountId::from_uuid(self.id),
            name: self.name,
            description: self.description,
            role: OrgRole::parse(&self.role).unwrap_or(OrgRole::Viewer),
            created_at: self.created_at,
        }
    }
}

/// Creates a service account named `name`, or `name-2`, `name-3`… when the
/// name is taken (for the foundation's token endpoint, where names need not
/// be unique). Returns its id.
pub(in crate::app) async fn insert_unique(
    tx: &mut PgConnection,
    ctx: &RequestContext,
    name: &str,
    description: &str,
    role: OrgRole,
) -> Result<Uuid> {
    let id = ServiceAccountId::generate().uuid();
    let creator = (!ctx.principal.id.is_nil()).then_some(ctx.principal.id);
    let inserted = store::service_accounts::insert_with_free_name(
        &mut *tx,
        id,
        ctx.principal.org_id,
        name,
        description,
        role.as_str(),
        creator,
    )
    .await?
    .ok_or_else(|| Error::conflict("name_taken", "too many service accounts share this name"))?;
    audit::record(
        tx,
        ctx,
        AuditRecord {
            action: "service_account.create",
            resource_type: "service_account",
            resource_id: Some(ServiceAccountId::from_uuid(inserted).to_string()),
            details: json!({ "name": name, "role": role.as_str() }),
        },
    )
    .await?;
    Ok(inserted)
}

impl PolicyRow {
    fn into_view(self) -> TrustPolicyView {
        TrustPolicyView {
            id: TrustPolicyId::from_uuid(self.id),
            service_account: ServiceAccountId::from_uuid(self.service_account_id),
            issuer: self.issuer,
            audience: self.audience,
            claims: serde_json::from_value(self.claims).unwrap_or_default(),
            created_at: self.created_at,
            expires_at: self.expires_at,
        }
    }
}

impl App {
    pub async fn service_account_create(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        input: ServiceAccountCreate,
    ) -> Result<ServiceAccountView> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let mut v = Validator::new();
        validate::name(&mut v, "name", &input.name);
        v.check(input.description.chars().count() <= 500, "description", "too_long", "at most 500 characters");
        let role = crate::app::iam::members::grantable_role(&mut v, ctx, "role", &input.role);
        v.finish()?;
        let role = role.expect("validated");
        crate::app::iam::members::check_role_grant(ctx, role)?;
        let input = &input;
        self.idempotent(ctx, "service_account_create", &(org, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org.uuid()).await?;
            crate::app::kernel::quotas::check_count(&mut tx, self.config(), org.uuid(), Counted::ServiceAccounts, 1)
                .await?;
            let row = store::service_accounts::insert(
                &mut tx,
                ServiceAccountId::generate().uuid(),
                org.uuid(),
                &input.name,
                &input.description,
                role.as_str(),
                ctx.principal.id,
            )
            .await?;
            let view = row.into_view();
            audit::record(
                &mut tx,
                ctx,
                AuditRecord {
                    action: "service_account.create",
                    resource_type: "service_account",
                    resource_id: Some(view.id.to_string()),
                    details: json!({ "name": view.name, "role": role.as_str() }),
                },
            )
            .await?;
            claim.complete(&mut tx, 201, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    pub async fn service_account_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<ServiceAccountView>> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::service_accounts::list(&mut conn, org.uuid(), &page).await?;
        Ok(page.page(rows.into_iter().map(AccountRow::into_view).collect(), |a| a.id.uuid()))
    }

    pub async fn service_account_view(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        id: ServiceAccountId,
    ) -> Result<ServiceAccountView> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let mut conn = self.db().acquire().await?;
        store::service_accounts::find(&mut conn, org.uuid(), id.uuid(), Lock::None)
            .await?
            .map(AccountRow::into_view)
            .ok_or_else(|| Error::not_found("service account", id.to_string()))
    }

    /// `service_account_delete`: deletes the account with its tokens and
    /// trust policies; its credentials stop working at once.
    pub async fn service_account_delete(&self, ctx: &RequestContext, org: OrgId, id: ServiceAccountId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let mut tx = self.db().begin().await?;
        let row = store::service_accounts::find(&mut tx, org.uuid(), id.uuid(), Lock::ForUpdate)
            .await?
            .ok_or_else(|| Error::not_found("service account", id.to_string()))?;
        if !moke_iam::may_change_holder_of(&ctx.principal, OrgRole::parse(&row.role).unwrap_or(OrgRole::Viewer)) {
            return Err(Error::Forbidden);
        }
        store::memberships::delete_project_roles_in(&mut tx, org.uuid(), id.uuid()).await?;
        store::service_accounts::delete(&mut tx, org.uuid(), id.uuid()).await?;
        crate::app::infra::clusters::pki::revoke_principal_credentials(
            self,
            &mut tx,
            ctx,
            org.uuid(),
            id.uuid(),
            &id.to_string(),
            "service_account_deleted",
            crate::app::infra::clusters::pki::Reach::Organization,
        )
        .await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "service_account.delete",
                resource_type: "service_account",
                resource_id: Some(id.to_string()),
                details: json!({ "name": row.name }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        self.principal_cache().evict(id.uuid());
        Ok(())
    }

    /// `trust_policy_create`: lets CI jobs whose ID tokens match act as the account.
    pub async fn trust_policy_create(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        account: ServiceAccountId,
        input: TrustPolicyCreate,
    ) -> Result<TrustPolicyView> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let account_view = self.service_account_view(ctx, org, account).await?;
        // A trust policy mints tokens of the account's full role, without
        // scope, for as long as it lives: the creator must hold all of that,
        // and a policy made by an expiring credential ends with it.
        let expires_at = ctx.principal.expires_at.and_then(|at| chrono::DateTime::from_timestamp(at, 0));
        let exchanged = moke_iam::Principal {
            id: account.uuid(),
            kind: moke_iam::PrincipalKind::ServiceAccount,
            credential: moke_iam::Credential::None,
            org_id: org.uuid(),
            role: account_view.role,
            project_roles: crate::app::iam::tokens::project_roles_of(self, account.uuid()).await?,
            scope: moke_iam::Scope::default(),
            expires_at: ctx.principal.expires_at,
        };
        moke_iam::may_confer(&ctx.principal, &exchanged)?;
        let mut v = Validator::new();
        let https = input.issuer.starts_with("https://")
            || (self.config().auth.allow_insecure_issuers && input.issuer.starts_with("http://"));
        v.check(https && input.issuer.chars().count() <= 500, "issuer", "invalid", "must be an https:// URL");
        v.check(
            !input.audience.is_empty() && input.audience.chars().count() <= 200,
            "audience",
            "invalid",
            "must be 1-200 characters",
        );
        v.check(
            !input.claims.is_empty() && input.claims.len() <= 10,
            "claims",
            "invalid",
            "name 1 to 10 claims to match (e.g. repository, ref, environment); a policy matching any job is refused",
        );
        for (key, value) in &input.claims {
            v.check(
                !key.is_empty() && !value.is_empty() && key.chars().count() <= 100 && value.chars().count() <= 500,
                format!("claims.{key}"),
                "invalid",
                "names and values must be non-empty",
            );
            v.check(
                !matches!(key.as_str(), "iss" | "aud" | "exp" | "iat" | "nbf" | "jti"),
                format!("claims.{key}"),
                "reserved",
                "issuer and audience have their own fields; time claims are always checked",
            );
        }
        v.finish()?;
        let input = &input;
        self.idempotent(ctx, "trust_policy_create", &(org, account, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org.uuid()).await?;
            crate::app::kernel::quotas::check_count(&mut tx, self.config(), org.uuid(), Counted::TrustPolicies, 1)
                .await?;
            let new = store::service_accounts::NewPolicy {
                id: TrustPolicyId::generate().uuid(),
                org: org.uuid(),
                account: account.uuid(),
                issuer: input.issuer.trim_end_matches('/'),
                audience: &input.audience,
                claims: serde_json::to_value(&input.claims).expect("claims serialize"),
                expires_at,
                created_by: (!ctx.principal.id.is_nil()).then_some(ctx.principal.id),
            };
            let row = store::service_accounts::insert_trust_policy(&mut tx, new).await?;
            let view = row.into_view();
            audit::record(
                &mut tx,
                ctx,
                AuditRecord {
                    action: "trust_policy.create",
                    resource_type: "service_account",
                    resource_id: Some(account.to_string()),
                    details: json!({ "policy": view.id, "issuer": view.issuer, "audience": view.audience,
                                     "claims": view.claims }),
                },
            )
            .await?;
            claim.complete(&mut tx, 201, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `trust_policy_list`: a service account's trust policies, oldest first.
    pub async fn trust_policy_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        account: ServiceAccountId,
        page: PageRequest,
    ) -> Result<Page<TrustPolicyView>> {
        self.service_account_view(ctx, org, account).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::service_accounts::trust_policies(&mut conn, org.uuid(), account.uuid(), &page).await?;
        Ok(page.page(rows.into_iter().map(PolicyRow::into_view).collect(), |p| p.id.uuid()))
    }

    pub async fn trust_policy_delete(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        account: ServiceAccountId,
        id: TrustPolicyId,
    ) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let account_view = self.service_account_view(ctx, org, account).await?;
        if !moke_iam::may_grant(&ctx.principal, account_view.role) {
            return Err(Error::refused("exceeds_credential", "refused: the service account's role is above your own"));
        }
        let mut tx = self.db().begin().await?;
        if !store::service_accounts::delete_trust_policy(&mut tx, org.uuid(), account.uuid(), id.uuid()).await? {
            return Err(Error::not_found("trust policy", id.to_string()));
        }
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "trust_policy.delete",
                resource_type: "service_account",
                resource_id: Some(account.to_string()),
                details: json!({ "policy": id }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        Ok(())
    }
}

/// Whether every required claim has exactly the required value.
pub(in crate::app) fn claims_match(required: &BTreeMap<String, String>, claims: &serde_json::Value) -> bool {
    required.iter().all(|(key, want)| match &claims[key] {
        serde_json::Value::String(have) => have == want,
        serde_json::Value::Bool(have) => have.to_string() == *want,
        serde_json::Value::Number(have) => have.to_string() == *want,
        _ => false,
    })
}
