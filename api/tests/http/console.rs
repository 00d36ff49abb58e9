//! The web console in a real browser (headless Chromium over WebDriver)
//! against a live gateway and region: a newcomer's way from sign-up to
//! `kubectl get nodes`, with JavaScript and without; another organization
//! kept out; forms without their CSRF token refused. Every visited page is
//! screenshotted, has an empty browser console and, with JavaScript, no
//! serious or critical axe-core violations.

use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::{Value, json};
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
    // The form shows its monthly price; after a change, the form comes back priced as it was filled in.
    let total = ".estimate .estimate-total";
    assert_eq!(browser.text(total).await, "USD 360.06", "3 bm.small nodes and a free control plane");
    let create = "main form > button[type=submit]";
    if javascript {
        // The script prices the form as it is filled in, and Create waits for a complete form.
        // (once its module has loaded, which may be after the page's `load`)
        eventually(20, "the script to hide the estimate button, as the price follows the form", async || {
            !browser.displayed(".estimate button[value=estimate]").await
        })
        .await;
        assert_eq!(browser.property(create, "disabled").await, json!(true), "no name yet");
    }
    browser.fill("#field-name", "prod").await;
    browser.click("#field-region option[value='eu-central-1']").await;
    browser.click("#field-machine_type option[value='bm.small']").await;
    browser.fill("#field-count", "2").await;
    browser.click("#cp-3").await;
    if javascript {
        assert_eq!(browser.property(create, "disabled").await, json!(false), "the form is complete");
        eventually(30, "the estimate to follow the form", async || browser.text(total).await == "USD 307.24").await;
        let said = browser.property("#announcer", "textContent").await;
        assert_eq!(said, json!("Estimate: USD 307.24 a month."));
        assert!(browser.path().await.starts_with("/projects/shop/clusters/new"), "the page stayed");
    } else {
        browser.submit(".estimate button[value=estimate]").await;
        assert!(browser.path().await.starts_with("/projects/shop/clusters/new"));
        assert_eq!(browser.text(total).await, "USD 307.24", "2 nodes and an HA control plane");
    }
    assert!(!browser.exists(".alert.error").await, "an estimate is not an error");
    assert!(browser.text(".estimate").await.contains("Fewer than 3 nodes"), "a small pool is warned about");
    assert_eq!(browser.source_value("#field-name").await, "prod");
    assert_eq!(browser.source_value("#field-count").await, "2");
    browser.check("cluster-form-priced").await;
    browser.click("#cp-1").await;
    browser.submit(create).await;
    assert_eq!(browser.path().await, "/projects/shop/clusters/prod?created=1");
    browser.check("cluster-creating").await;
    let in_progress = |text: &str| text.contains("Changes are in progress");
    // The simulated region can finish before the page is drawn; else the page says the work goes on.
    let text = browser.body_text().await;
    let was_changing = in_progress(&text);
    assert!(was_changing || !text.contains("pending"), "the page says the cluster is changing: {text}");
    let running_with_two_nodes = async || {
        let chips = browser.texts(".summary .chip").await;
        let nodes = browser.texts("section[aria-labelledby=nodes-title] tbody tr").await;
        chips.first().is_some_and(|c| c == "running") && nodes.iter().filter(|n| n.contains("yes")).count() == 2
    };
    if javascript {
        // The page follows the cluster in place: it is never reloaded (the mark stays).
        browser.execute("window.stillThisPage = true;").await;
        eventually(90, "the page to show the cluster running with two ready nodes", running_with_two_nodes).await;
        eventually(90, "the page to say nothing is changing", async || !in_progress(&browser.body_text().await)).await;
        assert_eq!(browser.execute("return window.stillThisPage === true;").await, json!(true), "not reloaded");
        if was_changing {
            let said = browser.property("#announcer", "textContent").await;
            assert_eq!(said, json!("Changes are done: the page shows the latest state."));
        }
    } else {
        // The page's Refresh link follows the cluster until it runs with both nodes.
        eventually(90, "the cluster page to show it running with two ready nodes", async || {
            browser.goto(&format!("{}/projects/shop/clusters/prod", t.base)).await;
            running_with_two_nodes().await
        })
        .await;
        eventually(90, "the page to say nothing is changing once its operations are done", async || {
            if !in_progress(&browser.body_text().await) {
                return true;
            }
            browser.click("p.alert[role=status] a").await;
            false
        })
        .await;
    }
    assert!(browser.text(".summary").await.contains("https://"), "the endpoint shows");
    let operations = browser.texts("section[aria-labelledby=operations-title] tbody tr").await;
    assert!(operations.iter().any(|op| op.contains("cluster_create") && op.contains("succeeded")), "{operations:?}");
    assert!(operations.iter().any(|op| op.contains("node_pool_create") && op.contains("node pool")), "{operations:?}");
    browser.check("cluster-running").await;
    // An altered page token in the URL shows the newest operations, not an error page.
    browser.goto(&format!("{}/projects/shop/clusters/prod?page=not-a-token", t.base)).await;
    let kinds = |rows: &[String]| {
        rows.iter().map(|row| row.split(' ').next().unwrap_or_default().to_string()).collect::<Vec<_>>()
    };
    let newest = browser.texts("section[aria-labelledby=operations-title] tbody tr").await;
    assert_eq!(kinds(&newest), kinds(&operations));

    // Its events tell how it came to be; an altered page token shows the newest.
    browser.click("nav.tabs a[href$='/events']").await;
    assert_eq!(browser.path().await, "/projects/shop/clusters/prod/events");
    let events = browser.text("main table").await;
    assert!(events.contains("cluster_create succeeded: done") && events.contains("joined"), "{events}");
    browser.check("cluster-events").await;
    browser.goto(&format!("{}/projects/shop/clusters/prod/events?page=not-a-token", t.base)).await;
    assert!(browser.text("main table").await.contains("cluster_create succeeded: done"));

    // The list shows it with its status.
    browser.goto(&format!("{}/projects/shop", t.base)).await;
    assert_eq!(browser.texts("tbody .chip").await, vec!["running"]);
    browser.check("clusters").await;

    // The kubeconfig, downloaded, works with kubectl.
    browser.goto(&format!("{}/projects/shop/clusters/prod/kubeconfig", t.base)).await;
    browser.check("kubeconfig").await;
    if javascript {
        // Viewed, it is copied with one click.
        browser.click("a[href$='kubeconfig?show=1']").await;
        // The script adds the copy button once it has loaded on the new page.
        eventually(20, "the copy button", async || browser.exists("button.copy").await).await;
        browser.click("button.copy").await;
        eventually(20, "the copy button to say it copied", async || {
            browser.text("button.copy").await.starts_with("Copied")
        })
        .await;
        let said = browser.property("#announcer", "textContent").await;
        assert_eq!(said, json!("Copied the kubeconfig to the clipboard."));
        let copied = browser
            .execute_async("const done = arguments[arguments.length - 1]; navigator.clipboard.readText().then(done, e => done(String(e)));")
            .await;
        assert_eq!(copied, browser.property("#kubeconfig-yaml", "value").await, "the clipboard holds the kubeconfig");
        browser.check("kubeconfig-copied").await;
        browser.goto(&format!("{}/projects/shop/clusters/prod/kubeconfig", t.base)).await;
    }
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

    // What kubectl makes, the workloads page lists as made with kubectl.
    let created = tokio::process::Command::new("kubectl")
        .args(["--kubeconfig", kubeconfig.to_str().unwrap(), "create", "deployment", "web"])
        .args(["--image=registry.example.com/shop/web:1", "--replicas=1", "-n", "default"])
        .output()
        .await
        .expect("kubectl");
    assert!(created.status.success(), "kubectl: {}", String::from_utf8_lossy(&created.stderr));
    let workloads = format!("{}/projects/shop/clusters/prod/workloads", t.base);
    eventually(60, "the workloads page to list kubectl's Deployment", async || {
        browser.goto(&workloads).await;
        browser.exists("section[aria-labelledby=unmanaged-title]").await
            && browser.text("section[aria-labelledby=unmanaged-title] tbody").await.contains("1/1")
    })
    .await;
    let row = browser.text("section[aria-labelledby=unmanaged-title] tbody").await;
    assert!(row.contains("web") && row.contains("registry.example.com/shop/web:1"), "{row}");
    browser.check("workloads-kubectl").await;
    // An image deployed from the form, adopting kubectl's changes.
    browser.fill("#field-name", "api").await;
    browser.fill("#field-image", "registry.example.com/shop/api:1").await;
    browser.click("#field-on_drift option[value=adopt]").await;
    browser.check("deploy-form").await;
    browser.submit("section[aria-labelledby=form-title] button[type=submit]").await;
    assert!(browser.path().await.ends_with("/namespaces/default/deployments/api"), "{}", browser.path().await);
    assert!(browser.text(".summary").await.contains("adopted as revisions"), "{}", browser.body_text().await);
    browser.check("deployment-adopting").await;

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

