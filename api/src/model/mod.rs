//! The public resource model: what clients send (`*Create`, `*Update`) and
//! what they get back (`*View`). Shared by every surface and by the OpenAPI
//! document; the app layer validates inputs into the stored specs.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

mod billing;
mod iam;
mod policy;
pub use billing::*;
pub use iam::*;
pub use policy::*;

use crate::ids::{
    AuditEventId, ClusterId, DeployHookId, DeploymentId, EventId, InvitationId, NodePoolId, OperationId, OrgId,
    ProjectId, ServiceAccountId, ServiceId, SessionId, TokenId, TrustPolicyId, UserId, WebhookDeliveryId,
    WebhookEndpointId,
};

/// The most labels a resource may carry.
pub const MAX_LABELS: usize = 64;

/// Key/value labels for organising resources (Kubernetes label rules).
pub type Labels = BTreeMap<String, String>;

/// The OpenAPI schema of control-plane replicas: 1 or 3.
pub struct ControlPlaneReplicas;

impl utoipa::PartialSchema for ControlPlaneReplicas {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::Int64)))
            .description(Some("API server replicas: 1 (development) or 3 (highly available)."))
            .enum_values(Some([1, 3]))
            .into()
    }
}

impl ToSchema for ControlPlaneReplicas {}

/// The OpenAPI schema of [`Labels`] (`#[schema(value_type = LabelMap)]`):
/// the rules `validate::labels` enforces.
pub struct LabelMap;

/// A label key: an optional DNS-subdomain-like prefix (at most 253
/// characters) and `/`, then a name of 1-63 alphanumerics, `-`, `_` or `.`
/// that starts and ends alphanumeric.
pub const LABEL_KEY_PATTERN: &str = r"^([A-Za-z0-9]([-A-Za-z0-9_]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9_]{0,61}[A-Za-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";
/// A label value: empty, or up to 63 alphanumerics, `-`, `_` or `.` that
/// start and end alphanumeric.
pub const LABEL_VALUE_PATTERN: &str = r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$";

impl utoipa::PartialSchema for LabelMap {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        let key = ObjectBuilder::new().schema_type(Type::String).pattern(Some(LABEL_KEY_PATTERN));
        let value = ObjectBuilder::new().schema_type(Type::String).pattern(Some(LABEL_VALUE_PATTERN));
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63 characters."))
            .property_names(Some(key))
            .additional_properties(Some(value))
            .max_properties(Some(MAX_LABELS))
            .into()
    }
}

impl ToSchema for LabelMap {}

/// The OpenAPI schema of a label selector: [`LabelMap`] with at least one label.
pub struct SelectorMap;

impl utoipa::PartialSchema for SelectorMap {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        match LabelMap::schema() {
            utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(mut object)) => {
                object.min_properties = Some(1);
                object.description = Some("Labels the selected pods all carry: at least one.".into());
                utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(object))
            }
            other => other,
        }
    }
}

impl ToSchema for SelectorMap {}

/// Deserializes a field that distinguishes "absent" (`None`) from "null"
/// (`Some(None)`), so a PATCH can clear a value.
pub fn double_option<'de, T, D>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// One page of a list.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Pass as `page_token` to get the next page; `null` on the last page.
    pub next_page: Option<String>,
}

/// A condition reported by a region, Kubernetes style.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// e.g. `Ready`, `ControlPlaneHealthy`.
    #[serde(rename = "type")]
    #[graphql(name = "type")]
    pub condition_type: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    pub reason: String,
    pub message: String,
    pub last_transition_time: DateTime<Utc>,
}

/// Observed state as last reported by the region.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct ObservedStatus {
    /// `pending` until the region first reports, then e.g. `provisioning`,
    /// `running`, `updating`, `degraded`, `deleting`, `failed`.
    pub phase: String,
    /// The spec generation this status describes.
    pub observed_generation: i64,
    pub conditions: Vec<Condition>,
    /// When the region last reported; `null` if it never has.
    pub observed_at: Option<DateTime<Utc>>,
    /// True when the region's agent has stopped reporting (no heartbeat
    /// within `outbox.region_stale_after_seconds`): this is the last known
    /// state, as of `observed_at`. Writes are still accepted and queue up.
    pub stale: bool,
    /// Clusters: the Kubernetes API endpoint, once the control plane serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

// ---------------------------------------------------------------- regions

/// A region on offer, with the health of its agent and queue.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Region")]
pub struct RegionView {
    /// Region name used in cluster specs, e.g. `eu-central-1`.
    pub name: String,
    pub display_name: String,
    pub zones: Vec<String>,
    pub health: RegionHealth,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct RegionHealth {
    /// `healthy` (agent reported recently), `stale` (it stopped reporting:
    /// changes are accepted and queue up), or `unknown` (never reported).
    pub status: String,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// Commands waiting for the region.
    pub pending_commands: i64,
    /// Age of the oldest waiting command, in seconds.
    pub oldest_pending_seconds: f64,
}

// ---------------------------------------------------------------- orgs

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Org", complex)]
pub struct OrgView {
    pub id: OrgId,
    pub name: String,
    pub display_name: String,
    #[graphql(skip)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A new organization. The person asking becomes its only owner; a person
/// owns at most 10.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct OrgCreate {
    /// DNS label: lowercase letters, digits and `-`, 1–63 characters, unique
    /// across Moke (a deleted organization's name stays taken).
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    /// 1-100 characters without control characters (surrounding whitespace
    /// is ignored); the name when omitted.
    #[serde(default)]
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]([^\x00-\x1f\x7f-\x9f]{0,98}[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000])?[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub display_name: Option<String>,
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
}

/// Changes to an organization (owners); what is absent stays as it is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct OrgUpdate {
    /// A new name: a DNS label, 1–63 characters, unique across Moke.
    /// Sign-in links that used the old name stop working; the id never changes.
    #[serde(default)]
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: Option<String>,
    /// 1-100 characters without control characters.
    #[serde(default)]
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]([^\x00-\x1f\x7f-\x9f]{0,98}[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000])?[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub display_name: Option<String>,
    /// Replaces the labels.
    #[serde(default)]
    #[schema(value_type = Option<LabelMap>)]
    pub labels: Option<Labels>,
}

/// One quota: its limit and what is in use.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct QuotaItem {
    pub limit: i64,
    pub usage: i64,
    pub source: QuotaSource,
}

/// Where a quota limit comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum QuotaSource {
    /// The organization's plan (`quotas.plan`).
    Plan,
    /// Set for this organization by Moke's operators (see the audit log).
    Override,
}

/// An organization's quotas.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct QuotasView {
    /// The plan the limits come from, unless overridden (`GET /v1/plans`).
    pub plan: String,
    pub clusters: QuotaItem,
    /// Usage is that of the cluster with the most node pools.
    pub node_pools_per_cluster: QuotaItem,
    /// Nodes reserved: each pool's count, or its autoscaling maximum if larger.
    pub nodes: QuotaItem,
    /// vCPUs of the reserved nodes.
    pub vcpus: QuotaItem,
    pub webhook_endpoints: QuotaItem,
    /// Invitations neither accepted, revoked nor expired.
    pub pending_invitations: QuotaItem,
    /// Invitation e-mails sent in the last hour.
    pub invitations_per_hour: QuotaItem,
    pub service_accounts: QuotaItem,
    /// API tokens neither revoked nor expired.
    pub api_tokens: QuotaItem,
    pub trust_policies: QuotaItem,
    pub deploy_hooks: QuotaItem,
    /// Usage is that of the cluster with the most namespaces.
    pub namespaces_per_cluster: QuotaItem,
}

// ---------------------------------------------------------------- projects

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ProjectCreate {
    /// DNS label: lowercase letters, digits and `-`, 1–63 characters, unique in the organization.
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    #[serde(default)]
    #[graphql(default)]
    pub spec: ProjectSpec,
}

#[derive(
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    ToSchema,
    PartialEq,
    async_graphql::SimpleObject,
    async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ProjectSpecInput")]
