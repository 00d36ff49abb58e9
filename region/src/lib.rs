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

pub mod admin;
pub mod control_plane;
pub mod kube;
pub mod scheduler;
pub mod sim;
pub mod workloads;

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
    /// Counts changes to the clusters' API objects (kubectl's writes, and
    /// what ticks project): watches wait on it, and the agent saves the
    /// state when it moved.
    pub kube_changes: tokio::sync::watch::Sender<u64>,
}

impl Provider for Simulated {
    fn apply(&mut self, command: &pb::Command) -> Vec<pb::status::Message> {
        self.state.apply(&self.layout, command)
    }
}

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
    /// Simulated time: one tick (rollout step, node repair, upgrade step) per interval.
    pub tick_interval: Duration,
    /// How long provisioning one command takes in the simulated region
    /// (zero in tests); the command is acknowledged only after it.
    pub step_delay: Duration,
    /// Commands provisioned at once; commands of one cluster never run
    /// concurrently.
    pub concurrency: usize,
    /// How long JetStream waits for an acknowledgement before redelivering;
    /// a command worked on longer is acknowledged "in progress" every third of it.
    pub ack_wait: Duration,
    /// How often the agent says it is alive (well within the gateway's
    /// `outbox.region_stale_after_seconds`).
    pub heartbeat_every: Duration,
    /// Where the fault-injection admin endpoint listens, if anywhere
    /// (loopback only unless `admin_allow_remote`).
    pub admin_addr: Option<std::net::SocketAddr>,
    /// The bearer token the admin endpoint demands; required with `admin_addr`.
    pub admin_token: Option<String>,
    /// Let the admin endpoint listen on a non-loopback address.
    pub admin_allow_remote: bool,
    /// The key-encryption key that seals the clusters' Secrets in the
    /// state file (32 bytes, made on first start, mode 0600): a file of its
    /// own, `<state_file>.kms-key` unless set; in production, on another
    /// volume than the state (and out of its backups).
    pub kms_key_file: Option<PathBuf>,
}

impl AgentConfig {
    pub fn new(region: &str, zones: Vec<String>) -> AgentConfig {
        AgentConfig {
            region: region.to_string(),
            layout: RegionLayout::for_zones(zones),
            state_file: None,
            batch: 50,
            poll_interval: Duration::from_millis(200),
            tick_interval: Duration::from_millis(500),
            step_delay: Duration::ZERO,
            concurrency: 8,
            ack_wait: Duration::from_secs(30),
            heartbeat_every: Duration::from_secs(5),
            admin_addr: None,
            admin_token: None,
            admin_allow_remote: false,
            kms_key_file: None,
        }
    }
}

/// The key-encryption key of a region that saves its state: read from its
/// file, or made there when the state holds no sealed Secret yet (written
/// to a temporary file readable by the agent alone, synced, then linked
/// into place unless another agent got there first, so a crash never leaves
/// half a key and two agents never hold different keys).
fn load_kek(config: &AgentConfig, state_file: &std::path::Path) -> anyhow::Result<kube::Kek> {
    let path = config.kms_key_file.clone().unwrap_or_else(|| state_file.with_extension("kms-key"));
    if path.exists() {
        let bytes = std::fs::read(&path).with_context(|| format!("reading the KMS key {}", path.display()))?;
        return Ok(kube::Kek::new(&bytes)?);
    }
    if state_file.exists() {
        let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(state_file)?)
            .with_context(|| format!("parsing {}", state_file.display()))?;
        if kube::Kek::holds_sealed(&saved) {
            anyhow::bail!(
                "the state {} holds sealed Secrets but its KMS key {} is missing: restore the key",
                state_file.display(),
                path.display()
            );
        }
    }
    let key = kube::Kek::generate()?;
    let temporary = path.with_extension("kms-key.tmp");
    let _ = std::fs::remove_file(&temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary).with_context(|| format!("writing the KMS key {}", temporary.display()))?;
    std::io::Write::write_all(&mut file, &key)?;
    file.sync_all()?;
    // Published only if no other agent published one first (then that one is read).
    let published = std::fs::hard_link(&temporary, &path);
    let _ = std::fs::remove_file(&temporary);
    if let Err(error) = published {
        if error.kind() == std::io::ErrorKind::AlreadyExists {
            return Ok(kube::Kek::new(&std::fs::read(&path)?)?);
        }
        return Err(error).with_context(|| format!("writing the KMS key {}", path.display()));
    }
    if let Some(directory) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(directory).and_then(|d| d.sync_all())?;
    }
    Ok(kube::Kek::new(&key)?)
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
    faults: Arc<admin::Switches>,
    /// Reports of simulated time that could not be sent yet.
    unsent: Mutex<Vec<pb::status::Message>>,
    /// Queue lag (gateway wrote → agent took) of the most recent commands.
    lags: Mutex<std::collections::VecDeque<Duration>>,
    /// The count of API object changes last saved (see [`Simulated::kube_changes`]).
    saved_kube_changes: std::sync::atomic::AtomicU64,
    /// Seals the clusters' Secrets in the saved state (with a state file).
    kek: Option<kube::Kek>,
}

