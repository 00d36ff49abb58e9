//! Layered, validated configuration.
//!
//! Precedence, lowest first: the documented defaults in `config/defaults.toml`
//! (embedded in the binary), an optional config file, `MOKE_*` environment
//! variables (`MOKE_SECTION__KEY`), then command-line flags. [`Config::validate`]
//! runs at start-up and names the first bad key.

use std::collections::BTreeSet;
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;

use chrono::NaiveDate;
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

/// The documented defaults, embedded so the binary runs with no files at all.
pub const DEFAULTS_TOML: &str = include_str!("../config/defaults.toml");

/// A secret value: usable by the program, shown as `<redacted>` in `Debug`
/// output and logs.
#[derive(Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }
    /// The secret itself; call only where it is used, never to log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub http: HttpConfig,
    pub database: DatabaseConfig,
    pub telemetry: TelemetryConfig,
    pub idempotency: IdempotencyConfig,
    pub outbox: OutboxConfig,
    pub queue: QueueConfig,
    pub quotas: QuotaDefaults,
    pub workload_quotas: WorkloadQuotas,
    pub webhooks: WebhookConfig,
    pub vault: VaultConfig,
    pub auth: AuthConfig,
    pub mail: MailConfig,
    pub outbound: OutboundConfig,
    pub rate_limits: RateLimitConfig,
    pub catalog: Catalog,
    pub billing: BillingConfig,
    pub lifecycle: LifecycleConfig,
}

/// Automatic cluster upgrades (release channels, versions past their end of life).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LifecycleConfig {
    /// How often clusters are checked for automatic upgrades.
    pub auto_upgrade_every_seconds: u64,
    /// Hours from telling a cluster's owners of an automatic upgrade to its
    /// earliest start.
    pub auto_upgrade_notice_hours: u32,
}

/// Invoicing: when a month's invoice is final.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BillingConfig {
    /// Hours after a month's end during which its usage still lands on it.
    pub grace_hours: u32,
    pub finalize_every_seconds: u64,
    pub budget_every_seconds: u64,
    pub max_budgets: i64,
    /// The plan of an organization that has not chosen one.
    pub default_plan: String,
    /// What customers can choose between; each sets quota limits.
    pub plans: Vec<Plan>,
}

impl BillingConfig {
    /// The plan `id`, or the default plan when there is no such plan (an
    /// organization whose plan was taken out of the configuration).
    pub fn plan(&self, id: Option<&str>) -> &Plan {
        let wanted = id.unwrap_or(&self.default_plan);
        let chosen = self.plans.iter().find(|p| p.id == wanted);
        if chosen.is_none() && id.is_some() {
            tracing::error!(plan = wanted, "an organization's plan is no longer configured; the default plan applies");
        }
        chosen
            .or_else(|| self.plans.iter().find(|p| p.id == self.default_plan))
            .expect("validated: the default plan exists")
    }
}

/// A plan customers can choose: the quota limits it sets, over `[quotas]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Stable, e.g. `business`.
    pub id: String,
    pub display_name: String,
    pub description: String,
    /// The limits this plan sets; the rest are `[quotas]`'s.
    #[serde(default)]
    pub quotas: QuotaLimits,
    /// Whether billing managers may move to this plan themselves (off
    /// unless stated): a plan whose limits invite abuse (a stolen card
    /// mining on a thousand nodes) is given by Moke's operators
    /// (`moke-server billing set-plan`).
    #[serde(default)]
    pub self_serve: bool,
}

/// Where the gateway's keys and peppers live: Vault (OpenBao), via AppRole.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VaultConfig {
    pub addr: String,
    pub approle_mount: String,
    pub role_id: String,
    pub secret_id: Secret,
    pub kv_mount: String,
    pub kv_path: String,
    pub transit_mount: String,
    pub transit_key: String,
    pub pki_mount: String,
    pub pki_cluster_mounts: u32,
    pub pki_concurrency: usize,
    pub refresh_seconds: u64,
    pub timeout_seconds: u64,
}

