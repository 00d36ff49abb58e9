//! The public resource model: what clients send (`*Create`, `*Update`) and
//! what they get back (`*View`). Shared by every surface and by the OpenAPI
//! document; the app layer validates inputs into the stored specs.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use crate::ids::{
    AuditEventId, ClusterId, DeployHookId, DeploymentId, EventId, InvitationId, NodePoolId, OperationId, OrgId,
    ProjectId, ServiceAccountId, ServiceId, SessionId, TokenId, TrustPolicyId, UserId, WebhookDeliveryId,
    WebhookEndpointId,
};

/// Key/value labels for organising resources (Kubernetes label rules).
pub type Labels = BTreeMap<String, String>;

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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RegionView {
    /// Region name used in cluster specs, e.g. `eu-central-1`.
    pub name: String,
    pub display_name: String,
    pub zones: Vec<String>,
    pub health: RegionHealth,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
    pub labels: Labels,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One quota: its limit and what is in use.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct QuotaItem {
    pub limit: i64,
    pub usage: i64,
}

/// An organization's quotas.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct QuotasView {
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
    pub name: String,
    #[serde(default)]
    #[graphql(default)]
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
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectUpdate {
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
    /// DNS label, unique in the project.
    pub name: String,
    #[serde(default)]
    #[graphql(default)]
    pub labels: Labels,
    pub spec: ClusterSpecInput,
}

/// The desired cluster as a client writes it; omitted fields get defaults.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpecInput {
    /// A region from `GET /v1/regions`. Cannot change later.
    pub region: String,
    /// A version from `GET /v1/kubernetes-versions`; the default one if omitted.
    pub kubernetes_version: Option<String>,
    pub control_plane: Option<ControlPlaneInput>,
    pub maintenance_window: Option<MaintenanceWindow>,
    /// When true, deletion is refused until it is turned off. Default false.
    pub deletion_protection: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ControlPlaneInput {
    /// API server replicas: 1 (development) or 3 (highly available, the default).
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
    pub day: String,
    /// Start in UTC, `HH:MM`.
    pub start_time: String,
    /// 1 to 24.
    pub duration_hours: i64,
}

/// The stored desired state of a cluster.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct ClusterSpec {
    pub region: String,
    pub kubernetes_version: String,
    pub control_plane: ControlPlaneSpec,
    pub maintenance_window: Option<MaintenanceWindow>,
    pub deletion_protection: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct ControlPlaneSpec {
    pub replicas: i64,
}

/// A change to a cluster; omitted fields stay as they are.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterUpdate {
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
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<MaintenanceWindow>)]
    pub maintenance_window: Option<Option<MaintenanceWindow>>,
    pub deletion_protection: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Cluster", complex)]
pub struct ClusterView {
    pub id: ClusterId,
    pub project_id: ProjectId,
    pub name: String,
    #[graphql(skip)]
    pub labels: Labels,
    pub spec: ClusterSpec,
    pub generation: i64,
    pub status: ObservedStatus,
    /// Set once deletion was requested; the cluster disappears when the region confirms.
    pub deletion_requested_at: Option<DateTime<Utc>>,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

// ---------------------------------------------------------------- node pools

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct NodePoolCreate {
    /// DNS label, unique in the cluster.
    pub name: String,
    #[serde(default)]
    #[graphql(default)]
    pub labels: Labels,
    pub spec: NodePoolSpecInput,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct NodePoolSpecInput {
    /// A machine type from `GET /v1/machine-types`. Cannot change later.
    pub machine_type: String,
    /// Nodes to run, 0 to 500 (within the autoscaling range when set).
    pub count: i64,
    pub autoscaling: Option<Autoscaling>,
    /// Zones of the cluster's region to spread over; all of them if omitted. Cannot change later.
    pub zones: Option<Vec<String>>,
    /// Kubernetes labels put on every node.
    #[serde(default)]
    #[graphql(default)]
    pub node_labels: Labels,
    #[serde(default)]
    #[graphql(default)]
    pub taints: Vec<Taint>,
}

#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "AutoscalingInput")]
pub struct Autoscaling {
    pub min_count: i64,
    pub max_count: i64,
}

#[derive(
    Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "TaintInput")]
