//! Regression tests for IAM holes: narrowed credentials minting wider ones,
//! admins reaching the credentials of higher roles, expiring credentials
//! outliving themselves, organization credential policies (token lifetime,
//! verified addresses, single sign-on), session management, audit events
//! that name the credential (and their export), security events kept to
//! their account, sign-up and reset answers that reveal accounts,
//! idempotency keys crossing organizations, and project-scoped tokens
//! learning about other projects. Each performs the attack through the
//! public REST surface and asserts that it fails.

use moke_api::model::{
    AuditEventView, CredentialPolicyView, DeployHookCreated, DeployHookView, ExchangedToken, InvitationView, MeView,
    OrgView, Page, ProjectView, SessionTokens, SessionView, SessionsEnded, SignupAccepted, SignupResponse,
    SsoConfigView, TokenCreated, TokenView, TrustPolicyView, UserView, WebhookEndpointCreated, WebhookEndpointView,
};
use moke_iam::Action;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Answer, Client, MEMBER_PASSWORD, OidcProvider, SSO_REDIRECT, Tenant, TestApp, eventually};
use crate::oidc::configure_sso_for;

const PASSWORD: &str = "plum tractor velvet 1987";

/// Creates a personal token as `caller` (201).
async fn personal_token(caller: &Client<'_>, body: Value) -> TokenCreated {
    caller.post("/v1/me/tokens", body).await.expect(StatusCode::CREATED)
}

/// Replaces the credential policy of `caller`'s organization, with `If-Match` when given.
async fn put_policy(caller: &Client<'_>, if_match: Option<&str>, body: Value) -> Answer<CredentialPolicyView> {
    let mut request = caller.request(Method::PUT, &caller.org_path("/credential-policy")).json(&body);
    if let Some(etag) = if_match {
        request = request.header("if-match", etag);
    }
    caller.send(request).await
}

/// The organization's audit events selected by `query`, read by `owner`.
async fn audit(owner: &Client<'_>, query: &str) -> Answer<Page<AuditEventView>> {
    owner.get(&owner.org_path(&format!("/audit-events?{query}"))).await
}

/// A sign-up request.
fn signup_body(email: &str, org: &str) -> Value {
    json!({ "email": email, "password": PASSWORD, "display_name": "Someone", "organization_name": org })
}

/// Asserts a 403 problem with the code `code`.
#[track_caller]
fn assert_refused<T: serde::de::DeserializeOwned>(answer: Answer<T>, code: &str, what: &str) {
    answer.about(what).refused_with(StatusCode::FORBIDDEN, code);
}

/// An answer with the reference the caller asked for blanked out.
fn blank(body: &Value, asked: &str) -> String {
    let mut body = body.clone();
    // Every answer names its own request, and only that.
    if let Some(fields) = body.as_object_mut() {
        fields.remove("request_id");
    }
    body.to_string().replace(asked, "<asked>")
}

/// Asserts that `hidden_path` (naming `hidden`) is answered exactly as
/// `absent_path` (naming `absent`) is, but for that name: 404, and nothing more.
async fn assert_hidden_like_absent(
    caller: &Client<'_>,
    (hidden_path, hidden): (&str, &str),
    (absent_path, absent): (&str, &str),
) {
    let hidden_answer = caller.get::<Value>(hidden_path).await;
    let absent_answer = caller.get::<Value>(absent_path).await;
    hidden_answer.refused_with(StatusCode::NOT_FOUND, "not_found");
    absent_answer.refused(StatusCode::NOT_FOUND);
    // The absent answer cannot know anything of the hidden project, so
    // equality means the hidden one names nothing but what was asked.
    assert_eq!(
        blank(&hidden_answer.body, hidden),
        blank(&absent_answer.body, absent),
        "{hidden_path} tells more than {absent_path}"
    );
}