/// Sign-in, sessions and credentials.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    pub issuer: String,
    pub audience: String,
    pub access_token_seconds: i64,
    pub session_days: i64,
    pub email_verification_hours: i64,
    pub password_reset_minutes: i64,
    pub invitation_days: i64,
    pub exchanged_token_seconds: i64,
    pub id_token_clock_skew_seconds: i64,
    pub sso_redirect_uri: String,
    pub allow_insecure_issuers: bool,
    /// How long the link confirming an SSO identity for an existing account stays valid.
    pub sso_link_minutes: i64,
    /// Where domain-ownership TXT records are looked up: "system" (the
    /// machine's resolver configuration) or the `IP:port` of a DNS server.
    pub dns_resolver: String,
    /// Default lifetime of kubeconfig client certificates.
    pub kubeconfig_default_seconds: i64,
    /// Longest lifetime a kubeconfig client certificate may be asked for.
    pub kubeconfig_max_seconds: i64,
}

/// Outgoing e-mail.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MailConfig {
    /// "smtp", "file" or "log" (see defaults.toml).
    pub sender: String,
    pub from: String,
    /// For "smtp": `smtp://host:port` (STARTTLS required), `smtps://host:port`,
    /// or `smtp://host:port?tls=none` on a trusted network; credentials in the URL.
    pub smtp_url: Secret,
    /// For "file": the folder each message is written to, one file per message.
    pub file_dir: String,
}

/// Requests Moke makes to addresses customers chose.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutboundConfig {
    /// Networks outbound requests may reach although not public (CIDRs):
    /// an identity provider on a private network the operator trusts.
    pub allow_private_targets: Vec<String>,
    pub timeout_seconds: u64,
}

/// Request rate limits (GCRA): sustained rate per second and burst.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitConfig {
    pub per_principal_per_second: u32,
    pub per_principal_burst: u32,
    pub per_ip_per_second: u32,
    pub per_ip_burst: u32,
    pub login_per_ip_per_minute: u32,
    pub login_burst: u32,
    pub login_failures_before_backoff: i32,
    pub login_backoff_max_seconds: i64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    pub listen: String,
    pub max_body_bytes: usize,
    pub request_timeout_seconds: u64,
    pub max_wait_seconds: u64,
    pub public_url: String,
    /// Where the console's script is (empty: none); see `moke_console::ConsoleScript`.
    pub console_script_dir: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: Secret,
    pub max_connections: u32,
    pub acquire_timeout_seconds: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    pub log_format: String,
    pub log_filter: String,
    pub otlp_endpoint: String,
    pub service_name: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IdempotencyConfig {
    pub retention_hours: u32,
    /// No longer used (a key is held by its request's transaction, and freed
    /// with it); still accepted so existing configuration files load.
    #[serde(default, skip_serializing)]
    pub lock_seconds: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutboxConfig {
    pub retry_base_seconds: u32,
    pub retry_max_seconds: u32,
    pub batch_size: u32,
    pub max_backlog_per_region: i64,
    pub region_stale_after_seconds: i64,
    pub repair_after_seconds: i64,
    /// How old a region report that fails alone must be (besides failing
    /// five times) before it is set aside as a dead letter.
    #[serde(default = "default_report_dead_letter_after_seconds")]
    pub report_dead_letter_after_seconds: i64,
}

fn default_report_dead_letter_after_seconds() -> i64 {
    300
}

/// The transport between the gateway and the region agents.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    pub backend: String,
    pub nats_url: Secret,
    pub nats_prefix: String,
    pub nats_max_messages_per_region: i64,
}

impl QueueConfig {
    pub fn is_nats(&self) -> bool {
        self.backend == "nats"
    }
}

