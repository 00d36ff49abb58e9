//! The price catalog: immutable, effective-dated versions of per-hour unit
//! prices for each SKU (stock-keeping unit), read from TOML
//! (`billing/catalog.toml` is the one built in).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::money::Currency;

/// What a SKU's usage is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Meter {
    /// A cluster's control plane, by [`Tier`].
    ControlPlane,
    /// A worker node, by machine type.
    Node,
    /// A Service of type LoadBalancer.
    LoadBalancer,
}

/// A control plane's tier: one replica, or three (highly available).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Basic,
    Ha,
}

impl Tier {
    /// The tier of a control plane with `replicas` replicas.
    pub fn of_replicas(replicas: u32) -> Tier {
        if replicas >= 3 { Tier::Ha } else { Tier::Basic }
    }
}

/// One priced unit of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sku {
    /// Stable id, e.g. `bm.small.hour` (a machine type's `price_key`).
    pub id: String,
    /// The product's name on an invoice.
    pub product: String,
    pub meter: Meter,
    /// For [`Meter::Node`]: the machine type it prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_type: Option<String>,
    /// For [`Meter::ControlPlane`]: the tier it prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// The price of one hour, in the catalog's currency.
    #[serde(with = "rust_decimal::serde::str")]
    pub unit_price: Decimal,
    /// Each instance is charged at least this long (a node for 60 s).
    #[serde(default)]
    pub minimum_seconds: u32,
    /// Each instance is charged at most this many hours a calendar month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cap_hours: Option<u32>,
}

impl Sku {
    /// The seconds charged for an instance that ran `seconds` within one
    /// calendar month: at least the minimum (when it ran at all), at most
    /// the monthly cap.
    pub fn billable_seconds(&self, seconds: Decimal) -> Decimal {
        if seconds <= Decimal::ZERO {
            return Decimal::ZERO;
        }
        let mut billed = seconds.max(Decimal::from(self.minimum_seconds));
        if let Some(cap) = self.monthly_cap_hours {
            billed = billed.min(Decimal::from(u64::from(cap) * 3600));
        }
        billed
    }
}

/// The prices in effect from `effective_from` until the next version's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceVersion {
    pub id: String,
    pub effective_from: DateTime<Utc>,
    pub skus: Vec<Sku>,
}

impl PriceVersion {
    pub fn sku(&self, id: &str) -> Option<&Sku> {
        self.skus.iter().find(|sku| sku.id == id)
    }

    /// The SKU that prices a control plane of `tier`.
    pub fn control_plane(&self, tier: Tier) -> Option<&Sku> {
        self.skus.iter().find(|sku| sku.meter == Meter::ControlPlane && sku.tier == Some(tier))
    }

    /// The SKU that prices nodes of `machine_type`.
    pub fn node(&self, machine_type: &str) -> Option<&Sku> {
        self.skus.iter().find(|sku| sku.meter == Meter::Node && sku.machine_type.as_deref() == Some(machine_type))
    }

    /// The SKU that prices load balancers.
    pub fn load_balancer(&self) -> Option<&Sku> {
        self.skus.iter().find(|sku| sku.meter == Meter::LoadBalancer)
    }

    /// SHA-256 of the version's canonical JSON: stored beside the first use
    /// of a version, so that a version edited after it took effect is
    /// caught instead of silently re-pricing invoices.
    pub fn fingerprint(&self) -> String {
        let canonical = canonical_text(self);
        hex::encode(Sha256::digest(canonical.as_bytes()))
    }
}

/// The version's fields in a fixed order (TOML in, a stable text out).
fn canonical_text(version: &PriceVersion) -> String {
    let mut out = format!("{}|{}", version.id, version.effective_from.to_rfc3339());
    let mut skus: Vec<&Sku> = version.skus.iter().collect();
    skus.sort_by(|a, b| a.id.cmp(&b.id));
    for sku in skus {
        out.push_str(&format!(
            "|{}:{}:{:?}:{:?}:{:?}:{}:{}:{:?}",
            sku.id,
            sku.product,
            sku.meter,
            sku.machine_type,
            sku.tier,
            sku.unit_price.normalize(),
            sku.minimum_seconds,
            sku.monthly_cap_hours
        ));
    }
    out
}

/// Every price version, oldest first, in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    pub currency: Currency,
    versions: Vec<PriceVersion>,
}