/// The console's script fetches pages with the page's token; any other
/// request that is not a navigation (another page's script on this origin,
/// another site) is refused, with a forged token or another browser's too.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn only_the_consoles_script_fetches_its_pages(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let ada = t.signed_up("ada@example.com", PASSWORD, "acme").await;
    t.signed_up("bob@example.com", PASSWORD, "globex").await;
    let ada_token = ada.session.access_token.clone();
    let (status, _) =
        t.post(&format!("/v1/orgs/{}/projects", ada.organization.id), &ada_token, json!({ "name": "shop" })).await;
    assert_eq!(status, StatusCode::CREATED);
    let cookie = browser_cookie(&t, "ada@example.com").await;
    let other_cookie = browser_cookie(&t, "bob@example.com").await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let page = |cookie: &str| {
        client.get(format!("{}/projects", t.base)).header("cookie", cookie).header("accept", "text/html").send()
    };
    let token_of = |html: &str| {
        let start = html
            .find("name=\"moke-page-token\" content=\"")
            .expect("the page's token (cargo xtask test builds the script)");
        html[start + "name=\"moke-page-token\" content=\"".len()..]
            .chars()
            .take_while(|c| *c != '"')
            .collect::<String>()
    };
    let navigated = page(&cookie).await.unwrap();
    let csp = navigated.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.contains("script-src 'self' 'wasm-unsafe-eval'") && csp.contains("connect-src 'self'"), "{csp}");
    let html = navigated.text().await.unwrap();
    assert!(html.contains("<script type=\"module\" src=\"/assets/console.js\">"), "the page loads the script");
    let token = token_of(&html);
    let other_token = token_of(&page(&other_cookie).await.unwrap().text().await.unwrap());

    let fetch = |token: Option<&str>, site: &'static str| {
        let mut request = client
            .get(format!("{}/projects", t.base))
            .header("cookie", &cookie)
            .header("sec-fetch-mode", "cors")
            .header("sec-fetch-site", site);
        if let Some(token) = token {
            request = request.header("x-moke-page-token", token);
        }
        request.send()
    };
    for (what, token, site, allowed) in [
        ("without a token", None, "same-origin", false),
        ("with a forged token", Some("AAAA"), "same-origin", false),
        ("with another browser's token", Some(other_token.as_str()), "same-origin", false),
        ("from another site", Some(token.as_str()), "cross-site", false),
        ("from the console's script", Some(token.as_str()), "same-origin", true),
    ] {
        let answer = fetch(token, site).await.unwrap();
        let expected = if allowed { StatusCode::OK } else { StatusCode::FORBIDDEN };
        assert_eq!(answer.status(), expected, "a fetch {what}");
        if allowed {
            assert!(answer.text().await.unwrap().contains("<h1>Projects</h1>"), "the page itself");
        }
    }

    // With the token, only what the script does: no page that acts by being
    // opened (however its address is encoded), no form but the priced one.
    for path in ["/projects/shop/clusters/prod/kubeconfig?sho%77=1", "/projects/shop/clusters/prod/kubeconfig.yaml"] {
        let answer = client
            .get(format!("{}{path}", t.base))
            .header("cookie", &cookie)
            .header("sec-fetch-mode", "cors")
            .header("sec-fetch-site", "same-origin")
            .header("x-moke-page-token", &token)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "a scripted {path}");
    }
    let answer = client
        .post(format!("{}/console/fn/project_create", t.base))
        .header("cookie", &cookie)
        .header("sec-fetch-mode", "cors")
        .header("sec-fetch-site", "same-origin")
        .header("x-moke-page-token", &token)
        .form(&[
            ("csrf", csrf_of(&html)),
            ("name", "web".into()),
            ("idempotency_key", uuid::Uuid::new_v4().to_string()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "a scripted form other than the priced one");
    // The priced form, sent by the script without asking for a price, creates nothing.
    let cluster_form = |intent: Option<&str>| {
        let mut fields = vec![
            ("csrf", csrf_of(&html)),
            ("idempotency_key", uuid::Uuid::new_v4().to_string()),
            ("project", "shop".into()),
            ("name", "prod".into()),
            ("region", "eu-central-1".into()),
            ("kubernetes_version", "1.33".into()),
            ("control_plane_replicas", "1".into()),
            ("machine_type", "bm.small".into()),
            ("count", "3".into()),
        ];
        if let Some(intent) = intent {
            fields.push(("intent", intent.into()));
        }
        client
            .post(format!("{}/console/fn/cluster_create", t.base))
            .header("cookie", &cookie)
            .header("accept", "text/html")
            .header("referer", format!("{}/projects/shop/clusters/new", t.base))
            .header("sec-fetch-mode", "cors")
            .header("sec-fetch-site", "same-origin")
            .header("x-moke-page-token", &token)
            .form(&fields)
            .send()
    };
    for intent in [None, Some("create")] {
        let answer = cluster_form(intent).await.unwrap();
        let location = answer.headers().get("location").map(|l| l.to_str().unwrap().to_string()).unwrap_or_default();
        assert!(location.contains("__err="), "{intent:?}: refused back to the form, not created: {location}");
    }
    let priced = cluster_form(Some("estimate")).await.unwrap();
    assert_eq!(priced.status(), StatusCode::FOUND, "pricing is what the script may do");
    let (_, clusters) = t.get("/v1/projects/shop/clusters", &ada_token).await;
    assert_eq!(clusters["items"].as_array().unwrap().len(), 0, "nothing was created: {clusters}");

    // The script itself: a module and its WebAssembly, typed so browsers run them.
    for (path, kind) in [("/assets/console.js", "text/javascript"), ("/assets/console_bg.wasm", "application/wasm")] {
        let answer = client.get(format!("{}{path}", t.base)).header("sec-fetch-mode", "no-cors").send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{path}");
        assert!(answer.headers()["content-type"].to_str().unwrap().starts_with(kind), "{path}");
    }
}

fn base64_url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE.encode(text)
}

/// A running cluster of `email`'s organization, made through the API, for
/// the pages that need one: (project, cluster) names.
async fn running_cluster(t: &TestApp, email: &str) -> (String, String) {
    running_cluster_on(t, email, "1.33").await
}