/// Limits every organization gets unless overridden.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct QuotaDefaults {
    pub max_clusters: i64,
    pub max_node_pools_per_cluster: i64,
    pub max_nodes: i64,
    pub max_vcpus: i64,
    pub max_webhook_endpoints: i64,
    /// Invitations not yet accepted, revoked or expired.
    pub max_pending_invitations: i64,
    pub max_service_accounts: i64,
    /// API tokens not revoked and not expired.
    pub max_api_tokens: i64,
    pub max_trust_policies: i64,
    pub max_deploy_hooks: i64,
    pub max_namespaces_per_cluster: i64,
    /// Invitation e-mails an organization may send per hour.
    pub max_invitations_per_hour: i64,
}

/// Writes [`QuotaLimits`] with one optional field per [`QuotaDefaults`] field.
macro_rules! quota_limits {
    ($($field:ident),* $(,)?) => {
        /// Some quota limits, each replacing the same limit of a
        /// [`QuotaDefaults`] (a plan's, or an organization's overrides).
        #[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
        #[serde(deny_unknown_fields)]
        pub struct QuotaLimits {
            $(pub $field: Option<i64>,)*
        }

        impl QuotaLimits {
            /// `base` with these limits in place of its own, and the names of
            /// the quotas replaced (`max_` taken off, as `quota_view` names them).
            pub fn over(&self, base: &QuotaDefaults) -> (QuotaDefaults, Vec<&'static str>) {
                let (mut limits, mut replaced) = (*base, Vec::new());
                $(if let Some(limit) = self.$field {
                    limits.$field = limit;
                    replaced.push(stringify!($field).trim_start_matches("max_"));
                })*
                (limits, replaced)
            }

            /// Every limit set, by its configuration name, with its value.
            pub fn set(&self) -> Vec<(&'static str, i64)> {
                let mut set = Vec::new();
                $(if let Some(limit) = self.$field { set.push((stringify!($field), limit)); })*
                set
            }

            /// Sets (or with `None` clears) the limit named `name` (its
            /// configuration name, `max_…`, or the quota's, without `max_`).
            /// False when there is no such quota.
            pub fn put(&mut self, name: &str, limit: Option<i64>) -> bool {
                let name = name.strip_prefix("max_").unwrap_or(name);
                $(if stringify!($field).trim_start_matches("max_") == name {
                    self.$field = limit;
                    return true;
                })*
                false
            }
        }
    };
}

quota_limits!(
    max_clusters,
    max_node_pools_per_cluster,
    max_nodes,
    max_vcpus,
    max_webhook_endpoints,
    max_pending_invitations,
    max_service_accounts,
    max_api_tokens,
    max_trust_policies,
    max_deploy_hooks,
    max_namespaces_per_cluster,
    max_invitations_per_hour,
);

/// Delivery of customer event webhooks.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// Delay before each attempt (the first is immediate); jitter of ±20% is added.
    pub retry_schedule_seconds: Vec<f64>,
    /// An endpoint failing this long is disabled (and an event says so).
    pub disable_after_failing_hours: i64,
    pub timeout_seconds: u64,
    /// Deliveries in flight at once per gateway.
    pub concurrency: usize,
}

/// Limits on what runs inside each hosted cluster.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WorkloadQuotas {
    pub max_deployments_per_cluster: i64,
    /// Sum over a cluster's deployments of replicas × CPU request, in thousandths of a CPU.
    pub max_requested_cpu_millis_per_cluster: i64,
}

/// What customers can choose from.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    pub regions: Vec<RegionEntry>,
    pub kubernetes_versions: Vec<KubernetesVersionEntry>,
    pub machine_types: Vec<MachineTypeEntry>,
}

#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionEntry {
    /// Region name used in cluster specs, e.g. `eu-central-1`.
    pub name: String,
    pub display_name: String,
    /// Availability zones node pools can be spread over.
    pub zones: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "KubernetesVersion")]
#[serde(deny_unknown_fields)]
pub struct KubernetesVersionEntry {
    /// Minor version, e.g. `1.33`.
    pub version: String,
    /// The version new clusters get when they do not name one.
    #[serde(default)]
    pub default: bool,
    /// After this day the version is refused for new clusters and upgrades.
    pub end_of_life: NaiveDate,
}

