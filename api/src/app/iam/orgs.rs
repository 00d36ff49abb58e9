//! Organizations: the tenant boundary. Sign-up creates them; `moke-server
//! dev` and tests can also bootstrap one with an owner service-account token.

use moke_iam::{Action, OrgRole};
use serde_json::json;

use crate::app::error::Validator;
use crate::app::iam::store;
use crate::app::iam::store::orgs::OrgRow;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, PageRequest, RequestContext, Result, check_if_match, etag, validate};
use crate::ids::OrgId;
use crate::model::{Labels, OrgCreate, OrgUpdate, OrgView, Page, TokenCreated};

/// The most organizations one person owns at once, and makes in 30 days
/// (deleted ones counted: a name once taken stays taken).
pub const MAX_OWNED_ORGS: i64 = 10;

/// The most names an organization takes in 30 days, the one it was made
/// with among them (3: two renames a month); going back to a name it
/// already holds takes none.
pub const MAX_NAMES_IN_30_DAYS: i64 = 3;

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

    /// `org_create`: a new organization, its only owner the person asking.
    /// They act in it once they sign in to it (or refresh their session
    /// naming it); the credential asking stays in its own organization.
    pub async fn org_create(&self, ctx: &RequestContext, input: OrgCreate) -> Result<OrgView> {
        own_act(ctx, "make an organization")?;
        let display_name = input.display_name.clone().unwrap_or_else(|| input.name.clone());
        let mut v = Validator::new();
        validate::name(&mut v, "name", &input.name);
        validate::display_name(&mut v, "display_name", &display_name);
        validate::labels(&mut v, "labels", &input.labels);
        v.finish()?;
        let (input, display_name) = (&input, display_name.trim());
        self.idempotent(ctx, "org_create", input, |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let user = ctx.principal.id;
            let (owned, recent) = store::orgs::made_by(&mut tx, user).await?;
            for (quota, usage) in [("organizations_owned", owned), ("organizations_made_in_30_days", recent)] {
                if usage >= MAX_OWNED_ORGS {
                    return Err(Error::QuotaExceeded { quota, limit: MAX_OWNED_ORGS, usage, requested: 1 });
                }
            }
            let labels = serde_json::to_value(&input.labels).map_err(|e| Error::Internal(e.into()))?;
            let id = OrgId::generate().uuid();
            let row = store::orgs::insert(&mut tx, id, user, &input.name, display_name, &labels).await?;
            store::memberships::insert_owner(&mut tx, row.id, user).await?;
            let view = row.into_view();
            // Recorded in the new organization, by its owner.
            let actor = self.user_context(ctx, user, view.id.uuid(), OrgRole::Owner);
            let details = json!({ "name": view.name, "made_from": OrgId::from_uuid(ctx.principal.org_id).to_string() });
            let record = AuditRecord {
                action: "org.create",
                resource_type: "org",
                resource_id: Some(view.id.to_string()),
                details,
            };
            audit::record(&mut tx, &actor, record).await?;
            claim.complete(&mut tx, 201, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `org_update`: a new name, display name or labels (owners); `if_match`
    /// guards against lost updates. Sign-in links that named the old name
    /// stop working; the id never changes.
    pub async fn org_update(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        if_match: Option<&str>,
        update: OrgUpdate,
    ) -> Result<OrgView> {
        let mut v = Validator::new();
        if let Some(name) = &update.name {
            validate::name(&mut v, "name", name);
        }
        if let Some(display_name) = &update.display_name {
            validate::display_name(&mut v, "display_name", display_name);
        }
        if let Some(labels) = &update.labels {
            validate::labels(&mut v, "labels", labels);
        }
        v.finish()?;
        self.org_authorized(ctx, org, Action::ManageOrg).await?;
        let mut tx = self.db().begin().await?;
        let row = store::orgs::find_for_update(&mut tx, org.uuid())
            .await?
            .ok_or_else(|| Error::not_found("organization", org.to_string()))?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        let renamed_from = update.name.as_ref().filter(|name| **name != row.name).map(|_| row.name.clone());
        // Every name an organization had stays its own, so renames are few:
        // one organization cannot hold a catalogue of names.
        if let (Some(_), Some(name)) = (&renamed_from, &update.name) {
            let since = chrono::Utc::now() - chrono::Duration::days(30);
            let taken = store::orgs::names_taken_since(&mut tx, row.id, name, since).await?;
            if let Some(taken) = taken.filter(|taken| *taken >= MAX_NAMES_IN_30_DAYS) {
                return Err(Error::QuotaExceeded {
                    quota: "organization_names_in_30_days",
                    limit: MAX_NAMES_IN_30_DAYS,
                    usage: taken,
                    requested: 1,
                });
            }
        }
        let labels =
            update.labels.as_ref().map(serde_json::to_value).transpose().map_err(|e| Error::Internal(e.into()))?;
        let display_name = update.display_name.as_deref().map(str::trim);
        let row = store::orgs::update(&mut tx, row.id, update.name.as_deref(), display_name, labels.as_ref()).await?;
        let details = json!({
            "name": update.name,
            "renamed_from": renamed_from,
            "display_name": display_name,
            "labels": update.labels,
        });
        let record =
            AuditRecord { action: "org.update", resource_type: "org", resource_id: Some(org.to_string()), details };
        audit::record(&mut tx, ctx, record).await?;
        self.commit(ctx, tx).await?;
        Ok(row.into_view())
    }

    /// `org_delete`: deletes an empty organization (no projects, no usage
    /// that a finalized invoice does not hold yet), by one of its owners
    /// signed in (a session, not a token) who belongs to another
    /// organization to act in afterwards. Every member, service account,
    /// token and session stops working at once; its name stays taken, and
    /// its invoices and audit log stay on record.
    pub async fn org_delete(&self, ctx: &RequestContext, org: OrgId, if_match: Option<&str>) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageOrg).await?;
        own_act(ctx, "delete an organization")?;
        // Never a token's act, however long-lived: the person, signed in.
        if !matches!(ctx.principal.credential, moke_iam::Credential::Session { .. }) {
            return Err(Error::refused("session_only", "delete an organization signed in, not with a token"));
        }
        let mut tx = self.db().begin().await?;
        let row = store::orgs::find_for_update(&mut tx, org.uuid())
            .await?
            .ok_or_else(|| Error::not_found("organization", org.to_string()))?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        let store::orgs::BeforeDelete { projects, elsewhere, unbilled } =
            store::orgs::before_delete(&mut tx, row.id, ctx.principal.id).await?;
        if projects > 0 {
            return Err(Error::conflict(
                "org_not_empty",
                format!("organization {} still has {projects} project(s); delete them first", row.name),
            ));
        }
        if !elsewhere {
            return Err(Error::conflict(
                "last_organization",
                "this is the only organization you belong to; make or join another one first",
            ));
        }
        if unbilled {
            return Err(Error::conflict(
                "unbilled_usage",
                "usage is recorded that no finalized invoice holds yet; delete the organization once the month's \
                 invoice is finalized",
            ));
        }
        // Recorded before the organization closes, while its principal still counts.
        let record = AuditRecord {
            action: "org.delete",
            resource_type: "org",
            resource_id: Some(org.to_string()),
            details: json!({ "name": row.name }),
        };
        audit::record(&mut tx, ctx, record).await?;
        let closed = store::orgs::close(&mut tx, row.id).await?;
        self.commit(ctx, tx).await?;
        // Every gateway drops the cached principals of everyone who could act in it.
        for principal in closed.members.iter().chain(&closed.service_accounts) {
            self.principal_cache().evict(*principal);
        }
        Ok(())
    }
}

/// Refuses an act that is a person's own (making or deleting an
/// organization) to anyone but a person signed in, or using a token that is
/// neither limited nor expiring.
fn own_act(ctx: &RequestContext, what: &str) -> Result<()> {
    let principal = &ctx.principal;
    if principal.kind != moke_iam::PrincipalKind::User {
        return Err(Error::refused("person_only", format!("only a person may {what}; a service account may not")));
    }
    if principal.scope != moke_iam::Scope::default() || principal.expires_at.is_some() {
        return Err(Error::refused(
            "exceeds_credential",
            format!("refused: {what} signed in, or with a token that is neither limited nor expiring"),
        ));
    }
    Ok(())
}