pub struct Taint {
    pub key: String,
    #[serde(default)]
    #[graphql(default)]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, async_graphql::SimpleObject)]
pub struct NodePoolSpec {
    pub machine_type: String,
    pub count: i64,
    pub autoscaling: Option<Autoscaling>,
    pub zones: Vec<String>,
    pub node_labels: Labels,
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NodePoolUpdate {
    pub labels: Option<Labels>,
    pub spec: Option<NodePoolSpecPatch>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NodePoolSpecPatch {
    /// Immutable: create a new pool to change machine type.
    pub machine_type: Option<String>,
    pub count: Option<i64>,
    /// `null` turns autoscaling off.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Autoscaling>)]
    pub autoscaling: Option<Option<Autoscaling>>,
    /// Immutable.
    pub zones: Option<Vec<String>>,
    pub node_labels: Option<Labels>,
    pub taints: Option<Vec<Taint>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "NodePool", complex)]
pub struct NodePoolView {
    pub id: NodePoolId,
    pub cluster_id: ClusterId,
    pub name: String,
    #[graphql(skip)]
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
    Pending,
    Running,
    Succeeded,
    Failed,
}

impl OperationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationStatus::Pending => "pending",
            OperationStatus::Running => "running",
            OperationStatus::Succeeded => "succeeded",
            OperationStatus::Failed => "failed",
        }
    }
    pub fn parse(text: &str) -> Option<OperationStatus> {
        [Self::Pending, Self::Running, Self::Succeeded, Self::Failed].into_iter().find(|s| s.as_str() == text)
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
    /// `cluster`, `node_pool` or `org` (organization-wide work such as re-encrypting secrets).
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

// ---------------------------------------------------------------- tokens

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct TokenCreate {
    /// What the token is for, e.g. `ci-deploy`.
    pub name: String,
    /// Role in the organization: `owner`, `admin`, `billing`, `member` or `viewer`.
    /// Cannot exceed the creator's own role.
    pub role: String,
    /// Lifetime in seconds, 300 to 31536000 (one year); never expires if omitted.
    pub expires_in_seconds: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TokenView {
    pub id: TokenId,
    pub name: String,
    /// `service_account` (`moke_sat_…`), `personal` (`moke_pat_…`) or `legacy` (`moke_…`).
    pub kind: String,
    /// The service account the token acts as.
    pub service_account: Option<ServiceAccountId>,
    /// The person the token acts as (personal tokens).
    pub user: Option<UserId>,
    /// The organization role of the token's owner.
    pub role: moke_iam::OrgRole,
    /// The only project the token can reach, if it is limited to one.
    pub project: Option<ProjectId>,
    /// The only actions the token may perform, if limited.
    pub scopes: Option<Vec<moke_iam::Action>>,
    /// The first characters of the token, to recognise it.
    pub hint: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A new token; `token` is shown only in this answer.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TokenCreated {
    #[serde(flatten)]
    pub view: TokenView,
    /// The secret. Store it now: it cannot be shown again.
    pub token: String,
}

// ---------------------------------------------------------------- audit

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AuditEventView {
    pub id: AuditEventId,
    pub occurred_at: DateTime<Utc>,
    /// e.g. `cluster.create`, `token.revoke`, `auth.token_rejected`.
    pub action: String,
    /// `success` or `failure`.
    pub outcome: String,
    pub principal: AuditPrincipal,
    /// The credential the actor used, when it had one.
    pub credential: Option<AuditCredential>,
    pub resource_type: String,
    pub resource_id: Option<String>,
    pub request_id: Option<String>,
    pub source_ip: Option<String>,
    pub user_agent: Option<String>,
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AuditPrincipal {
    /// `user`, `service_account`, `system` (or `api_token` on events recorded before service accounts).
    pub kind: String,
    pub id: Option<String>,
}

/// The credential behind an audit event.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AuditCredential {
    /// `tok_…` (API token), `ses_…` (session), or `jti:…` (exchanged CI token).
    pub id: Option<String>,
    /// `api_token`, `password`, `sso` or `token_exchange`.
    pub method: String,
}

// ---------------------------------------------------------------- identity

/// `POST /v1/signup`: a person, their organization, and them as its owner.
#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignupRequest {
    pub email: String,
    /// At least 12 characters, not a common password.
    pub password: String,
    pub display_name: String,
    /// Name of the new organization (lowercase letters, digits and '-').
    pub organization_name: String,
}

/// `Debug` that shows nothing of a request carrying a password or a token,
/// so no log line or panic message can.
macro_rules! redacted_debug {
    ($($name:ident),* $(,)?) => {
        $(impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($name), " { <redacted> }"))
            }
        })*
    };
}

