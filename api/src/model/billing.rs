//! Billing's public model: invoices and their lines. Amounts are exact
//! decimals written as strings with the currency's minor-unit digits.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::{BudgetId, CreditGrantId, InvoiceId};
/// Where an invoice stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum InvoiceStatus {
    /// The month so far (or a month in its grace period): a live preview
    /// that changes as usage arrives. It has no number yet.
    Draft,
    /// Issued: numbered, and it never changes again.
    Finalized,
    /// Withdrawn; a replacement is issued in its place.
    Void,
}

impl InvoiceStatus {
    pub fn parse(text: &str) -> Option<InvoiceStatus> {
        match text {
            "draft" => Some(InvoiceStatus::Draft),
            "finalized" => Some(InvoiceStatus::Finalized),
            "void" => Some(InvoiceStatus::Void),
            _ => None,
        }
    }
}

/// What an invoice line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum InvoiceLineKind {
    /// Usage in the invoice's month.
    Usage,
    /// Usage of an earlier month that was already finalized when it was
    /// reported.
    Adjustment,
    /// A credit applied (negative).
    Credit,
}

/// One organization's invoice for one calendar month (UTC), without its
/// lines (`GET …/invoices/{invoice}` has them).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "InvoiceSummary")]
pub struct InvoiceSummary {
    pub id: InvoiceId,
    /// Given when the invoice is finalized, e.g. `MOKE-2027-000042`:
    /// consecutive within a year, with no gaps.
    #[schema(pattern = r"^MOKE-[0-9]{4}-[0-9]{6}$")]
    pub number: Option<String>,
    pub status: InvoiceStatus,
    /// The first instant of the month.
    pub period_start: DateTime<Utc>,
    /// The first instant of the next month.
    pub period_end: DateTime<Utc>,
    /// ISO 4217 code.
    #[schema(example = "USD")]
    pub currency: String,
    /// Usage and adjustments, before credits.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "129.38")]
    pub subtotal: String,
    /// Credits applied (zero or negative).
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "0.00")]
    pub credits: String,
    /// What is owed: the sum of every line.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "129.38")]
    pub total: String,
    pub finalized_at: Option<DateTime<Utc>>,
    pub voided_at: Option<DateTime<Utc>>,
    /// A void invoice: why it was withdrawn.
    pub void_reason: Option<String>,
    /// The void invoice this one was issued in place of.
    pub replaces: Option<InvoiceId>,
    /// A void invoice: the one issued in its place.
    pub replaced_by: Option<InvoiceId>,
}

/// An invoice with its lines: one per project, resource and price, each
/// rounded once to the currency's minor unit (half away from zero); the
/// totals are sums of the lines. A draft is rated from the usage recorded
/// so far each time it is read.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Invoice")]
pub struct InvoiceView {
    #[serde(flatten)]
    #[graphql(flatten)]
    pub summary: InvoiceSummary,
    pub lines: Vec<InvoiceLine>,
}

/// One line of an invoice.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct InvoiceLine {
    pub kind: InvoiceLineKind,
    /// The price's id (`bm.small.hour`), or a credit grant's.
    pub sku: String,
    pub product: String,
    /// The project's name when the usage was recorded.
    pub project: String,
    /// The resource's prefixed id: a cluster (`cl_…`) for its control
    /// plane, a node pool (`np_…`) for its nodes.
    pub resource_id: String,
    pub resource_name: String,
    /// In `unit`s, to four decimals; the amount comes from the exact
    /// seconds, each instance charged at least its minimum (60 s a node)
    /// and at most its monthly cap (672 h).
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$", example = "682.0167")]
    pub quantity: String,
    #[schema(example = "hour")]
    pub unit: String,
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$", example = "0.1786")]
    pub unit_price: String,
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "121.81")]
    pub amount: String,
    /// The first and last instant of usage on the line.
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// What kind of credit a grant is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum CreditKind {
    /// Given (a trial, a goodwill gesture).
    Promotional,
    /// Paid for in advance.
    Prepaid,
}

