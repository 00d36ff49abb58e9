//! Regression tests for IAM holes: narrowed credentials minting wider ones,
//! admins reaching the credentials of higher roles, expiring credentials
//! outliving themselves, organization credential policies (token lifetime,
//! verified addresses, single sign-on), session management, audit events
//! that name the credential (and their export), security events kept to
//! their account, sign-up and reset answers that reveal accounts,
//! idempotency keys crossing organizations, and project-scoped tokens
//! learning about other projects. Each performs the attack through the
//! public REST surface and asserts that it fails.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{MEMBER_PASSWORD, OidcProvider, SSO_REDIRECT, Tenant, TestApp, bad_fields, eventually};
use crate::oidc::configure_sso_for;

const PASSWORD: &str = "plum tractor velvet 1987";

/// Creates a personal token with `access` and returns the answer (201).
async fn personal_token(t: &TestApp, access: &str, body: Value) -> Value {
    let (status, made) = t.post("/v1/me/tokens", access, body).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made
}

/// Creates a service account of `tenant` with `role` and returns its id.
async fn service_account(t: &TestApp, tenant: &Tenant, name: &str, role: &str) -> String {
    let (status, made) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts", tenant.org),
            &tenant.token,
            json!({ "name": name, "role": role }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["id"].as_str().unwrap().to_string()
}

/// Replaces the credential policy of `org`, with `If-Match` when given.
async fn put_policy(t: &TestApp, org: &str, token: &str, if_match: Option<&str>, body: Value) -> (StatusCode, Value) {
    let mut request = t.request(Method::PUT, &format!("/v1/orgs/{org}/credential-policy"), token).json(&body);
    if let Some(etag) = if_match {
        request = request.header("if-match", etag);
    }
    t.send(request).await
}

/// The tenant's audit events selected by `query`, read with its owner token.
async fn audit(t: &TestApp, tenant: &Tenant, query: &str) -> (StatusCode, Value) {
    t.get(&format!("/v1/orgs/{}/audit-events?{query}", tenant.org), &tenant.token).await
}

/// A sign-up request.
fn signup_body(email: &str, org: &str) -> Value {
    json!({ "email": email, "password": PASSWORD, "display_name": "Someone", "organization_name": org })
}

/// Asserts a 403 problem with the code `code`.
#[track_caller]
fn assert_refused((status, body): (StatusCode, Value), code: &str, what: &str) {
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some(code)), "{what}: {body}");
}

/// The items of a page.
fn items(page: &Value) -> &Vec<Value> {
    page["items"].as_array().unwrap_or_else(|| panic!("not a page: {page}"))
}

/// A timestamp of an answer.
fn instant(value: &Value) -> chrono::DateTime<chrono::Utc> {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("not a time: {value}: {e}"))
}

/// An answer with the reference the caller asked for blanked out.
fn blank(body: &Value, asked: &str) -> String {
    body.to_string().replace(asked, "<asked>")
}

/// Asserts that `hidden_path` (naming `hidden`) is answered exactly as
/// `absent_path` (naming `absent`) is, but for that name: 404, and nothing more.
async fn assert_hidden_like_absent(
    t: &TestApp,
    token: &str,
    (hidden_path, hidden): (&str, &str),
    (absent_path, absent): (&str, &str),
) {
    let (hidden_status, hidden_body) = t.get(hidden_path, token).await;
    let (absent_status, absent_body) = t.get(absent_path, token).await;
    assert_eq!(
        (hidden_status, absent_status),
        (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND),
        "{hidden_path}: {hidden_body}; {absent_path}: {absent_body}"
    );
    assert_eq!(hidden_body["code"], "not_found", "{hidden_body}");
    // The absent answer cannot know anything of the hidden project, so
    // equality means the hidden one names nothing but what was asked.
    assert_eq!(blank(&hidden_body, hidden), blank(&absent_body, absent), "{hidden_path} tells more than {absent_path}");
}

