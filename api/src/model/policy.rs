//! An organization's change policy (which changes wait for approval, who
//! approves them, how many disruptive changes run at once), its versions,
//! and the approval requests it makes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::OperationId;
use crate::model::DryRunView;

/// A kind of change the approval policy can hold for approval.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema, async_graphql::Enum,
)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalRule {
    /// `cluster_delete` (its node pools go with it, whatever `node_pool_delete` says).
    ClusterDelete,
    /// A cluster change to fewer control-plane replicas (3 → 1).
    ControlPlaneReduction,
    /// A node-pool change, or a node removal without a replacement, that
    /// leaves fewer than `100 − scale_down_over_percent` % of the most nodes
    /// the pool asked for in the last 24 hours (so a scale-down in steps
    /// counts whole), or of the nodes an autoscaled pool runs.
    NodePoolScaleDown,
    /// `node_pool_delete`.
    NodePoolDelete,
    /// `cluster_snapshot_restore`: etcd rolled back to a snapshot.
    SnapshotRestore,
    /// A Kubernetes upgrade asked for outside the cluster's maintenance
    /// window, or on a day one of its exclusions covers; and any change of
    /// the window or the exclusions, which would otherwise move it first.
    UpgradeOutsideWindow,
}

impl ApprovalRule {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalRule::ClusterDelete => "cluster_delete",
            ApprovalRule::ControlPlaneReduction => "control_plane_reduction",
            ApprovalRule::NodePoolScaleDown => "node_pool_scale_down",
            ApprovalRule::NodePoolDelete => "node_pool_delete",
            ApprovalRule::SnapshotRestore => "snapshot_restore",
            ApprovalRule::UpgradeOutsideWindow => "upgrade_outside_window",
        }
    }

    pub fn parse(text: &str) -> Option<ApprovalRule> {
        use ApprovalRule::*;
        [ClusterDelete, ControlPlaneReduction, NodePoolScaleDown, NodePoolDelete, SnapshotRestore, UpgradeOutsideWindow]
            .into_iter()
            .find(|rule| rule.as_str() == text)
    }
}

/// Who may approve a held change: always someone other than the person who
/// asked for it, signed in as a person (never a service account), who may
/// also make the change themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum ApproverRole {
    /// Organization owners.
    #[default]
    Owner,
    /// Organization admins and owners.
    Admin,
}

impl ApproverRole {
    pub fn as_str(self) -> &'static str {
        match self {
            ApproverRole::Owner => "owner",
            ApproverRole::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<ApproverRole> {
        [ApproverRole::Owner, ApproverRole::Admin].into_iter().find(|role| role.as_str() == text)
    }
}

/// Which changes wait for approval, and who approves them.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject, async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "ApprovalPolicyInput")]
pub struct ApprovalPolicy {
    /// The kinds of change that wait in `awaiting_approval` (a kind named
    /// twice counts once). Empty: nothing waits.
    #[serde(default)]
    #[schema(max_items = 12)]
    pub required_for: Vec<ApprovalRule>,
    /// A node-pool change waits (with `node_pool_scale_down`) when it
    /// removes more than this percent of the pool's nodes: 1 to 99.
    #[serde(default = "default_scale_down_percent")]
    #[schema(minimum = 1, maximum = 99, default = 50)]
    pub scale_down_over_percent: i64,
    /// Who may approve.
    #[serde(default)]
    pub approver_role: ApproverRole,
    /// Hours a request waits before it expires unapproved (and never
    /// acts): 1 to 168.
    #[serde(default = "default_expiry_hours")]
    #[schema(minimum = 1, maximum = 168, default = 24)]
    pub expires_after_hours: i64,
}

fn default_scale_down_percent() -> i64 {
    50
}

fn default_expiry_hours() -> i64 {
    24
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        ApprovalPolicy {
            required_for: Vec::new(),
            scale_down_over_percent: default_scale_down_percent(),
            approver_role: ApproverRole::Owner,
            expires_after_hours: default_expiry_hours(),
        }
    }
}

/// How many disruptive Operations may run at once: cluster upgrades,
/// etcd restores, node-pool recycles, node removals, and node-pool and
/// cluster deletions, from when they are queued until they finish. A change
/// past a limit is refused (409 `policy_limit`, naming the rule).
#[derive(
    Debug,
    Clone,
    Default,
    PartialEq,
    Serialize,
    Deserialize,
    ToSchema,
    async_graphql::SimpleObject,
    async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "DisruptionLimitsInput")]
