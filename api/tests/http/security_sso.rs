//! Regression tests for single sign-on holes, each performing the attack
//! against a real OpenID Provider on loopback: an identity provider run by
//! one tenant matching another tenant's person by address, sessions leaving
//! the provider's organization, pre-hijacked accounts, domain claims without
//! DNS proof, logins finished in another browser, and discovery as a
//! network probe.

use moke_api::model::{
    AuditEventView, DomainView, ExchangedToken, InvitationView, MeView, MembershipSummary, Page, SessionTokens,
    SessionView, SsoConfigView, SsoLinkPending, SsoLinkView, TokenCreated, TrustPolicyView,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Answer, DnsServer, MEMBER_PASSWORD, OidcProvider, SSO_REDIRECT, TestApp};
use crate::oidc::{callback, callback_with_cookie, configure_sso_for, start};

const PASSWORD: &str = "plum tractor velvet 1987";

async fn app(options: PgPoolOptions, connect: PgConnectOptions) -> TestApp {
    TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.auth.sso_redirect_uri = SSO_REDIRECT.to_string();
        c.rate_limits.login_burst = 1000;
    })
    .await
}

async fn sso_count(t: &TestApp, table: &str) -> i64 {
    t.count(table).await
}

/// Signs `account` in at `org`'s provider in one browser; the gateway's
/// answer: a session ([`SessionTokens`]) or a link to confirm ([`SsoLinkPending`]).
async fn sso_sign_in<T>(t: &TestApp, idp: &OidcProvider, org: &str, account: &str) -> Answer<T> {
    let login = start(t, org).await;
    let back = idp.sign_in(&login.url, account).await;
    callback(t, &login, &back).await
}

/// Another tenant's identity provider asserting a person's verified address
/// gets no session and no link: the person is mailed, and nothing is joined.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_identity_provider_cannot_claim_someone_elses_account(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app(options, connect).await;
    // The victim: a verified account owning its own organization.
    let victim = t.signed_up("victim@acme.test", PASSWORD, "victim-home").await;
    let victim_org = victim.organization.id.to_string();
    // The attacker's organization runs the identity provider; it cannot claim the victim's domain.
    let evil = t.tenant("evil").await;
    let evil_owner = t.client(&evil);
    let problem = evil_owner
        .put::<SsoConfigView>(
            &evil_owner.org_path("/sso"),
            json!({
                "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
                "allowed_domains": ["acme.test"], "default_role": "member",
            }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["allowed_domains[0]"]);
    assert_eq!(problem.errors[0].code, "domain_not_verified");
    configure_sso_for(&t, &evil, &idp.issuer, "moke-sso", &[]).await;

    // The attacker signs in at their provider as the victim's address.
    let answer = sso_sign_in::<SsoLinkPending>(&t, &idp, "evil", "victim@acme.test")
        .await
        .about("a link to confirm, not a session");
    let pending = answer.expect(StatusCode::ACCEPTED);
    // The raw answer, since the view type cannot show a field it lacks.
    assert!(answer.body.get("access_token").is_none() && answer.body.get("refresh_token").is_none(), "{answer:?}");
    let link_token = pending.link_token;
    assert_eq!(sso_count(&t, "sso_identities").await, 0, "nothing is linked by address");
    assert_eq!(t.count("memberships WHERE org_id = (SELECT id FROM organizations WHERE name = 'evil')").await, 0);
    // The victim hears of it; the attacker cannot confirm for them.
    assert!(t.mailed_token("sso_link", "victim@acme.test").await.len() > 20);
    let (_, attacker) = t.member(&evil, "attacker@evil.test", "owner").await;
    let problem = evil_owner
        .with_token(&attacker)
        .post::<SsoLinkView>("/v1/me/sso-links/confirm", json!({ "token": link_token }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["token"]);
    // A guessed mail token confirms nothing.
    t.anonymous()
        .post::<SessionTokens>("/v1/auth/sso-link/confirm", json!({ "token": link_token }))
        .await
        .about("the browser's token is not the mailed one")
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(sso_count(&t, "sso_identities").await, 0);
    // The victim's organization never saw a session of the attacker.
    let events: Page<AuditEventView> = evil_owner
        .with_token(&victim.session.access_token)
        .get(&format!("/v1/orgs/{victim_org}/audit-events?action=auth.sso_login"))
        .await
        .expect(StatusCode::OK);
    assert_eq!(events.items.len(), 0, "{events:?}");
}

/// A session from an organization's provider acts there only: no switch by
/// refresh, no invitations elsewhere, no view of other memberships.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_sso_session_never_leaves_its_organization(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app(options, connect).await;
    let acme = t.tenant("acme").await;
    configure_sso_for(&t, &acme, &idp.issuer, "moke-sso", &["acme.test"]).await;
    let session: SessionTokens = sso_sign_in(&t, &idp, "acme", "alice@acme.test").await.expect(StatusCode::OK);
    // Alice also belongs to another organization.
    let beta = t.tenant("beta").await;
    let alice: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM users WHERE email = 'alice@acme.test'").fetch_one(&t.pool).await.unwrap();
    sqlx::query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')")
        .bind(beta.org.parse::<moke_api::ids::OrgId>().unwrap().uuid())
        .bind(alice)
        .execute(&t.pool)
        .await
        .unwrap();
    let alice = t.client(&acme).with_token(&session.access_token);
    let me: MeView = alice.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!(me.memberships.len(), 1, "only the provider's organization: {me:?}");
    let sessions: Page<SessionView> = alice.get("/v1/me/sessions").await.expect(StatusCode::OK);
    assert_eq!(sessions.items[0].method, "sso");

    let anonymous = t.anonymous();
    let refresh = session.refresh_token.as_str();
    anonymous
        .post::<SessionTokens>("/v1/auth/refresh", json!({ "refresh_token": refresh, "organization": beta.org }))
        .await
        .refused_with(StatusCode::FORBIDDEN, "sso_session_bound");
    // The refused switch spent nothing: the same organization still renews.
    let renewed: SessionTokens =
        anonymous.post("/v1/auth/refresh", json!({ "refresh_token": refresh })).await.expect(StatusCode::OK);
    assert_eq!(renewed.organization.to_string(), acme.org);
    let alice = alice.with_token(&renewed.access_token);
    // Even an access token claiming another organization is refused.
    alice.get::<Value>(&format!("/v1/orgs/{}", beta.org)).await.refused(StatusCode::NOT_FOUND);

    // An invitation elsewhere is accepted only with a password session.
    let gamma = t.tenant("gamma").await;
    let gamma_owner = t.client(&gamma);
    gamma_owner
        .post::<InvitationView>(
            &gamma_owner.org_path("/invitations"),
            json!({ "email": "alice@acme.test", "role": "viewer" }),
        )
        .await
        .expect(StatusCode::CREATED);
    let token = t.mailed_token("invitation", "alice@acme.test").await;
    alice
        .post::<MembershipSummary>("/v1/invitations/accept", json!({ "token": token }))
        .await
        .refused_with(StatusCode::FORBIDDEN, "password_session_required");
}