/// A token narrowed to one project, reading and an hour mints nothing wider, longer-lived or organization-wide.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_narrowed_personal_token_cannot_mint_a_wider_one(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let web = t.project(&acme, "web").await;
    let (_, dev) = t.member(&acme, "dev@acme.test", "admin").await;
    let narrow = personal_token(
        &t,
        &dev,
        json!({ "name": "narrow", "project": web, "scopes": ["read"], "expires_in_seconds": 3600 }),
    )
    .await;
    assert_eq!((narrow["project"].as_str(), &narrow["scopes"]), (Some(web.as_str()), &json!(["read"])));
    let narrow = narrow["token"].as_str().unwrap().to_string();
    assert!(narrow.starts_with("moke_pat_"));

    let wider = [
        ("the whole organization", json!({ "name": "wide" })),
        (
            "more actions",
            json!({ "name": "x", "project": web, "scopes": ["read", "manage_resources"], "expires_in_seconds": 600 }),
        ),
        ("every action in the project", json!({ "name": "x", "project": web, "expires_in_seconds": 600 })),
        ("no expiry while its creator expires", json!({ "name": "x", "project": web, "scopes": ["read"] })),
        (
            "a life beyond its creator's",
            json!({ "name": "x", "project": web, "scopes": ["read"], "expires_in_seconds": 7200 }),
        ),
    ];
    for (what, body) in wider {
        assert_refused(t.post("/v1/me/tokens", &narrow, body).await, "exceeds_credential", what);
    }
    let (status, body) = t
        .post(
            "/v1/me/tokens",
            &narrow,
            json!({ "name": "ok", "project": web, "scopes": ["read"], "expires_in_seconds": 600 }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "as narrow and shorter-lived: {body}");

    // Project-scoped credentials may not act organization-wide, such as making service accounts.
    let (status, body) = t
        .post(&format!("/v1/orgs/{}/service-accounts", acme.org), &narrow, json!({ "name": "sa1", "role": "viewer" }))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) =
        t.post(&format!("/v1/orgs/{}/tokens", acme.org), &narrow, json!({ "name": "legacy", "role": "viewer" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    assert_eq!(t.count("api_tokens WHERE name = 'wide'").await, 0);
    assert_eq!(t.count("api_tokens WHERE name IN ('x', 'legacy')").await, 0);
    assert_eq!(t.count("service_accounts WHERE name IN ('sa1', 'legacy')").await, 0);
    assert_eq!(t.count("api_tokens WHERE kind = 'pat'").await, 2, "narrow and ok only");
}

/// An admin cannot trust CI for, mint tokens of, or revoke tokens of an owner-role service account.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn trust_policies_and_tokens_of_a_higher_role_are_out_of_reach(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let org = acme.org.clone();
    let boss = service_account(&t, &acme, "boss", "owner").await;
    let robot = service_account(&t, &acme, "robot", "viewer").await;
    let (_, admin) = t.member(&acme, "admin@acme.test", "admin").await;
    let policy = json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": "acme/web" } });

    let boss_policies = format!("/v1/orgs/{org}/service-accounts/{boss}/trust-policies");
    assert_refused(
        t.post(&boss_policies, &admin, policy.clone()).await,
        "exceeds_credential",
        "an owner's trust policy",
    );
    let boss_tokens = format!("/v1/orgs/{org}/service-accounts/{boss}/tokens");
    assert_refused(
        t.post(&boss_tokens, &admin, json!({ "name": "t" })).await,
        "exceeds_credential",
        "an owner's token",
    );
    let (status, boss_token) = t.post(&boss_tokens, &acme.token, json!({ "name": "boss-key" })).await;
    assert_eq!(status, StatusCode::CREATED, "{boss_token}");
    let boss_token_id = boss_token["id"].as_str().unwrap();
    assert_refused(
        t.delete(&format!("/v1/orgs/{org}/tokens/{boss_token_id}"), &admin).await,
        "exceeds_credential",
        "revoking an owner's token",
    );
    let boss_secret = boss_token["token"].as_str().unwrap();
    assert_eq!(t.get(&format!("/v1/orgs/{org}"), boss_secret).await.0, StatusCode::OK, "the owner's token still works");

    // The same admin manages a viewer account's credentials.
    let (status, body) =
        t.post(&format!("/v1/orgs/{org}/service-accounts/{robot}/trust-policies"), &admin, policy).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, robot_token) = t
        .post(&format!("/v1/orgs/{org}/service-accounts/{robot}/tokens"), &admin, json!({ "name": "robot-key" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{robot_token}");
    let robot_token_id = robot_token["id"].as_str().unwrap();
    assert_eq!(t.delete(&format!("/v1/orgs/{org}/tokens/{robot_token_id}"), &admin).await.0, StatusCode::NO_CONTENT);

    assert_eq!(t.count("trust_policies").await, 1, "the viewer account's only");
    assert_eq!(t.count("api_tokens WHERE name = 't'").await, 0);
    assert_eq!(t.count("api_tokens WHERE name = 'boss-key' AND revoked_at IS NULL").await, 1);
}

/// A credential that expires makes no token or trust policy that outlives it.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_expiring_credential_cannot_outlive_itself_through_new_credentials(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let robot = service_account(&t, &acme, "robot", "viewer").await;
    let (_, admin) = t.member(&acme, "admin@acme.test", "admin").await;
    let pat = personal_token(&t, &admin, json!({ "name": "ten-minutes", "expires_in_seconds": 600 })).await;
    let pat_ends = instant(&pat["expires_at"]);
    let pat = pat["token"].as_str().unwrap().to_string();
    let tokens = format!("/v1/orgs/{}/service-accounts/{robot}/tokens", acme.org);

    assert_refused(t.post(&tokens, &pat, json!({ "name": "long" })).await, "exceeds_credential", "a token for ever");
    assert_refused(
        t.post(&tokens, &pat, json!({ "name": "longer", "expires_in_seconds": 900 })).await,
        "exceeds_credential",
        "a token outliving its creator",
    );
    assert_refused(
        t.post("/v1/me/tokens", &pat, json!({ "name": "forever" })).await,
        "exceeds_credential",
        "a personal token for ever",
    );
    let (status, short) = t.post(&tokens, &pat, json!({ "name": "short", "expires_in_seconds": 300 })).await;
    assert_eq!(status, StatusCode::CREATED, "{short}");
    assert!(instant(&short["expires_at"]) <= pat_ends);

    // A trust policy mints tokens for as long as it lives: it ends with the credential that made it.
    let (status, policy) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts/{robot}/trust-policies", acme.org),
            &pat,
            json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": "acme/web" } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{policy}");
    assert!(!policy["expires_at"].is_null(), "{policy}");
    assert!(instant(&policy["expires_at"]) <= pat_ends, "{policy} outlives {pat_ends}");
    assert_eq!(t.count("api_tokens WHERE name IN ('long', 'longer', 'forever')").await, 0);
    assert_eq!(t.count("trust_policies WHERE expires_at IS NULL").await, 0);
}

/// The organization's policy caps new tokens' lifetime, guards its updates by ETag, and shuts out unverified addresses.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn organization_policy_caps_token_lifetime_and_demands_verified_addresses(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let made = t.sign_up("owner@acme.test", PASSWORD, "acme").await;
    let org = made["organization"]["id"].as_str().unwrap().to_string();
    let owner = made["session"]["access_token"].as_str().unwrap().to_string();
    let org_path = format!("/v1/orgs/{org}");

    let (status, policy) = put_policy(&t, &org, &owner, None, json!({ "max_token_lifetime_seconds": 3600 })).await;
    assert_eq!(status, StatusCode::OK, "{policy}");
    let etag = policy["etag"].as_str().expect("an etag").to_string();

    // Without an expiry a token gets the longest allowed; a longer one is refused.
    let capped = personal_token(&t, &owner, json!({ "name": "a" })).await;
    let left = (instant(&capped["expires_at"]) - chrono::Utc::now()).num_seconds();
    assert!((3540..=3600).contains(&left), "expires in {left} s: {capped}");
    let (status, body) = t.post("/v1/me/tokens", &owner, json!({ "name": "b", "expires_in_seconds": 7200 })).await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["expires_in_seconds".to_string()]));
    let (status, body) = t
        .post(
            &format!("{org_path}/tokens"),
            &owner,
            json!({ "name": "c", "role": "viewer", "expires_in_seconds": 7200 }),
        )
        .await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["expires_in_seconds".to_string()]));

    // An update names the version it changes.
    let (status, body) =
        put_policy(&t, &org, &owner, Some("\"nope\""), json!({ "require_verified_email": true })).await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{body}");

    // A member whose address is not verified works until the policy demands it, then not at all.
    let tenant = Tenant { org: org.clone(), token: owner.clone() };
    let (_, member) = t.member(&tenant, "late@acme.test", "member").await;
    sqlx::query("UPDATE users SET email_verified_at = NULL WHERE email = $1")
        .bind("late@acme.test")
        .execute(&t.pool)
        .await
        .unwrap();
    assert_eq!(t.get(&org_path, &member).await.0, StatusCode::OK, "not yet required");
    let (status, policy) =
        put_policy(&t, &org, &owner, Some(etag.as_str()), json!({ "require_verified_email": true })).await;
    assert_eq!(status, StatusCode::OK, "{policy}");
    eventually(10, "the policy to reach the member's session", async || {
        t.get(&org_path, &member).await.1["code"] == "email_unverified"
    })
    .await;
    assert_refused(t.get(&org_path, &member).await, "email_unverified", "the member's existing session");
    let login = json!({ "email": "late@acme.test", "password": MEMBER_PASSWORD, "organization": org });
    assert_refused(t.post_public("/v1/auth/login", login).await, "email_unverified", "a new sign-in");
    assert_eq!(t.get(&org_path, &owner).await.0, StatusCode::OK, "the owner verified at sign-up");
}

