//! `moke`: the Moke API on the command line.
//!
//! Every API operation is a command generated from the OpenAPI document
//! (`generated_cli.rs`, placed in the tree by [`paths::command_path`]);
//! hand-written commands beside them sign in, save kubeconfigs, act as
//! kubectl's credential plugin, wait for operations, deploy manifests and
//! download invoices.

mod cmd_api;
mod cmd_auth;
mod cmd_billing;
mod cmd_deploy;
mod cmd_estimate;
mod cmd_kubeconfig;
mod cmd_operation;
mod config;
#[allow(clippy::all, unused)]
mod generated_cli;
mod output;
mod paths;

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Arg, ArgMatches, Command, FromArgMatches};
use generated_cli::{Cli, CliCommand};
use output::{Format, Printer};

/// A command the CLI adds beside the generated ones.
#[derive(Debug, Clone, Copy)]
enum Custom {
    AuthLogin,
    AuthStatus,
    AuthLogout,
    KubeconfigSave,
    KubeconfigToken,
    OperationWait,
    Deploy,
    Api,
    BillingDownload,
    InvoicePdf,
    InvoiceCsv,
    Version,
    Completion,
}

#[derive(Debug, Clone, Copy)]
enum Leaf {
    Generated(CliCommand),
    Custom(Custom),
}

/// The hand-written commands, at their paths.
fn custom_commands() -> Vec<(&'static str, Custom, Command)> {
    use clap::Args;
    vec![
        ("auth login", Custom::AuthLogin, cmd_auth::Login::augment_args(Command::new("login"))),
        ("auth status", Custom::AuthStatus, cmd_auth::Status::augment_args(Command::new("status"))),
        ("auth logout", Custom::AuthLogout, cmd_auth::Logout::augment_args(Command::new("logout"))),
        ("kubeconfig save", Custom::KubeconfigSave, cmd_kubeconfig::Save::augment_args(Command::new("save"))),
        ("kubeconfig token", Custom::KubeconfigToken, cmd_kubeconfig::Token::augment_args(Command::new("token"))),
        ("operation wait", Custom::OperationWait, cmd_operation::Wait::augment_args(Command::new("wait"))),
        ("deploy", Custom::Deploy, cmd_deploy::Deploy::augment_args(Command::new("deploy"))),
        ("api", Custom::Api, cmd_api::Api::augment_args(Command::new("api"))),
        ("billing download", Custom::BillingDownload, cmd_billing::Download::augment_args(Command::new("download"))),
        (
            "billing invoice pdf",
            Custom::InvoicePdf,
            cmd_billing::Download::augment_args(Command::new("pdf")).mut_arg("format", |a| a.hide(true)),
        ),
        (
            "billing invoice csv",
            Custom::InvoiceCsv,
            cmd_billing::Download::augment_args(Command::new("csv")).mut_arg("format", |a| a.hide(true)),
        ),
        ("version", Custom::Version, Command::new("version").about("Print the CLI's version")),
        (
            "completion",
            Custom::Completion,
            Command::new("completion")
                .about("Print a shell completion script")
                .arg(Arg::new("shell").required(true).value_parser(clap::value_parser!(clap_complete::Shell))),
        ),
    ]
}

/// One node of the command tree: a command, or a group of them.
#[derive(Default)]
struct Node {
    children: BTreeMap<&'static str, Node>,
    leaf: Option<(Leaf, Command)>,
}

impl Node {
    fn insert(&mut self, path: &'static str, leaf: Leaf, command: Command) {
        let node = path.split(' ').fold(self, |node, part| node.children.entry(part).or_default());
        node.leaf = Some((leaf, command));
    }

    fn command(&self, name: &'static str) -> Command {
        match &self.leaf {
            Some((_, command)) => command.clone().name(name),
            None => Command::new(name)
                .about(group_about(name))
                .subcommand_required(true)
                .subcommands(self.children.iter().map(|(child, node)| node.command(child))),
        }
    }

