//! The HTML shell, the routes, and the frame around signed-in pages (the
//! header with the organization switcher and sign-out).

use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{SsrMode, path};
use moke_sdk::types;

use crate::pages::{
    access, account, approvals, billing, cicd, clusters, lifecycle, node_pools, org, policy, projects, service_account,
    sso, sso_signin, webhooks, workloads,
};
use crate::session::request_session;
use crate::ui::{Csrf, error_view};

/// Every console page's Content-Security-Policy: no scripts at all, styles
/// and images from Moke only, forms post only to Moke, no framing.
pub(crate) const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
                              frame-ancestors 'none'; base-uri 'none'";

/// The Content-Security-Policy of pages when the console has its script:
/// as [`CSP`], and Moke's own script, compiling its WebAssembly module and
/// fetching from Moke.
pub(crate) const CSP_WITH_SCRIPT: &str = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; \
                                          connect-src 'self'; style-src 'self'; img-src 'self' data:; \
                                          form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Whether this console serves its script.
fn has_script() -> bool {
    use_context::<std::sync::Arc<crate::Console>>().is_some_and(|console| console.script.is_some())
}

/// The page for a path that is no page.
pub(crate) const NOT_FOUND_PAGE: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Not found · Moke</title>\
<link rel=\"stylesheet\" href=\"/assets/console.css\"><link rel=\"icon\" href=\"/assets/favicon.svg\" type=\"image/svg+xml\"></head><body><main class=\"narrow\">\
<section class=\"error-page\" role=\"alert\"><h1>Not found</h1><p>There is no page here.</p>\
<p><a href=\"/projects\">Go to your projects</a></p></section></main></body></html>";

/// The document around every page.
pub(crate) fn shell(_options: leptos::config::LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="stylesheet" href="/assets/console.css"/>
                <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml"/>
                {has_script().then(|| view! {
                    <meta name="moke-page-token" content=request_session().page_token()/>
                    <script type="module" src="/assets/console.js"></script>
                })}
                <MetaTags/>
            </head>
            <body>
                <App/>
                // What the script announces (a copy, a new price, a change finished).
                {has_script().then(|| view! { <div id="announcer" class="visually-hidden" role="status" aria-live="polite"></div> })}
            </body>
        </html>
    }
}

/// The console's pages. Every route renders with `SsrMode::Async`: the
/// whole page, data included, before the first byte, so that a browser
/// without JavaScript gets it all.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        let csp = if has_script() { CSP_WITH_SCRIPT } else { CSP };
        response.insert_header(http::header::CONTENT_SECURITY_POLICY, http::HeaderValue::from_static(csp));
        response.insert_header(http::header::REFERRER_POLICY, http::HeaderValue::from_static("same-origin"));
        // A window another page of this origin opens onto the console is
        // cut off from its opener (the API docs load third-party scripts).
        response.insert_header(
            http::HeaderName::from_static("cross-origin-opener-policy"),
            http::HeaderValue::from_static("same-origin"),
        );
    }
    view! {
        <Title formatter=|title: String| format!("{title} · Moke")/>
        <Router>
            <Routes fallback=NotFound>
                <Route path=path!("/") view=Home ssr=SsrMode::Async/>
                <Route path=path!("/signin") view=account::SignIn ssr=SsrMode::Async/>
                <Route path=path!("/signin/sso") view=sso_signin::SsoSignIn ssr=SsrMode::Async/>
                <Route path=path!("/signin/sso/continue") view=sso_signin::SsoContinue ssr=SsrMode::Async/>
                <Route path=path!("/sso/link") view=sso_signin::SsoLink ssr=SsrMode::Async/>
                <Route path=path!("/signup") view=account::SignUp ssr=SsrMode::Async/>
                <Route path=path!("/signup/confirm") view=account::SignUpConfirm ssr=SsrMode::Async/>
                <Route path=path!("/verify-email") view=account::VerifyEmail ssr=SsrMode::Async/>
                <Route path=path!("/reset-password") view=account::ResetPassword ssr=SsrMode::Async/>
                <Route path=path!("/device") view=account::Device ssr=SsrMode::Async/>
                <Route path=path!("/projects") view=projects::Projects ssr=SsrMode::Async/>
                <Route path=path!("/operations/:operation") view=lifecycle::Operation ssr=SsrMode::Async/>
                <Route path=path!("/operations/:operation/approval") view=approvals::OperationApproval ssr=SsrMode::Async/>
                <Route path=path!("/org/members") view=org::Members ssr=SsrMode::Async/>
                <Route path=path!("/org/service-accounts") view=org::ServiceAccounts ssr=SsrMode::Async/>
                <Route path=path!("/org/service-accounts/:service_account") view=service_account::ServiceAccount ssr=SsrMode::Async/>
                <Route path=path!("/org/tokens") view=org::Tokens ssr=SsrMode::Async/>
                <Route path=path!("/org/quotas") view=org::Quotas ssr=SsrMode::Async/>
                <Route path=path!("/org/billing") view=billing::Billing ssr=SsrMode::Async/>
                <Route path=path!("/org/billing/invoices/:invoice") view=billing::Invoice ssr=SsrMode::Async/>
                <Route path=path!("/org/sso") view=sso::Sso ssr=SsrMode::Async/>
                <Route path=path!("/org/audit") view=org::Audit ssr=SsrMode::Async/>
                <Route path=path!("/org/policy") view=policy::OrgPolicy ssr=SsrMode::Async/>
                <Route path=path!("/org/webhooks") view=webhooks::Webhooks ssr=SsrMode::Async/>
                <Route path=path!("/org/webhooks/:endpoint") view=webhooks::WebhookDeliveries ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project") view=projects::Project ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project/settings") view=projects::ProjectSettings ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project/hooks") view=cicd::Hooks ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project/access") view=access::ProjectAccess ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project/clusters/new") view=clusters::ClusterNew ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project/clusters/:cluster") view=clusters::Cluster ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project/clusters/:cluster/node-pools/new") view=node_pools::NodePoolNew ssr=SsrMode::Async/>
                <Route path=path!("/projects/:project/clusters/:cluster/node-pools/:node_pool") view=node_pools::NodePool ssr=SsrMode::Async/>
                <Route
                    path=path!("/projects/:project/clusters/:cluster/kubeconfig")
                    view=clusters::Kubeconfig
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/workloads")
                    view=workloads::Workloads
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/namespaces/:namespace/deployments/:deployment")
                    view=workloads::Deployment
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/delete")
                    view=clusters::ClusterDelete
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/upgrade")
                    view=clusters::ClusterUpgrade
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/events")
                    view=clusters::ClusterEvents
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/snapshots")
                    view=lifecycle::ClusterSnapshots
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/snapshots/:snapshot/restore")
                    view=lifecycle::ClusterSnapshotRestore
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/settings")
                    view=lifecycle::ClusterSettings
                    ssr=SsrMode::Async
                />
                <Route
                    path=path!("/projects/:project/clusters/:cluster/revisions")
                    view=lifecycle::ClusterRevisions
                    ssr=SsrMode::Async
                />
            </Routes>
        </Router>
    }
}