/// [`running_cluster`] on Kubernetes `version`.
async fn running_cluster_on(t: &TestApp, email: &str, version: &str) -> (String, String) {
    let session = t.login(email, PASSWORD, None).await;
    let token = session["access_token"].as_str().unwrap().to_string();
    let org = session["organization"].as_str().unwrap().to_string();
    let (status, _) = t.post(&format!("/v1/orgs/{org}/projects"), &token, serde_json::json!({ "name": "shop" })).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = t
        .post(
            "/v1/projects/shop/clusters",
            &token,
            serde_json::json!({ "name": "prod", "spec": { "region": "eu-central-1", "kubernetes_version": version } }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = t
        .post(
            "/v1/projects/shop/clusters/prod/node-pools",
            &token,
            serde_json::json!({ "name": "workers", "spec": { "machine_type": "bm.small", "count": 2 } }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    eventually(60, "the cluster to run", async || {
        let (_, cluster) = t.get("/v1/projects/shop/clusters/prod", &token).await;
        cluster["status"]["phase"] == "running"
    })
    .await;
    ("shop".into(), "prod".into())
}

fn manifest(image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: web\n        image: {image}\n"
    )
}

/// A Deployment pasted as YAML rolls out, a second version too, and a
/// rollback brings the first image back; all through the pages.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deployment_pasted_as_yaml_rolls_out_and_back(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let browser = Browser::start("deployment", true).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    let (project, cluster) = running_cluster(&t, "ada@example.com").await;
    let workloads = format!("{}/projects/{project}/clusters/{cluster}/workloads", t.base);
    let page = format!("{}/projects/{project}/clusters/{cluster}/namespaces/default/deployments/web", t.base);

    // Not YAML: the complaint is at the text area, with the text kept.
    browser.goto(&workloads).await;
    browser.check("workloads-empty").await;
    browser.fill("#field-manifest", "kind: [not yaml").await;
    browser.submit("section[aria-labelledby=yaml-title] button[type=submit]").await;
    assert!(browser.exists("#field-manifest[aria-invalid=true]").await, "{}", browser.body_text().await);
    browser.check("yaml-refused").await;

    for (version, step) in [("1.0.0", "v1"), ("2.0.0", "v2")] {
        browser.goto(&workloads).await;
        browser.fill("#field-manifest", &manifest(&format!("registry.example.com/shop/web:{version}"))).await;
        browser.submit("section[aria-labelledby=yaml-title] button[type=submit]").await;
        assert!(browser.path().await.starts_with("/projects/shop/clusters/prod/namespaces/default/deployments/web"));
        eventually(60, &format!("{version} to roll out"), async || {
            browser.goto(&page).await;
            let text = browser.text(".summary").await;
            text.contains(&format!("web:{version}")) && text.contains("2 of 2") && text.contains("running")
        })
        .await;
        browser.check(&format!("rolled-out-{step}")).await;
    }

    // Roll back to the first revision from the revisions table.
    browser.submit("form button[aria-label='Roll back to revision 1']").await;
    assert!(browser.path().await.ends_with("done=rolled-back"), "{}", browser.path().await);
    eventually(60, "the rollback to roll out", async || {
        browser.goto(&page).await;
        let text = browser.text(".summary").await;
        text.contains("web:1.0.0") && text.contains("2 of 2") && text.contains("running")
    })
    .await;
    let causes = browser.texts("section[aria-labelledby=revisions-title] tbody tr").await;
    assert!(causes.iter().any(|row| row.contains("rollback to 1")), "{causes:#?}");
    browser.check("rolled-back").await;

    // An image from the form, adopting what kubectl changes.
    browser.goto(&workloads).await;
    browser.fill("#field-name", "api").await;
    browser.fill("#field-image", "registry.example.com/shop/api:1").await;
    browser.click("#field-on_drift option[value=adopt]").await;
    browser.check("deploy-form").await;
    browser.submit("section[aria-labelledby=form-title] button[type=submit]").await;
    assert!(browser.path().await.ends_with("/namespaces/default/deployments/api"), "{}", browser.path().await);
    let summary = browser.text(".summary").await;
    assert!(summary.contains("adopted as revisions") && summary.contains("shop/api:1"), "{summary}");
    browser.check("deployment-adopting").await;
    let session = t.login("ada@example.com", PASSWORD, None).await;
    let token = session["access_token"].as_str().unwrap();
    let (_, api) =
        t.get(&format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/api"), token).await;
    assert_eq!(api["spec"]["on_drift"], "adopt", "{api}");
    browser.close().await;
}

/// A cluster with a newer version on offer says so in the list and on its
/// page; upgraded from the console, its page follows the steps until it
/// runs the new version on every node.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_cluster_is_upgraded_from_the_console(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let browser = Browser::start("upgrade", true).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    running_cluster_on(&t, "ada@example.com", "1.32").await;

    browser.goto(&format!("{}/projects/shop", t.base)).await;
    assert_eq!(browser.texts("tbody a.chip.upgrade").await, ["1.33 available"]);
    browser.check("upgrade-available").await;
    browser.click("tbody a.chip.upgrade").await;
    assert_eq!(browser.path().await, "/projects/shop/clusters/prod/upgrade");
    assert!(browser.body_text().await.contains("runs Kubernetes 1.32"));
    browser.check("upgrade-form").await;
    // A preview first: the dry run's steps, and nothing started.
    browser.submit("form.preview button[type=submit]").await;
    assert_eq!(browser.path().await, "/projects/shop/clusters/prod/upgrade?preview=1.33");
    let plan = browser.text("section.plan").await;
    assert!(plan.contains("What upgrading to 1.33 would do") && plan.contains("/kubernetes_version"), "{plan}");
    assert!(plan.contains("traffic switched to the new control plane"), "{plan}");
    browser.check("upgrade-preview").await;
    browser.click("#field-confirm").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.path().await.starts_with("/projects/shop/clusters/prod?operation=op_"), "{}", browser.path().await);
    assert!(browser.text("tr.current").await.contains("cluster_upgrade"));
    browser.check("upgrade-started").await;
    // The page follows the upgrade in place until every node runs 1.33.
    eventually(120, "the cluster page to show the upgrade done", async || {
        let summary = browser.text(".summary").await;
        let current = browser.text("tr.current").await;
        summary.contains("1.33") && !browser.exists(".summary a.chip.upgrade").await && current.contains("succeeded")
    })
    .await;
    browser.check("upgraded").await;
    // The cluster's events tell the upgrade step by step.
    browser.click("nav.tabs a[href$='/events']").await;
    assert_eq!(browser.path().await, "/projects/shop/clusters/prod/events");
    let events = browser.text("main table").await;
    assert!(events.contains("control plane: traffic switched to the API servers on 1.33"), "{events}");
    browser.check("events").await;
    browser.close().await;
}

/// The upgrade preview without JavaScript: a plain GET form, answered with
/// the dry run's spec change and steps, and nothing started.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_upgrade_is_previewed_without_javascript(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let browser = Browser::start("upgrade-preview-no-js", false).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    running_cluster_on(&t, "ada@example.com", "1.32").await;
    browser.goto(&format!("{}/projects/shop/clusters/prod/upgrade", t.base)).await;
    browser.submit("form.preview button[type=submit]").await;
    assert_eq!(browser.path().await, "/projects/shop/clusters/prod/upgrade?preview=1.33");
    let plan = browser.text("section.plan").await;
    assert!(plan.contains("/kubernetes_version") && plan.contains("old control plane retired"), "{plan}");
    browser.check("preview").await;
    assert_eq!(t.count("operations WHERE kind = 'cluster_upgrade'").await, 0, "a preview starts nothing");
    browser.close().await;
}

