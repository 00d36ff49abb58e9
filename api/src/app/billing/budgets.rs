//! Budgets: a monthly amount with thresholds in percent, on the month's
//! spend (usage before credits) or its linear forecast. A periodic job
//! fires each threshold once per month and budget: an audit event, a
//! `budget.threshold_reached` event for webhooks that subscribe to
//! `budget.*`, and a mail to the owners and billing members. Budgets
//! alert; they never stop workloads.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use moke_billing::Decimal;
use moke_iam::Action;
use sqlx::PgConnection;
use uuid::Uuid;

use super::metering::{month_start, next_month};
use super::prices;
use super::store::{self, BudgetFields, BudgetRow};
use crate::app::error::Validator;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::mail::{self, Mail};
use crate::app::{App, Error, PageRequest, RequestContext, Result};
use crate::ids::{BudgetId, OrgId};
use crate::model::{BudgetAlert, BudgetBasis, BudgetCreate, BudgetUpdate, BudgetView, Page};

/// Budgets the alert job reads at a time.
const ALERT_BATCH: i64 = 200;

/// Budget alerts are mailed only while the organization's budget mails of
/// the last day (all recipients together) are fewer than this; later
/// alerts still go out as events.
const MAILS_PER_DAY: i64 = 20;

/// This month's spend and its forecast for one organization.
#[derive(Clone, Copy)]
struct Month {
    start: DateTime<Utc>,
    spend: Decimal,
    forecast: Decimal,
}

impl Month {
    fn value(&self, basis: BudgetBasis) -> Decimal {
        match basis {
            BudgetBasis::Spend => self.spend,
            BudgetBasis::Forecast => self.forecast,
        }
    }
}

/// Checks a budget's fields, naming each bad one; the amount parsed.
fn checked(name: &str, amount: &str, thresholds: &[i32]) -> Result<Decimal> {
    let mut v = Validator::new();
    v.check((1..=100).contains(&name.chars().count()), "name", "invalid", "1 to 100 characters");
    v.check(!name.chars().any(|c| c < ' ' || c == '\u{7f}'), "name", "invalid", "no control characters");
    // Exactly the schema's pattern, ^[0-9]{1,12}(\.[0-9]{1,2})?$, and more than 0.
    let (whole, fraction) = amount.split_once('.').unwrap_or((amount, "0"));
    let digits = |text: &str, most: usize| (1..=most).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit());
    let parsed = (digits(whole, 12) && digits(fraction, 2))
        .then(|| amount.parse::<Decimal>().ok())
        .flatten()
        .filter(|a| *a > Decimal::ZERO);
    v.check(parsed.is_some(), "amount", "invalid", "more than 0, at most 2 decimals, e.g. 500.00");
    v.check((1..=10).contains(&thresholds.len()), "thresholds", "invalid", "1 to 10 thresholds");
    v.check(
        thresholds.iter().all(|t| (1..=1000).contains(t)),
        "thresholds",
        "out_of_range",
        "each between 1 and 1000 (percent)",
    );
    let mut sorted = thresholds.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    v.check(sorted.len() == thresholds.len(), "thresholds", "invalid", "each threshold once");
    v.finish()?;
    Ok(parsed.unwrap_or_default())
}

