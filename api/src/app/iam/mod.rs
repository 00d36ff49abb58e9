//! Identity and access: organizations, people, sessions, device sign-in, members, invitations, service accounts, tokens, single sign-on and its domains, CI token exchange, credential policy, and the per-caller rate limits.

pub mod credential_policy;
pub mod device;
pub mod domains;
pub mod invitations;
pub mod members;
pub mod orgs;
pub mod principals;
pub mod rate_limit;
pub mod service_accounts;
pub mod sessions;
pub mod sso;
pub(in crate::app::iam) mod store;
pub mod token_exchange;
pub mod tokens;
pub mod users;
