//! Billing: prices, estimates, metering and invoices. The arithmetic is
//! `moke-billing`'s; this domain feeds it the gateway's specs and usage,
//! owns the billing tables, and answers in the public model.

pub mod budgets;
pub mod credits;
mod invoices;
pub use invoices::MonthClose;
pub(crate) mod metering;
mod plans;
mod store;
mod usage;

use std::sync::LazyLock;

use moke_billing::estimate::Estimate;
use moke_billing::{Catalog, ClusterShape, PoolShape};
use moke_iam::Action;

use crate::app::authz::Lock;
use crate::app::{App, Error, RequestContext, ResourceRef, Result, validate};
use crate::ids::ProjectKind;
use crate::model::{ClusterEstimateRequest, NodePoolSpec, PriceChange, PriceEstimate, PriceEstimateLine};

/// The most node pools one estimate prices (the schema's `maxItems`).
pub const MAX_ESTIMATED_POOLS: usize = 10;

/// The price catalog built into this release (`billing/catalog.toml`);
/// config validation checks every machine type offered has a price in it.
pub fn prices() -> &'static Catalog {
    static PRICES: LazyLock<Catalog> = LazyLock::new(Catalog::embedded);
    &PRICES
}

impl App {
    /// `cluster_estimate`: the monthly price of a cluster and its node
    /// pools, at the prices in effect now. Every field is checked as the
    /// creates would check it (pool fields under `node_pools[i].`); nothing
    /// is written.
    pub async fn cluster_estimate(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        input: ClusterEstimateRequest,
    ) -> Result<PriceEstimate> {
        let catalog = &self.config().catalog;
        let mut invalid = Vec::new();
        if input.node_pools.len() > MAX_ESTIMATED_POOLS {
            invalid.push(crate::app::error::FieldError::new(
                "node_pools",
                "too_many",
                format!("at most {MAX_ESTIMATED_POOLS} node pools"),
            ));
            return Err(Error::Invalid(invalid));
        }
        let cluster =
            validate::cluster_create(catalog, &input.cluster).map_err(|e| collect(&mut invalid, e, "cluster.")).ok();
        let region = input.cluster.spec.region.as_str();
        let pools: Vec<_> = input
            .node_pools
            .iter()
            .enumerate()
            .filter_map(|(i, pool)| {
                validate::node_pool_create(catalog, region, pool)
                    .map_err(|e| collect(&mut invalid, e, &format!("node_pools[{i}].")))
                    .ok()
            })
            .collect();
        if !invalid.is_empty() {
            return Err(Error::Invalid(invalid));
        }
        let cluster = cluster.ok_or_else(|| Error::Internal(anyhow::anyhow!("a cluster without errors and spec")))?;
        let mut conn = self.db().acquire().await?;
        crate::app::infra::projects::lookup(&mut conn, ctx, project, Action::Read, Lock::None).await?;
        drop(conn);

        priced(&shape(cluster.control_plane.replicas, &pools))
    }
}

/// The priced parts of a cluster: its control plane and each pool at its
/// `count` (what an autoscaled pool runs now).
pub(in crate::app) fn shape(control_plane_replicas: i64, pools: &[NodePoolSpec]) -> ClusterShape {
    let count = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
    ClusterShape {
        control_plane_replicas: count(control_plane_replicas),
        pools: pools
            .iter()
            .map(|pool| PoolShape { machine_type: pool.machine_type.clone(), count: count(pool.count) })
            .collect(),
        load_balancers: 0,
    }
}

/// What changing a cluster from `current` to `proposed` does to its
/// monthly price, both at the prices in effect now.
pub(in crate::app) fn price_change(current: &ClusterShape, proposed: &ClusterShape) -> Result<PriceChange> {
    let (current, proposed) = (estimate(current)?, estimate(proposed)?);
    Ok(PriceChange {
        monthly_delta: prices().currency.format(current.delta_to(&proposed)),
        current: view(&current),
        proposed: view(&proposed),
    })
}

/// `shape`'s monthly price at the prices in effect now, as the API shows it.
fn priced(shape: &ClusterShape) -> Result<PriceEstimate> {
    Ok(view(&estimate(shape)?))
}

/// `shape`'s monthly price at the prices in effect now.
fn estimate(shape: &ClusterShape) -> Result<Estimate> {
    let prices = prices();
    let version = prices.version_at(chrono::Utc::now()).map_err(|e| Error::Internal(e.into()))?;
    moke_billing::estimate::estimate(version, &prices.currency, shape).map_err(|e| Error::Internal(e.into()))
}

/// An estimate in the public model: amounts formatted to the currency's
/// minor unit, unit prices as exact as the catalog states them.
fn view(estimate: &Estimate) -> PriceEstimate {
    let money = |amount| estimate.currency.format(amount);
    PriceEstimate {
        currency: estimate.currency.code.clone(),
        price_version: estimate.price_version.clone(),
        lines: estimate
            .lines
            .iter()
            .map(|line| PriceEstimateLine {
                sku: line.sku.clone(),
                product: line.product.clone(),
                count: i64::from(line.count),
                hours: i64::from(line.hours),
                unit_price: line.unit_price.normalize().to_string(),
                amount: money(line.amount),
            })
            .collect(),
        monthly_total: money(estimate.monthly_total),
    }
}

/// Adds a validation error's fields to `invalid` under `prefix`; any other
/// error is kept as it is (there are none today).
fn collect(invalid: &mut Vec<crate::app::error::FieldError>, error: Error, prefix: &str) {
    match error {
        Error::Invalid(fields) => invalid.extend(fields.into_iter().map(|mut f| {
            f.field = format!("{prefix}{}", f.field);
            f
        })),
        other => invalid.push(crate::app::error::FieldError {
            field: prefix.trim_end_matches('.').to_string(),
            code: "invalid".into(),
            message: other.to_string(),
        }),
    }
}