impl App {
    /// `budget_list`: the organization's budgets, with this month's spend,
    /// forecast and the alerts that fired.
    pub async fn budget_list(&self, ctx: &RequestContext, org: OrgId, page: PageRequest) -> Result<Page<BudgetView>> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::budgets(&mut conn, org.uuid(), &page).await?;
        let views = views(&mut conn, org.uuid(), rows, Utc::now()).await?;
        Ok(page.page(views, |b| b.id.uuid()))
    }

    /// `budget_view`: one budget.
    pub async fn budget_view(&self, ctx: &RequestContext, org: OrgId, budget: BudgetId) -> Result<BudgetView> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let mut conn = self.db().acquire().await?;
        let row = store::budget(&mut conn, org.uuid(), budget.uuid())
            .await?
            .ok_or_else(|| Error::not_found("budget", budget.to_string()))?;
        one(views(&mut conn, org.uuid(), vec![row], Utc::now()).await?)
    }

    /// `budget_create`: at most `billing.max_budgets` an organization, names unique.
    pub async fn budget_create(&self, ctx: &RequestContext, org: OrgId, input: BudgetCreate) -> Result<BudgetView> {
        // The answer shows the month's spend: reading billing comes with managing budgets.
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        self.org_authorized(ctx, org, Action::ManageBilling).await?;
        let amount = checked(&input.name, &input.amount, &input.thresholds)?;
        let input = &input;
        self.idempotent(ctx, "budget_create", &(org.uuid(), input), |claim| async move {
            let mut thresholds = input.thresholds.clone();
            thresholds.sort_unstable();
            let mut tx = claim.begin(self.db()).await?;
            let count = store::count_budgets_locked(&mut tx, org.uuid()).await?;
            let limit = self.config().billing.max_budgets;
            if count >= limit {
                return Err(Error::QuotaExceeded { quota: "budgets", limit, usage: count, requested: 1 });
            }
            let id = BudgetId::generate();
            let fields =
                BudgetFields { name: &input.name, amount, thresholds: &thresholds, basis: input.basis.as_str() };
            let row = store::insert_budget(&mut tx, id.uuid(), org.uuid(), fields)
                .await?
                .ok_or_else(|| Error::conflict("name_taken", format!("a budget named {:?} exists", input.name)))?;
            let record = AuditRecord {
                action: "budget.create",
                resource_type: "budget",
                resource_id: Some(id.to_string()),
                details: serde_json::json!({ "name": input.name, "thresholds": thresholds, "basis": input.basis }),
            };
            audit::record(&mut tx, ctx, record).await?;
            let view = one(views(&mut tx, org.uuid(), vec![row], Utc::now()).await?)?;
            claim.complete(&mut tx, 201, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `budget_update`: only the fields given change. Alerts that fired
    /// this month stay fired.
    pub async fn budget_update(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        budget: BudgetId,
        input: BudgetUpdate,
    ) -> Result<BudgetView> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        self.org_authorized(ctx, org, Action::ManageBilling).await?;
        let mut tx = self.db().begin().await?;
        let current = store::budget_locked(&mut tx, org.uuid(), budget.uuid())
            .await?
            .ok_or_else(|| Error::not_found("budget", budget.to_string()))?;
        let name = input.name.clone().unwrap_or(current.name.clone());
        let amount_text = input.amount.clone().unwrap_or_else(|| current.amount.normalize().to_string());
        let mut thresholds = input.thresholds.clone().unwrap_or(current.thresholds.clone());
        let amount = checked(&name, &amount_text, &thresholds)?;
        thresholds.sort_unstable();
        let basis = input.basis.map_or(current.basis.clone(), |b| b.as_str().to_string());
        let fields = BudgetFields { name: &name, amount, thresholds: &thresholds, basis: &basis };
        let row = store::update_budget(&mut tx, org.uuid(), budget.uuid(), fields)
            .await?
            .ok_or_else(|| Error::not_found("budget", budget.to_string()))?;
        let record = AuditRecord {
            action: "budget.update",
            resource_type: "budget",
            resource_id: Some(budget.to_string()),
            details: serde_json::json!({ "name": name, "thresholds": thresholds, "basis": basis }),
        };
        audit::record(&mut tx, ctx, record).await?;
        let view = one(views(&mut tx, org.uuid(), vec![row], Utc::now()).await?)?;
        self.commit(ctx, tx).await?;
        Ok(view)
    }

    /// `budget_delete`: the budget and its alerts.
    pub async fn budget_delete(&self, ctx: &RequestContext, org: OrgId, budget: BudgetId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageBilling).await?;
        let mut tx = self.db().begin().await?;
        if !store::delete_budget(&mut tx, org.uuid(), budget.uuid()).await? {
            return Err(Error::not_found("budget", budget.to_string()));
        }
        let record = AuditRecord {
            action: "budget.delete",
            resource_type: "budget",
            resource_id: Some(budget.to_string()),
            details: serde_json::json!({}),
        };
        audit::record(&mut tx, ctx, record).await?;
        self.commit(ctx, tx).await?;
        Ok(())
    }

    /// Fires every threshold a budget reached this month (as of `now`, the
    /// database's clock when `None`) and had not fired yet; each in its own
    /// transaction. Returns how many fired.
    pub async fn evaluate_budgets(&self, now: Option<DateTime<Utc>>) -> Result<usize> {
        let now = match now {
            Some(now) => now,
            None => store::now(&mut *self.db().acquire().await?).await?,
        };
        let mut months: HashMap<Uuid, Month> = HashMap::new();
        let (mut after, mut fired) = (None, 0);
        loop {
            let page = store::all_budgets(&mut *self.db().acquire().await?, after, ALERT_BATCH).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.id);
            for budget in page {
                // One budget failing (an unratable month, a budget deleted meanwhile) holds up no other.
                let month = match months.get(&budget.org_id) {
                    Some(month) => *month,
                    None => match this_month(&mut *self.db().acquire().await?, budget.org_id, now).await {
                        Ok(month) => *months.entry(budget.org_id).or_insert(month),
                        Err(error) => {
                            tracing::error!(org = %OrgId::from_uuid(budget.org_id), %error, "budgets not checked");
                            continue;
                        }
                    },
                };
                match self.fire_reached(&budget, month).await {
                    Ok(n) => fired += n,
                    Err(error) => {
                        tracing::error!(budget = %BudgetId::from_uuid(budget.id), %error, "budget alert not sent")
                    }
                }
            }
        }
        Ok(fired)
    }

    /// Fires the thresholds of `budget` that `month` reached, once each, in
    /// one transaction: an event and an audit record per threshold, and one
    /// mail for them all to each recipient (while under [`MAILS_PER_DAY`];
    /// the events still go out).
    async fn fire_reached(&self, budget: &BudgetRow, month: Month) -> Result<usize> {
        let basis = BudgetBasis::parse(&budget.basis).unwrap_or_default();
        let value = month.value(basis);
        let reached: Vec<i32> = budget
            .thresholds
            .iter()
            .copied()
            .filter(|t| value >= budget.amount * Decimal::from(*t) / Decimal::from(100))
            .collect();
        if reached.is_empty() {
            return Ok(0);
        }
        let currency = &prices().currency;
        let id = BudgetId::from_uuid(budget.id).to_string();
        let mut tx = self.db().begin().await?;
        let mut fired = Vec::new();
        for threshold in reached {
            if !store::fire_alert(&mut tx, budget.id, month.start, threshold, value).await? {
                continue;
            }
            let details = serde_json::json!({
                "id": id,
                "name": budget.name,
                "threshold": threshold,
                "basis": basis,
                "amount": currency.format(budget.amount),
                "value": currency.format(value),
                "currency": currency.code,
                "period_start": month.start,
            });
            let record = AuditRecord {
                action: "budget.threshold_reached",
                resource_type: "budget",
                resource_id: Some(id.clone()),
                details: serde_json::json!({ "threshold": threshold }),
            };
            audit::record(&mut tx, &RequestContext::system(budget.org_id), record).await?;
            crate::app::integrations::store::webhooks::emit_event(
                &mut tx,
                budget.org_id,
                "budget.threshold_reached",
                details,
            )
            .await?;
            fired.push(threshold);
        }
        if let Some(highest) = fired.iter().max()
            && mail::queued_today(&mut tx, budget.org_id, "budget").await? < MAILS_PER_DAY
        {
            // The name a billing member chose stays out of the subject.
            let subject = format!("Moke: a budget of your organization reached {highest}%");
            // The body names the organization: one person may bill for several.
            let org_name = mail::quoted(&crate::app::iam::members::org_display_name(&mut tx, budget.org_id).await?);
            let body = format!(
                "This month's {} for your organization {org_name} is {} {}: {highest}% of the budget {:?} \
                 ({} {}).\n\nBudgets only alert: nothing was stopped. See the organization's Billing page for the \
                 invoice so far.\n",
                match basis {
                    BudgetBasis::Spend => "usage",
                    BudgetBasis::Forecast => "forecast usage",
                },
                currency.format(value),
                currency.code,
                budget.name,
                currency.format(budget.amount),
                currency.code,
            );
            for to in crate::app::iam::members::billing_contacts(&mut tx, budget.org_id).await? {
                let mail = Mail { kind: "budget", to: &to, subject: &subject, body: &body, org: Some(budget.org_id) };
                mail::enqueue(&mut tx, self, mail).await?;
            }
        }
        tx.commit().await?;
        Ok(fired.len())
    }
}

