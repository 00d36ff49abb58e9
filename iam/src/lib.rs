//! Identity and access for Moke: who the caller is ([`Principal`]), what
//! credentials look like ([`token`]), and the one authorization function
//! ([`authorize`]) every app-layer operation calls.
//!
//! This crate knows nothing of HTTP, gRPC or storage; it must not depend on
//! `moke-api` or on any surface or database crate.

pub mod id_token;
pub mod jwt;
pub mod password;
pub mod token;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A role a principal holds in an organization.
///
/// Users hold one through their membership; service accounts hold one
/// of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrgRole {
    /// Everything, including managing credentials and quotas.
    Owner,
    /// Everything but owner-only settings.
    Admin,
    /// Billing and quota views, read access to resources.
    Billing,
    /// Creates and changes projects, clusters and node pools.
    Member,
    /// Reads everything, changes nothing.
    Viewer,
}

impl OrgRole {
    /// Every role, most powerful first.
    pub const ALL: [OrgRole; 5] = [OrgRole::Owner, OrgRole::Admin, OrgRole::Billing, OrgRole::Member, OrgRole::Viewer];

    /// The stable text form stored in the database and shown in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            OrgRole::Owner => "owner",
            OrgRole::Admin => "admin",
            OrgRole::Billing => "billing",
            OrgRole::Member => "member",
            OrgRole::Viewer => "viewer",
        }
    }

    /// Parses the text form written by [`OrgRole::as_str`].
    pub fn parse(text: &str) -> Option<OrgRole> {
        OrgRole::ALL.into_iter().find(|role| role.as_str() == text)
    }
}

/// A role a principal holds in one project, on top of its organization role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProjectRole {
    /// Manages the project's resources and who may work in it.
    Admin,
    /// Creates and changes the project's clusters and node pools.
    Developer,
    /// Reads the project's resources.
    Viewer,
}

impl ProjectRole {
    pub const ALL: [ProjectRole; 3] = [ProjectRole::Admin, ProjectRole::Developer, ProjectRole::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            ProjectRole::Admin => "admin",
            ProjectRole::Developer => "developer",
            ProjectRole::Viewer => "viewer",
        }
    }

    pub fn parse(text: &str) -> Option<ProjectRole> {
        ProjectRole::ALL.into_iter().find(|role| role.as_str() == text)
    }
}

/// What kind of identity a principal is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    /// A person, signed in (JWT) or using a personal token.
    User,
    /// A service account, by its token or a token exchanged from CI.
    ServiceAccount,
    /// The server itself (bootstrap, background jobs).
    System,
    /// Nobody yet: sign-up, sign-in and the other credential-less flows.
    /// May do nothing through [`authorize`].
    Anonymous,
}

impl PrincipalKind {
    /// The stable text form used in audit events.
    pub fn as_str(&self) -> &'static str {
        match self {
            PrincipalKind::User => "user",
            PrincipalKind::ServiceAccount => "service_account",
            PrincipalKind::System => "system",
            PrincipalKind::Anonymous => "anonymous",
        }
    }
}

/// How a principal authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// An API token (personal or service account), by its id.
    ApiToken(Uuid),
    /// A signed access token from a login session (refresh-token family id).
    /// `sso_org` is set when the session began at that organization's
    /// identity provider: such a session acts in that organization only.
    Session { id: Uuid, sso_org: Option<Uuid> },
    /// A short-lived token from CI workload identity, by the `jti` of the
    /// access token Moke signed for it.
    Exchanged { jti: Uuid },
    /// No credential: the server itself, or nobody yet.
    None,
}

impl Credential {
    /// The credential's own id (token, session or exchanged token), if it has one.
    pub fn id(&self) -> Option<Uuid> {
        match self {
            Credential::ApiToken(id) | Credential::Session { id, .. } | Credential::Exchanged { jti: id } => Some(*id),
            Credential::None => None,
        }
    }