#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema, async_graphql::SimpleObject)]
#[graphql(name = "MachineType")]
#[serde(deny_unknown_fields)]
pub struct MachineTypeEntry {
    pub name: String,
    pub vcpus: i64,
    pub memory_gib: i64,
    /// Key of this machine type's hourly price in the price catalog.
    pub price_key: String,
}

/// A configuration problem, naming the key.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {key}: {reason}")]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
}

fn bad(key: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError { key: key.to_string(), reason: reason.into() }
}

/// Overrides given as command-line flags (the highest layer).
#[derive(Debug, Default, Clone, Serialize)]
pub struct FlagOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpFlags>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseFlags>,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct HttpFlags {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct DatabaseFlags {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl Config {
    /// Loads every layer and validates the result.
    pub fn load(file: Option<&Path>, flags: &FlagOverrides) -> Result<Config, ConfigError> {
        let mut figment = Figment::from(Toml::string(DEFAULTS_TOML));
        if let Some(path) = file {
            if !path.exists() {
                return Err(bad("--config", format!("file {} does not exist", path.display())));
            }
            figment = figment.merge(Toml::file(path));
        }
        if let (Ok(url), None) = (std::env::var("DATABASE_URL"), std::env::var_os("MOKE_DATABASE__URL")) {
            figment = figment.merge(Serialized::default("database.url", url));
        }
        // MOKE_CONFIG names the file (a flag's environment form), not a key.
        figment = figment.merge(Env::prefixed("MOKE_").ignore(&["config"]).split("__"));
        figment = figment.merge(Serialized::defaults(flags));
        let config: Config = figment.extract().map_err(|error| {
            let key = error.path.join(".");
            let key = if key.is_empty() { "config".to_string() } else { key };
            bad(&key, error.kind.to_string())
        })?;
        config.validate()?;
        Ok(config)
    }

    /// The embedded defaults alone (tests start from these).
    pub fn defaults() -> Config {
        Config::load(None, &FlagOverrides::default()).expect("embedded defaults are valid")
    }

