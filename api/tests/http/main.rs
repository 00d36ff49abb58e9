//! End-to-end tests of the gateway over real HTTP against real Postgres.
//! One test binary (faster to link); each test gets a fresh, migrated
//! database from `#[sqlx::test]`.

mod browser;
mod common;
mod scenario;

mod approvals;
mod authz;
mod auto_upgrades;
mod billing;
mod cancel;
mod cli;
mod console;
mod conventions;
mod crud;
mod device;
mod dry_run;
mod etcd_snapshots;
mod faults;
mod graphql;
mod grpc;
mod hooks;
mod iam;
mod idempotency;
mod integrity;
mod isolation;
mod kubeconfig;
mod kubectl_api;
mod lifecycle;
mod nodes;
mod oidc;
mod openapi;
mod parity;
mod regions;
mod revisions;
mod sdk;
mod sdk_scripts;
mod security;
mod security_iam;
mod security_sso;
mod surfaces;
mod upgrades;
mod webhooks;
mod workloads;
