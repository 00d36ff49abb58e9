//! The test harness: a gateway on an ephemeral port over the test's database,
//! tenants with owner tokens, small untyped request helpers, and a typed
//! client ([`TestApp::client`]) that answers in the app's own view types
//! and reads refusals as [`Problem`]s.

use std::sync::Arc;

use moke_api::app::App;
use moke_api::config::Config;
use moke_api::model::{
    ClusterView, DeploymentView, NodePoolView, OperationView, ProjectMemberView, ProjectView, ServiceAccountView,
    ServiceView, SessionTokens, SignupResponse, TokenCreated,
};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio::sync::oneshot;

/// The password of people made by [`TestApp::member`].
pub const MEMBER_PASSWORD: &str = "violet kettle orbit 42";

/// A running gateway.
pub struct TestApp {
    pub base: String,
    pub app: Arc<App>,
    pub pool: PgPool,
    pub client: reqwest::Client,
    /// Where this gateway's mail arrives (`mail.sender = "file"`).
    pub mail_dir: std::path::PathBuf,
    stop: Option<oneshot::Sender<()>>,
}

/// An organization with an owner token.
#[derive(Clone)]
pub struct Tenant {
    pub org: String,
    pub token: String,
}

impl TestApp {
    /// Starts a gateway with the default configuration on the test database.
    pub async fn start(options: PgPoolOptions, connect: PgConnectOptions) -> TestApp {
        Self::start_with(options, connect, |_| {}).await
    }

    pub async fn start_with(
        options: PgPoolOptions,
        connect: PgConnectOptions,
        configure: impl FnOnce(&mut Config),
    ) -> TestApp {
        // Not `options`: sqlx::test makes them a child of its shared pool,
        // which may not be raised past that pool's size (sqlx asserts it),
        // and the concurrency tests need 40 connections. Same database.
        let _ = options;
        let pool = PgPoolOptions::new().max_connections(40).connect_with(connect.clone()).await.expect("test database");
        let mut config = Config::defaults();
        // Each test's gateways share keys under the test database's own path of the test Vault.
        config.vault.kv_path = format!("moke-test-{}", connect.get_database().unwrap_or("default"));
        // Tests drive one principal far faster than a person would; the rate
        // limit tests set their own limits.
        let limits = &mut config.rate_limits;
        (limits.per_principal_per_second, limits.per_principal_burst) = (1_000_000, 1_000_000);
        (limits.per_ip_per_second, limits.per_ip_burst, limits.login_burst) = (1_000_000, 1_000_000, 1_000);
        // Mail lands in files this test reads; identity providers and
        // webhook receivers of the tests live on loopback, which the
        // outbound guard refuses unless told otherwise.
        let mail_dir = std::env::temp_dir().join(format!("moke-test-mail-{}", unique()));
        config.mail.sender = "file".into();
        config.mail.file_dir = mail_dir.display().to_string();
        config.outbound.allow_private_targets = vec!["127.0.0.1/32".into()];
        // The console's script, as `cargo xtask test` built it.
        config.http.console_script_dir = std::env::var("MOKE_HTTP__CONSOLE_SCRIPT_DIR").unwrap_or_default();
        configure(&mut config);
        let vault = moke_api::vault::Vault::connect(&config)
            .await
            .expect("the test Vault (cargo xtask test provisions one; see MOKE_VAULT__*)");
        let app = App::new(pool.clone(), Arc::new(config), vault);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(moke_api::server::serve(app.clone(), listener, async move {
            let _ = stopped.await;
        }));
        moke_api::install_crypto_provider();
        TestApp { base, app, pool, client: reqwest::Client::new(), mail_dir, stop: Some(stop) }
    }

