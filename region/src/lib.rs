//! The reference region agent: one per region, it takes commands from the
//! region's work queue, applies them to a [`Provider`] (the simulated region
//! by default), and reports progress and observations back to the gateway.
//!
//! Two transports ([`Transport`]):
//! - the embedded Postgres queue: commands are the gateway's outbox rows for
//!   this region, claimed with `FOR UPDATE SKIP LOCKED`, and reports go to the
//!   `region_status` inbox in the same transaction, so a command counts as
//!   done exactly when its reports are recorded;
//! - NATS JetStream: a durable pull consumer on the region's command stream
//!   with explicit acks; a command is acknowledged only after its reports
//!   were published (and acknowledged) on the status subject.
//!
//! Either way an agent that dies mid-command gets the command again, and
//! applying it again changes nothing.
//!
//! Depends on `moke-proto` only; never on the gateway crate.

pub mod control_plane;
pub mod sim;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use moke_proto::region as pb;
use prost::Message;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

pub use sim::{RegionLayout, SimState};

/// Where a region's infrastructure lives; the simulator implements it, a
/// real bare-metal provider will.
pub trait Provider: Send {
    /// Applies a command, returning what to report. Must be idempotent and
    /// ignore generations at or below the applied one.
    fn apply(&mut self, command: &pb::Command) -> Vec<pb::status::Message>;
}

/// The simulated provider over a layout.
pub struct Simulated {
    pub layout: RegionLayout,
    pub state: SimState,
}

impl Provider for Simulated {
    fn apply(&mut self, command: &pb::Command) -> Vec<pb::status::Message> {
        self.state.apply(&self.layout, command)
    }
}

/// How often an agent says it is alive.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);

/// How an agent runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub region: String,
    pub layout: RegionLayout,
    /// Where the simulated state is kept across restarts; in memory if unset.
    pub state_file: Option<PathBuf>,
    /// Commands claimed per round.
    pub batch: i64,
    /// How long to sleep when the queue is empty.
    pub poll_interval: Duration,
}

impl AgentConfig {
    pub fn new(region: &str, zones: Vec<String>) -> AgentConfig {
        AgentConfig {
            region: region.to_string(),
            layout: RegionLayout::for_zones(zones),
            state_file: None,
            batch: 50,
            poll_interval: Duration::from_millis(200),
        }
    }
}

/// How commands arrive and reports leave.
pub enum Transport {
    Postgres(PgPool),
    Nats(Box<NatsLink>),
}

/// A JetStream link for one region.
pub struct NatsLink {
    js: async_nats::jetstream::Context,
    prefix: String,
}

impl NatsLink {
    /// Connects; the gateway creates the streams, so this waits (up to 30 s)
    /// for the region's command stream to exist.
    pub async fn connect(url: &str, prefix: &str, region: &str) -> anyhow::Result<NatsLink> {
        let client = async_nats::connect(url).await.with_context(|| format!("could not connect to NATS at {url}"))?;
        let js = async_nats::jetstream::new(client);
        let stream = moke_proto::subjects::command_stream(prefix, region);
        for _ in 0..60 {
            if js.get_stream(&stream).await.is_ok() {
                return Ok(NatsLink { js, prefix: prefix.to_string() });
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        anyhow::bail!("stream {stream} does not exist; is the gateway running with queue.backend = \"nats\"?")
    }
}

/// The report that fails the operation of a dead-lettered command.
fn dead_letter_report(operation_id: &str, command_id: i64, evidence: &str) -> pb::status::Message {
    pb::status::Message::Progress(pb::OperationProgress {
        operation_id: operation_id.to_string(),
        status: "failed".into(),
        step: "dead_lettered".into(),
        progress: 100,
        error_code: "command_dead_lettered".into(),
        error_message: format!("the region gave up on command {command_id}: {evidence}"),
    })
}

/// How many times a command is offered before it is given up on.
pub const MAX_DELIVER: i64 = 5;

/// One region's agent.
pub struct Agent {
    config: AgentConfig,
    transport: Transport,
    provider: Arc<Mutex<Simulated>>,
    control_planes: control_plane::ControlPlanes,
}

impl Agent {
    /// Loads the saved state, if any.
    pub fn new(config: AgentConfig, transport: Transport) -> anyhow::Result<Agent> {
        let state = match &config.state_file {
            Some(path) if path.exists() => {
                let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
                serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?
            }
            _ => SimState::default(),
        };
        let provider = Arc::new(Mutex::new(Simulated { layout: config.layout.clone(), state }));
        Ok(Agent { config, transport, provider, control_planes: Default::default() })
    }

    /// Applies one command to the provider, then starts, updates or stops
    /// the cluster's control-plane endpoint; returns what to report.
    fn apply(&self, command: &pb::Command) -> Vec<pb::status::Message> {
        let mut reports = self.provider.lock().expect("provider lock").apply(command);
        match pb::CommandKind::try_from(command.kind) {
            Ok(pb::CommandKind::ClusterDelete) => self.control_planes.stop(&command.cluster_id),
            Ok(pb::CommandKind::ClusterCertificate | pb::CommandKind::ClusterCreate) => {
                if let Some(observation) = self.serve_control_plane(&command.cluster_id) {
                    reports.push(pb::status::Message::Observation(observation));
                }
            }
            _ => {}
        }
        reports
    }

    /// Serves a cluster whose control plane has its certificate; the
    /// observation to report when its endpoint is new.
    fn serve_control_plane(&self, cluster_id: &str) -> Option<pb::Observation> {
        let cluster = self.provider.lock().expect("provider lock").state.clusters.get(cluster_id).cloned()?;
        if cluster.deleted || !cluster.pki.ready() {
            return None;
        }
        match self.control_planes.ensure(cluster_id, &cluster, self.provider.clone()) {
            Ok(endpoint) => {
                let mut provider = self.provider.lock().expect("provider lock");
                let stored = provider.state.clusters.get_mut(cluster_id)?;
                if stored.endpoint.as_deref() == Some(endpoint.as_str()) {
                    return None;
                }
                stored.endpoint = Some(endpoint);
                provider.state.cluster_observation(cluster_id)
            }
            Err(error) => {
                tracing::warn!(cluster = cluster_id, error = format!("{error:#}"), "could not serve the control plane");
                None
            }
        }
    }

    /// A copy of the simulated region's state.
    pub fn state(&self) -> SimState {
        self.provider.lock().expect("provider lock").state.clone()
    }

    fn save(&self, state: &SimState) -> anyhow::Result<()> {
        if let Some(path) = &self.config.state_file {
            let temp = path.with_extension("tmp");
            std::fs::write(&temp, serde_json::to_vec_pretty(state)?)?;
            std::fs::rename(&temp, path)?;
        }
        Ok(())
    }

    /// Takes a batch of this region's commands, applies them in order and
    /// reports; returns how many commands.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        match &self.transport {
            Transport::Postgres(db) => self.run_once_postgres(db).await,
            Transport::Nats(link) => self.run_once_nats(link).await,
        }
    }