    /// Checks what types cannot: ranges, references between keys, uniqueness.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.http.listen.parse::<SocketAddr>().map_err(|e| bad("http.listen", format!("not a socket address: {e}")))?;
        if self.http.max_body_bytes < 1024 {
            return Err(bad("http.max_body_bytes", "must be at least 1024"));
        }
        if self.http.request_timeout_seconds == 0 {
            return Err(bad("http.request_timeout_seconds", "must be positive"));
        }
        if self.http.max_wait_seconds >= self.http.request_timeout_seconds {
            return Err(bad("http.max_wait_seconds", "must be below http.request_timeout_seconds"));
        }
        if self.billing.finalize_every_seconds == 0 {
            return Err(bad("billing.finalize_every_seconds", "must be positive"));
        }
        if self.billing.budget_every_seconds == 0 {
            return Err(bad("billing.budget_every_seconds", "must be positive"));
        }
        if !(1..=1800).contains(&self.lifecycle.auto_upgrade_every_seconds) {
            // A window is an hour at least: checked every half hour, none is missed.
            return Err(bad("lifecycle.auto_upgrade_every_seconds", "between 1 and 1800"));
        }
        if !(1..=24 * 90).contains(&self.lifecycle.auto_upgrade_notice_hours) {
            return Err(bad("lifecycle.auto_upgrade_notice_hours", "between 1 and 2160 (90 days)"));
        }
        let mut plan_ids = BTreeSet::new();
        for (i, plan) in self.billing.plans.iter().enumerate() {
            let valid_id = !plan.id.is_empty()
                && plan.id.len() <= 32
                && plan.id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !valid_id || !plan_ids.insert(plan.id.as_str()) {
                return Err(bad(&format!("billing.plans[{i}].id"), "1-32 lowercase letters, digits or '-', unique"));
            }
            if let Some((name, _)) = plan.quotas.set().into_iter().find(|(_, limit)| *limit < 0) {
                return Err(bad(&format!("billing.plans[{i}].quotas.{name}"), "must not be negative"));
            }
        }
        if !plan_ids.contains(self.billing.default_plan.as_str()) {
            return Err(bad("billing.default_plan", "must be the id of one of billing.plans"));
        }
        if self.billing.grace_hours > 24 * 28 {
            return Err(bad("billing.grace_hours", "at most 672 (four weeks)"));
        }
        let hooks = &self.webhooks;
        if hooks.retry_schedule_seconds.is_empty()
            || hooks.retry_schedule_seconds.iter().any(|s| s.is_nan() || *s < 0.0)
        {
            return Err(bad("webhooks.retry_schedule_seconds", "must list at least one delay, none negative"));
        }
        if hooks.concurrency == 0 || hooks.timeout_seconds == 0 {
            return Err(bad("webhooks.concurrency", "concurrency and timeout_seconds must be positive"));
        }
        for (i, net) in self.outbound.allow_private_targets.iter().enumerate() {
            net.parse::<ipnet::IpNet>()
                .map_err(|e| bad(&format!("outbound.allow_private_targets[{i}]"), format!("not a CIDR: {e}")))?;
        }
        if self.outbound.timeout_seconds == 0 {
            return Err(bad("outbound.timeout_seconds", "must be positive"));
        }
        match self.mail.sender.as_str() {
            "log" | "file" => {}
            "smtp" => {
                let url = self.mail.smtp_url.expose();
                if !(url.starts_with("smtp://") || url.starts_with("smtps://")) {
                    return Err(bad(
                        "mail.smtp_url",
                        "must be an smtp:// or smtps:// URL when mail.sender is \"smtp\"",
                    ));
                }
            }
            _ => return Err(bad("mail.sender", "must be \"smtp\", \"file\" or \"log\"")),
        }
        if self.mail.sender == "file" && self.mail.file_dir.is_empty() {
            return Err(bad("mail.file_dir", "must name a folder when mail.sender is \"file\""));
        }
        if self.auth.dns_resolver != "system" && self.auth.dns_resolver.parse::<SocketAddr>().is_err() {
            return Err(bad("auth.dns_resolver", "must be \"system\" or an IP:port"));
        }
        if self.auth.kubeconfig_default_seconds < 600
            || self.auth.kubeconfig_default_seconds > self.auth.kubeconfig_max_seconds
        {
            return Err(bad(
                "auth.kubeconfig_default_seconds",
                "must be at least 600 and at most auth.kubeconfig_max_seconds",
            ));
        }
        if !self.database.url.expose().starts_with("postgres://")
            && !self.database.url.expose().starts_with("postgresql://")
        {
            return Err(bad("database.url", "must be a postgres:// URL"));
        }
        if self.database.max_connections == 0 {
            return Err(bad("database.max_connections", "must be positive"));
        }
        if !matches!(self.telemetry.log_format.as_str(), "text" | "json") {
            return Err(bad("telemetry.log_format", "must be \"text\" or \"json\""));
        }
        tracing_subscriber::EnvFilter::try_new(&self.telemetry.log_filter)
            .map_err(|e| bad("telemetry.log_filter", e.to_string()))?;
        if !self.telemetry.otlp_endpoint.is_empty() && !self.telemetry.otlp_endpoint.starts_with("http") {
            return Err(bad("telemetry.otlp_endpoint", "must be an http(s) URL or empty"));
        }
        if self.idempotency.retention_hours == 0 {
            return Err(bad("idempotency.retention_hours", "must be positive"));
        }
        if self.outbox.batch_size == 0 {
            return Err(bad("outbox.batch_size", "must be positive"));
        }
        if self.outbox.max_backlog_per_region <= 0 {
            return Err(bad("outbox.max_backlog_per_region", "must be positive"));
        }
        if self.outbox.report_dead_letter_after_seconds < 0 {
            return Err(bad("outbox.report_dead_letter_after_seconds", "must not be negative"));
        }
        if self.outbox.repair_after_seconds <= 0 {
            return Err(bad("outbox.repair_after_seconds", "must be positive"));
        }
        if self.outbox.region_stale_after_seconds <= 0 {
            return Err(bad("outbox.region_stale_after_seconds", "must be positive"));
        }
        if !matches!(self.queue.backend.as_str(), "postgres" | "nats") {
            return Err(bad("queue.backend", "must be \"postgres\" or \"nats\""));
        }
        if !self.queue.nats_url.expose().starts_with("nats://") {
            return Err(bad("queue.nats_url", "must be a nats:// URL"));
        }
        if self.queue.nats_prefix.is_empty()
            || !self.queue.nats_prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(bad("queue.nats_prefix", "must be letters, digits or '_'"));
        }
        if self.queue.nats_max_messages_per_region <= 0 {
            return Err(bad("queue.nats_max_messages_per_region", "must be positive"));
        }
        if !self.vault.addr.starts_with("http://") && !self.vault.addr.starts_with("https://") {
            return Err(bad("vault.addr", "must be an http(s) URL"));
        }
        if self.vault.pki_cluster_mounts == 0 || self.vault.pki_concurrency == 0 {
            return Err(bad("vault.pki_cluster_mounts", "pki_cluster_mounts and pki_concurrency must be positive"));
        }
        if self.vault.refresh_seconds == 0 || self.vault.timeout_seconds == 0 {
            return Err(bad("vault.refresh_seconds", "refresh_seconds and timeout_seconds must be positive"));
        }
        if self.auth.issuer.is_empty() || self.auth.audience.is_empty() {
            return Err(bad("auth.issuer", "issuer and audience must be set"));
        }
        if !(60..=3600).contains(&self.auth.access_token_seconds) {
            return Err(bad("auth.access_token_seconds", "must be between 60 and 3600"));
        }
        if !(60..=3600).contains(&self.auth.exchanged_token_seconds) {
            return Err(bad("auth.exchanged_token_seconds", "must be between 60 and 3600"));
        }
        for (key, value) in [
            ("auth.session_days", self.auth.session_days),
            ("auth.email_verification_hours", self.auth.email_verification_hours),
            ("auth.password_reset_minutes", self.auth.password_reset_minutes),
            ("auth.invitation_days", self.auth.invitation_days),
        ] {
            if value <= 0 {
                return Err(bad(key, "must be positive"));
            }
        }
        if !(0..=300).contains(&self.auth.id_token_clock_skew_seconds) {
            return Err(bad("auth.id_token_clock_skew_seconds", "must be between 0 and 300"));
        }
        let r = &self.rate_limits;
        for (key, value) in [
            ("rate_limits.per_principal_per_second", r.per_principal_per_second),
            ("rate_limits.per_principal_burst", r.per_principal_burst),
            ("rate_limits.per_ip_per_second", r.per_ip_per_second),
            ("rate_limits.per_ip_burst", r.per_ip_burst),
            ("rate_limits.login_per_ip_per_minute", r.login_per_ip_per_minute),
            ("rate_limits.login_burst", r.login_burst),
        ] {
            if value == 0 {
                return Err(bad(key, "must be positive"));
            }
        }
        let q = &self.quotas;
        for (key, value) in [
            ("quotas.max_clusters", q.max_clusters),
            ("quotas.max_node_pools_per_cluster", q.max_node_pools_per_cluster),
            ("quotas.max_nodes", q.max_nodes),
            ("quotas.max_vcpus", q.max_vcpus),
            ("workload_quotas.max_deployments_per_cluster", self.workload_quotas.max_deployments_per_cluster),
            (
                "workload_quotas.max_requested_cpu_millis_per_cluster",
                self.workload_quotas.max_requested_cpu_millis_per_cluster,
            ),
        ] {
            if value < 0 {
                return Err(bad(key, "must not be negative"));
            }
        }
        self.catalog.validate()
    }
}