pub struct ProjectSpec {
    /// Free text, up to 1024 characters.
    #[serde(default)]
    #[graphql(default)]
    #[schema(max_length = 1024)]
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectUpdate {
    /// A new name (renames the project): a DNS label, 1–63 characters,
    /// unique in the organization. Paths that used the old name stop
    /// finding it; ids never change.
    #[serde(default)]
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: Option<String>,
    #[schema(value_type = Option<LabelMap>)]
    pub labels: Option<Labels>,
    pub spec: Option<ProjectSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Project", complex)]
pub struct ProjectView {
    pub id: ProjectId,
    pub org_id: OrgId,
    pub name: String,
    #[graphql(skip)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: ProjectSpec,
    pub generation: i64,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

// ---------------------------------------------------------------- clusters

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ClusterCreate {
    /// DNS label, unique in the project; `estimate` is reserved (`POST …/clusters/estimate`).
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: ClusterSpecInput,
}

/// The desired cluster as a client writes it; omitted fields get defaults.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpecInput {
    /// A region from `GET /v1/regions`. Cannot change later.
    pub region: String,
    /// A version from `GET /v1/kubernetes-versions`; if omitted, the
    /// release channel's version, or else the default one.
    pub kubernetes_version: Option<String>,
    pub control_plane: Option<ControlPlaneInput>,
    pub maintenance_window: Option<MaintenanceWindow>,
    /// When true, deletion is refused until it is turned off. Default false.
    pub deletion_protection: Option<bool>,
    /// Scheduled etcd snapshots; every hour, 24 kept, if omitted.
    pub snapshot_policy: Option<SnapshotPolicy>,
    /// Who may reach the Kubernetes API endpoint; anyone (with a valid
    /// client certificate) if omitted.
    pub control_plane_firewall: Option<ControlPlaneFirewall>,
    /// Which versions the cluster follows on its own; `none` if omitted.
    pub release_channel: Option<ReleaseChannel>,
    /// Days on which no automatic upgrade starts; none if omitted.
    #[schema(max_items = 10)]
    pub maintenance_exclusions: Option<Vec<MaintenanceExclusion>>,
}

/// The versions a cluster follows on its own (GKE's release channels).
/// Automatic upgrades move one minor version at a time. The owners are
/// told first (`cluster.upgrade_available`, and mail to verified owners;
/// told again when the upgrade is still held 60 days after its notice
/// period, or after an automatic upgrade was cancelled); an upgrade starts no sooner than
/// the gateway's notice period later (a week by default), only inside the
/// maintenance window (any time when there is none) and never on a day of
/// a maintenance exclusion, and only on a cluster that runs as asked. A
/// version past its end of life is upgraded that way on every channel,
/// `none` included; exclusions hold such an upgrade only until 30 days
/// after the end of life. A new cluster on a channel starts on its version
/// unless it names one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseChannel {
    /// No automatic upgrades, but past the version's end of life.
    #[default]
    None,
    /// The newest supported version, as soon as the catalog offers it.
    Rapid,
    /// The version new clusters get by default.
    Regular,
    /// The supported version one minor before the default.
    Stable,
}

impl ReleaseChannel {
    pub const ALL: [ReleaseChannel; 4] =
        [ReleaseChannel::None, ReleaseChannel::Rapid, ReleaseChannel::Regular, ReleaseChannel::Stable];

    /// Its name on the wire (REST, gRPC) and in stored specs.
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseChannel::None => "none",
            ReleaseChannel::Rapid => "rapid",
            ReleaseChannel::Regular => "regular",
            ReleaseChannel::Stable => "stable",
        }
    }

    pub fn parse(text: &str) -> Option<ReleaseChannel> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// Days (UTC, both included) on which no automatic upgrade of the cluster
/// starts, e.g. a sales peak (GKE's maintenance exclusions). An upgrade
/// already running goes on, so a window just before an exclusion can reach
/// into it.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "MaintenanceExclusionInput")]
pub struct MaintenanceExclusion {
    /// A DNS label naming it, unique in the cluster, e.g. `black-friday`.
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    /// On or after 2000-01-01.
    pub start_date: chrono::NaiveDate,
    /// On or after `start_date`, at most 90 days in all, and at most 365
    /// days from today.
    pub end_date: chrono::NaiveDate,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ControlPlaneInput {
    /// API server replicas: 1 (development) or 3 (highly available, the default).
    #[schema(value_type = ControlPlaneReplicas)]
    pub replicas: i64,
}

/// A weekly window in which the region may run disruptive maintenance.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "MaintenanceWindowInput")]
pub struct MaintenanceWindow {
    /// `monday` … `sunday`.
    #[schema(pattern = "^(monday|tuesday|wednesday|thursday|friday|saturday|sunday)$")]
    pub day: String,
    /// Start in UTC, `HH:MM`.
    #[schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub start_time: String,
    /// 1 to 24.
    #[schema(minimum = 1, maximum = 24)]
    pub duration_hours: i64,
}

/// How often the control plane's etcd is snapshotted, and how many
/// snapshots (scheduled and on-demand together) are kept: the oldest go first.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "SnapshotPolicyInput")]
pub struct SnapshotPolicy {
    /// Hours between scheduled snapshots, 1 to 168 (a week).
    #[schema(minimum = 1, maximum = 168)]
    pub every_hours: i64,
    /// Snapshots kept, 1 to 50.
    #[schema(minimum = 1, maximum = 50)]
    pub keep: i64,
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        SnapshotPolicy { every_hours: 1, keep: 24 }
    }
}

/// The addresses allowed to connect to the cluster's Kubernetes API
/// endpoint (DOKS `control_plane_firewall`): others have their connections
/// dropped before TLS. Client certificates are needed either way.
#[derive(
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    ToSchema,
    PartialEq,
    async_graphql::SimpleObject,
    async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ControlPlaneFirewallInput")]
pub struct ControlPlaneFirewall {
    /// Off: any address may connect.
    pub enabled: bool,
    /// IPv4 or IPv6 networks in CIDR notation with no host bits set, e.g.
    /// `203.0.113.0/24` or `2001:db8::/32`, each once; at least one when
    /// enabled (none would lock everyone out).
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = CidrList)]
    pub allowed_addresses: Vec<String>,
}

/// The OpenAPI schema of a firewall's networks: up to 100 distinct CIDRs.
pub struct CidrList;

impl utoipa::PartialSchema for CidrList {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
        let cidr = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^[0-9a-fA-F:.]{2,39}/[0-9]{1,3}$"))
            .max_length(Some(43))
            .description(Some("An IP network in CIDR notation with no host bits set."));
        ArrayBuilder::new().items(cidr).max_items(Some(100)).unique_items(true).into()
    }
}

impl ToSchema for CidrList {}

/// The stored desired state of a cluster.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct ClusterSpec {
    pub region: String,
    pub kubernetes_version: String,
    pub control_plane: ControlPlaneSpec,
    pub maintenance_window: Option<MaintenanceWindow>,
    pub deletion_protection: bool,
    pub snapshot_policy: SnapshotPolicy,
    pub control_plane_firewall: ControlPlaneFirewall,
    pub release_channel: ReleaseChannel,
    pub maintenance_exclusions: Vec<MaintenanceExclusion>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct ControlPlaneSpec {
    pub replicas: i64,
}

/// Where a Kubernetes version stands in its support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum VersionSupport {
    Supported,
    /// End of life within 90 days: upgrade soon.
    Deprecated,
    /// Past its end of life: no new clusters, no upgrades to it.
    EndOfLife,
}

/// A Kubernetes version as the catalog offers it today.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct KubernetesVersionStatus {
    /// Minor version, e.g. `1.33`.
    pub version: String,
    /// The version new clusters get when they name none.
    pub default: bool,
    pub support: VersionSupport,
    pub end_of_life: chrono::NaiveDate,
}

/// What a cluster runs and the versions it can be upgraded to: one minor
/// version up, if the catalog offers it and it has not reached its end of
/// life. Empty when there is none.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct ClusterUpgrades {
    pub current: KubernetesVersionStatus,
    pub available: Vec<KubernetesVersionStatus>,
    /// The upgrade the cluster will get on its own (its release channel,
    /// or its version's end of life); absent when there is none.
    pub automatic: Option<AutomaticUpgrade>,
}

/// Why a cluster is upgraded on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum AutomaticUpgradeReason {
    /// Its release channel is on a newer version.
    ReleaseChannel,
    /// Its version is past its end of life.
    EndOfLife,
}

impl AutomaticUpgradeReason {
    /// Its name on the wire, in events and in stored notices.
    pub fn as_str(self) -> &'static str {
        match self {
            AutomaticUpgradeReason::ReleaseChannel => "release_channel",
            AutomaticUpgradeReason::EndOfLife => "end_of_life",
        }
    }
}

