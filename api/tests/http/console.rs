//! The web console in a real browser (headless Chromium over WebDriver)
//! against a live gateway and region: a newcomer's way from sign-up to
//! `kubectl get nodes`, with JavaScript and without; another organization
//! kept out; forms without their CSRF token refused. Every visited page is
//! screenshotted, has an empty browser console and, with JavaScript, no
//! serious or critical axe-core violations.

use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::browser::Browser;
use crate::common::{BackgroundAgent, TestApp, eventually, zones};

const PASSWORD: &str = "correct horse battery staple";

/// Signs up through the console's pages and the mailed link; ends on the
/// projects page, signed in.
async fn sign_up(t: &TestApp, browser: &Browser, email: &str, organization: &str) {
    browser.goto(&t.base).await;
    assert!(browser.path().await.starts_with("/signin"), "a visitor is sent to sign in");
    assert_eq!(browser.title().await, "Sign in · Moke");
    browser.check("sign-in").await;
    browser.click("a[href='/signup']").await;
    browser.fill("#field-email", email).await;
    browser.fill("#field-display_name", "Ada Lovelace").await;
    browser.fill("#field-organization_name", organization).await;
    browser.fill("#field-password", "short").await;
    browser.submit("form button[type=submit]").await;
    // The API's (and the form's) complaint shows at the field, which takes the focus.
    assert!(browser.exists("#field-password[aria-invalid=true]").await, "{}", browser.body_text().await);
    assert!(browser.text("#field-password-error").await.contains("12 characters"));
    browser.check("sign-up-refused").await;
    browser.fill("#field-email", email).await;
    browser.fill("#field-display_name", "Ada Lovelace").await;
    browser.fill("#field-organization_name", organization).await;
    browser.fill("#field-password", PASSWORD).await;
    browser.submit("form button[type=submit]").await;
    assert!(browser.body_text().await.contains("Check your mail"), "{}", browser.body_text().await);
    browser.check("check-your-mail").await;

    // The link from the mail, as the person opens it.
    let token = t.mailed_token("signup", email).await;
    browser.goto(&format!("{}/signup/confirm?token={token}", t.base)).await;
    browser.check("confirm").await;
    browser.fill("#field-password", PASSWORD).await;
    browser.submit("form button[type=submit]").await;
    assert_eq!(browser.path().await, "/projects?welcome=1");
    assert!(browser.body_text().await.contains("No projects yet"));
    assert!(browser.text("header .who").await.contains(email));
    browser.check("projects-empty").await;
}

