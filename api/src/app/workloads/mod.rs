//! What runs inside clusters: namespaces, deployments (with their spec and revisions) and services.

mod backfill;
pub mod deployments;
pub mod namespaces;
pub mod services;
pub mod store;
pub mod workload_spec;
