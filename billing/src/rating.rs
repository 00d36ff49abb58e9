//! Rating: metered usage becomes priced invoice lines.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::catalog::PriceVersion;
use crate::invoice::LineKind;
use crate::money::Currency;

/// Time one instance (a node, a control plane, a load balancer) of one
/// resource ran within one invoice period, already deduplicated upstream
/// (usage records are unique by resource, meter and period).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// The SKU that prices it (a machine type's `price_key`, a control
    /// plane tier's SKU).
    pub sku: String,
    pub project: String,
    pub resource_id: String,
    pub resource_name: String,
    /// What the SKU's minimum and monthly cap apply to: a node's name, the
    /// control plane, a Service.
    pub instance: String,
    pub seconds: Decimal,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// One line of an invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    pub kind: LineKind,
    /// The SKU, or the credit grant's id for a credit line.
    pub sku: String,
    pub product: String,
    pub project: String,
    pub resource_id: String,
    pub resource_name: String,
    /// In `unit`s, to 4 decimals (the amount is computed from the exact
    /// seconds, not from this).
    pub quantity: Decimal,
    pub unit: String,
    pub unit_price: Decimal,
    /// Rounded to the currency's minor unit; negative for a credit.
    pub amount: Decimal,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// Why usage could not be rated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RatingError {
    #[error("no price for sku {sku} in version {version}")]
    UnknownSku { sku: String, version: String },
    #[error("usage of {resource_id} ends before it starts")]
    Backwards { resource_id: String },
    #[error("usage of {resource_id} has negative time")]
    Negative { resource_id: String },
}

const SECONDS_PER_HOUR: i64 = 3600;