    /// The leaf that `matches` chose, and its own matches.
    fn chosen<'m>(&self, matches: &'m ArgMatches) -> Option<(Leaf, &'m ArgMatches)> {
        if let Some((leaf, _)) = &self.leaf {
            return Some((*leaf, matches));
        }
        let (name, sub) = matches.subcommand()?;
        self.children.get(name)?.chosen(sub)
    }
}

/// What a group of commands is about, in `moke --help`.
fn group_about(name: &str) -> &'static str {
    match name {
        "account" => "Sign up for Moke",
        "audit" => "The organization's audit log",
        "auth" => "Sign in and out; password resets",
        "billing" => "The month's balance, invoices (PDF, CSV), credits, budgets and the plan",
        "budget" => "Monthly budgets and the alerts they send",
        "cluster" => "Kubernetes clusters",
        "credentials" => "Short-lived cluster credentials",
        "credit" => "Credits the organization holds",
        "deploy-hook" => "Signed deploy webhooks for CI/CD",
        "deploy-policy" => "What deploy hooks may deploy",
        "device" => "Approve or deny a device sign-in (`moke auth login` on another machine)",
        "deployment" => "Deployments in a cluster, their rollouts and revisions",
        "delivery" => "Webhook deliveries",
        "invitation" => "Invitations to an organization",
        "invoice" => "Invoices, one a calendar month",
        "kubeconfig" => "kubectl access to clusters",
        "kubernetes-version" => "Kubernetes versions on offer",
        "machine-type" => "Machine types for node pools",
        "me" => "You: sessions, personal tokens, security events",
        "member" => "Members and their roles",
        "namespace" => "Namespaces in a cluster",
        "node" => "A cluster's nodes",
        "node-pool" => "Node pools of a cluster",
        "operation" => "Long-running work and its progress",
        "org" => "Organizations: members, domains, SSO, quotas, policies",
        "plan" => "Plans on offer, the organization's, and a change of plan",
        "project" => "Projects, their members and deploy policy",
        "region" => "Regions",
        "service" => "Services in a cluster",
        "service-account" => "Service accounts, their tokens and CI trust policies",
        "token" => "The organization's API tokens",
        "usage" => "Usage per day, project and resource, at list price (CSV too)",
        "webhook" => "Event webhooks and their deliveries",
        _ => "",
    }
}

/// The whole tree; generated commands act in the profile's organization
/// when `--org` is not given.
fn tree(default_org: Option<&str>) -> Node {
    let mut root = Node::default();
    for operation in CliCommand::iter() {
        let Some(path) = paths::command_path(operation) else { continue };
        let mut command = Cli::<Printer>::get_command(operation);
        if let Some(org) = default_org
            && command.get_arguments().any(|a| a.get_id() == "org")
        {
            let org = org.to_string();
            command = command.mut_arg("org", |arg| arg.required(false).default_value(org));
        }
        if matches!(operation, CliCommand::InvoiceList) {
            // The name people reach for first.
            root.insert("billing invoices", Leaf::Generated(operation), shortcuts(operation, command.clone()));
        }
        root.insert(path, Leaf::Generated(operation), shortcuts(operation, command));
    }
    for (path, custom, command) in custom_commands() {
        root.insert(path, Leaf::Custom(custom), command);
    }
    root
}