/// Requiring SSO needs SSO configured, then refuses members' password sign-ins, sessions and tokens, not owners'.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn require_sso_refuses_password_sessions_except_owners(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let org_path = format!("/v1/orgs/{}", acme.org);
    let (_, member) = t.member(&acme, "dev@acme.test", "member").await;
    let pat = personal_token(&t, &member, json!({ "name": "laptop" })).await;
    let pat = pat["token"].as_str().unwrap().to_string();
    assert_eq!(t.get(&org_path, &member).await.0, StatusCode::OK);
    assert_eq!(t.get(&org_path, &pat).await.0, StatusCode::OK);

    let (status, body) = put_policy(&t, &acme.org, &acme.token, None, json!({ "require_sso": true })).await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["require_sso".to_string()]));

    // An identity provider configured, as `PUT /v1/orgs/{org}/sso` leaves it (none needs to answer here).
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    sqlx::query(
        "INSERT INTO sso_providers (org_id, issuer, client_id, client_secret_enc, allowed_domains, default_role)
         VALUES ($1, 'https://idp.example', 'moke', 'vault:v1:x', '{}', 'viewer')",
    )
    .bind(org.uuid())
    .execute(&t.pool)
    .await
    .unwrap();
    let (status, body) = put_policy(&t, &acme.org, &acme.token, None, json!({ "require_sso": true })).await;
    assert_eq!((status, &body["require_sso"]), (StatusCode::OK, &json!(true)), "{body}");

    let login = json!({ "email": "dev@acme.test", "password": MEMBER_PASSWORD, "organization": acme.org });
    assert_refused(t.post_public("/v1/auth/login", login).await, "sso_required", "a member's password sign-in");
    eventually(10, "the policy to reach the member's credentials", async || {
        t.get(&org_path, &member).await.1["code"] == "sso_required"
            && t.get(&org_path, &pat).await.1["code"] == "sso_required"
    })
    .await;
    assert_refused(t.get(&org_path, &member).await, "sso_required", "a member's password session");
    assert_refused(t.get(&org_path, &pat).await, "sso_required", "a token made from a password session");

    // Owners keep password sign-in, so an outage of the provider never locks them out.
    let (_, boss) = t.member(&acme, "boss@acme.test", "owner").await;
    assert_eq!(t.get(&org_path, &boss).await.0, StatusCode::OK);
}

