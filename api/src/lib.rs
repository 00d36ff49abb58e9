//! The Moke gateway: configuration, the app layer (authorization, validation,
//! quotas, transactions), Postgres storage, and the REST, gRPC and GraphQL
//! surfaces and the Vault adapter, served by the `moke-server` binary.
//!
//! Surfaces (`http`, `grpc`, `graphql`) depend on `app`; `app` depends
//! on no surface. Identity types and the authorization function come from
//! `moke-iam`; nothing here may be imported by `moke-iam`.

pub mod app;
pub mod background;
pub mod config;
pub mod graphql;
pub mod grpc;
pub mod http;
pub mod ids;
pub mod model;
pub mod outbound;
pub mod queue;
pub mod server;
pub mod telemetry;
pub mod vault;

/// Makes ring the process's TLS crypto provider (reqwest and rustls are
/// built without one); call before building the first HTTP client. Harmless
/// when a provider is already installed.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The schema migrations under `api/migrations`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");
