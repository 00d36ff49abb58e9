//! What customers run on: projects, clusters (with their PKI and status), node pools, and the catalogs of regions, versions and machine types.

pub mod approvals;
pub mod cancel;
pub mod catalog;
pub mod clusters;
pub mod node_pools;
pub mod projects;
pub mod revisions;
pub mod store;
