//! Organizations: the tenant boundary. Sign-up creates them; `moke-server
//! dev` and tests can also bootstrap one with an owner service-account token.

use moke_iam::{Action, OrgRole};
use serde_json::json;

use crate::app::iam::store;
use crate::app::iam::store::orgs::OrgRow;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, PageRequest, RequestContext, Result, etag, validate};
use crate::ids::OrgId;
use crate::model::{Labels, OrgView, Page, TokenCreated};

/// A new organization with its first owner token.
pub struct BootstrapOrg {
    pub org: OrgView,
    pub owner_token: TokenCreated,
}

impl OrgRow {
    fn into_view(self) -> OrgView {
        OrgView {
            id: OrgId::from_uuid(self.id),
            etag: etag(self.id, self.version),
            name: self.name,
            display_name: self.display_name,
            labels: serde_json::from_value::<Labels>(self.labels).unwrap_or_default(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

impl App {
    /// Creates an organization and an owner service-account token for it,
    /// or, when one with this name exists, just a new owner token. Not
    /// reachable from the public API (sign-up is).
    pub async fn bootstrap_org(&self, name: &str, display_name: &str) -> Result<BootstrapOrg> {
        let mut v = crate::app::error::Validator::new();
        validate::name(&mut v, "name", name);
        v.finish()?;
        let mut tx = self.db().begin().await?;
        let row = store::orgs::insert_or_get(&mut tx, OrgId::generate().uuid(), name, display_name).await?;
        let org = row.into_view();
        let ctx = RequestContext::system(org.id.uuid());
        audit::record(
            &mut tx,
            &ctx,
            AuditRecord {
                action: "org.bootstrap",
                resource_type: "org",
                resource_id: Some(org.id.to_string()),
                details: json!({ "name": name }),
            },
        )
        .await?;
        let account =
            crate::app::iam::service_accounts::insert_unique(&mut tx, &ctx, "bootstrap-owner", "", OrgRole::Owner)
                .await?;
        let owner = crate::app::iam::tokens::TokenOwner::ServiceAccount { id: account, role: OrgRole::Owner };
        let owner_token =
            crate::app::iam::tokens::insert_token(&mut tx, self, &ctx, owner, "bootstrap-owner", &Default::default())
                .await?;
        tx.commit().await?;
        Ok(BootstrapOrg { org, owner_token })
    }

    /// Checks that the caller may perform `action` on `org`; another
    /// organization is reported as not found.
    pub(crate) async fn org_authorized(&self, ctx: &RequestContext, org: OrgId, action: Action) -> Result<()> {
        match moke_iam::authorize(&ctx.principal, action, moke_iam::Target::org(org.uuid())) {
            Ok(()) => Ok(()),
            Err(moke_iam::Denied::NotFound) => Err(Error::not_found("organization", org.to_string())),
            Err(moke_iam::Denied::Forbidden) => Err(Error::Forbidden),
        }
    }

    /// `org_list`: the organizations the caller belongs to.
    pub async fn org_list(&self, ctx: &RequestContext, page: PageRequest) -> Result<Page<OrgView>> {
        let mut conn = self.db().acquire().await?;
        let rows = store::orgs::list_own(&mut conn, ctx.principal.org_id, &page).await?;
        Ok(page.page(rows.into_iter().map(OrgRow::into_view).collect(), |o| o.id.uuid()))
    }

    /// `org_view`: one organization.
    pub async fn org_view(&self, ctx: &RequestContext, org: OrgId) -> Result<OrgView> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let mut conn = self.db().acquire().await?;
        let row = store::orgs::find(&mut conn, org.uuid())
            .await?
            .ok_or_else(|| Error::not_found("organization", org.to_string()))?;
        Ok(row.into_view())
    }
}
