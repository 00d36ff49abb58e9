//! What CI/CD and customers' systems exchange with Moke: inbound deploy hooks, outbound event webhooks, and the signatures both use.

pub mod deploy_hooks;
pub mod event_webhooks;
pub mod signing;
pub mod store;