impl Catalog {
    fn validate(&self) -> Result<(), ConfigError> {
        if self.regions.is_empty() {
            return Err(bad("catalog.regions", "at least one region is required"));
        }
        let mut names = BTreeSet::new();
        for (i, region) in self.regions.iter().enumerate() {
            if !names.insert(&region.name) {
                return Err(bad(&format!("catalog.regions[{i}].name"), "duplicate region"));
            }
            // A region's name is one token of its queue subjects: no dots or wildcards.
            let name_fits = (1..=63).contains(&region.name.len())
                && region.name.starts_with(|c: char| c.is_ascii_lowercase())
                && region.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !name_fits {
                return Err(bad(&format!("catalog.regions[{i}].name"), "lowercase letters, digits and hyphens"));
            }
            if region.zones.is_empty() {
                return Err(bad(&format!("catalog.regions[{i}].zones"), "needs at least one zone"));
            }
        }
        let defaults = self.kubernetes_versions.iter().filter(|v| v.default).count();
        if defaults != 1 {
            return Err(bad(
                "catalog.kubernetes_versions",
                format!("exactly one version must be the default, found {defaults}"),
            ));
        }
        let mut names = BTreeSet::new();
        for (i, machine) in self.machine_types.iter().enumerate() {
            if !names.insert(&machine.name) {
                return Err(bad(&format!("catalog.machine_types[{i}].name"), "duplicate"));
            }
            if machine.vcpus <= 0 || machine.memory_gib <= 0 {
                return Err(bad(&format!("catalog.machine_types[{i}]"), "vcpus and memory_gib must be positive"));
            }
            // Every machine type offered has a price, under its price_key,
            // in the version in effect and in every later one.
            let prices = crate::app::billing::prices();
            let now = chrono::Utc::now();
            let current = prices
                .version_at(now)
                .map_err(|e| bad("catalog.machine_types", format!("billing/catalog.toml: {e}")))?;
            let priced = prices
                .versions()
                .iter()
                .filter(|version| version.effective_from > now || version.id == current.id)
                .all(|version| version.node(&machine.name).is_some_and(|sku| sku.id == machine.price_key));
            if !priced {
                return Err(bad(
                    &format!("catalog.machine_types[{i}].price_key"),
                    "must name this machine type's node price in the current and later versions of billing/catalog.toml",
                ));
            }
        }
        Ok(())
    }

