//! The console's pages, one module per area; each holds its pages and the
//! server functions their forms post to.

pub(crate) mod access;
pub(crate) mod account;
pub(crate) mod approvals;
pub(crate) mod billing;
pub(crate) mod cicd;
pub(crate) mod clusters;
pub(crate) mod lifecycle;
pub(crate) mod node_pools;
pub(crate) mod org;
pub(crate) mod policy;
pub(crate) mod projects;
pub(crate) mod service_account;
pub(crate) mod sso;
pub(crate) mod sso_signin;
pub(crate) mod webhooks;
pub(crate) mod workloads;

use leptos_router::hooks::{use_params_map, use_query_map};

/// A path parameter of the current route (empty if absent).
pub(crate) fn param(name: &str) -> String {
    use_params_map().with_untracked(|params| params.get(name).unwrap_or_default())
}

/// A query parameter of the current URL.
pub(crate) fn query(name: &str) -> Option<String> {
    use_query_map().with_untracked(|query| query.get(name)).filter(|value| !value.is_empty())
}

/// A path segment, percent-encoded for a link.
pub(crate) fn segment(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

use leptos::prelude::WithUntracked;