    /// The mails of `kind` sent to `to` so far, oldest first (each the full message text).
    pub fn mails(&self, kind: &str, to: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.mail_dir) else { return Vec::new() };
        let mut names: Vec<_> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "eml"))
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(&format!("-{kind}.eml"))))
            .collect();
        names.sort();
        names
            .into_iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter(|text| text.lines().any(|line| line.eq_ignore_ascii_case(&format!("To: {to}"))))
            .collect()
    }

    /// Waits for the newest mail of `kind` to `to` and returns the token its link carries.
    pub async fn mailed_token(&self, kind: &str, to: &str) -> String {
        let mut body = String::new();
        eventually(15, &format!("a {kind} mail to {to}"), async || {
            body = self.mails(kind, to).pop().unwrap_or_default();
            !body.is_empty()
        })
        .await;
        let start = body.find("token=").expect("a link with a token") + "token=".len();
        body[start..].chars().take_while(char::is_ascii_alphanumeric).collect()
    }

    /// A person who signs up, confirms the mailed link, and is signed in:
    /// the sign-up answer (user, organization, session).
    pub async fn sign_up(&self, email: &str, password: &str, org: &str) -> Value {
        let (status, body) = self
            .post_public(
                "/v1/signup",
                json!({ "email": email, "password": password, "display_name": "Ada", "organization_name": org }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let token = self.mailed_token("signup", &email.trim().to_lowercase()).await;
        let (status, made) =
            self.post_public("/v1/signup/confirm", json!({ "token": token, "password": password })).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        made
    }

    /// [`TestApp::sign_up`], read as the sign-up answer.
    pub async fn signed_up(&self, email: &str, password: &str, org: &str) -> SignupResponse {
        let made = self.sign_up(email, password, org).await;
        serde_json::from_value(made.clone()).unwrap_or_else(|e| panic!("not a sign-up answer ({e}): {made}"))
    }

    /// [`TestApp::login`], read as the session it opens.
    pub async fn session(&self, email: &str, password: &str, org: Option<&str>) -> SessionTokens {
        let session = self.login(email, password, org).await;
        serde_json::from_value(session.clone()).unwrap_or_else(|e| panic!("not a session ({e}): {session}"))
    }

    /// A new organization with an owner token.
    pub async fn tenant(&self, name: &str) -> Tenant {
        let made = self.app.bootstrap_org(name, name).await.expect("bootstrap");
        Tenant { org: made.org.id.to_string(), token: made.owner_token.token }
    }

    pub fn request(&self, method: Method, path: &str, token: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base)).bearer_auth(token)
    }

    /// Sends and returns status and JSON body (Null when empty).
    pub async fn send(&self, request: RequestBuilder) -> (StatusCode, Value) {
        let response = request.send().await.expect("request");
        let status = response.status();
        let text = response.text().await.unwrap();
        let body =
            if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) };
        (status, body)
    }

    pub async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::GET, path, token)).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::POST, path, token).json(&body)).await
    }

    pub async fn patch(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::PATCH, path, token).json(&body)).await
    }

    pub async fn delete(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::DELETE, path, token)).await
    }

    /// Creates a project and returns its id.
    pub async fn project(&self, tenant: &Tenant, name: &str) -> String {
        let (status, body) =
            self.post(&format!("/v1/orgs/{}/projects", tenant.org), &tenant.token, json!({ "name": name })).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Creates a cluster and returns (cluster id, operation).
    pub async fn cluster(&self, tenant: &Tenant, project: &str, name: &str) -> (String, Value) {
        let (status, op) = self
            .post(
                &format!("/v1/projects/{project}/clusters"),
                &tenant.token,
                json!({ "name": name, "spec": { "region": "eu-central-1" } }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{op}");
        (op["target"]["id"].as_str().unwrap().to_string(), op)
    }

    /// Creates a node pool and returns (node pool id, operation).
    pub async fn node_pool(
        &self,
        tenant: &Tenant,
        project: &str,
        cluster: &str,
        name: &str,
        count: i64,
    ) -> (String, Value) {
        let (status, op) = self
            .post(
                &format!("/v1/projects/{project}/clusters/{cluster}/node-pools"),
                &tenant.token,
                json!({ "name": name, "spec": { "machine_type": "bm.small", "count": count } }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{op}");
        (op["target"]["id"].as_str().unwrap().to_string(), op)
    }

    /// A person added to `tenant` as a member with `role` and signed in
    /// there: (user id, access token).
    pub async fn member(&self, tenant: &Tenant, email: &str, role: &str) -> (String, String) {
        static HASH: std::sync::LazyLock<String> =
            std::sync::LazyLock::new(|| moke_iam::password::hash(MEMBER_PASSWORD));
        let user = moke_api::ids::UserId::generate();
        let org: moke_api::ids::OrgId = tenant.org.parse().unwrap();
        sqlx::query("INSERT INTO users (id, email, display_name, password_hash, email_verified_at) VALUES ($1, $2, $2, $3, now())")
            .bind(user.uuid())
            .bind(email)
            .bind(&*HASH)
            .execute(&self.pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)")
            .bind(org.uuid())
            .bind(user.uuid())
            .bind(role)
            .execute(&self.pool)
            .await
            .unwrap();
        let session = self.login(email, MEMBER_PASSWORD, Some(&tenant.org)).await;
        (user.to_string(), session["access_token"].as_str().unwrap().to_string())
    }

    /// Signs in and returns the session (panics on failure).
    pub async fn login(&self, email: &str, password: &str, org: Option<&str>) -> Value {
        let (status, session) = self
            .send(
                self.client
                    .post(format!("{}/v1/auth/login", self.base))
                    .json(&json!({ "email": email, "password": password, "organization": org })),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{session}");
        session
    }

    /// An unauthenticated JSON POST.
    pub async fn post_public(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.client.post(format!("{}{path}", self.base)).json(&body)).await
    }

    /// Reports, as region `eu-central-1` would, that `cluster` ran its
    /// control plane and the node `node` of `pool` (if given) over
    /// `[start, end)`; returns the id (`bill_…`) of the invoice it landed on.
    pub async fn report_usage(
        &self,
        cluster: &str,
        pool: Option<&str>,
        node: &str,
        start: chrono::DateTime<chrono::Utc>,
        end: chrono::DateTime<chrono::Utc>,
    ) -> String {
        let sample = format!("{}/{node}", end.timestamp_millis());
        self.report_usage_as(cluster, pool, node, start, end, &sample)
            .await
            .unwrap_or_else(|| panic!("usage of {cluster} over {start}..{end} was not recorded"))
    }

    /// [`TestApp::report_usage`] as sample `sample` (its id within the
    /// cluster); the invoice the control plane's usage landed on, if it did.
    pub async fn report_usage_as(
        &self,
        cluster: &str,
        pool: Option<&str>,
        node: &str,
        start: chrono::DateTime<chrono::Utc>,
        end: chrono::DateTime<chrono::Utc>,
        sample: &str,
    ) -> Option<String> {
        use moke_proto::region as pb;
        let milliseconds = (end - start).num_milliseconds();
        let nodes = pool
            .map(|pool| pb::NodeUsage {
                name: node.into(),
                node_pool_id: pool.into(),
                machine_type: "bm.small".into(),
                milliseconds,
            })
            .into_iter()
            .collect();
        let usage = pb::UsageSample {
            id: format!("{cluster}/{sample}"),
            cluster_id: cluster.into(),
            period_start: start.to_rfc3339(),
            period_end: end.to_rfc3339(),
            cluster_seconds: milliseconds as f64 / 1000.0,
            node_seconds: Default::default(),
            control_plane_replicas: 1,
            nodes,
        };
        let status = pb::Status { region: "eu-central-1".into(), message: Some(pb::status::Message::Usage(usage)) };
        self.app.apply_region_status(status).await.unwrap();
        let cluster: moke_api::ids::ClusterId = cluster.parse().unwrap();
        let invoice: Option<uuid::Uuid> = sqlx::query_scalar(
            "SELECT invoice_id FROM usage_records WHERE resource_id = $1 AND period_start = $2 AND sample_id LIKE '%/' || $3",
        )
        .bind(cluster.uuid())
        .bind(start)
        .bind(sample)
        .fetch_optional(&self.pool)
        .await
        .unwrap();
        invoice.map(|id| moke_api::ids::InvoiceId::from_uuid(id).to_string())
    }

    /// Rows in a table (for integrity checks).
    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(&format!("SELECT count(*) FROM {table}")).fetch_one(&self.pool).await.unwrap()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = std::fs::remove_dir_all(&self.mail_dir);
    }
}

// ---------------------------------------------------------------- typed client

/// A refusal as the gateway sends it: RFC 9457 problem+json (the shape of
/// `moke_api::http::problem::Problem`), so tests compare codes and fields
/// instead of poking at JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// `https://docs.moke.dev/problems/{code}`.
    #[serde(rename = "type")]
    pub problem_type: String,
    /// The status's reason phrase, e.g. `Not Found`.
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// The stable machine code, e.g. `invalid_request`, `not_found`, `forbidden`.
    pub code: String,
    /// Every bad field of an `invalid_request`, in the server's order (absent otherwise).
    #[serde(default)]
    pub errors: Vec<FieldError>,
}

/// One bad field of a [`Problem`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// Dotted path in the request, e.g. `spec.zones[2]`.
    pub field: String,
    pub code: String,
    pub message: String,
}

impl Problem {
    /// The names of the bad fields, in the server's order.
    pub fn fields(&self) -> Vec<&str> {
        self.errors.iter().map(|e| e.field.as_str()).collect()
    }

    /// The code of the error on `field`; panics when the problem does not name it.
    pub fn code_of(&self, field: &str) -> &str {
        let error = self.errors.iter().find(|e| e.field == field);
        &error.unwrap_or_else(|| panic!("no error on {field} in {self:?}")).code
    }
}

/// What the gateway answered to one typed call: the status, the headers and
/// the JSON body (Null when empty), read as the view `T` it promises on
/// success, or as a [`Problem`] on refusal. Every check panics with the
/// request and the whole answer.
pub struct Answer<T> {
    /// `METHOD path`, for failure messages.
    pub request: String,
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    view: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Answer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} answered {}: {}", self.request, self.status, self.body)
    }
}