/// An upgrade the cluster gets on its own, and when.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct AutomaticUpgrade {
    pub kubernetes_version: String,
    pub reason: AutomaticUpgradeReason,
    /// When the owners were told (`cluster.upgrade_available` and mail);
    /// absent until the next check tells them.
    pub noticed_at: Option<DateTime<Utc>>,
    /// The first time it may start: after the notice period, inside the
    /// maintenance window and outside every exclusion. Absent until the
    /// owners were told, and when no such time comes within a year.
    pub earliest_start: Option<DateTime<Utc>>,
    /// The upgrade's Operation, once it started.
    pub operation_id: Option<OperationId>,
}

/// Why an etcd snapshot was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotTrigger {
    /// By the cluster's `snapshot_policy`.
    Scheduled,
    /// By `POST …/clusters/{cluster}/snapshots`.
    OnDemand,
}

/// An etcd snapshot of a cluster's control plane, as its region keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "EtcdSnapshot")]
pub struct EtcdSnapshotView {
    /// Unique in the cluster: what `POST …/snapshots/{snapshot}/restore` names.
    #[schema(pattern = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", max_length = 253)]
    pub name: String,
    pub taken_at: DateTime<Utc>,
    pub size_bytes: i64,
    /// The Kubernetes version the control plane ran; a restore needs the same.
    pub kubernetes_version: String,
    pub trigger: SnapshotTrigger,
}

/// A cluster's etcd snapshots, newest first: as many as its
/// `snapshot_policy.keep` (at most 50), so the list has no pages.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct EtcdSnapshots {
    pub items: Vec<EtcdSnapshotView>,
}

/// Upgrade a cluster to `kubernetes_version`: its control plane blue-green
/// (new API servers beside the old, traffic switched, the old retired), then
/// every node pool by surge, cordon and drain, as its `upgrade_policy` says.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ClusterUpgradeRequest {
    /// One of `GET …/upgrades`' `available`.
    #[schema(pattern = r"^[0-9]+\.[0-9]+$", max_length = 16)]
    pub kubernetes_version: String,
}

/// What a cluster would cost a month: the cluster as `cluster_create`
/// takes it and its node pools as `node_pool_create` takes them, checked
/// the same way. Nothing is created or reserved.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ClusterEstimateRequest {
    pub cluster: ClusterCreate,
    /// Priced at `spec.count` nodes each (an autoscaled pool can cost up to
    /// its `max_count`).
    #[serde(default)]
    #[graphql(default)]
    #[schema(max_items = 10)]
    pub node_pools: Vec<NodePoolCreate>,
}

/// A monthly price: each part for a month of 730 hours, cut to its price's
/// monthly cap (672 hours), each line rounded to the currency's minor unit
/// (half away from zero) and the total their sum. Amounts are exact
/// decimals written as strings.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct PriceEstimate {
    /// ISO 4217 code.
    #[schema(example = "USD")]
    pub currency: String,
    /// The price catalog version the prices come from.
    pub price_version: String,
    pub lines: Vec<PriceEstimateLine>,
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$", example = "679.33")]
    pub monthly_total: String,
}

/// What a change does to a cluster's monthly price: the cluster as it is
/// (its node pools not being deleted), as it would be, and the difference.
/// Both at the prices in effect now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct PriceChange {
    pub current: PriceEstimate,
    pub proposed: PriceEstimate,
    /// `proposed.monthly_total` minus `current.monthly_total`: negative
    /// when the change costs less.
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$", example = "120.02")]
    pub monthly_delta: String,
}

/// One priced part of an estimate.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct PriceEstimateLine {
    /// The price's id, e.g. `bm.small.hour` (a machine type's `price_key`).
    pub sku: String,
    pub product: String,
    /// Instances: nodes, or 1 control plane.
    pub count: i64,
    /// Hours charged per instance in the month.
    pub hours: i64,
    /// The price of one hour.
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$")]
    pub unit_price: String,
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$")]
    pub amount: String,
}

/// A change to a cluster; omitted fields stay as they are.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterUpdate {
    #[schema(value_type = Option<LabelMap>)]
    pub labels: Option<Labels>,
    pub spec: Option<ClusterSpecPatch>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpecPatch {
    /// Immutable: present only to be refused with a clear message if changed.
    pub region: Option<String>,
    /// Upgrade by at most one minor version at a time; downgrades are refused.
    pub kubernetes_version: Option<String>,
    pub control_plane: Option<ControlPlaneInput>,
    /// `null` removes the window.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<MaintenanceWindow>)]
    pub maintenance_window: Option<Option<MaintenanceWindow>>,
    pub deletion_protection: Option<bool>,
    pub snapshot_policy: Option<SnapshotPolicy>,
    /// Replaces the whole firewall.
    pub control_plane_firewall: Option<ControlPlaneFirewall>,
    /// The versions the cluster follows on its own from now on.
    pub release_channel: Option<ReleaseChannel>,
    /// Replaces the whole list.
    #[schema(max_items = 10)]
    pub maintenance_exclusions: Option<Vec<MaintenanceExclusion>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Cluster", complex)]
pub struct ClusterView {
    pub id: ClusterId,
    pub project_id: ProjectId,
    pub name: String,
    #[graphql(skip)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: ClusterSpec,
    pub generation: i64,
    pub status: ObservedStatus,
    /// Set once deletion was requested; the cluster disappears when the region confirms.
    pub deletion_requested_at: Option<DateTime<Utc>>,
    /// The newest version the cluster can be upgraded to now (see
    /// `GET …/upgrades`); absent when there is none.
    pub upgrade_available: Option<String>,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

// ---------------------------------------------------------------- node pools

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct NodePoolCreate {
    /// DNS label, unique in the cluster; `estimate` is reserved (`POST …/node-pools/estimate`).
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: NodePoolSpecInput,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct NodePoolSpecInput {
    /// A machine type from `GET /v1/machine-types`. A change later replaces
    /// the nodes onto the new type as `upgrade_policy` says (surge, cordon, drain).
    pub machine_type: String,
    /// Nodes to run, 0 to 500 (within the autoscaling range when set; with
    /// autoscaling, only the size to start at).
    #[schema(minimum = 0, maximum = 500)]
    pub count: i64,
    /// The region's autoscaler then sets the size within the range: it
    /// adds a node while pods are pending that an empty node of the pool
    /// would run (selector, taints, CPU, memory), and drains a node that
    /// stays idle. Later changes of the pool keep its size (clamped to a new
    /// range); turning autoscaling off goes back to `count`. The pool's
    /// nodes show the size, and each decision is an `autoscaled` cluster event.
    pub autoscaling: Option<Autoscaling>,
    /// Zones of the cluster's region to spread over; all of them if omitted. Cannot change later.
    pub zones: Option<Vec<String>>,
    /// Kubernetes labels put on every node.
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = LabelMap)]
    pub node_labels: Labels,
    #[serde(default)]
    #[graphql(default)]
    pub taints: Vec<Taint>,
    /// How nodes are replaced; one surge node at a time if omitted.
    pub upgrade_policy: Option<UpgradePolicy>,
}

/// How a pool's nodes are replaced (upgrades, machine-type, label and
/// taint changes, recycles), Scaleway's `upgrade_policy`: up to
/// `max_surge` new nodes beyond the pool's count come first, and up to
/// `max_unavailable` nodes below it may be draining at once. Not both 0.
/// Surge nodes beyond the first count against the node and vCPU quotas.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "UpgradePolicyInput")]
pub struct UpgradePolicy {
    /// Extra nodes at once, 0 to 10.
    #[schema(minimum = 0, maximum = 10)]
    pub max_surge: i64,
    /// Nodes below the count at once, 0 to 10.
    #[schema(minimum = 0, maximum = 10)]
    pub max_unavailable: i64,
}

impl Default for UpgradePolicy {
    fn default() -> Self {
        UpgradePolicy { max_surge: 1, max_unavailable: 0 }
    }
}

#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "AutoscalingInput")]
pub struct Autoscaling {
    #[schema(minimum = 0, maximum = 500)]
    pub min_count: i64,
    #[schema(minimum = 1, maximum = 500)]
    pub max_count: i64,
}

#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "TaintInput")]
pub struct Taint {
    #[schema(
        pattern = r"^([A-Za-z0-9]([-A-Za-z0-9_]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9_]{0,61}[A-Za-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
    )]
    pub key: String,
    #[serde(default)]
    #[graphql(default)]
    #[schema(pattern = r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    #[schema(pattern = "^(NoSchedule|PreferNoSchedule|NoExecute)$")]
    pub effect: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct NodePoolSpec {
    pub machine_type: String,
    pub count: i64,
    pub autoscaling: Option<Autoscaling>,
    pub zones: Vec<String>,
    #[schema(value_type = LabelMap)]
    pub node_labels: Labels,
    pub taints: Vec<Taint>,
    pub upgrade_policy: UpgradePolicy,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NodePoolUpdate {
    #[schema(value_type = Option<LabelMap>)]
    pub labels: Option<Labels>,
    pub spec: Option<NodePoolSpecPatch>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NodePoolSpecPatch {
    /// A machine type from `GET /v1/machine-types`: the nodes are replaced
    /// onto it as `upgrade_policy` says (surge nodes first, then old ones
    /// cordoned and drained), so pods move rather than stop.
    pub machine_type: Option<String>,
    #[schema(minimum = 0, maximum = 500)]
    pub count: Option<i64>,
    /// `null` turns autoscaling off.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Autoscaling>)]
    pub autoscaling: Option<Option<Autoscaling>>,
    /// Immutable.
    pub zones: Option<Vec<String>>,
    #[schema(value_type = Option<LabelMap>)]
    pub node_labels: Option<Labels>,
    pub taints: Option<Vec<Taint>>,
    /// Replaces no node itself; a replacement under way follows it from
    /// the region's next step.
    pub upgrade_policy: Option<UpgradePolicy>,
}

/// A worker node's name as `GET …/clusters/{cluster}/nodes` lists it.
pub const NODE_NAME_PATTERN: &str = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$";

/// An etcd snapshot's name as `GET …/clusters/{cluster}/snapshots` lists it.
pub const SNAPSHOT_NAME_PATTERN: &str = NODE_NAME_PATTERN;

/// The OpenAPI schema of a list of node names: 1 to 500 distinct names.
pub struct NodeNames;

impl utoipa::PartialSchema for NodeNames {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
        let name =
            ObjectBuilder::new().schema_type(Type::String).pattern(Some(NODE_NAME_PATTERN)).max_length(Some(253));
        ArrayBuilder::new()
            .items(name)
            .min_items(Some(1))
            .max_items(Some(500))
            .unique_items(true)
            .description(Some("Names of the pool's nodes, each once."))
            .into()
    }
}

impl ToSchema for NodeNames {}

/// Replace nodes of a pool (DOKS `recycle`): for each, one at a time, a
/// new node joins first, then the old one is cordoned, drained and deleted,
/// so the pool never runs below its count and pods move rather than stop.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
#[graphql(name = "NodePoolRecycleInput")]
pub struct NodePoolRecycleRequest {
    /// The nodes to replace; every node of the pool when omitted.
    #[schema(value_type = Option<NodeNames>)]
    pub nodes: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "NodePool", complex)]
