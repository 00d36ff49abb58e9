//! How workloads are kept in Postgres: per table its row type, its column
//! list written once, and its queries, with the lock a caller asks for
//! stated as [`Lock`](crate::app::authz::Lock) rather than a copy of the
//! query. `shapes` holds the JSONB shapes.

pub(in crate::app) mod deployments;
pub(in crate::app) mod namespaces;
pub(in crate::app) mod revisions;
pub(in crate::app) mod services;
mod shapes;
pub(in crate::app) mod unmanaged;

pub(in crate::app) use shapes::*;