/// Flags for the fields people set most, so the common creates need no
/// `--json-body` file; and `--wait` on every command that answers an Operation.
fn shortcuts(operation: CliCommand, command: Command) -> Command {
    let flag = |name: &'static str, help: &'static str| Arg::new(name).long(name).help(help);
    let command = if command.get_arguments().any(|a| a.get_id() == "json-body-template") {
        command.mut_arg("json-body-template", |arg| arg.help("Print an example body to start a --json-body file from"))
    } else {
        command
    };
    let command = match operation {
        CliCommand::ClusterCreate => {
            with_estimate(command, "Print what the cluster would cost a month; create nothing")
                .mut_arg("json-body", |arg| arg.required(false))
                .arg(
                    flag("region", "Region, e.g. eu-central-1 (see `moke region list`)")
                        .required_unless_present("json-body"),
                )
                .arg(flag("kubernetes-version", "Kubernetes version (default: the region's default)"))
                .arg(flag("control-plane-replicas", "1, or 3 for a highly available control plane"))
                .arg(
                    flag("deletion-protection", "Refuse deletes until this is turned off")
                        .action(clap::ArgAction::SetTrue),
                )
                .arg(
                    flag("node-pool", "With --estimate: a node pool to price too, MACHINE_TYPE=COUNT (repeatable)")
                        .action(clap::ArgAction::Append)
                        .requires("estimate"),
                )
        }
        CliCommand::NodePoolCreate => {
            with_estimate(command, "Print what adding the pool would do to the cluster's monthly price; add nothing")
                .mut_arg("json-body", |arg| arg.required(false))
                .arg(
                    flag("machine-type", "Machine type (see `moke machine-type list`)")
                        .required_unless_present("json-body"),
                )
                .arg(
                    flag("count", "Number of nodes")
                        .value_parser(clap::value_parser!(i64))
                        .required_unless_present("json-body"),
                )
        }
        CliCommand::NodePoolUpdate => {
            with_estimate(command, "Print what the change would do to the cluster's monthly price; change nothing")
        }
        _ => command,
    };
    let command = if output::is_mutation(operation) {
        command.arg(
            Arg::new("dry-run")
                .long("dry-run")
                .action(clap::ArgAction::SetTrue)
                .help("Print what the command would change (checked as the real call is); change nothing"),
        )
    } else {
        command
    };
    if output::answers_operation(operation) {
        let wait = Arg::new("wait")
            .long("wait")
            .action(clap::ArgAction::SetTrue)
            .help("Wait for the Operation to finish (exit non-zero if it fails)");
        command.arg(if output::is_mutation(operation) { wait.conflicts_with("dry-run") } else { wait })
    } else {
        command
    }
}

/// `--estimate`: price the command's arguments instead of applying them.
fn with_estimate(command: Command, help: &'static str) -> Command {
    command.arg(Arg::new("estimate").long("estimate").action(clap::ArgAction::SetTrue).help(help))
}

fn root_command(node: &Node) -> Command {
    node.command("moke")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Moke on the command line: clusters, workloads and IAM")
        .arg(
            Arg::new("profile")
                .long("profile")
                .global(true)
                .env("MOKE_PROFILE")
                .help("The profile to use (see `moke auth login`)"),
        )
        .arg(
            Arg::new("output")
                .short('o')
                .long("output")
                .global(true)
                .default_value("table")
                .value_parser(clap::value_parser!(Format))
                .help("How to print answers"),
        )
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<ExitCode> {
    // The profile is read before parsing: its organization is the default `--org`.
    let args: Vec<String> = std::env::args().collect();
    let asked_profile = args
        .iter()
        .position(|a| a == "--profile")
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| args.iter().find_map(|a| a.strip_prefix("--profile=").map(str::to_string)));
    let profile = config::resolve(asked_profile.as_deref());
    let node = tree(profile.as_ref().ok().and_then(|p| p.org.as_deref()));
    let matches = root_command(&node).get_matches_from(&args);
    let (leaf, leaf_matches) = node.chosen(&matches).context("no command chosen")?;
    let format = *leaf_matches.get_one::<Format>("output").unwrap_or(&Format::Table);
    let profile_name = leaf_matches.get_one::<String>("profile").cloned();
    let printer = Printer::new(format);
    match leaf {
        Leaf::Generated(operation) => {
            let client = match (profile, std::env::var("MOKE_HOST")) {
                (Ok(profile), _) => moke_sdk::Client::with_token(&profile.host, &profile.token)?,
                // Signed out, with a host: sign-up and the catalogs need no credential.
                (Err(_), Ok(host)) => moke_sdk::Client::anonymous(&host)?,
                (Err(error), Err(_)) => return Err(error),
            };
            warn_of_secrets_in_arguments(leaf_matches);
            if leaf_matches.try_get_one::<bool>("estimate").ok().flatten() == Some(&true) {
                return cmd_estimate::run(operation, &client, leaf_matches, &printer).await;
            }
            if leaf_matches.try_get_one::<bool>("dry-run").ok().flatten() == Some(&true) {
                let (planning, plan) = client.planning();
                let cli = Cli::new(planning, printer.quiet_for(plan.clone()));
                let answered = cli.execute(operation, leaf_matches).await;
                return match plan.take() {
                    Some(plan) => {
                        Printer::new(format).print_plan(&plan);
                        Ok(ExitCode::SUCCESS)
                    }
                    // Refused as the real call would be (the printer said why).
                    None if answered.is_err() => Ok(ExitCode::FAILURE),
                    None => Err(anyhow::anyhow!("the server answered as if this were no dry run")),
                };
            }
            let waits = leaf_matches.try_get_one::<bool>("wait").ok().flatten().copied().unwrap_or(false);
            let printer = if waits { Printer::holding_answer(format) } else { printer };
            let answer = printer.answer();
            let cli = Cli::new(client.clone(), printer);
            if cli.execute(operation, leaf_matches).await.is_err() {
                // The printer has already said what went wrong.
                return Ok(ExitCode::FAILURE);
            }
            let operation_id = answer.borrow().as_ref().and_then(output::operation_id);
            match operation_id {
                Some(id) if waits => {
                    let finished = cmd_operation::follow(&client, &id, std::time::Duration::from_secs(3600)).await?;
                    Printer::new(format).print(&finished);
                    Ok(cmd_operation::exit_code(&finished))
                }
                _ => Ok(ExitCode::SUCCESS),
            }
        }
        Leaf::Custom(custom) => run_custom(custom, leaf_matches, profile_name.as_deref(), &printer).await,
    }
}

