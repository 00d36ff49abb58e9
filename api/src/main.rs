//! `moke-server`: the Moke gateway binary.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use moke_api::app::App;
use moke_api::config::{Config, DatabaseFlags, FlagOverrides, HttpFlags};
use moke_api::server;

/// mimalloc, not glibc's allocator: under load, glibc's arenas contend
/// (a tenth of the gateway's CPU went to `malloc` and its locks).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "moke-server", version, about = "The Moke gateway")]
struct Cli {
    /// A TOML config file layered over the built-in defaults.
    #[arg(long, global = true, env = "MOKE_CONFIG")]
    config: Option<PathBuf>,
    /// Address to listen on (overrides http.listen).
    #[arg(long, global = true)]
    listen: Option<String>,
    /// Postgres URL (overrides database.url and DATABASE_URL).
    #[arg(long, global = true)]
    database_url: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate the database if needed and serve the API.
    Serve,
    /// Apply pending database migrations and exit.
    Migrate,
    /// Development mode: migrate, create a demo organization with a fresh
    /// owner token, print how to call the API, and serve.
    Dev {
        /// Name of the demo organization.
        #[arg(long, default_value = "demo")]
        org: String,
        /// Where the in-process simulated regions keep their state.
        #[arg(long, default_value = ".moke/regions")]
        region_state_dir: PathBuf,
        /// Do not run simulated region agents (operations then stay pending).
        #[arg(long)]
        no_regions: bool,
    },
    /// Make a new JWT signing key current (in Vault). Tokens signed by the
    /// old key stay valid until they expire; every gateway picks the new key
    /// up within vault.refresh_seconds.
    RotateSigningKey,
    /// Make a new version of the secrets key current (in Vault) and
    /// re-encrypt every stored secret under it, one Operation per organization.
    RotateSecretsKey,
    /// Billing administration.
    #[command(subcommand)]
    Billing(BillingCommand),
    /// Print the OpenAPI document the code describes.
    Openapi,
    /// Print the GraphQL schema (SDL) the code describes.
    GraphqlSchema,
    /// Print the permission tables (`iam/PERMISSIONS.md`).
    Permissions,
}

#[derive(Subcommand)]
enum BillingCommand {
    /// Grant an organization a credit, used when its invoices are finalized
    /// (audited as the platform's act).
    GrantCredit {
        /// The organization's id (`org_…`).
        #[arg(long)]
        org: String,
        /// In the catalog's currency, e.g. `100.00`.
        #[arg(long)]
        amount: moke_billing::Decimal,
        /// Shown on invoices, e.g. "Welcome credit".
        #[arg(long)]
        description: String,
        /// `promotional` or `prepaid`.
        #[arg(long, default_value = "promotional")]
        kind: String,
        /// Lower is used first.
        #[arg(long, default_value_t = 100)]
        priority: i32,
        /// RFC 3339; never, when left out.
        #[arg(long)]
        expires_at: Option<chrono::DateTime<chrono::Utc>>,
        /// Who grants it, for the audit log.
        #[arg(long)]
        granted_by: String,
    },
    /// Move an organization to any plan, including those customers cannot
    /// choose themselves (audited with the reason).
    SetPlan {
        /// The organization's id (`org_…`).
        #[arg(long)]
        org: String,
        /// A plan's id from billing.plans.
        #[arg(long)]
        plan: String,
        /// Why, e.g. "Signed the business agreement, ticket 4711".
        #[arg(long)]
        reason: String,
    },
    /// Close months now rather than at the next periodic run: finalize every
    /// draft invoice whose month ended more than billing.grace_hours ago.
    CloseMonth {
        /// Act as if it were this time (RFC 3339); the database's clock if
        /// left out. A time ahead of now needs `--early`.
        #[arg(long)]
        at: Option<chrono::DateTime<chrono::Utc>>,
        /// Allow `--at` up to 40 days ahead, to close a month before its
        /// grace period is over in a development setup (invoices get that
        /// time as their finalization time and its year's numbers).
        #[arg(long)]
        early: bool,
    },
    /// Void a finalized invoice and issue its replacement for the same month
    /// at once: rated again from its usage, under a new number (the credits
    /// it used go back first). Sends invoice.voided and invoice.finalized.
    VoidInvoice {
        /// The organization's id (`org_…`).
        #[arg(long)]
        org: String,
        /// The invoice's id (`bill_…`).
        #[arg(long)]
        invoice: String,
        /// Why, shown on the void invoice and in the audit log.
        #[arg(long)]
        reason: String,
        /// Who voids it (kept with the invoice, not shown to the organization).
        #[arg(long)]
        voided_by: String,
    },
    /// Override quota limits of one organization over its plan's (audited
    /// with the reason, which the organization's audit log shows), or give
    /// them back to the plan.
    SetQuota {
        /// The organization's id (`org_…`).
        #[arg(long)]
        org: String,
        /// QUOTA=LIMIT, or QUOTA=plan to give the quota back to the plan;
        /// quotas by the names `GET /v1/orgs/{org}/quotas` uses. Repeatable.
        #[arg(long = "limit", required = true)]
        limits: Vec<String>,
        /// Why, e.g. "Raised for the launch, ticket 4711".
        #[arg(long)]
        reason: String,
        /// Who sets it (kept with the override, not in the audit log).
        #[arg(long)]
        set_by: String,
    },
}

