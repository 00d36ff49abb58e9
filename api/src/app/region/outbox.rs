//! The transactional outbox: work for regions is written in the same
//! transaction as the desired state, then delivered at least once by a relay
//! through an [`OutboxConsumer`] (the regional queue publisher arrives with
//! the regions; tests use their own consumers).

use std::future::Future;
use std::time::Duration;

use moke_proto::region as pb;
use prost::Message;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::region::command::ChangeKind;
use crate::app::{App, Result};

/// A command for a region, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxMessage {
    /// Monotonic sequence number; also the de-duplication key downstream.
    pub id: i64,
    pub region: String,
    /// The Operation kind, e.g. `cluster_create`, `node_pool_update`.
    pub kind: String,
    pub operation_id: Option<Uuid>,
    pub resource_id: Uuid,
    pub generation: i64,
    /// The command in its wire form (`moke.region.v1.Command` without id).
    pub command: Option<Vec<u8>>,
    /// Earlier failed deliveries.
    pub attempts: i32,
}

/// Something that delivers outbox messages (a queue publisher). Delivery must
/// be idempotent downstream: a message can arrive more than once.
pub trait OutboxConsumer: Send + Sync {
    fn deliver(&self, message: &OutboxMessage) -> impl Future<Output = anyhow::Result<()>> + Send;

    /// Delivers a batch, in order; one outcome per message. A transport
    /// that can pipeline (send all, then wait for the acknowledgements)
    /// overrides this.
    fn deliver_all(&self, messages: &[OutboxMessage]) -> impl Future<Output = Vec<anyhow::Result<()>>> + Send {
        async move {
            let mut outcomes = Vec::with_capacity(messages.len());
            for message in messages {
                outcomes.push(self.deliver(message).await);
            }
            outcomes
        }
    }
}

/// A new message, written by a mutation inside its transaction.
pub struct NewMessage<'a> {
    pub region: &'a str,
    pub kind: ChangeKind,
    pub operation_id: Uuid,
    pub resource_id: Uuid,
    pub generation: i64,
    /// Without its id, which the transport supplies.
    pub command: pb::Command,
}

/// Queues a command for a region, unless that region's backlog is already at
/// `max_backlog`: then the whole mutation fails with 503 (the region is slow
/// or down; other regions are unaffected).
/// `max_backlog: None` queues whatever the backlog (revocations must never
/// wait for a region to catch up before they are committed).
pub async fn enqueue(tx: &mut PgConnection, message: NewMessage<'_>, max_backlog: Option<i64>) -> Result<()> {
    let pending: i64 = match max_backlog {
        None => 0,
        Some(max_backlog) => {
            sqlx::query_scalar!(
                r#"SELECT count(*) AS "n!" FROM (SELECT 1 FROM outbox WHERE region = $1 AND delivered_at IS NULL
                       LIMIT $2) pending"#,
                message.region,
                max_backlog,
            )
            .fetch_one(&mut *tx)
            .await?
        }
    };
    if max_backlog.is_some_and(|max| pending >= max) {
        return Err(crate::app::Error::Unavailable {
            detail: format!("region {} has too much work queued; retry later", message.region),
            retry_after_seconds: 30,
        });
    }
    let command = pb::Command { written_at_unix_micros: chrono::Utc::now().timestamp_micros(), ..message.command };
    sqlx::query!(
        "INSERT INTO outbox (region, kind, operation_id, resource_id, generation, command)
         VALUES ($1, $2, $3, $4, $5, $6)",
        message.region,
        message.kind.operation_kind(),
        message.operation_id,
        message.resource_id,
        message.generation,
        command.encode_to_vec(),
    )
    .execute(tx)
    .await?;
    Ok(())
}