/// A person lists their sessions and ends one or all others; nobody else, and no API token, may.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn sessions_can_be_listed_and_ended(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let (_, first) = t.member(&acme, "dev@acme.test", "member").await;
    let second = t.login("dev@acme.test", MEMBER_PASSWORD, Some(&acme.org)).await;
    let third = t.login("dev@acme.test", MEMBER_PASSWORD, Some(&acme.org)).await;
    let (second_id, second) = (second["session"].as_str().unwrap(), second["access_token"].as_str().unwrap());
    let (third_id, current) = (third["session"].as_str().unwrap(), third["access_token"].as_str().unwrap());

    let (status, sessions) = t.get("/v1/me/sessions", current).await;
    assert_eq!(status, StatusCode::OK, "{sessions}");
    let listed = items(&sessions);
    assert!(listed.len() >= 3, "{sessions}");
    let current_ids: Vec<&str> =
        listed.iter().filter(|s| s["current"] == true).map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(current_ids, [third_id]);
    assert!(listed.iter().all(|s| s["method"] == "password" && s["organization"] == acme.org.as_str()), "{sessions}");

    // Another person cannot end them.
    let (_, eve) = t.member(&acme, "eve@acme.test", "member").await;
    assert_eq!(t.delete(&format!("/v1/me/sessions/{second_id}"), &eve).await.0, StatusCode::NOT_FOUND);
    assert_eq!(t.get("/v1/me", second).await.0, StatusCode::OK);

    assert_eq!(t.delete(&format!("/v1/me/sessions/{second_id}"), current).await.0, StatusCode::NO_CONTENT);
    assert_eq!(t.get("/v1/me", second).await.0, StatusCode::UNAUTHORIZED);
    let (status, ended) = t.delete("/v1/me/sessions", current).await;
    assert_eq!((status, ended), (StatusCode::OK, json!({ "ended": 1 })));
    assert_eq!(t.get("/v1/me", &first).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(t.get("/v1/me", current).await.0, StatusCode::OK, "the current session stays");
    assert_eq!(items(&t.get("/v1/me/sessions", current).await.1).len(), 1);
    assert_eq!(t.get("/v1/me", &eve).await.0, StatusCode::OK, "another person's sessions are untouched");

    // API tokens, a person's own included, have no sessions to manage.
    assert_refused(t.get("/v1/me/sessions", &acme.token).await, "session_required", "listing with an API token");
    assert_refused(t.delete("/v1/me/sessions", &acme.token).await, "session_required", "ending with an API token");
    let pat = personal_token(&t, current, json!({ "name": "laptop" })).await;
    let pat = pat["token"].as_str().unwrap();
    assert_refused(t.get("/v1/me/sessions", pat).await, "session_required", "listing with a personal token");
    assert_refused(
        t.delete(&format!("/v1/me/sessions/{third_id}"), pat).await,
        "session_required",
        "ending with a personal token",
    );
    assert_eq!(t.get("/v1/me", current).await.0, StatusCode::OK);
}

