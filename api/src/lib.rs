//! The Moke gateway: configuration, the app layer (authorization, validation,
//! quotas, transactions), Postgres storage, and the REST surface, served by
//! the `moke-server` binary.
//!
//! Surfaces (`http`, later gRPC and GraphQL) depend on `app`; `app` depends
//! on no surface. Identity types and the authorization function come from
//! `moke-iam`; nothing here may be imported by `moke-iam`.

pub mod app;
pub mod config;
pub mod graphql;
pub mod grpc;
pub mod http;
pub mod ids;
pub mod model;
pub mod queue;
pub mod server;
pub mod telemetry;

/// The schema migrations under `api/migrations`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");
