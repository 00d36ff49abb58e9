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

use moke_api::model::{
    AuditEventView, InvitationView, MeView, MemberView, MembershipSummary, OperationView, Page, ProjectMemberView,
    ProjectView, ServiceAccountView, SessionTokens, SignupAccepted, SignupResponse, TokenCreated,
};
use moke_iam::{Action, OrgRole, ProjectRole};

use crate::common::{Answer, MEMBER_PASSWORD, OidcProvider, Tenant, TestApp, VaultProxy, eventually};

const PASSWORD: &str = "plum tractor velvet 1987";

/// A person who signed up (and confirmed the mailed link): user, organization, session.
async fn signup(t: &TestApp, email: &str, org: &str) -> SignupResponse {
    serde_json::from_value(t.sign_up(email, PASSWORD, org).await).expect("a sign-up answer")
}

/// The organization a sign-up made, with the new owner's session as the credential.
fn signed_in(made: &SignupResponse) -> Tenant {
    Tenant { org: made.organization.id.to_string(), token: made.session.access_token.clone() }
}

/// Signs in to `org` (or the default organization) and returns the session.
async fn session(t: &TestApp, email: &str, password: &str, org: Option<&str>) -> SessionTokens {
    serde_json::from_value(t.login(email, password, org).await).expect("a session")
}

async fn mailed_token(t: &TestApp, kind: &str, to: &str) -> String {
    t.mailed_token(kind, to).await
}