/// A token narrowed to one project, reading and an hour mints nothing wider, longer-lived or organization-wide.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_narrowed_personal_token_cannot_mint_a_wider_one(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let web = owner.create_project("web").await.id.to_string();
    let (_, dev) = t.member(&acme, "dev@acme.test", "admin").await;
    let narrow = personal_token(
        &owner.with_token(&dev),
        json!({ "name": "narrow", "project": web, "scopes": ["read"], "expires_in_seconds": 3600 }),
    )
    .await;
    assert_eq!(
        (narrow.view.project.map(|p| p.to_string()), narrow.view.scopes.clone()),
        (Some(web.clone()), Some(vec![Action::Read])),
        "{narrow:?}"
    );
    assert!(narrow.token.starts_with("moke_pat_"));
    let narrow = owner.with_token(&narrow.token);

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
        assert_refused(narrow.post::<TokenCreated>("/v1/me/tokens", body).await, "exceeds_credential", what);
    }
    narrow
        .post::<TokenCreated>(
            "/v1/me/tokens",
            json!({ "name": "ok", "project": web, "scopes": ["read"], "expires_in_seconds": 600 }),
        )
        .await
        .about("as narrow and shorter-lived")
        .expect(StatusCode::CREATED);

    // Project-scoped credentials may not act organization-wide, such as making service accounts.
    narrow
        .post::<Value>(&narrow.org_path("/service-accounts"), json!({ "name": "sa1", "role": "viewer" }))
        .await
        .refused(StatusCode::FORBIDDEN);
    narrow
        .post::<TokenCreated>(&narrow.org_path("/tokens"), json!({ "name": "legacy", "role": "viewer" }))
        .await
        .refused(StatusCode::FORBIDDEN);

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
    let owner = t.client(&acme);
    let boss = owner.create_service_account("boss", "owner").await.id.to_string();
    let robot = owner.create_service_account("robot", "viewer").await.id.to_string();
    let (_, admin) = t.member(&acme, "admin@acme.test", "admin").await;
    let admin = owner.with_token(&admin);
    let policy = json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": "acme/web" } });

    let boss_policies = owner.org_path(&format!("/service-accounts/{boss}/trust-policies"));
    assert_refused(
        admin.post::<TrustPolicyView>(&boss_policies, policy.clone()).await,
        "exceeds_credential",
        "an owner's trust policy",
    );
    let boss_tokens = owner.org_path(&format!("/service-accounts/{boss}/tokens"));
    assert_refused(
        admin.post::<TokenCreated>(&boss_tokens, json!({ "name": "t" })).await,
        "exceeds_credential",
        "an owner's token",
    );
    let boss_token = owner.create_account_token(&boss, "boss-key", json!({})).await;
    assert_refused(
        admin.delete::<()>(&owner.org_path(&format!("/tokens/{}", boss_token.view.id))).await,
        "exceeds_credential",
        "revoking an owner's token",
    );
    owner
        .with_token(&boss_token.token)
        .get::<OrgView>(&owner.org_path(""))
        .await
        .about("the owner's token still works")
        .expect(StatusCode::OK);

    // The same admin manages a viewer account's credentials.
    admin
        .post::<TrustPolicyView>(&owner.org_path(&format!("/service-accounts/{robot}/trust-policies")), policy)
        .await
        .expect(StatusCode::CREATED);
    let robot_token = admin.create_account_token(&robot, "robot-key", json!({})).await;
    admin
        .delete::<()>(&owner.org_path(&format!("/tokens/{}", robot_token.view.id)))
        .await
        .expect(StatusCode::NO_CONTENT);

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
    let owner = t.client(&acme);
    let robot = owner.create_service_account("robot", "viewer").await.id.to_string();
    let (_, admin) = t.member(&acme, "admin@acme.test", "admin").await;
    let pat =
        personal_token(&owner.with_token(&admin), json!({ "name": "ten-minutes", "expires_in_seconds": 600 })).await;
    let pat_ends = pat.view.expires_at.unwrap_or_else(|| panic!("no expiry: {pat:?}"));
    let pat = owner.with_token(&pat.token);
    let tokens = owner.org_path(&format!("/service-accounts/{robot}/tokens"));

    assert_refused(
        pat.post::<TokenCreated>(&tokens, json!({ "name": "long" })).await,
        "exceeds_credential",
        "a token for ever",
    );
    assert_refused(
        pat.post::<TokenCreated>(&tokens, json!({ "name": "longer", "expires_in_seconds": 900 })).await,
        "exceeds_credential",
        "a token outliving its creator",
    );
    assert_refused(
        pat.post::<TokenCreated>("/v1/me/tokens", json!({ "name": "forever" })).await,
        "exceeds_credential",
        "a personal token for ever",
    );
    let short: TokenCreated =
        pat.post(&tokens, json!({ "name": "short", "expires_in_seconds": 300 })).await.expect(StatusCode::CREATED);
    assert!(short.view.expires_at.unwrap_or_else(|| panic!("no expiry: {short:?}")) <= pat_ends);

    // A trust policy mints tokens for as long as it lives: it ends with the credential that made it.
    let policy: TrustPolicyView = pat
        .post(
            &owner.org_path(&format!("/service-accounts/{robot}/trust-policies")),
            json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": "acme/web" } }),
        )
        .await
        .expect(StatusCode::CREATED);
    let policy_ends = policy.expires_at.unwrap_or_else(|| panic!("no expiry: {policy:?}"));
    assert!(policy_ends <= pat_ends, "{policy:?} outlives {pat_ends}");
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
    let made = t.signed_up("owner@acme.test", PASSWORD, "acme").await;
    let tenant = Tenant { org: made.organization.id.to_string(), token: made.session.access_token.clone() };
    let owner = t.client(&tenant);
    let org_path = owner.org_path("");

    let policy = put_policy(&owner, None, json!({ "max_token_lifetime_seconds": 3600 })).await.expect(StatusCode::OK);
    assert!(!policy.etag.is_empty(), "an etag: {policy:?}");
    let etag = policy.etag;

    // Without an expiry a token gets the longest allowed; a longer one is refused.
    let capped = personal_token(&owner, json!({ "name": "a" })).await;
    let expires_at = capped.view.expires_at.unwrap_or_else(|| panic!("no expiry: {capped:?}"));
    let left = (expires_at - chrono::Utc::now()).num_seconds();
    assert!((3540..=3600).contains(&left), "expires in {left} s: {capped:?}");
    let problem = owner
        .post::<TokenCreated>("/v1/me/tokens", json!({ "name": "b", "expires_in_seconds": 7200 }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["expires_in_seconds"]);
    let problem = owner
        .post::<TokenCreated>(
            &owner.org_path("/tokens"),
            json!({ "name": "c", "role": "viewer", "expires_in_seconds": 7200 }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["expires_in_seconds"]);

    // An update names the version it changes.
    put_policy(&owner, Some("\"nope\""), json!({ "require_verified_email": true }))
        .await
        .refused(StatusCode::PRECONDITION_FAILED);

    // A member whose address is not verified works until the policy demands it, then not at all.
    let (_, member) = t.member(&tenant, "late@acme.test", "member").await;
    let member = owner.with_token(&member);
    sqlx::query("UPDATE users SET email_verified_at = NULL WHERE email = $1")
        .bind("late@acme.test")
        .execute(&t.pool)
        .await
        .unwrap();
    member.get::<OrgView>(&org_path).await.about("not yet required").expect(StatusCode::OK);
    put_policy(&owner, Some(etag.as_str()), json!({ "require_verified_email": true })).await.expect(StatusCode::OK);
    eventually(10, "the policy to reach the member's session", async || {
        member.get::<OrgView>(&org_path).await.code().as_deref() == Some("email_unverified")
    })
    .await;
    assert_refused(member.get::<OrgView>(&org_path).await, "email_unverified", "the member's existing session");
    let login = json!({ "email": "late@acme.test", "password": MEMBER_PASSWORD, "organization": tenant.org });
    assert_refused(
        t.anonymous().post::<SessionTokens>("/v1/auth/login", login).await,
        "email_unverified",
        "a new sign-in",
    );
    owner.get::<OrgView>(&org_path).await.about("the owner verified at sign-up").expect(StatusCode::OK);
}

/// Requiring SSO needs SSO configured, then refuses members' password sign-ins, sessions and tokens, not owners'.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn require_sso_refuses_password_sessions_except_owners(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let org_path = owner.org_path("");
    let (_, member) = t.member(&acme, "dev@acme.test", "member").await;
    let member = owner.with_token(&member);
    let pat = personal_token(&member, json!({ "name": "laptop" })).await;
    let pat = owner.with_token(&pat.token);
    member.get::<OrgView>(&org_path).await.expect(StatusCode::OK);
    pat.get::<OrgView>(&org_path).await.expect(StatusCode::OK);

    let problem = put_policy(&owner, None, json!({ "require_sso": true })).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["require_sso"]);

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
    let policy = put_policy(&owner, None, json!({ "require_sso": true })).await.expect(StatusCode::OK);
    assert!(policy.require_sso, "{policy:?}");

    let login = json!({ "email": "dev@acme.test", "password": MEMBER_PASSWORD, "organization": acme.org });
    assert_refused(
        t.anonymous().post::<SessionTokens>("/v1/auth/login", login).await,
        "sso_required",
        "a member's password sign-in",
    );
    eventually(10, "the policy to reach the member's credentials", async || {
        member.get::<OrgView>(&org_path).await.code().as_deref() == Some("sso_required")
            && pat.get::<OrgView>(&org_path).await.code().as_deref() == Some("sso_required")
    })
    .await;
    assert_refused(member.get::<OrgView>(&org_path).await, "sso_required", "a member's password session");
    assert_refused(pat.get::<OrgView>(&org_path).await, "sso_required", "a token made from a password session");

    // Owners keep password sign-in, so an outage of the provider never locks them out.
    let (_, boss) = t.member(&acme, "boss@acme.test", "owner").await;
    owner.with_token(&boss).get::<OrgView>(&org_path).await.expect(StatusCode::OK);
}

