//! How infrastructure is kept in Postgres: per table its row type, its
//! column list written once, and its queries, with the lock a caller asks
//! for stated as [`Lock`](crate::app::authz::Lock) rather than a copy of
//! the query. `shapes` holds the JSONB shapes.

pub(in crate::app) mod approvals;
pub(in crate::app) mod cluster_cas;
pub(in crate::app) mod clusters;
pub(in crate::app) mod node_pools;
pub(in crate::app) mod projects;
mod shapes;
pub(in crate::app) mod spec_revisions;
pub(in crate::app) mod upgrade_notices;

pub(in crate::app) use shapes::*;