/// An existing account is linked to an identity only by its owner: by the
/// mailed link, or signed in with the password.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_existing_account_links_only_when_its_owner_confirms(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app(options, connect).await;
    let acme = t.tenant("acme").await;
    configure_sso_for(&t, &acme, &idp.issuer, "moke-sso", &["acme.test"]).await;

    // Bob has a password account (not yet in acme) and confirms by mail.
    t.sign_up("bob@acme.test", PASSWORD, "bob-home").await;
    sso_sign_in::<SsoLinkPending>(&t, &idp, "acme", "bob@acme.test").await.expect(StatusCode::ACCEPTED);
    let mailed = t.mailed_token("sso_link", "bob@acme.test").await;
    let anonymous = t.anonymous();
    let session: SessionTokens =
        anonymous.post("/v1/auth/sso-link/confirm", json!({ "token": mailed })).await.expect(StatusCode::OK);
    assert_eq!(session.organization.to_string(), acme.org, "joined through the verified domain");
    anonymous
        .post::<SessionTokens>("/v1/auth/sso-link/confirm", json!({ "token": mailed }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    // From now on the identity signs bob in directly.
    sso_sign_in::<SessionTokens>(&t, &idp, "acme", "bob@acme.test").await.expect(StatusCode::OK);

    // Carol is a member already and confirms while signed in with her password.
    let (_, carol_password) = t.member(&acme, "carol@acme.test", "member").await;
    let pending: SsoLinkPending = sso_sign_in(&t, &idp, "acme", "carol@acme.test").await.expect(StatusCode::ACCEPTED);
    let linked: SsoLinkView = t
        .client(&acme)
        .with_token(&carol_password)
        .post("/v1/me/sso-links/confirm", json!({ "token": pending.link_token }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(linked.organization.to_string(), acme.org);
    sso_sign_in::<SessionTokens>(&t, &idp, "acme", "carol@acme.test").await.expect(StatusCode::OK);
    assert_eq!(t.count("sso_identities").await, 2);

    // Dave's request was made through settings the owner has replaced since
    // (the same issuer, another client): neither of its links confirms
    // anything any more.
    let (_, dave_password) = t.member(&acme, "dave@acme.test", "member").await;
    let pending: SsoLinkPending = sso_sign_in(&t, &idp, "acme", "dave@acme.test").await.expect(StatusCode::ACCEPTED);
    let mailed = t.mailed_token("sso_link", "dave@acme.test").await;
    configure_sso_for(&t, &acme, &idp.issuer, "moke-sso-2", &[]).await;
    let problem = t
        .client(&acme)
        .with_token(&dave_password)
        .post::<SsoLinkView>("/v1/me/sso-links/confirm", json!({ "token": pending.link_token }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["token"], "{problem:?}");
    anonymous
        .post::<SessionTokens>("/v1/auth/sso-link/confirm", json!({ "token": mailed }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(t.count("sso_identities").await, 2);
    let _ = MEMBER_PASSWORD;
}

/// An account whose address nobody proved (made by someone who expects its
/// owner to sign in through SSO later) is never merged with an identity,
/// and cannot accept invitations.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_pre_hijacked_account_is_never_merged(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app(options, connect).await;
    let acme = t.tenant("acme").await;
    configure_sso_for(&t, &acme, &idp.issuer, "moke-sso", &["acme.test"]).await;
    // The attacker holds an unverified account at dana's address (made
    // before sign-up asked for the address first), with a password they know.
    let hash = moke_iam::password::hash(PASSWORD);
    sqlx::query("INSERT INTO users (id, email, display_name, password_hash) VALUES ($1, 'dana@acme.test', 'x', $2)")
        .bind(uuid::Uuid::now_v7())
        .bind(&hash)
        .execute(&t.pool)
        .await
        .unwrap();
    // The provider hears what it would for any address; nothing is linked or requested.
    let answer = sso_sign_in::<SsoLinkPending>(&t, &idp, "acme", "dana@acme.test").await;
    answer.expect(StatusCode::ACCEPTED);
    assert!(answer.body.get("access_token").is_none(), "{answer:?}");
    assert_eq!(t.count("sso_identities").await, 0);
    assert_eq!(t.count("sso_link_requests").await, 0);
    assert_eq!(t.count("audit_events WHERE action = 'auth.sso_link_refused' AND org_id IS NULL").await, 1);

    // Its invitations wait for a proven address.
    let owner = t.client(&acme);
    owner
        .post::<InvitationView>(&owner.org_path("/invitations"), json!({ "email": "dana@acme.test", "role": "admin" }))
        .await
        .expect(StatusCode::CREATED);
    let invitation = t.mailed_token("invitation", "dana@acme.test").await;
    let other = t.tenant("attacker-home").await;
    let attacker_user: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM users WHERE email = 'dana@acme.test'").fetch_one(&t.pool).await.unwrap();
    sqlx::query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')")
        .bind(other.org.parse::<moke_api::ids::OrgId>().unwrap().uuid())
        .bind(attacker_user)
        .execute(&t.pool)
        .await
        .unwrap();
    let attacker = t.session("dana@acme.test", PASSWORD, None).await;
    let attacker = t.client(&other).with_token(&attacker.access_token);
    attacker
        .post::<MembershipSummary>("/v1/invitations/accept", json!({ "token": invitation }))
        .await
        .refused_with(StatusCode::FORBIDDEN, "email_unverified");
    let pat: TokenCreated =
        attacker.post("/v1/me/tokens", json!({ "name": "foothold" })).await.expect(StatusCode::CREATED);
    let foothold = attacker.with_token(&pat.token);

    // Dana takes the address back by resetting the password: the attacker's
    // sessions and tokens end; now the identity links (after her confirmation).
    let anonymous = t.anonymous();
    anonymous
        .post::<()>("/v1/auth/password-reset", json!({ "email": "dana@acme.test" }))
        .await
        .expect(StatusCode::ACCEPTED);
    let reset = t.mailed_token("password_reset", "dana@acme.test").await;
    anonymous
        .post::<()>(
            "/v1/auth/password-reset/confirm",
            json!({ "token": reset, "password": "a whole other long secret" }),
        )
        .await
        .expect(StatusCode::NO_CONTENT);
    attacker.get::<MeView>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    foothold.get::<MeView>("/v1/me").await.about("tokens made before the proof end").refused(StatusCode::UNAUTHORIZED);
    sso_sign_in::<SsoLinkPending>(&t, &idp, "acme", "dana@acme.test")
        .await
        .about("a link dana may confirm")
        .expect(StatusCode::ACCEPTED);
}

/// A domain is an organization's only after its DNS TXT record carries the
/// token Moke issued, and only one organization holds it.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn claiming_a_domain_needs_its_dns_record(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let dns = DnsServer::start().await;
    let t = TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.auth.sso_redirect_uri = SSO_REDIRECT.to_string();
        c.auth.dns_resolver = dns.addr.to_string();
    })
    .await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let domain: DomainView =
        owner.post(&owner.org_path("/domains"), json!({ "domain": "Acme.Test." })).await.expect(StatusCode::CREATED);
    assert_eq!(domain.domain, "acme.test");
    assert_eq!(domain.verification.name, "_moke-challenge.acme.test");
    assert_eq!(domain.verification.record_type, "TXT");
    let value = domain.verification.value;
    let verify = owner.org_path("/domains/acme.test/verify");
    let sso = async |domains: Value| -> Answer<SsoConfigView> {
        owner
            .put(
                &owner.org_path("/sso"),
                json!({
                    "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
                    "allowed_domains": domains, "default_role": "member",
                }),
            )
            .await
    };

    // No record, then a wrong one: not verified, and SSO may not rely on it.
    owner.post::<DomainView>(&verify, json!({})).await.refused_with(StatusCode::CONFLICT, "domain_not_verified");
    dns.set_txt("_moke-challenge.acme.test", "moke-domain-verification=someone-elses-token");
    owner.post::<DomainView>(&verify, json!({})).await.refused(StatusCode::CONFLICT);
    let problem = sso(json!(["acme.test"])).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["allowed_domains[0]"]);

    // The right record: verified, and usable.
    dns.set_txt("_moke-challenge.acme.test", &value);
    let verified: DomainView = owner.post(&verify, json!({})).await.expect(StatusCode::OK);
    assert!(verified.verified, "{verified:?}");
    sso(json!(["acme.test"])).await.expect(StatusCode::OK);

    // Another organization may claim it, but never verify it while acme holds it.
    let rival = t.tenant("rival").await;
    let rival = t.client(&rival);
    let theirs: DomainView =
        rival.post(&rival.org_path("/domains"), json!({ "domain": "acme.test" })).await.expect(StatusCode::CREATED);
    dns.set_txt("_moke-challenge.acme.test", &theirs.verification.value);
    rival
        .post::<DomainView>(&rival.org_path("/domains/acme.test/verify"), json!({}))
        .await
        .refused_with(StatusCode::CONFLICT, "domain_claimed");

    // Giving the domain up takes it out of SSO too.
    owner.delete::<()>(&owner.org_path("/domains/acme.test")).await.expect(StatusCode::NO_CONTENT);
    let view: SsoConfigView = owner.get(&owner.org_path("/sso")).await.expect(StatusCode::OK);
    assert!(view.allowed_domains.is_empty(), "{view:?}");
}

/// A login finishes only in the browser that started it (RFC 9700 §4.7):
/// an authorization response carried to another browser is refused.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_login_finishes_only_in_the_browser_that_started_it(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app(options, connect).await;
    let acme = t.tenant("acme").await;
    configure_sso_for(&t, &acme, &idp.issuer, "moke-sso", &["acme.test"]).await;
    // The attacker starts a login and sends the victim's browser the callback (login CSRF).
    let attackers = start(&t, "acme").await;
    let victims = start(&t, "acme").await;
    let back = idp.sign_in(&attackers.url, "alice@acme.test").await;
    callback_with_cookie::<SessionTokens>(&t, None, &back).await.refused(StatusCode::UNAUTHORIZED);
    let attackers = start(&t, "acme").await;
    let back = idp.sign_in(&attackers.url, "alice@acme.test").await;
    callback_with_cookie::<SessionTokens>(&t, Some(&victims.cookie), &back).await.refused(StatusCode::UNAUTHORIZED);
    let reasons: Vec<String> = sqlx::query_scalar(
        "SELECT details->>'reason' FROM audit_events WHERE action = 'auth.sso_login' AND outcome = 'failure'",
    )
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert!(reasons.iter().all(|r| r == "browser_mismatch") && !reasons.is_empty(), "{reasons:?}");
    assert_eq!(t.count("sessions").await, 0);
}

