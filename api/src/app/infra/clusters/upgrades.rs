//! Kubernetes upgrades of a cluster: the versions it can move to (one minor
//! at a time, as the catalog offers them today) and the upgrade itself, an
//! Operation whose steps the region reports as it goes: the control plane
//! blue-green (new API servers beside the old, traffic switched, the old
//! retired), then every node pool replaced onto the new version a node at
//! a time (surge one, cordon, drain).

use chrono::{NaiveDate, Utc};
use moke_iam::Action;

use super::lookup;
use crate::app::authz::Lock;
use crate::app::region::operations;
use crate::app::validate::minor;
use crate::app::{App, Error, RequestContext, ResourceRef, Result};
use crate::config::{Catalog, KubernetesVersionEntry};
use crate::ids::{ClusterKind, ProjectKind};
use crate::model::*;

/// Days before its end of life a version counts as deprecated.
pub const DEPRECATED_DAYS_BEFORE_END_OF_LIFE: i64 = 90;

/// `entry` as it stands on `today`.
fn status(entry: &KubernetesVersionEntry, today: NaiveDate) -> KubernetesVersionStatus {
    let support = if entry.end_of_life < today {
        VersionSupport::EndOfLife
    } else if (entry.end_of_life - today).num_days() <= DEPRECATED_DAYS_BEFORE_END_OF_LIFE {
        VersionSupport::Deprecated
    } else {
        VersionSupport::Supported
    };
    KubernetesVersionStatus {
        version: entry.version.clone(),
        default: entry.default,
        support,
        end_of_life: entry.end_of_life,
    }
}

/// What a cluster on `current` runs and can move to on `today`.
pub fn upgrades(catalog: &Catalog, current: &str, today: NaiveDate) -> ClusterUpgrades {
    let current_status = catalog.kubernetes_version(current).map(|entry| status(entry, today)).unwrap_or_else(|| {
        // Taken out of the catalog since the cluster was made: past its life.
        KubernetesVersionStatus {
            version: current.to_string(),
            default: false,
            support: VersionSupport::EndOfLife,
            end_of_life: today,
        }
    });
    let next = minor(current).map(|(major, minor)| (major, minor + 1));
    let available = catalog
        .kubernetes_versions
        .iter()
        .filter(|entry| minor(&entry.version) == next && next.is_some())
        .map(|entry| status(entry, today))
        .filter(|version| version.support != VersionSupport::EndOfLife)
        .collect();
    ClusterUpgrades { current: current_status, available, automatic: None }
}

/// Whether an upgrade of `cluster` has not finished yet (one at a time: a
/// second would overtake the first in the region and skip a version).
pub(in crate::app) async fn upgrade_running(conn: &mut sqlx::PgConnection, cluster: uuid::Uuid) -> Result<bool> {
    operations::unfinished(conn, cluster, "cluster_upgrade").await
}

impl App {
    /// `cluster_upgrade_list`: the cluster's version, those it can move
    /// to, and the upgrade it will get on its own.
    pub async fn cluster_upgrade_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<ClusterUpgrades> {
        let mut conn = self.db().acquire().await?;
        let row = lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?.into_inner();
        let spec = row.spec()?;
        let now = Utc::now();
        let mut offered = upgrades(&self.config().catalog, &spec.kubernetes_version, now.date_naive());
        offered.automatic = self.automatic_upgrade(&mut conn, row.id, &spec, now).await?;
        Ok(offered)
    }

    /// `cluster_upgrade`: moves the cluster to one of its available
    /// versions, as an Operation with the region's steps.
    pub async fn cluster_upgrade(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        if_match: Option<&str>,
        request: ClusterUpgradeRequest,
    ) -> Result<OperationView> {
        let wanted = request.kubernetes_version.clone();
        let update = ClusterUpdate {
            labels: None,
            spec: Some(ClusterSpecPatch { kubernetes_version: Some(wanted.clone()), ..Default::default() }),
        };
        let catalog = &self.config().catalog;
        let check = move |current: &ClusterSpec| {
            let offered = upgrades(catalog, &current.kubernetes_version, Utc::now().date_naive());
            if offered.available.iter().any(|v| v.version == wanted) {
                return Ok(());
            }
            if current.kubernetes_version == wanted {
                return Err(Error::conflict("already_at_version", format!("the cluster already runs {wanted}")));
            }
            let names: Vec<&str> = offered.available.iter().map(|v| v.version.as_str()).collect();
            let why = if names.is_empty() {
                format!("no upgrade from {} is offered yet", current.kubernetes_version)
            } else {
                format!("from {} the cluster can move to {}", current.kubernetes_version, names.join(", "))
            };
            Err(Error::invalid_field("kubernetes_version", "not_an_upgrade", why))
        };
        self.unless_held(ctx, |ctx| {
            let (update, check) = (update.clone(), check.clone());
            Box::pin(async move {
                self.change_cluster(&ctx, project, cluster, if_match, update, "cluster_upgrade", check).await
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        crate::config::Config::defaults().catalog
    }

    #[test]
    fn a_cluster_can_move_one_minor_version_up_until_its_end_of_life() {
        let today = NaiveDate::from_ymd_opt(2026, 12, 5).unwrap();
        let from_131 = upgrades(&catalog(), "1.31", today);
        assert_eq!(from_131.current.support, VersionSupport::EndOfLife, "1.31 ended on 2026-10-28");
        assert_eq!(from_131.available.iter().map(|v| v.version.as_str()).collect::<Vec<_>>(), ["1.32"]);
        assert_eq!(from_131.available[0].support, VersionSupport::Deprecated, "1.32 ends 2027-02-28, within 90 days");
        let from_132 = upgrades(&catalog(), "1.32", today);
        assert_eq!(from_132.available.len(), 1);
        assert!(from_132.available[0].default && from_132.available[0].support == VersionSupport::Supported);
        assert!(upgrades(&catalog(), "1.33", today).available.is_empty(), "nothing newer is offered");
        let later = NaiveDate::from_ymd_opt(2027, 3, 1).unwrap();
        assert!(upgrades(&catalog(), "1.31", later).available.is_empty(), "1.32 is past its end of life then");
        assert_eq!(upgrades(&catalog(), "1.29", today).current.support, VersionSupport::EndOfLife, "not offered");
    }
}