/// Arguments of generated commands that carry secrets.
const SECRET_ARGUMENTS: [&str; 5] = ["password", "new-password", "token", "subject-token", "client-secret"];

/// Says so when a secret came on the command line, where other processes
/// and the shell's history see it (`--json-body FILE` keeps it out).
fn warn_of_secrets_in_arguments(matches: &ArgMatches) {
    for id in SECRET_ARGUMENTS {
        if matches.try_contains_id(id).unwrap_or(false)
            && matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        {
            eprintln!(
                "warning: --{id} on the command line is visible to other processes and kept in shell history; \
                 pass it in a --json-body file"
            );
        }
    }
}

async fn run_custom(
    custom: Custom,
    matches: &ArgMatches,
    profile: Option<&str>,
    printer: &Printer,
) -> Result<ExitCode> {
    match custom {
        Custom::AuthLogin => cmd_auth::Login::from_arg_matches(matches)?.run(profile).await,
        Custom::AuthStatus => cmd_auth::Status::from_arg_matches(matches)?.run(profile, printer).await,
        Custom::AuthLogout => cmd_auth::Logout::from_arg_matches(matches)?.run(profile).await,
        Custom::KubeconfigSave => cmd_kubeconfig::Save::from_arg_matches(matches)?.run(profile).await,
        Custom::KubeconfigToken => cmd_kubeconfig::Token::from_arg_matches(matches)?.run(profile).await,
        Custom::OperationWait => cmd_operation::Wait::from_arg_matches(matches)?.run(profile, printer).await,
        Custom::Deploy => cmd_deploy::Deploy::from_arg_matches(matches)?.run(profile, printer).await,
        Custom::Api => cmd_api::Api::from_arg_matches(matches)?.run(profile).await,
        Custom::BillingDownload => cmd_billing::Download::from_arg_matches(matches)?.run(profile).await,
        Custom::InvoicePdf => cmd_billing::Download::from_arg_matches(matches)?.in_format("pdf").run(profile).await,
        Custom::InvoiceCsv => cmd_billing::Download::from_arg_matches(matches)?.in_format("csv").run(profile).await,
        Custom::Version => {
            println!("moke {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
        Custom::Completion => {
            let shell = *matches.get_one::<clap_complete::Shell>("shell").expect("required");
            clap_complete::generate(shell, &mut root_command(&tree(None)), "moke", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    }
}