/// The one view of a one-row list.
fn one(mut views: Vec<BudgetView>) -> Result<BudgetView> {
    views.pop().ok_or_else(|| Error::Internal(anyhow::anyhow!("a budget without a view")))
}

/// `org`'s usage this month as of `now` (before credits) and its linear
/// forecast (the spend itself on the month's first day, when a line
/// through a few hours says little).
async fn this_month(conn: &mut PgConnection, org: Uuid, now: DateTime<Utc>) -> Result<Month> {
    let start = month_start(now);
    let spend = match store::of_month(conn, org, start).await? {
        Some(row) if row.status == "draft" => super::invoices::rated_usage(conn, &row).await?.subtotal(),
        Some(row) => row.subtotal.unwrap_or_default(),
        None => Decimal::ZERO,
    };
    let elapsed = (now - start).num_seconds();
    let length = (next_month(start) - start).num_seconds();
    let forecast = if now - start < Duration::days(1) || elapsed <= 0 {
        spend
    } else {
        prices().currency.round(spend * Decimal::from(length) / Decimal::from(elapsed))
    };
    Ok(Month { start, spend, forecast })
}

/// Views of `rows` (all of `org`), with this month's figures and alerts.
async fn views(
    conn: &mut PgConnection,
    org: Uuid,
    rows: Vec<BudgetRow>,
    now: DateTime<Utc>,
) -> Result<Vec<BudgetView>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let month = this_month(conn, org, now).await?;
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let mut alerts: HashMap<Uuid, Vec<BudgetAlert>> = HashMap::new();
    let currency = &prices().currency;
    for alert in store::alerts(conn, &ids, month.start).await? {
        alerts.entry(alert.budget_id).or_default().push(BudgetAlert {
            threshold: alert.threshold,
            value: currency.format(alert.value),
            fired_at: alert.fired_at,
        });
    }
    Ok(rows
        .into_iter()
        .map(|row| BudgetView {
            id: BudgetId::from_uuid(row.id),
            alerts: alerts.remove(&row.id).unwrap_or_default(),
            name: row.name,
            amount: currency.format(row.amount),
            currency: currency.code.clone(),
            thresholds: row.thresholds,
            basis: BudgetBasis::parse(&row.basis).unwrap_or_default(),
            spend: currency.format(month.spend),
            forecast: currency.format(month.forecast),
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
        .collect())
}
