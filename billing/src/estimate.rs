//! Price estimates: what a cluster of a given shape costs a month, written
//! nowhere, and the difference a change would make.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::catalog::{PriceVersion, Sku, Tier};
use crate::money::Currency;
use crate::rating::RatingError;

/// The hours of an average month (8 760 / 12), before each SKU's cap.
pub const HOURS_PER_MONTH: u32 = 730;

/// One node pool of a shape: its machine type and how many nodes to price
/// (the caller chooses: the pool's size, or its autoscaling maximum for the
/// most it can cost).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolShape {
    pub machine_type: String,
    pub count: u32,
}

/// What a cluster is made of, as far as its price goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterShape {
    pub control_plane_replicas: u32,
    pub pools: Vec<PoolShape>,
    pub load_balancers: u32,
}

/// One priced part of an estimate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EstimateLine {
    pub sku: String,
    pub product: String,
    /// Instances (nodes, load balancers; 1 control plane).
    pub count: u32,
    /// Hours charged per instance in a month (the month, or the cap).
    pub hours: u32,
    pub unit_price: Decimal,
    pub amount: Decimal,
}

/// The monthly price of a shape at one price version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    pub currency: Currency,
    pub price_version: String,
    pub lines: Vec<EstimateLine>,
    pub monthly_total: Decimal,
}

impl Estimate {
    /// What changing from `self` to `proposed` adds to (or, negative,
    /// takes off) the monthly price.
    pub fn delta_to(&self, proposed: &Estimate) -> Decimal {
        proposed.monthly_total - self.monthly_total
    }
}

/// The monthly price of `shape` at `version`'s prices: each instance for a
/// month of [`HOURS_PER_MONTH`], cut to its SKU's monthly cap, each line
/// rounded once. Pools of the same machine type share a line.
pub fn estimate(version: &PriceVersion, currency: &Currency, shape: &ClusterShape) -> Result<Estimate, RatingError> {
    let unknown = |sku: String| RatingError::UnknownSku { sku, version: version.id.clone() };
    let tier = Tier::of_replicas(shape.control_plane_replicas);
    let mut parts: Vec<(&Sku, u32)> = Vec::new();
    let control_plane = version.control_plane(tier).ok_or_else(|| unknown(format!("control plane {tier:?}")))?;
    parts.push((control_plane, 1));
    for pool in &shape.pools {
        let sku = version.node(&pool.machine_type).ok_or_else(|| unknown(pool.machine_type.clone()))?;
        match parts.iter_mut().find(|(s, _)| s.id == sku.id) {
            Some((_, count)) => *count = count.saturating_add(pool.count),
            None => parts.push((sku, pool.count)),
        }
    }
    if shape.load_balancers > 0 {
        let sku = version.load_balancer().ok_or_else(|| unknown("load balancer".into()))?;
        parts.push((sku, shape.load_balancers));
    }
    let lines: Vec<EstimateLine> = parts
        .into_iter()
        .filter(|(_, count)| *count > 0)
        .map(|(sku, count)| {
            let hours = sku.monthly_cap_hours.map_or(HOURS_PER_MONTH, |cap| cap.min(HOURS_PER_MONTH));
            EstimateLine {
                sku: sku.id.clone(),
                product: sku.product.clone(),
                count,
                hours,
                unit_price: sku.unit_price,
                amount: currency.round(Decimal::from(count) * Decimal::from(hours) * sku.unit_price),
            }
        })
        .collect();
    let monthly_total = lines.iter().map(|line| line.amount).sum();
    Ok(Estimate { currency: currency.clone(), price_version: version.id.clone(), lines, monthly_total })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use std::str::FromStr;

    fn shape(replicas: u32, pools: &[(&str, u32)], load_balancers: u32) -> ClusterShape {
        ClusterShape {
            control_plane_replicas: replicas,
            pools: pools.iter().map(|(m, c)| PoolShape { machine_type: m.to_string(), count: *c }).collect(),
            load_balancers,
        }
    }

    #[test]
    fn a_cluster_costs_its_parts_for_a_capped_month() {
        let catalog = Catalog::embedded();
        let version = &catalog.versions()[0];
        let ha = estimate(version, &catalog.currency, &shape(3, &[("bm.small", 3), ("bm.small", 2)], 1)).unwrap();
        let d = |s: &str| Decimal::from_str(s).unwrap();
        // HA control plane 672 h x 0.10; 5 nodes x 672 h x 0.1786; 1 LB x 672 h x 0.0179.
        assert_eq!(ha.lines.iter().map(|l| l.amount).collect::<Vec<_>>(), [d("67.20"), d("600.10"), d("12.03")]);
        assert_eq!(ha.monthly_total, d("679.33"));
        let basic = estimate(version, &catalog.currency, &shape(1, &[("bm.small", 5)], 1)).unwrap();
        assert_eq!(basic.lines[0].amount, Decimal::ZERO, "one replica is free");
        assert_eq!(ha.delta_to(&basic), d("-67.20"));
        assert!(estimate(version, &catalog.currency, &shape(1, &[("bm.huge", 1)], 0)).is_err());
    }
}
