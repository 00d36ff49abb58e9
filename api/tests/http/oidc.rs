//! Single sign-on and CI workload identity against a real OpenID Provider
//! (`oidc-provider` on loopback): a complete login, just-in-time
//! membership, and every refusal (state, nonce, audience, expiry, issuer,
//! domain, claims, replay).

use std::collections::HashMap;

use moke_api::model::{
    AuditEventView, ExchangedToken, MeView, OperationStatus, OperationView, Page, SessionTokens, SsoConfigView,
    SsoLinkPending, TrustPolicyView,
};
use moke_iam::OrgRole;
use reqwest::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Answer, OidcProvider, SSO_REDIRECT, Tenant, TestApp};

async fn app_with(idp: &OidcProvider, options: PgPoolOptions, connect: PgConnectOptions) -> TestApp {
    let _ = idp;
    TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.auth.sso_redirect_uri = SSO_REDIRECT.to_string();
        c.auth.id_token_clock_skew_seconds = 0;
        c.rate_limits.login_burst = 1000;
    })
    .await
}

/// Marks `domain` as proven by `tenant` (the DNS check itself is tested in
/// `security.rs` against a DNS server on loopback).
pub async fn verified_domain(t: &TestApp, tenant: &Tenant, domain: &str) {
    sqlx::query(
        "INSERT INTO org_domains (id, org_id, domain, challenge, verified_at)
         VALUES ($1, $2, $3, 'fixture', now())",
    )
    .bind(uuid::Uuid::now_v7())
    .bind(tenant.org.parse::<moke_api::ids::OrgId>().unwrap().uuid())
    .bind(domain)
    .execute(&t.pool)
    .await
    .unwrap();
}

/// Configures SSO for `tenant`, letting people at `domains` (verified here) join.
pub async fn configure_sso_for(t: &TestApp, tenant: &Tenant, issuer: &str, client: &str, domains: &[&str]) {
    for domain in domains {
        verified_domain(t, tenant, domain).await;
    }
    let owner = t.client(tenant);
    let body = json!({
        "issuer": issuer, "client_id": client, "client_secret": format!("{client}-secret"),
        "allowed_domains": domains, "default_role": "member",
    });
    owner.put::<SsoConfigView>(&owner.org_path("/sso"), body).await.expect(StatusCode::OK);
}

async fn configure_sso(t: &TestApp, tenant: &Tenant, issuer: &str, client: &str) {
    configure_sso_for(t, tenant, issuer, client, &["acme.test"]).await;
}

/// A login started in a browser: where the provider is, and the cookie that
/// binds the login to that browser.
pub struct Login {
    pub url: String,
    pub cookie: String,
}

/// Starts a login at the gateway, as a browser would.
pub async fn start(t: &TestApp, org: &str) -> Login {
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let response = browser.get(format!("{}/v1/sso/{org}/login", t.base)).send().await.unwrap();
    let set_cookie = response.headers().get("set-cookie").map(|v| v.to_str().unwrap().to_string());
    let url = response.headers().get("location").map(|v| v.to_str().unwrap().to_string());
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{}", response.text().await.unwrap());
    let set_cookie = set_cookie.expect("the login binds the browser with a cookie");
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"), "{set_cookie}");
    let cookie = set_cookie.split(';').next().unwrap().to_string();
    Login { url: url.unwrap(), cookie }
}

/// The provider's redirect back, arriving in the browser that started
/// `login`: a session ([`SessionTokens`], 200) or a link to confirm
/// ([`SsoLinkPending`], 202).
pub async fn callback<T>(t: &TestApp, login: &Login, back: &HashMap<String, String>) -> Answer<T> {
    callback_with_cookie(t, Some(&login.cookie), back).await
}

/// The provider's redirect back, arriving in a browser holding `cookie` (or none).
pub async fn callback_with_cookie<T>(t: &TestApp, cookie: Option<&str>, back: &HashMap<String, String>) -> Answer<T> {
    let query: Vec<(&str, &str)> = back.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let browser = t.anonymous();
    let mut request = browser.request(reqwest::Method::GET, "/v1/sso/callback").query(&query);
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    browser.send(request).await
}

