//! Device sign-in (OAuth 2.0 Device Authorization Grant, RFC 8628), as
//! `moke auth login` uses it: a device asks for codes, a person signed in
//! elsewhere confirms (or denies) the user code, and the device's polling
//! receives a personal token once.

use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use moke_api::model::{
    DeviceAuthorizationCreated, DeviceAuthorizationView, DeviceToken, MeView, Page, SignupResponse, TokenCreated,
    TokenView,
};

use crate::common::{Answer, Client, TestApp};

const PASSWORD: &str = "correct horse battery staple";
const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// A device starts signing in.
async fn start(t: &TestApp, client_name: Option<&str>) -> DeviceAuthorizationCreated {
    let body = match client_name {
        Some(name) => json!({ "client_name": name }),
        None => json!({}),
    };
    t.anonymous().post("/v1/device/auth", body).await.expect(StatusCode::OK)
}

/// The device polls once.
async fn poll(t: &TestApp, device: &DeviceAuthorizationCreated) -> Answer<DeviceToken> {
    t.anonymous().post("/v1/device/token", json!({ "device_code": device.device_code, "grant_type": GRANT })).await
}

/// The device polls after waiting as long as it was told to.
async fn poll_later(t: &TestApp, device: &DeviceAuthorizationCreated) -> Answer<DeviceToken> {
    sqlx::query("UPDATE device_authorizations SET last_polled_at = now() - interval '1 minute'")
        .execute(&t.pool)
        .await
        .unwrap();
    poll(t, device).await
}

/// A person who signed up (owning an organization), as a client of their session.
async fn person<'a>(t: &'a TestApp, email: &str, org: &str) -> (SignupResponse, Client<'a>) {
    let made = t.signed_up(email, PASSWORD, org).await;
    let client = t.anonymous().with_token(&made.session.access_token);
    (made, client)
}

async fn confirm(client: &Client<'_>, code: &str, org: Option<&str>) -> Answer<DeviceAuthorizationView> {
    let body = match org {
        Some(org) => json!({ "user_code": code, "organization": org }),
        None => json!({ "user_code": code }),
    };
    client.post("/v1/device/confirm", body).await
}