pub struct NodePoolView {
    pub id: NodePoolId,
    pub cluster_id: ClusterId,
    pub name: String,
    #[graphql(skip)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: NodePoolSpec,
    pub generation: i64,
    pub status: ObservedStatus,
    pub deletion_requested_at: Option<DateTime<Utc>>,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

// ---------------------------------------------------------------- operations

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum OperationStatus {
    /// Held by the organization's approval policy: nothing has changed and
    /// nothing reaches the region until someone approves it
    /// (`POST /v1/operations/{operation}/approve`).
    AwaitingApproval,
    Pending,
    Running,
    Succeeded,
    Failed,
}

impl OperationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationStatus::AwaitingApproval => "awaiting_approval",
            OperationStatus::Pending => "pending",
            OperationStatus::Running => "running",
            OperationStatus::Succeeded => "succeeded",
            OperationStatus::Failed => "failed",
        }
    }
    pub fn parse(text: &str) -> Option<OperationStatus> {
        [Self::AwaitingApproval, Self::Pending, Self::Running, Self::Succeeded, Self::Failed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
    pub fn is_terminal(self) -> bool {
        matches!(self, OperationStatus::Succeeded | OperationStatus::Failed)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct OperationError {
    pub code: String,
    pub message: String,
}

/// What an operation acts on.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct OperationTarget {
    /// `cluster`, `node_pool`, `deployment` or `org` (organization-wide work such as re-encrypting secrets).
    #[serde(rename = "type")]
    #[graphql(name = "type")]
    pub target_type: String,
    /// The target's prefixed id.
    pub id: String,
    pub name: String,
    /// The spec generation this operation brings about.
    pub generation: i64,
}

/// Long-running work; poll `GET /v1/operations/{id}` (optionally with `?wait=30s`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Operation", complex)]
pub struct OperationView {
    pub id: OperationId,
    /// e.g. `cluster_create`, `node_pool_update`.
    pub kind: String,
    pub status: OperationStatus,
    /// The step under way, e.g. `queued`, `provisioning_control_plane`.
    pub step: String,
    /// 0 to 100.
    pub progress: i32,
    pub error: Option<OperationError>,
    pub target: OperationTarget,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// What a cluster event is about.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum ClusterEventKind {
    /// A step of an Operation on the cluster, a node pool or a deployment.
    OperationStep,
    /// The cluster's or a node pool's phase changed (e.g. `pending -> running`).
    PhaseChanged,
    NodeJoined,
    NodeLeft,
    /// A node that was not ready is again.
    NodeReady,
    NodeNotReady,
    /// The region's autoscaler changed a pool's size, and why.
    Autoscaled,
}

impl ClusterEventKind {
    pub fn parse(text: &str) -> Option<ClusterEventKind> {
        Some(match text {
            "operation_step" => ClusterEventKind::OperationStep,
            "phase_changed" => ClusterEventKind::PhaseChanged,
            "node_joined" => ClusterEventKind::NodeJoined,
            "node_left" => ClusterEventKind::NodeLeft,
            "node_ready" => ClusterEventKind::NodeReady,
            "node_not_ready" => ClusterEventKind::NodeNotReady,
            "autoscaled" => ClusterEventKind::Autoscaled,
            _ => return None,
        })
    }
}

/// Something that happened in a cluster (DOKS `status_messages`): the
/// history behind its status.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "ClusterEvent")]
pub struct ClusterEventView {
    pub at: DateTime<Utc>,
    pub kind: ClusterEventKind,
    /// `cluster`, `node_pool` or `deployment`.
    pub resource_type: String,
    /// Its id (`cl_…`, `np_…`, `dep_…`).
    pub resource_id: String,
    pub resource_name: String,
    /// What happened, e.g. `node workers-node-3 joined`.
    pub message: String,
    /// The Operation whose step this is.
    pub operation_id: Option<OperationId>,
    /// Where the event stands in its cluster's history (page tokens and
    /// GraphQL cursors hold it; not shown).
    #[serde(skip)]
    #[graphql(skip)]
    pub sequence: i64,
}

impl ClusterEventView {
    /// The 16 bytes a page token or cursor holds for this event.
    pub fn cursor_key(&self) -> uuid::Uuid {
        uuid::Uuid::from_u128(self.sequence.max(0) as u128)
    }
}

/// One generation of a cluster's desired spec, as it was; immutable.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "ClusterRevision")]
pub struct ClusterRevisionView {
    /// The cluster's generation while this was its spec.
    pub generation: i64,
    pub spec: ClusterSpec,
    /// What made it: the Operation's kind, e.g. `cluster_create`,
    /// `cluster_update`, `cluster_upgrade`, `cluster_delete`; none for a
    /// revision older than revision history.
    pub cause: Option<String>,
    /// The Operation that made it.
    pub operation_id: Option<OperationId>,
    /// Who made it (a principal id), or `system`.
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// One generation of a node pool's desired spec, as it was; immutable.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "NodePoolRevision")]
pub struct NodePoolRevisionView {
    /// The pool's generation while this was its spec.
    pub generation: i64,
    pub spec: NodePoolSpec,
    /// What made it: the Operation's kind, e.g. `node_pool_create`,
    /// `node_pool_update`, `node_pool_recycle`; none for a revision older
    /// than revision history.
    pub cause: Option<String>,
    /// The Operation that made it.
    pub operation_id: Option<OperationId>,
    /// Who made it (a principal id), or `system`.
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl ClusterRevisionView {
    /// The 16 bytes a page token or cursor holds for this revision: its generation.
    pub fn cursor_key(&self) -> uuid::Uuid {
        uuid::Uuid::from_u128(self.generation.max(0) as u128)
    }
}

impl NodePoolRevisionView {
    /// The 16 bytes a page token or cursor holds for this revision: its generation.
    pub fn cursor_key(&self) -> uuid::Uuid {
        uuid::Uuid::from_u128(self.generation.max(0) as u128)
    }
}

/// What a mutation would do, answered to a dry run (`?dry_run=true` on
/// REST, `moke-validate-only: true` metadata on gRPC, `dryRun: true` on
/// GraphQL) in place of its usual answer. The request went through
/// everything up to its commit (validation, authorization, quotas, the
/// region's backlog) and then wrote nothing: no row, no command to a
/// region, no mail, no webhook, no audit event. A request a real call would
/// refuse is refused the same way.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DryRunView {
    /// Always `true`: nothing was changed.
    pub dry_run: bool,
    /// Each change the request would record, in order, as its audit event
    /// would name it; empty when it would change nothing.
    pub changes: Vec<PlannedChange>,
    /// The Operations it would start, with the steps each would take.
    pub operations: Vec<PlannedOperation>,
    /// Set when the organization's approval policy would hold the change:
    /// a real call answers an Operation in `awaiting_approval`, and the
    /// change is made only once someone else approves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<PlannedApproval>,
}

/// One change a dry run found, as the audit log would record it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlannedChange {
    /// e.g. `cluster.update`, `token.create`.
    pub action: String,
    /// e.g. `cluster`, `project`, `token`.
    pub resource_type: String,
    /// The resource's prefixed id; for a create, the id it would have had
    /// (a real call makes another).
    pub resource_id: Option<String>,
    /// What the audit event would record besides the action.
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
}

/// An Operation a dry run would have started.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlannedOperation {
    /// e.g. `cluster_upgrade`, `node_pool_update`.
    pub kind: String,
    pub target: OperationTarget,
    /// False when the gateway alone would complete it (labels only):
    /// nothing would reach the region.
    pub needs_region: bool,
    /// What the target's spec would become, against its spec now, for
    /// clusters and node pools (which keep spec revisions); empty otherwise.
    pub diff: Vec<SpecChange>,
    /// The steps the Operation would go through, in order.
    pub steps: Vec<String>,
}

/// What differs between two revisions of a spec.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "SpecDiff")]
pub struct SpecDiff {
    /// The older generation compared.
    pub from: i64,
    /// The newer generation compared.
    pub to: i64,
    /// Every value that differs, ordered by path; empty when the specs are equal.
    pub changes: Vec<SpecChange>,
}

/// One value that differs between two specs.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "SpecChange", complex)]
pub struct SpecChange {
    /// Where, as a JSON Pointer (RFC 6901) into the spec, e.g. `/kubernetes_version` or `/taints/0/effect`.
    pub path: String,
    /// The value before; absent when it was absent or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[graphql(skip)]
    pub before: Option<serde_json::Value>,
    /// The value after; absent when it is absent or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[graphql(skip)]
    pub after: Option<serde_json::Value>,
}

#[async_graphql::ComplexObject]
impl SpecChange {
    /// The value before; null when it was absent or null.
    #[graphql(name = "before")]
    async fn before_value(&self) -> Option<async_graphql::Json<&serde_json::Value>> {
        self.before.as_ref().map(async_graphql::Json)
    }

    /// The value after; null when it is absent or null.
    #[graphql(name = "after")]
    async fn after_value(&self) -> Option<async_graphql::Json<&serde_json::Value>> {
        self.after.as_ref().map(async_graphql::Json)
    }
}

/// One step of an Operation's history, as it was reported.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "OperationStep")]
pub struct OperationStepView {
    /// The Operation's status at this step.
    pub status: OperationStatus,
    /// What was under way, e.g. `control plane: traffic switched to the API servers on 1.33`.
    pub step: String,
    #[schema(minimum = 0, maximum = 100)]
    pub progress: i32,
    /// When the step was recorded.
    pub at: DateTime<Utc>,
}

/// An Operation's steps, oldest first: each step (or status) unlike the one
/// before it, the newest 1000 of them.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OperationSteps {
    pub items: Vec<OperationStepView>,
}