/// Identity-provider discovery and key fetches reach only public
/// addresses, follow no redirect, and answer with one fixed code whatever
/// happened, so they cannot map a network.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn discovery_is_no_network_probe(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    // The default: nothing private is reachable.
    let t = TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.outbound.allow_private_targets.clear();
    })
    .await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let answers = async |issuer: String| -> Answer<SsoConfigView> {
        let request = owner.request(Method::PUT, &owner.org_path("/sso")).json(&json!({
            "issuer": issuer, "client_id": "x", "client_secret": "y", "allowed_domains": [], "default_role": "viewer",
        }));
        owner.send(request).await
    };
    // A live provider and a closed port look the same: refused, one code, no detail.
    let open = answers(idp.issuer.clone()).await.refused(StatusCode::BAD_REQUEST);
    let shut = answers(format!("http://127.0.0.1:{closed}")).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(open.errors, shut.errors, "the two answers must not differ");
    assert_eq!(open.errors[0].code, moke_api::outbound::REFUSED_CODE);
    for metadata in ["169.254.169.254", "[::ffff:127.0.0.1]", "[fd00::1]", "10.0.0.1"] {
        answers(format!("http://{metadata}")).await.about(metadata).refused(StatusCode::BAD_REQUEST);
    }

    // CI issuers' keys are fetched through the same guard: a trust policy
    // naming a loopback issuer never makes a connection.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let probe = format!("http://{}", listener.local_addr().unwrap());
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = connections.clone();
    tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let account = owner.create_service_account("ci", "viewer").await.id.to_string();
    owner
        .post::<TrustPolicyView>(
            &owner.org_path(&format!("/service-accounts/{account}/trust-policies")),
            json!({ "issuer": probe, "audience": "moke", "claims": { "repository": "acme/web" } }),
        )
        .await
        .expect(StatusCode::CREATED);
    use base64::Engine;
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let forged = format!(
        "{}.{}.c2ln",
        b64(json!({ "alg": "RS256", "kid": "k" })),
        b64(json!({ "iss": probe, "aud": "moke", "sub": "x", "exp": 9_999_999_999i64 }))
    );
    let answer = t
        .anonymous()
        .post::<ExchangedToken>(
            "/v1/auth/token-exchange",
            json!({ "subject_token": forged, "service_account": account }),
        )
        .await;
    let status = answer.status;
    assert!(status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::UNAUTHORIZED, "{answer:?}");
    answer.refused(status);
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 0, "the guard made no connection");
}