/// A deploy hook's secret shows once, on the page after its creation, and
/// never again (reloading the page does not bring it back).
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deploy_hook_secret_is_shown_exactly_once(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let browser = Browser::start("deploy-hook", true).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    running_cluster(&t, "ada@example.com").await;
    let session = t.login("ada@example.com", PASSWORD, None).await;
    let token = session["access_token"].as_str().unwrap().to_string();
    let (status, body) = t
        .post(
            "/v1/projects/shop/clusters/prod/namespaces/default/deployments",
            &token,
            serde_json::json!({ "name": "web", "spec": { "image": "registry.example.com/shop/web:1.0.0" } }),
        )
        .await;
    assert!(status.is_success(), "{body}");

    let hooks = format!("{}/projects/shop/hooks", t.base);
    browser.goto(&hooks).await;
    browser.check("hooks-empty").await;
    browser.fill("#field-name", "web-ci").await;
    browser.fill("#field-cluster", "prod").await;
    browser.fill("#field-deployment", "web").await;
    browser.submit("section[aria-labelledby=new-hook] button[type=submit]").await;
    assert!(browser.exists("#hook-secret").await, "the secret shows after creating: {}", browser.body_text().await);
    let shown = browser.source_value("#hook-secret").await;
    assert!(shown.starts_with("whsec_"), "{shown}");
    assert!(browser.body_text().await.contains("shown only this once"));
    // Copied with its button (the script adds one to the secret, the URL and the curl example).
    eventually(20, "the copy buttons", async || browser.texts("button.copy").await.len() == 3).await;
    browser.click("#hook-secret + button.copy").await;
    eventually(20, "the secret to be copied", async || {
        browser.property("#announcer", "textContent").await == json!("Copied the secret to the clipboard.")
    })
    .await;
    let copied = browser
        .execute_async("const done = arguments[arguments.length - 1]; navigator.clipboard.readText().then(done, e => done(String(e)));")
        .await;
    assert_eq!(copied, json!(shown), "the clipboard holds the secret");
    browser.check("hook-secret").await;

    // Reloaded, or opened again: the secret is gone for good.
    browser.goto(&hooks).await;
    assert!(!browser.exists("#hook-secret").await, "the secret shows only once");
    assert!(!browser.source().await.contains(&shown), "the secret is nowhere on the page");
    assert!(browser.body_text().await.contains("web-ci"));
    browser.check("hooks").await;
    browser.close().await;
}

/// The organization's pages, each visited and checked, with one thing done
/// on each: an invitation, a service account and its token (shown once),
/// a personal token, an event webhook endpoint and its delivery log, the
/// quotas, the audit log filtered in the URL; the organization switcher.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_organization_pages_work(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let browser = Browser::start("organization", true).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;

    browser.click("header a[href='/org/members']").await;
    assert!(browser.body_text().await.contains("ada@example.com"));
    browser.fill("#field-email", "grace@example.com").await;
    browser.submit("section[aria-labelledby=invite-title] button[type=submit]").await;
    assert!(browser.body_text().await.contains("grace@example.com"), "the invitation is listed");
    browser.check("members").await;

    browser.click("a[href='/org/service-accounts']").await;
    browser.fill("#field-name", "ci-deployer").await;
    browser.submit("section[aria-labelledby=new-sa] button[type=submit]").await;
    browser.fill("input[name=name][placeholder]", "github actions").await;
    browser.submit("td form button.secondary").await;
    let token = browser.source_value("#token-secret").await;
    assert!(token.starts_with("moke_"), "{token}");
    browser.check("service-account-token").await;
    browser.goto(&format!("{}/org/service-accounts", t.base)).await;
    assert!(!browser.source().await.contains(&token), "a token shows once");
    let (status, _) = t.get("/v1/me", &token).await;
    assert_eq!(status, StatusCode::OK, "the token shown works");

    browser.click("a[href='/org/tokens']").await;
    browser.fill("#field-name", "laptop").await;
    browser.submit("section[aria-labelledby=new-token] button[type=submit]").await;
    assert!(browser.source_value("#token-secret").await.starts_with("moke_pat_"));
    browser.check("personal-token").await;

    browser.click("a[href='/org/webhooks']").await;
    browser.fill("#field-url", "http://127.0.0.1:9/moke-events").await;
    browser.submit("section[aria-labelledby=new-endpoint] button[type=submit]").await;
    assert!(browser.source_value("#signing-secret").await.starts_with("whsec_"), "{}", browser.body_text().await);
    assert!(browser.body_text().await.contains("webhook-signature"), "the panel says what the secret is for");
    browser.check("webhook-secret").await;
    browser.click("td a[href^='/org/webhooks/']").await;
    assert!(browser.body_text().await.contains("Deliveries"));
    browser.check("webhook-deliveries").await;

    browser.goto(&format!("{}/org/quotas", t.base)).await;
    assert!(browser.body_text().await.contains("Service accounts: 1 of"), "{}", browser.body_text().await);
    browser.check("quotas").await;

    browser.goto(&format!("{}/org/audit?action=service_account.create", t.base)).await;
    let rows = browser.texts("tbody tr").await;
    assert!(!rows.is_empty() && rows.iter().all(|r| r.contains("service_account.create")), "{rows:#?}");
    assert_eq!(browser.source_value("#filter-action").await, "service_account.create", "the filter stays in the form");
    browser.check("audit").await;
    browser.goto(&format!("{}/org/audit?since=yesterday", t.base)).await;
    assert!(browser.exists(".alert.error").await, "a bad filter is explained on the page");

    // Billing: empty at first, then this month's draft from usage a region
    // reported, with its lines, a credit, and the CSV download.
    browser.goto(&format!("{}/org/billing", t.base)).await;
    assert!(browser.body_text().await.contains("No invoices yet"), "{}", browser.body_text().await);
    browser.check("billing-empty").await;
    let (invoice, start) = billed_usage(&t, "ada@example.com").await;
    browser.goto(&format!("{}/org/billing", t.base)).await;
    let text = browser.body_text().await;
    // Half an hour of bm.medium at 0.7143 an hour: 0.36.
    assert!(text.contains("0.36 USD"), "{text}");
    assert!(text.contains("Welcome credit"), "{text}");
    assert_eq!(browser.texts("section[aria-labelledby=invoices-title] tbody .chip").await, vec!["draft"]);
    browser.check("billing").await;
    browser.click(&format!("a[href='/org/billing/invoices/{invoice}']")).await;
    let lines = browser.texts("section[aria-labelledby=lines-title] tbody tr").await;
    assert!(
        lines.iter().any(|l| l.contains("bm.medium") || l.contains("workers") && l.contains("0.36 USD")),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l.contains("Credit: Welcome credit") && l.contains("-0.10 USD")), "{lines:#?}");
    assert!(browser.text(".summary").await.contains("0.26 USD"), "the total after the credit");
    browser.check("invoice").await;
    browser.click("a.button.secondary[download]").await;
    let month = start.format("%Y-%m");
    let csv = std::fs::read_to_string(browser.downloaded(&format!("moke-invoice-{month}-draft.csv")).await).unwrap();
    assert!(csv.starts_with("kind,product,sku") && csv.contains("bm.medium.hour"), "{csv}");
    browser.click("a.button[download]:not(.secondary)").await;
    let pdf = std::fs::read(browser.downloaded(&format!("moke-invoice-{month}-draft.pdf")).await).unwrap();
    assert!(pdf.starts_with(b"%PDF-"), "a PDF");

    // A second organization (through an invitation accepted by API): the switcher moves the session.
    let session = t.login("ada@example.com", PASSWORD, None).await;
    let second = t.tenant("second").await;
    let (_, invitation) = t
        .post(
            &format!("/v1/orgs/{}/invitations", second.org),
            &second.token,
            serde_json::json!({ "email": "ada@example.com", "role": "member" }),
        )
        .await;
    assert!(invitation["id"].is_string(), "{invitation}");
    let accept = t.mailed_token("invitation", "ada@example.com").await;
    let (status, accepted) = t
        .post(
            "/v1/invitations/accept",
            session["access_token"].as_str().unwrap(),
            serde_json::json!({ "token": accept }),
        )
        .await;
    assert!(status.is_success(), "{accepted}");
    browser.goto(&format!("{}/projects", t.base)).await;
    browser.click(&format!("#org-switch option[value='{}']", second.org)).await;
    browser.submit("header form button.secondary").await;
    assert_eq!(browser.text("#org-switch option[selected]").await, "second");
    browser.check("switched").await;
    browser.close().await;
}