/// `/`: the projects when signed in, else sign-in.
#[component]
fn Home() -> impl IntoView {
    let session = request_session();
    if session.signed_in() { session.redirect("/projects") } else { session.redirect("/signin") }
}

#[component]
fn NotFound() -> impl IntoView {
    let session = request_session();
    session.set_status(404);
    view! {
        <Title text="Not found"/>
        <main class="narrow">
            <section class="error-page" role="alert">
                <h1>"Not found"</h1>
                <p>"There is no page here."</p>
                <p><a href="/projects">"Go to your projects"</a></p>
            </section>
        </main>
    }
}

/// The frame of a signed-in page: header (organization switcher, the
/// person, sign-out), breadcrumbs, then the page, which shows its own `<h1>`
/// once its data is there (an error page shows only the error's). Signed
/// out: to sign-in.
#[component]
pub(crate) fn Frame(
    /// The page's title (also the document title).
    #[prop(into)]
    title: String,
    /// Where the page sits: (label, link) pairs above the title.
    #[prop(optional)]
    crumbs: Vec<(String, String)>,
    children: Children,
) -> impl IntoView {
    let session = request_session();
    if !session.signed_in() {
        session.redirect_to_sign_in();
    }
    let header = {
        let session = session.clone();
        Suspend::new(async move {
            let me = match session.api().await {
                Ok(api) => api.me_view().send().await.map(|me| me.into_inner()).map_err(Into::into),
                Err(error) => Err(error),
            };
            match me {
                Ok(me) => view! { <Header me=me/> }.into_any(),
                Err(error) if error.status == 401 => error_view(&session, error),
                // The page itself will show what went wrong.
                Err(_) => {
                    view! { <header class="top"><a class="brand" href="/projects">"Moke"</a></header> }.into_any()
                }
            }
        })
    };
    view! {
        <Title text=title.clone()/>
        <a class="skip" href="#main">"Skip to content"</a>
        <Suspense fallback=|| ()>{header}</Suspense>
        <main id="main">
            {(!crumbs.is_empty()).then(|| view! {
                <nav class="crumbs" aria-label="Breadcrumbs">
                    <ol>
                        {crumbs.into_iter().map(|(label, href)| view! { <li><a href=href>{label}</a></li> }).collect_view()}
                    </ol>
                </nav>
            })}
            {children()}
        </main>
    }
}

/// The header: brand, organization switcher, the person, sign-out.
#[component]
fn Header(me: types::MeView) -> impl IntoView {
    let switch = ServerAction::<account::OrgSwitch>::new();
    let sign_out = ServerAction::<account::SignOut>::new();
    let current = me.organization.to_string();
    let who = me.user.as_ref().map(|user| user.email.clone()).unwrap_or_else(|| me.id.clone());
    let several = me.memberships.len() > 1;
    let current_name = me
        .memberships
        .iter()
        .find(|m| m.organization.to_string() == current)
        .map(|m| m.organization_name.clone())
        .unwrap_or_default();
    view! {
        <header class="top">
            <a class="brand" href="/projects">"Moke"</a>
            <nav class="primary" aria-label="Main">
                <a href="/projects">"Projects"</a>
                <a href="/org/members">"Organization"</a>
            </nav>
            <div class="org">
                {if several {
                    view! {
                        <ActionForm action=switch>
                            <Csrf/>
                            <label for="org-switch" class="visually-hidden">"Organization"</label>
                            <select id="org-switch" name="organization">
                                {me.memberships.iter().map(|m| {
                                    let id = m.organization.to_string();
                                    let selected = id == current;
                                    view! { <option value=id selected=selected>{m.organization_name.clone()}</option> }
                                }).collect_view()}
                            </select>
                            <button type="submit" class="secondary">"Switch"</button>
                        </ActionForm>
                    }.into_any()
                } else {
                    view! { <span class="org-name" title="Organization">{current_name}</span> }.into_any()
                }}
            </div>
            <div class="me">
                <span class="who">{who}</span>
                <ActionForm action=sign_out>
                    <Csrf/>
                    <button type="submit" class="link">"Sign out"</button>
                </ActionForm>
            </div>
        </header>
    }
}