/// A person lists their sessions and ends one or all others; nobody else, and no API token, may.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn sessions_can_be_listed_and_ended(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (_, first) = t.member(&acme, "dev@acme.test", "member").await;
    let first = owner.with_token(&first);
    let second = t.session("dev@acme.test", MEMBER_PASSWORD, Some(&acme.org)).await;
    let third = t.session("dev@acme.test", MEMBER_PASSWORD, Some(&acme.org)).await;
    let (second_id, second) = (second.session, owner.with_token(&second.access_token));
    let (third_id, current) = (third.session, owner.with_token(&third.access_token));

    let sessions: Page<SessionView> = current.get("/v1/me/sessions").await.expect(StatusCode::OK);
    let listed = &sessions.items;
    assert!(listed.len() >= 3, "{sessions:?}");
    let current_ids: Vec<_> = listed.iter().filter(|s| s.current).map(|s| s.id).collect();
    assert_eq!(current_ids, [third_id]);
    assert!(listed.iter().all(|s| s.method == "password" && s.organization.to_string() == acme.org), "{sessions:?}");

    // Another person cannot end them.
    let (_, eve) = t.member(&acme, "eve@acme.test", "member").await;
    let eve = owner.with_token(&eve);
    eve.delete::<()>(&format!("/v1/me/sessions/{second_id}")).await.refused(StatusCode::NOT_FOUND);
    second.get::<MeView>("/v1/me").await.expect(StatusCode::OK);

    current.delete::<()>(&format!("/v1/me/sessions/{second_id}")).await.expect(StatusCode::NO_CONTENT);
    second.get::<MeView>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    let ended: SessionsEnded = current.delete("/v1/me/sessions").await.expect(StatusCode::OK);
    assert_eq!(ended.ended, 1);
    first.get::<MeView>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    current.get::<MeView>("/v1/me").await.about("the current session stays").expect(StatusCode::OK);
    let sessions: Page<SessionView> = current.get("/v1/me/sessions").await.expect(StatusCode::OK);
    assert_eq!(sessions.items.len(), 1);
    eve.get::<MeView>("/v1/me").await.about("another person's sessions are untouched").expect(StatusCode::OK);

    // API tokens, a person's own included, have no sessions to manage.
    assert_refused(
        owner.get::<Page<SessionView>>("/v1/me/sessions").await,
        "session_required",
        "listing with an API token",
    );
    assert_refused(
        owner.delete::<SessionsEnded>("/v1/me/sessions").await,
        "session_required",
        "ending with an API token",
    );
    let pat = personal_token(&current, json!({ "name": "laptop" })).await;
    let pat = owner.with_token(&pat.token);
    assert_refused(
        pat.get::<Page<SessionView>>("/v1/me/sessions").await,
        "session_required",
        "listing with a personal token",
    );
    assert_refused(
        pat.delete::<()>(&format!("/v1/me/sessions/{third_id}")).await,
        "session_required",
        "ending with a personal token",
    );
    current.get::<MeView>("/v1/me").await.expect(StatusCode::OK);
}

