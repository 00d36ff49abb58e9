//! Domains an organization proves it owns: Moke issues a challenge, the
//! customer publishes it as a DNS TXT record at `_moke-challenge.<domain>`,
//! and Moke looks it up through the system resolver (or `auth.dns_resolver`).
//! Only a verified domain may let people join through SSO by their address,
//! and a domain is verified by at most one organization at a time.

use moke_iam::Action;
use moke_iam::token::random_secret;
use serde_json::json;

use crate::app::error::Validator;
use crate::app::iam::store;
use crate::app::iam::store::domains::DomainRow;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, PageRequest, RequestContext, Result};
use crate::ids::{DomainId, OrgId};
use crate::model::{DomainCreate, DomainVerificationRecord, DomainView, Page};

/// The label under the domain that carries the challenge.
pub const CHALLENGE_LABEL: &str = "_moke-challenge";
/// What the TXT record's text starts with.
pub const CHALLENGE_PREFIX: &str = "moke-domain-verification=";
/// Domains one organization may claim.
const MAX_DOMAINS_PER_ORG: i64 = 50;

impl DomainRow {
    fn into_view(self) -> DomainView {
        DomainView {
            id: DomainId::from_uuid(self.id),
            verification: DomainVerificationRecord {
                name: format!("{CHALLENGE_LABEL}.{}", self.domain),
                record_type: "TXT".to_string(),
                value: format!("{CHALLENGE_PREFIX}{}", self.challenge),
            },
            domain: self.domain,
            verified: self.verified_at.is_some(),
            verified_at: self.verified_at,
            last_checked_at: self.last_checked_at,
            last_error: self.last_error,
            created_at: self.created_at,
        }
    }
}