pub struct DisruptionLimits {
    /// At most this many in one cluster: 1 to 50; none: no limit.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 50)]
    pub max_per_cluster: Option<i64>,
    /// At most this many across the organization's clusters in one region:
    /// 1 to 1000; none: no limit.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000)]
    pub max_per_region: Option<i64>,
}

/// What may be deployed anywhere in the organization, over each project's
/// own deploy policy (both must allow a deploy).
#[derive(
    Debug,
    Clone,
    Default,
    PartialEq,
    Serialize,
    Deserialize,
    ToSchema,
    async_graphql::SimpleObject,
    async_graphql::InputObject,
)]
#[serde(deny_unknown_fields)]
#[graphql(input_name = "DeployRulesInput")]
pub struct DeployRules {
    /// Every Deployment's image (by the API, by a manifest, by a CI webhook
    /// or by a person's rollback) must start with one of these registry
    /// paths, each a registry host and path ending in `/` (e.g.
    /// `registry.acme.com/`); an image named without a registry is
    /// `docker.io/…` (`docker.io/library/…` for one name). A Deployment
    /// keeps an image it ran before the rule until its image changes, and
    /// a failed rollout's automatic rollback returns to its last good one.
    /// Empty: any image. Up to 20.
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = ImagePrefixList)]
    pub allowed_image_prefixes: Vec<String>,
    /// CI webhooks deploy only from these branches (exact names), besides
    /// what the project allows: a delivery that names no branch (a tag, a
    /// package, a plain Standard Webhooks delivery) deploys nothing then.
    /// Empty: the project decides. Up to 20.
    #[serde(default)]
    #[graphql(default)]
    #[schema(value_type = BranchList)]
    pub allowed_branches: Vec<String>,
}

/// A registry path prefix: a registry host (a domain name with a dot, or
/// `localhost`, lowercase, with an optional port) and any repository path
/// components after it, ending in `/`. The server checks exactly this, and
/// at most 255 characters.
pub const IMAGE_PREFIX_PATTERN: &str = r"^(localhost|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+)(:[0-9]{1,5})?/([a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*/)*$";
/// The characters of a branch name the policy can list.
pub const BRANCH_PATTERN: &str = r"^[A-Za-z0-9._/@+-]{1,255}$";

/// Whether `prefix` is a registry path prefix [`IMAGE_PREFIX_PATTERN`] allows.
pub fn is_image_prefix(prefix: &str) -> bool {
    let Some(path) = prefix.strip_suffix('/').filter(|_| prefix.len() <= 255) else { return false };
    let mut parts = path.split('/');
    let host = parts.next().unwrap_or_default();
    let (name, port) = match host.split_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let label = |l: &str| {
        !l.is_empty()
            && l.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let name_ok = name == "localhost" || (name.contains('.') && name.split('.').all(label));
    let port_ok = port.is_none_or(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    name_ok && port_ok && parts.all(is_path_component)
}

/// A repository path component as registries name them:
/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
fn is_path_component(component: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = component.as_bytes();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        // A separator between two alphanumeric runs: `.`, `_`, `__` or dashes.
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        match &component[start..i] {
            "." | "_" | "__" => {}
            dashes if dashes.bytes().all(|b| b == b'-') => {}
            _ => return false,
        }
    }
    true
}

/// Whether `branch` is a branch name [`BRANCH_PATTERN`] allows.
pub fn is_branch_name(branch: &str) -> bool {
    (1..=255).contains(&branch.len()) && branch.bytes().all(|b| b.is_ascii_alphanumeric() || b"._/@+-".contains(&b))
}

/// A list of up to 20 distinct strings matching `pattern`, for the document.
fn string_list(pattern: &str, description: &str) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    let item = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .max_length(Some(255))
        .description(Some(description));
    ArrayBuilder::new().items(item).max_items(Some(20)).unique_items(true).into()
}

/// The OpenAPI schema of the policy's image prefixes.
pub struct ImagePrefixList;

impl utoipa::PartialSchema for ImagePrefixList {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_list(IMAGE_PREFIX_PATTERN, "A registry host and path ending in '/', e.g. registry.acme.com/shop/.")
    }
}

impl ToSchema for ImagePrefixList {}

/// The OpenAPI schema of the policy's branches.
pub struct BranchList;

impl utoipa::PartialSchema for BranchList {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_list(BRANCH_PATTERN, "A branch name, e.g. main or release/2.x.")
    }
}

impl ToSchema for BranchList {}