    async fn publish_status(&self, link: &NatsLink, message: pb::status::Message) -> anyhow::Result<()> {
        let status = pb::Status { region: self.config.region.clone(), message: Some(message) };
        let subject = moke_proto::subjects::status(&link.prefix, &self.config.region);
        link.js.publish(subject, status.encode_to_vec().into()).await?.await?;
        Ok(())
    }

    async fn run_once_nats(&self, link: &NatsLink) -> anyhow::Result<usize> {
        use async_nats::jetstream::consumer;
        use futures::StreamExt;
        let stream =
            link.js.get_stream(moke_proto::subjects::command_stream(&link.prefix, &self.config.region)).await?;
        let name = format!("region-{}", self.config.region);
        let consumer: consumer::PullConsumer = stream
            .get_or_create_consumer(
                &name,
                consumer::pull::Config {
                    durable_name: Some(name.clone()),
                    ack_policy: consumer::AckPolicy::Explicit,
                    // One delivery more than we try, to dead-letter the command ourselves.
                    max_deliver: MAX_DELIVER + 1,
                    ack_wait: Duration::from_secs(30),
                    ..Default::default()
                },
            )
            .await?;
        let mut batch = consumer
            .fetch()
            .max_messages(self.config.batch as usize)
            .expires(Duration::from_millis(200))
            .messages()
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut handled = 0;
        while let Some(message) = batch.next().await {
            let message = message.map_err(|e| anyhow::anyhow!("{e}"))?;
            let id = message
                .headers
                .as_ref()
                .and_then(|h| h.get(moke_proto::subjects::MESSAGE_ID))
                .and_then(|v| v.as_str().parse::<i64>().ok())
                .unwrap_or_default();
            let operation = message
                .headers
                .as_ref()
                .and_then(|h| h.get(moke_proto::subjects::OPERATION_ID))
                .map(|v| v.as_str().to_string())
                .unwrap_or_default();
            let delivered = message.info().map(|info| info.delivered).unwrap_or(1);
            let decoded =
                pb::Command::decode(message.payload.as_ref()).map_err(|e| format!("undecodable command: {e}"));
            let decoded = match decoded {
                Ok(_) if delivered > MAX_DELIVER => {
                    Err(format!("delivered {delivered} times without being acknowledged"))
                }
                other => other,
            };
            match decoded {
                Ok(mut command) => {
                    command.id = id;
                    let reports = self.apply(&command);
                    let state = self.state();
                    self.save(&state)?;
                    for report in reports {
                        self.publish_status(link, report).await?;
                    }
                    message.double_ack().await.map_err(|e| anyhow::anyhow!("{e}"))?;
                }
                Err(evidence) => {
                    tracing::warn!(id, %evidence, "poison command; dead-lettered");
                    let dead_letter = moke_proto::subjects::dead_letters(&link.prefix, &self.config.region);
                    let mut headers = async_nats::HeaderMap::new();
                    headers.insert("Moke-Evidence", evidence.as_str());
                    link.js.publish_with_headers(dead_letter, headers, message.payload.clone()).await?.await?;
                    self.publish_status(link, dead_letter_report(&operation, id, &evidence)).await?;
                    message.ack_with(async_nats::jetstream::AckKind::Term).await.map_err(|e| anyhow::anyhow!("{e}"))?;
                }
            }
            handled += 1;
        }
        Ok(handled)
    }