redacted_debug!(
    SignupRequest,
    SignupConfirm,
    LoginRequest,
    RefreshRequest,
    LogoutRequest,
    LinkToken,
    PasswordResetConfirm,
    TokenExchangeRequest,
);

#[cfg(test)]
mod redaction_tests {
    #[test]
    fn requests_carrying_secrets_print_nothing_of_them() {
        let login = super::LoginRequest {
            email: "ada@example.com".into(),
            password: "hunter2 hunter2".into(),
            organization: None,
        };
        let printed = format!("{login:?}");
        assert!(!printed.contains("hunter2") && !printed.contains("ada@"), "{printed}");
        let link = super::LinkToken { token: "secret-link-token".into() };
        assert!(!format!("{link:?}").contains("secret-link-token"));
    }
}

/// A sign-up waiting for its address to be confirmed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SignupAccepted {
    /// Where the confirmation link was sent.
    pub email: String,
    pub detail: String,
}

/// The token from the sign-up e-mail, and the password chosen when signing
/// up (so a link someone else asked for cannot make an account whose
/// password they know).
#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignupConfirm {
    pub token: String,
    pub password: String,
    /// Another name for the new organization, if the one asked for was taken meanwhile.
    #[serde(default)]
    pub organization_name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SignupResponse {
    pub user: UserView,
    pub organization: OrgView,
    pub session: SessionTokens,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UserView {
    pub id: UserId,
    pub email: String,
    pub display_name: String,
    pub email_verified: bool,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub email: String,
    pub password: String,
    /// Organization (id or name) to act in; the oldest membership if omitted.
    pub organization: Option<String>,
}

/// A signed-in session: a short-lived access token and a refresh token.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionTokens {
    /// ES256 JWT; send as `Authorization: Bearer …`.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// Seconds until `access_token` expires.
    pub expires_in: i64,
    /// Opaque, single use: exchange it at `/v1/auth/refresh` for a new pair.
    pub refresh_token: String,
    pub organization: OrgId,
    pub session: SessionId,
}

#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshRequest {
    pub refresh_token: String,
    /// Switch to another of your organizations (id or name).
    pub organization: Option<String>,
}

#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LogoutRequest {
    /// The session's refresh token; without it, the session of the bearer access token ends.
    pub refresh_token: Option<String>,
}

/// A single-use token from an e-mail or invitation link.
#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkToken {
    pub token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordResetRequest {
    pub email: String,
}

#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordResetConfirm {
    pub token: String,
    pub password: String,
}

/// One of your sign-in sessions.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionView {
    pub id: SessionId,
    /// The session making this request.
    pub current: bool,
    /// `password` or `sso`.
    pub method: String,
    /// Where it acts now.
    pub organization: OrgId,
    pub organization_name: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The last sign-in or token refresh.
    pub last_used_at: Option<DateTime<Utc>>,
    pub created_from_ip: Option<String>,
    pub last_ip: Option<String>,
    pub user_agent: Option<String>,
}

/// How many sessions were ended.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionsEnded {
    pub ended: usize,
}