    pub fn region(&self, name: &str) -> Option<&RegionEntry> {
        self.regions.iter().find(|r| r.name == name)
    }

    pub fn kubernetes_version(&self, version: &str) -> Option<&KubernetesVersionEntry> {
        self.kubernetes_versions.iter().find(|v| v.version == version)
    }

    pub fn default_kubernetes_version(&self) -> &KubernetesVersionEntry {
        self.kubernetes_versions.iter().find(|v| v.default).expect("validated: one default")
    }

    pub fn machine_type(&self, name: &str) -> Option<&MachineTypeEntry> {
        self.machine_types.iter().find(|m| m.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_redacted() {
        let config = Config::defaults();
        assert!(!format!("{config:?}").contains("postgres://"));
    }

    #[test]
    fn bad_values_name_their_key() {
        let mut config = Config::defaults();
        config.http.listen = "nowhere".into();
        let error = config.validate().unwrap_err();
        assert_eq!(error.key, "http.listen");

        let mut config = Config::defaults();
        config.catalog.kubernetes_versions.iter_mut().for_each(|v| v.default = false);
        assert_eq!(config.validate().unwrap_err().key, "catalog.kubernetes_versions");

        // A region's name is one token of its NATS subjects.
        for name in ["status.eu-1", "eu.*", "EU-1", ""] {
            let mut config = Config::defaults();
            config.catalog.regions[0].name = name.into();
            assert_eq!(config.validate().unwrap_err().key, "catalog.regions[0].name", "{name:?}");
        }
    }
}
