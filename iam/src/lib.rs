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
    Session(Uuid),
    /// A short-lived token from CI workload identity (by its `jti` record).
    Exchanged,
    /// No credential: the server itself.
    None,
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
}

impl Action {
    pub const ALL: [Action; 11] = [
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
        ReadAudit => matches!(role, Owner | Admin | Billing),
        ManageSso => role == Owner,
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
