//! CI/CD workload identity: a CI job's OIDC ID token is exchanged for a
//! short-lived token of a service account whose trust policy it matches
//! (issuer, audience and required claims such as repository, ref and
//! environment). Each ID token (`iss`, `jti`) is accepted once.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use moke_iam::id_token::{self, IdTokenError};
use moke_iam::{OrgRole, PrincipalKind};
use serde_json::json;

use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, RequestContext, Result};
use crate::ids::{OrgId, ServiceAccountId};
use crate::model::*;

/// Issuers' keys are re-read this often, or sooner when a token names an
/// unknown key (at most once per [`REFETCH_AFTER`]).
const KEYS_TTL: Duration = Duration::from_secs(300);
const REFETCH_AFTER: Duration = Duration::from_secs(30);
/// The longest remaining lifetime an exchanged ID token may have.
const MAX_SUBJECT_TOKEN_SECONDS: i64 = 24 * 3600;

/// Public keys of CI issuers, by issuer.
#[derive(Default)]
pub struct IssuerKeys {
    keys: Mutex<HashMap<String, (Instant, JwkSet)>>,
}

impl App {
    /// Reads an issuer's keys through the guarded outbound client.
    async fn fetch_issuer_keys(&self, issuer: &str) -> anyhow::Result<JwkSet> {
        let discovery: serde_json::Value =
            self.outbound().get_json(&format!("{issuer}/.well-known/openid-configuration")).await?;
        let jwks_uri = discovery["jwks_uri"].as_str().ok_or_else(|| anyhow::anyhow!("no jwks_uri"))?;
        Ok(self.outbound().get_json(jwks_uri).await?)
    }

    async fn issuer_keys(&self, issuer: &str, refresh: bool) -> Result<JwkSet> {
        let cached = self.issuer_key_cache().keys.lock().expect("issuer keys lock").get(issuer).cloned();
        if let Some((fetched, keys)) = &cached {
            let age = fetched.elapsed();
            if age < KEYS_TTL && !(refresh && age > REFETCH_AFTER) {
                return Ok(keys.clone());
            }
        }
        match self.fetch_issuer_keys(issuer).await {
            Ok(keys) => {
                self.issuer_key_cache()
                    .keys
                    .lock()
                    .expect("issuer keys lock")
                    .insert(issuer.to_string(), (Instant::now(), keys.clone()));
                Ok(keys)
            }
            Err(error) => {
                tracing::warn!(%issuer, error = %format!("{error:#}"), "could not read the issuer's keys");
                cached.map(|(_, keys)| keys).ok_or(Error::Unavailable {
                    detail: "the token's issuer cannot be reached".into(),
                    retry_after_seconds: 5,
                })
            }
        }
    }

