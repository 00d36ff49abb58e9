//! Invoices: listing, viewing and downloading them, and the job that
//! finalizes each month's once its grace period is over.
//!
//! A draft is rated from its usage records whenever it is read (late usage
//! within the grace period simply shows up); finalizing rates it one last
//! time, numbers it under the year's counter lock and stores its lines,
//! after which the table refuses any change but voiding.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Utc};
use moke_billing::{Decimal, Invoice, LineKind, Usage};
use moke_iam::Action;
use sqlx::PgConnection;

use super::prices;
use super::store::{self, InvoiceRow, RecordRow};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::region::command::ResourceKind;
use crate::app::region::operations::NewOperation;
use crate::app::{App, Error, PageRequest, RequestContext, Result};
use crate::ids::{ClusterId, InvoiceId, NodePoolId, OrgId};
use crate::model::{InvoiceLine, InvoiceLineKind, InvoiceStatus, InvoiceSummary, InvoiceView, OperationStatus, Page};

/// The most invoices one run of the finalizer takes on (the rest wait for its next run).
const FINALIZE_BATCH: usize = 500;

impl App {
    /// `invoice_list`: the organization's invoices, newest first, drafts
    /// with their totals so far.
    pub async fn invoice_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<InvoiceSummary>> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::list(&mut conn, org.uuid(), &page).await?;
        let mut summaries = Vec::with_capacity(rows.len());
        for row in rows {
            // A finalized invoice's totals are stored; only drafts (at most
            // two open months an organization) are rated.
            let invoice = match row.status.as_str() {
                "draft" => rated(&mut conn, &row, self.config().billing.grace_hours).await?,
                _ => Invoice::new(prices().currency.clone(), row.period_start, row.period_end, Vec::new()),
            };
            summaries.push(summary(&row, &invoice));
        }
        Ok(page.page(summaries, |s| s.id.uuid()))
    }

    /// `invoice_view`: one invoice with its lines.
    pub async fn invoice_view(&self, ctx: &RequestContext, org: OrgId, invoice: InvoiceId) -> Result<InvoiceView> {
        let (row, rated) = self.invoice_rated(ctx, org, invoice).await?;
        Ok(view(&row, &rated))
    }

    /// `invoice_csv`: the invoice's lines as CSV, and the file name to save
    /// it under (its number, or the month for a draft).
    pub async fn invoice_csv(&self, ctx: &RequestContext, org: OrgId, invoice: InvoiceId) -> Result<(String, Vec<u8>)> {
        let (row, rated) = self.invoice_rated(ctx, org, invoice).await?;
        let csv = moke_billing::csv::invoice_csv(&rated).map_err(|e| Error::Internal(e.into()))?;
        let name = match &row.number {
            Some(number) => format!("{number}.csv"),
            None => format!("moke-invoice-{}-draft.csv", row.period_start.format("%Y-%m")),
        };
        Ok((name, csv))
    }

    /// `invoice_pdf_view`: the invoice as a PDF, and the file name to save it
    /// under.
    pub async fn invoice_pdf(&self, ctx: &RequestContext, org: OrgId, invoice: InvoiceId) -> Result<(String, Vec<u8>)> {
        let (row, rated) = self.invoice_rated(ctx, org, invoice).await?;
        let organization = store::org_name(&mut *self.db().acquire().await?, org.uuid()).await?;
        let header = moke_billing::pdf::PdfHeader {
            number: row.number.clone(),
            status: row.status.clone(),
            organization,
            finalized_at: row.finalized_at,
        };
        let name = match &row.number {
            Some(number) => format!("{number}.pdf"),
            None => format!("moke-invoice-{}-draft.pdf", row.period_start.format("%Y-%m")),
        };
        Ok((name, moke_billing::pdf::invoice_pdf(&rated, &header)))
    }

    async fn invoice_rated(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        invoice: InvoiceId,
    ) -> Result<(InvoiceRow, Invoice)> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let mut conn = self.db().acquire().await?;
        let row = store::find(&mut conn, org.uuid(), invoice.uuid())
            .await?
            .ok_or_else(|| Error::not_found("invoice", invoice.to_string()))?;
        let rated = rated(&mut conn, &row, self.config().billing.grace_hours).await?;
        Ok((row, rated))
    }

    /// Voids `org`'s finalized invoice `invoice` and issues its replacement
    /// (an operator's act, `moke-server billing void-invoice`), in one
    /// transaction: the credits the void invoice used go back to their
    /// grants; its usage moves to a new invoice for the same month, which
    /// is rated again (an operator may have corrected prices or usage),
    /// takes credits as they stood when the void one was finalized (none
    /// granted since), and is
    /// finalized at once under a new number. Both are audited and sent as
    /// `invoice.voided` and `invoice.finalized`. Returns the replacement.
    pub async fn void_invoice(
        &self,
        org: OrgId,
        invoice: InvoiceId,
        reason: &str,
        voided_by: &str,
    ) -> Result<InvoiceView> {
        let mut v = crate::app::error::Validator::new();
        v.check((1..=500).contains(&reason.chars().count()), "reason", "invalid", "1 to 500 characters");
        v.check((1..=200).contains(&voided_by.chars().count()), "voided_by", "invalid", "1 to 200 characters");
        v.finish()?;
        let mut tx = self.db().begin().await?;
        let old = store::find_locked(&mut tx, org.uuid(), invoice.uuid())
            .await?
            .ok_or_else(|| Error::not_found("invoice", invoice.to_string()))?;
        if old.status != "finalized" {
            return Err(Error::conflict(
                "not_finalized",
                format!("invoice {invoice} is {}, not finalized", old.status),
            ));
        }
        // The organization's grants, locked in the order finalizing locks them (no deadlock with a month close).
        store::grants(&mut tx, org.uuid(), true).await?;
        let issued = rated(&mut tx, &old, self.config().billing.grace_hours).await?;
        for line in issued.lines.iter().filter(|line| line.kind == LineKind::Credit) {
            let grant: crate::ids::CreditGrantId = line
                .sku
                .parse()
                .map_err(|_| Error::Internal(anyhow::anyhow!("credit line {} is not a grant id", line.sku)))?;
            store::return_credit(&mut tx, grant.uuid(), -line.amount).await?;
        }
        store::void(&mut tx, old.id, reason, voided_by).await?;
        let replacement = InvoiceId::generate();
        store::open_replacement(&mut tx, &old, replacement.uuid()).await?;
        let details = serde_json::json!({
            "id": invoice.to_string(),
            "number": old.number,
            "replaced_by": replacement.to_string(),
            "reason": reason,
        });
        let ctx = RequestContext::system(org.uuid());
        let record = AuditRecord {
            action: "invoice.void",
            resource_type: "invoice",
            resource_id: Some(invoice.to_string()),
            details: details.clone(),
        };
        audit::record(&mut tx, &ctx, record).await?;
        crate::app::integrations::store::webhooks::emit_event(&mut tx, org.uuid(), "invoice.voided", details).await?;
        let draft = store::find_locked(&mut tx, org.uuid(), replacement.uuid())
            .await?
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("the replacement invoice was not opened")))?;
        let now = store::now(&mut tx).await?;
        let credits_at = old.finalized_at.unwrap_or(now);
        finalize(&mut tx, &draft, now, credits_at).await?;
        let row = store::find(&mut tx, org.uuid(), replacement.uuid())
            .await?
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("the replacement invoice is gone")))?;
        let rated = rated(&mut tx, &row, self.config().billing.grace_hours).await?;
        tx.commit().await?;
        Ok(view(&row, &rated))
    }

    /// Finalizes every draft whose month ended more than the grace period
    /// before `now` (the database's clock when `None`), one transaction
    /// each: rated, credits taken, numbered gap-free in the year it is
    /// finalized, stored, audited, recorded as a succeeded
    /// `invoice_finalize` Operation on the organization, and announced as
    /// `invoice.finalized`. An
    /// invoice that cannot be finalized is logged and skipped, and holds up
    /// no other. Returns how many were finalized.
    pub async fn finalize_due_invoices(&self, now: Option<DateTime<Utc>>) -> Result<usize> {
        Ok(self.close_months(now).await?.took.len())
    }

    /// [`App::finalize_due_invoices`], saying how long each invoice it
    /// finalized took (at most 500 a call; the rest wait for the next) and
    /// how many it had to pass over.
    pub async fn close_months(&self, now: Option<DateTime<Utc>>) -> Result<MonthClose> {
        let now = match now {
            Some(now) => now,
            None => store::now(&mut *self.db().acquire().await?).await?,
        };
        let ended_before = now - chrono::Duration::hours(i64::from(self.config().billing.grace_hours));
        let mut close = MonthClose::default();
        // Each invoice once a run, in (period_end, id) order: one that fails holds up no other.
        let mut after = None;
        while close.took.len() < FINALIZE_BATCH {
            let started = std::time::Instant::now();
            let mut tx = self.db().begin().await?;
            let Some(row) = store::next_due(&mut tx, ended_before, after).await? else {
                break;
            };
            after = Some((row.period_end, row.id));
            match finalize(&mut tx, &row, now, now).await {
                Ok(_) => {
                    tx.commit().await?;
                    let elapsed = started.elapsed();
                    metrics::histogram!("invoice_finalize_seconds").record(elapsed.as_secs_f64());
                    close.took.push(elapsed);
                }
                Err(error) => {
                    drop(tx);
                    metrics::counter!("invoice_finalization_failures_total").increment(1);
                    tracing::error!(invoice = %InvoiceId::from_uuid(row.id), %error, "invoice not finalized; skipped");
                    close.failed += 1;
                }
            }
        }
        Ok(close)
    }
}