async fn status_of(t: &TestApp, device: &DeviceAuthorizationCreated) -> String {
    let code = device.user_code.replace('-', "");
    sqlx::query_scalar("SELECT status FROM device_authorizations WHERE user_code = $1")
        .bind(code)
        .fetch_one(&t.pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_confirmed_device_receives_a_personal_token_once(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| c.http.public_url = "https://moke.example/".into()).await;
    let device = start(&t, Some("moke CLI (laptop)")).await;
    let code = device.user_code.clone();
    assert!(
        code.len() == 9
            && code.as_bytes()[4] == b'-'
            && code.replace('-', "").bytes().all(|b| b"BCDFGHJKLMNPQRSTVWXZ".contains(&b)),
        "{code}"
    );
    assert_eq!(device.device_code.len(), 43, "32 bytes, base64url");
    assert_eq!(device.verification_uri, "https://moke.example/device");
    assert_eq!(device.verification_uri_complete, format!("https://moke.example/device?user_code={code}"));
    assert_eq!((device.expires_in, device.interval), (600, 5));
    // Only the device code's hash is stored.
    let hashed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM device_authorizations WHERE device_code_hash = sha256(convert_to($1, 'UTF8'))",
    )
    .bind(&device.device_code)
    .fetch_one(&t.pool)
    .await
    .unwrap();
    assert_eq!(hashed, 1);

    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "authorization_pending");

    let (ada, session) = person(&t, "ada@example.com", "ada").await;
    // Typed in lower case, without the dash.
    let approved = confirm(&session, &code.to_lowercase().replace('-', " "), None).await.expect(StatusCode::OK);
    assert_eq!(approved.status, "approved");
    assert_eq!(approved.user_code, code);
    assert_eq!(approved.client_name.as_deref(), Some("moke CLI (laptop)"));
    assert_eq!(approved.organization, Some(ada.organization.id));

    let token = poll(&t, &device).await.expect(StatusCode::OK);
    assert!(token.access_token.starts_with("moke_pat_"), "{}", token.access_token);
    assert_eq!(token.token_type, "Bearer");
    assert_eq!((token.user, token.organization), (ada.user.id, ada.organization.id));
    let lifetime = token.expires_at.expect("a device token always expires") - chrono::Utc::now();
    assert!((89..=90).contains(&lifetime.num_days()), "90 days unless a policy says less: {lifetime}");

    // The token acts as the person in that organization.
    let cli = t.anonymous().with_token(&token.access_token);
    let me: MeView = cli.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!((me.kind.as_str(), me.id.as_str()), ("user", ada.user.id.to_string().as_str()));
    assert_eq!(me.organization, ada.organization.id);
    let mine: Page<TokenView> = session.get("/v1/me/tokens").await.expect(StatusCode::OK);
    assert_eq!(mine.items.len(), 1);
    assert_eq!((mine.items[0].id, mine.items[0].name.as_str()), (token.token_id, "device sign-in: moke CLI (laptop)"));

    // Never a second token: the device code is spent, the user code too.
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "expired_token");
    poll_later(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "expired_token");
    assert_eq!(t.count("api_tokens WHERE kind = 'pat'").await, 1);
    let used = confirm(&session, &code, None).await.refused_with(StatusCode::GONE, "code_used");
    assert_eq!(used.fields(), ["user_code"]);

    // Audited: the request, the confirmation and the token issued (with the token's own event).
    let actions: Vec<String> = sqlx::query_scalar(
        "SELECT action FROM audit_events WHERE action LIKE 'auth.device%' OR action = 'token.create' ORDER BY action",
    )
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert_eq!(
        actions,
        [
            "auth.device_authorization_confirm",
            "auth.device_authorization_confirm",
            "auth.device_authorization_request",
            "auth.device_token_issue",
            "token.create",
        ]
    );
    let outcomes: Vec<String> = sqlx::query_scalar(
        "SELECT outcome FROM audit_events WHERE action = 'auth.device_authorization_confirm' ORDER BY occurred_at, id",
    )
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert_eq!(outcomes, ["success", "failure"], "the second confirmation was refused");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn polling_too_fast_slows_the_device_down(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let device = start(&t, None).await;
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "authorization_pending");
    let slow = poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "slow_down");
    assert!(slow.detail.contains("10 seconds"), "{slow:?}");
    let slower = poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "slow_down");
    assert!(slower.detail.contains("15 seconds"), "each slow_down adds 5 seconds: {slower:?}");
    let interval: i32 =
        sqlx::query_scalar("SELECT interval_seconds FROM device_authorizations").fetch_one(&t.pool).await.unwrap();
    assert_eq!(interval, 15);
    // Waiting the new interval is on time again.
    sqlx::query("UPDATE device_authorizations SET last_polled_at = now() - interval '15 seconds'")
        .execute(&t.pool)
        .await
        .unwrap();
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "authorization_pending");
    // A device that polls too soon still gets its token once approved.
    let (_, session) = person(&t, "ada@example.com", "ada").await;
    confirm(&session, &device.user_code, None).await.expect(StatusCode::OK);
    poll(&t, &device).await.expect(StatusCode::OK);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_denied_device_gets_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let device = start(&t, Some("someone else's laptop")).await;
    let (_, session) = person(&t, "ada@example.com", "ada").await;
    let denied: DeviceAuthorizationView =
        session.post("/v1/device/deny", json!({ "user_code": device.user_code })).await.expect(StatusCode::OK);
    assert_eq!((denied.status.as_str(), denied.organization), ("denied", None));
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "access_denied");
    poll_later(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "access_denied");
    // Decided once: it cannot be confirmed after.
    confirm(&session, &device.user_code, None).await.refused_with(StatusCode::GONE, "code_used");
    assert_eq!(t.count("api_tokens WHERE kind = 'pat'").await, 0);
    assert_eq!(
        t.count("audit_events WHERE action = 'auth.device_authorization_deny' AND outcome = 'success'").await,
        1
    );
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn expired_codes_are_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let (_, session) = person(&t, "ada@example.com", "ada").await;
    let expire = async || {
        sqlx::query("UPDATE device_authorizations SET expires_at = now() - interval '1 second'")
            .execute(&t.pool)
            .await
            .unwrap();
    };

    // Never confirmed.
    let device = start(&t, None).await;
    expire().await;
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "expired_token");
    let expired = confirm(&session, &device.user_code, None).await.refused_with(StatusCode::GONE, "code_expired");
    assert_eq!(expired.fields(), ["user_code"]);

    // Confirmed, but not collected in time.
    sqlx::query("DELETE FROM device_authorizations").execute(&t.pool).await.unwrap();
    let device = start(&t, None).await;
    confirm(&session, &device.user_code, None).await.expect(StatusCode::OK);
    expire().await;
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "expired_token");
    assert_eq!(t.count("api_tokens WHERE kind = 'pat'").await, 0);

    // The hourly sweep forgets them a day later.
    sqlx::query("UPDATE device_authorizations SET expires_at = now() - interval '2 days'")
        .execute(&t.pool)
        .await
        .unwrap();
    t.app.purge_sign_in_leftovers().await.unwrap();
    assert_eq!(t.count("device_authorizations").await, 0);
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "invalid_grant");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn only_a_signed_in_person_confirms(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let device = start(&t, None).await;
    let (_, session) = person(&t, "ada@example.com", "ada").await;
    let tenant = t.tenant("acme").await;

    // Nobody.
    confirm(&t.anonymous(), &device.user_code, None).await.refused_with(StatusCode::UNAUTHORIZED, "unauthenticated");
    // A service-account token (the tenant's owner token is one).
    let robot = t.client(&tenant);
    confirm(&robot, &device.user_code, None).await.refused_with(StatusCode::FORBIDDEN, "session_required");
    let account = robot.create_service_account("deployer", "admin").await.id.to_string();
    let account_token = robot.create_account_token(&account, "ci", json!({})).await;
    let deployer = robot.with_token(&account_token.token);
    confirm(&deployer, &device.user_code, None).await.refused_with(StatusCode::FORBIDDEN, "session_required");
    // The person's own personal token: a leaked one must not mint more.
    let personal: TokenCreated =
        session.post("/v1/me/tokens", json!({ "name": "mine" })).await.expect(StatusCode::CREATED);
    let with_pat = session.with_token(&personal.token);
    confirm(&with_pat, &device.user_code, None).await.refused_with(StatusCode::FORBIDDEN, "session_required");
    with_pat
        .post::<Value>("/v1/device/deny", json!({ "user_code": device.user_code }))
        .await
        .refused_with(StatusCode::FORBIDDEN, "session_required");

    assert_eq!(status_of(&t, &device).await, "pending", "nothing was decided");
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "authorization_pending");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_person_approves_only_into_their_own_organizations(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let (ada, session) = person(&t, "ada@example.com", "ada").await;
    let other = t.tenant("other").await;

    // Another organization: as if it did not exist; nothing decided.
    let device = start(&t, None).await;
    let refused = confirm(&session, &device.user_code, Some(&other.org)).await;
    refused.refused_with(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(status_of(&t, &device).await, "pending");

    // Once a member there (as a viewer), the device can act there, as that viewer.
    sqlx::query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'viewer')")
        .bind(other.org.parse::<moke_api::ids::OrgId>().unwrap().uuid())
        .bind(ada.user.id.uuid())
        .execute(&t.pool)
        .await
        .unwrap();
    let approved = confirm(&session, &device.user_code, Some(&other.org)).await.expect(StatusCode::OK);
    assert_eq!(approved.organization.map(|o| o.to_string()), Some(other.org.clone()));
    let token = poll(&t, &device).await.expect(StatusCode::OK);
    assert_eq!(token.organization.to_string(), other.org);
    let cli = t.anonymous().with_token(&token.access_token);
    let me: MeView = cli.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!((me.organization.to_string(), me.role), (other.org.clone(), moke_iam::OrgRole::Viewer));
    cli.post::<Value>(&format!("/v1/orgs/{}/projects", other.org), json!({ "name": "web" }))
        .await
        .refused_with(StatusCode::FORBIDDEN, "forbidden");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_token_follows_the_session_and_the_policy(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let (ada, session) = person(&t, "ada@example.com", "ada").await;
    let policy = json!({ "max_token_lifetime_seconds": 3600 });
    session
        .put::<Value>(&format!("/v1/orgs/{}/credential-policy", ada.organization.id), policy)
        .await
        .expect(StatusCode::OK);

    // The organization's longest token lifetime applies.
    let device = start(&t, None).await;
    confirm(&session, &device.user_code, None).await.expect(StatusCode::OK);
    let token = poll(&t, &device).await.expect(StatusCode::OK);
    let lifetime = token.expires_at.expect("the policy limits it") - chrono::Utc::now();
    assert!((3500..=3600).contains(&lifetime.num_seconds()), "{lifetime}");
    let view = session.get::<Page<TokenView>>("/v1/me/tokens").await.expect(StatusCode::OK).items.remove(0);
    assert_eq!(view.name, "device sign-in: moke CLI", "the default name, marked as a device sign-in");

    // A session that ends before the device collects the token yields none.
    let device = start(&t, None).await;
    confirm(&session, &device.user_code, None).await.expect(StatusCode::OK);
    session
        .post::<Value>("/v1/auth/logout", json!({ "refresh_token": ada.session.refresh_token }))
        .await
        .expect(StatusCode::NO_CONTENT);
    poll(&t, &device).await.refused_with(StatusCode::BAD_REQUEST, "access_denied");
    assert_eq!(t.count("api_tokens WHERE kind = 'pat'").await, 1);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn guessing_user_codes_is_limited(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let device = start(&t, None).await;
    let (_, guesser) = person(&t, "mallory@example.com", "mallory").await;
    let wrong = |n: usize| {
        let letters = b"BCDFGHJKLMNPQRSTVWXZ";
        let code: String = (0..8).map(|i| char::from(letters[(n * 7 + i * 3) % 20])).collect();
        assert_ne!(code, device.user_code.replace('-', ""));
        code
    };
    for n in 0..10 {
        let miss = confirm(&guesser, &wrong(n), None).await.refused_with(StatusCode::NOT_FOUND, "not_found");
        assert_eq!(miss.fields(), ["user_code"]);
    }
    // The eleventh try waits, even with the right code, and denying counts too.
    let limited = confirm(&guesser, &device.user_code, None).await;
    limited.refused_with(StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    let retry: u64 = limited.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=600).contains(&retry), "{retry}");
    guesser
        .post::<Value>("/v1/device/deny", json!({ "user_code": device.user_code }))
        .await
        .refused_with(StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(status_of(&t, &device).await, "pending");
    assert_eq!(
        t.count("audit_events WHERE action = 'auth.device_authorization_confirm' AND outcome = 'failure'").await,
        10
    );

    // Another person is not held back; right codes do not use up tries.
    let (_, ada) = person(&t, "ada@example.com", "ada").await;
    for _ in 0..12 {
        let device = start(&t, None).await;
        confirm(&ada, &device.user_code, None).await.expect(StatusCode::OK);
    }
    confirm(&ada, &device.user_code, None).await.expect(StatusCode::OK);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn bad_input_is_refused_naming_the_field(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let anonymous = t.anonymous();
    let problem = anonymous
        .post::<Value>("/v1/device/auth", json!({ "client_name": "bad\u{7}name" }))
        .await
        .refused_with(StatusCode::BAD_REQUEST, "invalid_request");
    assert_eq!(problem.fields(), ["client_name"]);
    let long = "x".repeat(101);
    anonymous.post::<Value>("/v1/device/auth", json!({ "client_name": long })).await.refused(StatusCode::BAD_REQUEST);

    let device = start(&t, None).await;
    let wrong_grant = json!({ "device_code": device.device_code, "grant_type": "authorization_code" });
    anonymous
        .post::<Value>("/v1/device/token", wrong_grant)
        .await
        .refused_with(StatusCode::BAD_REQUEST, "unsupported_grant_type");
    let unknown = json!({ "device_code": "A".repeat(43), "grant_type": GRANT });
    anonymous.post::<Value>("/v1/device/token", unknown).await.refused_with(StatusCode::BAD_REQUEST, "invalid_grant");

    let (_, session) = person(&t, "ada@example.com", "ada").await;
    for typed in ["BCDF-GHJ", "AEIO-UBCD", "BCDF_GHJK"] {
        let problem = confirm(&session, typed, None).await.refused_with(StatusCode::BAD_REQUEST, "invalid_request");
        assert_eq!(problem.fields(), ["user_code"], "{typed}");
    }
    assert_eq!(t.count("device_code_attempts").await, 0, "malformed codes name nothing and are not counted");
}
