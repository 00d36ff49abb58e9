//! Credits: grants an organization holds (granted by an operator with
//! `moke-server billing grant-credit`), the balance they leave this month,
//! and their use at invoice finalization (see `invoices.rs`).

use chrono::{DateTime, Utc};
use moke_billing::{CreditGrant, Decimal};
use moke_iam::Action;

use super::metering::month_start;
use super::prices;
use super::store::{self, GrantRow};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, PageRequest, RequestContext, Result};
use crate::ids::{CreditGrantId, OrgId};
use crate::model::{BillingBalanceView, CreditGrantView, CreditKind, Page};

/// The most one grant may be worth (a guard against a typo'd operator command).
const MAX_GRANT: i64 = 1_000_000;

/// What an operator grants.
pub struct CreditGrantInput {
    pub kind: CreditKind,
    pub description: String,
    /// In the catalog's currency, at most its minor-unit digits.
    pub amount: Decimal,
    pub priority: i32,
    pub expires_at: Option<DateTime<Utc>>,
    /// Who grants it, for the audit log.
    pub granted_by: String,
}

impl App {
    /// `credit_grant_list`: the organization's credits, newest first.
    pub async fn credit_grant_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<CreditGrantView>> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::grant_page(&mut conn, org.uuid(), &page).await?;
        Ok(page.page(rows.iter().map(view).collect(), |g| g.id.uuid()))
    }

    /// `billing_balance_view`: this month's usage so far, the credits left,
    /// and what the month comes to after them.
    pub async fn billing_balance_view(&self, ctx: &RequestContext, org: OrgId) -> Result<BillingBalanceView> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let now = Utc::now();
        let mut conn = self.db().acquire().await?;
        let currency = &prices().currency;
        let grants = store::grants(&mut conn, org.uuid(), false).await?;
        let credits_remaining: Decimal = usable(&grants)
            .iter()
            .filter(|g| g.expires_at.is_none_or(|expiry| expiry > now))
            .map(|g| g.remaining)
            .sum();
        let (usage, balance) = match store::of_month(&mut conn, org.uuid(), month_start(now)).await? {
            Some(row) => {
                let invoice = super::invoices::rated(&mut conn, &row, self.config().billing.grace_hours).await?;
                (invoice.subtotal(), invoice.total())
            }
            None => (Decimal::ZERO, Decimal::ZERO),
        };
        Ok(BillingBalanceView {
            currency: currency.code.clone(),
            month_to_date_usage: currency.format(usage),
            credits_remaining: currency.format(credits_remaining),
            month_to_date_balance: currency.format(balance),
            generated_at: now,
        })
    }

    /// Grants `org` a credit (an operator's act, audited as the platform's).
    pub async fn grant_credit(&self, org: OrgId, input: CreditGrantInput) -> Result<CreditGrantView> {
        let currency = &prices().currency;
        let mut v = crate::app::error::Validator::new();
        v.check(
            input.amount > Decimal::ZERO
                && input.amount <= Decimal::from(MAX_GRANT)
                && input.amount.round_dp(currency.minor_units) == input.amount,
            "amount",
            "invalid",
            format!("more than 0, at most {MAX_GRANT}, in whole minor units of {}", currency.code),
        );
        v.check(
            (1..=200).contains(&input.description.chars().count()),
            "description",
            "invalid",
            "1 to 200 characters",
        );
        v.check(input.expires_at.is_none_or(|at| at > Utc::now()), "expires_at", "invalid", "must be in the future");
        v.finish()?;
        let mut tx = self.db().begin().await?;
        if !store::org_exists(&mut tx, org.uuid()).await? {
            return Err(Error::not_found("organization", org.to_string()));
        }
        let row = store::insert_grant(
            &mut tx,
            store::NewGrant {
                id: CreditGrantId::generate().uuid(),
                org: org.uuid(),
                kind: input.kind.as_str(),
                description: &input.description,
                amount: input.amount,
                priority: input.priority,
                expires_at: input.expires_at,
                granted_by: &input.granted_by,
            },
        )
        .await?;
        let granted = view(&row);
        let record = AuditRecord {
            action: "credit.grant",
            resource_type: "credit_grant",
            resource_id: Some(granted.id.to_string()),
            // Amounts and the operator's name stay out of the customer-readable log.
            details: serde_json::json!({ "kind": granted.kind, "expires_at": granted.expires_at }),
        };
        audit::record(&mut tx, &RequestContext::system(org.uuid()), record).await?;
        tx.commit().await?;
        Ok(granted)
    }
}

/// Grants as the invoice arithmetic uses them.
pub(super) fn usable(rows: &[GrantRow]) -> Vec<CreditGrant> {
    rows.iter()
        .map(|row| CreditGrant {
            id: CreditGrantId::from_uuid(row.id).to_string(),
            description: row.description.clone(),
            remaining: row.remaining,
            priority: row.priority,
            granted_at: row.granted_at,
            expires_at: row.expires_at,
        })
        .collect()
}

fn view(row: &GrantRow) -> CreditGrantView {
    let currency = &prices().currency;
    CreditGrantView {
        id: CreditGrantId::from_uuid(row.id),
        kind: CreditKind::parse(&row.kind).unwrap_or(CreditKind::Promotional),
        description: row.description.clone(),
        amount: currency.format(row.amount),
        remaining: currency.format(row.remaining),
        priority: row.priority,
        granted_at: row.granted_at,
        expires_at: row.expires_at,
    }
}
