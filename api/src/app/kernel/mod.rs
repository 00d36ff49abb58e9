//! What every mutation shares: the audit log, idempotency, the regional-change write, dry runs, quotas, Vault-sealed secrets and the mail outbox.

pub mod audit;
pub mod changes;
pub mod dry_run;
pub mod idempotency;
pub mod jsonb;
pub mod mail;
pub mod policy;
pub mod quotas;
pub mod secrets;
pub mod watch;