/// Audit events name the credential behind each action, filter by action, outcome, time and actor, and export safely.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn audit_events_name_the_credential_and_filter_and_export(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let org = acme.org.clone();
    t.project(&acme, "web").await;
    // A client-chosen text that reaches the export: a spreadsheet would run it as a formula.
    let formula = "=cmd|' /C calc'!A0";
    let (status, body) = t
        .send(
            t.request(Method::POST, &format!("/v1/orgs/{org}/projects"), &acme.token)
                .header("user-agent", formula)
                .json(&json!({ "name": "evil" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (dev_id, _) = t.member(&acme, "dev@acme.test", "admin").await;
    let session = t.login("dev@acme.test", MEMBER_PASSWORD, Some(&org)).await;
    personal_token(&t, session["access_token"].as_str().unwrap(), json!({ "name": "laptop" })).await;
    let wrong = json!({ "email": "dev@acme.test", "password": "wrong wrong wrong" });
    assert_eq!(t.post_public("/v1/auth/login", wrong).await.0, StatusCode::UNAUTHORIZED);

    let (_, tokens) = t.get(&format!("/v1/orgs/{org}/tokens"), &acme.token).await;
    let owner_token = items(&tokens).iter().find(|token| token["name"] == "bootstrap-owner").unwrap()["id"].clone();
    assert!(owner_token.as_str().unwrap().starts_with("tok_"));

    let (status, projects) = audit(&t, &acme, "action=project.*").await;
    assert_eq!(status, StatusCode::OK, "{projects}");
    assert_eq!(items(&projects).len(), 2, "{projects}");
    for event in items(&projects) {
        assert_eq!(event["action"], "project.create", "{event}");
        assert_eq!(event["credential"], json!({ "id": owner_token, "method": "api_token" }), "{event}");
    }
    let (_, created) = audit(&t, &acme, &format!("action=token.create&actor={dev_id}")).await;
    let created = items(&created);
    assert_eq!(created.len(), 1, "{created:?}");
    assert!(session["session"].as_str().unwrap().starts_with("ses_"));
    assert_eq!(created[0]["credential"], json!({ "id": session["session"], "method": "password" }));
    assert_eq!(created[0]["principal"]["id"], dev_id.as_str());

    let (_, failures) = audit(&t, &acme, "outcome=failure").await;
    let failures = items(&failures);
    assert!(!failures.is_empty() && failures.iter().all(|e| e["outcome"] == "failure"), "{failures:?}");
    assert!(failures.iter().any(|e| e["action"] == "auth.login" && e["principal"]["id"] == dev_id.as_str()));
    let (status, later) = audit(&t, &acme, "since=2999-01-01T00:00:00Z").await;
    assert_eq!((status, items(&later).len()), (StatusCode::OK, 0), "{later}");
    let (status, body) = audit(&t, &acme, "actor=not-an-id").await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["actor".to_string()]));

    let export = |format: &str| {
        let path = format!("/v1/orgs/{org}/audit-events/export?format={format}&action=project.*");
        t.request(Method::GET, &path, &acme.token).send()
    };
    let response = export("csv").await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/csv"), "{content_type}");
    let csv = response.text().await.unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("id,occurred_at,action,"), "{csv}");
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows.iter().all(|row| row.contains(r#","project.create","#)), "{csv}");
    // Every field is quoted (the JSON details too); the would-be formula is defused.
    assert!(csv.contains(r#","{""name"":""web""}""#), "{csv}");
    assert!(csv.contains(&format!(r#","'{}","#, formula.replace('"', "\"\""))), "{csv}");
    assert!(!csv.contains(&format!(r#","{formula}"#)), "{csv}");

    let response = export("ndjson").await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let ndjson = response.text().await.unwrap();
    let parsed: Vec<Value> =
        ndjson.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"))).collect();
    assert_eq!(parsed.len(), 2, "{ndjson}");
    assert!(parsed.iter().all(|event| event["action"] == "project.create"), "{ndjson}");
    let (status, body) = t.get(&format!("/v1/orgs/{org}/audit-events/export?format=xml"), &acme.token).await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["format".to_string()]));
}

/// Failed sign-ins appear among the account's own security events, and in no one else's.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn security_events_of_an_account_are_its_own(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let (dev_id, dev) = t.member(&acme, "dev@acme.test", "member").await;
    let (eve_id, eve) = t.member(&acme, "eve@acme.test", "member").await;
    for _ in 0..2 {
        let wrong = json!({ "email": "dev@acme.test", "password": "wrong wrong wrong" });
        assert_eq!(t.post_public("/v1/auth/login", wrong).await.0, StatusCode::UNAUTHORIZED);
    }

    let (status, mine) = t.get("/v1/me/security-events", &dev).await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    let failed: Vec<&Value> =
        items(&mine).iter().filter(|e| e["action"] == "auth.login" && e["outcome"] == "failure").collect();
    assert_eq!(failed.len(), 2, "{mine}");
    assert!(failed.iter().all(|e| e["principal"]["id"] == dev_id.as_str()), "{mine}");

    let (status, theirs) = t.get("/v1/me/security-events", &eve).await;
    assert_eq!(status, StatusCode::OK, "{theirs}");
    let theirs = items(&theirs);
    assert!(theirs.iter().any(|e| e["action"] == "auth.login" && e["outcome"] == "success"), "{theirs:?}");
    assert!(theirs.iter().all(|e| e["principal"]["id"] == eve_id.as_str() && e["outcome"] != "failure"), "{theirs:?}");
    assert_refused(t.get("/v1/me/security-events", &acme.token).await, "session_required", "an API token");

    // Failed sign-ins for an address before it had an account (no organization)
    // become the account's to read once its owner proves the address.
    let wrong = json!({ "email": "later@example.com", "password": "wrong wrong wrong" });
    assert_eq!(t.post_public("/v1/auth/login", wrong).await.0, StatusCode::UNAUTHORIZED);
    let later = t.sign_up("later@example.com", "plum tractor velvet 1987", "later").await;
    let (_, events) = t.get("/v1/me/security-events", later["session"]["access_token"].as_str().unwrap()).await;
    let before = items(&events)
        .iter()
        .filter(|e| e["action"] == "auth.login" && e["details"]["reason"] == "unknown_email")
        .count();
    assert_eq!(before, 1, "{events}");
    assert!(!items(&theirs_again(&t, &eve).await).iter().any(|e| e["details"]["reason"] == "unknown_email"));
}

async fn theirs_again(t: &TestApp, token: &str) -> Value {
    t.get("/v1/me/security-events", token).await.1
}

/// Sign-up and password reset answer alike whether or not an address has an account; only the mail differs.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn signup_and_password_reset_do_not_tell_who_has_an_account(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    t.sign_up("ada@example.com", PASSWORD, "ada").await;
    let (known_status, mut known) = t.post_public("/v1/signup", signup_body("ada@example.com", "other")).await;
    let (new_status, mut new) = t.post_public("/v1/signup", signup_body("new@example.com", "new-org")).await;
    assert_eq!((known_status, new_status), (StatusCode::ACCEPTED, StatusCode::ACCEPTED), "{known}; {new}");
    assert_eq!((known["email"].take(), new["email"].take()), (json!("ada@example.com"), json!("new@example.com")));
    assert_eq!(known, new, "the answers differ only in the address they name");

    eventually(15, "the note to the existing account", async || {
        !t.mails("signup_existing", "ada@example.com").is_empty()
    })
    .await;
    eventually(15, "the sign-up link to the new address", async || !t.mails("signup", "new@example.com").is_empty())
        .await;
    assert_eq!(t.count("mail_outbox WHERE kind = 'signup' AND to_address = 'ada@example.com'").await, 1);
    assert_eq!(t.count("mail_outbox WHERE kind = 'signup_existing' AND to_address = 'new@example.com'").await, 0);

    let (known_status, known) = t.post_public("/v1/auth/password-reset", json!({ "email": "ada@example.com" })).await;
    let (unknown_status, unknown) =
        t.post_public("/v1/auth/password-reset", json!({ "email": "nobody@example.com" })).await;
    assert_eq!((known_status, &known), (unknown_status, &unknown));
    assert_eq!((known_status, known), (StatusCode::ACCEPTED, Value::Null));
    assert_eq!(t.count("mail_outbox WHERE kind = 'password_reset' AND to_address = 'ada@example.com'").await, 1);
    assert_eq!(
        t.count("mail_outbox WHERE kind = 'password_reset_unknown' AND to_address = 'nobody@example.com'").await,
        1
    );
}

/// One person's Idempotency-Key in one organization never replays into another they belong to.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn idempotency_keys_belong_to_an_organization(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let globex = t.tenant("globex").await;
    let (user, _) = t.member(&acme, "dev@acme.test", "admin").await;
    let org: moke_api::ids::OrgId = globex.org.parse().unwrap();
    let user: moke_api::ids::UserId = user.parse().unwrap();
    sqlx::query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'admin')")
        .bind(org.uuid())
        .bind(user.uuid())
        .execute(&t.pool)
        .await
        .unwrap();

    let mut made = Vec::new();
    for tenant in [&acme, &globex] {
        let session = t.login("dev@acme.test", MEMBER_PASSWORD, Some(&tenant.org)).await;
        let access = session["access_token"].as_str().unwrap();
        let path = format!("/v1/orgs/{}/projects", tenant.org);
        let create =
            || t.request(Method::POST, &path, access).header("idempotency-key", "k1").json(&json!({ "name": "web" }));
        let (status, project) = t.send(create()).await;
        assert_eq!(status, StatusCode::CREATED, "{project}");
        assert_eq!(project["org_id"], tenant.org.as_str(), "{project}");
        // A retry in the same organization still replays its own answer.
        let (status, again) = t.send(create()).await;
        assert_eq!((status, &again["id"]), (StatusCode::CREATED, &project["id"]), "{again}");
        made.push(project["id"].as_str().unwrap().to_string());
    }
    assert_ne!(made[0], made[1]);
    assert_eq!(t.count("projects WHERE name = 'web'").await, 2);
}

/// A token limited to one project finds other projects, their clusters and operations as it finds nothing at all.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_project_scoped_token_sees_nothing_of_other_projects(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let web = t.project(&acme, "web").await;
    let ledger = t.project(&acme, "ledger").await;
    let (cluster, op) = t.cluster(&acme, &ledger, "prod").await;
    let op = op["id"].as_str().unwrap().to_string();
    let (_, admin) = t.member(&acme, "admin@acme.test", "admin").await;
    let scoped = personal_token(&t, &admin, json!({ "name": "p", "project": web })).await;
    let scoped = scoped["token"].as_str().unwrap().to_string();
    assert_eq!(t.get(&format!("/v1/projects/{web}"), &scoped).await.0, StatusCode::OK);
    let (_, listed) = t.get(&format!("/v1/orgs/{}/projects", acme.org), &scoped).await;
    let names: Vec<&str> = items(&listed).iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["web"]);

    let nowhere_op = moke_api::ids::OperationId::generate().to_string();
    let nowhere_cluster = moke_api::ids::ClusterId::generate().to_string();
    // (hidden path, the name it asks for), (absent path, the name it asks for)
    let pairs = [
        // An operation on the other project's cluster.
        ((format!("/v1/operations/{op}"), op.as_str()), (format!("/v1/operations/{nowhere_op}"), nowhere_op.as_str())),
        // The other project, by id and by name, and what lies under it.
        (
            (format!("/v1/projects/{ledger}"), ledger.as_str()),
            ("/v1/projects/does-not-exist".to_string(), "does-not-exist"),
        ),
        (("/v1/projects/ledger".to_string(), "ledger"), ("/v1/projects/does-not-exist".to_string(), "does-not-exist")),
        (
            (format!("/v1/projects/{ledger}/clusters"), ledger.as_str()),
            ("/v1/projects/nope/clusters".to_string(), "nope"),
        ),
        (
            (format!("/v1/projects/{ledger}/clusters/prod"), ledger.as_str()),
            ("/v1/projects/nope/clusters/prod".to_string(), "nope"),
        ),
        // Its cluster, through the token's own project.
        (
            (format!("/v1/projects/{web}/clusters/{cluster}"), cluster.as_str()),
            (format!("/v1/projects/{web}/clusters/{nowhere_cluster}"), nowhere_cluster.as_str()),
        ),
    ];
    for ((hidden_path, hidden), (absent_path, absent)) in pairs {
        assert_hidden_like_absent(&t, &scoped, (hidden_path.as_str(), hidden), (absent_path.as_str(), absent)).await;
    }
}

/// A sign-up link someone else asked for (with a password they chose) makes
/// no account when the address's owner follows it: finishing takes the
/// password chosen at sign-up, and five wrong ones end the link.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_signup_link_needs_the_password_chosen_with_it(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let body = json!({ "email": "victim@example.com", "password": "attacker knows this one",
                       "display_name": "Victim", "organization_name": "victim-co" });
    assert_eq!(t.post_public("/v1/signup", body).await.0, StatusCode::ACCEPTED);
    let token = t.mailed_token("signup", "victim@example.com").await;
    for _ in 0..5 {
        let (status, problem) =
            t.post_public("/v1/signup/confirm", json!({ "token": token, "password": "the victim's own words" })).await;
        assert_eq!((status, bad_fields(&problem)), (StatusCode::BAD_REQUEST, vec!["password".to_string()]));
    }
    assert_eq!(t.count("users").await, 0, "no account with someone else's password");
    let (status, problem) =
        t.post_public("/v1/signup/confirm", json!({ "token": token, "password": "attacker knows this one" })).await;
    assert_eq!((status, bad_fields(&problem)), (StatusCode::BAD_REQUEST, vec!["token".to_string()]), "the link ended");
}