    /// `token_exchange`: a CI ID token for a short-lived service-account token.
    pub async fn token_exchange(&self, ctx: &RequestContext, input: TokenExchangeRequest) -> Result<ExchangedToken> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let account: ServiceAccountId = input.service_account.parse().map_err(|_| Error::Unauthenticated)?;
        let found = crate::app::iam::store::service_accounts::live_trust_policies(
            &mut *self.db().acquire().await?,
            account.uuid(),
        )
        .await?;
        let Some(org) = found.first().map(|p| p.org_id) else {
            return Err(Error::Unauthenticated);
        };
        let refuse = |reason: &str, details: serde_json::Value| {
            let reason = reason.to_string();
            async move {
                let mut conn = self.db().acquire().await?;
                let mut actor = RequestContext::system(org);
                actor.principal.kind = PrincipalKind::ServiceAccount;
                actor.principal.id = account.uuid();
                let actor = RequestContext { principal: actor.principal, ..ctx.clone() };
                audit::insert(
                    &mut conn,
                    &actor,
                    org,
                    "failure",
                    AuditRecord {
                        action: "auth.token_exchange",
                        resource_type: "service_account",
                        resource_id: Some(account.to_string()),
                        details: json!({ "reason": reason, "token": details }),
                    },
                )
                .await?;
                Err::<ExchangedToken, Error>(Error::Unauthenticated)
            }
        };
        let Some(issuer) = id_token::unverified_issuer(&input.subject_token) else {
            return refuse("malformed", json!(null)).await;
        };
        let issuer = issuer.trim_end_matches('/').to_string();
        let policies: Vec<_> = found.iter().filter(|p| p.issuer == issuer).collect();
        if policies.is_empty() {
            return refuse("no_policy_for_issuer", json!({ "iss": issuer })).await;
        }
        let leeway = self.config().auth.id_token_clock_skew_seconds as u64;
        let mut last_error = IdTokenError::WrongAudience;
        let mut accepted = None;
        for policy in &policies {
            let mut keys = self.issuer_keys(&issuer, false).await?;
            let mut verified = id_token::verify(&input.subject_token, &keys, &issuer, &policy.audience, leeway);
            if verified == Err(IdTokenError::UnknownKey) {
                keys = self.issuer_keys(&issuer, true).await?;
                verified = id_token::verify(&input.subject_token, &keys, &issuer, &policy.audience, leeway);
            }
            match verified {
                Ok(claims) => {
                    let required: BTreeMap<String, String> =
                        serde_json::from_value(policy.claims.clone()).unwrap_or_default();
                    if crate::app::iam::service_accounts::claims_match(&required, &claims) {
                        accepted = Some((claims, policy.policy_id, policy.expires_at));
                        break;
                    }
                    last_error = IdTokenError::MissingClaim;
                }
                Err(error) => last_error = error,
            }
        }
        let Some((claims, policy_id, policy_expires_at)) = accepted else {
            let reason = if last_error == IdTokenError::MissingClaim { "claims_mismatch" } else { last_error.as_str() };
            return refuse(reason, json!({ "iss": issuer })).await;
        };
        let jti = claims["jti"].as_str().unwrap_or_default().to_string();
        let exp = claims["exp"].as_i64().unwrap_or_default();
        // CI job tokens live minutes; one valid for more than a day is not one
        // (and its jti could not be remembered for its whole life).
        if exp > chrono::Utc::now().timestamp() + MAX_SUBJECT_TOKEN_SECONDS {
            return refuse("lifetime_too_long", json!({ "iss": issuer })).await;
        }
        // A token never outlives the trust policy it came through.
        let lifetime = match policy_expires_at {
            Some(end) => {
                self.config().auth.exchanged_token_seconds.min((end - chrono::Utc::now()).num_seconds().max(1))
            }
            None => self.config().auth.exchanged_token_seconds,
        };
        let jti_of_ours = uuid::Uuid::now_v7();
        let mut tx = self.db().begin().await?;
        // The policy must still stand, held until the token is recorded: an
        // eviction that deletes it either commits first (refused here) or
        // waits, and then revokes the recorded token.
        if !crate::app::iam::store::service_accounts::share_standing_policy(&mut tx, policy_id).await? {
            drop(tx);
            return refuse("policy_removed", json!({ "iss": issuer })).await;
        }
        // The row remembers the CI token's jti (replays are refused) and
        // records the token issued for it, revocable until both expire.
        let first_use = crate::app::iam::store::service_accounts::record_exchange(
            &mut tx,
            &issuer,
            &jti,
            exp as f64,
            lifetime as f64,
            account.uuid(),
            jti_of_ours,
        )
        .await?;
        if !first_use {
            drop(tx);
            return refuse("replayed_jti", json!({ "iss": issuer, "jti": jti })).await;
        }
        let role = OrgRole::parse(&found[0].role).unwrap_or(OrgRole::Viewer);
        let mut actor = self.user_context(ctx, account.uuid(), org, role);
        actor.principal.kind = PrincipalKind::ServiceAccount;
        actor.principal.credential = moke_iam::Credential::Exchanged { jti: jti_of_ours };
        let visible: serde_json::Map<String, serde_json::Value> =
            ["sub", "repository", "ref", "environment", "workflow"]
                .iter()
                .filter_map(|k| claims.get(*k).map(|v| (k.to_string(), v.clone())))
                .collect();
        audit::record(
            &mut tx,
            &actor,
            AuditRecord {
                action: "auth.token_exchange",
                resource_type: "service_account",
                resource_id: Some(account.to_string()),
                details: json!({ "iss": issuer, "jti": jti, "claims": visible }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        Ok(ExchangedToken {
            access_token: self.sign_access_token(account.to_string(), org, None, lifetime, jti_of_ours),
            token_type: "Bearer".to_string(),
            expires_in: lifetime,
            service_account: account,
            organization: OrgId::from_uuid(org),
        })
    }

    /// Forgets exchanged ID tokens past their expiry (they cannot be replayed anyway).
    pub async fn purge_exchanged_tokens(&self) -> Result<u64> {
        crate::app::iam::store::service_accounts::purge_exchanged_tokens(&mut *self.db().acquire().await?).await
    }
}
