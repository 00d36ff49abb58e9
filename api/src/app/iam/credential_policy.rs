//! What an organization demands of its members' credentials: the longest
//! lifetime of a new API token, single sign-on for everyone but owners, and
//! verified e-mail addresses. Enforced where credentials are made
//! ([`crate::app::iam::tokens`]) and where they are used ([`crate::app::iam::principals`]).

use moke_iam::Action;
use serde_json::json;

use crate::app::error::Validator;
use crate::app::iam::store;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, RequestContext, Result};
use crate::ids::OrgId;
use crate::model::{CredentialPolicy, CredentialPolicyView};

/// The shortest token lifetime a policy may demand (five minutes) and the longest (a year).
const LIFETIME_BOUNDS: (i64, i64) = (300, 365 * 24 * 3600);

impl App {
    pub async fn credential_policy_view(&self, ctx: &RequestContext, org: OrgId) -> Result<CredentialPolicyView> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let row = store::credential_policies::find(&mut *self.db().acquire().await?, org.uuid()).await?;
        Ok(match row {
            Some(row) => CredentialPolicyView {
                max_token_lifetime_seconds: row.max_token_lifetime_seconds,
                require_sso: row.require_sso,
                require_verified_email: row.require_verified_email,
                etag: crate::app::etag(org.uuid(), row.version),
                updated_at: Some(row.updated_at),
            },
            None => CredentialPolicyView {
                max_token_lifetime_seconds: None,
                require_sso: false,
                require_verified_email: false,
                etag: crate::app::etag(org.uuid(), 0),
                updated_at: None,
            },
        })
    }

    /// `credential_policy_update` (owners): replaces the policy. Requiring
    /// SSO needs SSO configured; existing credentials the new policy refuses
    /// stop working at once, in every gateway.
    pub async fn credential_policy_update(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        input: CredentialPolicy,
        if_match: Option<&str>,
    ) -> Result<CredentialPolicyView> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let mut v = Validator::new();
        if let Some(seconds) = input.max_token_lifetime_seconds {
            v.check(
                (LIFETIME_BOUNDS.0..=LIFETIME_BOUNDS.1).contains(&seconds),
                "max_token_lifetime_seconds",
                "out_of_range",
                format!("must be between {} and {}", LIFETIME_BOUNDS.0, LIFETIME_BOUNDS.1),
            );
        }
        v.finish()?;
        let mut tx = self.db().begin().await?;
        crate::app::kernel::quotas::lock_org(&mut tx, org.uuid()).await?;
        let current = self.credential_policy_view(ctx, org).await?;
        crate::app::check_if_match(if_match, &current.etag)?;
        if input.require_sso && !store::sso::is_configured(&mut tx, org.uuid()).await? {
            return Err(Error::invalid_field(
                "require_sso",
                "sso_not_configured",
                "configure single sign-on (PUT /v1/orgs/{org}/sso) before requiring it",
            ));
        }
        let row = store::credential_policies::upsert(
            &mut tx,
            org.uuid(),
            input.max_token_lifetime_seconds,
            input.require_sso,
            input.require_verified_email,
        )
        .await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "org.credential_policy_update",
                resource_type: "org",
                resource_id: Some(org.to_string()),
                details: json!({
                    "max_token_lifetime_seconds": input.max_token_lifetime_seconds,
                    "require_sso": input.require_sso,
                    "require_verified_email": input.require_verified_email,
                }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        // Other gateways hear of it through the trigger's `moke_principals` notification.
        self.principal_cache().evict(org.uuid());
        Ok(CredentialPolicyView {
            max_token_lifetime_seconds: input.max_token_lifetime_seconds,
            require_sso: input.require_sso,
            require_verified_email: input.require_verified_email,
            etag: crate::app::etag(org.uuid(), row.version),
            updated_at: Some(row.updated_at),
        })
    }
}