    /// How the caller signed in, as audit events record it.
    pub fn method(&self) -> &'static str {
        match self {
            Credential::ApiToken(_) => "api_token",
            Credential::Session { sso_org: None, .. } => "password",
            Credential::Session { sso_org: Some(_), .. } => "sso",
            Credential::Exchanged { .. } => "token_exchange",
            Credential::None => "none",
        }
    }
}

/// Limits a credential puts on its holder's roles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Only this project (others are absent), and nothing organization-wide but reading.
    pub project: Option<Uuid>,
    /// Only these actions, if set.
    pub actions: Option<Vec<Action>>,
}

/// An authenticated caller acting in one organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The actor: user id, service account id, or nil for the system.
    pub id: Uuid,
    pub kind: PrincipalKind,
    pub credential: Credential,
    /// The one organization this principal acts in, with its role there.
    pub org_id: Uuid,
    pub role: OrgRole,
    /// Extra roles in single projects.
    pub project_roles: Vec<(Uuid, ProjectRole)>,
    pub scope: Scope,
    /// When the credential stops working (Unix seconds): an API token's
    /// expiry, an exchanged token's `exp`. `None` for credentials without a
    /// fixed end (a person's session, which renews, and tokens that never expire).
    pub expires_at: Option<i64>,
}

impl Principal {
    /// The role the principal holds in `project`, if any.
    pub fn project_role(&self, project: Uuid) -> Option<ProjectRole> {
        self.project_roles.iter().find(|(id, _)| *id == project).map(|(_, role)| *role)
    }
}

/// Something a principal may try to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Read an organization, its projects, clusters, node pools, operations.
    Read,
    /// Create, change or delete projects, clusters and node pools.
    ManageResources,
    /// Read quotas and usage.
    ReadQuotas,
    /// List service accounts and API tokens (never their secrets).
    ReadCredentials,
    /// Create and revoke service accounts, their tokens and trust policies.
    ManageCredentials,
    /// Read the audit log.
    ReadAudit,
    /// List members and invitations.
    ReadMembers,
    /// Invite, remove and change the roles of members.
    ManageMembers,
    /// Grant and remove project roles.
    ManageProjectMembers,
    /// Configure single sign-on.
    ManageSso,
    /// Obtain cluster-admin credentials for hosted clusters and revoke credentials.
    AdministerClusters,
    /// Read invoices, usage and what the organization is charged.
    ReadBilling,
    /// Set budgets and their alerts.
    ManageBilling,
    /// Write the organization's policy: which changes need approval, who
    /// approves them, and how many disruptive changes run at once.
    ManagePolicies,
    /// Rename or relabel the organization, and delete it once it is empty.
    ManageOrg,
}

impl Action {
    pub const ALL: [Action; 15] = [
        Action::Read,
        Action::ManageResources,
        Action::ReadQuotas,
        Action::ReadCredentials,
        Action::ManageCredentials,
        Action::ReadAudit,
        Action::ReadMembers,
        Action::ManageMembers,
        Action::ManageProjectMembers,
        Action::ManageSso,
        Action::AdministerClusters,
        Action::ReadBilling,
        Action::ManageBilling,
        Action::ManagePolicies,
        Action::ManageOrg,
    ];

    /// The stable text form used in token scopes.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::ManageResources => "manage_resources",
            Action::ReadQuotas => "read_quotas",
            Action::ReadCredentials => "read_credentials",
            Action::ManageCredentials => "manage_credentials",
            Action::ReadAudit => "read_audit",
            Action::ReadMembers => "read_members",
            Action::ManageMembers => "manage_members",
            Action::ManageProjectMembers => "manage_project_members",
            Action::ManageSso => "manage_sso",
            Action::AdministerClusters => "administer_clusters",
            Action::ReadBilling => "read_billing",
            Action::ManageBilling => "manage_billing",
            Action::ManagePolicies => "manage_policies",
            Action::ManageOrg => "manage_org",
        }
    }

    pub fn parse(text: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|action| action.as_str() == text)
    }
}

/// What an action is aimed at: an organization, or one project in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub org: Uuid,
    pub project: Option<Uuid>,
}

impl Target {
    pub fn org(org: Uuid) -> Target {
        Target { org, project: None }
    }
    pub fn project(org: Uuid, project: Uuid) -> Target {
        Target { org, project: Some(project) }
    }
}

