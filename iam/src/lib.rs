//! Identity and access for Moke: who the caller is ([`Principal`]), what
//! credentials look like ([`token`]), and the one authorization function
//! ([`authorize`]) every app-layer operation calls.
//!
//! This crate knows nothing of HTTP, gRPC or storage; it must not depend on
//! `moke-api` or on any surface or database crate.

pub mod token;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A role a principal holds in an organization.
///
/// Tokens carry one today; users and service accounts (with project roles)
/// will be granted them through memberships.
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

/// How a principal proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrincipalKind {
    /// An organization-scoped API token.
    ApiToken,
    /// The server itself (bootstrap, background jobs).
    System,
}

impl PrincipalKind {
    /// The stable text form used in audit events.
    pub fn as_str(&self) -> &'static str {
        match self {
            PrincipalKind::ApiToken => "api_token",
            PrincipalKind::System => "system",
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The credential's or identity's id (the token id for API tokens).
    pub id: Uuid,
    pub kind: PrincipalKind,
    /// The one organization this principal acts in, with its role there.
    pub org_id: Uuid,
    pub role: OrgRole,
}

/// Something a principal may try to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read an organization, its projects, clusters, node pools, operations.
    Read,
    /// Create, change or delete projects, clusters and node pools.
    ManageResources,
    /// Read quotas and usage.
    ReadQuotas,
    /// List API tokens (never their secrets).
    ReadCredentials,
    /// Create and revoke API tokens.
    ManageCredentials,
    /// Read the audit log.
    ReadAudit,
}

/// Why [`authorize`] said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// The target belongs to another organization: callers must see it as
    /// absent, never as forbidden.
    NotFound,
    /// The caller can see the target but its role does not allow the action.
    Forbidden,
}

/// The permission table: may a role perform an action inside its own
/// organization? Kept as one match so the whole policy reads at a glance.
///
/// | action              | owner | admin | billing | member | viewer |
/// |---------------------|-------|-------|---------|--------|--------|
/// | Read                | yes   | yes   | yes     | yes    | yes    |
/// | ManageResources     | yes   | yes   | -       | yes    | -      |
/// | ReadQuotas          | yes   | yes   | yes     | yes    | yes    |
/// | ReadCredentials     | yes   | yes   | -       | -      | -      |
/// | ManageCredentials   | yes   | yes   | -       | -      | -      |
/// | ReadAudit           | yes   | yes   | yes     | -      | -      |
pub fn role_allows(role: OrgRole, action: Action) -> bool {
    use Action::*;
    use OrgRole::*;
    match action {
        Read | ReadQuotas => true,
        ManageResources => matches!(role, Owner | Admin | Member),
        ReadCredentials | ManageCredentials => matches!(role, Owner | Admin),
        ReadAudit => matches!(role, Owner | Admin | Billing),
    }
}

/// The one authorization decision: may `principal` perform `action` on
/// something owned by `target_org`?
///
/// Another organization's resource is [`Denied::NotFound`] whatever the role,
/// so no caller can learn that it exists.
pub fn authorize(principal: &Principal, action: Action, target_org: Uuid) -> Result<(), Denied> {
    if principal.kind == PrincipalKind::System {
        return Ok(());
    }
    if principal.org_id != target_org {
        return Err(Denied::NotFound);
    }
    if role_allows(principal.role, action) { Ok(()) } else { Err(Denied::Forbidden) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(org: Uuid, role: OrgRole) -> Principal {
        Principal { id: Uuid::now_v7(), kind: PrincipalKind::ApiToken, org_id: org, role }
    }

    #[test]
    fn other_org_is_not_found_for_every_role_and_action() {
        let mine = Uuid::now_v7();
        let theirs = Uuid::now_v7();
        for role in OrgRole::ALL {
            for action in [
                Action::Read,
                Action::ManageResources,
                Action::ReadQuotas,
                Action::ReadCredentials,
                Action::ManageCredentials,
                Action::ReadAudit,
            ] {
                assert_eq!(authorize(&token(mine, role), action, theirs), Err(Denied::NotFound));
            }
        }
    }

    #[test]
    fn viewer_reads_but_cannot_manage() {
        let org = Uuid::now_v7();
        let viewer = token(org, OrgRole::Viewer);
        assert_eq!(authorize(&viewer, Action::Read, org), Ok(()));
        assert_eq!(authorize(&viewer, Action::ManageResources, org), Err(Denied::Forbidden));
        assert_eq!(authorize(&viewer, Action::ManageCredentials, org), Err(Denied::Forbidden));
    }

    #[test]
    fn roles_round_trip_through_text() {
        for role in OrgRole::ALL {
            assert_eq!(OrgRole::parse(role.as_str()), Some(role));
        }
        assert_eq!(OrgRole::parse("root"), None);
    }
}
