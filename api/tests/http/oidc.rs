//! Single sign-on and CI workload identity against a real OpenID Provider
//! (`oidc-provider` on loopback): a complete login, just-in-time
//! membership, and every refusal (state, nonce, audience, expiry, issuer,
//! domain, claims, replay).

use std::collections::HashMap;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{OidcProvider, SSO_REDIRECT, Tenant, TestApp};

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

async fn configure_sso(t: &TestApp, tenant: &Tenant, issuer: &str, client: &str) {
    let (status, body) = t
        .send(t.request(Method::PUT, &format!("/v1/orgs/{}/sso", tenant.org), &tenant.token).json(&json!({
            "issuer": issuer, "client_id": client, "client_secret": format!("{client}-secret"),
            "allowed_domains": ["acme.test"], "default_role": "member",
        })))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// Starts a login at the gateway; returns the provider URL it redirects to.
async fn start(t: &TestApp, org: &str) -> String {
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let response = browser.get(format!("{}/v1/sso/{org}/login", t.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{}", response.text().await.unwrap());
    response.headers()["location"].to_str().unwrap().to_string()
}

async fn callback(t: &TestApp, back: &HashMap<String, String>) -> (StatusCode, Value) {
    let query: Vec<(&str, &str)> = back.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    t.send(t.client.get(format!("{}/v1/sso/callback", t.base)).query(&query)).await
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
    configure_sso(&t, &acme, &idp.issuer, "moke-sso").await;
    let stored: String =
        sqlx::query_scalar("SELECT client_secret_enc FROM sso_providers").fetch_one(&t.pool).await.unwrap();
    assert!(stored.starts_with("vault:v") && !stored.contains("moke-sso-secret"), "encrypted by Vault");
    let (_, view) = t.get(&format!("/v1/orgs/{}/sso", acme.org), &acme.token).await;
    assert!(view.get("client_secret").is_none());

    // A complete login: PKCE, state, nonce; alice joins acme as a member.
    let url = start(&t, "acme").await;
    assert!(url.starts_with(&idp.issuer));
    assert_eq!(param(&url, "code_challenge_method"), "S256");
    let back = idp.sign_in(&url, "alice@acme.test").await;
    assert_eq!(back["iss"], idp.issuer);
    let (status, session) = callback(&t, &back).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    let access = session["access_token"].as_str().unwrap();
    let (_, me) = t.get("/v1/me", access).await;
    assert_eq!(me["user"]["email"], "alice@acme.test");
    assert_eq!((me["organization"].as_str(), me["role"].as_str()), (Some(acme.org.as_str()), Some("member")));
    // The same answer twice: the state is spent.
    let (status, body) = callback(&t, &back).await;
    assert_eq!((status, body["errors"][0]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("state")));

    // A state the gateway never issued.
    let url = start(&t, "acme").await;
    let mut back = idp.sign_in(&url, "alice@acme.test").await;
    back.insert("state".into(), "forged-state".into());
    assert_eq!(callback(&t, &back).await.0, StatusCode::BAD_REQUEST);

    // A replayed nonce: the provider is asked to put an old login's nonce in the token.
    let first = start(&t, "acme").await;
    let second = start(&t, "acme").await;
    let replayed = with_param(&second, "nonce", &param(&first, "nonce"));
    let back = idp.sign_in(&replayed, "alice@acme.test").await;
    assert_eq!(callback(&t, &back).await.0, StatusCode::UNAUTHORIZED);

    // A code issued to another client (its ID token is for another audience).
    let url = with_param(&start(&t, "acme").await, "client_id", "other-ci");
    let back = idp.sign_in(&url, "alice@acme.test").await;
    assert_eq!(callback(&t, &back).await.0, StatusCode::UNAUTHORIZED);

    // A response claiming another issuer (mix-up).
    let url = start(&t, "acme").await;
    let mut back = idp.sign_in(&url, "alice@acme.test").await;
    back.insert("iss".into(), "http://127.0.0.1:1/evil".into());
    assert_eq!(callback(&t, &back).await.0, StatusCode::UNAUTHORIZED);

    // People outside the allowed domains, or with unverified addresses.
    for account in ["mallory@evil.test", "unverified@acme.test"] {
        let back = idp.sign_in(&start(&t, "acme").await, account).await;
        assert_eq!(callback(&t, &back).await.0, StatusCode::UNAUTHORIZED, "{account}");
    }

    // An expired ID token, from a provider whose clock runs two hours behind.
    let late = OidcProvider::start_with_clock_offset(-7200).await;
    let expiring = t.tenant("acme-expired").await;
    configure_sso(&t, &expiring, &late.issuer, "moke-sso").await;
    let back = late.sign_in(&start(&t, "acme-expired").await, "bob@acme.test").await;
    assert_eq!(callback(&t, &back).await.0, StatusCode::UNAUTHORIZED);

    let reasons = refusal_reasons(&t, "auth.sso_login").await;
    assert_eq!(
        reasons,
        [
            "nonce_mismatch",
            "code_exchange_failed",
            "wrong_issuer",
            "domain_not_allowed",
            "email_not_verified",
            "id_token_expired"
        ]
    );
    assert_eq!(t.count("memberships").await, 1, "only alice joined");
    let (_, events) = t.get(&format!("/v1/orgs/{}/audit-events?limit=100", acme.org), &acme.token).await;
    assert!(events["items"].as_array().unwrap().iter().any(|e| e["action"] == "sso.configure"));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn ci_tokens_exchange_for_service_account_tokens(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app_with(&idp, options, connect).await;
    let acme = t.tenant("acme").await;
    let (_, account) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts", acme.org),
            &acme.token,
            json!({ "name": "deployer", "role": "member" }),
        )
        .await;
    let account = account["id"].as_str().unwrap().to_string();
    let (status, policy) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts/{account}/trust-policies", acme.org),
            &acme.token,
            json!({ "issuer": idp.issuer, "audience": "moke-ci",
                    "claims": { "repository": "acme/web", "ref": "refs/heads/main", "environment": "production" } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{policy}");
    let late = OidcProvider::start_with_clock_offset(-7200).await;
    let (status, _) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts/{account}/trust-policies", acme.org),
            &acme.token,
            json!({ "issuer": late.issuer, "audience": "moke-ci",
                    "claims": { "repository": "acme/web", "ref": "refs/heads/main", "environment": "production" } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let exchange = |token: String, account: String| {
        let t = &t;
        async move {
            t.post_public("/v1/auth/token-exchange", json!({ "subject_token": token, "service_account": account }))
                .await
        }
    };

    let id_token = idp.id_token("moke-ci", "ci-main").await;
    let (status, exchanged) = exchange(id_token.clone(), account.clone()).await;
    assert_eq!(status, StatusCode::OK, "{exchanged}");
    assert_eq!(exchanged["expires_in"], 900);
    let access = exchanged["access_token"].as_str().unwrap();
    let (_, me) = t.get("/v1/me", access).await;
    assert_eq!((me["kind"].as_str(), me["id"].as_str()), (Some("service_account"), Some(account.as_str())));
    assert_eq!(
        t.post(&format!("/v1/orgs/{}/projects", acme.org), access, json!({ "name": "web" })).await.0,
        StatusCode::CREATED
    );

    // Refusals: the same token again, another branch, another audience, expired, no policy.
    assert_eq!(exchange(id_token, account.clone()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(exchange(idp.id_token("moke-ci", "ci-branch").await, account.clone()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(exchange(idp.id_token("other-ci", "ci-main").await, account.clone()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(exchange(late.id_token("moke-ci", "ci-main").await, account.clone()).await.0, StatusCode::UNAUTHORIZED);
    let (_, other) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts", acme.org),
            &acme.token,
            json!({ "name": "idle", "role": "viewer" }),
        )
        .await;
    let fresh = idp.id_token("moke-ci", "ci-main").await;
    assert_eq!(exchange(fresh.clone(), other["id"].as_str().unwrap().to_string()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(exchange("not-a-jwt".into(), account.clone()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refusal_reasons(&t, "auth.token_exchange").await,
        ["replayed_jti", "claims_mismatch", "wrong_audience", "expired", "malformed"]
    );
    // The refusals did not spend the fresh token.
    assert_eq!(exchange(fresh, account).await.0, StatusCode::OK);
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
    configure_sso(&t, &globex, &idp.issuer, "moke-sso").await;
    // Every secret column holds Vault ciphertext only, never the secret.
    for (table, column, _, _) in moke_api::app::secrets::SECRET_COLUMNS {
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
    let mut known: Vec<(String, String)> =
        moke_api::app::secrets::SECRET_COLUMNS.iter().map(|(t, c, _, _)| (t.to_string(), c.to_string())).collect();
    known.sort();
    assert_eq!(in_schema, known);
    // The same secret of two organizations encrypts differently (keys derived per organization).
    let both: Vec<String> =
        sqlx::query_scalar("SELECT client_secret_enc FROM sso_providers").fetch_all(&t.pool).await.unwrap();
    assert_ne!(both[0], both[1]);

    let (version, operations) = t.app.rotate_secrets_key().await.unwrap();
    assert_eq!(operations.len(), 2, "one rewrap Operation per organization");
    assert!(operations.iter().all(|op| op.status.as_str() == "succeeded" && op.progress == 100));
    let versions: Vec<String> =
        sqlx::query_scalar("SELECT client_secret_enc FROM sso_providers").fetch_all(&t.pool).await.unwrap();
    assert!(versions.iter().all(|v| moke_api::app::secrets::key_version(v) == Some(version)), "{versions:?}");
    assert!(t.app.rewrap_secrets().await.unwrap().is_empty(), "nothing left to rewrap");
    // The rewrapped secret still works: a complete SSO login.
    let back = idp.sign_in(&start(&t, "acme").await, "alice@acme.test").await;
    assert_eq!(callback(&t, &back).await.0, StatusCode::OK);
    // Each organization sees its own rewrap Operation, and only its own.
    let mine = operations.iter().find(|op| op.target.id == acme.org).expect("an Operation on acme");
    let theirs = operations.iter().find(|op| op.target.id == globex.org).expect("an Operation on globex");
    let (status, op) = t.get(&format!("/v1/operations/{}", mine.id), &acme.token).await;
    assert_eq!(
        (status, op["kind"].as_str(), op["status"].as_str()),
        (StatusCode::OK, Some("secrets_rewrap"), Some("succeeded"))
    );
    assert_eq!(t.get(&format!("/v1/operations/{}", theirs.id), &acme.token).await.0, StatusCode::NOT_FOUND);
}