/// Most queue-lag samples kept: the latest, the oldest make room.
const MAX_LAG_SAMPLES: usize = 50_000;

/// A command taken from the queue, with how to tell the queue about it.
struct Claimed {
    id: i64,
    cluster_id: String,
    /// Decoded command, or why it is poison.
    command: Result<pb::Command, String>,
    operation_id: String,
    message: Option<async_nats::jetstream::Message>,
}

impl Agent {
    /// Loads the saved state, if any.
    pub fn new(config: AgentConfig, transport: Transport) -> anyhow::Result<Agent> {
        let kek = config.state_file.as_ref().map(|state| load_kek(&config, state)).transpose()?;
        let state = match (&config.state_file, &kek) {
            (Some(path), Some(kek)) if path.exists() => {
                let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
                let mut saved: serde_json::Value =
                    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
                kek.open_state(&mut saved).with_context(|| format!("opening the Secrets in {}", path.display()))?;
                serde_json::from_value(saved).with_context(|| format!("parsing {}", path.display()))?
            }
            _ => SimState::default(),
        };
        let mut state: SimState = state;
        state.loaded();
        state.region = config.region.clone();
        let kube_changes = tokio::sync::watch::Sender::new(0);
        let provider = Arc::new(Mutex::new(Simulated { layout: config.layout.clone(), state, kube_changes }));
        Ok(Agent {
            config,
            transport,
            provider,
            control_planes: Default::default(),
            faults: Default::default(),
            unsent: Mutex::new(Vec::new()),
            lags: Mutex::new(Default::default()),
            saved_kube_changes: Default::default(),
            kek,
        })
    }

    /// The queue lag of each command taken since the last call (the latest
    /// 50 000 at most): from the gateway writing it to this agent taking it
    /// off the queue.
    pub fn take_command_lags(&self) -> Vec<Duration> {
        std::mem::take(&mut *self.lags.lock().expect("lag lock")).into()
    }

    fn record_lags(&self, claimed: &[Claimed]) {
        let now = chrono::Utc::now().timestamp_micros();
        let mut lags = self.lags.lock().expect("lag lock");
        for command in claimed.iter().filter_map(|c| c.command.as_ref().ok()) {
            if command.written_at_unix_micros > 0 {
                if lags.len() == MAX_LAG_SAMPLES {
                    lags.pop_front();
                }
                lags.push_back(Duration::from_micros(now.saturating_sub(command.written_at_unix_micros).max(0) as u64));
            }
        }
    }

    /// The fault switches (also flipped through the admin endpoint).
    pub fn faults(&self) -> &admin::Switches {
        &self.faults
    }

    /// The fault-injection admin endpoint over this agent's region, behind
    /// its token (none configured: every request is refused).
    pub fn admin_router(&self) -> axum::Router {
        let token = self.config.admin_token.clone().unwrap_or_default();
        if token.is_empty() {
            return axum::Router::new().fallback(|| async { axum::http::StatusCode::UNAUTHORIZED });
        }
        admin::router(self.provider.clone(), self.faults.clone(), &token)
    }

