//! The usage report: what an organization used, per UTC day, project,
//! resource and price, at list price. Read from `usage_daily`, whichever
//! invoice the usage was billed on (late usage lands on a later one).

use chrono::{Datelike, NaiveDate, Utc};
use moke_billing::Decimal;
use moke_iam::Action;

use super::{prices, store};
use crate::app::{App, Error, RequestContext, Result};
use crate::ids::{ClusterId, NodePoolId, OrgId};
use crate::model::{UsageDay, UsageItem, UsageReport};

/// The longest report, in days.
pub const MAX_DAYS: i64 = 366;
/// The first day a report looks at (no usage is older than Moke).
const EARLIEST: NaiveDate = NaiveDate::from_ymd_opt(2000, 1, 1).expect("a valid date");

/// The most rows one report holds (days × resources × prices).
pub const MAX_ITEMS: usize = 20_000;

impl App {
    /// `billing_usage_view`: usage in `[start, end)` (UTC days; this month
    /// so far when not given; cut at 366 days, and empty when `end` is not
    /// after `start`). Each row is its day's hours at that day's
    /// list price, rounded once; the per-node minimum and the monthly cap
    /// apply on the invoice only, so the invoice can be less.
    pub async fn billing_usage_view(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        start: Option<NaiveDate>,
        end: Option<NaiveDate>,
    ) -> Result<UsageReport> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let today = Utc::now().date_naive();
        // Days a database date can hold and usage can have happened on; beyond them nothing was used.
        let (first, last) = (EARLIEST, NaiveDate::from_ymd_opt(9999, 12, 31).expect("a valid date"));
        let start = start.unwrap_or_else(|| today.with_day(1).expect("the first of a month exists")).clamp(first, last);
        let end = end.unwrap_or_else(|| today.succ_opt().unwrap_or(today)).clamp(first, last);
        // A longer range is cut at MAX_DAYS (the answer's `end` says where); an empty one reports nothing.
        let end = start.checked_add_days(chrono::Days::new(MAX_DAYS as u64)).map_or(end, |longest| end.min(longest));
        let end = end.max(start);
        let mut conn = self.db().acquire().await?;
        // One row more than a report may hold says the days hold too many.
        let rows = store::usage_by_day(&mut conn, org.uuid(), start, end, MAX_ITEMS as i64 + 1).await?;
        if rows.len() > MAX_ITEMS {
            return Err(Error::invalid_field(
                "end",
                "too_many_rows",
                format!("the days asked for hold more than {MAX_ITEMS} rows; ask for fewer days"),
            ));
        }
        let catalog = prices();
        let currency = &catalog.currency;
        let mut items = Vec::with_capacity(rows.len());
        let mut days: Vec<(NaiveDate, Decimal)> = Vec::new();
        for row in rows {
            let at = row.day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc();
            let version = catalog.version_at(at).unwrap_or(&catalog.versions()[0]);
            let Some(sku) = version.sku(&row.sku) else {
                tracing::error!(sku = row.sku, version = version.id, "usage of a price the catalog lacks; not shown");
                continue;
            };
            let hours = row.seconds / Decimal::from(3600);
            // As rating computes it: seconds times the price, then divided (exact), rounded once.
            let amount = currency.round(row.seconds * sku.unit_price / Decimal::from(3600));
            match days.last_mut() {
                Some((day, sum)) if *day == row.day => *sum += amount,
                _ => days.push((row.day, amount)),
            }
            let resource_id = match row.resource_kind.as_str() {
                "node_pool" => NodePoolId::from_uuid(row.resource_id).to_string(),
                _ => ClusterId::from_uuid(row.resource_id).to_string(),
            };
            items.push(UsageItem {
                day: row.day,
                project: row.project_name,
                resource_id,
                resource_name: row.resource_name,
                sku: sku.id.clone(),
                product: sku.product.clone(),
                hours: hours.round_dp(4).normalize().to_string(),
                unit_price: sku.unit_price.normalize().to_string(),
                amount: currency.format(amount),
            });
        }
        let total: Decimal = days.iter().map(|(_, amount)| *amount).sum();
        Ok(UsageReport {
            currency: currency.code.clone(),
            start,
            end,
            days: days.into_iter().map(|(day, amount)| UsageDay { day, amount: currency.format(amount) }).collect(),
            items,
            total: currency.format(total),
        })
    }

    /// `billing_usage_csv_view`: the usage report's rows as CSV.
    pub async fn billing_usage_csv(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        start: Option<NaiveDate>,
        end: Option<NaiveDate>,
    ) -> Result<(String, Vec<u8>)> {
        let report = self.billing_usage_view(ctx, org, start, end).await?;
        let rows: Vec<moke_billing::csv::UsageRow> = report
            .items
            .iter()
            .map(|item| moke_billing::csv::UsageRow {
                day: item.day.to_string(),
                project: item.project.clone(),
                resource_id: item.resource_id.clone(),
                resource_name: item.resource_name.clone(),
                sku: item.sku.clone(),
                product: item.product.clone(),
                hours: item.hours.clone(),
                unit_price: item.unit_price.clone(),
                amount: item.amount.clone(),
                currency: report.currency.clone(),
            })
            .collect();
        let csv = moke_billing::csv::usage_csv(&rows).map_err(|e| Error::Internal(e.into()))?;
        Ok((format!("moke-usage-{}-{}.csv", report.start, report.end), csv))
    }
}
