//! `moke-region`: the reference region agent with the simulated provider.

use std::path::PathBuf;

use clap::Parser;
use moke_region::{Agent, AgentConfig, NatsLink, Transport};
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(name = "moke-region", version, about = "Moke region agent (simulated region)")]
struct Cli {
    /// The region this agent serves, e.g. eu-central-1.
    #[arg(long, env = "MOKE_REGION")]
    region: String,
    /// The region's zones, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    zones: Vec<String>,
    /// The gateway's Postgres, for the embedded queue.
    #[arg(long, env = "DATABASE_URL", required_unless_present = "nats_url")]
    database_url: Option<String>,
    /// NATS JetStream instead of the embedded queue.
    #[arg(long, env = "MOKE_NATS_URL")]
    nats_url: Option<String>,
    /// Subject and stream prefix (the gateway's queue.nats_prefix).
    #[arg(long, default_value = "moke")]
    nats_prefix: String,
    /// Where to keep the simulated region's state across restarts.
    #[arg(long)]
    state_file: Option<PathBuf>,
    /// The key that seals the clusters' Secrets in the state file (made on
    /// first start; default: beside the state file, `<state>.kms-key`).
    #[arg(long, env = "MOKE_REGION_KMS_KEY_FILE")]
    kms_key_file: Option<PathBuf>,
    /// Where the fault-injection admin endpoint listens (loopback only,
    /// unless --admin-allow-remote).
    #[arg(long)]
    admin_addr: Option<std::net::SocketAddr>,
    /// The bearer token the admin endpoint demands (at least 16 characters).
    #[arg(long, env = "MOKE_AGENT_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Let the admin endpoint listen on a non-loopback address.
    #[arg(long)]
    admin_allow_remote: bool,
    /// Simulated time: milliseconds per tick (rollout step, repair, upgrade step).
    #[arg(long, default_value_t = 500)]
    tick_ms: u64,
    /// How long provisioning one command takes, in milliseconds.
    #[arg(long, default_value_t = 0)]
    step_delay_ms: u64,
    /// Commands provisioned at once (one cluster's commands never overlap).
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let cli = Cli::parse();
    let transport = match (&cli.nats_url, &cli.database_url) {
        (Some(url), _) => Transport::Nats(Box::new(NatsLink::connect(url, &cli.nats_prefix, &cli.region).await?)),
        (None, Some(url)) => {
            Transport::Postgres(sqlx::postgres::PgPoolOptions::new().max_connections(4).connect(url).await?)
        }
        (None, None) => anyhow::bail!("give --database-url (embedded queue) or --nats-url"),
    };
    let mut config = AgentConfig::new(&cli.region, cli.zones);
    config.state_file = cli.state_file;
    config.kms_key_file = cli.kms_key_file;
    config.admin_addr = cli.admin_addr;
    config.admin_token = cli.admin_token;
    config.admin_allow_remote = cli.admin_allow_remote;
    config.tick_interval = std::time::Duration::from_millis(cli.tick_ms.max(1));
    config.step_delay = std::time::Duration::from_millis(cli.step_delay_ms);
    config.concurrency = cli.concurrency;
    let agent = Agent::new(config, transport)?;
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    agent.run(shutdown).await
}
