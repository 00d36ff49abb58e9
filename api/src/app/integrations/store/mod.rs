//! How integrations are kept in Postgres: per table its row type, its
//! column list written once, and its queries. `shapes` holds the JSONB
//! shapes.

pub(in crate::app) mod deploy_hooks;
mod shapes;
pub(in crate::app) mod webhooks;

pub(in crate::app) use shapes::*;