/// Rates one invoice period's usage at `version`'s prices: a line per
/// project, resource and SKU. Each instance is charged its SKU's minimum
/// and at most its monthly cap; the line's amount is the billed seconds at
/// the hourly price, rounded once. The order of `usage` does not matter,
/// and lines come sorted by project, resource name and SKU.
pub fn rate(version: &PriceVersion, currency: &Currency, usage: &[Usage]) -> Result<Vec<Line>, RatingError> {
    struct Group<'a> {
        first: &'a Usage,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        instances: BTreeMap<&'a str, Decimal>,
    }
    let mut groups: BTreeMap<(&str, &str, &str), Group> = BTreeMap::new();
    for u in usage {
        if u.end < u.start {
            return Err(RatingError::Backwards { resource_id: u.resource_id.clone() });
        }
        if u.seconds.is_sign_negative() {
            return Err(RatingError::Negative { resource_id: u.resource_id.clone() });
        }
        let group = groups.entry((&u.project, &u.resource_id, &u.sku)).or_insert_with(|| Group {
            first: u,
            start: u.start,
            end: u.end,
            instances: BTreeMap::new(),
        });
        group.start = group.start.min(u.start);
        group.end = group.end.max(u.end);
        *group.instances.entry(&u.instance).or_default() += u.seconds;
    }
    let mut lines = Vec::with_capacity(groups.len());
    for group in groups.into_values() {
        let u = group.first;
        let sku = version
            .sku(&u.sku)
            .ok_or_else(|| RatingError::UnknownSku { sku: u.sku.clone(), version: version.id.clone() })?;
        let billed: Decimal = group.instances.values().map(|seconds| sku.billable_seconds(*seconds)).sum();
        let hours = billed / Decimal::from(SECONDS_PER_HOUR);
        lines.push(Line {
            kind: LineKind::Usage,
            sku: sku.id.clone(),
            product: sku.product.clone(),
            project: u.project.clone(),
            resource_id: u.resource_id.clone(),
            resource_name: u.resource_name.clone(),
            quantity: hours.round_dp(4),
            unit: "hour".into(),
            unit_price: sku.unit_price,
            amount: currency.round(billed * sku.unit_price / Decimal::from(SECONDS_PER_HOUR)),
            start: group.start,
            end: group.end,
        });
    }
    lines.sort_by(|a, b| (&a.project, &a.resource_name, &a.sku).cmp(&(&b.project, &b.resource_name, &b.sku)));
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn at(t: &str) -> DateTime<Utc> {
        t.parse().unwrap()
    }

    fn node(instance: &str, seconds: i64) -> Usage {
        Usage {
            sku: "bm.small.hour".into(),
            project: "web".into(),
            resource_id: "cl_1".into(),
            resource_name: "prod".into(),
            instance: instance.into(),
            seconds: Decimal::from(seconds),
            start: at("2026-12-01T00:00:00Z"),
            end: at("2026-12-02T00:00:00Z"),
        }
    }

    #[test]
    fn instances_are_charged_their_minimum_and_cap_then_one_rounding() {
        let catalog = Catalog::embedded();
        let version = &catalog.versions()[0];
        // 10 h, 30 s (charged 60 s), and a whole month (capped at 672 h).
        let usage = [node("n1", 36_000), node("n2", 30), node("n3", 31 * 24 * 3600)];
        let lines = rate(version, &catalog.currency, &usage).unwrap();
        assert_eq!(lines.len(), 1);
        let billed = Decimal::from(36_000 + 60 + 672 * 3600);
        let exact = billed * Decimal::from_str("0.1786").unwrap() / Decimal::from(3600);
        assert_eq!(lines[0].amount, catalog.currency.round(exact));
        assert_eq!(lines[0].amount, Decimal::from_str("121.81").unwrap());
        assert_eq!(lines[0].quantity, Decimal::from_str("682.0167").unwrap());
    }

    #[test]
    fn an_unknown_sku_is_named() {
        let catalog = Catalog::embedded();
        let mut usage = node("n1", 10);
        usage.sku = "bm.huge.hour".into();
        assert_eq!(
            rate(&catalog.versions()[0], &catalog.currency, &[usage]),
            Err(RatingError::UnknownSku { sku: "bm.huge.hour".into(), version: "2026-12".into() })
        );
    }

    /// The amount by integer arithmetic in millionths of a cent: the
    /// oracle the decimal rounding is checked against.
    fn oracle_cents(billed_seconds: i64, price_millionths: i64) -> i64 {
        // amount in dollars = s * p / 1e6 / 3600; in cents * 2 to find the half.
        let numerator = i128::from(billed_seconds) * i128::from(price_millionths) * 100;
        let denominator: i128 = 1_000_000 * 3600;
        let (q, r) = (numerator / denominator, numerator % denominator);
        (if r * 2 >= denominator { q + 1 } else { q }) as i64
    }

    proptest! {
        #[test]
        fn line_rounding_matches_an_integer_oracle(seconds in 60i64..2_419_200, price in 0i64..5_000_000) {
            let catalog = Catalog::embedded();
            let mut version = catalog.versions()[0].clone();
            let sku = version.skus.iter_mut().find(|s| s.id == "bm.small.hour").unwrap();
            sku.unit_price = Decimal::new(price, 6);
            let lines = rate(&version, &catalog.currency, &[node("n1", seconds)]).unwrap();
            prop_assert_eq!(lines[0].amount, Decimal::new(oracle_cents(seconds, price), 2));
        }

        #[test]
        fn the_order_of_usage_does_not_matter(seconds in proptest::collection::vec(0i64..200_000, 1..12), seed in any::<u64>()) {
            let catalog = Catalog::embedded();
            let version = &catalog.versions()[0];
            let usage: Vec<Usage> = seconds.iter().enumerate().map(|(i, s)| node(&format!("n{}", i % 4), *s)).collect();
            let mut shuffled = usage.clone();
            let n = shuffled.len();
            shuffled.rotate_left((seed as usize) % n);
            shuffled.reverse();
            prop_assert_eq!(rate(version, &catalog.currency, &usage).unwrap(), rate(version, &catalog.currency, &shuffled).unwrap());
        }
    }
}
