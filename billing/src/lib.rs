//! Moke's billing arithmetic: the price catalog, rating of metered usage
//! into invoice lines, invoices with credits, price estimates, and the CSV
//! and PDF renderings of an invoice.
//!
//! A library only: no HTTP, no database and no knowledge of the gateway. The
//! gateway's app layer owns the tables, the jobs and the surfaces, and calls
//! into this crate with plain values.
//!
//! Money is exact: [`rust_decimal::Decimal`] everywhere, never a binary
//! float. Each line's amount is rounded once, half away from zero
//! ([`RoundingStrategy::MidpointAwayFromZero`]), to the currency's minor
//! unit ([`Currency::round`]); totals are sums of rounded lines, so the
//! lines always add up to the total.
//!
//! [`RoundingStrategy::MidpointAwayFromZero`]: rust_decimal::RoundingStrategy::MidpointAwayFromZero

pub mod catalog;
pub mod csv;
pub mod estimate;
pub mod invoice;
pub mod money;
pub mod pdf;
pub mod rating;

pub use catalog::{Catalog, CatalogError, Meter, PriceVersion, Sku, Tier};
pub use estimate::{ClusterShape, Estimate, EstimateLine, PoolShape};
pub use invoice::{CreditGrant, CreditUse, Invoice, LineKind};
pub use money::Currency;
pub use rating::{Line, Usage, rate};
pub use rust_decimal::Decimal;