/// Who the caller is and where it may act.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MeView {
    /// `user` or `service_account`.
    pub kind: String,
    /// `usr_…` or `sa_…`.
    pub id: String,
    pub user: Option<UserView>,
    pub organization: OrgId,
    pub role: moke_iam::OrgRole,
    pub memberships: Vec<MembershipSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MembershipSummary {
    pub organization: OrgId,
    pub organization_name: String,
    pub role: moke_iam::OrgRole,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MemberView {
    pub user: UserId,
    pub email: String,
    pub display_name: String,
    pub role: moke_iam::OrgRole,
    pub joined_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberUpdate {
    /// `owner`, `admin`, `billing`, `member` or `viewer`.
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InvitationCreate {
    pub email: String,
    /// Role the person gets on accepting; not above your own.
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct InvitationView {
    pub id: InvitationId,
    pub email: String,
    pub role: moke_iam::OrgRole,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProjectMemberView {
    /// `usr_…` or `sa_…`.
    pub principal: String,
    pub role: moke_iam::ProjectRole,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectMemberSet {
    /// `admin`, `developer` or `viewer`.
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceAccountCreate {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Organization role; not above your own.
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ServiceAccountView {
    pub id: ServiceAccountId,
    pub name: String,
    pub description: String,
    pub role: moke_iam::OrgRole,
    pub created_at: DateTime<Utc>,
}

/// A token for a service account or for yourself, optionally narrowed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopedTokenCreate {
    pub name: String,
    /// Limit the token to one project (id or name).
    pub project: Option<String>,
    /// Limit the token to these actions (see `iam/PERMISSIONS.md`).
    pub scopes: Option<Vec<String>>,
    /// Lifetime in seconds, 300 to 31536000; never expires if omitted.
    pub expires_in_seconds: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrustPolicyCreate {
    /// The CI system's OpenID issuer, e.g. `https://token.actions.githubusercontent.com`.
    pub issuer: String,
    /// The `aud` the CI job requests for its ID token.
    pub audience: String,
    /// Claims that must match exactly, e.g. `repository`, `ref`, `environment`.
    pub claims: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TrustPolicyView {
    pub id: TrustPolicyId,
    pub service_account: ServiceAccountId,
    pub issuer: String,
    pub audience: String,
    pub claims: BTreeMap<String, String>,
    pub created_at: DateTime<Utc>,
    /// Set when an expiring credential made it: it ends with that credential.
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenExchangeRequest {
    /// The CI system's OIDC ID token.
    pub subject_token: String,
    /// The service account to act as (`sa_…`).
    pub service_account: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExchangedToken {
    pub access_token: String,
    pub token_type: String,
    pub expires_in: i64,
    pub service_account: ServiceAccountId,
    pub organization: OrgId,
}

#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SsoConfigSet {
    /// The identity provider's issuer URL (discovery is read from it).
    pub issuer: String,
    pub client_id: String,
    /// Stored encrypted by Vault; never shown again.
    pub client_secret: String,
    /// People with addresses in these domains join the organization on
    /// first sign-in. Each must be a domain the organization verified
    /// (`/v1/orgs/{org}/domains`); may be empty (only linked accounts sign in).
    pub allowed_domains: Vec<String>,
    /// Role given to people who join through SSO: `member` or `viewer` and so on (not `owner`).
    pub default_role: String,
}

/// Never prints the client secret.
impl std::fmt::Debug for SsoConfigSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoConfigSet")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("allowed_domains", &self.allowed_domains)
            .field("default_role", &self.default_role)
            .finish()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SsoConfigView {
    pub issuer: String,
    pub client_id: String,
    pub allowed_domains: Vec<String>,
    pub default_role: moke_iam::OrgRole,
    /// Where people start signing in.
    pub login_url: String,
    pub redirect_uri: String,
    pub updated_at: DateTime<Utc>,
}

/// What an organization demands of its members' credentials.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialPolicy {
    /// The longest lifetime a new API token may have, in seconds (300 to
    /// 31 536 000); a token asked for without an expiry gets this one. Null: no limit.
    #[serde(default)]
    pub max_token_lifetime_seconds: Option<i64>,
    /// Members other than owners act here only through the organization's
    /// single sign-on (password sessions, and personal tokens made from
    /// them, are refused). Needs SSO configured.
    #[serde(default)]
    pub require_sso: bool,
    /// Members act here only with a verified e-mail address.
    #[serde(default)]
    pub require_verified_email: bool,
}

/// An organization's credential policy.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CredentialPolicyView {
    pub max_token_lifetime_seconds: Option<i64>,
    pub require_sso: bool,
    pub require_verified_email: bool,
    /// Send as `If-Match` to update.
    pub etag: String,
    /// Null while the organization has never set one.
    pub updated_at: Option<DateTime<Utc>>,
}

/// `POST /v1/orgs/{org}/domains`: a domain to prove the organization owns.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DomainCreate {
    /// A domain name such as `example.com`.
    pub domain: String,
}

/// The DNS record that proves a domain.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DomainVerificationRecord {
    /// e.g. `_moke-challenge.example.com`.
    pub name: String,
    /// Always `TXT`.
    pub record_type: String,
    /// The record's text, `moke-domain-verification=…`.
    pub value: String,
}

/// A domain an organization claims, verified or not.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DomainView {
    pub id: crate::ids::DomainId,
    pub domain: String,
    /// Publish this record, then `POST …/domains/{domain}/verify`.
    pub verification: DomainVerificationRecord,
    pub verified: bool,
    pub verified_at: Option<DateTime<Utc>>,
    pub last_checked_at: Option<DateTime<Utc>>,
    /// Why the last check failed.
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// How an SSO sign-in ended: a session, or a link its account's owner must confirm first.
#[derive(Debug, Clone)]
pub enum SsoOutcome {
    SignedIn(SessionTokens),
    LinkRequired(SsoLinkPending),
}

/// An SSO identity matched an existing account by its address: it signs in
/// only once the account's owner confirms.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SsoLinkPending {
    /// Confirm with this while signed in to the account (`POST /v1/me/sso-links/confirm`).
    pub link_token: String,
    pub detail: String,
}

/// An SSO identity now linked to your account.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SsoLinkView {
    /// The organization whose identity provider may sign you in (there only).
    pub organization: OrgId,
    pub organization_name: String,
    pub issuer: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SsoLoginStart {
    /// Send the browser here.
    pub authorization_url: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SigningKeyRotated {
    /// The key id (`kid`) new tokens are signed with.
    pub kid: String,
}

// ---------------------------------------------------------------- cluster credentials

/// What a kubeconfig may do in the cluster (its Kubernetes groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KubeconfigFormat {
    /// An embedded client certificate and key.
    #[default]
    Certificate,
    /// An exec plugin: `moke kubeconfig token --project P --cluster C --access A`
    /// prints the answer of `POST …/credentials` (an ExecCredential).
    Exec,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecCredential {
    pub api_version: String,
    pub kind: String,
    pub status: ExecCredentialStatus,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct NamespaceView {
    pub name: String,
    pub cluster_id: ClusterId,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NamespaceCreate {
    /// A DNS label; `kube-*` names are reserved.
    pub name: String,
}

/// Moke's portable description of a Deployment: one container, run as
/// `replicas` pods. Written directly, or derived from a Kubernetes
/// `apps/v1` Deployment manifest; both are stored in this form.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeploymentSpec {
    /// Container image reference, e.g. `registry.example.com/web:1.4.2` or `...@sha256:…`.
    pub image: String,
    /// Pods to run, 0 to 1000.
    #[serde(default = "defaults::replicas")]
    pub replicas: i64,
    #[serde(default)]
    pub ports: Vec<ContainerPort>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    #[serde(default)]
    pub resources: ResourceRequests,
    #[serde(default)]
    pub probes: Probes,
    #[serde(default)]
    pub strategy: RolloutStrategy,
    /// Labels of every pod (what Services select); `app: <deployment name>` if none are given.
    #[serde(default)]
    pub pod_labels: Labels,
    /// Pods run only on nodes with all these labels.
    #[serde(default)]
    pub node_selector: Labels,
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    /// A paused deployment keeps running its current pods; template changes wait for `resume`.
    #[serde(default)]
    pub paused: bool,
    /// Set by `restart`: a new value rolls every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarted_at: Option<DateTime<Utc>>,
}

mod defaults {
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

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ContainerPort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub container_port: i64,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default = "defaults::protocol")]
    pub protocol: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EnvVar {
    pub name: String,
    #[serde(default)]
    pub value: String,
}

/// What one pod asks of its node.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ResourceRequests {
    /// Thousandths of a CPU (Kubernetes `250m` = 250).
    #[serde(default = "defaults::cpu_millis")]
    pub cpu_millis: i64,
    /// Mebibytes (Kubernetes `512Mi` = 512).
    #[serde(default = "defaults::memory_mib")]
    pub memory_mib: i64,
}

impl Default for ResourceRequests {
    fn default() -> Self {
        ResourceRequests { cpu_millis: defaults::cpu_millis(), memory_mib: defaults::memory_mib() }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Probes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<Probe>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<Probe>,
}

/// An HTTP GET (when `http_path` is set) or TCP probe of a container port.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_path: Option<String>,
    pub port: i64,
    #[serde(default)]
    pub initial_delay_seconds: i64,
    #[serde(default = "defaults::period_seconds")]
    pub period_seconds: i64,
}

/// How a new revision replaces the pods of the old one.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RolloutStrategy {
    /// Extra pods allowed during a rollout: a count (`"1"`) or a percentage of replicas (`"25%"`, rounded up).
    #[serde(default = "defaults::surge")]
    pub max_surge: String,
    /// Pods that may be unavailable during a rollout: a count or a percentage (rounded down).
    #[serde(default = "defaults::surge")]
    pub max_unavailable: String,
    /// A rollout not finished after this long is marked failed.
    #[serde(default = "defaults::progress_deadline_seconds")]
    pub progress_deadline_seconds: i64,
    /// Roll back to the last revision that rolled out fully when a rollout fails.
    #[serde(default)]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Toleration {
    /// Empty with `Exists` tolerates every taint.
    #[serde(default)]
    pub key: String,
    /// `Equal` or `Exists`.
    #[serde(default = "defaults::equal")]
    pub operator: String,
    #[serde(default)]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule`, `NoExecute`, or empty for all.
    #[serde(default)]
    pub effect: String,
}

/// Create a deployment from exactly one of `spec` (the portable contract)
/// or `manifest` (a Kubernetes `apps/v1` Deployment as a JSON object).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeploymentCreate {
    pub name: String,
    #[serde(default)]
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
    pub labels: Option<Labels>,
    #[schema(value_type = Option<Object>)]
    pub spec: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub manifest: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScaleRequest {
    pub replicas: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackRequest {
    /// The revision whose pod template to restore; the last one that rolled out fully if omitted.
    pub revision: Option<i64>,
}

/// One pod, as the region last saw it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DeploymentView {
    pub id: DeploymentId,
    pub cluster_id: ClusterId,
    pub namespace: String,
    pub name: String,
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RevisionView {
    pub revision: i64,
    pub spec: DeploymentSpec,
    /// What made it: `create`, `update`, `scale`, `pause`, `resume`, `restart`, `rollback to N`, `automatic rollback to N`.
    pub cause: String,
    /// Who made it (a principal id), or `system`.
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

// ---------------------------------------------------------------- deploy webhooks

/// What a project's deploy webhooks may do.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeployPolicy {
    /// Images must start with one of these, e.g. `registry.example.com/shop/`. Empty: webhooks deploy nothing.
    pub allowed_image_prefixes: Vec<String>,
    /// Branches whose CI runs and pushes may deploy (`workflow_run`, GitLab pipelines and pushes).
    pub allowed_branches: Vec<String>,
}

/// The deployment a webhook (or one of its rules) changes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookTarget {
    /// Cluster id or name.
    pub cluster: String,
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Deployment id or name.
    pub deployment: String,
}

fn default_namespace() -> String {
    "default".into()
}

/// A project hook's rule: deliveries from `repository` (when set) of images
/// starting with `image_prefix` (when set) change `target`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookRule {
    /// e.g. `acme/web` (GitHub `owner/repo`, GitLab `group/project`).
    pub repository: Option<String>,
    pub image_prefix: Option<String>,
    pub target: HookTarget,
}

/// Create a deploy webhook: for one deployment (`target`) or for the
/// project with `rules`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeployHookCreate {
    pub name: String,
    pub target: Option<HookTarget>,
    #[serde(default)]
    pub rules: Vec<HookRule>,
    /// For events that name a commit or tag but no image: `{sha}`, `{tag}` and `{branch}` are filled in,
    /// e.g. `registry.example.com/shop/web:{sha}`.
    pub image_template: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeployHookSecretRotate {
    /// How long the previous secret keeps being accepted, in seconds: 0 revokes it at once (it leaked),
    /// at most 604800 (7 days); 86400 when not given.
    pub previous_secret_valid_seconds: Option<i64>,
}

/// A new hook and its signing secret, shown only now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DeployHookCreated {
    #[serde(flatten)]
    pub hook: DeployHookView,
    /// `whsec_…`: the Standard Webhooks key, the GitHub webhook secret, or the GitLab secret token.
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

/// Subscribe a URL to events of the organization.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookEndpointCreate {
    /// `https://` (plain `http://` only for targets the operator allow-listed). Private, loopback and
    /// link-local addresses are refused.
    pub url: String,
    #[serde(default)]
    pub description: String,
    /// Patterns: `cluster.*`, `nodepool.*`, `deployment.rollout.*`, `operation.*`, `webhook_endpoint.*`, or `*`.
    pub event_types: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpointView {
    pub id: WebhookEndpointId,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    /// Deliveries have failed since then (cleared by a success).
    pub failing_since: Option<DateTime<Utc>>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A new endpoint and its signing secret, shown only now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WebhookEndpointCreated {
    #[serde(flatten)]
    pub endpoint: WebhookEndpointView,
    /// `whsec_…`: verify deliveries with any Standard Webhooks library.
    pub secret: String,
}

/// One try at delivering an event.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WebhookAttemptView {
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    /// The endpoint's HTTP status, if it answered.
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub latency_ms: i32,
}

/// One event's delivery to an endpoint, with every attempt.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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

/// Send an event to the endpoint again.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RedeliveryCreate {
    pub event_id: String,
}

// ---------------------------------------------------------------- cluster observations

/// A worker node as the region last reported it, with what is placed on it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct NodeView {
    pub name: String,
    pub node_pool: String,
    pub zone: String,
    pub rack: String,
    pub ready: bool,
    /// Cordoned: being drained, takes no new pods.
    pub unschedulable: bool,
    pub allocatable_cpu_millis: i64,
    pub allocatable_memory_mib: i64,
    pub pods: i64,
    pub requested_cpu_millis: i64,
    pub requested_memory_mib: i64,
}

/// Requests and pods of one deployment.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// `ClusterIP` (default) or `NodePort`.
    #[serde(rename = "type", default = "defaults::cluster_ip")]
    pub service_type: String,
    /// Pods with all these labels are the Service's endpoints.
    pub selector: Labels,
    pub ports: Vec<ServicePort>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServicePort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub port: i64,
    /// The pods' port; `port` if omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<i64>,
    #[serde(default = "defaults::protocol")]
    pub protocol: String,
    /// `NodePort` services: the port on every node (allocated from 30000-32767 when omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_port: Option<i64>,
}

/// Create a service from exactly one of `spec` or `manifest` (a Kubernetes `v1` Service).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceCreate {
    pub name: String,
    #[serde(default)]
    pub labels: Labels,
    pub spec: Option<ServiceSpec>,
    #[schema(value_type = Option<Object>)]
    pub manifest: Option<serde_json::Value>,
}

/// Change a service: `spec` is a JSON merge patch, or `manifest` replaces it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceUpdate {
    pub labels: Option<Labels>,
    #[schema(value_type = Option<Object>)]
    pub spec: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub manifest: Option<serde_json::Value>,
}

/// One pod behind a service, as last observed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct EndpointView {
    pub ip: String,
    pub port: i64,
    pub pod: String,
    pub node: String,
    pub zone: String,
    /// Only ready pods get traffic.
    pub ready: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ServiceView {
    pub id: ServiceId,
    pub cluster_id: ClusterId,
    pub namespace: String,
    pub name: String,
    pub labels: Labels,
    pub spec: ServiceSpec,
    pub cluster_ip: String,
    pub endpoints: Vec<EndpointView>,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