/// Takes back the commands of Operation `operation` that no relay has
/// delivered, tried to deliver (a publish whose answer was lost may have
/// reached the region) or is delivering now. True when it had commands and
/// none of them left the gateway: the region will never see the change.
pub(in crate::app) async fn withdraw(conn: &mut PgConnection, operation: Uuid) -> Result<bool> {
    let counts = sqlx::query!(
        // One snapshot: `total` counts the rows as they were before the delete.
        r#"WITH undelivered AS (
               SELECT id FROM outbox
               WHERE operation_id = $1 AND delivered_at IS NULL AND attempts = 0 AND last_error IS NULL
               FOR UPDATE SKIP LOCKED
           ), gone AS (
               DELETE FROM outbox o USING undelivered u WHERE o.id = u.id RETURNING o.id
           )
           SELECT (SELECT count(*) FROM gone) AS "withdrawn!", (SELECT count(*) FROM outbox WHERE operation_id = $1) AS "total!""#,
        operation,
    )
    .fetch_one(conn)
    .await?;
    Ok(counts.total > 0 && counts.withdrawn == counts.total)
}

/// Whether [`withdraw`] would take back every command of `operation`, read
/// without locking or deleting anything (for a dry run, which must not hold
/// up the relay).
pub(in crate::app) async fn withdrawable(conn: &mut PgConnection, operation: Uuid) -> Result<bool> {
    let (total, untouched): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE delivered_at IS NULL AND attempts = 0 AND last_error IS NULL)
         FROM outbox WHERE operation_id = $1",
    )
    .bind(operation)
    .fetch_one(conn)
    .await?;
    Ok(total > 0 && untouched == total)
}

/// The certificate commands of a cluster not yet delivered, newest first,
/// as (outbox id, command bytes); one the relay is sending now (locked) is
/// skipped, and those returned stay locked until the transaction ends.
pub(in crate::app) async fn undelivered_certificate_commands(
    conn: &mut PgConnection,
    cluster: Uuid,
) -> Result<Vec<(i64, Vec<u8>)>> {
    let rows = sqlx::query!(
        r#"SELECT id, command AS "command!" FROM outbox
           WHERE resource_id = $1 AND kind = 'cluster_certificate' AND delivered_at IS NULL
             AND command IS NOT NULL
           ORDER BY id DESC FOR UPDATE SKIP LOCKED"#,
        cluster
    )
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|row| (row.id, row.command)).collect())
}