/// How far ahead `billing close-month --at` may act: enough to close this
/// month early in a development setup (its end plus the grace period).
const MAX_CLOSE_AHEAD_DAYS: i64 = 40;

/// An app-layer refusal of an operator command, with each bad field.
fn operator_error(error: moke_api::app::Error) -> anyhow::Error {
    match error {
        moke_api::app::Error::Invalid(fields) => {
            let fields: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.field, f.message)).collect();
            anyhow::anyhow!("refused: {}", fields.join("; "))
        }
        other => anyhow::anyhow!("{other}"),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Openapi => {
            println!("{}", moke_api::http::openapi().to_pretty_json().expect("the document serializes"));
            return ExitCode::SUCCESS;
        }
        Command::GraphqlSchema => {
            print!("{}", moke_api::graphql::sdl());
            return ExitCode::SUCCESS;
        }
        Command::Permissions => {
            print!("{}", moke_iam::permission_table_markdown());
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let flags = FlagOverrides {
        http: cli.listen.clone().map(|listen| HttpFlags { listen: Some(listen) }),
        database: cli.database_url.clone().map(|url| DatabaseFlags { url: Some(url) }),
    };
    let config = match Config::load(cli.config.as_deref(), &flags) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("moke-server: {error}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    match runtime.block_on(run(cli.command, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("moke-server: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, config: Config) -> anyhow::Result<()> {
    let _telemetry = moke_api::telemetry::init(&config.telemetry)?;
    if let Command::RotateSigningKey = command {
        let vault = moke_api::vault::Vault::connect(&config).await?;
        let kid = vault.rotate_signing_key().await.map_err(|e| anyhow::anyhow!("{e}"))?;
        println!("new signing key: {kid}");
        return Ok(());
    }
    let pool = server::connect(&config).await?;
    server::migrate(&pool).await?;
    if let Command::Migrate = command {
        tracing::info!("migrations applied");
        return Ok(());
    }
    let vault = moke_api::vault::Vault::connect(&config).await?;
    if let Command::RotateSecretsKey = command {
        let app = App::new(pool, Arc::new(config), vault);
        let (version, operations) = app.rotate_secrets_key().await?;
        println!("secrets key is now version {version}");
        for op in operations {
            println!("  {} {} {}: {}", op.id, op.kind, op.target.name, op.status.as_str());
        }
        return Ok(());
    }
    if let Command::Billing(BillingCommand::GrantCredit {
        org,
        amount,
        description,
        kind,
        priority,
        expires_at,
        granted_by,
    }) = command
    {
        use moke_api::app::billing::credits::CreditGrantInput;
        let kind = moke_api::model::CreditKind::parse(&kind)
            .ok_or_else(|| anyhow::anyhow!("--kind must be promotional or prepaid"))?;
        let org = org.parse().map_err(|_| anyhow::anyhow!("--org must be an organization id (org_…)"))?;
        let app = App::new(pool, Arc::new(config), vault);
        let input = CreditGrantInput { kind, description, amount, priority, expires_at, granted_by };
        let grant = app.grant_credit(org, input).await.map_err(operator_error)?;
        println!("{}", serde_json::to_string_pretty(&grant)?);
        return Ok(());
    }
    if let Command::Billing(BillingCommand::SetPlan { org, plan, reason }) = command {
        let org = org.parse().map_err(|_| anyhow::anyhow!("--org must be an organization id (org_…)"))?;
        let app = App::new(pool, Arc::new(config), vault);
        let plan = app.set_plan(org, &plan, &reason).await.map_err(operator_error)?;
        println!("{}", serde_json::to_string_pretty(&plan)?);
        return Ok(());
    }
    if let Command::Billing(BillingCommand::CloseMonth { at, early }) = command {
        let now = chrono::Utc::now();
        if at.is_some_and(|at| at > now) && !early {
            anyhow::bail!("--at is ahead of now: closing months early needs --early (development setups only)");
        }
        // A typo'd year would finalize months that have not happened, under that year's numbers.
        if at.is_some_and(|at| at > now + chrono::Duration::days(MAX_CLOSE_AHEAD_DAYS)) {
            anyhow::bail!("--at may be at most {MAX_CLOSE_AHEAD_DAYS} days from now");
        }
        let app = App::new(pool, Arc::new(config), vault);
        let started = std::time::Instant::now();
        let mut took = Vec::new();
        // The last run passes over every invoice that still fails.
        let failed = loop {
            let batch = app.close_months(at).await.map_err(operator_error)?;
            if batch.took.is_empty() {
                break batch.failed;
            }
            took.extend(batch.took);
        };
        took.sort();
        let slowest = took.last().copied().unwrap_or_default();
        println!(
            "finalized {} invoice(s) in {:.1} s (slowest {:.1} ms); {failed} could not be finalized",
            took.len(),
            started.elapsed().as_secs_f64(),
            slowest.as_secs_f64() * 1000.0
        );
        if failed > 0 {
            anyhow::bail!("{failed} invoice(s) could not be finalized: see the error log");
        }
        return Ok(());
    }
    if let Command::Billing(BillingCommand::VoidInvoice { org, invoice, reason, voided_by }) = command {
        let org = org.parse().map_err(|_| anyhow::anyhow!("--org must be an organization id (org_…)"))?;
        let invoice = invoice.parse().map_err(|_| anyhow::anyhow!("--invoice must be an invoice id (bill_…)"))?;
        let app = App::new(pool, Arc::new(config), vault);
        let replacement = app.void_invoice(org, invoice, &reason, &voided_by).await.map_err(operator_error)?;
        println!("{}", serde_json::to_string_pretty(&replacement)?);
        return Ok(());
    }
    if let Command::Billing(BillingCommand::SetQuota { org, limits, reason, set_by }) = command {
        let org = org.parse().map_err(|_| anyhow::anyhow!("--org must be an organization id (org_…)"))?;
        let mut changes = Vec::new();
        for limit in &limits {
            let (quota, value) =
                limit.split_once('=').ok_or_else(|| anyhow::anyhow!("--limit {limit}: expected QUOTA=LIMIT"))?;
            let value = match value {
                "plan" => None,
                number => Some(number.parse::<i64>().map_err(|_| anyhow::anyhow!("--limit {limit}: not a number"))?),
            };
            changes.push((quota.to_string(), value));
        }
        let app = App::new(pool, Arc::new(config), vault);
        let overrides = app.override_quotas(org, &changes, &reason, &set_by).await.map_err(operator_error)?;
        println!("{}", serde_json::to_string_pretty(&overrides)?);
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind(&config.http.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {} (http.listen): {e}", config.http.listen))?;
    let public_url = config.http.public_url.clone();
    let app = App::new(pool, Arc::new(config), vault);
    if let Command::Dev { org, region_state_dir, no_regions } = &command {
        if !no_regions {
            start_region_agents(&app, region_state_dir)?;
        }
        let demo = app.bootstrap_org(org, "Demo organization").await?;
        let token = &demo.owner_token.token;
        println!();
        println!("Moke is running: open {public_url} to sign up in the console  (API docs: {public_url}/docs)");
        println!("  (the sign-up mail, with its link, is written to this log)");
        println!("  organization: {} ({})", demo.org.name, demo.org.id);
        println!("  owner token:  {token}   (a service-account token; shown once)");
        println!(
            "  or sign up:   curl -s -H 'Content-Type: application/json' -d '{{\"email\":\"you@example.com\",\"password\":\"a long passphrase\",\"display_name\":\"You\",\"organization_name\":\"mine\"}}' {public_url}/v1/signup"
        );
        println!();
        println!("Try:");
        println!(
            "  curl -s -H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' \\\n    \
             -d '{{\"name\":\"web\"}}' {public_url}/v1/orgs/{}/projects",
            demo.org.id
        );
        println!(
            "  curl -s -H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' \\\n    \
             -d '{{\"name\":\"prod\",\"spec\":{{\"region\":\"eu-central-1\"}}}}' {public_url}/v1/projects/web/clusters"
        );
        println!();
    }
    tracing::info!(listen = %listener.local_addr()?, "serving");
    server::serve(app, listener, server::shutdown_signal()).await
}

/// Runs one reference region agent with the simulated provider per
/// configured region, in this process, on the embedded Postgres queue.
fn start_region_agents(app: &Arc<App>, state_dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(state_dir)?;
    for region in &app.config().catalog.regions {
        let mut config = moke_region::AgentConfig::new(&region.name, region.zones.clone());
        config.state_file = Some(state_dir.join(format!("{}.json", region.name)));
        let queue = &app.config().queue;
        let (region_name, url, prefix) = (region.name.clone(), queue.nats_url.clone(), queue.nats_prefix.clone());
        let nats = queue.is_nats();
        let db = app.db().clone();
        let shutdown = app.shutdown_token().clone();
        tokio::spawn(async move {
            let transport = if nats {
                match moke_region::NatsLink::connect(url.expose(), &prefix, &region_name).await {
                    Ok(link) => moke_region::Transport::Nats(Box::new(link)),
                    Err(error) => return tracing::error!(error = format!("{error:#}"), "region agent could not start"),
                }
            } else {
                moke_region::Transport::Postgres(db)
            };
            match moke_region::Agent::new(config, transport) {
                Ok(agent) => {
                    let _ = agent.run(shutdown).await;
                }
                Err(error) => tracing::error!(error = format!("{error:#}"), "region agent could not start"),
            }
        });
        println!("  simulated region {} is running (zones {})", region.name, region.zones.join(", "));
    }
    Ok(())
}