/// Audit events name the credential behind each action, filter by action, outcome, time and actor, and export safely.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn audit_events_name_the_credential_and_filter_and_export(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let org = acme.org.clone();
    owner.create_project("web").await;
    // A client-chosen text that reaches the export: a spreadsheet would run it as a formula.
    let formula = "=cmd|' /C calc'!A0";
    owner
        .send::<ProjectView>(
            owner
                .request(Method::POST, &owner.org_path("/projects"))
                .header("user-agent", formula)
                .json(&json!({ "name": "evil" })),
        )
        .await
        .expect(StatusCode::CREATED);
    let (dev_id, _) = t.member(&acme, "dev@acme.test", "admin").await;
    let session = t.session("dev@acme.test", MEMBER_PASSWORD, Some(&org)).await;
    personal_token(&owner.with_token(&session.access_token), json!({ "name": "laptop" })).await;
    let wrong = json!({ "email": "dev@acme.test", "password": "wrong wrong wrong" });
    t.anonymous().post::<SessionTokens>("/v1/auth/login", wrong).await.refused(StatusCode::UNAUTHORIZED);

    let tokens: Page<TokenView> = owner.get(&owner.org_path("/tokens")).await.expect(StatusCode::OK);
    let owner_token = tokens.items.iter().find(|token| token.name == "bootstrap-owner").expect("the owner token").id;
    assert!(owner_token.to_string().starts_with("tok_"));

    let projects = audit(&owner, "action=project.*").await.expect(StatusCode::OK);
    assert_eq!(projects.items.len(), 2, "{projects:?}");
    for event in &projects.items {
        assert_eq!(event.action, "project.create", "{event:?}");
        let credential = event.credential.as_ref().unwrap_or_else(|| panic!("no credential: {event:?}"));
        assert_eq!(
            (credential.id.clone(), credential.method.as_str()),
            (Some(owner_token.to_string()), "api_token"),
            "{event:?}"
        );
    }
    let created = audit(&owner, &format!("action=token.create&actor={dev_id}")).await.expect(StatusCode::OK).items;
    assert_eq!(created.len(), 1, "{created:?}");
    assert!(session.session.to_string().starts_with("ses_"));
    let credential = created[0].credential.as_ref().unwrap_or_else(|| panic!("no credential: {created:?}"));
    assert_eq!((credential.id.clone(), credential.method.as_str()), (Some(session.session.to_string()), "password"));
    assert_eq!(created[0].principal.id.as_deref(), Some(dev_id.as_str()));

    let failures = audit(&owner, "outcome=failure").await.expect(StatusCode::OK).items;
    assert!(!failures.is_empty() && failures.iter().all(|e| e.outcome == "failure"), "{failures:?}");
    assert!(
        failures.iter().any(|e| e.action == "auth.login" && e.principal.id.as_deref() == Some(dev_id.as_str())),
        "{failures:?}"
    );
    let later = audit(&owner, "since=2999-01-01T00:00:00Z").await.expect(StatusCode::OK);
    assert_eq!(later.items.len(), 0, "{later:?}");
    let problem = audit(&owner, "actor=not-an-id").await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["actor"]);

    let export = |format: &str| {
        let path = format!("/v1/orgs/{org}/audit-events/export?format={format}&action=project.*");
        owner.request(Method::GET, &path).send()
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
    let parsed: Vec<AuditEventView> =
        ndjson.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"))).collect();
    assert_eq!(parsed.len(), 2, "{ndjson}");
    assert!(parsed.iter().all(|event| event.action == "project.create"), "{ndjson}");
    let problem =
        owner.get::<Value>(&owner.org_path("/audit-events/export?format=xml")).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["format"]);
}

