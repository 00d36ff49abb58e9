//! The Vault (OpenBao) adapter: AppRole login and token renewal, the JWT
//! signing keys and the token pepper in KV v2, and transit encryption of
//! secrets we must store (SSO client secrets).
//!
//! Keys and pepper are read at start-up (creating them on first use, with
//! check-and-set so two gateways starting together agree) and re-read every
//! `vault.refresh_seconds`. Verification runs from that cache, so a Vault
//! outage stops only what needs Vault itself (rotation, encryption), which
//! answers 503.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::{Context, anyhow};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use moke_iam::jwt::{KeyRing, SigningKey};
use serde::{Deserialize, Serialize};
use vaultrs::client::{Client, VaultClient, VaultClientSettingsBuilder};
use vaultrs::error::ClientError;

use crate::config::Config;

const SIGNING_KEYS: &str = "jwt-signing-keys";
const PEPPER: &str = "token-pepper";
const CONSOLE_KEY: &str = "console-session-key";

#[derive(Serialize, Deserialize)]
struct StoredKeys {
    keys: Vec<SigningKey>,
}

/// A hosted cluster's certificate authority, as Vault keeps it.
#[derive(Debug, Clone)]
pub struct ClusterCa {
    /// The PKI mount holding the issuer.
    pub mount: String,
    pub issuer_id: String,
    pub key_id: String,
    pub certificate_pem: String,
}

/// A certificate Vault signed.
#[derive(Debug, Clone)]
pub struct SignedCertificate {
    pub certificate_pem: String,
    pub serial_number: String,
    /// Unix seconds.
    pub expiration: i64,
}

/// Vault could not be reached, or answered with an error (the message says
/// which); callers answer 503. The message names internal addresses and
/// paths: it goes to server logs, never to tenants.
#[derive(Debug, thiserror::Error)]
#[error("Vault: {0}")]
pub struct VaultUnavailable(pub String);

/// How [`Vault::raw`] begins the message of an error status Vault answered.
const ANSWERED: &str = "answered ";

impl VaultUnavailable {
    /// The status Vault answered with, if it answered.
    pub fn status(&self) -> Option<u16> {
        self.0.strip_prefix(ANSWERED)?.get(..3)?.parse().ok()
    }

    /// Vault refused the request itself (400, 404, 422: the request, not
    /// Vault's health, is at fault; repeating it will not help).
    pub fn refused(&self) -> bool {
        matches!(self.status(), Some(400 | 404 | 422))
    }

    /// Trouble between the gateway and Vault rather than with the request:
    /// our credential or its limits (403, 429), or Vault not answering.
    pub fn ours(&self) -> bool {
        matches!(self.status(), None | Some(403 | 429))
    }
}

/// A logged-in Vault client and the secrets cached from it.
pub struct Vault {
    client: tokio::sync::RwLock<VaultClient>,
    config: crate::config::VaultConfig,
    issuer: String,
    audience: String,
    /// Keys are dropped from the ring this long after they stop signing.
    retire_after_seconds: i64,
    keyring: RwLock<Arc<KeyRing>>,
    pepper: Vec<u8>,
    lease_seconds: std::sync::atomic::AtomicU64,
    http: reqwest::Client,
}

fn client_error(error: ClientError) -> anyhow::Error {
    anyhow!("{error}")
}