/// What one run of the month close did.
#[derive(Debug, Default)]
pub struct MonthClose {
    /// How long each invoice it finalized took.
    pub took: Vec<std::time::Duration>,
    /// Invoices it could not finalize (logged; tried again next run).
    pub failed: usize,
}

/// Finalizes draft `row` (locked) in `tx`, as of `now`, with the credits
/// usable at `credits_at`. Returns its number.
async fn finalize(
    tx: &mut PgConnection,
    row: &InvoiceRow,
    now: DateTime<Utc>,
    credits_at: DateTime<Utc>,
) -> Result<String> {
    let mut invoice = rated_usage(tx, row).await?;
    let grants = store::grants(tx, row.org_id, true).await?;
    for used in invoice.apply_credits(&super::credits::usable(&grants), credits_at) {
        let grant: crate::ids::CreditGrantId = used
            .grant
            .parse()
            .map_err(|_| Error::Internal(anyhow::anyhow!("credit {} is not a grant id", used.grant)))?;
        store::take_credit(tx, grant.uuid(), used.amount).await?;
    }
    let number = format!("MOKE-{}-{:06}", now.year(), store::next_number(tx, now.year()).await?);
    let lines = serde_json::to_value(&invoice.lines).map_err(|e| Error::Internal(e.into()))?;
    let stored = store::Finalized {
        number: &number,
        lines,
        subtotal: invoice.subtotal(),
        credits: invoice.credits(),
        total: invoice.total(),
        at: now,
    };
    store::finalize(tx, row.id, stored).await?;
    let id = InvoiceId::from_uuid(row.id).to_string();
    // Amounts go only to those who may read billing (the event's subscribers), not the audit log.
    let mut details = serde_json::json!({
        "id": id,
        "number": number,
        "period_start": row.period_start,
        "period_end": row.period_end,
    });
    if let Some(replaced) = row.replaces {
        details["replaces"] = serde_json::json!(InvoiceId::from_uuid(replaced).to_string());
    }
    let ctx = RequestContext::system(row.org_id);
    // The month close is work on the organization: an Operation says it was done, and when.
    let org_name = store::org_name(tx, row.org_id).await?;
    let new = NewOperation {
        kind: "invoice_finalize",
        target_type: ResourceKind::Org,
        target_id: row.org_id,
        target_name: &org_name,
        target_generation: 0,
        status: OperationStatus::Succeeded,
    };
    crate::app::region::operations::insert(tx, &ctx, new).await?;
    let record = AuditRecord {
        action: "invoice.finalize",
        resource_type: "invoice",
        resource_id: Some(id),
        details: details.clone(),
    };
    audit::record(tx, &ctx, record).await?;
    let mut event = details;
    event["currency"] = serde_json::json!(row.currency);
    event["total"] = serde_json::json!(invoice.currency.format(invoice.total()));
    crate::app::integrations::store::webhooks::emit_event(tx, row.org_id, "invoice.finalized", event).await?;
    Ok(number)
}