/// Proving the address of an account made before sign-up asked for it
/// first ends everything whoever made it holds: password, sessions, tokens.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn proving_a_legacy_address_evicts_whoever_made_the_account(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let (user, session) = t.member(&acme, "legacy@example.com", "member").await;
    let user = user.parse::<moke_api::ids::UserId>().unwrap().uuid();
    sqlx::query("UPDATE users SET email_verified_at = NULL WHERE id = $1").bind(user).execute(&t.pool).await.unwrap();
    let token =
        personal_token(&t, &session, json!({ "name": "foothold" })).await["token"].as_str().unwrap().to_string();
    // The link the address's owner gets (as the mail of an earlier sign-up carried).
    let secret = "a-verification-token-made-for-this-test-0123456789";
    sqlx::query(
        "INSERT INTO email_tokens (token_hash, user_id, purpose, expires_at)
         VALUES ($1, $2, 'verify_email', now() + interval '1 hour')",
    )
    .bind(&moke_iam::token::plain_hash(secret)[..])
    .bind(user)
    .execute(&t.pool)
    .await
    .unwrap();
    let (status, view) = t.post_public("/v1/auth/verify-email", json!({ "token": secret })).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(t.get("/v1/me", &session).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(t.get("/v1/me", &token).await.0, StatusCode::UNAUTHORIZED);
    let login = json!({ "email": "legacy@example.com", "password": MEMBER_PASSWORD });
    assert_eq!(t.post_public("/v1/auth/login", login).await.0, StatusCode::UNAUTHORIZED, "the old password is gone");
}

