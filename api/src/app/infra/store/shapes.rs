//! How infrastructure specs are kept in Postgres. The JSONB columns hold
//! these `*Stored` shapes, not the public model: an API field can be renamed
//! or reshaped without touching stored rows, and a stored shape changes only
//! through the expand/contract rules of `migrations/README.md` (new fields
//! optional, with defaults, readable by the release before). A row that
//! does not read is an error, never a silent default.

use serde::{Deserialize, Serialize};

#[cfg(test)]
use crate::app::kernel::jsonb::{from_column, to_column};
#[cfg(test)]
use crate::app::{Error, Result};
use crate::model::{
    Autoscaling, ClusterSpec, ControlPlaneFirewall, ControlPlaneSpec, Labels, MaintenanceExclusion, MaintenanceWindow,
    NodePoolSpec, ProjectSpec, ReleaseChannel, SnapshotPolicy, Taint, UpgradePolicy,
};

/// `projects.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ProjectSpecStored {
    #[serde(default)]
    pub description: String,
}

impl From<&ProjectSpec> for ProjectSpecStored {
    fn from(spec: &ProjectSpec) -> Self {
        ProjectSpecStored { description: spec.description.clone() }
    }
}

impl From<ProjectSpecStored> for ProjectSpec {
    fn from(stored: ProjectSpecStored) -> Self {
        ProjectSpec { description: stored.description }
    }
}

