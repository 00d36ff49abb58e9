//! Regions: the typed commands they receive, the outbox and its relay, the reports they send back (ingest, observations, operations), anti-entropy repair and the notifications that wake waiters.

pub mod command;
pub mod ingest;
pub mod notifications;
pub mod observations;
pub mod observed;
pub mod operations;
pub mod outbox;
pub mod repair;