/// The invoice as it stands: a finalized or void one as it was issued, a
/// draft rated now from its usage records, with the credits that would
/// cover it now (a preview: only finalizing takes from them).
pub(super) async fn rated(conn: &mut PgConnection, row: &InvoiceRow, grace_hours: u32) -> Result<Invoice> {
    if let Some(lines) = &row.lines {
        let lines = serde_json::from_value(lines.clone())
            .map_err(|e| Error::Internal(anyhow::anyhow!("invoice {} lines do not read: {e}", row.id)))?;
        return Ok(Invoice::new(prices().currency.clone(), row.period_start, row.period_end, lines));
    }
    let mut invoice = rated_usage(conn, row).await?;
    let grants = store::grants(conn, row.org_id, false).await?;
    // As the finalizer will: credits that expire before then are not shown.
    let finalizing = row.period_end + chrono::Duration::hours(i64::from(grace_hours));
    invoice.apply_credits(&super::credits::usable(&grants), Utc::now().max(finalizing));
    Ok(invoice)
}

/// A draft's usage lines, rated now, without credits.
pub(super) async fn rated_usage(conn: &mut PgConnection, row: &InvoiceRow) -> Result<Invoice> {
    let records = store::records_of(conn, row.id).await?;
    let lines = rate(&records, row.period_start)?;
    Ok(Invoice::new(prices().currency.clone(), row.period_start, row.period_end, lines))
}

