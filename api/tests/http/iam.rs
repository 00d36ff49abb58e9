//! Identity and access end to end: sign-up, e-mail links, sessions and
//! their attacks, key rotation, Vault outages, rate limits, members,
//! invitations, project roles, service accounts and scoped tokens.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use moke_iam::jwt::{AccessClaims, KeyRing, SigningKey};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{MEMBER_PASSWORD, OidcProvider, TestApp, VaultProxy, bad_fields, eventually};

const PASSWORD: &str = "plum tractor velvet 1987";

async fn signup(t: &TestApp, email: &str, org: &str) -> Value {
    t.sign_up(email, PASSWORD, org).await
}

async fn mailed_token(t: &TestApp, kind: &str, to: &str) -> String {
    t.mailed_token(kind, to).await
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn signup_confirms_the_address_and_signs_in(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let made = signup(&t, " Ada@Example.COM ", "ada-labs").await;
    assert_eq!(made["user"]["email"], "ada@example.com");
    assert_eq!(made["user"]["email_verified"], true, "following the mailed link proved the address");
    let access = made["session"]["access_token"].as_str().unwrap();
    let (status, me) = t.get("/v1/me", access).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["role"], "owner");
    assert_eq!(me["organization"], made["organization"]["id"]);

    // The mail carries what an SMTP sender needs, and keeps no body once sent.
    let mail = t.mails("signup", "ada@example.com").pop().unwrap();
    assert!(mail.contains("From: Moke <") && mail.contains("Subject: ") && mail.contains("Message-ID: <"));
    let stored: (Option<String>, Option<String>) = sqlx::query_as(
        "SELECT text_body, text_body_enc FROM mail_outbox WHERE kind = 'signup' AND sent_at IS NOT NULL",
    )
    .fetch_one(&t.pool)
    .await
    .unwrap();
    assert_eq!(stored, (None, None));
    // The link works once.
    let token =
        mail[mail.find("token=").unwrap() + 6..].chars().take_while(char::is_ascii_alphanumeric).collect::<String>();
    let (status, again) = t.post_public("/v1/signup/confirm", json!({ "token": token, "password": PASSWORD })).await;
    assert_eq!((status, bad_fields(&again)), (StatusCode::BAD_REQUEST, vec!["token".to_string()]));

    // One account per address, whatever its case: the owner is mailed a
    // note, and the answer is the one a new address gets.
    let (status, again) = t
        .post_public(
            "/v1/signup",
            json!({ "email": "ADA@example.com", "password": PASSWORD, "display_name": "A", "organization_name": "other" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    eventually(10, "the note to the existing account", async || {
        !t.mails("signup_existing", "ada@example.com").is_empty()
    })
    .await;
    for weak in ["short", "1q2w3e4r5t6y", "Password123456!"] {
        let (status, body) = t
            .post_public(
                "/v1/signup",
                json!({ "email": "new@example.com", "password": weak, "display_name": "N", "organization_name": "n" }),
            )
            .await;
        assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["password".to_string()]), "{weak}");
    }
    let stored: String = sqlx::query_scalar("SELECT password_hash FROM users").fetch_one(&t.pool).await.unwrap();
    assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
    let (_, events) =
        t.get(&format!("/v1/orgs/{}/audit-events", made["organization"]["id"].as_str().unwrap()), access).await;
    let actions: Vec<&str> =
        events["items"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["user.signup"]);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn password_reset_is_single_use_and_ends_sessions(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let made = signup(&t, "ada@example.com", "ada-labs").await;
    let old_access = made["session"]["access_token"].as_str().unwrap();

    // Unknown addresses get the same answer, and a note instead of a link.
    let (status, _) = t.post_public("/v1/auth/password-reset", json!({ "email": "nobody@example.com" })).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(t.count("mail_outbox WHERE kind = 'password_reset'").await, 0);
    assert_eq!(t.count("mail_outbox WHERE kind = 'password_reset_unknown'").await, 1);
    let (status, _) = t.post_public("/v1/auth/password-reset", json!({ "email": "ada@example.com" })).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let token = mailed_token(&t, "password_reset", "ada@example.com").await;
    let new_password = "quiet harbor lantern 55";
    let (status, body) =
        t.post_public("/v1/auth/password-reset/confirm", json!({ "token": token, "password": new_password })).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, _) =
        t.post_public("/v1/auth/password-reset/confirm", json!({ "token": token, "password": new_password })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the token works once");

    assert_eq!(t.get("/v1/me", old_access).await.0, StatusCode::UNAUTHORIZED, "sessions ended");
    let (status, _) =
        t.post_public("/v1/auth/login", json!({ "email": "ada@example.com", "password": PASSWORD })).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    t.login("ada@example.com", new_password, None).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn refresh_tokens_rotate_and_reuse_revokes_the_family(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    signup(&t, "ada@example.com", "ada-labs").await;
    let first = t.login("ada@example.com", PASSWORD, None).await;
    let r1 = first["refresh_token"].as_str().unwrap();
    let (status, second) = t.post_public("/v1/auth/refresh", json!({ "refresh_token": r1 })).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let (r2, a2) = (second["refresh_token"].as_str().unwrap(), second["access_token"].as_str().unwrap());
    assert_ne!(r1, r2);
    assert_eq!(t.get("/v1/me", a2).await.0, StatusCode::OK);

    // r1 again: a thief or a replay. The whole session ends.
    let (status, _) = t.post_public("/v1/auth/refresh", json!({ "refresh_token": r1 })).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = t.post_public("/v1/auth/refresh", json!({ "refresh_token": r2 })).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the rotated token died with its family");
    assert_eq!(t.get("/v1/me", a2).await.0, StatusCode::UNAUTHORIZED, "and so did its access tokens");
    let reason: String = sqlx::query_scalar("SELECT revoked_reason FROM sessions WHERE revoked_at IS NOT NULL")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(reason, "refresh_token_reuse");

    // Logout ends a session; ending it again succeeds.
    let third = t.login("ada@example.com", PASSWORD, None).await;
    let (a3, r3) = (third["access_token"].as_str().unwrap(), third["refresh_token"].as_str().unwrap());
    let (status, _) = t.post_public("/v1/auth/logout", json!({ "refresh_token": r3 })).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(t.get("/v1/me", a3).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(t.post_public("/v1/auth/refresh", json!({ "refresh_token": r3 })).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(t.post_public("/v1/auth/logout", json!({ "refresh_token": r3 })).await.0, StatusCode::NO_CONTENT);
    // Logout by access token alone.
    let fourth = t.login("ada@example.com", PASSWORD, None).await;
    let a4 = fourth["access_token"].as_str().unwrap();
    assert_eq!(t.post("/v1/auth/logout", a4, json!({})).await.0, StatusCode::NO_CONTENT);
    assert_eq!(t.get("/v1/me", a4).await.0, StatusCode::UNAUTHORIZED);
}

fn forge(header: Value, claims: &Value, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string()),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn forged_and_invalid_access_tokens_are_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    signup(&t, "ada@example.com", "ada-labs").await;
    let session = t.login("ada@example.com", PASSWORD, None).await;
    let good = session["access_token"].as_str().unwrap();
    assert_eq!(t.get("/v1/me", good).await.0, StatusCode::OK);
    let header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(good.split('.').next().unwrap()).unwrap()).unwrap();
    assert_eq!((header["alg"].as_str(), header["typ"].as_str()), (Some("ES256"), Some("at+jwt")));
    let claims: AccessClaims =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(good.split('.').nth(1).unwrap()).unwrap()).unwrap();
    let kid = header["kid"].as_str().unwrap();
    let ring = t.app.vault().keyring();
    let now = chrono::Utc::now().timestamp();
    let with = |change: &dyn Fn(&mut AccessClaims)| {
        let mut c = claims.clone();
        c.jti = uuid::Uuid::now_v7().to_string();
        change(&mut c);
        c
    };
    // The real key signs these, so only the claims are wrong.
    let signed_wrong = [
        ("expired", ring.sign(&with(&|c| c.exp = now - 120))),
        ("not yet valid", ring.sign(&with(&|c| c.nbf = now + 600))),
        ("issued in the future", ring.sign(&with(&|c| c.iat = now + 600))),
        ("wrong issuer", ring.sign(&with(&|c| c.iss = "https://evil.example".into()))),
        ("wrong audience", ring.sign(&with(&|c| c.aud = "another-api".into()))),
    ];
    let jwks = t.get("/.well-known/jwks.json", "").await.1;
    let jwk = &jwks["keys"][0];
    let public_bytes = format!("{}{}", jwk["x"].as_str().unwrap(), jwk["y"].as_str().unwrap());
    let hs256 = {
        let header = jsonwebtoken::Header {
            kid: Some(kid.to_string()),
            typ: Some("at+jwt".into()),
            ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256)
        };
        jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(public_bytes.as_bytes()).unwrap(),
        )
        .unwrap()
    };
    let foreign = KeyRing::new(&[SigningKey::generate(now)], ring.issuer(), ring.audience()).unwrap();
    let mut parts: Vec<String> = good.split('.').map(str::to_string).collect();
    let mut tampered: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).unwrap()).unwrap();
    tampered["sub"] = json!("usr_00000000000000000000000000000000");
    parts[1] = URL_SAFE_NO_PAD.encode(tampered.to_string());
    let claims_json = serde_json::to_value(&claims).unwrap();
    let mut attacks: Vec<(&str, String)> = signed_wrong.into_iter().collect();
    attacks.extend([
        ("alg none", forge(json!({ "alg": "none", "typ": "at+jwt", "kid": kid }), &claims_json, b"")),
        ("HS256 keyed with the public key", hs256),
        ("unknown kid", foreign.sign(&claims)),
        ("no typ", {
            let mut p: Vec<&str> = good.split('.').collect();
            let h = URL_SAFE_NO_PAD.encode(json!({ "alg": "ES256", "kid": kid }).to_string());
            p[0] = &h;
            p.join(".")
        }),
        ("tampered payload", parts.join(".")),
        ("garbage", "not.a.jwt".to_string()),
    ]);
    for (name, token) in attacks {
        let (status, body) = t.get("/v1/me", &token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{name} was accepted: {body}");
        assert_eq!(body["code"], "unauthenticated");
    }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn rotated_keys_keep_old_tokens_valid_until_expiry(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    signup(&t, "ada@example.com", "ada-labs").await;
    let before = t.login("ada@example.com", PASSWORD, None).await;
    let old = before["access_token"].as_str().unwrap();
    let kid_of = |token: &str| jsonwebtoken::decode_header(token).unwrap().kid.unwrap();
    let old_kid = kid_of(old);

    let rotated = t.app.rotate_signing_key().await.unwrap();
    assert_ne!(rotated.kid, old_kid);
    let after = t.login("ada@example.com", PASSWORD, None).await;
    let new = after["access_token"].as_str().unwrap();
    assert_eq!(kid_of(new), rotated.kid, "new tokens use the new key");
    assert_eq!(t.get("/v1/me", new).await.0, StatusCode::OK);
    assert_eq!(t.get("/v1/me", old).await.0, StatusCode::OK, "old tokens stay valid");
    let (_, jwks) = t.get("/.well-known/jwks.json", "").await;
    let kids: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert!(kids.contains(&old_kid.as_str()) && kids.contains(&rotated.kid.as_str()));
    assert!(jwks["keys"].as_array().unwrap().iter().all(|k| k["alg"] == "ES256" && k.get("d").is_none()));

    // Another gateway of the same deployment picks the rotation up from Vault.
    let second = TestApp::start_with(PgPoolOptions::new(), t_connect(&t), |_| {}).await;
    assert_eq!(second.get("/v1/me", new).await.0, StatusCode::OK);
    assert_eq!(second.get("/v1/me", old).await.0, StatusCode::OK);
}

fn t_connect(t: &TestApp) -> PgConnectOptions {
    t.pool.connect_options().as_ref().clone()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn vault_outage_keeps_verification_and_refuses_what_needs_vault(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let proxy = VaultProxy::start().await;
    let idp = OidcProvider::start().await;
    let addr = proxy.addr.clone();
    let t = TestApp::start_with(options, connect, move |c| {
        c.vault.addr = addr;
        c.vault.timeout_seconds = 2;
        c.auth.allow_insecure_issuers = true;
    })
    .await;
    let made = signup(&t, "ada@example.com", "ada-labs").await;
    let org = made["organization"]["id"].as_str().unwrap();
    let access = made["session"]["access_token"].as_str().unwrap();
    let (_, pat) = t.post("/v1/me/tokens", access, json!({ "name": "laptop" })).await;
    let pat = pat["token"].as_str().unwrap();
    assert!(pat.starts_with("moke_pat_"));

    proxy.cut();
    assert_eq!(t.get("/v1/me", access).await.0, StatusCode::OK, "JWTs verify from cached keys");
    assert_eq!(t.get("/v1/me", pat).await.0, StatusCode::OK, "API tokens hash with the cached pepper");
    let fresh = t.login("ada@example.com", PASSWORD, None).await;
    assert_eq!(t.get("/v1/me", fresh["access_token"].as_str().unwrap()).await.0, StatusCode::OK);

    // Storing an SSO client secret needs Vault's transit engine.
    let (status, problem) = t
        .send(t.request(Method::PUT, &format!("/v1/orgs/{org}/sso"), access).json(&json!({
            "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
            "allowed_domains": [], "default_role": "member",
        })))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{problem}");
    assert_eq!(problem["code"], "vault_unavailable");
    assert!(t.app.rotate_signing_key().await.is_err());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn vault_unreachable_at_start_is_a_clear_error(_options: PgPoolOptions, _connect: PgConnectOptions) {
    let mut config = moke_api::config::Config::defaults();
    config.vault.addr = "http://127.0.0.1:9".into();
    config.vault.timeout_seconds = 2;
    let error = match moke_api::vault::Vault::connect(&config).await {
        Ok(_) => panic!("connected to nothing"),
        Err(error) => format!("{error:#}"),
    };
    assert!(error.contains("could not log in to Vault at http://127.0.0.1:9 (vault.addr)"), "{error}");
    config.vault.secret_id = moke_api::config::Secret::new("");
    let error = format!("{:#}", moke_api::vault::Vault::connect(&config).await.err().unwrap());
    assert!(error.contains("vault.role_id and vault.secret_id are required"), "{error}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn rate_limits_answer_429_with_headers(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| {
        c.rate_limits.per_principal_per_second = 1;
        c.rate_limits.per_principal_burst = 3;
        c.rate_limits.login_burst = 4;
        c.rate_limits.login_failures_before_backoff = 2;
    })
    .await;
    let acme = t.tenant("acme").await;
    for _ in 0..3 {
        assert_eq!(t.get("/v1/me", &acme.token).await.0, StatusCode::OK);
    }
    let response = t.request(Method::GET, "/v1/me", &acme.token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string());
    assert_eq!(header("ratelimit-limit").as_deref(), Some("1"));
    assert_eq!(header("ratelimit-remaining").as_deref(), Some("0"));
    assert_eq!(header("ratelimit-policy").as_deref(), Some("1;w=1"));
    assert!(header("retry-after").unwrap().parse::<u64>().unwrap() >= 1);
    assert!(header("ratelimit-reset").is_some());
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(t.get("/v1/me", &acme.token).await.0, StatusCode::OK, "the limit refills");

    // Wrong passwords back the account off, even for the right one next.
    t.member(&acme, "bob@acme.test", "member").await;
    for _ in 0..2 {
        let (status, _) =
            t.post_public("/v1/auth/login", json!({ "email": "bob@acme.test", "password": "wrong wrong wrong" })).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let response = t
        .client
        .post(format!("{}/v1/auth/login", t.base))
        .json(&json!({ "email": "bob@acme.test", "password": MEMBER_PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().contains_key("retry-after"));
    // Sign-in attempts per address of origin: the fifth in the burst is refused.
    let (status, _) = t.post_public("/v1/auth/login", json!({ "email": "x@acme.test", "password": "p" })).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // Every failure is audited with the address it came from.
    let failures: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_events WHERE action = 'auth.login' AND outcome = 'failure' AND source_ip = '127.0.0.1'",
    )
    .fetch_one(&t.pool)
    .await
    .unwrap();
    assert_eq!(failures, 2);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn members_invitations_and_the_last_owner(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let owner_signup = signup(&t, "ada@example.com", "ada-labs").await;
    let org = owner_signup["organization"]["id"].as_str().unwrap().to_string();
    let owner = owner_signup["session"]["access_token"].as_str().unwrap().to_string();
    let owner_id = owner_signup["user"]["id"].as_str().unwrap().to_string();

    // The last owner can neither step down nor leave.
    let (status, body) =
        t.patch(&format!("/v1/orgs/{org}/members/{owner_id}"), &owner, json!({ "role": "admin" })).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("last_owner")));
    let (status, body) = t.delete(&format!("/v1/orgs/{org}/members/{owner_id}"), &owner).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("last_owner")));

    // An invitation by e-mail, accepted once by that address.
    let (status, invitation) = t
        .post(&format!("/v1/orgs/{org}/invitations"), &owner, json!({ "email": "Bob@Example.com", "role": "admin" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{invitation}");
    let token = mailed_token(&t, "invitation", "bob@example.com").await;
    let bob_signup = signup(&t, "bob@example.com", "bob-home").await;
    let bob_home = bob_signup["session"]["access_token"].as_str().unwrap().to_string();
    let mallory = signup(&t, "mallory@example.com", "mallory-home").await;
    let mallory = mallory["session"]["access_token"].as_str().unwrap().to_string();
    let (status, body) = t.post("/v1/invitations/accept", &mallory, json!({ "token": token })).await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["token".to_string()]));
    let (status, joined) = t.post("/v1/invitations/accept", &bob_home, json!({ "token": token })).await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    assert_eq!(joined["role"], "admin");
    assert_eq!(t.post("/v1/invitations/accept", &bob_home, json!({ "token": token })).await.0, StatusCode::BAD_REQUEST);
    let bob = t.login("bob@example.com", PASSWORD, Some(&org)).await;
    let bob = bob["access_token"].as_str().unwrap().to_string();
    let bob_id = bob_signup["user"]["id"].as_str().unwrap().to_string();
    let (_, me) = t.get("/v1/me", &bob).await;
    assert_eq!((me["organization"].as_str(), me["role"].as_str()), (Some(org.as_str()), Some("admin")));
    assert_eq!(me["memberships"].as_array().unwrap().len(), 2);

    // An admin cannot make owners or touch owners.
    let (status, body) = t.patch(&format!("/v1/orgs/{org}/members/{bob_id}"), &bob, json!({ "role": "owner" })).await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["role".to_string()]));
    let (status, _) = t.patch(&format!("/v1/orgs/{org}/members/{owner_id}"), &bob, json!({ "role": "viewer" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // The owner promotes bob; now ada may step down, and the change applies on bob's next request.
    let (status, _) = t.patch(&format!("/v1/orgs/{org}/members/{bob_id}"), &owner, json!({ "role": "owner" })).await;
    assert_eq!(status, StatusCode::OK);
    let (_, me) = t.get("/v1/me", &bob).await;
    assert_eq!(me["role"], "owner");
    let (status, _) = t.patch(&format!("/v1/orgs/{org}/members/{owner_id}"), &owner, json!({ "role": "viewer" })).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = t.post(&format!("/v1/orgs/{org}/projects"), &owner, json!({ "name": "web" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a viewer now");
    // Leaving: ada leaves; bob, the last owner, cannot.
    assert_eq!(t.delete(&format!("/v1/orgs/{org}/members/{owner_id}"), &owner).await.0, StatusCode::NO_CONTENT);
    assert_eq!(t.get("/v1/me", &owner).await.0, StatusCode::UNAUTHORIZED, "no longer a member");
    assert_eq!(t.delete(&format!("/v1/orgs/{org}/members/{bob_id}"), &bob).await.0, StatusCode::CONFLICT);

    let (_, events) = t.get(&format!("/v1/orgs/{org}/audit-events?limit=100"), &bob).await;
    let actions: Vec<&str> =
        events["items"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    for expected in ["invitation.create", "invitation.accept", "member.role_change", "member.leave"] {
        assert!(actions.contains(&expected), "{expected} missing from {actions:?}");
    }
    let change = events["items"].as_array().unwrap().iter().find(|e| e["action"] == "member.role_change").unwrap();
    assert_eq!(change["principal"]["kind"], "user");
    assert_eq!(change["source_ip"], "127.0.0.1");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn project_roles_and_scoped_tokens_narrow_access(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let web = t.project(&acme, "web").await;
    t.project(&acme, "data").await;
    let (dev_id, dev) = t.member(&acme, "dev@acme.test", "viewer").await;
    let cluster = json!({ "name": "c1", "spec": { "region": "eu-central-1" } });

    assert_eq!(t.post("/v1/projects/web/clusters", &dev, cluster.clone()).await.0, StatusCode::FORBIDDEN);
    let (status, _) = t
        .send(
            t.request(Method::PUT, &format!("/v1/projects/web/members/{dev_id}"), &acme.token)
                .json(&json!({ "role": "developer" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        t.post("/v1/projects/web/clusters", &dev, cluster.clone()).await.0,
        StatusCode::ACCEPTED,
        "role applies at once"
    );
    assert_eq!(t.post("/v1/projects/data/clusters", &dev, cluster.clone()).await.0, StatusCode::FORBIDDEN);
    let (_, members) = t.get("/v1/projects/web/members", &dev).await;
    assert_eq!(members[0]["principal"], dev_id.as_str());
    assert_eq!(members[0]["role"], "developer");

    // A service-account token limited to one project and to reading.
    let (_, account) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts", acme.org),
            &acme.token,
            json!({ "name": "deployer", "role": "member" }),
        )
        .await;
    let account = account["id"].as_str().unwrap();
    let (status, scoped) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts/{account}/tokens", acme.org),
            &acme.token,
            json!({ "name": "ro", "project": "web", "scopes": ["read"], "expires_in_seconds": 3600 }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{scoped}");
    assert_eq!(scoped["project"], web.as_str());
    let secret = scoped["token"].as_str().unwrap();
    assert!(secret.starts_with("moke_sat_") && moke_iam::token::parse(secret).is_some());
    assert_eq!(t.get("/v1/projects/web", secret).await.0, StatusCode::OK);
    assert_eq!(t.get("/v1/projects/data", secret).await.0, StatusCode::NOT_FOUND);
    let (_, listed) = t.get(&format!("/v1/orgs/{}/projects", acme.org), secret).await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    assert_eq!(t.post("/v1/projects/web/clusters", secret, cluster.clone()).await.0, StatusCode::FORBIDDEN);
    let (status, body) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts/{account}/tokens", acme.org),
            &acme.token,
            json!({ "name": "bad", "project": "nope", "scopes": ["fly"] }),
        )
        .await;
    assert_eq!(
        (status, bad_fields(&body)),
        (StatusCode::BAD_REQUEST, vec!["scopes".to_string(), "project".to_string()])
    );

    // Revoked: refused on the next request. Deleting the account ends all its tokens.
    let (_, second) = t
        .post(&format!("/v1/orgs/{}/service-accounts/{account}/tokens", acme.org), &acme.token, json!({ "name": "rw" }))
        .await;
    let second = second["token"].as_str().unwrap();
    assert_eq!(
        t.post(&format!("/v1/orgs/{}/projects", acme.org), second, json!({ "name": "ops" })).await.0,
        StatusCode::CREATED
    );
    let scoped_id = scoped["id"].as_str().unwrap();
    assert_eq!(
        t.delete(&format!("/v1/orgs/{}/tokens/{scoped_id}", acme.org), &acme.token).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(t.get("/v1/projects/web", secret).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(
        t.delete(&format!("/v1/orgs/{}/service-accounts/{account}", acme.org), &acme.token).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(t.get("/v1/projects/web", second).await.0, StatusCode::UNAUTHORIZED);

    // Personal tokens act as their person, with their person's roles.
    let (_, pat) = t.post("/v1/me/tokens", &dev, json!({ "name": "laptop" })).await;
    let pat_secret = pat["token"].as_str().unwrap();
    assert!(pat_secret.starts_with("moke_pat_"));
    assert_eq!(pat["user"], dev_id.as_str());
    assert_eq!(
        t.post("/v1/projects/web/clusters", pat_secret, json!({ "name": "c2", "spec": { "region": "eu-central-1" } }))
            .await
            .0,
        StatusCode::ACCEPTED
    );
    assert_eq!(t.post("/v1/projects/data/clusters", pat_secret, cluster).await.0, StatusCode::FORBIDDEN);
    assert_eq!(
        t.delete(&format!("/v1/me/tokens/{}", pat["id"].as_str().unwrap()), &dev).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(t.get("/v1/me", pat_secret).await.0, StatusCode::UNAUTHORIZED);
    // Stored only as a peppered hash.
    let hashes: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT token_hash FROM api_tokens WHERE kind = 'pat'").fetch_all(&t.pool).await.unwrap();
    assert_ne!(hashes[0], moke_iam::token::plain_hash(pat_secret).to_vec());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn foundation_tokens_keep_working_as_service_accounts(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    // A token minted the foundation's way (`moke_` + 40, plain SHA-256), before service accounts existed.
    let legacy = format!("moke_{}", "L".repeat(40));
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    sqlx::query(
        "INSERT INTO api_tokens (id, org_id, name, role, token_hash, token_hint) VALUES ($1, $2, 'old-ci', 'member', $3, 'moke_LLLL')",
    )
    .bind(uuid::Uuid::now_v7())
    .bind(org.uuid())
    .bind(moke_iam::token::plain_hash(&legacy).to_vec())
    .execute(&t.pool)
    .await
    .unwrap();
    assert_eq!(
        t.post(&format!("/v1/orgs/{}/projects", acme.org), &legacy, json!({ "name": "web" })).await.0,
        StatusCode::CREATED
    );
    let (_, me) = t.get("/v1/me", &legacy).await;
    assert_eq!((me["kind"].as_str(), me["role"].as_str()), (Some("service_account"), Some("member")));
    // The old endpoint still makes tokens, now backed by a service account.
    let (status, made) =
        t.post(&format!("/v1/orgs/{}/tokens", acme.org), &acme.token, json!({ "name": "ci", "role": "viewer" })).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(made["kind"], "service_account");
    assert!(made["service_account"].as_str().unwrap().starts_with("sa_"));
    let (_, accounts) = t.get(&format!("/v1/orgs/{}/service-accounts", acme.org), &acme.token).await;
    let names: Vec<&str> = accounts["items"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"ci"), "{names:?}");
}