    /// Applies one command to the provider, then starts, updates or stops
    /// the cluster's control-plane endpoint; returns what to report.
    fn apply(&self, command: &pb::Command) -> Vec<pb::status::Message> {
        let mut reports = self.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner).apply(command);
        match pb::CommandKind::try_from(command.kind) {
            Ok(pb::CommandKind::ClusterDelete) => self.control_planes.stop(&command.cluster_id),
            Ok(pb::CommandKind::ClusterCertificate | pb::CommandKind::ClusterCreate) => {
                // The observation with the endpoint takes the place of the one
                // without: an Operation this ends never shows done before it.
                if let Some(observation) = self.serve_control_plane(&command.cluster_id) {
                    let earlier = reports.iter().position(
                        |r| matches!(r, pb::status::Message::Observation(o) if o.resource_id == command.cluster_id),
                    );
                    match earlier {
                        Some(at) => reports[at] = pb::status::Message::Observation(observation),
                        None => reports.insert(0, pb::status::Message::Observation(observation)),
                    }
                }
            }
            _ => {}
        }
        reports
    }

    /// Serves a cluster whose control plane has its certificate; the
    /// observation to report when its endpoint is new.
    fn serve_control_plane(&self, cluster_id: &str) -> Option<pb::Observation> {
        let cluster = self
            .provider
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .state
            .clusters
            .get(cluster_id)
            .cloned()?;
        if cluster.deleted || !cluster.pki.ready() {
            return None;
        }
        match self.control_planes.ensure(cluster_id, &cluster, self.provider.clone()) {
            Ok(endpoint) => {
                let mut provider = self.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
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
        self.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner).state.clone()
    }

    fn save(&self) -> anyhow::Result<()> {
        if let (Some(path), Some(kek)) = (&self.config.state_file, &self.kek) {
            let mut state =
                serde_json::to_value(&self.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner).state)?;
            kek.seal_state(&mut state)?;
            let bytes = serde_json::to_vec(&state)?;
            let temp = path.with_extension("tmp");
            std::fs::write(&temp, bytes)?;
            std::fs::rename(&temp, path)?;
        }
        Ok(())
    }

    /// Takes a batch of this region's commands, applies them in order and
    /// reports; returns how many commands. Does nothing while the link to
    /// the queue is down.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        if self.faults.link_down() {
            return Ok(0);
        }
        match &self.transport {
            Transport::Postgres(db) => self.run_once_postgres(db).await,
            Transport::Nats(link) => self.run_once_nats(link).await,
        }
    }

    /// Waits while the provider is stalled, telling JetStream the messages
    /// are still being worked on.
    async fn wait_while_stalled(&self, claimed: &[Claimed]) {
        let mut last_keep_alive = std::time::Instant::now();
        while self.faults.stalled() {
            if last_keep_alive.elapsed() >= self.config.ack_wait / 3 {
                keep_alive(claimed).await;
                last_keep_alive = std::time::Instant::now();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Applies a batch: every command in queue order (the provider is
    /// in-memory and quick), then the state is saved, then provisioning
    /// takes its simulated time with commands of one cluster one after
    /// another and at most `concurrency` at once. Returns each command's
    /// reports, in order.
    async fn work(&self, claimed: &[Claimed]) -> anyhow::Result<Vec<Vec<pb::status::Message>>> {
        self.record_lags(claimed);
        self.wait_while_stalled(claimed).await;
        let reports: Vec<Vec<pb::status::Message>> = claimed
            .iter()
            .map(|c| match &c.command {
                Ok(command) => self.apply(command),
                Err(evidence) => {
                    tracing::warn!(id = c.id, %evidence, "poison command; dead-lettered");
                    vec![dead_letter_report(&c.operation_id, c.id, evidence)]
                }
            })
            .collect();
        self.save()?;
        if !self.config.step_delay.is_zero() {
            use futures::StreamExt;
            let mut by_cluster: std::collections::BTreeMap<&str, Vec<&Claimed>> = Default::default();
            for c in claimed.iter().filter(|c| c.command.is_ok()) {
                by_cluster.entry(c.cluster_id.as_str()).or_default().push(c);
            }
            futures::stream::iter(by_cluster.into_values())
                .for_each_concurrent(self.config.concurrency.max(1), |commands| async move {
                    for command in commands {
                        let started = std::time::Instant::now();
                        while started.elapsed() < self.config.step_delay {
                            keep_alive(std::slice::from_ref(command)).await;
                            let left = self.config.step_delay.saturating_sub(started.elapsed());
                            tokio::time::sleep(left.min(self.config.ack_wait / 3)).await;
                        }
                    }
                })
                .await;
        }
        Ok(reports)
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
                    ack_wait: self.config.ack_wait,
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
        let mut claimed = Vec::new();
        while let Some(message) = batch.next().await {
            let message = message.map_err(|e| anyhow::anyhow!("{e}"))?;
            let header = |name: &str| {
                message.headers.as_ref().and_then(|h| h.get(name)).map(|v| v.as_str().to_string()).unwrap_or_default()
            };
            let id = header(moke_proto::subjects::MESSAGE_ID).parse::<i64>().unwrap_or_default();
            let operation_id = header(moke_proto::subjects::OPERATION_ID);
            let delivered = message.info().map(|info| info.delivered).unwrap_or(1);
            let command = match pb::Command::decode(message.payload.as_ref()) {
                Ok(_) if delivered > MAX_DELIVER => {
                    Err(format!("delivered {delivered} times without being acknowledged"))
                }
                Ok(command) => Ok(pb::Command { id, ..command }),
                Err(e) => Err(format!("undecodable command: {e}")),
            };
            let cluster_id = command.as_ref().map(|c| c.cluster_id.clone()).unwrap_or_default();
            claimed.push(Claimed { id, cluster_id, command, operation_id, message: Some(message) });
        }
        let reports = self.work(&claimed).await?;
        // Every report (and dead letter) of the batch is sent, then their
        // acknowledgements awaited together; only then are the commands
        // acknowledged. A failure leaves them all to be delivered again.
        let mut sent = Vec::new();
        for (claimed, reports) in claimed.iter().zip(reports) {
            let message = claimed.message.as_ref().expect("JetStream commands carry their message");
            if let Err(evidence) = &claimed.command {
                let dead_letter = moke_proto::subjects::dead_letters(&link.prefix, &self.config.region);
                let mut headers = async_nats::HeaderMap::new();
                headers.insert("Moke-Evidence", evidence.as_str());
                sent.push(link.js.publish_with_headers(dead_letter, headers, message.payload.clone()).await?);
            }
            let subject = moke_proto::subjects::status(&link.prefix, &self.config.region);
            for report in reports {
                let status = pb::Status { region: self.config.region.clone(), message: Some(report) };
                sent.push(link.js.publish(subject.clone(), status.encode_to_vec().into()).await?);
            }
        }
        futures::future::try_join_all(sent.into_iter().map(std::future::IntoFuture::into_future)).await?;
        futures::future::try_join_all(claimed.iter().map(|claimed| async move {
            let message = claimed.message.as_ref().expect("JetStream commands carry their message");
            if claimed.command.is_ok() { message.double_ack().await } else { message.ack_with(AckKind::Term).await }
                .map_err(|e| anyhow::anyhow!("{e}"))
        }))
        .await?;
        Ok(claimed.len())
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
        let claimed: Vec<Claimed> = rows
            .into_iter()
            .map(|(id, bytes, operation)| {
                let command = bytes
                    .as_deref()
                    .ok_or_else(|| "the row has no wire command".to_string())
                    .and_then(|b| pb::Command::decode(b).map_err(|e| format!("undecodable command: {e}")))
                    .map(|command| pb::Command { id, ..command });
                let cluster_id = command.as_ref().map(|c| c.cluster_id.clone()).unwrap_or_default();
                Claimed { id, cluster_id, command, operation_id: operation.unwrap_or_default(), message: None }
            })
            .collect();
        let reports = self.work(&claimed).await?;
        insert_status(&mut tx, &self.config.region, reports.into_iter().flatten()).await?;
        let ids: Vec<i64> = claimed.iter().map(|c| c.id).collect();
        let dead: Vec<i64> = claimed.iter().filter(|c| c.command.is_err()).map(|c| c.id).collect();
        sqlx::query("UPDATE outbox SET delivered_at = now() WHERE id = ANY($1)").bind(&ids).execute(&mut *tx).await?;
        sqlx::query(
            "UPDATE outbox SET dead_lettered_at = now(), last_error = 'dead-lettered by the region agent'
             WHERE id = ANY($1)",
        )
        .bind(&dead)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(claimed.len())
    }

    /// Sends reports not tied to a command (simulated time, heartbeats);
    /// what cannot be sent now is kept for the next try.
    async fn send(&self, reports: Vec<pb::status::Message>) -> anyhow::Result<()> {
        let mut pending = std::mem::take(&mut *self.unsent.lock().expect("unsent lock"));
        pending.extend(reports);
        if pending.is_empty() {
            return Ok(());
        }
        let result = if self.faults.link_down() {
            Err(anyhow::anyhow!("the link to the queue is down"))
        } else {
            match &self.transport {
                Transport::Postgres(db) => async {
                    let mut tx = db.begin().await?;
                    insert_status(&mut tx, &self.config.region, pending.iter().cloned()).await?;
                    tx.commit().await?;
                    anyhow::Ok(())
                }
                .await
                .map(|()| pending.clear()),
                Transport::Nats(link) => {
                    // All sent first, then the acknowledgements awaited in
                    // order: what follows the first failure is kept.
                    let subject = moke_proto::subjects::status(&link.prefix, &self.config.region);
                    let mut acks = Vec::with_capacity(pending.len());
                    for report in &pending {
                        let status = pb::Status { region: self.config.region.clone(), message: Some(report.clone()) };
                        match link.js.publish(subject.clone(), status.encode_to_vec().into()).await {
                            Ok(ack) => acks.push(ack),
                            Err(error) => {
                                tracing::debug!(%error, "status publish failed");
                                break;
                            }
                        }
                    }
                    let mut sent = 0;
                    let mut outcome = Ok(());
                    for ack in acks {
                        if let Err(error) = ack.await {
                            outcome = Err(error.into());
                            break;
                        }
                        sent += 1;
                    }
                    if sent < pending.len() && outcome.is_ok() {
                        outcome = Err(anyhow::anyhow!("a status report could not be published"));
                    }
                    pending.drain(..sent);
                    outcome
                }
            }
        };
        let mut unsent = self.unsent.lock().expect("unsent lock");
        pending.append(&mut unsent);
        *unsent = pending;
        result
    }

    /// Advances simulated time by one tick and reports what changed.
    pub async fn tick(&self) -> anyhow::Result<()> {
        if self.faults.stalled() {
            return Ok(());
        }
        let (reports, kube_changes) = {
            let mut provider = self.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let Simulated { layout, state, kube_changes } = &mut *provider;
            let revisions = |state: &SimState| state.kube.values().map(|s| s.revision).sum::<u64>();
            let before = revisions(state);
            let reports = state.tick(layout, chrono::Utc::now());
            if revisions(state) != before {
                kube_changes.send_modify(|changes| *changes += 1);
            }
            (reports, *kube_changes.borrow())
        };
        // What kubectl wrote since the last save is saved too (and again
        // at the next tick, should this save fail).
        let saved = self.saved_kube_changes.load(std::sync::atomic::Ordering::Acquire);
        if !reports.is_empty() || saved != kube_changes {
            self.save()?;
            self.saved_kube_changes.store(kube_changes, std::sync::atomic::Ordering::Release);
        }
        self.send(reports).await
    }

    /// Tells the gateway this agent is alive.
    pub async fn heartbeat(&self) -> anyhow::Result<()> {
        let applied = self.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner).state.commands_applied;
        self.send(vec![pb::status::Message::Heartbeat(pb::Heartbeat {
            region: self.config.region.clone(),
            commands_applied: applied,
        })])
        .await
    }

    /// Works until `shutdown`: takes commands (sleeping `poll_interval` when
    /// the queue is empty), advances simulated time every `tick_interval`,
    /// sends a heartbeat every `heartbeat_every`, and serves the admin
    /// endpoint when one is configured.
    pub async fn run(&self, shutdown: CancellationToken) -> anyhow::Result<()> {
        tracing::info!(region = %self.config.region, "region agent started");
        if let Some(addr) = self.config.admin_addr {
            if !addr.ip().is_loopback() && !self.config.admin_allow_remote {
                anyhow::bail!("the admin endpoint may listen on loopback only ({addr} is not); see admin_allow_remote");
            }
            if self.config.admin_token.as_deref().unwrap_or_default().len() < 16 {
                anyhow::bail!("the admin endpoint needs an admin token of at least 16 characters");
            }
            let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding {addr}"))?;
            let router = self.admin_router();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                let _ = axum::serve(listener, router).with_graceful_shutdown(stop.cancelled_owned()).await;
            });
        }
        // Control planes come back with the agent.
        let ids: Vec<String> = self.state().clusters.keys().cloned().collect();
        for id in ids {
            self.serve_control_plane(&id);
        }
        let mut last_heartbeat: Option<std::time::Instant> = None;
        let mut last_tick = std::time::Instant::now();
        loop {
            if last_heartbeat.is_none_or(|at| at.elapsed() >= self.config.heartbeat_every) {
                match self.heartbeat().await {
                    Ok(()) => last_heartbeat = Some(std::time::Instant::now()),
                    Err(error) => {
                        tracing::warn!(region = %self.config.region, error = format!("{error:#}"), "heartbeat failed")
                    }
                }
            }
            if last_tick.elapsed() >= self.config.tick_interval {
                last_tick = std::time::Instant::now();
                if let Err(error) = self.tick().await {
                    tracing::warn!(region = %self.config.region, error = format!("{error:#}"), "tick not reported");
                }
            }
            let worked = match self.run_once().await {
                Ok(n) => n > 0,
                Err(error) => {
                    tracing::warn!(region = %self.config.region, error = format!("{error:#}"), "round failed");
                    false
                }
            };
            if worked {
                continue;
            }
            tokio::select! {
                _ = shutdown.cancelled() => return Ok(()),
                _ = tokio::time::sleep(
                    self.config.poll_interval.min(self.config.tick_interval).min(self.config.heartbeat_every)
                ) => {}
            }
        }
    }
}

use async_nats::jetstream::AckKind;

/// Tells JetStream each claimed message is still being worked on, so it is
/// not redelivered meanwhile (nothing to do for the Postgres queue, whose
/// row locks last as long as the work).
async fn keep_alive(claimed: &[Claimed]) {
    for message in claimed.iter().filter_map(|c| c.message.as_ref()) {
        if let Err(error) = message.ack_with(AckKind::Progress).await {
            tracing::debug!(error = %error, "in-progress ack failed");
        }
    }
}

async fn insert_status(
    tx: &mut sqlx::PgConnection,
    region: &str,
    reports: impl Iterator<Item = pb::status::Message>,
) -> anyhow::Result<()> {
    let messages: Vec<Vec<u8>> = reports
        .map(|message| pb::Status { region: region.to_string(), message: Some(message) }.encode_to_vec())
        .collect();
    if messages.is_empty() {
        return Ok(());
    }
    sqlx::query("INSERT INTO region_status (region, message) SELECT $1, m FROM unnest($2::bytea[]) AS m")
        .bind(region)
        .bind(&messages)
        .execute(tx)
        .await?;
    Ok(())
}
