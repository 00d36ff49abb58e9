//! What runs inside clusters: deployments (with their spec and revisions) and services.

pub mod deployments;
pub mod services;
pub mod workload_spec;
