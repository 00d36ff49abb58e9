//! An invoice's arithmetic: its lines, credits applied in priority order,
//! and totals that are always the sum of the lines.

use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

use crate::money::Currency;
use crate::rating::Line;

/// What a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Usage rated in this invoice's period.
    Usage,
    /// A correction for an earlier, finalized period (a late usage sample).
    Adjustment,
    /// A credit grant applied (negative).
    Credit,
}

impl LineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::Usage => "usage",
            LineKind::Adjustment => "adjustment",
            LineKind::Credit => "credit",
        }
    }
}

/// A promotional or prepaid credit an organization holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreditGrant {
    pub id: String,
    pub description: String,
    /// What is left of it.
    pub remaining: Decimal,
    /// Lower numbers are used first.
    pub priority: i32,
    pub granted_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// How much of a grant an invoice used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreditUse {
    pub grant: String,
    pub amount: Decimal,
}

/// One organization's invoice for one period, in one currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invoice {
    pub currency: Currency,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    pub lines: Vec<Line>,
}

impl Invoice {
    pub fn new(currency: Currency, period_start: DateTime<Utc>, period_end: DateTime<Utc>, lines: Vec<Line>) -> Self {
        Invoice { currency, period_start, period_end, lines }
    }

    fn sum(&self, keep: impl Fn(&Line) -> bool) -> Decimal {
        self.lines.iter().filter(|line| keep(line)).map(|line| line.amount).sum()
    }

    /// Usage and adjustments, before credits.
    pub fn subtotal(&self) -> Decimal {
        self.sum(|line| line.kind != LineKind::Credit)
    }

    /// The credits applied (zero or negative).
    pub fn credits(&self) -> Decimal {
        self.sum(|line| line.kind == LineKind::Credit)
    }

    /// What is owed: the sum of every line.
    pub fn total(&self) -> Decimal {
        self.sum(|_| true)
    }