// ---------------------------------------------------------------- cluster credentials

/// What a kubeconfig may do in the cluster (its Kubernetes groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum ClusterAccess {
    /// `moke:cluster-admins`: organization owners and admins, project admins.
    Admin,
    /// `moke:editors`: members and project developers.
    Edit,
    /// `moke:viewers`: everyone who can read the cluster.
    View,
}

impl ClusterAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterAccess::Admin => "admin",
            ClusterAccess::Edit => "edit",
            ClusterAccess::View => "view",
        }
    }
}

/// How the kubeconfig authenticates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum KubeconfigFormat {
    /// An embedded client certificate and key.
    #[default]
    Certificate,
    /// An exec plugin: `moke kubeconfig token --project P --cluster C --access A`
    /// prints the answer of `POST …/credentials` (an ExecCredential).
    Exec,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Kubeconfig")]
pub struct KubeconfigView {
    /// The kubeconfig file (YAML).
    pub kubeconfig: String,
    /// When its client certificate expires (`null` for the exec format).
    pub expires_at: Option<DateTime<Utc>>,
    /// The Kubernetes groups it carries.
    pub groups: Vec<String>,
}

/// A `client.authentication.k8s.io/v1` ExecCredential, as kubectl reads it
/// from an exec plugin.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
pub struct ExecCredential {
    pub api_version: String,
    pub kind: String,
    pub status: ExecCredentialStatus,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
pub struct ExecCredentialStatus {
    pub client_certificate_data: String,
    pub client_key_data: String,
    pub expiration_timestamp: DateTime<Utc>,
}

impl ExecCredential {
    pub fn new(certificate_pem: String, key_pem: String, expires_at: DateTime<Utc>) -> ExecCredential {
        ExecCredential {
            api_version: "client.authentication.k8s.io/v1".into(),
            kind: "ExecCredential".into(),
            status: ExecCredentialStatus {
                client_certificate_data: certificate_pem,
                client_key_data: key_pem,
                expiration_timestamp: expires_at,
            },
        }
    }
}

// ---------------------------------------------------------------- workloads

/// A namespace of a hosted cluster. Every cluster has `default`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Namespace")]
pub struct NamespaceView {
    pub name: String,
    pub cluster_id: ClusterId,
    pub created_at: DateTime<Utc>,
}

/// A Deployment made through the cluster's own API (kubectl), as the
/// cluster's region last reported it. Moke shows it and never changes it:
/// it is the customer's, managed with kubectl.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "UnmanagedDeployment")]
pub struct UnmanagedDeploymentView {
    pub cluster_id: ClusterId,
    pub namespace: String,
    pub name: String,
    /// The image of its (first) container.
    pub image: String,
    /// Desired pods.
    pub replicas: i64,
    /// Pods that exist, and of those: ready, and of the current template.
    pub current_replicas: i64,
    pub ready_replicas: i64,
    pub updated_replicas: i64,
    /// `progressing` or `running`.
    pub phase: String,
    /// When it was made in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    /// When the region first reported it as it is now (its last change).
    pub observed_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct NamespaceCreate {
    /// A DNS label; `kube-*` names are reserved.
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
}

/// Moke's portable description of a Deployment: one container, run as
/// `replicas` pods. Written directly, or derived from a Kubernetes
/// `apps/v1` Deployment manifest; both are stored in this form.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "DeploymentSpecInput")]
pub struct DeploymentSpec {
    /// Container image reference, e.g. `registry.example.com/web:1.4.2` or `...@sha256:…`.
    #[schema(pattern = r"^[a-z0-9._/-][a-z0-9._/:-]*(:[^\s/:@]*)?(@\S*)?$", max_length = 512)]
    pub image: String,
    /// Pods to run, 0 to 1000.
    #[serde(default = "defaults::replicas")]
    #[graphql(default_with = "defaults::replicas()")]
    #[schema(minimum = 0, maximum = 1000)]
    pub replicas: i64,
    #[serde(default)]
    #[graphql(default)]
    #[schema(max_items = 64)]
    pub ports: Vec<ContainerPort>,
    #[serde(default)]
    #[graphql(default)]
    #[schema(max_items = 256)]
    pub env: Vec<EnvVar>,
    #[serde(default)]
    #[graphql(default)]
    pub resources: ResourceRequests,
    #[serde(default)]
    #[graphql(default)]
    pub probes: Probes,
    #[serde(default)]
    #[graphql(default)]
    pub strategy: RolloutStrategy,
    /// Labels of every pod (what Services select); `app: <deployment name>` if none are given.
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = LabelMap)]
    pub pod_labels: Labels,
    /// Pods run only on nodes with all these labels.
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = LabelMap)]
    pub node_selector: Labels,
    #[serde(default)]
    #[graphql(default)]
    #[schema(max_items = 64)]
    pub tolerations: Vec<Toleration>,
    /// A paused deployment keeps running its current pods; template changes wait for `resume`.
    #[serde(default)]
    #[graphql(default)]
    pub paused: bool,
    /// Set by `restart`: a new value rolls every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarted_at: Option<DateTime<Utc>>,
    /// What happens to a change made to this deployment through its
    /// cluster's own API (`kubectl edit`, `scale`, `set image`, `apply`):
    /// `revert` puts this spec back within a second and reports the change
    /// as the `Drifted` condition; `adopt` takes the change as a new
    /// revision (image, replicas, requests, environment, ports, node
    /// selector, tolerations, pausing, rollout bounds), checked as any
    /// update is (image policy, quotas, change limits), and puts it back
    /// if refused (the refusal is in the audit log). A manifest sets it
    /// with the annotation `moke.cloud/on-drift`.
    #[serde(default = "defaults::on_drift")]
    #[graphql(default_with = "defaults::on_drift()")]
    #[schema(pattern = "^(revert|adopt)$")]
    pub on_drift: String,
}