/// Why a catalog was refused, naming what is wrong.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CatalogError {
    #[error("the catalog is not valid TOML: {0}")]
    Syntax(String),
    #[error("the catalog has no versions")]
    Empty,
    #[error("version {0}: takes effect no later than the version before it")]
    OutOfOrder(String),
    #[error("version {0} appears twice")]
    DuplicateVersion(String),
    #[error("version {version}: sku {sku}: {problem}")]
    Sku { version: String, sku: String, problem: String },
    #[error("version {version}: has no sku for {what}")]
    Missing { version: String, what: String },
    #[error("no price version is in effect at {0}")]
    NotInEffect(DateTime<Utc>),
    #[error("version {0}: takes effect at midnight UTC (usage is rated by the day)")]
    NotMidnight(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    currency: String,
    minor_units: u32,
    versions: Vec<PriceVersion>,
}

impl Catalog {
    /// The catalog built into Moke (`billing/catalog.toml`).
    pub fn embedded() -> Catalog {
        Catalog::from_toml(include_str!("../catalog.toml")).expect("the built-in catalog is valid (a unit test checks)")
    }

    /// Reads and checks a catalog: versions in strictly increasing
    /// `effective_from` order with unique ids; in each, unique SKU ids,
    /// prices of at most 6 decimals and not negative, every SKU's meter
    /// with what it needs (a node's machine type, a control plane's tier),
    /// and both control-plane tiers priced.
    pub fn from_toml(text: &str) -> Result<Catalog, CatalogError> {
        let file: CatalogFile = toml::from_str(text).map_err(|e| CatalogError::Syntax(e.message().to_string()))?;
        if file.versions.is_empty() {
            return Err(CatalogError::Empty);
        }
        for (i, version) in file.versions.iter().enumerate() {
            if file.versions[..i].iter().any(|v| v.id == version.id) {
                return Err(CatalogError::DuplicateVersion(version.id.clone()));
            }
            if i > 0 && version.effective_from <= file.versions[i - 1].effective_from {
                return Err(CatalogError::OutOfOrder(version.id.clone()));
            }
            check_version(version)?;
        }
        Ok(Catalog {
            currency: Currency { code: file.currency, minor_units: file.minor_units },
            versions: file.versions,
        })
    }

    /// Every version, oldest first.
    pub fn versions(&self) -> &[PriceVersion] {
        &self.versions
    }

    /// The version in effect at `at`: the newest whose `effective_from` is
    /// not after it.
    pub fn version_at(&self, at: DateTime<Utc>) -> Result<&PriceVersion, CatalogError> {
        self.versions.iter().rev().find(|v| v.effective_from <= at).ok_or(CatalogError::NotInEffect(at))
    }
}