impl<T: DeserializeOwned> Answer<T> {
    /// The view, after checking the status is exactly `expected`.
    #[track_caller]
    pub fn expect(&self, expected: StatusCode) -> T {
        assert_eq!(self.status, expected, "{self:?}");
        self.view()
    }

    /// The view of any success (2xx).
    #[track_caller]
    pub fn ok(&self) -> T {
        assert!(self.status.is_success(), "{self:?}");
        self.view()
    }

    /// The problem, after checking the answer is a refusal with `expected` status.
    #[track_caller]
    pub fn refused(&self, expected: StatusCode) -> Problem {
        assert_eq!(self.status, expected, "{self:?}");
        let problem: Problem =
            serde_json::from_value(self.body.clone()).unwrap_or_else(|e| panic!("not problem+json ({e}): {self:?}"));
        assert_eq!(problem.status, expected.as_u16(), "the problem's status is the answer's: {self:?}");
        problem
    }

    /// The problem, after checking its status and machine code.
    #[track_caller]
    pub fn refused_with(&self, expected: StatusCode, code: &str) -> Problem {
        let problem = self.refused(expected);
        assert_eq!(problem.code, code, "{self:?}");
        problem
    }

    /// The machine code of a refusal, if this answer is one (for polling
    /// until a refusal starts, where a success is not yet a failure).
    pub fn code(&self) -> Option<String> {
        if self.status.is_success() {
            return None;
        }
        serde_json::from_value::<Problem>(self.body.clone()).ok().map(|problem| problem.code)
    }