mod defaults {
    pub fn on_drift() -> String {
        "revert".into()
    }
    pub fn replicas() -> i64 {
        1
    }
    pub fn protocol() -> String {
        "TCP".into()
    }
    pub fn cpu_millis() -> i64 {
        100
    }
    pub fn memory_mib() -> i64 {
        128
    }
    pub fn surge() -> String {
        "25%".into()
    }
    pub fn progress_deadline_seconds() -> i64 {
        600
    }
    pub fn period_seconds() -> i64 {
        10
    }
    pub fn equal() -> String {
        "Equal".into()
    }
    pub fn cluster_ip() -> String {
        "ClusterIP".into()
    }
}

#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ContainerPortInput")]
pub struct ContainerPort {
    /// A Kubernetes port name: lower-case letters, digits and `-`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$", max_length = 15)]
    pub name: Option<String>,
    #[schema(minimum = 1, maximum = 65535)]
    pub container_port: i64,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default = "defaults::protocol")]
    #[graphql(default_with = "defaults::protocol()")]
    #[schema(pattern = "^(TCP|UDP|SCTP)$")]
    pub protocol: String,
}

#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "EnvVarInput")]
pub struct EnvVar {
    #[schema(pattern = r"^[-._A-Za-z][-._A-Za-z0-9]*$")]
    pub name: String,
    /// At most 32 KiB, without NUL characters.
    #[serde(default)]
    #[graphql(default)]
    #[schema(pattern = r"^[^\u0000]*$", max_length = 32768)]
    pub value: String,
}

/// What one pod asks of its node.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ResourceRequestsInput")]
pub struct ResourceRequests {
    /// Thousandths of a CPU (Kubernetes `250m` = 250).
    #[serde(default = "defaults::cpu_millis")]
    #[graphql(default_with = "defaults::cpu_millis()")]
    #[schema(minimum = 1, maximum = 256000)]
    pub cpu_millis: i64,
    /// Mebibytes (Kubernetes `512Mi` = 512).
    #[serde(default = "defaults::memory_mib")]
    #[graphql(default_with = "defaults::memory_mib()")]
    #[schema(minimum = 1, maximum = 4194304)]
    pub memory_mib: i64,
}

impl Default for ResourceRequests {
    fn default() -> Self {
        ResourceRequests { cpu_millis: defaults::cpu_millis(), memory_mib: defaults::memory_mib() }
    }
}

#[derive(
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    ToSchema,
    PartialEq,
    async_graphql::SimpleObject,
    async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ProbesInput")]
pub struct Probes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<Probe>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<Probe>,
}

/// An HTTP GET (when `http_path` is set) or TCP probe of a container port.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ProbeInput")]
pub struct Probe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^/")]
    pub http_path: Option<String>,
    #[schema(minimum = 1, maximum = 65535)]
    pub port: i64,
    #[serde(default)]
    #[graphql(default)]
    #[schema(minimum = 0)]
    pub initial_delay_seconds: i64,
    #[serde(default = "defaults::period_seconds")]
    #[graphql(default_with = "defaults::period_seconds()")]
    #[schema(minimum = 1)]
    pub period_seconds: i64,
}

/// How a new revision replaces the pods of the old one.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "RolloutStrategyInput")]
pub struct RolloutStrategy {
    /// Extra pods allowed during a rollout: a count (`"1"`) or a percentage of replicas (`"25%"`, rounded up).
    #[serde(default = "defaults::surge")]
    #[graphql(default_with = "defaults::surge()")]
    #[schema(pattern = "^(0*[0-9]{1,18}|0*([0-9]{1,2}|100)%)$")]
    pub max_surge: String,
    /// Pods that may be unavailable during a rollout: a count or a percentage (rounded down).
    #[serde(default = "defaults::surge")]
    #[graphql(default_with = "defaults::surge()")]
    #[schema(pattern = "^(0*[0-9]{1,18}|0*([0-9]{1,2}|100)%)$")]
    pub max_unavailable: String,
    /// A rollout not finished after this long is marked failed.
    #[serde(default = "defaults::progress_deadline_seconds")]
    #[graphql(default_with = "defaults::progress_deadline_seconds()")]
    #[schema(minimum = 1, maximum = 86400)]
    pub progress_deadline_seconds: i64,
    /// Roll back to the last revision that rolled out fully when a rollout fails.
    #[serde(default)]
    #[graphql(default)]
    pub auto_rollback: bool,
}

impl Default for RolloutStrategy {
    fn default() -> Self {
        RolloutStrategy {
            max_surge: defaults::surge(),
            max_unavailable: defaults::surge(),
            progress_deadline_seconds: defaults::progress_deadline_seconds(),
            auto_rollback: false,
        }
    }
}

/// A Kubernetes toleration.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "TolerationInput")]
pub struct Toleration {
    /// Empty with `Exists` tolerates every taint.
    #[serde(default)]
    #[graphql(default)]
    #[schema(pattern = r"^[^\u0000]*$", max_length = 253)]
    pub key: String,
    /// `Equal` or `Exists`.
    #[serde(default = "defaults::equal")]
    #[graphql(default_with = "defaults::equal()")]
    #[schema(pattern = "^(Equal|Exists)$")]
    pub operator: String,
    #[serde(default)]
    #[graphql(default)]
    #[schema(pattern = r"^[^\u0000]*$", max_length = 63)]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule`, `NoExecute`, or empty for all.
    #[serde(default)]
    #[graphql(default)]
    #[schema(pattern = "^(NoSchedule|PreferNoSchedule|NoExecute)?$")]
    pub effect: String,
}

/// Create a deployment from exactly one of `spec` (the portable contract)
/// or `manifest` (a Kubernetes `apps/v1` Deployment as a JSON object).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeploymentCreate {
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    #[serde(default)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: Option<DeploymentSpec>,
    #[schema(value_type = Option<Object>)]
    pub manifest: Option<serde_json::Value>,
}

/// Change a deployment: `spec` is a JSON merge patch (RFC 7386) of the
/// portable spec, or `manifest` replaces it with a Kubernetes Deployment.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeploymentUpdate {
    #[schema(value_type = Option<LabelMap>)]
    pub labels: Option<Labels>,
    #[schema(value_type = Option<Object>)]
    pub spec: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub manifest: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScaleRequest {
    #[schema(minimum = 0, maximum = 1000)]
    pub replicas: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackRequest {
    /// The revision whose pod template to restore; the last one that rolled out fully if omitted.
    pub revision: Option<i64>,
}

/// One pod, as the region last saw it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
#[graphql(name = "Pod")]
pub struct PodView {
    pub name: String,
    /// Empty while pending.
    pub node: String,
    pub zone: String,
    pub revision: i64,
    pub ready: bool,
    pub ip: String,
}

/// Desired and observed replicas of a deployment.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct DeploymentStatus {
    /// `pending` until first observed, then `progressing`, `running`, `failed` or `deleting`.
    pub phase: String,
    pub observed_generation: i64,
    /// Desired pods (the spec's replicas).
    pub replicas: i64,
    /// Pods that exist, and of those: of the current revision, ready, available.
    pub current_replicas: i64,
    pub updated_replicas: i64,
    pub ready_replicas: i64,
    pub available_replicas: i64,
    pub conditions: Vec<Condition>,
    /// Why the last rollout failed, if it did.
    pub last_error: Option<OperationError>,
    pub observed_at: Option<DateTime<Utc>>,
    /// The region has stopped reporting; this is the last known state.
    pub stale: bool,
    pub pods: Vec<PodView>,
}