/// `moke auth login` on another device: the page says who is granting what,
/// refuses an approval without the "I started this" confirmation, and an
/// approval gives the device its token.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_device_is_approved_on_the_device_page(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let browser = Browser::start("device", false).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    let (status, device) =
        t.post_public("/v1/device/auth", serde_json::json!({ "client_name": "moke CLI (laptop)" })).await;
    assert!(status.is_success(), "{device}");
    let link = device["verification_uri_complete"].as_str().unwrap();
    let path = &link[link.find("/device").unwrap()..];
    browser.goto(&format!("{}{path}", t.base)).await;
    let text = browser.body_text().await;
    assert!(text.contains("ada@example.com") && text.contains("acme"), "the page names who grants what: {text}");
    browser.check("device").await;

    browser.submit("button[value=approve]").await;
    assert!(browser.exists("#field-started_here").await);
    assert!(browser.body_text().await.contains("started this sign-in yourself"), "{}", browser.body_text().await);
    browser.check("device-unconfirmed").await;
    browser.click("#field-started_here").await;
    browser.submit("button[value=approve]").await;
    assert_eq!(browser.path().await, "/device?done=approved");
    browser.check("device-approved").await;
    let grant = "urn:ietf:params:oauth:grant-type:device_code";
    let (status, token) = t
        .post_public(
            "/v1/device/token",
            serde_json::json!({ "device_code": device["device_code"], "grant_type": grant }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert!(token["access_token"].as_str().unwrap().starts_with("moke_pat_"));
    browser.close().await;
}

/// Forgot the password: the mailed link leads to a page that sets a new
/// one, and signing in with it works.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_password_is_reset_through_the_mailed_link(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    t.signed_up("ada@example.com", PASSWORD, "acme").await;
    let browser = Browser::start("password-reset", true).await;
    browser.goto(&format!("{}/signin", t.base)).await;
    browser.click("a[href='/reset-password']").await;
    browser.fill("#field-email", "ada@example.com").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.body_text().await.contains("on its way"));
    browser.check("reset-asked").await;
    let token = t.mailed_token("password_reset", "ada@example.com").await;
    browser.goto(&format!("{}/reset-password?token={token}", t.base)).await;
    browser.fill("#field-password", "a brand new passphrase").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.path().await.starts_with("/signin"));
    browser.fill("#field-email", "ada@example.com").await;
    browser.fill("#field-password", "a brand new passphrase").await;
    browser.submit("main form button[type=submit]").await;
    assert_eq!(browser.path().await, "/projects");
    browser.check("reset-signed-in").await;
    browser.close().await;
}

/// A project's and a cluster's management pages, each visited and checked
/// with one thing done on each: a project role granted, a node pool added
/// (autoscaled, labelled, tainted) and then changed (autoscaling off), a
/// Service created and deleted, a service account's trust policy added, a
/// domain added on the single sign-on page, and the project renamed.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_management_pages_work(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let browser = Browser::start("management", true).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    let (project, cluster) = running_cluster(&t, "ada@example.com").await;
    let session = t.login("ada@example.com", PASSWORD, None).await;
    let token = session["access_token"].as_str().unwrap().to_string();
    let org = session["organization"].as_str().unwrap().to_string();
    let (status, robot) = t
        .post(
            &format!("/v1/orgs/{org}/service-accounts"),
            &token,
            serde_json::json!({ "name": "ci", "role": "viewer" }),
        )
        .await;
    assert!(status.is_success(), "{robot}");
    let robot = robot["id"].as_str().unwrap().to_string();

    // Access: the service account gets a project role.
    browser.goto(&format!("{}/projects/{project}/access", t.base)).await;
    assert!(browser.body_text().await.contains("No project roles yet"));
    browser.check("access-empty").await;
    browser.click(&format!("#field-principal option[value='{robot}']")).await;
    browser.click("#field-role option[value='developer']").await;
    browser.submit("section[aria-labelledby=grant-title] button[type=submit]").await;
    let rows = browser.texts("tbody tr").await;
    assert!(rows.iter().any(|r| r.contains("service account ci")), "{rows:#?}");
    assert_eq!(browser.source_value(&format!("#role-{robot} option[selected]")).await, "developer");
    browser.check("access").await;
    let (_, members) = t.get(&format!("/v1/projects/{project}/members"), &token).await;
    assert_eq!(members["items"][0]["role"], "developer", "{members}");

    // A node pool, added from its form: bad taints are refused at the field.
    let cluster_page = format!("{}/projects/{project}/clusters/{cluster}", t.base);
    browser.goto(&cluster_page).await;
    browser.click("a[href$='/node-pools/new']").await;
    browser.check("node-pool-new").await;
    browser.fill("#field-name", "batch").await;
    browser.fill("#field-count", "2").await;
    browser.click("#field-autoscale").await;
    browser.fill("#field-min_count", "1").await;
    browser.fill("#field-max_count", "4").await;
    browser.fill("#field-node_labels", "workload=batch").await;
    browser.fill("#field-taints", "dedicated batch").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.exists("#field-taints[aria-invalid=true]").await, "{}", browser.body_text().await);
    assert_eq!(browser.source_value("#field-name").await, "batch", "the form keeps what was typed");
    browser.check("node-pool-refused").await;
    browser.fill("#field-taints", "dedicated=batch:NoSchedule").await;
    browser.submit("main form button[type=submit]").await;
    assert_eq!(browser.path().await, format!("/projects/{project}/clusters/{cluster}/node-pools/batch?created=1"));
    let summary = browser.text(".summary").await;
    assert!(summary.contains("1 to 4 nodes"), "{summary}");
    let (_, pool) = t.get(&format!("/v1/projects/{project}/clusters/{cluster}/node-pools/batch"), &token).await;
    assert_eq!(pool["spec"]["node_labels"]["workload"], "batch", "{pool}");
    assert_eq!(pool["spec"]["taints"][0]["effect"], "NoSchedule", "{pool}");
    browser.check("node-pool").await;
    // Autoscaling off, and a fixed size.
    browser.click("#field-autoscale").await;
    browser.fill("#field-count", "1").await;
    browser.submit("section[aria-labelledby=edit-title] button[type=submit]").await;
    assert!(browser.text(".summary").await.contains("off"), "{}", browser.body_text().await);
    let (_, pool) = t.get(&format!("/v1/projects/{project}/clusters/{cluster}/node-pools/batch"), &token).await;
    assert!(pool["spec"]["autoscaling"].is_null() && pool["spec"]["count"] == 1, "{pool}");
    browser.check("node-pool-saved").await;

    // A Service, created and deleted on the workloads page.
    browser.goto(&format!("{cluster_page}/workloads")).await;
    browser.fill("#field-service_name", "web").await;
    browser.fill("#field-selector", "app=web").await;
    browser.fill("#field-port", "80").await;
    browser.submit("section[aria-labelledby=service-title] button[type=submit]").await;
    let rows = browser.texts("section[aria-labelledby=services-title] tbody tr").await;
    assert!(rows.iter().any(|r| r.starts_with("web")), "{rows:#?}");
    browser.check("service").await;
    browser.click("#delete-service-web").await;
    browser.submit("section[aria-labelledby=services-title] button.danger").await;
    assert!(browser.body_text().await.contains("No services in this namespace"));

    // A trust policy for the service account.
    browser.goto(&format!("{}/org/service-accounts", t.base)).await;
    browser.click(&format!("a[href='/org/service-accounts/{robot}']")).await;
    browser.check("service-account").await;
    browser.fill("#field-issuer", "https://token.actions.githubusercontent.com").await;
    browser.fill("#field-audience", "moke").await;
    browser.fill("#field-claims", "repository=acme/web\nref=refs/heads/main").await;
    browser.submit("section[aria-labelledby=new-policy] button[type=submit]").await;
    let rows = browser.texts("tbody tr").await;
    assert!(rows.iter().any(|r| r.contains("repository = acme/web")), "{rows:#?}");
    browser.check("trust-policy").await;

    // Single sign-on: nothing configured yet; a domain to prove.
    browser.goto(&format!("{}/org/sso", t.base)).await;
    browser.check("sso-empty").await;
    browser.fill("#field-domain", "acme.example").await;
    browser.submit("section[aria-labelledby=add-domain-title] button[type=submit]").await;
    assert!(browser.body_text().await.contains("acme.example"), "{}", browser.body_text().await);
    browser.check("sso-domain").await;

    // Renamed: the project's pages move to the new name.
    browser.goto(&format!("{}/projects/{project}/settings", t.base)).await;
    browser.fill("#field-name", "storefront").await;
    browser.submit("section[aria-labelledby=rename] button[type=submit]").await;
    assert_eq!(browser.path().await, "/projects/storefront/settings?renamed=1");
    browser.check("renamed").await;
    let (status, _) = t.get("/v1/projects/storefront/clusters/prod", &token).await;
    assert_eq!(status, StatusCode::OK);
    browser.close().await;
}