/// Why [`authorize`] said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// The target belongs to another organization (or project, for a
    /// project-scoped credential): callers must see it as absent.
    NotFound,
    /// The caller can see the target but may not do this.
    Forbidden,
}

/// The organization permission table (also rendered in `iam/PERMISSIONS.md`,
/// which a test keeps equal to this function).
pub fn role_allows(role: OrgRole, action: Action) -> bool {
    use Action::*;
    use OrgRole::*;
    match action {
        Read | ReadQuotas | ReadMembers => true,
        ManageResources => matches!(role, Owner | Admin | Member),
        ReadCredentials | ManageCredentials | ManageMembers | ManageProjectMembers | AdministerClusters => {
            matches!(role, Owner | Admin)
        }
        ReadAudit | ReadBilling => matches!(role, Owner | Admin | Billing),
        ManageBilling => matches!(role, Owner | Admin | Billing),
        ManageSso | ManagePolicies | ManageOrg => role == Owner,
    }
}

/// The project permission table: what a project role adds inside its project.
pub fn project_role_allows(role: ProjectRole, action: Action) -> bool {
    use Action::*;
    use ProjectRole::*;
    match action {
        Read => true,
        ManageResources => matches!(role, Admin | Developer),
        ManageProjectMembers | AdministerClusters => role == Admin,
        _ => false,
    }
}

/// The one authorization decision: may `principal` perform `action` on `target`?
///
/// Another organization's resource is [`Denied::NotFound`] whatever the
/// role, so no caller can learn that it exists; so is another project's for
/// a project-scoped credential.
pub fn authorize(principal: &Principal, action: Action, target: Target) -> Result<(), Denied> {
    match principal.kind {
        PrincipalKind::System => return Ok(()),
        PrincipalKind::Anonymous => return Err(Denied::NotFound),
        PrincipalKind::User | PrincipalKind::ServiceAccount => {}
    }
    if principal.org_id != target.org {
        return Err(Denied::NotFound);
    }
    if let Some(scoped) = principal.scope.project {
        match target.project {
            Some(project) if project != scoped => return Err(Denied::NotFound),
            None if action != Action::Read => return Err(Denied::Forbidden),
            _ => {}
        }
    }
    if let Some(actions) = &principal.scope.actions
        && !actions.contains(&action)
    {
        return Err(Denied::Forbidden);
    }
    let by_project =
        target.project.and_then(|p| principal.project_role(p)).is_some_and(|r| project_role_allows(r, action));
    if role_allows(principal.role, action) || by_project { Ok(()) } else { Err(Denied::Forbidden) }
}

/// True when moving from role `from` to `to` takes any permission away
/// (the roles are not a ladder: billing reads less of clusters than member).
pub fn role_loses(from: OrgRole, to: OrgRole) -> bool {
    Action::ALL.into_iter().any(|action| role_allows(from, action) && !role_allows(to, action))
}

/// The same for project roles; `None` is no project role.
pub fn project_role_loses(from: Option<ProjectRole>, to: Option<ProjectRole>) -> bool {
    let allows = |role: Option<ProjectRole>, action| role.is_some_and(|r| project_role_allows(r, action));
    Action::ALL.into_iter().any(|action| allows(from, action) && !allows(to, action))
}

/// May `principal` give `role` to someone (a member, an invitation, a
/// service account, a token)? Never more than its own role; only owners
/// make owners.
pub fn may_grant(principal: &Principal, role: OrgRole) -> bool {
    principal.kind == PrincipalKind::System || role >= principal.role
}

/// May `principal` change or remove someone who holds `role` now? Only an
/// owner touches an owner.
pub fn may_change_holder_of(principal: &Principal, role: OrgRole) -> bool {
    principal.kind == PrincipalKind::System || role != OrgRole::Owner || principal.role == OrgRole::Owner
}

/// What a credential-creating operation would give more than its creator has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excess {
    /// A role above the creator's own.
    Role(OrgRole),
    /// Reach beyond the project the creator's credential is limited to.
    Project,
    /// An action the creator's credential may not perform on that target.
    Action(Action),
    /// A lifetime beyond the creator's credential's own.
    Expiry,
}

