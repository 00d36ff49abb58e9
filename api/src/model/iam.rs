//! The identity and access part of the public model: tokens, audit
//! events, sign-up and sessions, members, invitations, service accounts,
//! trust policies, SSO, credential policy and domains.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::*;
use crate::ids::DeviceAuthorizationId;

// ---------------------------------------------------------------- tokens

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct TokenCreate {
    /// What the token is for, e.g. `ci-deploy`: at most 100 characters, not only whitespace.
    #[schema(pattern = r"[^\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]", max_length = 100)]
    pub name: String,
    /// Role in the organization: `owner`, `admin`, `billing`, `member` or `viewer`.
    /// Cannot exceed the creator's own role.
    #[schema(value_type = moke_iam::OrgRole)]
    pub role: String,
    /// Lifetime in seconds, 300 to 31536000 (one year); never expires if omitted
    /// (unless the organization's credential policy sets a longest lifetime).
    #[schema(minimum = 300, maximum = 31536000)]
    pub expires_in_seconds: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "ApiToken", complex)]
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
    #[graphql(skip)]
    pub role: moke_iam::OrgRole,
    /// The only project the token can reach, if it is limited to one.
    pub project: Option<ProjectId>,
    /// The only actions the token may perform, if limited.
    #[graphql(skip)]
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
    /// The secret. Store it now: it cannot be shown again (it is empty in an
    /// answer replayed to a retry with the same `Idempotency-Key`).
    pub token: String,
}

// ---------------------------------------------------------------- audit

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "AuditEvent", complex)]
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
    #[graphql(skip)]
    pub details: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct AuditPrincipal {
    /// `user`, `service_account`, `system` (or `api_token` on events recorded before service accounts).
    pub kind: String,
    pub id: Option<String>,
}

