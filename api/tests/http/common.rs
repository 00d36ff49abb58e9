//! The test harness: a gateway on an ephemeral port over the test's database,
//! tenants with owner tokens, and small request helpers.

use std::sync::Arc;

use moke_api::app::App;
use moke_api::config::Config;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio::sync::oneshot;

/// A running gateway.
pub struct TestApp {
    pub base: String,
    pub app: Arc<App>,
    pub pool: PgPool,
    pub client: reqwest::Client,
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
        // Our own pool, larger than the one sqlx::test offers, for the concurrency tests.
        let _ = options;
        let pool = PgPoolOptions::new().max_connections(40).connect_with(connect).await.expect("test database");
        let mut config = Config::defaults();
        configure(&mut config);
        let app = App::new(pool.clone(), Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(moke_api::server::serve(app.clone(), listener, async move {
            let _ = stopped.await;
        }));
        TestApp { base, app, pool, client: reqwest::Client::new(), stop: Some(stop) }
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
    }
}

/// The field names listed in a problem+json validation answer.
pub fn bad_fields(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .map(|errors| errors.iter().map(|e| e["field"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}
