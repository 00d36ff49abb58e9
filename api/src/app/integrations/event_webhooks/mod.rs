//! Customer event webhooks. Events are written by the database in the
//! transaction of the change that caused them (`emit_event`, called by the
//! trigger on finished Operations), with one delivery per subscribed
//! endpoint. Dispatchers lease due deliveries (`FOR UPDATE SKIP LOCKED`),
//! POST them signed per Standard Webhooks, and record every attempt; failures
//! retry on `webhooks.retry_schedule_seconds` with jitter, a longer
//! `Retry-After` is honoured, 410 disables the endpoint, and an endpoint
//! failing for `disable_after_failing_hours` is disabled with an event
//! saying so. Deliveries go through the guarded outbound client
//! ([`crate::outbound`]), which reaches only public addresses.

pub mod dispatcher;
pub mod endpoints;