/// Replaces a waiting message with `command` as a new message (a new id,
/// so a queue that already saw the old id does not drop it as a duplicate).
pub(in crate::app) async fn replace(conn: &mut PgConnection, id: i64, command: &pb::Command) -> Result<()> {
    sqlx::query!(
        "WITH replaced AS (DELETE FROM outbox WHERE id = $1
                           RETURNING region, kind, operation_id, resource_id, generation)
         INSERT INTO outbox (region, kind, operation_id, resource_id, generation, command)
         SELECT region, kind, operation_id, resource_id, generation, $2 FROM replaced",
        id,
        command.encode_to_vec(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Outbox size, for metrics and readiness of the relay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backlog {
    pub pending: i64,
    pub oldest_age_seconds: f64,
}

/// A region's queue and agent, for `GET /v1/regions`.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionQueueState {
    pub pending: i64,
    pub oldest_age_seconds: f64,
    pub last_heartbeat_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl App {
    /// Backlog and last heartbeat of every region that has either.
    pub async fn region_queue_states(&self) -> Result<std::collections::HashMap<String, RegionQueueState>> {
        let rows = sqlx::query!(
            r#"SELECT COALESCE(b.region, h.region) AS "region!",
                      COALESCE(b.pending, 0) AS "pending!",
                      COALESCE(b.oldest, 0) AS "oldest!",
                      h.last_heartbeat_at AS "last_heartbeat_at?"
               FROM (SELECT region, count(*) AS pending,
                            EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest
                     FROM outbox WHERE delivered_at IS NULL GROUP BY region) b
               FULL JOIN region_health h ON h.region = b.region"#
        )
        .fetch_all(self.db())
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    r.region,
                    RegionQueueState {
                        pending: r.pending,
                        oldest_age_seconds: r.oldest,
                        last_heartbeat_at: r.last_heartbeat_at,
                    },
                )
            })
            .collect())
    }

    /// Delivers up to `outbox.batch_size` due messages in id order, marking
    /// each delivered only after the consumer accepted it; a failure is
    /// retried later with exponential backoff. Several relays can run at once
    /// (rows are claimed with `FOR UPDATE SKIP LOCKED`). Returns how many
    /// messages were delivered.
    pub async fn relay_outbox_once(&self, consumer: &impl OutboxConsumer) -> Result<usize> {
        let config = &self.config().outbox;
        let mut tx = self.db().begin().await?;
        let rows = sqlx::query!(
            "SELECT id, region, kind, operation_id, resource_id, generation, command, attempts
             FROM outbox
             WHERE delivered_at IS NULL AND available_at <= now()
             ORDER BY id LIMIT $1
             FOR UPDATE SKIP LOCKED",
            i64::from(config.batch_size),
        )
        .fetch_all(&mut *tx)
        .await?;
        let messages: Vec<OutboxMessage> = rows
            .into_iter()
            .map(|row| OutboxMessage {
                id: row.id,
                region: row.region,
                kind: row.kind,
                operation_id: row.operation_id,
                resource_id: row.resource_id,
                generation: row.generation,
                command: row.command,
                attempts: row.attempts,
            })
            .collect();
        let outcomes = consumer.deliver_all(&messages).await;
        let mut delivered = Vec::new();
        for (message, outcome) in messages.iter().zip(outcomes) {
            match outcome {
                Ok(()) => delivered.push(message.id),
                Err(error) => {
                    let backoff = retry_delay(message.attempts, config.retry_base_seconds, config.retry_max_seconds);
                    tracing::warn!(outbox_id = message.id, attempts = message.attempts + 1, error = %error,
                        "outbox delivery failed; will retry");
                    sqlx::query!(
                        "UPDATE outbox SET attempts = attempts + 1, last_error = $2,
                             available_at = now() + make_interval(secs => $3)
                         WHERE id = $1",
                        message.id,
                        format!("{error:#}"),
                        backoff.as_secs_f64(),
                    )
                    .execute(&mut *tx)
                    .await?;
                }
            }
        }
        sqlx::query!("UPDATE outbox SET delivered_at = now() WHERE id = ANY($1)", &delivered).execute(&mut *tx).await?;
        let delivered = delivered.len();
        tx.commit().await?;
        Ok(delivered)
    }

    /// Messages not yet delivered, and the age of the oldest.
    pub async fn outbox_backlog(&self) -> Result<Backlog> {
        let row = sqlx::query!(
            r#"SELECT count(*) AS "pending!",
                      COALESCE(EXTRACT(EPOCH FROM now() - min(created_at))::float8, 0) AS "oldest!"
               FROM outbox WHERE delivered_at IS NULL"#
        )
        .fetch_one(self.db())
        .await?;
        Ok(Backlog { pending: row.pending, oldest_age_seconds: row.oldest })
    }
}

/// `base × 2^attempts`, capped at `max`.
pub fn retry_delay(attempts: i32, base_seconds: u32, max_seconds: u32) -> Duration {
    let exponent = attempts.clamp(0, 20) as u32;
    let seconds = u64::from(base_seconds).saturating_mul(1 << exponent).min(u64::from(max_seconds));
    Duration::from_secs(seconds)
}

#[cfg(test)]
mod tests {
    use super::retry_delay;

    #[test]
    fn retry_delay_doubles_and_caps() {
        assert_eq!(retry_delay(0, 2, 300).as_secs(), 2);
        assert_eq!(retry_delay(3, 2, 300).as_secs(), 16);
        assert_eq!(retry_delay(30, 2, 300).as_secs(), 300);
    }
}