impl Excess {
    /// A sentence for the API's error detail.
    pub fn describe(&self) -> String {
        match self {
            Excess::Role(role) => format!("would grant the {} role, above your own", role.as_str()),
            Excess::Project => "would reach beyond the project your credential is limited to".to_string(),
            Excess::Action(action) => {
                format!("would allow {}, which your credential may not do", action.as_str())
            }
            Excess::Expiry => "would outlive the credential you are using".to_string(),
        }
    }
}

/// A project nobody holds a role in: stands for "any other project" when
/// [`may_confer`] compares what organization roles reach.
const ANY_OTHER_PROJECT: Uuid = Uuid::max();

/// Attenuation, the one rule of every operation that creates or widens a
/// credential (tokens, trust policies, invitations, role and project-role
/// changes, SSO defaults): `granted` (what the new or changed principal or
/// credential will be able to do) must not exceed what `creator` may do now.
/// It holds no role above the creator's; it reaches no project the creator's
/// credential cannot; on every target it may perform only actions the creator
/// may perform there; and it ends no later than the creator's credential.
/// Pass `granted.expires_at = creator.expires_at` for grants to people and
/// service accounts (they have no expiry of their own).
pub fn may_confer(creator: &Principal, granted: &Principal) -> Result<(), Excess> {
    if creator.kind == PrincipalKind::System {
        return Ok(());
    }
    if !may_grant(creator, granted.role) {
        return Err(Excess::Role(granted.role));
    }
    if let Some(project) = creator.scope.project
        && granted.scope.project != Some(project)
    {
        return Err(Excess::Project);
    }
    match (creator.expires_at, granted.expires_at) {
        (Some(_), None) => return Err(Excess::Expiry),
        (Some(limit), Some(end)) if end > limit => return Err(Excess::Expiry),
        _ => {}
    }
    let org = creator.org_id;
    let projects = granted.project_roles.iter().map(|(project, _)| *project).chain(granted.scope.project);
    let targets = std::iter::once(Target::org(org))
        .chain(std::iter::once(Target::project(org, ANY_OTHER_PROJECT)))
        .chain(projects.map(|project| Target::project(org, project)));
    for target in targets {
        for action in Action::ALL {
            if authorize(granted, action, target).is_ok() && authorize(creator, action, target).is_err() {
                return Err(if target.project.is_some() && authorize(creator, Action::Read, target).is_err() {
                    Excess::Project
                } else {
                    Excess::Action(action)
                });
            }
        }
    }
    Ok(())
}