/// Signing in through the organization's identity provider (a real OpenID
/// Provider on loopback): the console starts the login, the provider asks
/// who you are, and its redirect, carried to the console's landing (the
/// test's provider sends it to an address nothing listens on), signs the
/// browser in to the organization. A landing without a started sign-in
/// signs nobody in.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn single_sign_on_signs_in_through_the_console(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = crate::common::OidcProvider::start().await;
    let t = TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.auth.sso_redirect_uri = crate::common::SSO_REDIRECT.to_string();
    })
    .await;
    let acme = t.tenant("acme").await;
    crate::oidc::configure_sso_for(&t, &acme, &idp.issuer, "moke-sso", &["acme.test"]).await;
    let browser = Browser::start("single-sign-on", true).await;

    // A landing nobody started goes nowhere.
    browser.goto(&format!("{}/signin/sso/callback?code=forged&state=forged", t.base)).await;
    assert_eq!(browser.path().await, "/signin/sso?outcome=expired");
    browser.check("sso-expired").await;

    browser.goto(&format!("{}/signin", t.base)).await;
    browser.click("a[href='/signin/sso']").await;
    browser.fill("#field-organization", "nobody").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.exists("#field-organization[aria-invalid=true]").await, "{}", browser.body_text().await);
    browser.check("sso-unknown-organization").await;
    browser.fill("#field-organization", "acme").await;
    browser.submit("main form button[type=submit]").await;
    eventually(10, "the provider's sign-in page", async || browser.url().await.starts_with(&idp.issuer)).await;
    browser.fill("input[name=login]", "alice@acme.test").await;
    browser.fill("input[name=password]", "any").await;
    browser.submit("button[type=submit]").await;
    if browser.url().await.starts_with(&idp.issuer) {
        browser.submit("button[type=submit]").await; // consent
    }
    let back = browser.url().await;
    assert!(back.starts_with(crate::common::SSO_REDIRECT), "{back}");
    let query = reqwest::Url::parse(&back).unwrap().query().unwrap().to_string();
    // What the provider's own pages logged (a web font it could not load) is not the console's.
    let _ = browser.console_errors().await;
    browser.goto(&format!("{}/signin/sso/callback?{query}", t.base)).await;
    assert_eq!(browser.path().await, "/projects");
    assert!(browser.text("header .who").await.contains("alice@acme.test"));
    browser.check("sso-signed-in").await;

    // The same answer again (a replay) signs nobody in a second time.
    browser.goto(&format!("{}/signin/sso/callback?{query}", t.base)).await;
    assert_eq!(browser.path().await, "/signin/sso?outcome=expired");
    browser.close().await;
}