impl CreditKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CreditKind::Promotional => "promotional",
            CreditKind::Prepaid => "prepaid",
        }
    }
    pub fn parse(text: &str) -> Option<CreditKind> {
        match text {
            "promotional" => Some(CreditKind::Promotional),
            "prepaid" => Some(CreditKind::Prepaid),
            _ => None,
        }
    }
}

/// A credit the organization holds. Credits are used when an invoice is
/// finalized: the lowest priority number first, then the one that expires
/// soonest, then the oldest; each shows on the invoice as a line.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "CreditGrant")]
pub struct CreditGrantView {
    pub id: CreditGrantId,
    pub kind: CreditKind,
    pub description: String,
    /// What was granted.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "100.00")]
    pub amount: String,
    /// What is left of it.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "62.18")]
    pub remaining: String,
    pub priority: i32,
    pub granted_at: DateTime<Utc>,
    /// After this it is no longer used; `null`: never.
    pub expires_at: Option<DateTime<Utc>>,
}

/// Where the organization stands this month.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "BillingBalance")]
pub struct BillingBalanceView {
    /// ISO 4217 code.
    #[schema(example = "USD")]
    pub currency: String,
    /// Usage so far this calendar month (UTC), before credits.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "129.38")]
    pub month_to_date_usage: String,
    /// What is left of the credits that have not expired.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "62.18")]
    pub credits_remaining: String,
    /// This month's usage after the credits that would cover it now.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "67.20")]
    pub month_to_date_balance: String,
    /// When these figures were computed.
    pub generated_at: DateTime<Utc>,
}

/// What a budget watches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum BudgetBasis {
    /// The month's usage so far.
    #[default]
    Spend,
    /// The month's usage so far, extended linearly to the month's end
    /// (from the second day of the month; before that, the spend).
    Forecast,
}

impl BudgetBasis {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetBasis::Spend => "spend",
            BudgetBasis::Forecast => "forecast",
        }
    }
    pub fn parse(text: &str) -> Option<BudgetBasis> {
        match text {
            "spend" => Some(BudgetBasis::Spend),
            "forecast" => Some(BudgetBasis::Forecast),
            _ => None,
        }
    }
}

/// A budget's thresholds in the schema: 1 to 10 distinct percents, each
/// from 1 to 1000.
pub struct BudgetThresholds;

impl utoipa::PartialSchema for BudgetThresholds {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, ObjectBuilder, SchemaFormat, Type};
        let percent = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32)))
            .minimum(Some(1))
            .maximum(Some(1000));
        ArrayBuilder::new()
            .items(percent)
            .min_items(Some(1))
            .max_items(Some(10))
            .unique_items(true)
            .description(Some("Percents of the amount, 1 to 1000, each once."))
            .into()
    }
}

impl ToSchema for BudgetThresholds {}

fn default_thresholds() -> Vec<i32> {
    vec![50, 90, 100]
}

/// A monthly budget: when the month's usage (before credits), or its
/// forecast, reaches a threshold, a `budget.threshold_reached` event goes
/// to the event webhooks subscribed to `budget.*` and a mail to the
/// organization's owners and billing members, once per month and
/// threshold. Budgets alert; they never stop anything.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct BudgetCreate {
    /// 1 to 100 characters, no control characters, unique in the organization.
    #[schema(min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f]+$")]
    pub name: String,
    /// A month's amount in the catalog's currency, more than 0.
    #[schema(pattern = r"^[0-9]{1,12}(\.[0-9]{1,2})?$", example = "500.00")]
    pub amount: String,
    /// Percents of the amount, 1 to 1000, each once: 1 to 10 of them.
    #[serde(default = "default_thresholds")]
    #[schema(value_type = BudgetThresholds, example = json!([50, 90, 100]))]
    #[graphql(default_with = "default_thresholds()")]
    pub thresholds: Vec<i32>,
    #[serde(default)]
    #[graphql(default)]
    pub basis: BudgetBasis,
}