/// The permission tables as Markdown, for `iam/PERMISSIONS.md`.
pub fn permission_table_markdown() -> String {
    let mark = |yes: bool| if yes { "yes" } else { "-" };
    let mut out = String::from(
        "# Permissions\n\nGenerated from `moke_iam::role_allows` and `project_role_allows`; `cargo xtask schemas` rewrites it and a test keeps it current.\n\n",
    );
    out.push_str("## Organization roles\n\n| action |");
    for role in OrgRole::ALL {
        out.push_str(&format!(" {} |", role.as_str()));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(OrgRole::ALL.len()));
    out.push('\n');
    for action in Action::ALL {
        out.push_str(&format!("| `{}` |", action.as_str()));
        for role in OrgRole::ALL {
            out.push_str(&format!(" {} |", mark(role_allows(role, action))));
        }
        out.push('\n');
    }
    out.push_str("\n## Project roles (inside their project, added to the organization role)\n\n| action |");
    for role in ProjectRole::ALL {
        out.push_str(&format!(" {} |", role.as_str()));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(ProjectRole::ALL.len()));
    out.push('\n');
    for action in Action::ALL {
        out.push_str(&format!("| `{}` |", action.as_str()));
        for role in ProjectRole::ALL {
            out.push_str(&format!(" {} |", mark(project_role_allows(role, action))));
        }
        out.push('\n');
    }
    out.push_str("\nA credential may narrow these further: a token scoped to a project sees no other project and may only read organization-wide; a token with a list of actions may do only those. Another organization's resources are always \"not found\". Only an owner may grant or take away the owner role, and the last owner can neither leave nor be demoted.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(org: Uuid, role: OrgRole) -> Principal {
        Principal {
            id: Uuid::now_v7(),
            kind: PrincipalKind::ServiceAccount,
            credential: Credential::ApiToken(Uuid::now_v7()),
            org_id: org,
            role,
            project_roles: vec![],
            scope: Scope::default(),
            expires_at: None,
        }
    }

    #[test]
    fn other_org_is_not_found_for_every_role_and_action() {
        let mine = Uuid::now_v7();
        let theirs = Uuid::now_v7();
        for role in OrgRole::ALL {
            for action in Action::ALL {
                assert_eq!(authorize(&token(mine, role), action, Target::org(theirs)), Err(Denied::NotFound));
            }
        }
    }

    #[test]
    fn anonymous_may_do_nothing() {
        let org = Uuid::now_v7();
        let mut nobody = token(org, OrgRole::Owner);
        nobody.kind = PrincipalKind::Anonymous;
        for action in Action::ALL {
            assert_eq!(authorize(&nobody, action, Target::org(org)), Err(Denied::NotFound));
        }
    }

    #[test]
    fn viewer_reads_but_cannot_manage() {
        let org = Uuid::now_v7();
        let viewer = token(org, OrgRole::Viewer);
        assert_eq!(authorize(&viewer, Action::Read, Target::org(org)), Ok(()));
        assert_eq!(authorize(&viewer, Action::ManageResources, Target::org(org)), Err(Denied::Forbidden));
        assert_eq!(authorize(&viewer, Action::ManageCredentials, Target::org(org)), Err(Denied::Forbidden));
    }

    #[test]
    fn project_roles_add_rights_only_in_their_project() {
        let org = Uuid::now_v7();
        let (mine, other) = (Uuid::now_v7(), Uuid::now_v7());
        let mut dev = token(org, OrgRole::Viewer);
        dev.project_roles = vec![(mine, ProjectRole::Developer)];
        assert_eq!(authorize(&dev, Action::ManageResources, Target::project(org, mine)), Ok(()));
        assert_eq!(authorize(&dev, Action::ManageResources, Target::project(org, other)), Err(Denied::Forbidden));
        assert_eq!(authorize(&dev, Action::ManageProjectMembers, Target::project(org, mine)), Err(Denied::Forbidden));
    }

    #[test]
    fn scopes_narrow_roles() {
        let org = Uuid::now_v7();
        let (mine, other) = (Uuid::now_v7(), Uuid::now_v7());
        let mut scoped = token(org, OrgRole::Owner);
        scoped.scope = Scope { project: Some(mine), actions: Some(vec![Action::Read]) };
        assert_eq!(authorize(&scoped, Action::Read, Target::project(org, mine)), Ok(()));
        assert_eq!(authorize(&scoped, Action::Read, Target::project(org, other)), Err(Denied::NotFound));
        assert_eq!(authorize(&scoped, Action::ManageResources, Target::project(org, mine)), Err(Denied::Forbidden));
        assert_eq!(authorize(&scoped, Action::ManageCredentials, Target::org(org)), Err(Denied::Forbidden));
    }

    #[test]
    fn a_narrowed_credential_cannot_confer_more_than_it_has() {
        let org = Uuid::now_v7();
        let (mine, other) = (Uuid::now_v7(), Uuid::now_v7());
        let mut narrowed = token(org, OrgRole::Owner);
        narrowed.scope = Scope { project: Some(mine), actions: Some(vec![Action::Read]) };
        narrowed.expires_at = Some(1_000);
        let same_person = |scope: Scope, expires_at: Option<i64>| Principal { scope, expires_at, ..narrowed.clone() };
        // Unscoped, scoped to another project, wider actions, longer life: all refused.
        assert_eq!(may_confer(&narrowed, &same_person(Scope::default(), Some(900))), Err(Excess::Project));
        let elsewhere = Scope { project: Some(other), actions: Some(vec![Action::Read]) };
        assert_eq!(may_confer(&narrowed, &same_person(elsewhere, Some(900))), Err(Excess::Project));
        let wider = Scope { project: Some(mine), actions: Some(vec![Action::Read, Action::ManageResources]) };
        assert_eq!(may_confer(&narrowed, &same_person(wider, Some(900))), Err(Excess::Action(Action::ManageResources)));
        let everything_in_mine = Scope { project: Some(mine), actions: None };
        assert!(matches!(may_confer(&narrowed, &same_person(everything_in_mine, Some(900))), Err(Excess::Action(_))));
        assert_eq!(may_confer(&narrowed, &same_person(narrowed.scope.clone(), None)), Err(Excess::Expiry));
        assert_eq!(may_confer(&narrowed, &same_person(narrowed.scope.clone(), Some(1_001))), Err(Excess::Expiry));
        // As narrow or narrower: allowed.
        assert_eq!(may_confer(&narrowed, &same_person(narrowed.scope.clone(), Some(1_000))), Ok(()));
    }

    #[test]
    fn roles_and_project_roles_are_conferred_only_by_who_holds_them() {
        let org = Uuid::now_v7();
        let project = Uuid::now_v7();
        let admin = token(org, OrgRole::Admin);
        let owner_account = token(org, OrgRole::Owner);
        assert_eq!(may_confer(&admin, &owner_account), Err(Excess::Role(OrgRole::Owner)));
        assert_eq!(may_confer(&admin, &token(org, OrgRole::Admin)), Ok(()));
        // Billing may not mint a member: the member's manage_resources is beyond it.
        let billing = token(org, OrgRole::Billing);
        assert_eq!(may_confer(&billing, &token(org, OrgRole::Member)), Err(Excess::Action(Action::ManageResources)));
        // Only the actions a credential is limited to may be conferred.
        let mut members_only = token(org, OrgRole::Admin);
        members_only.scope.actions = Some(vec![Action::ManageMembers]);
        assert!(may_confer(&members_only, &token(org, OrgRole::Viewer)).is_err());
        // A project admin grants project roles in their project only.
        let mut project_admin = token(org, OrgRole::Viewer);
        project_admin.project_roles = vec![(project, ProjectRole::Admin)];
        let mut developer_here = token(org, OrgRole::Viewer);
        developer_here.project_roles = vec![(project, ProjectRole::Developer)];
        assert_eq!(may_confer(&project_admin, &developer_here), Ok(()));
        let mut developer_elsewhere = token(org, OrgRole::Viewer);
        developer_elsewhere.project_roles = vec![(Uuid::now_v7(), ProjectRole::Developer)];
        assert_eq!(may_confer(&project_admin, &developer_elsewhere), Err(Excess::Action(Action::ManageResources)));
    }

    #[test]
    fn losing_a_permission_is_not_a_matter_of_order() {
        assert!(role_loses(OrgRole::Member, OrgRole::Billing), "billing may not manage resources");
        assert!(role_loses(OrgRole::Admin, OrgRole::Member));
        assert!(!role_loses(OrgRole::Viewer, OrgRole::Member));
        assert!(!role_loses(OrgRole::Member, OrgRole::Member));
        assert!(project_role_loses(Some(ProjectRole::Admin), Some(ProjectRole::Developer)));
        assert!(project_role_loses(Some(ProjectRole::Viewer), None));
        assert!(!project_role_loses(None, Some(ProjectRole::Viewer)));
    }

    #[test]
    fn the_checked_in_permission_table_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/PERMISSIONS.md");
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(checked_in == permission_table_markdown(), "iam/PERMISSIONS.md is stale: run `cargo xtask schemas`");
    }

    #[test]
    fn roles_round_trip_through_text() {
        for role in OrgRole::ALL {
            assert_eq!(OrgRole::parse(role.as_str()), Some(role));
        }
        assert_eq!(OrgRole::parse("root"), None);
        for action in Action::ALL {
            assert_eq!(Action::parse(action.as_str()), Some(action));
        }
    }
}