/// Failed sign-ins appear among the account's own security events, and in no one else's.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn security_events_of_an_account_are_its_own(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (dev_id, dev) = t.member(&acme, "dev@acme.test", "member").await;
    let (eve_id, eve) = t.member(&acme, "eve@acme.test", "member").await;
    let (dev, eve) = (owner.with_token(&dev), owner.with_token(&eve));
    for _ in 0..2 {
        let wrong = json!({ "email": "dev@acme.test", "password": "wrong wrong wrong" });
        t.anonymous().post::<SessionTokens>("/v1/auth/login", wrong).await.refused(StatusCode::UNAUTHORIZED);
    }

    let mine: Page<AuditEventView> = dev.get("/v1/me/security-events").await.expect(StatusCode::OK);
    let failed: Vec<&AuditEventView> =
        mine.items.iter().filter(|e| e.action == "auth.login" && e.outcome == "failure").collect();
    assert_eq!(failed.len(), 2, "{mine:?}");
    assert!(failed.iter().all(|e| e.principal.id.as_deref() == Some(dev_id.as_str())), "{mine:?}");

    let theirs: Page<AuditEventView> = eve.get("/v1/me/security-events").await.expect(StatusCode::OK);
    let theirs = theirs.items;
    assert!(theirs.iter().any(|e| e.action == "auth.login" && e.outcome == "success"), "{theirs:?}");
    assert!(
        theirs.iter().all(|e| e.principal.id.as_deref() == Some(eve_id.as_str()) && e.outcome != "failure"),
        "{theirs:?}"
    );
    assert_refused(
        owner.get::<Page<AuditEventView>>("/v1/me/security-events").await,
        "session_required",
        "an API token",
    );

    // Failed sign-ins for an address before it had an account (no organization)
    // become the account's to read once its owner proves the address.
    let wrong = json!({ "email": "later@example.com", "password": "wrong wrong wrong" });
    t.anonymous().post::<SessionTokens>("/v1/auth/login", wrong).await.refused(StatusCode::UNAUTHORIZED);
    let later = t.signed_up("later@example.com", "plum tractor velvet 1987", "later").await;
    let events: Page<AuditEventView> =
        owner.with_token(&later.session.access_token).get("/v1/me/security-events").await.expect(StatusCode::OK);
    let before =
        events.items.iter().filter(|e| e.action == "auth.login" && e.details["reason"] == "unknown_email").count();
    assert_eq!(before, 1, "{events:?}");
    let theirs_again: Page<AuditEventView> = eve.get("/v1/me/security-events").await.expect(StatusCode::OK);
    assert!(!theirs_again.items.iter().any(|e| e.details["reason"] == "unknown_email"), "{theirs_again:?}");
}

/// Sign-up and password reset answer alike whether or not an address has an account; only the mail differs.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn signup_and_password_reset_do_not_tell_who_has_an_account(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let anonymous = t.anonymous();
    t.sign_up("ada@example.com", PASSWORD, "ada").await;
    let known = anonymous.post::<SignupAccepted>("/v1/signup", signup_body("ada@example.com", "other")).await;
    let new = anonymous.post::<SignupAccepted>("/v1/signup", signup_body("new@example.com", "new-org")).await;
    let (known_view, new_view) = (known.expect(StatusCode::ACCEPTED), new.expect(StatusCode::ACCEPTED));
    assert_eq!((known_view.email.as_str(), new_view.email.as_str()), ("ada@example.com", "new@example.com"));
    // The whole answers, so that no field but the address tells them apart.
    let (mut known, mut new) = (known.body, new.body);
    known["email"].take();
    new["email"].take();
    assert_eq!(known, new, "the answers differ only in the address they name");

    eventually(15, "the note to the existing account", async || {
        !t.mails("signup_existing", "ada@example.com").is_empty()
    })
    .await;
    eventually(15, "the sign-up link to the new address", async || !t.mails("signup", "new@example.com").is_empty())
        .await;
    assert_eq!(t.count("mail_outbox WHERE kind = 'signup' AND to_address = 'ada@example.com'").await, 1);
    assert_eq!(t.count("mail_outbox WHERE kind = 'signup_existing' AND to_address = 'new@example.com'").await, 0);

    let known = anonymous.post::<()>("/v1/auth/password-reset", json!({ "email": "ada@example.com" })).await;
    let unknown = anonymous.post::<()>("/v1/auth/password-reset", json!({ "email": "nobody@example.com" })).await;
    assert_eq!((known.status, &known.body), (unknown.status, &unknown.body));
    known.expect(StatusCode::ACCEPTED);
    assert_eq!(known.body, Value::Null, "an empty answer");
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
        let session = t.session("dev@acme.test", MEMBER_PASSWORD, Some(&tenant.org)).await;
        let dev = t.client(tenant).with_token(&session.access_token);
        let path = dev.org_path("/projects");
        let create =
            || dev.request(Method::POST, &path).header("idempotency-key", "k1").json(&json!({ "name": "web" }));
        let project: ProjectView = dev.send(create()).await.expect(StatusCode::CREATED);
        assert_eq!(project.org_id.to_string(), tenant.org, "{project:?}");
        // A retry in the same organization still replays its own answer.
        let again: ProjectView = dev.send(create()).await.expect(StatusCode::CREATED);
        assert_eq!(again.id, project.id, "{again:?}");
        made.push(project.id);
    }
    assert_ne!(made[0], made[1]);
    assert_eq!(t.count("projects WHERE name = 'web'").await, 2);
}