/// For `email`'s organization: a cluster with a bm.medium node that ran
/// for the last half hour, as the region reports it, and a 0.10 credit;
/// the draft invoice's id and the usage's start.
async fn billed_usage(t: &TestApp, email: &str) -> (String, chrono::DateTime<chrono::Utc>) {
    let session = t.login(email, PASSWORD, None).await;
    let (token, org) = (session["access_token"].as_str().unwrap(), session["organization"].as_str().unwrap());
    let (status, _) = t.post(&format!("/v1/orgs/{org}/projects"), token, serde_json::json!({ "name": "shop" })).await;
    assert_eq!(status, StatusCode::CREATED);
    let body =
        serde_json::json!({ "name": "prod", "spec": { "region": "eu-central-1", "control_plane": { "replicas": 1 } } });
    let (status, op) = t.post("/v1/projects/shop/clusters", token, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{op}");
    let cluster = op["target"]["id"].as_str().unwrap().to_string();
    let body = serde_json::json!({ "name": "workers", "spec": { "machine_type": "bm.medium", "count": 1 } });
    let (status, op) = t.post("/v1/projects/shop/clusters/prod/node-pools", token, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{op}");
    let pool = op["target"]["id"].as_str().unwrap().to_string();
    // The cluster ran for a while already (usage from before it existed is refused).
    sqlx::query("UPDATE clusters SET created_at = now() - interval '1 day'").execute(&t.pool).await.unwrap();
    let end = chrono::Utc::now();
    let start = end - chrono::Duration::minutes(30);
    let invoice = t.report_usage(&cluster, Some(&pool), "workers-1", start, end).await;
    let credit = moke_api::app::billing::credits::CreditGrantInput {
        kind: moke_api::model::CreditKind::Promotional,
        description: "Welcome credit".into(),
        amount: "0.10".parse().unwrap(),
        priority: 1,
        expires_at: None,
        granted_by: "ops".into(),
    };
    t.app.grant_credit(org.parse().unwrap(), credit).await.unwrap();
    (invoice, start)
}

/// The billing pages without JavaScript: the same content, and the
/// downloads are plain links.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_billing_pages_work_without_javascript(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let browser = Browser::start("billing-no-js", false).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    let (invoice, start) = billed_usage(&t, "ada@example.com").await;
    browser.goto(&format!("{}/org/billing", t.base)).await;
    let text = browser.body_text().await;
    assert!(text.contains("0.36 USD") && text.contains("Welcome credit"), "{text}");
    if start.format("%Y-%m").to_string() == chrono::Utc::now().format("%Y-%m").to_string() {
        assert!(browser.exists("section[aria-labelledby=usage-title] svg rect title").await, "a bar a day with usage");
    }
    browser.check("billing").await;
    browser.click(&format!("a[href='/org/billing/invoices/{invoice}']")).await;
    assert!(browser.text(".summary").await.contains("0.26 USD"), "the total after the credit");
    browser.check("invoice").await;
    browser.click("a.button.secondary[download]").await;
    let csv =
        std::fs::read_to_string(browser.downloaded(&format!("moke-invoice-{}-draft.csv", start.format("%Y-%m"))).await)
            .unwrap();
    assert!(csv.contains("bm.medium.hour"), "{csv}");

    // A budget: a bad amount is explained at its field, then the budget shows with this month's spend.
    browser.goto(&format!("{}/org/billing", t.base)).await;
    browser.fill("#field-name", "Monthly cap").await;
    browser.fill("#field-amount", "lots").await;
    browser.submit("section[aria-labelledby=new-budget] button[type=submit]").await;
    assert!(browser.exists(".field.invalid #field-amount").await, "{}", browser.body_text().await);
    assert_eq!(browser.source_value("#field-name").await, "Monthly cap", "the form keeps what was typed");
    browser.fill("#field-amount", "100.00").await;
    browser.click("#basis-forecast").await;
    browser.submit("section[aria-labelledby=new-budget] button[type=submit]").await;
    let budgets = browser.texts("section[aria-labelledby=budgets-title] > table tbody tr").await;
    assert!(
        budgets.iter().any(|b| b.contains("Monthly cap") && b.contains("100.00 USD") && b.contains("forecast")),
        "{budgets:?}"
    );
    browser.check("billing-budget").await;

    // The plan: Business comes from Moke's operators; back to Standard and down to Free are the
    // customer's, and Free is refused while the cluster's 32 vCPUs exceed it.
    let org: moke_api::ids::OrgId = sqlx::query_scalar::<_, uuid::Uuid>("SELECT id FROM organizations")
        .fetch_one(&t.pool)
        .await
        .map(moke_api::ids::OrgId::from_uuid)
        .unwrap();
    t.app.set_plan(org, "business", "Signed the business agreement").await.unwrap();
    browser.goto(&format!("{}/org/billing", t.base)).await;
    assert!(browser.exists("#plan-business[checked]").await, "the current plan is chosen");
    browser.click("#plan-standard").await;
    browser.submit("section[aria-labelledby=plan-title] form button[type=submit]").await;
    assert!(browser.body_text().await.contains("You are now on the Standard plan"), "{}", browser.body_text().await);
    assert!(browser.exists("#plan-business[disabled]").await, "Business is not self-serve");
    browser.click("#plan-free").await;
    browser.submit("section[aria-labelledby=plan-title] form button[type=submit]").await;
    let refused = browser.text("section[aria-labelledby=plan-title] .alert.error").await;
    assert!(refused.contains("vcpus"), "{refused}");
    browser.check("billing-plan-refused").await;
    browser.goto(&format!("{}/org/quotas", t.base)).await;
    assert!(browser.body_text().await.contains("plan, standard"), "{}", browser.body_text().await);
    browser.close().await;
}

/// A delete the organization's policy holds waits on its approval page;
/// another owner signs in and approves it there.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_held_delete_is_approved_by_another_owner(options: PgPoolOptions, connect: PgConnectOptions) {
    held_delete_approved(options, connect, true).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_held_delete_is_approved_by_another_owner_without_javascript(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    held_delete_approved(options, connect, false).await;
}

async fn held_delete_approved(options: PgPoolOptions, connect: PgConnectOptions, javascript: bool) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let browser = Browser::start(if javascript { "approval" } else { "approval-no-js" }, javascript).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    running_cluster(&t, "ada@example.com").await;
    let session = t.login("ada@example.com", PASSWORD, None).await;
    let (token, org) = (session["access_token"].as_str().unwrap(), session["organization"].as_str().unwrap());
    let policy = serde_json::json!({ "approvals": { "required_for": ["cluster_delete"] } });
    let (status, body) =
        t.send(t.request(reqwest::Method::PUT, &format!("/v1/orgs/{org}/policy"), token).json(&policy)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let tenant = crate::common::Tenant { org: org.to_string(), token: token.to_string() };
    t.member(&tenant, "grace@example.com", "owner").await;

    // Ada deletes the cluster: the console shows the request waiting.
    browser.goto(&format!("{}/projects/shop/clusters/prod/delete", t.base)).await;
    browser.fill("#field-confirm", "prod").await;
    browser.submit("main form button.danger").await;
    let approval = browser.path().await;
    assert!(approval.starts_with("/operations/op_") && approval.ends_with("/approval"), "{approval}");
    let page = browser.body_text().await;
    assert!(
        page.contains("awaiting approval") && page.contains("the rule “cluster delete” of policy version 1"),
        "{page}"
    );
    browser.check("awaiting").await;
    // Ada may not decide her own request.
    browser.click("#decision-approve").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.body_text().await.contains("someone other than who asked"), "{}", browser.body_text().await);
    browser.check("own-request-refused").await;

    // Grace signs in and approves: the cluster is being deleted.
    browser.submit("header button.link").await;
    browser.goto(&format!("{}/signin", t.base)).await;
    browser.fill("#field-email", "grace@example.com").await;
    browser.fill("#field-password", crate::common::MEMBER_PASSWORD).await;
    browser.submit("main form button[type=submit]").await;
    browser.goto(&format!("{}{approval}", t.base)).await;
    browser.click("#decision-approve").await;
    browser.fill("#field-reason", "the shop moved to eu-west").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.path().await.ends_with("/approval?decided=approve"), "{}", browser.path().await);
    let page = browser.body_text().await;
    assert!(page.contains("The request was approved") && page.contains("the shop moved to eu-west"), "{page}");
    browser.check("approved").await;
    let (_, cluster) = t.get("/v1/projects/shop/clusters/prod", token).await;
    assert!(cluster["deletion_requested_at"].is_string() || cluster["code"] == "not_found", "{cluster}");
    browser.close().await;
}

/// A cluster's lifecycle pages: an etcd snapshot taken and followed on its
/// Operation's page, the spec history with what a change changed, a node
/// replaced from its pool's page, a held request withdrawn, and a restore
/// confirmed by the cluster's name.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn lifecycle_pages_take_snapshots_replace_nodes_and_withdraw(options: PgPoolOptions, connect: PgConnectOptions) {
    lifecycle_pages(options, connect, true).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn lifecycle_pages_work_without_javascript(options: PgPoolOptions, connect: PgConnectOptions) {
    lifecycle_pages(options, connect, false).await;
}