/// Proving a legacy address also ends what its maker set up with the
/// account: service-account credentials they made (and those made with
/// those, and CI tokens exchanged through their trust policies), invitations
/// they sent, deploy hooks they made or hold the secret of, event endpoints,
/// single sign-on settings. The organization's audit log names what ended,
/// and who joined through the maker's invitations.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_legacy_makers_setup_ends_with_them(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.auth.sso_redirect_uri = SSO_REDIRECT.to_string();
    })
    .await;
    let acme = t.tenant("acme").await;
    let org = &acme.org;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    t.deployment(&acme, &project, &cluster, "app", json!({ "image": "registry.example/app:1" })).await;
    let (user, session) = t.member(&acme, "legacy@example.com", "owner").await;
    let user = user.parse::<moke_api::ids::UserId>().unwrap().uuid();
    sqlx::query("UPDATE users SET email_verified_at = NULL WHERE id = $1").bind(user).execute(&t.pool).await.unwrap();
    let lasting = personal_token(&t, &session, json!({ "name": "setup" })).await["token"].as_str().unwrap().to_string();
    // A service-account token, and one that token made for a second account.
    let (status, first) =
        t.post(&format!("/v1/orgs/{org}/tokens"), &lasting, json!({ "name": "ci", "role": "admin" })).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let first = first["token"].as_str().unwrap().to_string();
    let (status, second) =
        t.post(&format!("/v1/orgs/{org}/tokens"), &first, json!({ "name": "ci-2", "role": "member" })).await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    let second = second["token"].as_str().unwrap().to_string();
    // A service account of the owner's, untouched by the maker, keeps its token.
    let (status, owners) =
        t.post(&format!("/v1/orgs/{org}/tokens"), &acme.token, json!({ "name": "owners", "role": "viewer" })).await;
    assert_eq!(status, StatusCode::CREATED, "{owners}");
    let (status, invitation) = t
        .post(&format!("/v1/orgs/{org}/invitations"), &lasting, json!({ "email": "crony@evil.test", "role": "admin" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{invitation}");
    let (status, endpoint) = t
        .post(
            &format!("/v1/orgs/{org}/webhooks"),
            &lasting,
            json!({ "url": "https://collector.evil.test/x", "event_types": ["*"] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{endpoint}");
    let body = json!({ "name": "deployer", "target": { "cluster": cluster, "deployment": "app" } });
    let (status, hook) = t.post(&format!("/v1/projects/{project}/hooks"), &lasting, body).await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    // The owner's hook, whose secret the maker rotated (and so holds).
    let body = json!({ "name": "owners", "target": { "cluster": cluster, "deployment": "app" } });
    let (status, owners_hook) = t.post(&format!("/v1/projects/{project}/hooks"), &acme.token, body).await;
    assert_eq!(status, StatusCode::CREATED, "{owners_hook}");
    let rotate = format!("/v1/projects/{project}/hooks/{}/rotate-secret", owners_hook["id"].as_str().unwrap());
    let (status, rotated) = t.post(&rotate, &lasting, json!({ "previous_secret_valid_seconds": 604800 })).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    // A third hook: the maker rotated its secret, then the owner rotated it
    // again, keeping the maker's secret valid for a week.
    let body = json!({ "name": "kept", "target": { "cluster": cluster, "deployment": "app" } });
    let (status, kept) = t.post(&format!("/v1/projects/{project}/hooks"), &acme.token, body).await;
    assert_eq!(status, StatusCode::CREATED, "{kept}");
    let kept_url = kept["url"].as_str().unwrap().to_string();
    let rotate = format!("/v1/projects/{project}/hooks/{}/rotate-secret", kept["id"].as_str().unwrap());
    let (status, makers) = t.post(&rotate, &lasting, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{makers}");
    let makers_secret = makers["secret"].as_str().unwrap().to_string();
    let (status, owners_rotation) =
        t.post(&rotate, &acme.token, json!({ "previous_secret_valid_seconds": 604800 })).await;
    assert_eq!(status, StatusCode::OK, "{owners_rotation}");
    let delivery = r#"{"image": "registry.example/app:2"}"#;
    let (status, _) =
        crate::hooks::standard(&t, &kept_url, &makers_secret, "m1", chrono::Utc::now().timestamp(), delivery).await;
    assert_ne!(status, StatusCode::UNAUTHORIZED, "still valid before the eviction (and now cached)");
    // A CI identity the maker trusts, and a token exchanged through it.
    let (status, robot) = t
        .post(&format!("/v1/orgs/{org}/service-accounts"), &lasting, json!({ "name": "robot", "role": "admin" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{robot}");
    let robot = robot["id"].as_str().unwrap();
    let (status, policy) = t
        .post(
            &format!("/v1/orgs/{org}/service-accounts/{robot}/trust-policies"),
            &lasting,
            json!({ "issuer": idp.issuer, "audience": "moke-ci", "claims": { "repository": "acme/web" } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{policy}");
    let exchange = json!({ "subject_token": idp.id_token("moke-ci", "ci-main").await, "service_account": robot });
    let (status, exchanged) = t.post_public("/v1/auth/token-exchange", exchange).await;
    assert_eq!(status, StatusCode::OK, "{exchanged}");
    let exchanged = exchanged["access_token"].as_str().unwrap().to_string();
    // Single sign-on through the maker's own identity provider, and someone
    // who joined through it.
    let makers_tenant = Tenant { org: org.clone(), token: lasting.clone() };
    configure_sso_for(&t, &makers_tenant, &idp.issuer, "moke-sso", &["puppets.test"]).await;
    let login = crate::oidc::start(&t, "acme").await;
    let back = idp.sign_in(&login.url, "puppet@puppets.test").await;
    let (status, puppet) = crate::oidc::callback(&t, &login, &back).await;
    assert_eq!(status, StatusCode::OK, "{puppet}");
    let puppet = puppet["access_token"].as_str().unwrap().to_string();
    let (_, puppet_me) = t.get("/v1/me", &puppet).await;
    let puppets_token =
        personal_token(&t, &puppet, json!({ "name": "stay" })).await["token"].as_str().unwrap().to_string();

    let secret = "a-verification-token-made-for-this-test-abcdefghij";
    sqlx::query(
        "INSERT INTO email_tokens (token_hash, user_id, purpose, expires_at)
         VALUES ($1, $2, 'verify_email', now() + interval '1 hour')",
    )
    .bind(&moke_iam::token::plain_hash(secret)[..])
    .bind(user)
    .execute(&t.pool)
    .await
    .unwrap();
    let (status, view) = t.post_public("/v1/auth/verify-email", json!({ "token": secret })).await;
    assert_eq!(status, StatusCode::OK, "{view}");

    for (what, token) in [
        ("the personal token", &lasting),
        ("its service account's", &first),
        ("one made with that", &second),
        ("a CI token exchanged through its trust policy", &exchanged),
        ("a session through its identity provider", &puppet),
        ("a token of an account its identity provider made", &puppets_token),
    ] {
        assert_eq!(t.get(&format!("/v1/orgs/{org}"), token).await.0, StatusCode::UNAUTHORIZED, "{what}");
    }
    assert_eq!(t.get(&format!("/v1/orgs/{org}"), owners["token"].as_str().unwrap()).await.0, StatusCode::OK);
    let (_, invitations) = t.get(&format!("/v1/orgs/{org}/invitations"), &acme.token).await;
    let pending = invitations["items"].as_array().unwrap().iter().filter(|i| i["revoked_at"].is_null()).count();
    assert_eq!(pending, 0, "{invitations}");
    let (_, endpoints) = t.get(&format!("/v1/orgs/{org}/webhooks"), &acme.token).await;
    assert!(endpoints[0]["disabled_at"].is_string(), "{endpoints}");
    let (_, hooks) = t.get(&format!("/v1/projects/{project}/hooks"), &acme.token).await;
    assert_eq!(hooks.as_array().map(Vec::len), Some(1), "the maker's and the one it holds go: {hooks}");
    assert!(hooks[0]["previous_secret_expires_at"].is_null(), "the maker's previous secret ends: {hooks}");
    let now = chrono::Utc::now().timestamp();
    let (status, _) = crate::hooks::standard(&t, &kept_url, &makers_secret, "m2", now, delivery).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the maker's old secret signs nothing");
    let owners_secret = owners_rotation["secret"].as_str().unwrap();
    let (status, _) = crate::hooks::standard(&t, &kept_url, owners_secret, "o1", now, delivery).await;
    assert_ne!(status, StatusCode::UNAUTHORIZED, "the owner's own secret still works");
    let (status, _) = t.get(&format!("/v1/orgs/{org}/sso"), &acme.token).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "the maker's single sign-on settings are gone");
    let (status, events) = audit(&t, &acme, "action=user.maker_evicted").await;
    assert_eq!(status, StatusCode::OK);
    let details = &events["items"][0]["details"];
    assert_eq!(details["service_accounts_revoked"].as_array().map(Vec::len), Some(3), "{events}");
    assert_eq!(details["sso_settings_deleted"], true, "{events}");
    assert_eq!(details["invitations_revoked"], 1, "{events}");
    assert_eq!(details["deploy_hooks_deleted"].as_array().map(Vec::len), Some(2), "{events}");
    assert_eq!(details["previous_hook_secrets_ended"][0], kept["id"], "{events}");
    assert_eq!(details["members_through_their_sso"][0], puppet_me["user"]["id"], "{events}");
    // That account's address was only the provider's word: it is unproven
    // now, evicted like its maker's (its own proof would start over).
    let puppet_id = puppet_me["user"]["id"].as_str().unwrap().parse::<moke_api::ids::UserId>().unwrap().uuid();
    let proven: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT email_verified_at FROM users WHERE id = $1")
            .bind(puppet_id)
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(proven, None);
    let (status, unproven) = audit(&t, &acme, "action=user.address_unproven").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(unproven["items"][0]["resource_id"], puppet_me["user"]["id"], "{unproven}");
    assert_eq!(details["verified_domains_deleted"], json!([]), "the fixture's domain has no prover: {events}");
    assert_eq!(details["webhook_endpoints_disabled"][0], endpoint["id"], "{events}");
}

/// A narrowed credential ends only itself: it can neither revoke the
/// person's wider tokens nor make the person leave the organization.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_narrowed_token_ends_only_itself(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (user, session) = t.member(&acme, "dev@acme.test", "admin").await;
    let wide = personal_token(&t, &session, json!({ "name": "wide" })).await;
    let narrow =
        personal_token(&t, &session, json!({ "name": "narrow", "project": project, "scopes": ["read"] })).await;
    let narrow_secret = narrow["token"].as_str().unwrap();
    let (status, problem) = t.delete(&format!("/v1/me/tokens/{}", wide["id"].as_str().unwrap()), narrow_secret).await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::FORBIDDEN, Some("exceeds_credential")));
    let (status, _) = t.delete(&format!("/v1/orgs/{}/members/{user}", acme.org), narrow_secret).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "leaving takes an unrestricted credential");
    assert_eq!(t.count("memberships").await, 1);
    let (status, _) = t.delete(&format!("/v1/me/tokens/{}", narrow["id"].as_str().unwrap()), narrow_secret).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "it may end itself");
    assert_eq!(t.get("/v1/me", wide["token"].as_str().unwrap()).await.0, StatusCode::OK);
}