/// The newcomer's flow: sign up, confirm the mailed link, create a
/// project and a cluster, watch it run, download its kubeconfig and use it
/// with kubectl, sign out.
async fn newcomer(options: PgPoolOptions, connect: PgConnectOptions, javascript: bool) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let name = if javascript { "newcomer" } else { "newcomer-no-js" };
    let browser = Browser::start(name, javascript).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;

    // A project; a second of the same name is refused, with the API's reason.
    browser.fill("#field-name", "shop").await;
    browser.submit("section.card form button[type=submit]").await;
    assert_eq!(browser.path().await, "/projects/shop");
    assert!(browser.body_text().await.contains("No clusters yet"));
    browser.check("project-empty").await;
    browser.goto(&format!("{}/projects", t.base)).await;
    browser.fill("#field-name", "shop").await;
    browser.submit("section.card form button[type=submit]").await;
    assert!(browser.exists(".alert.error").await, "{}", browser.body_text().await);
    browser.check("project-refused").await;
    browser.click("a[href='/projects/shop']").await;

    // A cluster with its first node pool of two nodes.
    browser.click("a.button[href='/projects/shop/clusters/new']").await;
    browser.check("cluster-form").await;
    assert!(browser.exists("#field-kubernetes_version option[selected]").await, "the default version is preselected");
    browser.fill("#field-name", "prod").await;
    browser.click("#field-region option[value='eu-central-1']").await;
    browser.click("#field-machine_type option[value='bm.small']").await;
    browser.fill("#field-count", "2").await;
    browser.submit("main form button[type=submit]").await;
    assert_eq!(browser.path().await, "/projects/shop/clusters/prod?created=1");
    browser.check("cluster-creating").await;

    // The page follows the cluster until it runs with both nodes.
    eventually(90, "the cluster page to show it running with two ready nodes", async || {
        browser.goto(&format!("{}/projects/shop/clusters/prod", t.base)).await;
        let chips = browser.texts(".summary .chip").await;
        let nodes = browser.texts("section[aria-labelledby=nodes-title] tbody tr").await;
        chips.first().is_some_and(|c| c == "running") && nodes.iter().filter(|n| n.contains("yes")).count() == 2
    })
    .await;
    assert!(browser.text(".summary").await.contains("https://"), "the endpoint shows");
    browser.check("cluster-running").await;

    // The list shows it with its status.
    browser.goto(&format!("{}/projects/shop", t.base)).await;
    assert_eq!(browser.texts("tbody .chip").await, vec!["running"]);
    browser.check("clusters").await;

    // The kubeconfig, downloaded, works with kubectl.
    browser.goto(&format!("{}/projects/shop/clusters/prod/kubeconfig", t.base)).await;
    browser.check("kubeconfig").await;
    browser.click("a[download]").await;
    let kubeconfig = browser.downloaded("prod-kubeconfig.yaml").await;
    let kubectl = tokio::process::Command::new("kubectl")
        .args(["--kubeconfig", kubeconfig.to_str().unwrap(), "get", "nodes", "-o", "json"])
        .output()
        .await
        .expect("kubectl");
    let nodes: Value = serde_json::from_slice(&kubectl.stdout)
        .unwrap_or_else(|_| panic!("kubectl: {}", String::from_utf8_lossy(&kubectl.stderr)));
    assert_eq!(nodes["items"].as_array().unwrap().len(), 2, "{nodes}");

    // Signing out ends the API session too: the page then asks to sign in.
    browser.submit("header button.link").await;
    assert!(browser.path().await.starts_with("/signin"));
    browser.goto(&format!("{}/projects", t.base)).await;
    assert_eq!(browser.path().await, "/signin?next=%2Fprojects");
    browser.check("signed-out").await;
    browser.close().await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_newcomer_gets_from_sign_up_to_kubectl(options: PgPoolOptions, connect: PgConnectOptions) {
    newcomer(options, connect, true).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_newcomer_gets_from_sign_up_to_kubectl_without_javascript(options: PgPoolOptions, connect: PgConnectOptions) {
    newcomer(options, connect, false).await;
}

/// A person of another organization gets "not found" for the first's
/// pages, by name and by id, and no trace of its resources.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn another_organization_cannot_reach_the_pages(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let owner = t.tenant("first").await;
    let project = t.project(&owner, "secret-plans").await;
    t.cluster(&owner, &project, "vault").await;

    let browser = Browser::start("isolation", true).await;
    sign_up(&t, &browser, "eve@example.com", "second").await;
    for path in [
        "/projects/secret-plans".to_string(),
        format!("/projects/{project}"),
        format!("/projects/{project}/settings"),
        format!("/projects/{project}/clusters/vault"),
        format!("/projects/{project}/clusters/vault/kubeconfig?show=1"),
        format!("/projects/{project}/clusters/vault/delete"),
    ] {
        browser.goto(&format!("{}{path}", t.base)).await;
        assert_eq!(browser.text("main h1, section.error-page h1").await, "Not found", "{path}");
    }
    browser.check_not_found("not-found").await;
    // The status is 404 too (not a 200 page saying so), and the download is refused.
    let cookie = browser_cookie(&t, "eve@example.com").await;
    for path in [format!("/projects/{project}"), format!("/projects/{project}/clusters/vault/kubeconfig.yaml")] {
        let answer = t.client.get(format!("{}{path}", t.base)).header("cookie", &cookie).header("accept", "text/html");
        let answer = answer.send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path}");
    }
    browser.close().await;
}