/// `clusters.spec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ClusterSpecStored {
    pub region: String,
    pub kubernetes_version: String,
    pub control_plane: ControlPlaneStored,
    #[serde(default)]
    pub maintenance_window: Option<MaintenanceWindowStored>,
    #[serde(default)]
    pub deletion_protection: bool,
    /// Absent: the default policy (rows from before policies, and those that keep it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_policy: Option<SnapshotPolicyStored>,
    /// Absent: off, no addresses (rows from before firewalls, and those off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_firewall: Option<FirewallStored>,
    /// Absent: `none` (rows from before channels, and those on none). The
    /// auto-upgrade check finds clusters on a channel by its presence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_channel: Option<ReleaseChannelStored>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maintenance_exclusions: Vec<ExclusionStored>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(in crate::app) enum ReleaseChannelStored {
    Rapid,
    Regular,
    Stable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ExclusionStored {
    pub name: String,
    pub start_date: chrono::NaiveDate,
    pub end_date: chrono::NaiveDate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct FirewallStored {
    pub enabled: bool,
    #[serde(default)]
    pub allowed_addresses: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct SnapshotPolicyStored {
    pub every_hours: i64,
    pub keep: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ControlPlaneStored {
    pub replicas: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct MaintenanceWindowStored {
    pub day: String,
    pub start_time: String,
    pub duration_hours: i64,
}

impl From<&ClusterSpec> for ClusterSpecStored {
    fn from(spec: &ClusterSpec) -> Self {
        ClusterSpecStored {
            region: spec.region.clone(),
            kubernetes_version: spec.kubernetes_version.clone(),
            control_plane: ControlPlaneStored { replicas: spec.control_plane.replicas },
            maintenance_window: spec.maintenance_window.as_ref().map(|w| MaintenanceWindowStored {
                day: w.day.clone(),
                start_time: w.start_time.clone(),
                duration_hours: w.duration_hours,
            }),
            deletion_protection: spec.deletion_protection,
            snapshot_policy: (spec.snapshot_policy != SnapshotPolicy::default()).then_some(SnapshotPolicyStored {
                every_hours: spec.snapshot_policy.every_hours,
                keep: spec.snapshot_policy.keep,
            }),
            control_plane_firewall: (spec.control_plane_firewall != ControlPlaneFirewall::default()).then(|| {
                FirewallStored {
                    enabled: spec.control_plane_firewall.enabled,
                    allowed_addresses: spec.control_plane_firewall.allowed_addresses.clone(),
                }
            }),
            release_channel: match spec.release_channel {
                ReleaseChannel::None => None,
                ReleaseChannel::Rapid => Some(ReleaseChannelStored::Rapid),
                ReleaseChannel::Regular => Some(ReleaseChannelStored::Regular),
                ReleaseChannel::Stable => Some(ReleaseChannelStored::Stable),
            },
            maintenance_exclusions: spec
                .maintenance_exclusions
                .iter()
                .map(|e| ExclusionStored { name: e.name.clone(), start_date: e.start_date, end_date: e.end_date })
                .collect(),
        }
    }
}

impl From<ClusterSpecStored> for ClusterSpec {
    fn from(stored: ClusterSpecStored) -> Self {
        ClusterSpec {
            region: stored.region,
            kubernetes_version: stored.kubernetes_version,
            control_plane: ControlPlaneSpec { replicas: stored.control_plane.replicas },
            maintenance_window: stored.maintenance_window.map(|w| MaintenanceWindow {
                day: w.day,
                start_time: w.start_time,
                duration_hours: w.duration_hours,
            }),
            deletion_protection: stored.deletion_protection,
            snapshot_policy: stored
                .snapshot_policy
                .map(|p| SnapshotPolicy { every_hours: p.every_hours, keep: p.keep })
                .unwrap_or_default(),
            control_plane_firewall: stored
                .control_plane_firewall
                .map(|f| ControlPlaneFirewall { enabled: f.enabled, allowed_addresses: f.allowed_addresses })
                .unwrap_or_default(),
            release_channel: match stored.release_channel {
                None => ReleaseChannel::None,
                Some(ReleaseChannelStored::Rapid) => ReleaseChannel::Rapid,
                Some(ReleaseChannelStored::Regular) => ReleaseChannel::Regular,
                Some(ReleaseChannelStored::Stable) => ReleaseChannel::Stable,
            },
            maintenance_exclusions: stored
                .maintenance_exclusions
                .into_iter()
                .map(|e| MaintenanceExclusion { name: e.name, start_date: e.start_date, end_date: e.end_date })
                .collect(),
        }
    }
}

/// `node_pools.spec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct NodePoolSpecStored {
    pub machine_type: String,
    pub count: i64,
    #[serde(default)]
    pub autoscaling: Option<AutoscalingStored>,
    #[serde(default)]
    pub zones: Vec<String>,
    #[serde(default)]
    pub node_labels: Labels,
    #[serde(default)]
    pub taints: Vec<TaintStored>,
    /// Absent: one surge node, none unavailable (rows from before
    /// policies, and those that keep the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_policy: Option<UpgradePolicyStored>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct UpgradePolicyStored {
    pub max_surge: i64,
    pub max_unavailable: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct AutoscalingStored {
    pub min_count: i64,
    pub max_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct TaintStored {
    pub key: String,
    #[serde(default)]
    pub value: String,
    pub effect: String,
}

impl From<&NodePoolSpec> for NodePoolSpecStored {
    fn from(spec: &NodePoolSpec) -> Self {
        NodePoolSpecStored {
            machine_type: spec.machine_type.clone(),
            count: spec.count,
            autoscaling: spec
                .autoscaling
                .as_ref()
                .map(|a| AutoscalingStored { min_count: a.min_count, max_count: a.max_count }),
            zones: spec.zones.clone(),
            node_labels: spec.node_labels.clone(),
            taints: spec
                .taints
                .iter()
                .map(|t| TaintStored { key: t.key.clone(), value: t.value.clone(), effect: t.effect.clone() })
                .collect(),
            upgrade_policy: (spec.upgrade_policy != UpgradePolicy::default()).then_some(UpgradePolicyStored {
                max_surge: spec.upgrade_policy.max_surge,
                max_unavailable: spec.upgrade_policy.max_unavailable,
            }),
        }
    }
}

impl From<NodePoolSpecStored> for NodePoolSpec {
    fn from(stored: NodePoolSpecStored) -> Self {
        NodePoolSpec {
            machine_type: stored.machine_type,
            count: stored.count,
            autoscaling: stored.autoscaling.map(|a| Autoscaling { min_count: a.min_count, max_count: a.max_count }),
            zones: stored.zones,
            node_labels: stored.node_labels,
            taints: stored.taints.into_iter().map(|t| Taint { key: t.key, value: t.value, effect: t.effect }).collect(),
            upgrade_policy: stored
                .upgrade_policy
                .map(|p| UpgradePolicy { max_surge: p.max_surge, max_unavailable: p.max_unavailable })
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Rows as the gateway wrote them before stored shapes existed (the
    /// public model serialized): each still reads, and writes back the same.
    #[test]
    fn rows_written_before_still_read() {
        let cluster = json!({
            "region": "eu-central-1", "kubernetes_version": "1.31", "control_plane": { "replicas": 3 },
            "maintenance_window": { "day": "sunday", "start_time": "03:00", "duration_hours": 4 },
            "deletion_protection": true,
        });
        let stored: ClusterSpecStored = from_column("cluster spec", &cluster).unwrap();
        let spec = ClusterSpec::from(stored);
        assert_eq!(spec.control_plane.replicas, 3);
        assert_eq!(to_column(&ClusterSpecStored::from(&spec)), cluster);
        let without_window = json!({
            "region": "eu-central-1", "kubernetes_version": "1.31", "control_plane": { "replicas": 1 },
            "maintenance_window": null, "deletion_protection": false,
        });
        let stored: ClusterSpecStored = from_column("cluster spec", &without_window).unwrap();
        let spec = ClusterSpec::from(stored);
        assert_eq!(spec.snapshot_policy, SnapshotPolicy::default(), "rows from before policies keep the default");
        assert_eq!(to_column(&ClusterSpecStored::from(&spec)), without_window);
        let mut with_policy = without_window.clone();
        with_policy["snapshot_policy"] = json!({ "every_hours": 6, "keep": 10 });
        let stored: ClusterSpecStored = from_column("cluster spec", &with_policy).unwrap();
        assert_eq!(ClusterSpec::from(stored.clone()).snapshot_policy, SnapshotPolicy { every_hours: 6, keep: 10 });
        assert_eq!(to_column(&ClusterSpecStored::from(&ClusterSpec::from(stored))), with_policy);
        let mut on_channel = with_policy.clone();
        on_channel["release_channel"] = json!("stable");
        on_channel["maintenance_exclusions"] =
            json!([{ "name": "peak", "start_date": "2026-11-27", "end_date": "2026-11-30" }]);
        let stored: ClusterSpecStored = from_column("cluster spec", &on_channel).unwrap();
        let spec = ClusterSpec::from(stored);
        assert_eq!(spec.release_channel, ReleaseChannel::Stable);
        assert_eq!(spec.maintenance_exclusions[0].end_date.to_string(), "2026-11-30");
        assert_eq!(to_column(&ClusterSpecStored::from(&spec)), on_channel);

        let pool = json!({
            "machine_type": "m1.large", "count": 3, "autoscaling": { "min_count": 1, "max_count": 5 },
            "zones": ["a", "b"], "node_labels": { "tier": "web" },
            "taints": [{ "key": "gpu", "value": "yes", "effect": "NoSchedule" }],
        });
        let stored: NodePoolSpecStored = from_column("node pool spec", &pool).unwrap();
        let spec = NodePoolSpec::from(stored);
        assert_eq!(spec.upgrade_policy, UpgradePolicy::default(), "rows from before policies surge one node");
        assert_eq!(to_column(&NodePoolSpecStored::from(&spec)), pool);
        let mut faster = pool.clone();
        faster["upgrade_policy"] = json!({ "max_surge": 3, "max_unavailable": 1 });
        let stored: NodePoolSpecStored = from_column("node pool spec", &faster).unwrap();
        assert_eq!(to_column(&NodePoolSpecStored::from(&NodePoolSpec::from(stored))), faster);

        let project = json!({ "description": "the shop" });
        let stored: ProjectSpecStored = from_column("project spec", &project).unwrap();
        assert_eq!(to_column(&ProjectSpecStored::from(&ProjectSpec::from(stored))), project);
        let empty: ProjectSpecStored = from_column("project spec", &json!({})).unwrap();
        assert_eq!(empty, ProjectSpecStored::default());
    }

    #[test]
    fn a_row_that_does_not_read_is_an_error() {
        let broken = json!({ "region": 7 });
        let read: Result<ClusterSpecStored> = from_column("cluster spec", &broken);
        assert!(matches!(read, Err(Error::Internal(e)) if e.to_string().contains("stored cluster spec")));
    }
}