/// Rates usage records at the prices in effect when each began; records
/// of months before `period_start` (reported after their month was
/// finalized) become adjustment lines.
fn rate(records: &[RecordRow], period_start: DateTime<Utc>) -> Result<Vec<moke_billing::Line>> {
    let catalog = prices();
    // (adjustment?, price version) → usage.
    let mut groups: BTreeMap<(bool, &str), Vec<Usage>> = BTreeMap::new();
    for record in records {
        let version = catalog.version_at(record.period_start).unwrap_or(&catalog.versions()[0]);
        let resource_id = match record.resource_kind.as_str() {
            "node_pool" => NodePoolId::from_uuid(record.resource_id).to_string(),
            _ => ClusterId::from_uuid(record.resource_id).to_string(),
        };
        groups.entry((record.period_start < period_start, version.id.as_str())).or_default().push(Usage {
            sku: record.sku.clone(),
            project: record.project_name.clone(),
            resource_id,
            resource_name: record.resource_name.clone(),
            instance: record.instance.clone(),
            seconds: record.seconds,
            start: record.period_start,
            end: record.period_end,
        });
    }
    let mut lines = Vec::new();
    for ((adjustment, version), usage) in groups {
        let version = catalog.versions().iter().find(|v| v.id == version).expect("a version found above");
        let mut rated =
            moke_billing::rate(version, &catalog.currency, &usage).map_err(|e| Error::Internal(e.into()))?;
        if adjustment {
            rated.iter_mut().for_each(|line| line.kind = LineKind::Adjustment);
        }
        lines.extend(rated);
    }
    Ok(lines)
}

fn summary(row: &InvoiceRow, invoice: &Invoice) -> InvoiceSummary {
    let money = |amount: Decimal| invoice.currency.format(amount);
    InvoiceSummary {
        id: InvoiceId::from_uuid(row.id),
        number: row.number.clone(),
        status: InvoiceStatus::parse(&row.status).unwrap_or(InvoiceStatus::Draft),
        period_start: row.period_start,
        period_end: row.period_end,
        currency: row.currency.clone(),
        subtotal: money(row.subtotal.unwrap_or_else(|| invoice.subtotal())),
        credits: money(row.credits.unwrap_or_else(|| invoice.credits())),
        total: money(row.total.unwrap_or_else(|| invoice.total())),
        finalized_at: row.finalized_at,
        voided_at: row.voided_at,
        void_reason: row.void_reason.clone(),
        replaces: row.replaces.map(InvoiceId::from_uuid),
        replaced_by: row.replaced_by.map(InvoiceId::from_uuid),
    }
}

fn view(row: &InvoiceRow, invoice: &Invoice) -> InvoiceView {
    let lines = invoice
        .lines
        .iter()
        .map(|line| InvoiceLine {
            kind: match line.kind {
                LineKind::Usage => InvoiceLineKind::Usage,
                LineKind::Adjustment => InvoiceLineKind::Adjustment,
                LineKind::Credit => InvoiceLineKind::Credit,
            },
            sku: line.sku.clone(),
            product: line.product.clone(),
            project: line.project.clone(),
            resource_id: line.resource_id.clone(),
            resource_name: line.resource_name.clone(),
            quantity: line.quantity.normalize().to_string(),
            unit: line.unit.clone(),
            unit_price: line.unit_price.normalize().to_string(),
            amount: invoice.currency.format(line.amount),
            start: line.start,
            end: line.end,
        })
        .collect();
    InvoiceView { summary: summary(row, invoice), lines }
}