/// With loopback allowed (a provider on a trusted network), a discovery
/// answer that redirects elsewhere is still refused.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn discovery_follows_no_redirect(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| c.auth.allow_insecure_issuers = true).await;
    let acme = t.tenant("acme").await;
    let app = axum::Router::new().fallback(|| async {
        (axum::http::StatusCode::FOUND, [("location", "http://169.254.169.254/latest/meta-data/")])
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(axum::serve(listener, app).into_future());
    let owner = t.client(&acme);
    let problem = owner
        .put::<SsoConfigView>(
            &owner.org_path("/sso"),
            json!({
                "issuer": issuer, "client_id": "x", "client_secret": "y", "allowed_domains": [], "default_role": "viewer",
            }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.errors[0].code, moke_api::outbound::REFUSED_CODE);
}

/// Whoever runs an organization's identity provider learns nothing about
/// which addresses have Moke accounts: a verified account, an unverified one
/// and no account at all get the same answer and leave the same record.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_provider_learns_nothing_about_who_has_an_account(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = app(options, connect).await;
    t.sign_up("known@acme.test", PASSWORD, "known-home").await;
    sqlx::query("INSERT INTO users (id, email, display_name, password_hash) VALUES ($1, 'legacy@acme.test', 'x', 'x')")
        .bind(uuid::Uuid::now_v7())
        .execute(&t.pool)
        .await
        .unwrap();
    let evil = t.tenant("evil").await;
    configure_sso_for(&t, &evil, &idp.issuer, "moke-sso", &[]).await;
    let mut answers = Vec::new();
    for address in ["known@acme.test", "legacy@acme.test", "nobody@acme.test"] {
        let answer = sso_sign_in::<SsoLinkPending>(&t, &idp, "evil", address).await.about(address);
        let pending = answer.expect(StatusCode::ACCEPTED);
        // The raw answer's field names, since the view type cannot show a field it lacks.
        let keys: Vec<String> = answer.body.as_object().into_iter().flat_map(|o| o.keys().cloned()).collect();
        answers.push((keys, pending.detail, pending.link_token.len()));
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    let evil_owner = t.client(&evil);
    let answer = evil_owner.get::<Page<AuditEventView>>(&evil_owner.org_path("/audit-events?action=auth.*")).await;
    let events = answer.expect(StatusCode::OK).items;
    assert_eq!(events.len(), 3, "{events:?}");
    for event in &events {
        assert_eq!(event.action, "auth.sso_link_requested");
    }
    // The whole raw answer, so that no field of any event names an account.
    assert!(!answer.body.to_string().contains("usr_"), "the organization learns no account: {answer:?}");
}