/// `GET /v1/me` with `token`.
async fn me(t: &TestApp, token: &str) -> Answer<MeView> {
    t.anonymous().with_token(token).get("/v1/me").await
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn signup_confirms_the_address_and_signs_in(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let made = signup(&t, " Ada@Example.COM ", "ada-labs").await;
    assert_eq!(made.user.email, "ada@example.com");
    assert!(made.user.email_verified, "following the mailed link proved the address");
    let ada = t.client(&signed_in(&made));
    let me: MeView = ada.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!(me.role, OrgRole::Owner);
    assert_eq!(me.organization, made.organization.id);

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
    let anonymous = t.anonymous();
    let problem = anonymous
        .post::<SignupResponse>("/v1/signup/confirm", json!({ "token": token, "password": PASSWORD }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["token"]);

    // One account per address, whatever its case: the owner is mailed a
    // note, and the answer is the one a new address gets.
    anonymous
        .post::<SignupAccepted>(
            "/v1/signup",
            json!({ "email": "ADA@example.com", "password": PASSWORD, "display_name": "A", "organization_name": "other" }),
        )
        .await
        .expect(StatusCode::ACCEPTED);
    eventually(10, "the note to the existing account", async || {
        !t.mails("signup_existing", "ada@example.com").is_empty()
    })
    .await;
    for weak in ["short", "1q2w3e4r5t6y", "Password123456!"] {
        let problem = anonymous
            .post::<SignupAccepted>(
                "/v1/signup",
                json!({ "email": "new@example.com", "password": weak, "display_name": "N", "organization_name": "n" }),
            )
            .await
            .about(weak)
            .refused(StatusCode::BAD_REQUEST);
        assert_eq!(problem.fields(), ["password"], "{weak}");
    }
    let stored: String = sqlx::query_scalar("SELECT password_hash FROM users").fetch_one(&t.pool).await.unwrap();
    assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
    let events: Page<AuditEventView> = ada.get(&ada.org_path("/audit-events")).await.expect(StatusCode::OK);
    let actions: Vec<&str> = events.items.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["user.signup"]);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn password_reset_is_single_use_and_ends_sessions(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let made = signup(&t, "ada@example.com", "ada-labs").await;
    let old_access = made.session.access_token.as_str();

    // Unknown addresses get the same answer, and a note instead of a link.
    let anonymous = t.anonymous();
    let reset = async |email: &str| anonymous.post::<()>("/v1/auth/password-reset", json!({ "email": email })).await;
    reset("nobody@example.com").await.expect(StatusCode::ACCEPTED);
    assert_eq!(t.count("mail_outbox WHERE kind = 'password_reset'").await, 0);
    assert_eq!(t.count("mail_outbox WHERE kind = 'password_reset_unknown'").await, 1);
    reset("ada@example.com").await.expect(StatusCode::ACCEPTED);
    let token = mailed_token(&t, "password_reset", "ada@example.com").await;
    let new_password = "quiet harbor lantern 55";
    let confirm = json!({ "token": token, "password": new_password });
    anonymous.post::<()>("/v1/auth/password-reset/confirm", confirm.clone()).await.expect(StatusCode::NO_CONTENT);
    anonymous
        .post::<()>("/v1/auth/password-reset/confirm", confirm)
        .await
        .about("the token works once")
        .refused(StatusCode::BAD_REQUEST);

    me(&t, old_access).await.about("sessions ended").refused(StatusCode::UNAUTHORIZED);
    anonymous
        .post::<SessionTokens>("/v1/auth/login", json!({ "email": "ada@example.com", "password": PASSWORD }))
        .await
        .refused(StatusCode::UNAUTHORIZED);
    session(&t, "ada@example.com", new_password, None).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn refresh_tokens_rotate_and_reuse_revokes_the_family(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    signup(&t, "ada@example.com", "ada-labs").await;
    let first = session(&t, "ada@example.com", PASSWORD, None).await;
    let r1 = first.refresh_token.as_str();
    let anonymous = t.anonymous();
    let refresh = async |token: &str| {
        anonymous.post::<SessionTokens>("/v1/auth/refresh", json!({ "refresh_token": token })).await
    };
    let logout = async |token: &str| anonymous.post::<()>("/v1/auth/logout", json!({ "refresh_token": token })).await;
    let second = refresh(r1).await.expect(StatusCode::OK);
    let (r2, a2) = (second.refresh_token.as_str(), second.access_token.as_str());
    assert_ne!(r1, r2);
    me(&t, a2).await.expect(StatusCode::OK);

    // r1 again: a thief or a replay. The whole session ends.
    refresh(r1).await.refused(StatusCode::UNAUTHORIZED);
    refresh(r2).await.about("the rotated token died with its family").refused(StatusCode::UNAUTHORIZED);
    me(&t, a2).await.about("and so did its access tokens").refused(StatusCode::UNAUTHORIZED);
    let reason: String = sqlx::query_scalar("SELECT revoked_reason FROM sessions WHERE revoked_at IS NOT NULL")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(reason, "refresh_token_reuse");

    // Logout ends a session; ending it again succeeds.
    let third = session(&t, "ada@example.com", PASSWORD, None).await;
    let (a3, r3) = (third.access_token.as_str(), third.refresh_token.as_str());
    logout(r3).await.expect(StatusCode::NO_CONTENT);
    me(&t, a3).await.refused(StatusCode::UNAUTHORIZED);
    refresh(r3).await.refused(StatusCode::UNAUTHORIZED);
    logout(r3).await.expect(StatusCode::NO_CONTENT);
    // Logout by access token alone.
    let a4 = &session(&t, "ada@example.com", PASSWORD, None).await.access_token;
    anonymous.with_token(a4).post::<()>("/v1/auth/logout", json!({})).await.expect(StatusCode::NO_CONTENT);
    me(&t, a4).await.refused(StatusCode::UNAUTHORIZED);
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
    let good = &session(&t, "ada@example.com", PASSWORD, None).await.access_token;
    me(&t, good).await.expect(StatusCode::OK);
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
    let jwks = t.anonymous().get::<Value>("/.well-known/jwks.json").await.expect(StatusCode::OK);
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
        me(&t, &token)
            .await
            .about(format!("{name} was accepted"))
            .refused_with(StatusCode::UNAUTHORIZED, "unauthenticated");
    }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn rotated_keys_keep_old_tokens_valid_until_expiry(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    signup(&t, "ada@example.com", "ada-labs").await;
    let old = &session(&t, "ada@example.com", PASSWORD, None).await.access_token;
    let kid_of = |token: &str| jsonwebtoken::decode_header(token).unwrap().kid.unwrap();
    let old_kid = kid_of(old);

    let rotated = t.app.rotate_signing_key().await.unwrap();
    assert_ne!(rotated.kid, old_kid);
    let new = &session(&t, "ada@example.com", PASSWORD, None).await.access_token;
    assert_eq!(kid_of(new), rotated.kid, "new tokens use the new key");
    me(&t, new).await.expect(StatusCode::OK);
    me(&t, old).await.about("old tokens stay valid").expect(StatusCode::OK);
    let jwks = t.anonymous().get::<Value>("/.well-known/jwks.json").await.expect(StatusCode::OK);
    let kids: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert!(kids.contains(&old_kid.as_str()) && kids.contains(&rotated.kid.as_str()));
    assert!(jwks["keys"].as_array().unwrap().iter().all(|k| k["alg"] == "ES256" && k.get("d").is_none()));

    // Another gateway of the same deployment picks the rotation up from Vault.
    let second = TestApp::start_with(PgPoolOptions::new(), t_connect(&t), |_| {}).await;
    me(&second, new).await.expect(StatusCode::OK);
    me(&second, old).await.expect(StatusCode::OK);
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
    let org = made.organization.id.to_string();
    let access = made.session.access_token.as_str();
    let pat: TokenCreated = t
        .client(&signed_in(&made))
        .post("/v1/me/tokens", json!({ "name": "laptop" }))
        .await
        .expect(StatusCode::CREATED);
    let pat = pat.token.as_str();
    assert!(pat.starts_with("moke_pat_"));

    proxy.cut();
    me(&t, access).await.about("JWTs verify from cached keys").expect(StatusCode::OK);
    me(&t, pat).await.about("API tokens hash with the cached pepper").expect(StatusCode::OK);
    let fresh = session(&t, "ada@example.com", PASSWORD, None).await;
    me(&t, &fresh.access_token).await.expect(StatusCode::OK);

    // Storing an SSO client secret needs Vault's transit engine.
    let ada = t.client(&signed_in(&made));
    let sso = json!({
        "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
        "allowed_domains": [], "default_role": "member",
    });
    ada.put::<Value>(&format!("/v1/orgs/{org}/sso"), sso)
        .await
        .refused_with(StatusCode::SERVICE_UNAVAILABLE, "vault_unavailable");
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
        me(&t, &acme.token).await.expect(StatusCode::OK);
    }
    let response = t.request(Method::GET, "/v1/me", &acme.token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string());
    assert_eq!(header("ratelimit-limit").as_deref(), Some("1"));
    assert_eq!(header("ratelimit-remaining").as_deref(), Some("0"));
    assert_eq!(header("ratelimit-policy").as_deref(), Some("1;w=1"));
    assert!(header("retry-after").unwrap().parse::<u64>().unwrap() >= 1);
    assert!(header("ratelimit-reset").is_some());
    let problem: crate::common::Problem = response.json().await.unwrap();
    assert_eq!(problem.code, "rate_limited", "{problem:?}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    me(&t, &acme.token).await.about("the limit refills").expect(StatusCode::OK);

    // Wrong passwords back the account off, even for the right one next.
    t.member(&acme, "bob@acme.test", "member").await;
    for _ in 0..2 {
        t.anonymous()
            .post::<SessionTokens>(
                "/v1/auth/login",
                json!({ "email": "bob@acme.test", "password": "wrong wrong wrong" }),
            )
            .await
            .refused(StatusCode::UNAUTHORIZED);
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
    t.anonymous()
        .post::<SessionTokens>("/v1/auth/login", json!({ "email": "x@acme.test", "password": "p" }))
        .await
        .refused(StatusCode::TOO_MANY_REQUESTS);
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
    let ada_signup = signup(&t, "ada@example.com", "ada-labs").await;
    let ada = t.client(&signed_in(&ada_signup));
    let org = ada.org.clone();
    let ada_id = ada_signup.user.id.to_string();
    let member = |id: &str| format!("/v1/orgs/{org}/members/{id}");

    // The last owner can neither step down nor leave.
    ada.patch::<MemberView>(&member(&ada_id), json!({ "role": "admin" }))
        .await
        .refused_with(StatusCode::CONFLICT, "last_owner");
    ada.delete::<()>(&member(&ada_id)).await.refused_with(StatusCode::CONFLICT, "last_owner");

    // An invitation by e-mail, accepted once by that address.
    ada.post::<InvitationView>(&ada.org_path("/invitations"), json!({ "email": "Bob@Example.com", "role": "admin" }))
        .await
        .expect(StatusCode::CREATED);
    let token = mailed_token(&t, "invitation", "bob@example.com").await;
    let bob_signup = signup(&t, "bob@example.com", "bob-home").await;
    let bob_home = t.client(&signed_in(&bob_signup));
    let mallory = t.client(&signed_in(&signup(&t, "mallory@example.com", "mallory-home").await));
    let accept = json!({ "token": token });
    let problem = mallory
        .post::<MembershipSummary>("/v1/invitations/accept", accept.clone())
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["token"]);
    let joined: MembershipSummary =
        bob_home.post("/v1/invitations/accept", accept.clone()).await.expect(StatusCode::OK);
    assert_eq!(joined.role, OrgRole::Admin);
    bob_home.post::<MembershipSummary>("/v1/invitations/accept", accept).await.refused(StatusCode::BAD_REQUEST);
    let bob = ada.with_token(&session(&t, "bob@example.com", PASSWORD, Some(&org)).await.access_token);
    let bob_id = bob_signup.user.id.to_string();
    let me: MeView = bob.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!((me.organization.to_string(), me.role), (org.clone(), OrgRole::Admin));
    assert_eq!(me.memberships.len(), 2);

    // An admin cannot make owners or touch owners.
    let problem =
        bob.patch::<MemberView>(&member(&bob_id), json!({ "role": "owner" })).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["role"]);
    bob.patch::<MemberView>(&member(&ada_id), json!({ "role": "viewer" })).await.refused(StatusCode::FORBIDDEN);
    // The owner promotes bob; now ada may step down, and the change applies on bob's next request.
    ada.patch::<MemberView>(&member(&bob_id), json!({ "role": "owner" })).await.expect(StatusCode::OK);
    let me: MeView = bob.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!(me.role, OrgRole::Owner);
    ada.patch::<MemberView>(&member(&ada_id), json!({ "role": "viewer" })).await.expect(StatusCode::OK);
    let refused = ada.post::<ProjectView>(&ada.org_path("/projects"), json!({ "name": "web" })).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "a viewer now: {refused:?}");
    // Leaving: ada leaves; bob, the last owner, cannot.
    ada.delete::<()>(&member(&ada_id)).await.expect(StatusCode::NO_CONTENT);
    let gone = ada.get::<MeView>("/v1/me").await;
    assert_eq!(gone.status, StatusCode::UNAUTHORIZED, "no longer a member: {gone:?}");
    bob.delete::<()>(&member(&bob_id)).await.refused(StatusCode::CONFLICT);

    let events: Page<AuditEventView> = bob.get(&bob.org_path("/audit-events?limit=100")).await.expect(StatusCode::OK);
    let actions: Vec<&str> = events.items.iter().map(|e| e.action.as_str()).collect();
    for expected in ["invitation.create", "invitation.accept", "member.role_change", "member.leave"] {
        assert!(actions.contains(&expected), "{expected} missing from {actions:?}");
    }
    let change = events.items.iter().find(|e| e.action == "member.role_change").unwrap();
    assert_eq!(change.principal.kind, "user");
    assert_eq!(change.source_ip.as_deref(), Some("127.0.0.1"));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn project_roles_and_scoped_tokens_narrow_access(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let web = owner.create_project("web").await.id.to_string();
    owner.create_project("data").await;
    let (dev_id, dev) = t.member(&acme, "dev@acme.test", "viewer").await;
    let dev = owner.with_token(&dev);
    let cluster = json!({ "name": "c1", "spec": { "region": "eu-central-1" } });

    dev.post::<OperationView>("/v1/projects/web/clusters", cluster.clone()).await.refused(StatusCode::FORBIDDEN);
    owner.grant_project_role("web", &dev_id, "developer").await;
    let created = dev.post::<OperationView>("/v1/projects/web/clusters", cluster.clone()).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "role applies at once: {created:?}");
    dev.post::<OperationView>("/v1/projects/data/clusters", cluster.clone()).await.refused(StatusCode::FORBIDDEN);
    let members: Page<ProjectMemberView> = dev.get("/v1/projects/web/members").await.expect(StatusCode::OK);
    assert_eq!(members.items[0].principal, dev_id);
    assert_eq!(members.items[0].role, ProjectRole::Developer);

    // A service-account token limited to one project and to reading.
    let account: ServiceAccountView = owner.create_service_account("deployer", "member").await;
    let account = account.id.to_string();
    let answer = owner
        .post::<TokenCreated>(
            &owner.org_path(&format!("/service-accounts/{account}/tokens")),
            json!({ "name": "ro", "project": "web", "scopes": ["read"], "expires_in_seconds": 3600 }),
        )
        .await;
    let scoped = answer.expect(StatusCode::CREATED);
    // The whole answer: the secret shown once, the limits it carries.
    insta::assert_json_snapshot!("scoped_service_account_token", answer.body, {
        ".id" => "[id]",
        ".service_account" => "[service account id]",
        ".project" => "[project id]",
        ".token" => "[secret]",
        ".hint" => "[hint]",
        ".created_at" => "[time]",
        ".expires_at" => "[time]",
    });
    assert_eq!(scoped.view.project.map(|p| p.to_string()), Some(web.clone()));
    assert_eq!(scoped.view.scopes, Some(vec![Action::Read]));
    let secret = scoped.token.as_str();
    assert!(secret.starts_with("moke_sat_") && moke_iam::token::parse(secret).is_some());
    let ro = owner.with_token(secret);
    ro.get::<ProjectView>("/v1/projects/web").await.expect(StatusCode::OK);
    ro.get::<ProjectView>("/v1/projects/data").await.refused(StatusCode::NOT_FOUND);
    let listed: Page<ProjectView> = ro.get(&ro.org_path("/projects")).await.expect(StatusCode::OK);
    assert_eq!(listed.items.len(), 1);
    ro.post::<OperationView>("/v1/projects/web/clusters", cluster.clone()).await.refused(StatusCode::FORBIDDEN);
    let problem = owner
        .post::<TokenCreated>(
            &owner.org_path(&format!("/service-accounts/{account}/tokens")),
            json!({ "name": "bad", "project": "nope", "scopes": ["fly"] }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["scopes", "project"]);

    // Revoked: refused on the next request. Deleting the account ends all its tokens.
    let second = owner.create_account_token(&account, "rw", json!({})).await;
    let rw = owner.with_token(&second.token);
    rw.post::<ProjectView>(&rw.org_path("/projects"), json!({ "name": "ops" })).await.expect(StatusCode::CREATED);
    owner.delete::<()>(&owner.org_path(&format!("/tokens/{}", scoped.view.id))).await.expect(StatusCode::NO_CONTENT);
    ro.get::<ProjectView>("/v1/projects/web").await.refused(StatusCode::UNAUTHORIZED);
    owner.delete::<()>(&owner.org_path(&format!("/service-accounts/{account}"))).await.expect(StatusCode::NO_CONTENT);
    rw.get::<ProjectView>("/v1/projects/web").await.refused(StatusCode::UNAUTHORIZED);

    // Personal tokens act as their person, with their person's roles.
    let pat: TokenCreated = dev.post("/v1/me/tokens", json!({ "name": "laptop" })).await.expect(StatusCode::CREATED);
    assert!(pat.token.starts_with("moke_pat_"));
    assert_eq!(pat.view.user.map(|u| u.to_string()), Some(dev_id.clone()));
    let laptop = owner.with_token(&pat.token);
    laptop
        .post::<OperationView>(
            "/v1/projects/web/clusters",
            json!({ "name": "c2", "spec": { "region": "eu-central-1" } }),
        )
        .await
        .expect(StatusCode::ACCEPTED);
    laptop.post::<OperationView>("/v1/projects/data/clusters", cluster).await.refused(StatusCode::FORBIDDEN);
    dev.delete::<()>(&format!("/v1/me/tokens/{}", pat.view.id)).await.expect(StatusCode::NO_CONTENT);
    laptop.get::<MeView>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    // Stored only as a peppered hash.
    let hashes: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT token_hash FROM api_tokens WHERE kind = 'pat'").fetch_all(&t.pool).await.unwrap();
    assert_ne!(hashes[0], moke_iam::token::plain_hash(&pat.token).to_vec());
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
    let owner = t.client(&acme);
    let old = owner.with_token(&legacy);
    old.post::<ProjectView>(&old.org_path("/projects"), json!({ "name": "web" })).await.expect(StatusCode::CREATED);
    let me: MeView = old.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!((me.kind.as_str(), me.role), ("service_account", OrgRole::Member));
    // The old endpoint still makes tokens, now backed by a service account.
    let made = owner.create_token("ci", "viewer").await;
    assert_eq!(made.view.kind, "service_account");
    assert!(made.view.service_account.unwrap().to_string().starts_with("sa_"));
    let accounts: Page<ServiceAccountView> =
        owner.get(&owner.org_path("/service-accounts")).await.expect(StatusCode::OK);
    let names: Vec<&str> = accounts.items.iter().map(|a| a.name.as_str()).collect();
    assert!(names.contains(&"ci"), "{names:?}");
}

/// A person makes another organization, acts in it once signed in to it,
/// renames it, and deletes it once empty; everything that could act in it
/// stops, its name stays taken, and the last organization a person has
/// cannot go. Creating is a person's act, never a service account's; gRPC and
/// GraphQL make and rename the same way.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_person_makes_renames_and_deletes_an_organization(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_api::model::OrgView;
    use moke_proto::v1::org_service_client::OrgServiceClient;
    use tonic::transport::Channel;

    let t = TestApp::start(options, connect).await;
    let made = signup(&t, "ada@example.com", "first").await;
    let ada = t.client(&signed_in(&made));

    let second: OrgView = ada
        .post("/v1/orgs", json!({ "name": "second", "display_name": "  Second  ", "labels": { "team": "web" } }))
        .await
        .expect(StatusCode::CREATED);
    assert_eq!((second.name.as_str(), second.display_name.as_str()), ("second", "Second"));
    ada.post::<Value>("/v1/orgs", json!({ "name": "second" })).await.refused(StatusCode::BAD_REQUEST);
    ada.post::<Value>("/v1/orgs", json!({ "name": "Not A Label" })).await.refused(StatusCode::BAD_REQUEST);
    // The session acts where it was opened: the new organization is another one's to it.
    ada.get::<Value>(&format!("/v1/orgs/{}", second.id)).await.refused(StatusCode::NOT_FOUND);
    // A service account is no person.
    let robot = t.tenant("robots").await;
    t.client(&robot)
        .post::<Value>("/v1/orgs", json!({ "name": "robotic" }))
        .await
        .refused_with(StatusCode::FORBIDDEN, "person_only");

    // Signed in to it, Ada owns it: a project in it, a rename, a stale rename refused.
    let there = session(&t, "ada@example.com", PASSWORD, Some("second")).await;
    let in_second = t.client(&Tenant { org: second.id.to_string(), token: there.access_token.clone() });
    let project = in_second.create_project("web").await;
    let rename = |name: &str| {
        in_second
            .request(Method::PATCH, &format!("/v1/orgs/{}", second.id))
            .header("if-match", &second.etag)
            .json(&json!({ "name": name }))
    };
    let renamed: OrgView = in_second.send(rename("second-co")).await.expect(StatusCode::OK);
    assert_eq!(renamed.name, "second-co");
    in_second.send::<Value>(rename("second-again")).await.refused(StatusCode::PRECONDITION_FAILED);
    // Every name stays the organization's, so it takes at most three in 30 days.
    let path = format!("/v1/orgs/{}", second.id);
    let renamed: OrgView = in_second.patch(&path, json!({ "name": "second-inc" })).await.expect(StatusCode::OK);
    assert_eq!(renamed.name, "second-inc");
    let refused = in_second.patch::<Value>(&path, json!({ "name": "second-gmbh" })).await;
    assert_eq!(refused.refused_with(StatusCode::CONFLICT, "quota_exceeded").status, 409);
    let back: OrgView = in_second.patch(&path, json!({ "name": "second-co" })).await.expect(StatusCode::OK);
    assert_eq!(back.name, "second-co", "a name it already holds is not another");

    // Over gRPC and GraphQL: made, then renamed, the same way.
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let bearer = crate::grpc::Bearer(format!("Bearer {}", made.session.access_token).parse().unwrap());
    let mut orgs = OrgServiceClient::with_interceptor(channel, bearer);
    let third = orgs
        .create_org(moke_proto::v1::CreateOrgRequest {
            name: "third".into(),
            request_id: "o-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let again = orgs
        .create_org(moke_proto::v1::CreateOrgRequest {
            name: "third".into(),
            request_id: "o-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((third.display_name.as_str(), again.id.as_str()), ("third", third.id.as_str()), "request_id: one org");
    let at_third = session(&t, "ada@example.com", PASSWORD, Some("third")).await;
    let (status, answer) = t
        .send(t.request(Method::POST, "/graphql", &at_third.access_token).json(&json!({
            "query": "mutation($org: ID!) { updateOrg(org: $org, input: { displayName: \"Third Co\" }) { name displayName } }",
            "variables": { "org": third.id },
        })))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["data"]["updateOrg"], json!({ "name": "third", "displayName": "Third Co" }), "{answer}");

    // The old name stays the organization's: nobody else takes it.
    let bob = signup(&t, "bob@example.com", "bobs").await;
    t.client(&signed_in(&bob))
        .post::<Value>("/v1/orgs", json!({ "name": "second" }))
        .await
        .refused(StatusCode::BAD_REQUEST);

    // Deleting: never with a token, not while it holds a project, then at
    // once for everyone in it.
    let org_path = format!("/v1/orgs/{}", second.id);
    let pat: TokenCreated =
        in_second.post("/v1/me/tokens", json!({ "name": "laptop" })).await.expect(StatusCode::CREATED);
    in_second
        .with_token(&pat.token)
        .delete::<Value>(&org_path)
        .await
        .refused_with(StatusCode::FORBIDDEN, "session_only");
    in_second.delete::<Value>(&org_path).await.refused_with(StatusCode::CONFLICT, "org_not_empty");
    in_second.delete::<Value>(&format!("/v1/projects/{}", project.id)).await.expect(StatusCode::NO_CONTENT);
    in_second.delete::<Value>(&org_path).await.expect(StatusCode::NO_CONTENT);
    in_second.get::<Value>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    in_second.with_token(&pat.token).get::<Value>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    let (status, _) = t
        .post_public(
            "/v1/auth/login",
            json!({ "email": "ada@example.com", "password": PASSWORD, "organization": "second-co" }),
        )
        .await;
    assert_ne!(status, StatusCode::OK, "no one signs in to a deleted organization");
    ada.post::<Value>("/v1/orgs", json!({ "name": "second-co" })).await.refused(StatusCode::BAD_REQUEST);
    ada.get::<Value>("/v1/me").await.expect(StatusCode::OK);

    // The last organization a person has stays; the one made over gRPC
    // recorded who made it, in itself.
    let in_third = t.client(&Tenant { org: third.id.clone(), token: at_third.access_token.clone() });
    let audit: Page<AuditEventView> =
        in_third.get(&format!("/v1/orgs/{}/audit-events?action=org.create", third.id)).await.expect(StatusCode::OK);
    assert_eq!(audit.items.len(), 1, "{audit:?}");
    in_third.delete::<Value>(&format!("/v1/orgs/{}", third.id)).await.expect(StatusCode::NO_CONTENT);
    ada.delete::<Value>(&format!("/v1/orgs/{}", made.organization.id))
        .await
        .refused_with(StatusCode::CONFLICT, "last_organization");
}
