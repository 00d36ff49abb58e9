//! The NATS JetStream transport between the gateway and region agents
//! (`queue.backend = "nats"`): a relay publishes outbox commands to each
//! region's stream, and an ingest reads the status stream. The embedded
//! Postgres transport needs neither (agents use the outbox and the status
//! inbox directly).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use async_nats::jetstream::{self, consumer, stream};
use futures::StreamExt;
use moke_proto::region as pb;
use moke_proto::subjects;
use prost::Message;

use crate::app::App;
use crate::app::region::ingest;
use crate::app::region::outbox::{OutboxConsumer, OutboxMessage};
use crate::config::Config;

/// A JetStream link with the streams this deployment uses.
#[derive(Clone)]
pub struct Nats {
    js: jetstream::Context,
    prefix: String,
}

impl Nats {
    /// Connects and makes sure every region's command stream and the status
    /// stream exist (creating them is idempotent).
    pub async fn connect(config: &Config) -> anyhow::Result<Nats> {
        let queue = &config.queue;
        let client = async_nats::connect(queue.nats_url.expose())
            .await
            .with_context(|| "could not connect to NATS (queue.nats_url)".to_string())?;
        let js = jetstream::new(client);
        let prefix = queue.nats_prefix.clone();
        for region in &config.catalog.regions {
            js.get_or_create_stream(stream::Config {
                name: subjects::command_stream(&prefix, &region.name),
                subjects: vec![subjects::commands(&prefix, &region.name)],
                max_messages: queue.nats_max_messages_per_region,
                discard: stream::DiscardPolicy::New,
                duplicate_window: Duration::from_secs(120),
                ..Default::default()
            })
            .await
            .with_context(|| format!("could not create the command stream of {}", region.name))?;
        }
        // Bounded, so no region can fill the server with what it sends.
        js.create_or_update_stream(stream::Config {
            name: subjects::dead_letter_stream(&prefix),
            subjects: vec![subjects::all_dead_letters(&prefix)],
            max_bytes: 1 << 30,
            // Each region's own subject keeps its newest: one cannot push out the others'.
            max_messages_per_subject: 10_000,
            max_age: Duration::from_secs(30 * 24 * 3600),
            ..Default::default()
        })
        .await
        .context("could not create the dead-letter stream")?;
        js.get_or_create_stream(stream::Config {
            name: subjects::status_stream(&prefix),
            subjects: vec![subjects::all_status(&prefix)],
            ..Default::default()
        })
        .await
        .context("could not create the status stream")?;
        Ok(Nats { js, prefix })
    }
}

impl Nats {
    /// Sends one command; the returned future is its JetStream
    /// acknowledgement. The outbox id is the message id, so a retried
    /// publish is de-duplicated.
    async fn publish(&self, message: &OutboxMessage) -> anyhow::Result<jetstream::context::PublishAckFuture> {
        let command = message.command.clone().context("outbox row has no wire command")?;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(subjects::MESSAGE_ID, message.id.to_string().as_str());
        if let Some(operation) = message.operation_id {
            let operation = crate::ids::OperationId::from_uuid(operation).to_string();
            headers.insert(subjects::OPERATION_ID, operation.as_str());
        }
        Ok(self
            .js
            .publish_with_headers(subjects::commands(&self.prefix, &message.region), headers, command.into())
            .await?)
    }
}

impl OutboxConsumer for Nats {
    /// Publishes the command and returns only once JetStream acknowledged it.
    async fn deliver(&self, message: &OutboxMessage) -> anyhow::Result<()> {
        self.publish(message).await?.await?;
        Ok(())
    }

    /// Sends the whole batch in order, then waits for the acknowledgements
    /// together: one round trip per batch instead of one per command.
    async fn deliver_all(&self, messages: &[OutboxMessage]) -> Vec<anyhow::Result<()>> {
        let mut pending = Vec::with_capacity(messages.len());
        for message in messages {
            pending.push(self.publish(message).await);
        }
        futures::future::join_all(pending.into_iter().map(|sent| async move {
            sent?.await?;
            anyhow::Ok(())
        }))
        .await
    }
}