fn check_version(version: &PriceVersion) -> Result<(), CatalogError> {
    if version.effective_from.time() != chrono::NaiveTime::MIN {
        return Err(CatalogError::NotMidnight(version.id.clone()));
    }
    let problem = |sku: &Sku, problem: &str| CatalogError::Sku {
        version: version.id.clone(),
        sku: sku.id.clone(),
        problem: problem.to_string(),
    };
    let mut seen = BTreeMap::new();
    for sku in &version.skus {
        if seen.insert(sku.id.as_str(), ()).is_some() {
            return Err(problem(sku, "appears twice"));
        }
        if sku.unit_price.is_sign_negative() {
            return Err(problem(sku, "unit_price is negative"));
        }
        if sku.unit_price.scale() > 6 {
            return Err(problem(sku, "unit_price has more than 6 decimals"));
        }
        match sku.meter {
            Meter::Node if sku.machine_type.is_none() => return Err(problem(sku, "a node sku needs machine_type")),
            Meter::ControlPlane if sku.tier.is_none() => return Err(problem(sku, "a control_plane sku needs tier")),
            _ => {}
        }
        if sku.monthly_cap_hours == Some(0) {
            return Err(problem(sku, "monthly_cap_hours must be positive"));
        }
        // One price per thing priced: a lookup by meter never has to choose.
        let same_thing = |other: &Sku| {
            other.id != sku.id
                && other.meter == sku.meter
                && other.machine_type == sku.machine_type
                && other.tier == sku.tier
        };
        if version.skus.iter().any(same_thing) {
            return Err(problem(sku, "prices the same thing as another sku"));
        }
    }
    for tier in [Tier::Basic, Tier::Ha] {
        if version.control_plane(tier).is_none() {
            return Err(CatalogError::Missing { version: version.id.clone(), what: format!("control plane {tier:?}") });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalog_reads() {
        let catalog = Catalog::embedded();
        assert_eq!(catalog.currency.code, "USD");
        let version = catalog.version_at("2026-12-15T00:00:00Z".parse().unwrap()).unwrap();
        assert_eq!(version.control_plane(Tier::Basic).unwrap().unit_price, Decimal::ZERO);
        for machine_type in ["bm.small", "bm.medium", "bm.large"] {
            assert!(version.node(machine_type).is_some(), "{machine_type} is priced");
        }
        assert!(version.load_balancer().is_some());
        assert_eq!(version.fingerprint(), version.clone().fingerprint());
        assert!(catalog.version_at("2026-11-30T23:59:59Z".parse().unwrap()).is_err());
    }

    #[test]
    fn versions_take_effect_in_order() {
        let two = include_str!("../catalog.toml").to_string()
            + r#"
[[versions]]
id = "2027-03"
effective_from = "2027-03-01T00:00:00Z"
[[versions.skus]]
id = "control-plane.basic.hour"
product = "Control plane (1 replica)"
meter = "control_plane"
tier = "basic"
unit_price = "0"
[[versions.skus]]
id = "control-plane.ha.hour"
product = "Control plane (HA, 3 replicas)"
meter = "control_plane"
tier = "ha"
unit_price = "0.12"
"#;
        let catalog = Catalog::from_toml(&two).unwrap();
        let at = |t: &str| catalog.version_at(t.parse().unwrap()).unwrap().id.clone();
        assert_eq!(at("2027-02-28T23:59:59Z"), "2026-12");
        assert_eq!(at("2027-03-01T00:00:00Z"), "2027-03");
        let v1 = &catalog.versions()[0];
        let v2 = &catalog.versions()[1];
        assert_ne!(v1.fingerprint(), v2.fingerprint());

        let noon = two.replace("2027-03-01T00:00:00Z", "2027-03-01T12:00:00Z");
        assert_eq!(Catalog::from_toml(&noon), Err(CatalogError::NotMidnight("2027-03".into())));
        let backwards = two.replace("2027-03-01T00:00:00Z", "2026-11-01T00:00:00Z");
        assert_eq!(Catalog::from_toml(&backwards), Err(CatalogError::OutOfOrder("2027-03".into())));
    }

    #[test]
    fn bad_skus_are_named() {
        let base = include_str!("../catalog.toml");
        let negative = base.replace("unit_price = \"0.1786\"", "unit_price = \"-1\"");
        assert!(matches!(Catalog::from_toml(&negative), Err(CatalogError::Sku { sku, .. }) if sku == "bm.small.hour"));
        let fine = base.replace("unit_price = \"0.1786\"", "unit_price = \"0.1234567\"");
        assert!(
            matches!(Catalog::from_toml(&fine), Err(CatalogError::Sku { problem, .. }) if problem.contains("6 decimals"))
        );
        let twice = base.replace("machine_type = \"bm.medium\"", "machine_type = \"bm.small\"");
        assert!(
            matches!(Catalog::from_toml(&twice), Err(CatalogError::Sku { problem, .. }) if problem.contains("same thing"))
        );
        let no_type = base.replace("machine_type = \"bm.small\"\n", "");
        assert!(
            matches!(Catalog::from_toml(&no_type), Err(CatalogError::Sku { problem, .. }) if problem.contains("machine_type"))
        );
        assert!(matches!(Catalog::from_toml("currency = 1"), Err(CatalogError::Syntax(_))));
    }

    #[test]
    fn minimum_and_cap_bound_an_instance() {
        let catalog = Catalog::embedded();
        let sku = catalog.versions()[0].node("bm.small").unwrap();
        assert_eq!(sku.billable_seconds(Decimal::ZERO), Decimal::ZERO);
        assert_eq!(sku.billable_seconds(Decimal::from(5)), Decimal::from(60));
        assert_eq!(sku.billable_seconds(Decimal::from(61)), Decimal::from(61));
        assert_eq!(sku.billable_seconds(Decimal::from(31 * 24 * 3600)), Decimal::from(672 * 3600));
    }
}