    /// Applies `grants` as credit lines until the total is zero or the
    /// grants run out: lowest priority number first, then the one that
    /// expires soonest (never-expiring last), then the oldest. A grant that
    /// has expired by `at`, or has nothing left, is skipped. Returns what
    /// each grant gave, for the caller to take off its balance in the same
    /// transaction that finalizes the invoice.
    pub fn apply_credits(&mut self, grants: &[CreditGrant], at: DateTime<Utc>) -> Vec<CreditUse> {
        let mut usable: Vec<&CreditGrant> = grants
            .iter()
            .enumerate()
            // A grant named twice is used once.
            .filter(|(i, g)| !grants[..*i].iter().any(|earlier| earlier.id == g.id))
            .map(|(_, g)| g)
            // Only grants that existed at `at` and had not expired by then.
            .filter(|g| {
                g.remaining > Decimal::ZERO && g.granted_at <= at && g.expires_at.is_none_or(|expiry| expiry > at)
            })
            .collect();
        usable.sort_by(|a, b| {
            (a.priority, a.expires_at.is_none(), a.expires_at, a.granted_at, &a.id).cmp(&(
                b.priority,
                b.expires_at.is_none(),
                b.expires_at,
                b.granted_at,
                &b.id,
            ))
        });
        let mut uses = Vec::new();
        for grant in usable {
            let owed = self.total();
            if owed <= Decimal::ZERO {
                break;
            }
            // A grant gives whole minor units and never more than it holds.
            let whole = grant.remaining.round_dp_with_strategy(self.currency.minor_units, RoundingStrategy::ToZero);
            let amount = whole.min(owed);
            if amount <= Decimal::ZERO {
                continue;
            }
            self.lines.push(Line {
                kind: LineKind::Credit,
                sku: grant.id.clone(),
                product: format!("Credit: {}", grant.description),
                project: String::new(),
                resource_id: String::new(),
                resource_name: String::new(),
                quantity: Decimal::ONE,
                unit: "credit".into(),
                unit_price: -amount,
                amount: -amount,
                start: self.period_start,
                end: self.period_end,
            });
            uses.push(CreditUse { grant: grant.id.clone(), amount });
        }
        uses
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::rating::{Usage, rate};
    use proptest::prelude::*;
    use std::str::FromStr;

    fn at(t: &str) -> DateTime<Utc> {
        t.parse().unwrap()
    }

    fn invoice_of(seconds: &[i64]) -> Invoice {
        let catalog = Catalog::embedded();
        let usage: Vec<Usage> = seconds
            .iter()
            .enumerate()
            .map(|(i, s)| Usage {
                sku: ["bm.small.hour", "bm.medium.hour", "control-plane.ha.hour"][i % 3].into(),
                project: format!("p{}", i % 2),
                resource_id: format!("cl_{}", i % 5),
                resource_name: format!("c{}", i % 5),
                instance: format!("n{i}"),
                seconds: Decimal::from(*s),
                start: at("2026-12-01T00:00:00Z"),
                end: at("2027-01-01T00:00:00Z"),
            })
            .collect();
        let lines = rate(&catalog.versions()[0], &catalog.currency, &usage).unwrap();
        Invoice::new(catalog.currency, at("2026-12-01T00:00:00Z"), at("2027-01-01T00:00:00Z"), lines)
    }

    fn grant(id: &str, remaining: &str, priority: i32, expires: Option<&str>) -> CreditGrant {
        CreditGrant {
            id: id.into(),
            description: id.into(),
            remaining: Decimal::from_str(remaining).unwrap(),
            priority,
            granted_at: at("2026-11-01T00:00:00Z"),
            expires_at: expires.map(at),
        }
    }

    #[test]
    fn credits_go_in_priority_then_expiry_order_and_never_below_zero() {
        let mut invoice = invoice_of(&[3600 * 100]); // 100 h of bm.small: 17.86
        assert_eq!(invoice.subtotal(), Decimal::from_str("17.86").unwrap());
        let grants = [
            grant("later", "50", 1, None),
            grant("expired", "50", 0, Some("2026-12-31T00:00:00Z")),
            grant("soon", "10", 1, Some("2027-02-01T00:00:00Z")),
            grant("first", "5.005", 0, Some("2027-06-01T00:00:00Z")),
            grant("first", "5.005", 0, Some("2027-06-01T00:00:00Z")),
        ];
        let uses = invoice.apply_credits(&grants, at("2027-01-01T00:00:00Z"));
        let used: Vec<(&str, String)> = uses.iter().map(|u| (u.grant.as_str(), u.amount.to_string())).collect();
        assert_eq!(used, [("first", "5.00".to_string()), ("soon", "10".into()), ("later", "2.86".into())]);
        assert_eq!(invoice.total(), Decimal::ZERO);
        assert_eq!(invoice.credits(), -invoice.subtotal());
    }

    #[test]
    fn a_grant_made_after_the_invoicing_time_is_not_used() {
        let mut invoice = invoice_of(&[36_000]);
        let later = CreditGrant { granted_at: at("2027-03-01T00:00:00Z"), ..grant("later", "500", 1, None) };
        let uses = invoice.apply_credits(&[later], at("2027-01-03T00:00:00Z"));
        assert!(uses.is_empty(), "a grant of March does not pay January's invoice issued in January");
        assert_eq!(invoice.total(), invoice.subtotal());
    }

    proptest! {
        #[test]
        fn the_lines_add_up_to_the_total(
            seconds in proptest::collection::vec(0i64..3_000_000, 0..30),
            credits in proptest::collection::vec((0i64..100_000, -2i32..3), 0..5),
        ) {
            let mut invoice = invoice_of(&seconds);
            let grants: Vec<CreditGrant> = credits
                .iter()
                .enumerate()
                .map(|(i, (cents, priority))| CreditGrant { remaining: Decimal::new(*cents, 2), ..grant(&format!("g{i}"), "0", *priority, None) })
                .collect();
            let before = invoice.subtotal();
            let uses = invoice.apply_credits(&grants, at("2027-01-01T00:00:00Z"));
            prop_assert_eq!(invoice.total(), invoice.lines.iter().map(|l| l.amount).sum::<Decimal>());
            prop_assert_eq!(invoice.subtotal(), before);
            prop_assert!(invoice.total() >= Decimal::ZERO);
            prop_assert_eq!(-invoice.credits(), uses.iter().map(|u| u.amount).sum::<Decimal>());
            for u in &uses {
                let g = grants.iter().find(|g| g.id == u.grant).unwrap();
                prop_assert!(u.amount <= g.remaining && u.amount > Decimal::ZERO);
            }
            for line in &invoice.lines {
                prop_assert_eq!(line.amount, invoice.currency.round(line.amount), "every line is in whole cents");
            }
        }
    }
}