    /// The same answer, its failure messages starting with `what` (what the
    /// request stands for in the test).
    pub fn about(mut self, what: impl std::fmt::Display) -> Self {
        self.request = format!("{what}: {}", self.request);
        self
    }

    #[track_caller]
    fn view(&self) -> T {
        serde_json::from_value(self.body.clone())
            .unwrap_or_else(|e| panic!("not a {} ({e}): {self:?}", std::any::type_name::<T>()))
    }
}

/// A caller of the REST API holding one credential in one organization,
/// speaking in the app's own view types (`moke_api::model::*View`).
#[derive(Clone)]
pub struct Client<'a> {
    t: &'a TestApp,
    /// The organization's id (`org_…`), for `/v1/orgs/{org}/…` paths.
    pub org: String,
    pub token: String,
}

impl TestApp {
    /// The owner of `tenant`, as a typed client.
    pub fn client(&self, tenant: &Tenant) -> Client<'_> {
        Client { t: self, org: tenant.org.clone(), token: tenant.token.clone() }
    }

    /// A caller without a credential (sign-up, sign-in, mailed links), as a
    /// typed client; it names no organization.
    pub fn anonymous(&self) -> Client<'_> {
        Client { t: self, org: String::new(), token: String::new() }
    }
}

impl<'a> Client<'a> {
    /// The same organization with another credential (a member's session,
    /// a scoped or service-account token).
    pub fn with_token(&self, token: &str) -> Client<'a> {
        Client { t: self.t, org: self.org.clone(), token: token.to_string() }
    }

    /// `/v1/orgs/{org}` followed by `rest`.
    pub fn org_path(&self, rest: &str) -> String {
        format!("/v1/orgs/{}{rest}", self.org)
    }

    /// A request with this client's credential, for headers the typed calls do not set.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        if self.token.is_empty() {
            return self.t.client.request(method, format!("{}{path}", self.t.base));
        }
        self.t.request(method, path, &self.token)
    }

    /// Sends `request` (made by [`Client::request`]) and reads the answer.
    pub async fn send<T>(&self, request: RequestBuilder) -> Answer<T> {
        let described = request
            .try_clone()
            .and_then(|r| r.build().ok())
            .map(|r| format!("{} {}", r.method(), r.url().path()))
            .unwrap_or_default();
        let response = request.send().await.expect("request");
        let (status, headers) = (response.status(), response.headers().clone());
        let text = response.text().await.unwrap();
        let body =
            if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) };
        Answer { request: described, status, headers, body, view: std::marker::PhantomData }
    }

    /// Any method, with an optional JSON body.
    pub async fn call<T>(&self, method: Method, path: &str, body: Option<&Value>) -> Answer<T> {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(body);
        }
        self.send(request).await
    }

    pub async fn get<T>(&self, path: &str) -> Answer<T> {
        self.call(Method::GET, path, None).await
    }

    pub async fn post<T>(&self, path: &str, body: Value) -> Answer<T> {
        self.call(Method::POST, path, Some(&body)).await
    }

    pub async fn put<T>(&self, path: &str, body: Value) -> Answer<T> {
        self.call(Method::PUT, path, Some(&body)).await
    }

    pub async fn patch<T>(&self, path: &str, body: Value) -> Answer<T> {
        self.call(Method::PATCH, path, Some(&body)).await
    }

    pub async fn delete<T>(&self, path: &str) -> Answer<T> {
        self.call(Method::DELETE, path, None).await
    }

    /// Walks the list at `path` (no query string) a page of one at a time
    /// and checks it is the whole list, in the list's order, and that a
    /// garbage `page_token` is refused naming it. Returns the items.
    pub async fn walk_pages(&self, path: &str) -> Vec<Value> {
        let all: moke_api::model::Page<Value> = self.get(path).await.expect(StatusCode::OK);
        assert_eq!(all.next_page, None, "{path}: the first page of the default size holds all");
        let mut paged = Vec::new();
        let mut url = format!("{path}?limit=1");
        loop {
            let page: moke_api::model::Page<Value> = self.get(&url).await.expect(StatusCode::OK);
            assert_eq!(page.items.len(), 1, "{url}");
            paged.extend(page.items);
            match page.next_page {
                Some(token) => url = format!("{path}?limit=1&page_token={token}"),
                None => break,
            }
        }
        assert_eq!(paged, all.items, "{path}: pages of one hold the whole list, in its order");
        let problem = self.get::<Value>(&format!("{path}?page_token=garbage")).await;
        assert_eq!(problem.refused_with(StatusCode::BAD_REQUEST, "invalid_request").fields(), ["page_token"], "{path}");
        paged
    }

    /// A new project named `name` (201).
    pub async fn create_project(&self, name: &str) -> ProjectView {
        self.post(&self.org_path("/projects"), json!({ "name": name })).await.expect(StatusCode::CREATED)
    }

    /// A new cluster in `project` (id or name) with `spec` (e.g. `{ "region":
    /// "eu-central-1" }`): the cluster as read right after, and the
    /// operation the create answered with (202).
    pub async fn create_cluster(&self, project: &str, name: &str, spec: Value) -> (ClusterView, OperationView) {
        let path = format!("/v1/projects/{project}/clusters");
        let op: OperationView =
            self.post(&path, json!({ "name": name, "spec": spec })).await.expect(StatusCode::ACCEPTED);
        let cluster = self.get(&format!("{path}/{}", op.target.id)).await.expect(StatusCode::OK);
        (cluster, op)
    }

    /// A new node pool of `count` `bm.small` machines: the pool as read
    /// right after, and the create's operation (202).
    pub async fn create_node_pool(
        &self,
        project: &str,
        cluster: &str,
        name: &str,
        count: i64,
    ) -> (NodePoolView, OperationView) {
        let path = format!("/v1/projects/{project}/clusters/{cluster}/node-pools");
        let body = json!({ "name": name, "spec": { "machine_type": "bm.small", "count": count } });
        let op: OperationView = self.post(&path, body).await.expect(StatusCode::ACCEPTED);
        let pool = self.get(&format!("{path}/{}", op.target.id)).await.expect(StatusCode::OK);
        (pool, op)
    }

    /// A new deployment in the cluster's `default` namespace: the
    /// deployment as read right after, and the create's operation (202).
    pub async fn create_deployment(
        &self,
        project: &str,
        cluster: &str,
        name: &str,
        spec: Value,
    ) -> (DeploymentView, OperationView) {
        let path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments");
        let op: OperationView =
            self.post(&path, json!({ "name": name, "spec": spec })).await.expect(StatusCode::ACCEPTED);
        let deployment = self.get(&format!("{path}/{}", op.target.id)).await.expect(StatusCode::OK);
        (deployment, op)
    }

    /// A new service in the cluster's `default` namespace (201).
    pub async fn create_service(&self, project: &str, cluster: &str, name: &str, spec: Value) -> ServiceView {
        let path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/services");
        self.post(&path, json!({ "name": name, "spec": spec })).await.expect(StatusCode::CREATED)
    }

    /// A new service account with an organization `role` (201).
    pub async fn create_service_account(&self, name: &str, role: &str) -> ServiceAccountView {
        let body = json!({ "name": name, "role": role });
        self.post(&self.org_path("/service-accounts"), body).await.expect(StatusCode::CREATED)
    }

    /// A new organization API token with `role` (201); the secret is in `.token`.
    pub async fn create_token(&self, name: &str, role: &str) -> TokenCreated {
        self.post(&self.org_path("/tokens"), json!({ "name": name, "role": role })).await.expect(StatusCode::CREATED)
    }

    /// A new token of service account `account`; `limits` may narrow it
    /// (`project`, `scopes`, `expires_in_seconds`) (201).
    pub async fn create_account_token(&self, account: &str, name: &str, limits: Value) -> TokenCreated {
        let mut body = json!({ "name": name });
        if let (Some(body), Some(limits)) = (body.as_object_mut(), limits.as_object()) {
            body.extend(limits.clone());
        }
        self.post(&self.org_path(&format!("/service-accounts/{account}/tokens")), body)
            .await
            .expect(StatusCode::CREATED)
    }

    /// Gives `principal` (a user or service account id) `role` in `project` (200).
    pub async fn grant_project_role(&self, project: &str, principal: &str, role: &str) -> ProjectMemberView {
        let path = format!("/v1/projects/{project}/members/{principal}");
        self.put(&path, json!({ "role": role })).await.expect(StatusCode::OK)
    }

    /// An operation as it stands now (200).
    pub async fn operation(&self, id: impl std::fmt::Display) -> OperationView {
        self.get(&format!("/v1/operations/{id}")).await.expect(StatusCode::OK)
    }

    /// Waits (up to 30 s on the server) for `op` and checks it succeeded.
    pub async fn succeeds(&self, op: &OperationView) {
        let done: OperationView = self.get(&format!("/v1/operations/{}?wait=30s", op.id)).await.expect(StatusCode::OK);
        assert_eq!(done.status, moke_api::model::OperationStatus::Succeeded, "{done:?}");
    }
}