/// A deployment: the spec asked for and the status observed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Deployment", complex)]
pub struct DeploymentView {
    pub id: DeploymentId,
    pub cluster_id: ClusterId,
    pub namespace: String,
    pub name: String,
    #[graphql(skip)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: DeploymentSpec,
    pub generation: i64,
    /// The newest revision (every change makes one).
    pub revision: i64,
    /// The revision whose pod template is rolling out or running.
    pub template_revision: i64,
    /// The last revision that rolled out fully, if any.
    pub last_good_revision: Option<i64>,
    pub status: DeploymentStatus,
    pub etag: String,
    pub deletion_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One immutable revision of a deployment.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "DeploymentRevision")]
pub struct RevisionView {
    pub revision: i64,
    pub spec: DeploymentSpec,
    /// What made it: `create`, `update`, `scale`, `pause`, `resume`, `restart`, `rollback to N`, `automatic rollback to N`.
    pub cause: String,
    /// Who made it (a principal id), or `system`.
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

impl RevisionView {
    /// The 16 bytes a page token or cursor holds for this revision: its number.
    pub fn cursor_key(&self) -> uuid::Uuid {
        uuid::Uuid::from_u128(u128::try_from(self.revision).unwrap_or(0))
    }
}

impl DeploymentView {
    /// Whether its latest rollout has ended: it failed, or the region runs
    /// the current generation (`running`).
    pub fn rollout_done(&self) -> bool {
        match self.status.phase.as_str() {
            "failed" => true,
            "running" => self.status.observed_generation >= self.generation,
            _ => false,
        }
    }
}

impl DeploymentSpec {
    /// The portable spec's fields, by their JSON names.
    pub const FIELDS: [&str; 11] = [
        "image",
        "replicas",
        "ports",
        "env",
        "resources",
        "probes",
        "strategy",
        "pod_labels",
        "node_selector",
        "tolerations",
        "paused",
    ];

    /// A JSON merge patch (RFC 7386, what [`DeploymentUpdate::spec`] is)
    /// that sets `fields` (of [`Self::FIELDS`]) to this spec's values, each
    /// replaced whole, probes included, except the label maps, which a
    /// merge patch merges key by key.
    pub fn merge_patch_of(&self, fields: &[&str]) -> serde_json::Value {
        let whole = serde_json::to_value(self).unwrap_or_default();
        let patch = fields.iter().map(|&field| {
            let value = match field {
                "probes" => self.probes.replacement(),
                _ => whole.get(field).cloned().unwrap_or_default(),
            };
            (field.to_string(), value)
        });
        serde_json::Value::Object(patch.collect())
    }
}

impl Probes {
    /// The probes as a merge patch value that replaces both: a probe, or a
    /// probe's `http_path`, left out here is removed, not kept.
    pub fn replacement(&self) -> serde_json::Value {
        let probe = |probe: &Option<Probe>| {
            probe.as_ref().map(|p| {
                serde_json::json!({
                    "http_path": p.http_path,
                    "port": p.port,
                    "initial_delay_seconds": p.initial_delay_seconds,
                    "period_seconds": p.period_seconds,
                })
            })
        };
        serde_json::json!({ "readiness": probe(&self.readiness), "liveness": probe(&self.liveness) })
    }
}

// ---------------------------------------------------------------- deploy webhooks

/// What a project's deploy webhooks may do.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
#[graphql(name = "DeployPolicyInput")]
pub struct DeployPolicy {
    /// Images must start with one of these, e.g. `registry.example.com/shop/`. Empty: webhooks deploy nothing.
    pub allowed_image_prefixes: Vec<String>,
    /// Branches whose CI runs and pushes may deploy (`workflow_run`, GitLab pipelines and pushes).
    pub allowed_branches: Vec<String>,
}

/// A project's deploy policy.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
#[graphql(name = "DeployPolicy")]
pub struct DeployPolicyView {
    /// Images must start with one of these. Empty: webhooks deploy nothing.
    pub allowed_image_prefixes: Vec<String>,
    /// Branches whose CI runs and pushes may deploy.
    pub allowed_branches: Vec<String>,
    /// Send as `If-Match` to update.
    pub etag: String,
    /// Null while the project has never set one.
    pub updated_at: Option<DateTime<Utc>>,
}

/// The deployment a webhook (or one of its rules) changes.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(name = "DeployHookTarget", input_name = "DeployHookTargetInput")]
pub struct HookTarget {
    /// Cluster id or name.
    pub cluster: String,
    #[serde(default = "default_namespace")]
    #[graphql(default_with = "default_namespace()")]
    pub namespace: String,
    /// Deployment id or name.
    pub deployment: String,
}

fn default_namespace() -> String {
    "default".into()
}

/// A project hook's rule: deliveries from `repository` (when set) of images
/// starting with `image_prefix` (when set) change `target`.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(name = "DeployHookRule", input_name = "DeployHookRuleInput")]
pub struct HookRule {
    /// e.g. `acme/web` (GitHub `owner/repo`, GitLab `group/project`).
    pub repository: Option<String>,
    pub image_prefix: Option<String>,
    pub target: HookTarget,
}

/// Create a deploy webhook: for one deployment (`target`) or for the
/// project with `rules`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct DeployHookCreate {
    pub name: String,
    pub target: Option<HookTarget>,
    #[serde(default)]
    #[graphql(default)]
    #[schema(max_items = 100)]
    pub rules: Vec<HookRule>,
    /// For events that name a commit or tag but no image: `{sha}`, `{tag}` and `{branch}` are filled in,
    /// e.g. `registry.example.com/shop/web:{sha}`.
    #[schema(pattern = r"^[^\s]*\{[^\s]*$")]
    pub image_template: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "DeployHook")]
pub struct DeployHookView {
    pub id: DeployHookId,
    pub project_id: ProjectId,
    pub name: String,
    pub deployment_id: Option<DeploymentId>,
    pub rules: Vec<HookRule>,
    pub image_template: Option<String>,
    /// Where CI sends deliveries.
    pub url: String,
    /// After a secret rotation: until when the previous secret is still accepted.
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub last_delivery_at: Option<DateTime<Utc>>,
}

/// Rotating a hook's secret.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct DeployHookSecretRotate {
    /// How long the previous secret keeps being accepted, in seconds: 0 revokes it at once (it leaked),
    /// at most 604800 (7 days); 86400 when not given.
    #[schema(minimum = 0, maximum = 604800)]
    pub previous_secret_valid_seconds: Option<i64>,
}

/// A new hook and its signing secret, shown only now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct DeployHookCreated {
    #[serde(flatten)]
    pub hook: DeployHookView,
    /// `whsec_…`: the Standard Webhooks key, the GitHub webhook secret, or the GitLab secret token.
    /// Shown only once: empty in an answer replayed to a retry with the same `Idempotency-Key`.
    pub secret: String,
}

/// What a delivery did when it did not start a rollout.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct HookAnswer {
    /// `pong` or `ignored`.
    pub outcome: String,
    pub detail: String,
}

// ---------------------------------------------------------------- event webhooks

/// An event type or a pattern of them (`*` matches the rest).
pub struct EventTypePattern;

/// The most patterns an endpoint subscribes with.
pub const MAX_EVENT_TYPES: usize = 50;
/// The longest pattern.
pub const MAX_EVENT_TYPE_CHARS: usize = 100;

impl utoipa::PartialSchema for EventTypePattern {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^(\*|(cluster|nodepool|deployment|operation|webhook_endpoint|invoice|budget)\.[a-z._*]*)$"))
            .max_length(Some(MAX_EVENT_TYPE_CHARS))
            .into()
    }
}

impl ToSchema for EventTypePattern {}

/// Subscribe a URL to events of the organization.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct WebhookEndpointCreate {
    /// `https://` (plain `http://` only for targets the operator allow-listed). Private, loopback and
    /// link-local addresses are refused.
    #[schema(pattern = "^[Hh][Tt][Tt][Pp][Ss]?://", max_length = 2048)]
    pub url: String,
    #[serde(default)]
    #[graphql(default)]
    #[schema(max_length = 500)]
    pub description: String,
    /// Patterns: `cluster.*`, `nodepool.*`, `deployment.rollout.*`, `operation.*`, `webhook_endpoint.*`, or `*`;
    /// billing events (`invoice.*`, `budget.*`) only by name, with the `read_billing` permission.
    #[schema(min_items = 1, max_items = 50, value_type = Vec<EventTypePattern>)]
    pub event_types: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "WebhookEndpoint")]
