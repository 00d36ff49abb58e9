//! The reference region agent: one per region, it takes commands from the
//! region's work queue, applies them to a [`Provider`] (the simulated region
//! by default), and reports progress and observations back to the gateway.
//!
//! Transport today is the embedded Postgres queue: commands are the gateway's
//! outbox rows for this region, claimed with `FOR UPDATE SKIP LOCKED`, and
//! reports go to the `region_status` inbox in the same transaction, so a
//! command counts as done exactly when its reports are recorded. An agent
//! that dies mid-command leaves the rows to be claimed again.
//!
//! Depends on `moke-proto` only; never on the gateway crate.

pub mod sim;

use std::path::PathBuf;
use std::sync::Mutex;
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

/// One region's agent on the Postgres queue.
pub struct Agent {
    config: AgentConfig,
    db: PgPool,
    provider: Mutex<Simulated>,
}

impl Agent {
    /// Loads the saved state, if any.
    pub fn new(config: AgentConfig, db: PgPool) -> anyhow::Result<Agent> {
        let state = match &config.state_file {
            Some(path) if path.exists() => {
                let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
                serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?
            }
            _ => SimState::default(),
        };
        let provider = Mutex::new(Simulated { layout: config.layout.clone(), state });
        Ok(Agent { config, db, provider })
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

    /// Claims a batch of this region's commands, applies them in order and
    /// records their reports, in one transaction. Returns how many commands.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        let mut tx = self.db.begin().await?;
        let rows = sqlx::query_as::<_, (i64, Option<Vec<u8>>)>(
            "SELECT id, command FROM outbox
             WHERE region = $1 AND delivered_at IS NULL AND available_at <= now()
             ORDER BY id LIMIT $2
             FOR UPDATE SKIP LOCKED",
        )
        .bind(&self.config.region)
        .bind(self.config.batch)
        .fetch_all(&mut *tx)
        .await?;
        let mut reports = Vec::new();
        for (id, bytes) in &rows {
            let Some(bytes) = bytes else {
                tracing::warn!(id, "outbox row without a wire command; skipped");
                continue;
            };
            let mut command = match pb::Command::decode(bytes.as_slice()) {
                Ok(command) => command,
                Err(error) => {
                    tracing::warn!(id, %error, "undecodable command; skipped");
                    continue;
                }
            };
            command.id = *id;
            let messages = self.provider.lock().expect("provider lock").apply(&command);
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
        let ids: Vec<i64> = rows.iter().map(|(id, _)| *id).collect();
        sqlx::query("UPDATE outbox SET delivered_at = now() WHERE id = ANY($1)").bind(&ids).execute(&mut *tx).await?;
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
        sqlx::query("INSERT INTO region_status (region, message) VALUES ($1, $2)")
            .bind(&self.config.region)
            .bind(status.encode_to_vec())
            .execute(&self.db)
            .await?;
        Ok(())
    }

    /// Works until `shutdown`, sleeping `poll_interval` when the queue is
    /// empty and sending a heartbeat every `HEARTBEAT_EVERY`.
    pub async fn run(&self, shutdown: CancellationToken) -> anyhow::Result<()> {
        tracing::info!(region = %self.config.region, "region agent started");
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