/// A token limited to one project finds other projects, their clusters and operations as it finds nothing at all.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_project_scoped_token_sees_nothing_of_other_projects(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let web = owner.create_project("web").await.id.to_string();
    let ledger = owner.create_project("ledger").await.id.to_string();
    let (cluster, op) = owner.create_cluster(&ledger, "prod", json!({ "region": "eu-central-1" })).await;
    let (cluster, op) = (cluster.id.to_string(), op.id.to_string());
    let (_, admin) = t.member(&acme, "admin@acme.test", "admin").await;
    let scoped = personal_token(&owner.with_token(&admin), json!({ "name": "p", "project": web })).await;
    let scoped = owner.with_token(&scoped.token);
    scoped.get::<ProjectView>(&format!("/v1/projects/{web}")).await.expect(StatusCode::OK);
    let listed: Page<ProjectView> = scoped.get(&scoped.org_path("/projects")).await.expect(StatusCode::OK);
    let names: Vec<&str> = listed.items.iter().map(|p| p.name.as_str()).collect();
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
        assert_hidden_like_absent(&scoped, (hidden_path.as_str(), hidden), (absent_path.as_str(), absent)).await;
    }
}

/// A sign-up link someone else asked for (with a password they chose) makes
/// no account when the address's owner follows it: finishing takes the
/// password chosen at sign-up, and five wrong ones end the link.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_signup_link_needs_the_password_chosen_with_it(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let anonymous = t.anonymous();
    let body = json!({ "email": "victim@example.com", "password": "attacker knows this one",
                       "display_name": "Victim", "organization_name": "victim-co" });
    anonymous.post::<SignupAccepted>("/v1/signup", body).await.expect(StatusCode::ACCEPTED);
    let token = t.mailed_token("signup", "victim@example.com").await;
    for _ in 0..5 {
        let problem = anonymous
            .post::<SignupResponse>(
                "/v1/signup/confirm",
                json!({ "token": token, "password": "the victim's own words" }),
            )
            .await
            .refused(StatusCode::BAD_REQUEST);
        assert_eq!(problem.fields(), ["password"]);
    }
    assert_eq!(t.count("users").await, 0, "no account with someone else's password");
    let problem = anonymous
        .post::<SignupResponse>("/v1/signup/confirm", json!({ "token": token, "password": "attacker knows this one" }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["token"], "the link ended");
}