/// The credential behind an audit event.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
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
    /// An e-mail address: one `@`, a domain with a `.` not at either end, no
    /// whitespace or control characters, at most 254 characters. Surrounding
    /// whitespace is ignored and the address is lower-cased.
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(?=.{1,254}[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$)[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+@[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*\.[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub email: String,
    /// 12 characters to 256 bytes, not a common password, not containing
    /// the address's local part.
    #[schema(min_length = 12, max_length = 256)]
    pub password: String,
    /// 1-100 characters without control characters; surrounding whitespace is ignored.
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]([^\x00-\x1f\x7f-\x9f]{0,98}[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000])?[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub display_name: String,
    /// Name of the new organization: a DNS label (1-63 lowercase letters,
    /// digits or '-', starting with a letter, not ending with '-').
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
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
    /// Another name for the new organization, if the one asked for was taken
    /// meanwhile: a DNS label like `organization_name` of the sign-up.
    #[serde(default)]
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub organization_name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SignupResponse {
    pub user: UserView,
    pub organization: OrgView,
    pub session: SessionTokens,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "User")]
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
    /// An e-mail address: one `@`, a domain with a `.` not at either end, no
    /// whitespace or control characters, at most 254 characters. Surrounding
    /// whitespace is ignored and the address is lower-cased.
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(?=.{1,254}[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$)[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+@[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*\.[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub email: String,
    /// Not empty.
    #[schema(min_length = 1)]
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
#[derive(Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct LinkToken {
    pub token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordResetRequest {
    /// An e-mail address: one `@`, a domain with a `.` not at either end, no
    /// whitespace or control characters, at most 254 characters. Surrounding
    /// whitespace is ignored and the address is lower-cased.
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(?=.{1,254}[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$)[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+@[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*\.[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub email: String,
}

#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordResetConfirm {
    pub token: String,
    /// The new password: 12 characters to 256 bytes, not a common password,
    /// not containing the address's local part.
    #[schema(min_length = 12, max_length = 256)]
    pub password: String,
}

/// One of your sign-in sessions.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Session")]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct SessionsEnded {
    pub ended: usize,
}

/// Who the caller is and where it may act.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Me", complex)]
pub struct MeView {
    /// `user` or `service_account`.
    pub kind: String,
    /// `usr_…` or `sa_…`.
    pub id: String,
    pub user: Option<UserView>,
    pub organization: OrgId,
    #[graphql(skip)]
    pub role: moke_iam::OrgRole,
    pub memberships: Vec<MembershipSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Membership", complex)]
pub struct MembershipSummary {
    pub organization: OrgId,
    pub organization_name: String,
    #[graphql(skip)]
    pub role: moke_iam::OrgRole,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Member", complex)]
pub struct MemberView {
    pub user: UserId,
    pub email: String,
    pub display_name: String,
    #[graphql(skip)]
    pub role: moke_iam::OrgRole,
    /// Send as `If-Match` to update.
    pub etag: String,
    pub joined_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct MemberUpdate {
    /// `owner`, `admin`, `billing`, `member` or `viewer`; not above your own.
    #[schema(value_type = moke_iam::OrgRole)]
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct InvitationCreate {
    /// An e-mail address: one `@`, a domain with a `.` not at either end, no
    /// whitespace or control characters, at most 254 characters. Surrounding
    /// whitespace is ignored and the address is lower-cased.
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(?=.{1,254}[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$)[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+@[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*\.[^@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^.@\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub email: String,
    /// Role the person gets on accepting; not above your own.
    #[schema(value_type = moke_iam::OrgRole)]
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Invitation", complex)]
pub struct InvitationView {
    pub id: InvitationId,
    pub email: String,
    #[graphql(skip)]
    pub role: moke_iam::OrgRole,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "ProjectMember", complex)]
pub struct ProjectMemberView {
    /// `usr_…` or `sa_…`.
    pub principal: String,
    #[graphql(skip)]
    pub role: moke_iam::ProjectRole,
    /// Send as `If-Match` to update.
    pub etag: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ProjectMemberSet {
    /// `admin`, `developer` or `viewer`.
    #[schema(value_type = moke_iam::ProjectRole)]
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ServiceAccountCreate {
    /// A DNS label: 1-63 lowercase letters, digits or '-', starting with a
    /// letter, not ending with '-'.
    #[schema(pattern = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: String,
    /// At most 500 characters.
    #[serde(default)]
    #[schema(max_length = 500)]
    #[graphql(default)]
    pub description: String,
    /// Organization role; not above your own.
    #[schema(value_type = moke_iam::OrgRole)]
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "ServiceAccount", complex)]
pub struct ServiceAccountView {
    pub id: ServiceAccountId,
    pub name: String,
    pub description: String,
    #[graphql(skip)]
    pub role: moke_iam::OrgRole,
    pub created_at: DateTime<Utc>,
}

/// A token for a service account or for yourself, optionally narrowed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct ScopedTokenCreate {
    /// What the token is for: at most 100 characters, not only whitespace.
    #[schema(pattern = r"[^\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]", max_length = 100)]
    pub name: String,
    /// Limit the token to one project (id or name) of the organization.
    pub project: Option<String>,
    /// Limit the token to these actions (at least one; see `iam/PERMISSIONS.md`).
    #[schema(value_type = Option<Vec<moke_iam::Action>>, min_items = 1)]
    pub scopes: Option<Vec<String>>,
    /// Lifetime in seconds, 300 to 31536000; never expires if omitted
    /// (unless the organization's credential policy sets a longest lifetime).
    #[schema(minimum = 300, maximum = 31536000)]
    pub expires_in_seconds: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct TrustPolicyCreate {
    /// The CI system's OpenID issuer, e.g. `https://token.actions.githubusercontent.com`:
    /// an `https://` URL of at most 500 characters.
    #[schema(pattern = "^https://", max_length = 500)]
    pub issuer: String,
    /// The `aud` the CI job requests for its ID token: 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub audience: String,
    /// 1 to 10 claims that must match exactly, e.g. `repository`, `ref`,
    /// `environment`. Names are 1-100 characters and not `iss`, `aud`, `exp`,
    /// `iat`, `nbf` or `jti`; values are 1-500 characters.
    #[schema(schema_with = trust_claims_schema)]
    pub claims: BTreeMap<String, String>,
}

/// The schema of [`TrustPolicyCreate::claims`]: 1 to 10 names, each
/// mapped to a value of 1 to 500 characters (the name rules need
/// `propertyNames`, which OpenAPI 3.0 lacks, so they stay in the description).
fn trust_claims_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "1 to 10 claims that must match exactly, e.g. `repository`, `ref`, `environment`. Names are 1-100 \
             characters and not `iss`, `aud`, `exp`, `iat`, `nbf` or `jti`; values are 1-500 characters.",
        ))
        .min_properties(Some(1))
        .max_properties(Some(10))
        .additional_properties(Some(
            ObjectBuilder::new().schema_type(Type::String).min_length(Some(1)).max_length(Some(500)),
        ))
        .build()
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "TrustPolicy")]
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

#[derive(Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct TokenExchangeRequest {
    /// The CI system's OIDC ID token.
    pub subject_token: String,
    /// The service account to act as (`sa_…`).
    #[schema(pattern = "^sa_[0-9a-fA-F]{32}$")]
    pub service_account: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct ExchangedToken {
    pub access_token: String,
    pub token_type: String,
    pub expires_in: i64,
    pub service_account: ServiceAccountId,
    pub organization: OrgId,
}

#[derive(Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct SsoConfigSet {
    /// The identity provider's issuer URL, `https://` (discovery is read from it).
    #[schema(pattern = "^https://")]
    pub issuer: String,
    /// 1 to 255 characters.
    #[schema(min_length = 1, max_length = 255)]
    pub client_id: String,
    /// 1 to 1024 characters. Stored encrypted by Vault; never shown again.
    #[schema(min_length = 1, max_length = 1024)]
    pub client_secret: String,
    /// People with addresses in these domains join the organization on
    /// first sign-in. At most 20; each must be a domain the organization
    /// verified (`/v1/orgs/{org}/domains`); may be empty (only linked
    /// accounts sign in).
    #[schema(value_type = Vec<SsoAllowedDomain>, max_items = 20)]
    pub allowed_domains: Vec<String>,
    /// Role given to people who join through SSO: `admin`, `billing`, `member`
    /// or `viewer` (not `owner`); not above your own.
    #[schema(pattern = "^(admin|billing|member|viewer)$")]
    pub default_role: String,
}

/// A domain name in an SSO configuration's `allowed_domains`: labels of 1-63
/// ASCII letters, digits or '-', at least two, at most 253 characters in
/// all. Surrounding whitespace is ignored and the name is lower-cased.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[schema(
    pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(?=[-.a-zA-Z0-9]{1,253}[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$)[-a-zA-Z0-9]{1,63}(\.[-a-zA-Z0-9]{1,63})+[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
)]
pub struct SsoAllowedDomain(pub String);

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

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "SsoConfig", complex)]
pub struct SsoConfigView {
    pub issuer: String,
    pub client_id: String,
    pub allowed_domains: Vec<String>,
    #[graphql(skip)]
    pub default_role: moke_iam::OrgRole,
    /// Where people start signing in.
    pub login_url: String,
    pub redirect_uri: String,
    /// Send as `If-Match` to update.
    pub etag: String,
    pub updated_at: DateTime<Utc>,
}

/// What an organization demands of its members' credentials.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
#[graphql(name = "CredentialPolicyInput")]
pub struct CredentialPolicy {
    /// The longest lifetime a new API token may have, in seconds (300 to
    /// 31 536 000); a token asked for without an expiry gets this one. Null: no limit.
    #[serde(default)]
    #[schema(minimum = 300, maximum = 31536000)]
    pub max_token_lifetime_seconds: Option<i64>,
    /// Members other than owners act here only through the organization's
    /// single sign-on (password sessions, and personal tokens made from
    /// them, are refused). Needs SSO configured.
    #[serde(default)]
    #[graphql(default)]
    pub require_sso: bool,
    /// Members act here only with a verified e-mail address.
    #[serde(default)]
    #[graphql(default)]
    pub require_verified_email: bool,
}

/// An organization's credential policy.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "CredentialPolicy")]
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::InputObject)]
#[serde(deny_unknown_fields)]
pub struct DomainCreate {
    /// A domain name such as `example.com`: at least two labels of 1-63
    /// letters, digits or '-' (not at either end of a label), at most 253
    /// characters in all, no wildcard. Surrounding whitespace and trailing
    /// dots are ignored and the name is lower-cased.
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(?=[-.a-zA-Z0-9]{1,253}\.*[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$)[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)+\.*[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub domain: String,
}

/// The DNS record that proves a domain.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
pub struct DomainVerificationRecord {
    /// e.g. `_moke-challenge.example.com`.
    pub name: String,
    /// Always `TXT`.
    pub record_type: String,
    /// The record's text, `moke-domain-verification=…`.
    pub value: String,
}

/// A domain an organization claims, verified or not.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "Domain")]
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

// ---------------------------------------------------------------- device sign-in

/// `POST /v1/device/auth`: a device (the `moke` CLI) asks to be signed in.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceAuthorizationCreate {
    /// What is asking, shown to the person who confirms and given to the
    /// token as its name, e.g. `moke CLI (laptop)`: 1-100 characters without
    /// control characters; surrounding whitespace is ignored. `moke CLI` if omitted.
    #[schema(
        pattern = r"^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]([^\x00-\x1f\x7f-\x9f]{0,98}[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000])?[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    #[serde(default)]
    pub client_name: Option<String>,
}

/// A device sign-in begun (RFC 8628 §3.2): show the person `user_code` and
/// `verification_uri`, then poll `POST /v1/device/token` with `device_code`
/// every `interval` seconds.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DeviceAuthorizationCreated {
    /// The device's secret: keep it, send it only to `POST /v1/device/token`.
    pub device_code: String,
    /// What the person confirms, `XXXX-XXXX` (letters of `BCDFGHJKLMNPQRSTVWXZ`).
    pub user_code: String,
    /// Where the person confirms the code.
    pub verification_uri: String,
    /// `verification_uri` with the code filled in.
    pub verification_uri_complete: String,
    /// Seconds until both codes expire.
    pub expires_in: i64,
    /// Seconds to wait between polls.
    pub interval: i64,
}

/// `POST /v1/device/confirm`: the person approves a device's sign-in.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfirm {
    /// The code the device shows: 8 letters of `BCDFGHJKLMNPQRSTVWXZ` in
    /// either case; `-` and spaces are ignored (`XXXX-XXXX`).
    #[schema(pattern = "^[ -]*([BCDFGHJKLMNPQRSTVWXZbcdfghjklmnpqrstvwxz][ -]*){8}$", max_length = 32)]
    pub user_code: String,
    /// The organization the device will act in; the one you act in if omitted.
    #[serde(default)]
    pub organization: Option<OrgId>,
}

/// `POST /v1/device/deny`: the person refuses a device's sign-in.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceDeny {
    /// The code the device shows, as for `POST /v1/device/confirm`.
    #[schema(pattern = "^[ -]*([BCDFGHJKLMNPQRSTVWXZbcdfghjklmnpqrstvwxz][ -]*){8}$", max_length = 32)]
    pub user_code: String,
}

/// A device sign-in as the person who decided it sees it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DeviceAuthorizationView {
    pub id: DeviceAuthorizationId,
    /// `XXXX-XXXX`.
    pub user_code: String,
    /// What the device said it is.
    pub client_name: Option<String>,
    /// `approved` (the device's next poll receives a token) or `denied`.
    pub status: String,
    /// The organization the device will act in (approved sign-ins).
    pub organization: Option<OrgId>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// The only grant `POST /v1/device/token` takes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
pub enum DeviceGrantType {
    #[serde(rename = "urn:ietf:params:oauth:grant-type:device_code")]
    DeviceCode,
}

/// `POST /v1/device/token`: a device polls for its credential (RFC 8628 §3.4).
#[derive(Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceTokenRequest {
    /// The `device_code` of `POST /v1/device/auth`.
    #[schema(pattern = "^[A-Za-z0-9_-]{43}$")]
    pub device_code: String,
    /// `urn:ietf:params:oauth:grant-type:device_code`.
    #[schema(value_type = DeviceGrantType)]
    pub grant_type: String,
}

redacted_debug!(DeviceTokenRequest);

/// The credential of an approved device sign-in: a personal API token
/// acting as the person who approved it, in the organization they chose.
/// Given once.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DeviceToken {
    /// `moke_pat_…`; send as `Authorization: Bearer …`. Shown only in this answer.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// The token's id, to list or revoke it (`DELETE /v1/me/tokens/{token}`).
    pub token_id: TokenId,
    pub organization: OrgId,
    pub user: UserId,
    /// When the token stops working (the organization's credential policy), if it does.
    pub expires_at: Option<DateTime<Utc>>,
}
