//! How identity and access are kept in Postgres: per table its row type, its
//! column list written once, and its queries, with the lock a caller asks
//! for stated as [`Lock`](crate::app::authz::Lock) rather than a copy of
//! the query. `eviction` holds the reads and writes only an eviction of an
//! account's maker makes, across the tables of other domains.

pub(in crate::app) mod credential_policies;
pub(in crate::app) mod device_authorizations;
pub(in crate::app) mod domains;
pub(in crate::app) mod eviction;
pub(in crate::app) mod invitations;
pub(in crate::app) mod memberships;
pub(in crate::app) mod orgs;
pub(in crate::app) mod principals;
pub(in crate::app) mod service_accounts;
pub(in crate::app) mod sessions;
pub(in crate::app) mod signups;
pub(in crate::app) mod sso;
pub(in crate::app) mod tokens;
pub(in crate::app) mod users;