async fn lifecycle_pages(options: PgPoolOptions, connect: PgConnectOptions, javascript: bool) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let browser = Browser::start(if javascript { "lifecycle" } else { "lifecycle-no-js" }, javascript).await;
    sign_up(&t, &browser, "ada@example.com", "acme").await;
    running_cluster(&t, "ada@example.com").await;
    let session = t.login("ada@example.com", PASSWORD, None).await;
    let (token, org) = (session["access_token"].as_str().unwrap(), session["organization"].as_str().unwrap());
    let cluster = format!("{}/projects/shop/clusters/prod", t.base);

    // A snapshot on request: its Operation's page follows it to the end.
    browser.goto(&format!("{cluster}/snapshots")).await;
    browser.check("snapshots-before").await;
    browser.submit("main form button.secondary").await;
    let operation = browser.path().await;
    assert!(operation.starts_with("/operations/op_"), "{operation}");
    assert!(browser.body_text().await.contains("cluster snapshot of cluster prod"), "{}", browser.body_text().await);
    eventually(60, "the snapshot to be taken", async || {
        browser.goto(&format!("{}{operation}", t.base)).await;
        browser.text("#operation-summary").await.contains("succeeded")
    })
    .await;
    assert!(!browser.exists("#cancel-title").await, "a finished operation offers no cancel");
    browser.check("snapshot-operation").await;
    browser.goto(&format!("{cluster}/snapshots")).await;
    assert!(browser.body_text().await.contains("on request"), "{}", browser.body_text().await);
    browser.check("snapshots").await;

    // The spec history says what a change changed.
    let window =
        json!({ "spec": { "maintenance_window": { "day": "sunday", "start_time": "03:00", "duration_hours": 4 } } });
    let (status, body) =
        t.send(t.request(reqwest::Method::PATCH, "/v1/projects/shop/clusters/prod", token).json(&window)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    browser.goto(&format!("{cluster}/revisions")).await;
    browser.click("a[href$='revisions?generation=2']").await;
    let diff = browser.text("section.plan").await;
    assert!(diff.contains("What generation 2 changed from 1") && diff.contains("/maintenance_window"), "{diff}");
    browser.check("revisions").await;

    // Settings: a malformed exclusion and a CIDR with host bits are refused at their fields.
    browser.goto(&format!("{cluster}/settings")).await;
    assert_eq!(browser.source_value("#field-window_start").await, "03:00", "the window as it is");
    browser.fill("#field-exclusions", "freeze 2027-01-04").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.text("#field-exclusions-error").await.contains("first day and the last day"));
    browser.fill("#field-exclusions", "freeze 2027-01-04 2027-01-08").await;
    browser.click("#field-firewall").await;
    browser.fill("#field-allowed_addresses", "10.0.0.1/8").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.exists("#field-allowed_addresses[aria-invalid=true]").await, "{}", browser.body_text().await);
    browser.check("settings-refused").await;
    browser.fill("#field-allowed_addresses", "10.0.0.0/8").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.path().await.starts_with("/operations/op_"), "{}", browser.body_text().await);
    let (_, now) = t.get("/v1/projects/shop/clusters/prod", token).await;
    assert_eq!(now["spec"]["maintenance_exclusions"][0]["name"], "freeze", "{now}");
    assert_eq!(now["spec"]["control_plane_firewall"]["allowed_addresses"], json!(["10.0.0.0/8"]), "{now}");
    assert_eq!(now["spec"]["maintenance_window"]["day"], "sunday", "kept: {now}");
    // A form shown before a colleague's change does not undo it.
    browser.goto(&format!("{cluster}/settings")).await;
    let theirs = json!({ "spec": { "maintenance_exclusions": [] } });
    let (status, body) =
        t.send(t.request(reqwest::Method::PATCH, "/v1/projects/shop/clusters/prod", token).json(&theirs)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    browser.submit("main form button[type=submit]").await;
    assert!(browser.body_text().await.contains("Someone changed this cluster"), "{}", browser.body_text().await);
    assert_eq!(browser.source_value("#field-exclusions").await, "", "shown as it now is");
    let (_, now) = t.get("/v1/projects/shop/clusters/prod", token).await;
    assert_eq!(now["spec"]["maintenance_exclusions"], json!([]), "{now}");

    // How the pool replaces nodes: not both limits 0 (refused at the field), then a faster one.
    browser.goto(&format!("{cluster}/node-pools/workers")).await;
    browser.fill("#field-max_surge", "0").await;
    browser.fill("#field-max_unavailable", "0").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.exists("#field-max_unavailable[aria-invalid=true]").await, "{}", browser.body_text().await);
    browser.fill("#field-max_surge", "2").await;
    browser.fill("#field-max_unavailable", "1").await;
    browser.submit("main form button[type=submit]").await;
    let (_, pool) = t.get("/v1/projects/shop/clusters/prod/node-pools/workers", token).await;
    assert_eq!(pool["spec"]["upgrade_policy"], json!({ "max_surge": 2, "max_unavailable": 1 }), "{pool}");

    // One node replaced from the pool's page; unconfirmed first.
    browser.goto(&format!("{cluster}/node-pools/workers")).await;
    let chosen = browser
        .execute("const s = document.querySelector('#field-nodes'); s.value = s.options[1].value; return s.value;")
        .await;
    assert!(chosen.as_str().is_some_and(|node| !node.is_empty() && node != "all"), "{chosen}");
    browser.execute("document.querySelector('#field-recycle_confirm').removeAttribute('required')").await;
    browser.submit("main form button.secondary").await;
    assert!(browser.text("#field-recycle_confirm-error").await.contains("Confirm"), "{}", browser.body_text().await);
    assert_eq!(browser.source_value("#field-nodes").await, chosen.as_str().unwrap(), "the choice is kept");
    browser.check("recycle-refused").await;
    browser.click("#field-recycle_confirm").await;
    browser.submit("main form button.secondary").await;
    let recycle = browser.path().await;
    assert!(recycle.starts_with("/operations/op_"), "{recycle}");
    assert!(browser.body_text().await.contains("node pool recycle of node pool workers"));
    browser.check("recycle-operation").await;

    // The change policy, written on its page: a registry path without its '/' is refused at its
    // field, with the rules as they were ticked; then saved as version 1.
    browser.goto(&format!("{}/org/policy", t.base)).await;
    assert!(browser.body_text().await.contains("No policy yet"), "{}", browser.body_text().await);
    browser.click("#field-rule_cluster_delete").await;
    browser.fill("#field-allowed_image_prefixes", "registry.example.com").await;
    browser.submit("main form button[type=submit]").await;
    assert!(browser.exists("#field-allowed_image_prefixes[aria-invalid=true]").await, "{}", browser.body_text().await);
    assert!(browser.exists("#field-rule_cluster_delete:checked").await, "the ticked rule is kept");
    browser.check("policy-refused").await;
    browser.fill("#field-allowed_image_prefixes", "").await;
    browser.submit("main form button[type=submit]").await;
    let page = browser.body_text().await;
    assert!(page.contains("The new version is saved.") && page.contains("cluster delete"), "{page}");
    browser.check("policy").await;
    let (_, policy) = t.get(&format!("/v1/orgs/{org}/policy"), token).await;
    assert_eq!(policy["in_force"]["approvals"]["required_for"], json!(["cluster_delete"]), "{policy}");

    // A delete the policy holds is withdrawn from its Operation's page.
    let (status, held) = t.send(t.request(reqwest::Method::DELETE, "/v1/projects/shop/clusters/prod", token)).await;
    assert_eq!((status, held["status"].as_str()), (StatusCode::ACCEPTED, Some("awaiting_approval")), "{held}");
    let held = held["id"].as_str().unwrap().to_string();
    browser.goto(&format!("{}/operations/{held}/approval", t.base)).await;
    browser.click(&format!("main a[href='/operations/{held}']")).await;
    assert_eq!(browser.text("#cancel-title").await, "Withdraw");
    browser.click("#field-confirm").await;
    browser.submit("main form button.danger").await;
    assert!(browser.body_text().await.contains("The operation was cancelled."), "{}", browser.body_text().await);
    assert!(browser.text("#operation-summary").await.contains("cancelled"));
    browser.check("withdrawn").await;
    let (_, cluster_now) = t.get("/v1/projects/shop/clusters/prod", token).await;
    assert!(cluster_now["deletion_requested_at"].is_null(), "{cluster_now}");

    // A restore is confirmed by the cluster's name, of a snapshot the cluster keeps.
    browser.goto(&format!("{cluster}/snapshots/prod-etcd-20200101t000000z-1/restore")).await;
    assert!(browser.body_text().await.contains("Not found"), "{}", browser.body_text().await);
    browser.check_not_found("restore-unknown").await;
    browser.goto(&format!("{cluster}/snapshots")).await;
    browser.click("main a[aria-label^='Restore']").await;
    browser.check("restore").await;
    browser.fill("#field-confirm", "staging").await;
    browser.submit("main form button.danger").await;
    assert!(browser.text("#field-confirm-error").await.contains("exactly"), "{}", browser.body_text().await);
    browser.fill("#field-confirm", "prod").await;
    browser.submit("main form button.danger").await;
    let restore = browser.path().await;
    assert!(restore.starts_with("/operations/op_"), "{restore}: {}", browser.body_text().await);
    assert!(browser.body_text().await.contains("cluster restore of cluster prod"), "{}", browser.body_text().await);
    browser.check("restore-operation").await;
    browser.close().await;
}