    async fn run_once_postgres(&self, db: &PgPool) -> anyhow::Result<usize> {
        let mut tx = db.begin().await?;
        let rows = sqlx::query_as::<_, (i64, Option<Vec<u8>>, Option<String>)>(
            "SELECT id, command, 'op_' || replace(operation_id::text, '-', '') FROM outbox
             WHERE region = $1 AND delivered_at IS NULL AND available_at <= now()
             ORDER BY id LIMIT $2
             FOR UPDATE SKIP LOCKED",
        )
        .bind(&self.config.region)
        .bind(self.config.batch)
        .fetch_all(&mut *tx)
        .await?;
        let mut reports = Vec::new();
        let mut dead = Vec::new();
        for (id, bytes, operation) in &rows {
            let decoded = bytes
                .as_deref()
                .ok_or_else(|| "the row has no wire command".to_string())
                .and_then(|b| pb::Command::decode(b).map_err(|e| format!("undecodable command: {e}")));
            let mut command = match decoded {
                Ok(command) => command,
                Err(evidence) => {
                    // Retrying cannot help: dead-letter it and fail its operation.
                    tracing::warn!(id, %evidence, "poison command; dead-lettered");
                    reports.push(dead_letter_report(operation.as_deref().unwrap_or_default(), *id, &evidence));
                    dead.push(*id);
                    continue;
                }
            };
            command.id = *id;
            let messages = self.apply(&command);
            reports.extend(messages);
        }
        let state = self.state();
        self.save(&state)?;
        for message in reports {
            let status = pb::Status { region: self.config.region.clone(), message: Some(message) };
            sqlx::query("INSERT INTO region_status (region, message) VALUES ($1, $2)")
                .bind(&self.config.region)
                .bind(status.encode_to_vec())
                .execute(&mut *tx)
                .await?;
        }
        let ids: Vec<i64> = rows.iter().map(|(id, _, _)| *id).collect();
        sqlx::query("UPDATE outbox SET delivered_at = now() WHERE id = ANY($1)").bind(&ids).execute(&mut *tx).await?;
        sqlx::query(
            "UPDATE outbox SET dead_lettered_at = now(), last_error = 'dead-lettered by the region agent'
             WHERE id = ANY($1)",
        )
        .bind(&dead)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(rows.len())
    }

    /// Tells the gateway this agent is alive.
    pub async fn heartbeat(&self) -> anyhow::Result<()> {
        let applied = self.provider.lock().expect("provider lock").state.commands_applied;
        let status = pb::Status {
            region: self.config.region.clone(),
            message: Some(pb::status::Message::Heartbeat(pb::Heartbeat {
                region: self.config.region.clone(),
                commands_applied: applied,
            })),
        };
        match &self.transport {
            Transport::Postgres(db) => {
                sqlx::query("INSERT INTO region_status (region, message) VALUES ($1, $2)")
                    .bind(&self.config.region)
                    .bind(status.encode_to_vec())
                    .execute(db)
                    .await?;
            }
            Transport::Nats(link) => {
                self.publish_status(link, status.message.expect("set above")).await?;
            }
        }
        Ok(())
    }

    /// Works until `shutdown`, sleeping `poll_interval` when the queue is
    /// empty and sending a heartbeat every `HEARTBEAT_EVERY`.
    pub async fn run(&self, shutdown: CancellationToken) -> anyhow::Result<()> {
        tracing::info!(region = %self.config.region, "region agent started");
        // Control planes come back with the agent.
        let ids: Vec<String> = self.state().clusters.keys().cloned().collect();
        for id in ids {
            self.serve_control_plane(&id);
        }
        let mut last_heartbeat: Option<std::time::Instant> = None;
        loop {
            if last_heartbeat.is_none_or(|at| at.elapsed() >= HEARTBEAT_EVERY) {
                match self.heartbeat().await {
                    Ok(()) => last_heartbeat = Some(std::time::Instant::now()),
                    Err(error) => {
                        tracing::warn!(region = %self.config.region, error = format!("{error:#}"), "heartbeat failed")
                    }
                }
            }
            match self.run_once().await {
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(region = %self.config.region, error = format!("{error:#}"), "round failed")
                }
            }
            tokio::select! {
                _ = shutdown.cancelled() => return Ok(()),
                _ = tokio::time::sleep(self.config.poll_interval) => {}
            }
        }
    }
}