/// A new version of the organization's policy. It is in force from
/// `effective_at` until a later version's; versions are never changed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct OrgPolicyUpdate {
    #[serde(default)]
    #[graphql(default)]
    pub approvals: ApprovalPolicy,
    #[serde(default)]
    #[graphql(default)]
    pub limits: DisruptionLimits,
    #[serde(default)]
    #[graphql(default)]
    pub deploy: DeployRules,
    /// When it takes effect: now when omitted; at most 90 days ahead and 5
    /// minutes behind (taken as now). From then on it is in force over
    /// every version before it, scheduled ones included (one scheduled
    /// earlier still takes effect until then).
    pub effective_at: Option<DateTime<Utc>>,
}

/// One version of the organization's policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct OrgPolicyVersion {
    /// 1, 2, …: what audit events name as `policy_version`.
    pub version: i64,
    pub effective_at: DateTime<Utc>,
    pub approvals: ApprovalPolicy,
    pub limits: DisruptionLimits,
    pub deploy: DeployRules,
    /// Who wrote it (`usr_…`).
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// The organization's policy: the version in force and those scheduled.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "OrgPolicy")]
pub struct OrgPolicyView {
    /// None before any version took effect: nothing waits, nothing is limited.
    pub in_force: Option<OrgPolicyVersion>,
    /// Versions that take effect later (newer than the one in force),
    /// soonest first.
    pub scheduled: Vec<OrgPolicyVersion>,
    /// For `If-Match` on the next `PUT`: changes with every version.
    pub etag: String,
}

/// Where an approval request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, async_graphql::Enum)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for an approver; the Operation is `awaiting_approval`.
    Awaiting,
    /// Approved: the change was made then, as the approver.
    Approved,
    /// Rejected: the Operation failed with `rejected`.
    Rejected,
    /// Nobody decided in time: the Operation failed with `approval_expired`.
    Expired,
    /// Cancelled (`POST …/cancel`): the Operation failed with `cancelled`.
    Withdrawn,
}

impl ApprovalState {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Awaiting => "awaiting",
            ApprovalState::Approved => "approved",
            ApprovalState::Rejected => "rejected",
            ApprovalState::Expired => "expired",
            ApprovalState::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(text: &str) -> Option<ApprovalState> {
        use ApprovalState::*;
        [Awaiting, Approved, Rejected, Expired, Withdrawn].into_iter().find(|state| state.as_str() == text)
    }
}

/// A change held for approval.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Approval", complex)]
pub struct ApprovalView {
    /// The held Operation.
    pub operation_id: OperationId,
    pub state: ApprovalState,
    /// The policy rule that held it.
    pub rule: ApprovalRule,
    /// The policy version in force when it was asked for.
    pub policy_version: i64,
    pub approver_role: ApproverRole,
    /// Who asked (`usr_…`, `sa_…`).
    pub requested_by: String,
    pub requested_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    /// The approver's or rejecter's words, if any.
    pub reason: Option<String>,
    /// What the change would do, as its dry run answered when it was asked
    /// for (an approval makes the change on the resource as it is then).
    #[graphql(skip)]
    pub plan: DryRunView,
}

/// An approver's decision.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ApprovalDecision {
    /// Why, for the audit log and the requester: at most 500 characters,
    /// no control characters.
    #[schema(max_length = 500, pattern = r"^[^\x00-\x1f\x7f-\x9f]*$")]
    pub reason: Option<String>,
}

/// A dry run's note that the change would wait for approval.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlannedApproval {
    pub rule: ApprovalRule,
    pub policy_version: i64,
    pub approver_role: ApproverRole,
    pub expires_after_hours: i64,
}

#[async_graphql::ComplexObject]
impl ApprovalView {
    /// What the change would do, as its dry run answered when it was asked
    /// for: the changes, and each Operation's spec diff and steps.
    async fn plan(&self) -> async_graphql::Json<&DryRunView> {
        async_graphql::Json(&self.plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_prefixes_name_a_registry_host_and_path() {
        for ok in ["registry.acme.com/", "localhost:5000/team/", "r.io/a__b/c-d--e/f.g/", "docker.io/library/"] {
            assert!(is_image_prefix(ok), "{ok}");
        }
        for bad in [
            "",
            "/",
            "registry.acme.com",
            "acme/",
            "Registry.acme.com/",
            "registry.acme.com/../",
            "registry.acme.com/a._b/",
            "-r.io/",
            "r.io:123456/",
            "r..io/",
            "r.io//",
        ] {
            assert!(!is_image_prefix(bad), "{bad}");
        }
        assert!(!is_image_prefix(&format!("r.io/{}/", "a".repeat(250))), "at most 255 characters");
    }

    #[test]
    fn branch_names_are_plain() {
        assert!(is_branch_name("release/2.x") && is_branch_name("main"));
        assert!(!is_branch_name("") && !is_branch_name("a b") && !is_branch_name(&"a".repeat(256)));
    }
}