/// Proving the address of an account made before sign-up asked for it
/// first ends everything whoever made it holds: password, sessions, tokens.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn proving_a_legacy_address_evicts_whoever_made_the_account(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (user, session) = t.member(&acme, "legacy@example.com", "member").await;
    let session = owner.with_token(&session);
    let user = user.parse::<moke_api::ids::UserId>().unwrap().uuid();
    sqlx::query("UPDATE users SET email_verified_at = NULL WHERE id = $1").bind(user).execute(&t.pool).await.unwrap();
    let token = personal_token(&session, json!({ "name": "foothold" })).await;
    let token = owner.with_token(&token.token);
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
    t.anonymous().post::<UserView>("/v1/auth/verify-email", json!({ "token": secret })).await.expect(StatusCode::OK);
    session.get::<MeView>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    token.get::<MeView>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    let login = json!({ "email": "legacy@example.com", "password": MEMBER_PASSWORD });
    t.anonymous()
        .post::<SessionTokens>("/v1/auth/login", login)
        .await
        .about("the old password is gone")
        .refused(StatusCode::UNAUTHORIZED);
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
    let owner = t.client(&acme);
    let org = &acme.org;
    let project = owner.create_project("web").await.id.to_string();
    let cluster = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await.0.id.to_string();
    owner.create_deployment(&project, &cluster, "app", json!({ "image": "registry.example/app:1" })).await;
    let (user, session) = t.member(&acme, "legacy@example.com", "owner").await;
    let user = user.parse::<moke_api::ids::UserId>().unwrap().uuid();
    sqlx::query("UPDATE users SET email_verified_at = NULL WHERE id = $1").bind(user).execute(&t.pool).await.unwrap();
    let lasting = personal_token(&owner.with_token(&session), json!({ "name": "setup" })).await.token;
    let maker = owner.with_token(&lasting);
    // A service-account token, and one that token made for a second account.
    let first = maker.create_token("ci", "admin").await.token;
    let second = owner.with_token(&first).create_token("ci-2", "member").await.token;
    // A service account of the owner's, untouched by the maker, keeps its token.
    let owners = owner.create_token("owners", "viewer").await;
    maker
        .post::<InvitationView>(&owner.org_path("/invitations"), json!({ "email": "crony@evil.test", "role": "admin" }))
        .await
        .expect(StatusCode::CREATED);
    let endpoint: WebhookEndpointCreated = maker
        .post(&owner.org_path("/webhooks"), json!({ "url": "https://collector.evil.test/x", "event_types": ["*"] }))
        .await
        .expect(StatusCode::CREATED);
    let hooks_path = format!("/v1/projects/{project}/hooks");
    let body = json!({ "name": "deployer", "target": { "cluster": cluster, "deployment": "app" } });
    maker.post::<DeployHookCreated>(&hooks_path, body).await.expect(StatusCode::CREATED);
    // The owner's hook, whose secret the maker rotated (and so holds).
    let body = json!({ "name": "owners", "target": { "cluster": cluster, "deployment": "app" } });
    let owners_hook: DeployHookCreated = owner.post(&hooks_path, body).await.expect(StatusCode::CREATED);
    let rotate = format!("{hooks_path}/{}/rotate-secret", owners_hook.hook.id);
    maker
        .post::<DeployHookCreated>(&rotate, json!({ "previous_secret_valid_seconds": 604800 }))
        .await
        .expect(StatusCode::OK);
    // A third hook: the maker rotated its secret, then the owner rotated it
    // again, keeping the maker's secret valid for a week.
    let body = json!({ "name": "kept", "target": { "cluster": cluster, "deployment": "app" } });
    let kept: DeployHookCreated = owner.post(&hooks_path, body).await.expect(StatusCode::CREATED);
    let kept_url = kept.hook.url.clone();
    let rotate = format!("{hooks_path}/{}/rotate-secret", kept.hook.id);
    let makers: DeployHookCreated = maker.post(&rotate, json!({})).await.expect(StatusCode::OK);
    let makers_secret = makers.secret;
    let owners_rotation: DeployHookCreated =
        owner.post(&rotate, json!({ "previous_secret_valid_seconds": 604800 })).await.expect(StatusCode::OK);
    let delivery = r#"{"image": "registry.example/app:2"}"#;
    let answer =
        crate::hooks::standard::<Value>(&t, &kept_url, &makers_secret, "m1", chrono::Utc::now().timestamp(), delivery)
            .await;
    assert_ne!(answer.status, StatusCode::UNAUTHORIZED, "still valid before the eviction (and now cached): {answer:?}");
    // A CI identity the maker trusts, and a token exchanged through it.
    let robot = maker.create_service_account("robot", "admin").await.id.to_string();
    maker
        .post::<TrustPolicyView>(
            &owner.org_path(&format!("/service-accounts/{robot}/trust-policies")),
            json!({ "issuer": idp.issuer, "audience": "moke-ci", "claims": { "repository": "acme/web" } }),
        )
        .await
        .expect(StatusCode::CREATED);
    let exchange = json!({ "subject_token": idp.id_token("moke-ci", "ci-main").await, "service_account": robot });
    let exchanged: ExchangedToken =
        t.anonymous().post("/v1/auth/token-exchange", exchange).await.expect(StatusCode::OK);
    let exchanged = exchanged.access_token;
    // Single sign-on through the maker's own identity provider, and someone
    // who joined through it.
    let makers_tenant = Tenant { org: org.clone(), token: lasting.clone() };
    configure_sso_for(&t, &makers_tenant, &idp.issuer, "moke-sso", &["puppets.test"]).await;
    let login = crate::oidc::start(&t, "acme").await;
    let back = idp.sign_in(&login.url, "puppet@puppets.test").await;
    let puppet: SessionTokens = crate::oidc::callback(&t, &login, &back).await.expect(StatusCode::OK);
    let puppet = puppet.access_token;
    let puppet_me: MeView = owner.with_token(&puppet).get("/v1/me").await.expect(StatusCode::OK);
    let puppet_id = puppet_me.user.as_ref().unwrap_or_else(|| panic!("not a person: {puppet_me:?}")).id;
    let puppets_token = personal_token(&owner.with_token(&puppet), json!({ "name": "stay" })).await.token;

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
    t.anonymous().post::<UserView>("/v1/auth/verify-email", json!({ "token": secret })).await.expect(StatusCode::OK);

    for (what, token) in [
        ("the personal token", &lasting),
        ("its service account's", &first),
        ("one made with that", &second),
        ("a CI token exchanged through its trust policy", &exchanged),
        ("a session through its identity provider", &puppet),
        ("a token of an account its identity provider made", &puppets_token),
    ] {
        owner.with_token(token).get::<OrgView>(&owner.org_path("")).await.about(what).refused(StatusCode::UNAUTHORIZED);
    }
    owner.with_token(&owners.token).get::<OrgView>(&owner.org_path("")).await.expect(StatusCode::OK);
    let invitations: Page<InvitationView> = owner.get(&owner.org_path("/invitations")).await.expect(StatusCode::OK);
    let pending = invitations.items.iter().filter(|i| i.revoked_at.is_none()).count();
    assert_eq!(pending, 0, "{invitations:?}");
    let endpoints: Page<WebhookEndpointView> = owner.get(&owner.org_path("/webhooks")).await.expect(StatusCode::OK);
    assert!(endpoints.items[0].disabled_at.is_some(), "{endpoints:?}");
    let hooks: Page<DeployHookView> = owner.get(&hooks_path).await.expect(StatusCode::OK);
    assert_eq!(hooks.items.len(), 1, "the maker's and the one it holds go: {hooks:?}");
    assert!(hooks.items[0].previous_secret_expires_at.is_none(), "the maker's previous secret ends: {hooks:?}");
    let now = chrono::Utc::now().timestamp();
    crate::hooks::standard::<Value>(&t, &kept_url, &makers_secret, "m2", now, delivery)
        .await
        .about("the maker's old secret signs nothing")
        .refused(StatusCode::UNAUTHORIZED);
    let answer = crate::hooks::standard::<Value>(&t, &kept_url, &owners_rotation.secret, "o1", now, delivery).await;
    assert_ne!(answer.status, StatusCode::UNAUTHORIZED, "the owner's own secret still works: {answer:?}");
    owner
        .get::<SsoConfigView>(&owner.org_path("/sso"))
        .await
        .about("the maker's single sign-on settings are gone")
        .refused(StatusCode::NOT_FOUND);
    let events = audit(&owner, "action=user.maker_evicted").await.expect(StatusCode::OK);
    let details = &events.items.first().unwrap_or_else(|| panic!("no eviction: {events:?}")).details;
    assert_eq!(details["service_accounts_revoked"].as_array().map(Vec::len), Some(3), "{events:?}");
    assert_eq!(details["sso_settings_deleted"], true, "{events:?}");
    assert_eq!(details["invitations_revoked"], 1, "{events:?}");
    assert_eq!(details["deploy_hooks_deleted"].as_array().map(Vec::len), Some(2), "{events:?}");
    assert_eq!(details["previous_hook_secrets_ended"][0], kept.hook.id.to_string(), "{events:?}");
    assert_eq!(details["members_through_their_sso"][0], puppet_id.to_string(), "{events:?}");
    // That account's address was only the provider's word: it is unproven
    // now, evicted like its maker's (its own proof would start over).
    let proven: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT email_verified_at FROM users WHERE id = $1")
            .bind(puppet_id.uuid())
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(proven, None);
    let unproven = audit(&owner, "action=user.address_unproven").await.expect(StatusCode::OK);
    let unproven = unproven.items.first().unwrap_or_else(|| panic!("no unproven address: {unproven:?}"));
    assert_eq!(unproven.resource_id, Some(puppet_id.to_string()), "{unproven:?}");
    assert_eq!(details["verified_domains_deleted"], json!([]), "the fixture's domain has no prover: {events:?}");
    assert_eq!(details["webhook_endpoints_disabled"][0], endpoint.endpoint.id.to_string(), "{events:?}");
}

/// A narrowed credential ends only itself: it can neither revoke the
/// person's wider tokens nor make the person leave the organization.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_narrowed_token_ends_only_itself(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (user, session) = t.member(&acme, "dev@acme.test", "admin").await;
    let session = owner.with_token(&session);
    let wide = personal_token(&session, json!({ "name": "wide" })).await;
    let narrow = personal_token(&session, json!({ "name": "narrow", "project": project, "scopes": ["read"] })).await;
    let narrow_client = owner.with_token(&narrow.token);
    narrow_client
        .delete::<()>(&format!("/v1/me/tokens/{}", wide.view.id))
        .await
        .refused_with(StatusCode::FORBIDDEN, "exceeds_credential");
    narrow_client
        .delete::<()>(&owner.org_path(&format!("/members/{user}")))
        .await
        .about("leaving takes an unrestricted credential")
        .refused(StatusCode::FORBIDDEN);
    assert_eq!(t.count("memberships").await, 1);
    narrow_client
        .delete::<()>(&format!("/v1/me/tokens/{}", narrow.view.id))
        .await
        .about("it may end itself")
        .expect(StatusCode::NO_CONTENT);
    owner.with_token(&wide.token).get::<MeView>("/v1/me").await.expect(StatusCode::OK);
}