impl Vault {
    /// Logs in with AppRole and loads (or creates) the keys and pepper.
    /// Any failure is one clear error naming what to fix.
    pub async fn connect(config: &Config) -> anyhow::Result<Arc<Vault>> {
        crate::install_crypto_provider();
        let v = &config.vault;
        if v.role_id.is_empty() || v.secret_id.expose().is_empty() {
            anyhow::bail!(
                "vault.role_id and vault.secret_id are required: the gateway logs in to Vault at {} with AppRole \
                 (MOKE_VAULT__ROLE_ID, MOKE_VAULT__SECRET_ID; `cargo xtask dev` provisions a dev OpenBao)",
                v.addr
            );
        }
        let settings = VaultClientSettingsBuilder::default()
            .address(&v.addr)
            .timeout(Some(Duration::from_secs(v.timeout_seconds)))
            .build()
            .map_err(|e| anyhow!("vault settings: {e}"))?;
        let client = VaultClient::new(settings).map_err(client_error).context("vault client")?;
        let vault = Vault {
            client: tokio::sync::RwLock::new(client),
            config: v.clone(),
            issuer: config.auth.issuer.clone(),
            audience: config.auth.audience.clone(),
            retire_after_seconds: config.auth.access_token_seconds + moke_iam::jwt::LEEWAY_SECONDS as i64 + 60,
            keyring: RwLock::new(Arc::new(KeyRing::new(&[SigningKey::generate(0)], "", "").expect("a fresh key"))),
            pepper: Vec::new(),
            lease_seconds: std::sync::atomic::AtomicU64::new(0),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(v.timeout_seconds))
                .build()
                .context("vault HTTP client")?,
        };
        vault.login().await.with_context(|| format!("could not log in to Vault at {} (vault.addr)", v.addr))?;
        let pepper =
            vault.load_random_secret(PEPPER, "pepper").await.context("could not read the token pepper from Vault")?;
        let vault = Vault { pepper, ..vault };
        vault.refresh_keys().await.context("could not read the JWT signing keys from Vault")?;
        Ok(Arc::new(vault))
    }

    async fn login(&self) -> anyhow::Result<()> {
        let mut client = self.client.write().await;
        let auth = vaultrs::auth::approle::login(
            &*client,
            &self.config.approle_mount,
            &self.config.role_id,
            self.config.secret_id.expose(),
        )
        .await
        .map_err(client_error)?;
        client.set_token(&auth.client_token);
        self.lease_seconds.store(auth.lease_duration, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Renews our Vault token, logging in again when renewal fails.
    async fn renew(&self) -> anyhow::Result<()> {
        let renewed = {
            let client = self.client.read().await;
            vaultrs::token::renew_self(&*client, None).await
        };
        match renewed {
            Ok(auth) => {
                self.lease_seconds.store(auth.lease_duration, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
            Err(_) => self.login().await,
        }
    }

    fn kv(&self, name: &str) -> String {
        format!("{}/{name}", self.config.kv_path)
    }

    /// 32 random bytes kept in KV under `name` (as base64 in `field`),
    /// made on first use: with check-and-set 0, so that of two gateways
    /// starting together one writes and both read the winner.
    async fn load_random_secret(&self, name: &str, field: &str) -> anyhow::Result<Vec<u8>> {
        type Stored = std::collections::HashMap<String, String>;
        let client = self.client.read().await;
        let stored = match vaultrs::kv2::read::<Stored>(&*client, &self.config.kv_mount, &self.kv(name)).await {
            Ok(stored) => stored,
            Err(ClientError::APIError { code: 404, .. }) => {
                let mut bytes = [0u8; 32];
                rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
                let fresh = Stored::from([(field.to_string(), STANDARD.encode(bytes))]);
                let _ = vaultrs::kv2::set_with_options(
                    &*client,
                    &self.config.kv_mount,
                    &self.kv(name),
                    &fresh,
                    vaultrs::api::kv2::requests::SetSecretRequestOptions { cas: 0 },
                )
                .await;
                vaultrs::kv2::read::<Stored>(&*client, &self.config.kv_mount, &self.kv(name))
                    .await
                    .map_err(client_error)?
            }
            Err(error) => return Err(client_error(error)),
        };
        let encoded = stored.get(field).with_context(|| format!("{name} in Vault has no `{field}`"))?;
        STANDARD.decode(encoded).with_context(|| format!("{name} in Vault is not base64"))
    }

    /// The web console's key (sealed session cookies, CSRF tokens), made on
    /// first use; kept in Vault so that every gateway of a region reads the
    /// same one and a restart signs nobody out.
    pub async fn console_key(&self) -> anyhow::Result<[u8; 32]> {
        let key = self.load_random_secret(CONSOLE_KEY, "key").await?;
        key.try_into().map_err(|_| anyhow!("{CONSOLE_KEY} in Vault is not 32 bytes"))
    }

    /// Reads the signing keys (creating the first) and rebuilds the key ring.
    pub async fn refresh_keys(&self) -> anyhow::Result<()> {
        let keys = {
            let client = self.client.read().await;
            match vaultrs::kv2::read::<StoredKeys>(&*client, &self.config.kv_mount, &self.kv(SIGNING_KEYS)).await {
                Ok(stored) => stored.keys,
                Err(ClientError::APIError { code: 404, .. }) => {
                    let first = StoredKeys { keys: vec![SigningKey::generate(chrono::Utc::now().timestamp())] };
                    let _ = vaultrs::kv2::set_with_options(
                        &*client,
                        &self.config.kv_mount,
                        &self.kv(SIGNING_KEYS),
                        &first,
                        vaultrs::api::kv2::requests::SetSecretRequestOptions { cas: 0 },
                    )
                    .await;
                    vaultrs::kv2::read::<StoredKeys>(&*client, &self.config.kv_mount, &self.kv(SIGNING_KEYS))
                        .await
                        .map_err(client_error)?
                        .keys
                }
                Err(error) => return Err(client_error(error)),
            }
        };
        let ring = KeyRing::new(&keys, &self.issuer, &self.audience)
            .map_err(|e| anyhow!("the stored signing keys are unusable: {e:?}"))?;
        *self.keyring.write().expect("keyring lock") = Arc::new(ring);
        Ok(())
    }

    /// Makes a new signing key current. Tokens signed by the old one keep
    /// verifying until they expire; keys retired longer ago than a token
    /// lives are dropped.
    pub async fn rotate_signing_key(&self) -> Result<String, VaultUnavailable> {
        let unavailable = |e: ClientError| VaultUnavailable(e.to_string());
        let now = chrono::Utc::now().timestamp();
        {
            let client = self.client.read().await;
            let path = self.kv(SIGNING_KEYS);
            let metadata =
                vaultrs::kv2::read_metadata(&*client, &self.config.kv_mount, &path).await.map_err(unavailable)?;
            let mut stored: StoredKeys =
                vaultrs::kv2::read(&*client, &self.config.kv_mount, &path).await.map_err(unavailable)?;
            stored.keys.retain(|k| k.retired_at.is_none_or(|at| now - at < self.retire_after_seconds));
            for key in stored.keys.iter_mut().filter(|k| k.retired_at.is_none()) {
                key.retired_at = Some(now);
            }
            stored.keys.push(SigningKey::generate(now));
            vaultrs::kv2::set_with_options(
                &*client,
                &self.config.kv_mount,
                &path,
                &stored,
                vaultrs::api::kv2::requests::SetSecretRequestOptions { cas: metadata.current_version as u32 },
            )
            .await
            .map_err(unavailable)?;
        }
        self.refresh_keys().await.map_err(|e| VaultUnavailable(e.to_string()))?;
        Ok(self.keyring().signing_kid().to_string())
    }

    /// The cached key ring: signs and verifies without calling Vault.
    pub fn keyring(&self) -> Arc<KeyRing> {
        self.keyring.read().expect("keyring lock").clone()
    }

    /// The cached token pepper.
    pub fn pepper(&self) -> &[u8] {
        &self.pepper
    }

    fn context(org: uuid::Uuid) -> String {
        STANDARD.encode(org.as_bytes())
    }

    /// Encrypts a secret of `org` with the transit key derived for that
    /// organization; the ciphertext (`vault:vN:…`) is what may be stored.
    pub async fn encrypt(&self, org: uuid::Uuid, plaintext: &str) -> Result<String, VaultUnavailable> {
        let client = self.client.read().await;
        let encoded = STANDARD.encode(plaintext);
        let mut options = vaultrs::api::transit::requests::EncryptDataRequest::builder();
        options.context(Self::context(org));
        vaultrs::transit::data::encrypt(
            &*client,
            &self.config.transit_mount,
            &self.config.transit_key,
            &encoded,
            Some(&mut options),
        )
        .await
        .map(|r| r.ciphertext)
        .map_err(|e| VaultUnavailable(e.to_string()))
    }

    /// Decrypts what [`Vault::encrypt`] produced for the same organization.
    pub async fn decrypt(&self, org: uuid::Uuid, ciphertext: &str) -> Result<String, VaultUnavailable> {
        let client = self.client.read().await;
        let mut options = vaultrs::api::transit::requests::DecryptDataRequest::builder();
        options.context(Self::context(org));
        let response = vaultrs::transit::data::decrypt(
            &*client,
            &self.config.transit_mount,
            &self.config.transit_key,
            ciphertext,
            Some(&mut options),
        )
        .await
        .map_err(|e| VaultUnavailable(e.to_string()))?;
        let bytes = STANDARD.decode(response.plaintext).map_err(|e| VaultUnavailable(e.to_string()))?;
        String::from_utf8(bytes).map_err(|e| VaultUnavailable(e.to_string()))
    }

    /// Re-encrypts a ciphertext with the newest key version, without the
    /// plaintext ever leaving Vault.
    pub async fn rewrap(&self, org: uuid::Uuid, ciphertext: &str) -> Result<String, VaultUnavailable> {
        let body = serde_json::json!({ "ciphertext": ciphertext, "context": Self::context(org) });
        let path = format!("{}/rewrap/{}", self.config.transit_mount, self.config.transit_key);
        let answer = self.raw(reqwest::Method::POST, &path, Some(body)).await?;
        answer["data"]["ciphertext"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| VaultUnavailable("rewrap answered no ciphertext".into()))
    }

    /// Makes a new version of the secrets key current; returns its number.
    pub async fn rotate_secrets_key(&self) -> Result<u64, VaultUnavailable> {
        let path = format!("{}/keys/{}/rotate", self.config.transit_mount, self.config.transit_key);
        self.raw(reqwest::Method::POST, &path, Some(serde_json::json!({}))).await?;
        self.secrets_key_version().await
    }

    /// The newest version of the secrets key.
    pub async fn secrets_key_version(&self) -> Result<u64, VaultUnavailable> {
        let path = format!("{}/keys/{}", self.config.transit_mount, self.config.transit_key);
        let answer = self.raw(reqwest::Method::GET, &path, None).await?;
        answer["data"]["latest_version"].as_u64().ok_or_else(|| VaultUnavailable("no latest_version".into()))
    }

    /// One call to the Vault HTTP API with our token (for endpoints vaultrs
    /// does not cover, such as issuer-specific PKI paths).
    async fn raw(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, VaultUnavailable> {
        let token = self.client.read().await.settings().token.clone();
        let mut request = self
            .http
            .request(method, format!("{}/v1/{path}", self.config.addr.trim_end_matches('/')))
            .header("X-Vault-Token", token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| VaultUnavailable(e.to_string()))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| VaultUnavailable(e.to_string()))?;
        if !status.is_success() {
            let text: String = text.chars().take(300).collect();
            return Err(VaultUnavailable(format!("{ANSWERED}{status} to {path}: {text}")));
        }
        if text.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_str(&text).map_err(|e| VaultUnavailable(e.to_string()))
    }

    /// Creates the certificate authority of one hosted cluster: an
    /// intermediate signed by the Moke root, kept in Vault as its own issuer.
    pub async fn create_cluster_ca(&self, cluster: &str) -> Result<ClusterCa, VaultUnavailable> {
        let root = &self.config.pki_mount;
        let shard = crc32fast::hash(cluster.as_bytes()) % self.config.pki_cluster_mounts;
        let mount = format!("{root}-clusters-{shard}");
        let pki = &mount;
        let generated = self
            .raw(
                reqwest::Method::POST,
                &format!("{pki}/intermediate/generate/internal"),
                Some(serde_json::json!({
                    "common_name": format!("{cluster} cluster CA"),
                    "key_type": "ec", "key_bits": 256, "key_name": cluster,
                })),
            )
            .await?;
        let csr = generated["data"]["csr"].as_str().unwrap_or_default().to_string();
        let key_id = generated["data"]["key_id"].as_str().unwrap_or_default().to_string();
        let signed = self
            .raw(
                reqwest::Method::POST,
                &format!("{root}/root/sign-intermediate"),
                Some(serde_json::json!({
                    "csr": csr, "common_name": format!("{cluster} cluster CA"), "ttl": "87000h",
                    "use_csr_values": true,
                })),
            )
            .await?;
        let certificate = signed["data"]["certificate"].as_str().unwrap_or_default().to_string();
        let imported = self
            .raw(
                reqwest::Method::POST,
                &format!("{pki}/intermediate/set-signed"),
                Some(serde_json::json!({ "certificate": certificate })),
            )
            .await?;
        let issuer_id = imported["data"]["imported_issuers"][0]
            .as_str()
            .ok_or_else(|| VaultUnavailable("set-signed imported no issuer".into()))?
            .to_string();
        self.raw(
            reqwest::Method::PATCH,
            &format!("{pki}/issuer/{issuer_id}"),
            Some(serde_json::json!({ "issuer_name": cluster })),
        )
        .await
        .ok();
        Ok(ClusterCa { mount, issuer_id, key_id, certificate_pem: certificate })
    }

    /// Signs a CSR with a cluster's issuer under `role` (`kube-client` or
    /// `kube-serving`), keeping the CSR's subject (CN, O = groups, OU) and SANs.
    /// Whether Vault answers as a healthy, unsealed, active server
    /// (`sys/health` answers 200): an error it gave meanwhile was about the
    /// request, not an outage.
    pub async fn healthy(&self) -> bool {
        // A standby of an HA cluster answers 429/473 unless told it may count as up.
        self.raw(reqwest::Method::GET, "sys/health?standbyok=true&perfstandbyok=true", None).await.is_ok()
    }

    pub async fn sign_verbatim(
        &self,
        mount: &str,
        issuer_id: &str,
        role: &str,
        csr_pem: &str,
        ttl_seconds: i64,
    ) -> Result<SignedCertificate, VaultUnavailable> {
        let signed = self
            .raw(
                reqwest::Method::POST,
                &format!("{mount}/issuer/{issuer_id}/sign-verbatim/{role}"),
                Some(serde_json::json!({ "csr": csr_pem, "ttl": format!("{ttl_seconds}s") })),
            )
            .await?;
        Ok(SignedCertificate {
            certificate_pem: signed["data"]["certificate"].as_str().unwrap_or_default().to_string(),
            serial_number: signed["data"]["serial_number"].as_str().unwrap_or_default().to_string(),
            expiration: signed["data"]["expiration"].as_i64().unwrap_or_default(),
        })
    }

    /// Destroys a cluster's certificate authority (issuer and key).
    pub async fn delete_cluster_ca(&self, mount: &str, issuer_id: &str, key_id: &str) -> Result<(), VaultUnavailable> {
        let pki = mount;
        self.raw(reqwest::Method::DELETE, &format!("{pki}/issuer/{issuer_id}"), None).await?;
        if !key_id.is_empty() {
            self.raw(reqwest::Method::DELETE, &format!("{pki}/key/{key_id}"), None).await?;
        }
        Ok(())
    }

    /// Keeps the token alive and the keys current until `shutdown`.
    pub async fn maintain(self: Arc<Self>, shutdown: tokio_util::sync::CancellationToken) {
        let mut refresh = tokio::time::interval(Duration::from_secs(self.config.refresh_seconds));
        refresh.tick().await;
        let renew_after = |vault: &Vault| {
            let lease = vault.lease_seconds.load(std::sync::atomic::Ordering::Relaxed);
            // A token without a lease (root, in tests) needs no renewal.
            let wait = if lease == 0 { 3600 } else { (lease / 2).max(5) };
            tokio::time::Instant::now() + Duration::from_secs(wait)
        };
        let mut renew_at = renew_after(&self);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = refresh.tick() => {
                    if let Err(error) = self.refresh_keys().await {
                        tracing::warn!(error = %format!("{error:#}"), "could not refresh signing keys from Vault; using cached keys");
                    }
                }
                _ = tokio::time::sleep_until(renew_at) => {
                    if let Err(error) = self.renew().await {
                        tracing::warn!(error = %format!("{error:#}"), "could not renew the Vault token");
                    }
                    renew_at = renew_after(&self);
                }
            }
        }
    }
}

#[cfg(test)]
mod refusal_tests {
    use super::*;

    #[test]
    fn a_refusal_is_told_from_an_outage() {
        let answered = |status: &str| VaultUnavailable(format!("{ANSWERED}{status} to pki/issuer/x/sign: denied"));
        assert!(answered("400 Bad Request").refused());
        assert!(!answered("403 Forbidden").refused(), "our own token or policy: an outage");
        assert!(answered("403 Forbidden").ours() && answered("429 Too Many Requests").ours());
        assert!(answered("404 Not Found").refused());
        assert!(!answered("503 Service Unavailable").refused(), "Vault's own trouble is an outage");
        assert!(!VaultUnavailable("error sending request for url".into()).refused());
    }
}