fn param(url: &str, name: &str) -> String {
    reqwest::Url::parse(url).unwrap().query_pairs().find(|(k, _)| k == name).unwrap().1.to_string()
}

fn with_param(url: &str, name: &str, value: &str) -> String {
    let mut parsed = reqwest::Url::parse(url).unwrap();
    let pairs: Vec<(String, String)> = parsed
        .query_pairs()
        .map(|(k, v)| (k.to_string(), if k == name { value.to_string() } else { v.to_string() }))
        .collect();
    parsed.query_pairs_mut().clear().extend_pairs(pairs);
    parsed.to_string()
}

async fn refusal_reasons(t: &TestApp, action: &str) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT details->>'reason' FROM audit_events WHERE action = $1 AND outcome = 'failure' ORDER BY id",
    )
    .bind(action)
    .fetch_all(&t.pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn sso_signs_people_in_and_refuses_forgeries(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app_with(&idp, options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    configure_sso(&t, &acme, &idp.issuer, "moke-sso").await;
    let stored: String =
        sqlx::query_scalar("SELECT client_secret_enc FROM sso_providers").fetch_one(&t.pool).await.unwrap();
    assert!(stored.starts_with("vault:v") && !stored.contains("moke-sso-secret"), "encrypted by Vault");
    let view = owner.get::<SsoConfigView>(&owner.org_path("/sso")).await;
    view.expect(StatusCode::OK);
    // The raw answer, since the view type cannot show a field it lacks.
    assert!(view.body.get("client_secret").is_none(), "{view:?}");

    // A complete login: PKCE, state, nonce; alice joins acme as a member.
    let login = start(&t, "acme").await;
    assert!(login.url.starts_with(&idp.issuer));
    assert_eq!(param(&login.url, "code_challenge_method"), "S256");
    let back = idp.sign_in(&login.url, "alice@acme.test").await;
    assert_eq!(back["iss"], idp.issuer);
    let session: SessionTokens = callback(&t, &login, &back).await.expect(StatusCode::OK);
    let me: MeView = owner.with_token(&session.access_token).get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!(me.user.as_ref().map(|u| u.email.as_str()), Some("alice@acme.test"), "{me:?}");
    assert_eq!((me.organization.to_string(), me.role), (acme.org.clone(), OrgRole::Member));
    // The same answer twice: the state is spent.
    let problem = callback::<SessionTokens>(&t, &login, &back).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.errors.first().map(|e| e.field.as_str()), Some("state"), "{problem:?}");

    // A state the gateway never issued.
    let login = start(&t, "acme").await;
    let mut back = idp.sign_in(&login.url, "alice@acme.test").await;
    back.insert("state".into(), "forged-state".into());
    callback::<SessionTokens>(&t, &login, &back).await.refused(StatusCode::BAD_REQUEST);

    // A replayed nonce: the provider is asked to put an old login's nonce in the token.
    let first = start(&t, "acme").await;
    let second = start(&t, "acme").await;
    let replayed = with_param(&second.url, "nonce", &param(&first.url, "nonce"));
    let back = idp.sign_in(&replayed, "alice@acme.test").await;
    callback::<SessionTokens>(&t, &second, &back).await.refused(StatusCode::UNAUTHORIZED);

    // A code issued to another client (its ID token is for another audience).
    let login = start(&t, "acme").await;
    let url = with_param(&login.url, "client_id", "other-ci");
    let back = idp.sign_in(&url, "alice@acme.test").await;
    callback::<SessionTokens>(&t, &login, &back).await.refused(StatusCode::UNAUTHORIZED);

    // A response claiming another issuer (mix-up).
    let login = start(&t, "acme").await;
    let mut back = idp.sign_in(&login.url, "alice@acme.test").await;
    back.insert("iss".into(), "http://127.0.0.1:1/evil".into());
    callback::<SessionTokens>(&t, &login, &back).await.refused(StatusCode::UNAUTHORIZED);

    // Someone outside the allowed domains: no session, and the answer any
    // unknown identity gets (a link only an account's owner could confirm).
    let login = start(&t, "acme").await;
    let back = idp.sign_in(&login.url, "mallory@evil.test").await;
    let answer = callback::<SsoLinkPending>(&t, &login, &back).await;
    answer.expect(StatusCode::ACCEPTED);
    assert!(answer.body.get("access_token").is_none(), "{answer:?}");
    // An address the provider did not verify.
    let login = start(&t, "acme").await;
    let back = idp.sign_in(&login.url, "unverified@acme.test").await;
    callback::<SessionTokens>(&t, &login, &back).await.refused(StatusCode::UNAUTHORIZED);

    // An expired ID token, from a provider whose clock runs two hours behind.
    let late = OidcProvider::start_with_clock_offset(-7200).await;
    let expiring = t.tenant("acme-expired").await;
    configure_sso_for(&t, &expiring, &late.issuer, "moke-sso", &[]).await;
    let login = start(&t, "acme-expired").await;
    let back = late.sign_in(&login.url, "bob@acme.test").await;
    callback::<SessionTokens>(&t, &login, &back).await.refused(StatusCode::UNAUTHORIZED);

    let reasons = refusal_reasons(&t, "auth.sso_login").await;
    assert_eq!(
        reasons,
        ["nonce_mismatch", "code_exchange_failed", "wrong_issuer", "email_not_verified", "id_token_expired"]
    );
    assert_eq!(t.count("memberships").await, 1, "only alice joined");
    let events: Page<AuditEventView> =
        owner.get(&owner.org_path("/audit-events?limit=100")).await.expect(StatusCode::OK);
    assert!(events.items.iter().any(|e| e.action == "sso.configure"), "{events:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn ci_tokens_exchange_for_service_account_tokens(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app_with(&idp, options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let account = owner.create_service_account("deployer", "member").await.id.to_string();
    let policies = owner.org_path(&format!("/service-accounts/{account}/trust-policies"));
    owner
        .post::<TrustPolicyView>(
            &policies,
            json!({ "issuer": idp.issuer, "audience": "moke-ci",
                    "claims": { "repository": "acme/web", "ref": "refs/heads/main", "environment": "production" } }),
        )
        .await
        .expect(StatusCode::CREATED);
    let late = OidcProvider::start_with_clock_offset(-7200).await;
    owner
        .post::<TrustPolicyView>(
            &policies,
            json!({ "issuer": late.issuer, "audience": "moke-ci",
                    "claims": { "repository": "acme/web", "ref": "refs/heads/main", "environment": "production" } }),
        )
        .await
        .expect(StatusCode::CREATED);
    let anonymous = t.anonymous();
    let exchange = async |token: String, account: String| -> Answer<ExchangedToken> {
        anonymous.post("/v1/auth/token-exchange", json!({ "subject_token": token, "service_account": account })).await
    };

    let id_token = idp.id_token("moke-ci", "ci-main").await;
    let exchanged = exchange(id_token.clone(), account.clone()).await.expect(StatusCode::OK);
    assert_eq!(exchanged.expires_in, 900);
    let robot = owner.with_token(&exchanged.access_token);
    let me: MeView = robot.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!((me.kind.as_str(), me.id.as_str()), ("service_account", account.as_str()));
    robot.create_project("web").await;

    // Refusals: the same token again, another branch, another audience, expired, no policy.
    exchange(id_token, account.clone()).await.refused(StatusCode::UNAUTHORIZED);
    exchange(idp.id_token("moke-ci", "ci-branch").await, account.clone()).await.refused(StatusCode::UNAUTHORIZED);
    exchange(idp.id_token("other-ci", "ci-main").await, account.clone()).await.refused(StatusCode::UNAUTHORIZED);
    exchange(late.id_token("moke-ci", "ci-main").await, account.clone()).await.refused(StatusCode::UNAUTHORIZED);
    let other = owner.create_service_account("idle", "viewer").await.id.to_string();
    let fresh = idp.id_token("moke-ci", "ci-main").await;
    exchange(fresh.clone(), other).await.refused(StatusCode::UNAUTHORIZED);
    exchange("not-a-jwt".into(), account.clone()).await.refused(StatusCode::UNAUTHORIZED);
    assert_eq!(
        refusal_reasons(&t, "auth.token_exchange").await,
        ["replayed_jti", "claims_mismatch", "wrong_audience", "expired", "malformed"]
    );
    // The refusals did not spend the fresh token.
    exchange(fresh, account).await.expect(StatusCode::OK);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn secrets_are_stored_as_ciphertext_and_rewrapped_after_rotation(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let idp = OidcProvider::start().await;
    let t = app_with(&idp, options, connect).await;
    let (acme, globex) = (t.tenant("acme").await, t.tenant("globex").await);
    configure_sso(&t, &acme, &idp.issuer, "moke-sso").await;
    configure_sso_for(&t, &globex, &idp.issuer, "moke-sso", &["globex.test"]).await;
    // Every secret column holds Vault ciphertext only, never the secret.
    for (table, column, _, _) in moke_api::app::kernel::secrets::SECRET_COLUMNS {
        let values: Vec<String> =
            sqlx::query_scalar(&format!("SELECT {column} FROM {table}")).fetch_all(&t.pool).await.unwrap();
        if table == "sso_providers" {
            assert_eq!(values.len(), 2);
        }
        for value in values {
            assert!(value.starts_with("vault:v") && !value.contains("moke-sso-secret"), "{table}.{column}: {value}");
        }
    }
    // Every ciphertext column of the schema is one the rewrap knows.
    let mut in_schema: Vec<(String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name LIKE '%secret_enc'",
    )
    .fetch_all(&t.pool)
    .await
    .unwrap();
    in_schema.sort();
    let mut known: Vec<(String, String)> = moke_api::app::kernel::secrets::SECRET_COLUMNS
        .iter()
        .map(|(t, c, _, _)| (t.to_string(), c.to_string()))
        .collect();
    known.sort();
    assert_eq!(in_schema, known);
    // The same secret of two organizations encrypts differently (keys derived per organization).
    let both: Vec<String> =
        sqlx::query_scalar("SELECT client_secret_enc FROM sso_providers").fetch_all(&t.pool).await.unwrap();
    assert_ne!(both[0], both[1]);

    // A login in flight and the configuration's ETag outlive a rewrap:
    // re-encrypting the same secret is no change.
    let owner = t.client(&acme);
    let etag_before = owner.get::<SsoConfigView>(&owner.org_path("/sso")).await.expect(StatusCode::OK).etag;
    let in_flight = start(&t, "acme").await;
    let (version, operations) = t.app.rotate_secrets_key().await.unwrap();
    assert_eq!(operations.len(), 2, "one rewrap Operation per organization");
    assert!(operations.iter().all(|op| op.status.as_str() == "succeeded" && op.progress == 100));
    let versions: Vec<String> =
        sqlx::query_scalar("SELECT client_secret_enc FROM sso_providers").fetch_all(&t.pool).await.unwrap();
    assert!(versions.iter().all(|v| moke_api::app::kernel::secrets::key_version(v) == Some(version)), "{versions:?}");
    assert!(t.app.rewrap_secrets().await.unwrap().is_empty(), "nothing left to rewrap");
    let etag_after = owner.get::<SsoConfigView>(&owner.org_path("/sso")).await.expect(StatusCode::OK).etag;
    assert_eq!(etag_before, etag_after, "a rewrap does not change the configuration's ETag");
    let back = idp.sign_in(&in_flight.url, "alice@acme.test").await;
    callback::<SessionTokens>(&t, &in_flight, &back).await.expect(StatusCode::OK);
    // The rewrapped secret still works: a complete SSO login.
    let login = start(&t, "acme").await;
    let back = idp.sign_in(&login.url, "alice@acme.test").await;
    callback::<SessionTokens>(&t, &login, &back).await.expect(StatusCode::OK);
    // Each organization sees its own rewrap Operation, and only its own.
    let mine = operations.iter().find(|op| op.target.id == acme.org).expect("an Operation on acme");
    let theirs = operations.iter().find(|op| op.target.id == globex.org).expect("an Operation on globex");
    let op = owner.operation(mine.id).await;
    assert_eq!((op.kind.as_str(), op.status), ("secrets_rewrap", OperationStatus::Succeeded));
    owner.get::<OperationView>(&format!("/v1/operations/{}", theirs.id)).await.refused(StatusCode::NOT_FOUND);
}