/// A DNS name of 2 to 127 labels, lowercase; no wildcards, no trailing dot.
fn is_domain(text: &str) -> bool {
    text.len() <= 253
        && text.contains('.')
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

/// Looks up the TXT records at `name` with the configured resolver.
async fn txt_records(resolver_setting: &str, name: &str) -> std::result::Result<Vec<String>, String> {
    use hickory_resolver::config::{NameServerConfig, ResolverConfig};
    use hickory_resolver::net::runtime::TokioRuntimeProvider;
    let resolver = match resolver_setting.parse::<std::net::SocketAddr>() {
        Ok(server) => {
            let mut nameserver = NameServerConfig::udp_and_tcp(server.ip());
            for connection in &mut nameserver.connections {
                connection.port = server.port();
            }
            hickory_resolver::TokioResolver::builder_with_config(
                ResolverConfig::from_name_servers(vec![nameserver]),
                TokioRuntimeProvider::default(),
            )
            .build()
        }
        Err(_) => hickory_resolver::TokioResolver::builder_tokio().and_then(|builder| builder.build()),
    }
    .map_err(|e| format!("no resolver: {e}"))?;
    // Fully qualified: no search domains are tried.
    let lookup = resolver.txt_lookup(format!("{name}.")).await.map_err(|e| {
        if e.is_no_records_found() { "no TXT record found".to_string() } else { "the DNS lookup failed".to_string() }
    })?;
    Ok(lookup
        .answers()
        .iter()
        .filter_map(|record| match &record.data {
            hickory_resolver::proto::rr::RData::TXT(txt) => {
                Some(txt.txt_data.iter().map(|part| String::from_utf8_lossy(part).into_owned()).collect::<String>())
            }
            _ => None,
        })
        .collect())
}

impl App {
    /// `domain_create`: claims a domain and returns the TXT record that proves it.
    pub async fn domain_create(&self, ctx: &RequestContext, org: OrgId, input: DomainCreate) -> Result<DomainView> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let domain = input.domain.trim().trim_end_matches('.').to_lowercase();
        let mut v = Validator::new();
        v.check(is_domain(&domain), "domain", "invalid", "a domain name such as example.com");
        v.finish()?;
        let input = &input;
        let domain = &domain;
        self.idempotent(ctx, "domain_create", &(org, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            crate::app::kernel::quotas::lock_org(&mut tx, org.uuid()).await?;
            let count = store::domains::count(&mut tx, org.uuid()).await?;
            if count >= MAX_DOMAINS_PER_ORG {
                return Err(Error::QuotaExceeded {
                    quota: "domains",
                    limit: MAX_DOMAINS_PER_ORG,
                    usage: count,
                    requested: 1,
                });
            }
            let row =
                store::domains::insert(&mut tx, DomainId::generate().uuid(), org.uuid(), domain, &random_secret(32))
                    .await?;
            audit::record(
                &mut tx,
                ctx,
                AuditRecord {
                    action: "domain.create",
                    resource_type: "domain",
                    resource_id: Some(DomainId::from_uuid(row.id).to_string()),
                    details: json!({ "domain": domain }),
                },
            )
            .await?;
            let view = row.into_view();
            claim.complete(&mut tx, 201, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `domain_list`: the domains the organization claims, oldest first.
    pub async fn domain_list(&self, ctx: &RequestContext, org: OrgId, page: PageRequest) -> Result<Page<DomainView>> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::domains::list(&mut conn, org.uuid(), &page).await?;
        Ok(page.page(rows.into_iter().map(DomainRow::into_view).collect(), |d| d.id.uuid()))
    }

    /// `domain_verify`: looks up the challenge record now. A domain already
    /// verified by another organization stays theirs.
    pub async fn domain_verify(&self, ctx: &RequestContext, org: OrgId, domain: &str) -> Result<DomainView> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let domain = domain.trim().trim_end_matches('.').to_lowercase();
        let mut conn = self.db().acquire().await?;
        let row = store::domains::find(&mut conn, org.uuid(), &domain)
            .await?
            .ok_or_else(|| Error::not_found("domain", domain.clone()))?;
        drop(conn);
        let record_name = format!("{CHALLENGE_LABEL}.{domain}");
        let expected = format!("{CHALLENGE_PREFIX}{}", row.challenge);
        let found = txt_records(&self.config().auth.dns_resolver, &record_name).await;
        let problem = match &found {
            Ok(texts) if texts.iter().any(|text| text.trim() == expected) => None,
            Ok(_) => Some(format!("no TXT record at {record_name} carries this domain's token")),
            Err(error) => Some(format!("{error} at {record_name}")),
        };
        let mut tx = self.db().begin().await?;
        // A proven domain lets people join: proven only while the caller's
        // credential lasts (the DNS lookup above may have taken a while).
        crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org.uuid()).await?;
        let updated =
            store::domains::record_check(&mut tx, row.id, org.uuid(), problem.as_deref(), ctx.principal.id).await?;
        audit::insert(
            &mut tx,
            ctx,
            org.uuid(),
            if problem.is_none() { "success" } else { "failure" },
            AuditRecord {
                action: "domain.verify",
                resource_type: "domain",
                resource_id: Some(DomainId::from_uuid(row.id).to_string()),
                details: json!({ "domain": domain, "problem": problem }),
            },
        )
        .await?;
        if let Some(problem) = problem.as_ref().filter(|_| ctx.is_dry_run()) {
            // Refused as the real call is (which records the failed check first).
            return Err(Error::conflict("domain_not_verified", problem.clone()));
        }
        self.commit(ctx, tx).await?;
        if let Some(problem) = problem {
            return Err(Error::conflict("domain_not_verified", problem));
        }
        Ok(updated.into_view())
    }

    /// `domain_delete`: gives a domain up; people at it no longer join through SSO.
    pub async fn domain_delete(&self, ctx: &RequestContext, org: OrgId, domain: &str) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let domain = domain.trim().trim_end_matches('.').to_lowercase();
        let mut tx = self.db().begin().await?;
        let deleted = store::domains::delete(&mut tx, org.uuid(), &domain)
            .await?
            .ok_or_else(|| Error::not_found("domain", domain.clone()))?;
        store::sso::disallow_domain(&mut tx, org.uuid(), &domain).await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "domain.delete",
                resource_type: "domain",
                resource_id: Some(DomainId::from_uuid(deleted).to_string()),
                details: json!({ "domain": domain }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::is_domain;

    #[test]
    fn domain_names() {
        assert!(is_domain("example.com"));
        assert!(is_domain("eu.corp-1.example.com"));
        for bad in ["example", "*.example.com", "-a.com", "a-.com", "a..com", "Ex ample.com", "a.com."] {
            assert!(!is_domain(bad), "{bad}");
        }
    }
}