/// Signs in through the console's form without a browser; the cookie.
async fn browser_cookie(t: &TestApp, email: &str) -> String {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let page = client.get(format!("{}/signin", t.base)).header("accept", "text/html").send().await.unwrap();
    let cookie = cookie_of(&page);
    let csrf = csrf_of(&page.text().await.unwrap());
    let signed_in = client
        .post(format!("{}/console/fn/sign_in", t.base))
        .header("accept", "text/html")
        .header("referer", format!("{}/signin", t.base))
        .header("cookie", &cookie)
        .form(&[("csrf", csrf.as_str()), ("email", email), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    cookie_of(&signed_in)
}

fn cookie_of(answer: &reqwest::Response) -> String {
    let set = answer.headers().get("set-cookie").expect("a cookie").to_str().unwrap();
    set.split(';').next().unwrap().to_string()
}

fn csrf_of(page: &str) -> String {
    let start = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + "name=\"csrf\" value=\"".len();
    page[start..].chars().take_while(|c| *c != '"').collect()
}

/// A form post without the page's CSRF token changes nothing, whether the
/// token is missing, forged, or another browser's; a post from another
/// site is refused before it is read.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_form_without_its_csrf_token_is_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let signed_up = t.signed_up("ada@example.com", PASSWORD, "acme").await;
    let token = signed_up.session.access_token.clone();
    let cookie = browser_cookie(&t, "ada@example.com").await;
    let other = {
        let page = t.client.get(format!("{}/signin", t.base)).header("accept", "text/html").send().await.unwrap();
        csrf_of(&page.text().await.unwrap())
    };
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let post = |fields: Vec<(&'static str, String)>, origin: Option<&'static str>| {
        let mut request = client
            .post(format!("{}/console/fn/project_create", t.base))
            .header("accept", "text/html")
            .header("referer", format!("{}/projects", t.base))
            .header("cookie", &cookie)
            .form(&fields);
        if let Some(origin) = origin {
            request = request.header("origin", origin).header("sec-fetch-site", "cross-site");
        }
        request.send()
    };
    let form = |csrf: Option<String>| {
        let mut fields = vec![("idempotency_key", uuid::Uuid::new_v4().to_string()), ("name", "web".to_string())];
        if let Some(csrf) = csrf {
            fields.push(("csrf", csrf));
        }
        fields
    };
    for (what, fields) in
        [("missing", form(None)), ("forged", form(Some("AAAA".into()))), ("another browser's", form(Some(other)))]
    {
        let answer = post(fields, None).await.unwrap();
        assert_eq!(answer.status(), StatusCode::FOUND, "{what}: back to the form with its error");
        let location = answer.headers()["location"].to_str().unwrap().to_string();
        assert!(location.contains("__err="), "{what}: {location}");
        let page = client.get(&location).header("cookie", &cookie).header("accept", "text/html").send().await.unwrap();
        let text = page.text().await.unwrap();
        assert!(text.contains("This form has expired") || text.contains("could not be read"), "{what}: {text}");
    }
    let answer = post(form(None), Some("https://evil.example")).await.unwrap();
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "a cross-site post is refused");
    let (status, projects) = t.get(&format!("/v1/orgs/{}/projects", signed_up.organization.id), &token).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(projects["items"].as_array().unwrap().len(), 0, "nothing was created: {projects}");

    // A forged error in a link shows as a generic one, not the forger's text.
    let forged = format!(
        "{}/projects?__path=%2Fconsole%2Ffn%2Fproject_create&__err={}",
        t.base,
        base64_url(r#"x.{"status":400,"title":"Call +1 555 0100 now","detail":"","fields":[]}"#)
    );
    let page = client.get(&forged).header("cookie", &cookie).header("accept", "text/html").send().await.unwrap();
    let text = page.text().await.unwrap();
    assert!(!text.contains("555 0100"), "a forged error is not shown");
}

fn base64_url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE.encode(text)
}