/// Applies region reports from the status stream through a durable
/// consumer, in batches of what has arrived; a report is acknowledged only
/// after it was applied.
pub async fn ingest(app: Arc<App>, nats: Nats) {
    let mut settled = Settled::default();
    loop {
        if let Err(error) = ingest_until_error(&app, &nats, &mut settled).await {
            tracing::warn!(error = format!("{error:#}"), "status ingest failed; retrying");
        }
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

async fn ingest_until_error(app: &App, nats: &Nats, settled: &mut Settled) -> anyhow::Result<()> {
    let stream = nats.js.get_stream(subjects::status_stream(&nats.prefix)).await?;
    // Created or brought up to this config: reports waiting to be tried
    // again stay unacknowledged, and must never fill what may be pending.
    let consumer = stream
        .create_consumer(consumer::pull::Config {
            durable_name: Some("gateway-ingest".into()),
            ack_policy: consumer::AckPolicy::Explicit,
            max_ack_pending: MAX_ACK_PENDING,
            ..Default::default()
        })
        .await?;
    // Whatever has arrived, up to 500 at a time, applied as one batch.
    let mut batches = consumer.messages().await?.ready_chunks(500);
    loop {
        let next = tokio::select! {
            _ = app.shutdown_token().cancelled() => return Ok(()),
            next = batches.next() => next,
        };
        let Some(batch) = next else { return Ok(()) };
        let messages = batch.into_iter().collect::<Result<Vec<_>, _>>().map_err(|e| anyhow::anyhow!("{e}"))?;
        let (mut statuses, mut applying, mut unreadable) = (Vec::new(), Vec::new(), Vec::new());
        for message in &messages {
            let sequence = message.info().map_or(0, |info| info.stream_sequence);
            match pb::Status::decode(message.payload.as_ref()) {
                // A report counts for the region whose subject it arrived on, and no other.
                Ok(status) if message.subject.as_str() == subjects::status(&nats.prefix, &status.region) => {
                    let key = ingest::report_key(&status);
                    if settled.replaced(key.as_deref(), sequence) {
                        // A later report about the same thing was applied: this one is moot.
                        settled.done(sequence);
                        message.ack().await.map_err(|e| anyhow::anyhow!("{e}"))?;
                        continue;
                    }
                    statuses.push(status);
                    applying.push((message, key, sequence));
                }
                Ok(status) => {
                    unreadable.push((message, format!("names region {:?}, not its subject's", status.region)))
                }
                Err(error) => unreadable.push((message, format!("undecodable: {error}"))),
            }
        }
        let outcome = app.apply_region_statuses(statuses).await;
        if let Some(outage) = outcome.iter().flatten().find(|failed| failed.outage) {
            // The whole batch is delivered again after a pause; no attempt counts.
            for message in &messages {
                let _ = message.ack_with(jetstream::AckKind::Nak(Some(Duration::from_secs(5)))).await;
            }
            anyhow::bail!("an outage stopped the status ingest: {}", outage.error);
        }
        for ((_, key, sequence), failed) in applying.iter().zip(&outcome) {
            if failed.is_none() {
                settled.applied(key.as_deref(), *sequence);
            }
        }
        for ((message, key, sequence), failed) in applying.iter().zip(outcome) {
            match failed {
                Some(failed) if !settled.replaced(key.as_deref(), *sequence) => {
                    settle_failed(app, nats, settled, message, *sequence, &failed.error).await?
                }
                _ => {
                    settled.done(*sequence);
                    message.ack().await.map_err(|e| anyhow::anyhow!("{e}"))?
                }
            }
        }
        for (message, why) in &unreadable {
            dead_letter(nats, message, why).await?;
        }
    }
}

/// The most status reports delivered and not yet acknowledged.
const MAX_ACK_PENDING: i64 = 20_000;

/// The most reports of one region that failed alone waiting to be
/// delivered again; past them its next to fail is dead-lettered at once, so
/// they never fill [`MAX_ACK_PENDING`] and stop the ingest of every region.
const MAX_FAILING: usize = 1_000;

/// What the NATS ingest remembers of reports it settled (in memory, for
/// the gateway process: a restart forgets, which only means more tries,
/// and another gateway sharing the consumer does not know it): the stream
/// sequence of the latest report applied about each thing, and how often
/// each report that failed alone and waits to be delivered again has failed.
#[derive(Default)]
struct Settled {
    latest: HashMap<String, u64>,
    /// By stream sequence: failures so far, when the last was, and the report's subject (its region).
    failures: HashMap<u64, (i32, std::time::Instant, String)>,
}

impl Settled {
    /// The most things whose latest report is kept; past them it starts again.
    const KEPT: usize = 100_000;

    /// Forgets report `sequence`'s failures: it was applied, replaced or set aside.
    fn done(&mut self, sequence: u64) {
        self.failures.remove(&sequence);
    }

    fn applied(&mut self, key: Option<&str>, sequence: u64) {
        let Some(key) = key else { return };
        if self.latest.len() >= Self::KEPT {
            self.latest.clear();
        }
        let latest = self.latest.entry(key.to_string()).or_default();
        *latest = (*latest).max(sequence);
    }

    /// Whether a later report about the same thing than `sequence` was applied.
    fn replaced(&self, key: Option<&str>, sequence: u64) -> bool {
        key.and_then(|key| self.latest.get(key)).is_some_and(|latest| *latest > sequence)
    }

    /// Counts a failure of report `sequence`; how many it has had.
    /// Counts a failure of report `sequence` (of `subject`); how many it
    /// has had, and how many of that subject's reports wait to be tried again.
    fn failed(&mut self, sequence: u64, subject: &str) -> (i32, usize) {
        let now = std::time::Instant::now();
        if self.failures.len() > MAX_FAILING {
            // Not delivered here again for ten minutes (the backoff is at
            // most one): another gateway settled it.
            self.failures.retain(|_, (_, last, _)| now.duration_since(*last) < Duration::from_secs(600));
        }
        let (failures, last, _) = self.failures.entry(sequence).or_insert((0, now, subject.to_string()));
        *failures += 1;
        *last = now;
        let failures = *failures;
        (failures, self.failures.values().filter(|(.., of)| of == subject).count())
    }
}

/// A report that failed alone: delivered again on a backoff (1 s doubling
/// to a minute); once it has failed `REPORT_ATTEMPTS` times and is older
/// than [`App::dead_letter_after`], dead-lettered.
async fn settle_failed(
    app: &App,
    nats: &Nats,
    settled: &mut Settled,
    message: &jetstream::Message,
    sequence: u64,
    error: &str,
) -> anyhow::Result<()> {
    let (failures, waiting) = settled.failed(sequence, message.subject.as_str());
    let published = message.info().map_or(0, |info| info.published.unix_timestamp());
    let old_enough = chrono::Utc::now().timestamp() - published >= app.dead_letter_after().num_seconds();
    let too_many = waiting > MAX_FAILING;
    if (failures >= ingest::REPORT_ATTEMPTS && old_enough) || too_many {
        settled.done(sequence);
        let why = if too_many { format!("{error} (and {MAX_FAILING} other reports failing)") } else { error.into() };
        return dead_letter(nats, message, &why).await;
    }
    tracing::warn!(subject = %message.subject, failures, error = ?error, "a region report failed; it will be delivered again");
    let retry_in = Duration::from_secs(1 << (failures.clamp(1, 7) - 1)).min(Duration::from_secs(60));
    message.ack_with(jetstream::AckKind::Nak(Some(retry_in))).await.map_err(|e| anyhow::anyhow!("{e}"))
}

/// Keeps a report that cannot be applied in the dead-letter stream (with
/// why, in a header), counts it, and takes it off the status stream, so it
/// never holds up the reports behind it. When the dead-letter stream takes
/// nothing, the report is delivered again later instead.
async fn dead_letter(nats: &Nats, message: &jetstream::Message, why: &str) -> anyhow::Result<()> {
    let status_prefix = subjects::status(&nats.prefix, "");
    let region = message.subject.as_str().strip_prefix(&status_prefix).unwrap_or("unknown");
    crate::background::dead_lettered("region_status", &format!("report on {}", message.subject), why);
    let mut headers = async_nats::HeaderMap::new();
    let why: String = why.chars().filter(|c| !c.is_control()).take(1000).collect();
    headers.insert(subjects::DEAD_LETTER_REASON, why.as_str());
    let subject = subjects::status_dead_letters(&nats.prefix, region);
    let kept =
        async { anyhow::Ok(nats.js.publish_with_headers(subject, headers, message.payload.clone()).await?.await?) };
    if let Err(error) = kept.await {
        tracing::warn!(%error, "the dead-letter stream took no report; it will be delivered again");
        let later = jetstream::AckKind::Nak(Some(Duration::from_secs(30)));
        return message.ack_with(later).await.map_err(|e| anyhow::anyhow!("{e}"));
    }
    message.ack().await.map_err(|e| anyhow::anyhow!("{e}"))
}