/// The NATS server the tests use (`cargo xtask test` provides `NATS_URL`).
pub fn nats_url() -> String {
    std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

/// A gateway on the NATS JetStream backend, under a subject prefix of its
/// own so parallel tests never meet; returns it with the prefix. Pair with
/// [`drop_nats_streams`].
pub async fn start_on_nats(
    options: PgPoolOptions,
    connect: PgConnectOptions,
    configure: impl FnOnce(&mut Config),
) -> (TestApp, String) {
    let prefix = format!("t{}", unique().replace('-', "_"));
    let t = TestApp::start_with(options, connect, |config| {
        config.queue.backend = "nats".into();
        config.queue.nats_url = moke_api::config::Secret::new(nats_url());
        config.queue.nats_prefix = prefix.clone();
        configure(config);
    })
    .await;
    (t, prefix)
}

/// Leaves the shared NATS as a test found it.
pub async fn drop_nats_streams(prefix: &str) {
    let js = async_nats::jetstream::new(async_nats::connect(nats_url()).await.unwrap());
    for region in ["eu-central-1", "us-east-1"] {
        let _ = js.delete_stream(moke_proto::subjects::command_stream(prefix, region)).await;
    }
    let _ = js.delete_stream(moke_proto::subjects::status_stream(prefix)).await;
    let _ = js.delete_stream(moke_proto::subjects::dead_letter_stream(prefix)).await;
}

/// A string no other test run uses (for file names and prefixes).
pub fn unique() -> String {
    format!(
        "{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    )
}

/// The zones of the test regions.
pub fn zones(region: &str) -> Vec<String> {
    ["a", "b", "c"].iter().map(|z| format!("{region}{z}")).collect()
}

/// A region agent working in the background, as `moke-region` does, with
/// simulated time running fast; stopped (or killed) when dropped.
pub struct BackgroundAgent {
    pub agent: Arc<moke_region::Agent>,
    task: tokio::task::JoinHandle<()>,
}

impl BackgroundAgent {
    /// Starts `config` (ticks and heartbeats sped up) on `transport`.
    pub fn start(mut config: moke_region::AgentConfig, transport: moke_region::Transport) -> BackgroundAgent {
        config.tick_interval = std::time::Duration::from_millis(50);
        config.poll_interval = std::time::Duration::from_millis(50);
        config.heartbeat_every = std::time::Duration::from_millis(200);
        let agent = Arc::new(moke_region::Agent::new(config, transport).expect("agent"));
        let running = agent.clone();
        let task = tokio::spawn(async move {
            let _ = running.run(tokio_util::sync::CancellationToken::new()).await;
        });
        BackgroundAgent { agent, task }
    }

    /// Stops the agent wherever it is, as `kill -9` would: nothing in
    /// flight is acknowledged or committed.
    pub fn kill(self) {
        self.task.abort();
    }
}

impl Drop for BackgroundAgent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Polls `done` every 50 ms for up to `seconds`, failing with `what`.
pub async fn eventually(seconds: u64, what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while !done().await {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A local HTTP server standing in for a customer's webhook endpoint: it
/// records every request and answers from a script (then 200s).
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    pub received: Arc<std::sync::Mutex<Vec<Received>>>,
}

/// One request a [`Receiver`] got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
    pub at: std::time::Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// True when the Standard Webhooks signature verifies with `secret`.
    pub fn signed_with(&self, secret: &str) -> bool {
        moke_api::app::integrations::signing::verify(
            secret,
            self.header("webhook-id"),
            self.header("webhook-timestamp"),
            self.header("webhook-signature"),
            &self.body,
            chrono::Utc::now().timestamp(),
        )
        .is_ok()
    }
}

impl Receiver {
    /// Answers each request with the next `(status, Retry-After)` of `script`, then 200.
    pub async fn start(script: Vec<(u16, Option<&'static str>)>) -> Receiver {
        use axum::response::IntoResponse;
        let received = Arc::new(std::sync::Mutex::new(Vec::<Received>::new()));
        let script = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::from(script)));
        let log = received.clone();
        let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let (log, script) = (log.clone(), script.clone());
            async move {
                log.lock().unwrap().push(Received { headers, body: body.to_vec(), at: std::time::Instant::now() });
                let (status, retry_after) = script.lock().unwrap().pop_front().unwrap_or((200, None));
                let mut response = axum::http::StatusCode::from_u16(status).unwrap().into_response();
                if let Some(seconds) = retry_after {
                    response.headers_mut().insert("retry-after", seconds.parse().unwrap());
                }
                response
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        tokio::spawn(axum::serve(listener, app).into_future());
        Receiver { url, received }
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until a request for `event_type` arrives, and returns it.
    pub async fn event(&self, event_type: &str) -> Received {
        let mut found = None;
        eventually(20, &format!("a {event_type} delivery"), async || {
            found = self.requests().into_iter().find(|r| r.json()["type"] == event_type);
            found.is_some()
        })
        .await;
        found.unwrap()
    }
}

/// The field names listed in a problem+json validation answer.
pub fn bad_fields(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .map(|errors| errors.iter().map(|e| e["field"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

/// A TCP forwarder in front of the test Vault that a test can cut, to play
/// a Vault outage after the gateway started.
pub struct VaultProxy {
    pub addr: String,
    cut: tokio_util::sync::CancellationToken,
}

impl VaultProxy {
    pub async fn start() -> VaultProxy {
        let target = std::env::var("MOKE_VAULT__ADDR").expect("MOKE_VAULT__ADDR (cargo xtask test sets it)");
        let target = target.trim_start_matches("http://").to_string();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let cut = tokio_util::sync::CancellationToken::new();
        let stop = cut.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((mut inbound, _)) = accepted else { continue };
                let target = target.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await else { return };
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    }
                });
            }
        });
        VaultProxy { addr, cut }
    }

    /// Closes every connection and refuses new ones.
    pub fn cut(&self) {
        self.cut.cancel();
    }
}

/// The redirect URI the test identity provider and gateways agree on (the
/// tests read the code from it; nothing listens there).
pub const SSO_REDIRECT: &str = "http://127.0.0.1:9/sso-callback";

/// A real OpenID Provider (`oidc-provider`, see `api/tests/oidc/server.mjs`) on loopback.
pub struct OidcProvider {
    pub issuer: String,
    child: tokio::process::Child,
    http: reqwest::Client,
}

impl OidcProvider {
    pub async fn start() -> OidcProvider {
        Self::start_with_clock_offset(0).await
    }

    /// A provider whose clock is `offset_seconds` off (negative: its tokens
    /// are issued in the past, so already expired).
    pub async fn start_with_clock_offset(offset_seconds: i64) -> OidcProvider {
        let dir =
            std::env::var("OIDC_PROVIDER_DIR").expect("OIDC_PROVIDER_DIR (cargo xtask test installs oidc-provider)");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc/server.mjs");
        let child = tokio::process::Command::new("node")
            .arg(script)
            .arg(port.to_string())
            .arg(SSO_REDIRECT)
            .env("OIDC_PROVIDER_DIR", dir)
            .env("OIDC_CLOCK_OFFSET_SECONDS", offset_seconds.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(std::env::temp_dir().join(format!("moke-oidc-{port}.log"))).unwrap())
            .kill_on_drop(true)
            .spawn()
            .expect("node");
        let issuer = format!("http://127.0.0.1:{port}");
        // Tests start their provider before their gateway (which installs it too).
        moke_api::install_crypto_provider();
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        for _ in 0..100 {
            if http.get(format!("{issuer}/.well-known/openid-configuration")).send().await.is_ok() {
                return OidcProvider { issuer, child, http };
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("the OpenID Provider did not start");
    }

    /// Signs `account` in at the provider, starting from `authorization_url`
    /// (as a browser would, without one), and returns the query of the
    /// final redirect to [`SSO_REDIRECT`]: `code`, `state`, `iss`.
    pub async fn sign_in(&self, authorization_url: &str, account: &str) -> std::collections::HashMap<String, String> {
        let mut cookies: std::collections::BTreeMap<String, String> = Default::default();
        let mut url = authorization_url.to_string();
        let mut form: Option<Vec<(&str, &str)>> = None;
        for _ in 0..12 {
            if url.starts_with(SSO_REDIRECT) {
                let parsed = reqwest::Url::parse(&url).unwrap();
                return parsed.query_pairs().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            }
            let absolute = if url.starts_with('/') { format!("{}{url}", self.issuer) } else { url.clone() };
            let cookie = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
            let request = match form.take() {
                Some(fields) => self.http.post(&absolute).form(&fields),
                None => self.http.get(&absolute),
            };
            let response = request.header("cookie", cookie).send().await.unwrap();
            for value in response.headers().get_all("set-cookie") {
                let pair = value.to_str().unwrap().split(';').next().unwrap().to_string();
                if let Some((k, v)) = pair.split_once('=') {
                    cookies.insert(k.to_string(), v.to_string());
                }
            }
            if let Some(location) = response.headers().get("location") {
                url = location.to_str().unwrap().to_string();
                continue;
            }
            // An interaction page: answer it (login first, then consent).
            let status = response.status();
            let page = response.text().await.unwrap();
            assert!(status.is_success(), "provider answered {status}: {page}");
            form = Some(if page.contains("name=\"login\"") {
                vec![("prompt", "login"), ("login", account), ("password", "any")]
            } else {
                vec![("prompt", "consent")]
            });
        }
        panic!("the provider never redirected back");
    }

    /// An ID token for `account` issued to `client` (a CI job's token).
    pub async fn id_token(&self, client: &str, account: &str) -> String {
        let verifier = "a-long-enough-pkce-code-verifier-for-the-ci-token-flow-0123456789";
        use base64::Engine;
        use sha2::Digest;
        let challenge =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
        let auth = format!(
            "{}/auth?client_id={client}&response_type=code&scope=openid%20ci&redirect_uri={}&state=s&nonce=n\
             &code_challenge={challenge}&code_challenge_method=S256",
            self.issuer,
            form_urlencoded::byte_serialize(SSO_REDIRECT.as_bytes()).collect::<String>(),
        );
        let back = self.sign_in(&auth, account).await;
        let code = back.get("code").unwrap_or_else(|| panic!("no code: {back:?}"));
        let response: Value = self
            .http
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", SSO_REDIRECT),
                ("code_verifier", verifier),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        response["id_token"].as_str().unwrap_or_else(|| panic!("no id_token: {response}")).to_string()
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// An authoritative DNS server on loopback answering TXT queries from a
/// table the test fills (the domain-ownership checks run against it).
pub struct DnsServer {
    pub addr: std::net::SocketAddr,
    records: Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<String>>>>,
}

impl DnsServer {
    pub async fn start() -> DnsServer {
        use hickory_resolver::proto::op::{Message, OpCode, ResponseCode};
        use hickory_resolver::proto::rr::rdata::TXT;
        use hickory_resolver::proto::rr::{RData, Record, RecordType};
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let records: Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<String>>>> = Default::default();
        let table = records.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            loop {
                let Ok((n, peer)) = socket.recv_from(&mut buf).await else { return };
                let Ok(query) = Message::from_vec(&buf[..n]) else { continue };
                let mut answer = Message::response(query.metadata.id, OpCode::Query);
                answer.metadata.authoritative = true;
                answer.metadata.recursion_desired = query.metadata.recursion_desired;
                let mut found = false;
                for question in &query.queries {
                    answer.add_query(question.clone());
                    let name = question.name().to_ascii().trim_end_matches('.').to_lowercase();
                    if question.query_type() != RecordType::TXT {
                        continue;
                    }
                    for text in table.lock().unwrap().get(&name).cloned().unwrap_or_default() {
                        found = true;
                        answer.add_answer(Record::from_rdata(
                            question.name().clone(),
                            60,
                            RData::TXT(TXT::new(vec![text])),
                        ));
                    }
                }
                answer.metadata.response_code = if found { ResponseCode::NoError } else { ResponseCode::NXDomain };
                if let Ok(bytes) = answer.to_vec() {
                    let _ = socket.send_to(&bytes, peer).await;
                }
            }
        });
        DnsServer { addr, records }
    }

    /// Publishes a TXT record.
    pub fn set_txt(&self, name: &str, text: &str) {
        self.records.lock().unwrap().entry(name.to_lowercase()).or_default().push(text.to_string());
    }
}

/// A real SMTP server (`aiosmtpd`, which `cargo xtask test` installs) on
/// loopback, keeping what it receives in a Maildir.
pub struct SmtpServer {
    pub url: String,
    pub maildir: std::path::PathBuf,
    child: tokio::process::Child,
}

impl SmtpServer {
    pub async fn start() -> SmtpServer {
        let python = std::env::var("TEST_PYTHON").expect("TEST_PYTHON (cargo xtask test installs aiosmtpd)");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let maildir = std::env::temp_dir().join(format!("moke-smtp-{}", unique()));
        let child = tokio::process::Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&maildir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("aiosmtpd");
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return SmtpServer { url: format!("smtp://127.0.0.1:{port}?tls=none"), maildir, child };
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("aiosmtpd did not start");
    }

    /// Every message received so far, as text (quoted-printable bodies decoded).
    pub fn messages(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.maildir.join("new")) else { return Vec::new() };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        paths.sort();
        paths.into_iter().filter_map(|p| std::fs::read_to_string(p).ok()).map(|m| decode_quoted_printable(&m)).collect()
    }

    /// Waits for a message to `to` whose text contains `marker`, and returns the token of its link.
    pub async fn token(&self, to: &str, marker: &str) -> String {
        let mut found = String::new();
        eventually(20, &format!("a mail to {to} with {marker}"), async || {
            found = self
                .messages()
                .into_iter()
                .rev()
                .find(|m| m.contains(&format!("X-RcptTo: {to}")) && m.contains(marker))
                .unwrap_or_default();
            !found.is_empty()
        })
        .await;
        let start = found.find("token=").expect("a link with a token") + "token=".len();
        found[start..].chars().take_while(char::is_ascii_alphanumeric).collect()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.maildir);
    }
}

/// Undoes quoted-printable encoding (soft line breaks, `=XX`) where a message uses it.
fn decode_quoted_printable(message: &str) -> String {
    if !message.to_ascii_lowercase().contains("content-transfer-encoding: quoted-printable") {
        return message.to_string();
    }
    let joined = message.replace("=\r\n", "").replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