pub struct WebhookEndpointView {
    pub id: WebhookEndpointId,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    /// Deliveries have failed since then (cleared by a success).
    pub failing_since: Option<DateTime<Utc>>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
    /// After a secret rotation: until when deliveries are also signed with the previous secret.
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// A change to a webhook endpoint: only the fields given change.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct WebhookEndpointUpdate {
    /// Checked as on create: `https://` (plain `http://` only for targets the operator allow-listed);
    /// private, loopback and link-local addresses are refused.
    #[schema(pattern = "^[Hh][Tt][Tt][Pp][Ss]?://", max_length = 2048)]
    pub url: Option<String>,
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// Replaces the whole list; the patterns of create, billing events only with the `read_billing` permission.
    #[schema(min_items = 1, max_items = 50, value_type = Option<Vec<EventTypePattern>>)]
    pub event_types: Option<Vec<String>>,
    /// `false` disables the endpoint (its pending deliveries fail); `true` enables a disabled one again,
    /// clearing `disabled_at`, `disabled_reason` and `failing_since`.
    pub enabled: Option<bool>,
}

/// Rotating an endpoint's signing secret.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct WebhookEndpointSecretRotate {
    /// How long deliveries keep being signed with the previous secret too (Standard Webhooks' several
    /// `v1,` signatures), in seconds: 0 stops at once (it leaked), at most 604800 (7 days); 86400 when not given.
    #[schema(minimum = 0, maximum = 604800)]
    pub previous_secret_valid_seconds: Option<i64>,
}

/// A new endpoint and its signing secret, shown only now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct WebhookEndpointCreated {
    #[serde(flatten)]
    pub endpoint: WebhookEndpointView,
    /// `whsec_…`: verify deliveries with any Standard Webhooks library.
    /// Shown only once: empty in an answer replayed to a retry with the same `Idempotency-Key`.
    pub secret: String,
}

/// One try at delivering an event.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "WebhookAttempt")]
pub struct WebhookAttemptView {
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    /// The endpoint's HTTP status, if it answered.
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub latency_ms: i32,
}

/// One event's delivery to an endpoint, with every attempt.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "WebhookDelivery")]
pub struct WebhookDeliveryView {
    pub id: WebhookDeliveryId,
    /// The event (the `webhook-id` header of every attempt).
    pub event_id: EventId,
    pub event_type: String,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub attempts: Vec<WebhookAttemptView>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

impl WebhookDeliveryView {
    /// The 16 bytes a page token or cursor holds for this delivery (see [`Self::key_of`]).
    pub fn cursor_key(&self) -> uuid::Uuid {
        Self::key_of(self.created_at, self.id.uuid())
    }

    /// The key of a delivery made at `created_at` with id `id`: the time
    /// (Unix microseconds, big-endian) and the first 8 bytes of the id.
    /// Deliveries list newest first; ids made by the database are random,
    /// so the time leads.
    pub fn key_of(created_at: DateTime<Utc>, id: uuid::Uuid) -> uuid::Uuid {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&created_at.timestamp_micros().to_be_bytes());
        key[8..].copy_from_slice(&id.as_bytes()[..8]);
        uuid::Uuid::from_bytes(key)
    }
}

/// Send an event to the endpoint again.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct RedeliveryCreate {
    #[schema(pattern = "^msg_[0-9a-f]{32}$")]
    pub event_id: String,
}

// ---------------------------------------------------------------- cluster observations

/// A worker node as the region last reported it, with what is placed on it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "ClusterNode")]
pub struct NodeView {
    pub name: String,
    pub node_pool: String,
    pub zone: String,
    pub rack: String,
    pub ready: bool,
    /// Cordoned: being drained, takes no new pods.
    pub unschedulable: bool,
    /// The Kubernetes version its kubelet runs (during an upgrade, old and
    /// new nodes side by side); absent when the region has not said.
    pub kubernetes_version: Option<String>,
    pub allocatable_cpu_millis: i64,
    pub allocatable_memory_mib: i64,
    pub pods: i64,
    pub requested_cpu_millis: i64,
    pub requested_memory_mib: i64,
}

/// Requests and pods of one deployment.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct DeploymentMetrics {
    pub namespace: String,
    pub name: String,
    pub pods: i64,
    pub ready_pods: i64,
    /// Pods not placed on any node (nothing could take them).
    pub pending_pods: i64,
    pub requested_cpu_millis: i64,
    pub requested_memory_mib: i64,
}

/// A cluster's capacity and what its workloads ask of it, from the region's observations.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct ClusterMetrics {
    pub nodes: i64,
    pub ready_nodes: i64,
    pub allocatable_cpu_millis: i64,
    pub allocatable_memory_mib: i64,
    pub requested_cpu_millis: i64,
    pub requested_memory_mib: i64,
    pub pods: i64,
    pub ready_pods: i64,
    pub deployments: Vec<DeploymentMetrics>,
}

// ---------------------------------------------------------------- services

/// A Service: a stable address in front of the pods its selector matches.
#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ServiceSpecInput")]
pub struct ServiceSpec {
    /// `ClusterIP` (default) or `NodePort`.
    #[serde(rename = "type", default = "defaults::cluster_ip")]
    #[graphql(name = "type", default_with = "defaults::cluster_ip()")]
    #[schema(pattern = "^(ClusterIP|NodePort)$")]
    pub service_type: String,
    /// Pods with all these labels are the Service's endpoints.
    #[schema(value_type = SelectorMap)]
    pub selector: Labels,
    /// Each port and protocol once; every port named when there are several.
    #[schema(min_items = 1, max_items = 100)]
    pub ports: Vec<ServicePort>,
}

#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ServicePortInput")]
pub struct ServicePort {
    /// Required when the service has several ports, each name once (an
    /// IANA service name: lowercase letters, digits and single inner
    /// hyphens, with a letter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^([a-z0-9]+-)*[a-z0-9]*[a-z][a-z0-9]*(-[a-z0-9]+)*$", max_length = 15)]
    pub name: Option<String>,
    #[schema(minimum = 1, maximum = 65535)]
    pub port: i64,
    /// The pods' port; `port` if omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 65535)]
    pub target_port: Option<i64>,
    #[serde(default = "defaults::protocol")]
    #[graphql(default_with = "defaults::protocol()")]
    #[schema(pattern = "^(TCP|UDP|SCTP)$")]
    pub protocol: String,
    /// `NodePort` services: the port on every node (allocated from 30000-32767 when omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 30000, maximum = 32767)]
    pub node_port: Option<i64>,
}

/// Create a service from exactly one of `spec` or `manifest` (a Kubernetes `v1` Service).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceCreate {
    /// Unique in its namespace; `kubernetes` in `default` is the cluster's
    /// own API server Service and is refused (400 `reserved`).
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    #[serde(default)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: Option<ServiceSpec>,
    #[schema(value_type = Option<Object>)]
    pub manifest: Option<serde_json::Value>,
}

/// Change a service: `spec` is a JSON merge patch, or `manifest` replaces it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceUpdate {
    #[schema(value_type = Option<LabelMap>)]
    pub labels: Option<Labels>,
    #[schema(value_type = Option<Object>)]
    pub spec: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub manifest: Option<serde_json::Value>,
}

/// One pod behind a service, as last observed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
#[graphql(name = "ServiceEndpoint")]
pub struct EndpointView {
    pub ip: String,
    pub port: i64,
    pub pod: String,
    pub node: String,
    pub zone: String,
    /// Only ready pods get traffic.
    pub ready: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Service", complex)]
pub struct ServiceView {
    pub id: ServiceId,
    pub cluster_id: ClusterId,
    pub namespace: String,
    pub name: String,
    #[graphql(skip)]
    #[schema(value_type = LabelMap)]
    pub labels: Labels,
    pub spec: ServiceSpec,
    pub cluster_ip: String,
    pub endpoints: Vec<EndpointView>,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ServiceSpec {
    /// The spec's fields, by their JSON names.
    pub const FIELDS: [&str; 3] = ["type", "selector", "ports"];

    /// A JSON merge patch (RFC 7386, what [`ServiceUpdate::spec`] is) that
    /// sets `fields` (of [`Self::FIELDS`]) to this spec's values: `type`
    /// and `ports` replaced, `selector` merged key by key.
    pub fn merge_patch_of(&self, fields: &[&str]) -> serde_json::Value {
        let whole = serde_json::to_value(self).unwrap_or_default();
        let patch = fields.iter().map(|&field| (field.to_string(), whole.get(field).cloned().unwrap_or_default()));
        serde_json::Value::Object(patch.collect())
    }
}