/// A change to a budget: only the fields given change.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct BudgetUpdate {
    #[schema(min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f]+$")]
    pub name: Option<String>,
    #[schema(pattern = r"^[0-9]{1,12}(\.[0-9]{1,2})?$", example = "750.00")]
    pub amount: Option<String>,
    #[schema(value_type = Option<BudgetThresholds>)]
    pub thresholds: Option<Vec<i32>>,
    pub basis: Option<BudgetBasis>,
}

/// A threshold this month's usage reached.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct BudgetAlert {
    /// Percent of the amount.
    pub threshold: i32,
    /// The spend or forecast that reached it.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$")]
    pub value: String,
    pub fired_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Budget")]
pub struct BudgetView {
    pub id: BudgetId,
    pub name: String,
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "500.00")]
    pub amount: String,
    /// ISO 4217 code.
    #[schema(example = "USD")]
    pub currency: String,
    pub thresholds: Vec<i32>,
    pub basis: BudgetBasis,
    /// This month's usage so far, before credits.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$")]
    pub spend: String,
    /// `spend` extended linearly to the month's end.
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$")]
    pub forecast: String,
    /// The thresholds reached this month.
    pub alerts: Vec<BudgetAlert>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A plan on offer: the quota limits it sets (by the names `quota_view`
/// uses), which an operator's override for one organization can replace.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(complex)]
pub struct PlanView {
    #[schema(example = "business")]
    pub id: String,
    pub display_name: String,
    pub description: String,
    /// Whether billing managers may move to it themselves
    /// (`billing_plan_update`); Moke's operators give the others.
    pub self_serve: bool,
    /// Quota name (as in `quota_view`) to limit.
    #[graphql(skip)]
    pub limits: BTreeMap<String, i64>,
}

#[async_graphql::ComplexObject]
impl PlanView {
    /// The limits this plan sets, by quota name.
    async fn quota_limits(&self) -> Vec<PlanLimit> {
        self.limits.iter().map(|(quota, limit)| PlanLimit { quota: quota.clone(), limit: *limit }).collect()
    }
}

/// One quota limit of a plan (GraphQL has no maps).
#[derive(Debug, Clone, async_graphql::SimpleObject)]
pub struct PlanLimit {
    pub quota: String,
    pub limit: i64,
}

/// An organization's plan.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct OrgPlanView {
    pub plan: PlanView,
    /// When the organization last changed plans; `null` while it is on the
    /// plan every organization starts on.
    pub changed_at: Option<DateTime<Utc>>,
}

/// A change of plan, to a self-serve one (403 `plan_needs_operator`
/// otherwise). A plan with lower limits is refused (409
/// `plan_limits_exceeded`) while the organization uses more than it allows.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct PlanChange {
    /// A plan's `id` from `GET /v1/plans`.
    #[schema(pattern = r"^[a-z0-9-]{1,32}$", example = "business")]
    pub plan: String,
}

/// What an organization used on UTC days `[start, end)`, at list price:
/// each row is a day's hours of one resource at one price, rounded once.
/// The per-node minimum and the monthly cap apply on invoices only, so an
/// invoice can come to less.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct UsageReport {
    /// ISO 4217 code.
    pub currency: String,
    pub start: NaiveDate,
    /// The first day not included.
    pub end: NaiveDate,
    /// Each day with usage, and what it came to.
    pub days: Vec<UsageDay>,
    pub items: Vec<UsageItem>,
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "42.18")]
    pub total: String,
}

/// A day's usage at list price.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct UsageDay {
    pub day: NaiveDate,
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "1.41")]
    pub amount: String,
}

/// One day of one resource at one price.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct UsageItem {
    pub day: NaiveDate,
    /// The project's name when the usage was recorded.
    pub project: String,
    /// The cluster (`cl_…`, its control plane) or node pool (`np_…`).
    pub resource_id: String,
    pub resource_name: String,
    pub sku: String,
    pub product: String,
    /// Instance hours (nodes × hours), to 4 decimals.
    #[schema(pattern = r"^[0-9]+(\.[0-9]+)?$", example = "48")]
    pub hours: String,
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$", example = "0.1786")]
    pub unit_price: String,
    #[schema(pattern = r"^-?[0-9]+\.[0-9]{2}$", example = "8.57")]
    pub amount: String,
}
