//! The Moke API from Rust.
//!
//! Every operation of `openapi/moke.json` is a method on [`Client`] that
//! returns a builder (`client.cluster_create().project(p).body(spec).send()`);
//! lists that page also have `.stream()`, which walks every page. Types live
//! in [`types`]. The code in `generated.rs` comes from progenitor (`cargo
//! xtask generate`); this file adds what a generator cannot know:
//!
//! - [`Client::new`] / [`Client::from_env`]: a bearer credential, a user agent
//!   and timeouts;
//! - every `POST` carries an `Idempotency-Key` (one is made when the caller
//!   gives none), so retrying it is safe;
//! - answers 429 and 503 are retried, honouring `Retry-After`;
//! - [`Client::wait_operation`] waits for an Operation to finish.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = moke_sdk::Client::from_env()?;
//! for project in client.project_list().org("org_…").send().await?.into_inner().items {
//!     println!("{}", project.name);
//! }
//! # Ok(()) }
//! ```

#[allow(clippy::all, clippy::pedantic, unused)]
mod generated;

use std::time::Duration;

pub use generated::*;
use progenitor_client::OperationInfo;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, RETRY_AFTER};
use reqwest::{Method, StatusCode};

/// How often a request answered 429 or 503 is sent again before the answer
/// is returned to the caller.
const ATTEMPTS: u32 = 4;
/// The longest wait between attempts, whatever `Retry-After` says.
const LONGEST_WAIT: Duration = Duration::from_secs(30);

/// What went wrong building a client.
#[derive(Debug)]
pub struct ConfigError(String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Headers a [`Client`] adds to each of its requests: its credential, and
/// whatever else the caller set (a proxy's forwarding headers, say). Kept
/// per client rather than in the `reqwest::Client`, so that many clients
/// (one per signed-in person) can share one connection pool.
#[derive(Debug, Clone, Default)]
pub struct ClientHeaders(HeaderMap, Option<PlanSlot>);

/// Where a dry-run client ([`Client::planning`]) puts the plan the server
/// answered to its last mutation.
#[derive(Debug, Clone, Default)]
pub struct PlanSlot(std::sync::Arc<std::sync::Mutex<Option<types::DryRunView>>>);

impl PlanSlot {
    /// The plan answered since the last take, if any.
    pub fn take(&self) -> Option<types::DryRunView> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }

    /// Whether a plan is waiting to be taken.
    pub fn holds_plan(&self) -> bool {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_some()
    }

    fn put(&self, plan: types::DryRunView) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(plan);
    }
}

impl ClientHeaders {
    /// Headers holding `Authorization: Bearer <token>` (marked sensitive).
    pub fn bearer(token: &str) -> Result<ClientHeaders, ConfigError> {
        let mut bearer = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ConfigError("the token holds characters a header cannot".into()))?;
        bearer.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, bearer);
        Ok(ClientHeaders(headers, None))
    }

    /// Adds (or replaces) one header.
    pub fn with(mut self, name: reqwest::header::HeaderName, value: HeaderValue) -> ClientHeaders {
        self.0.insert(name, value);
        self
    }
}

impl Client {
    /// A client for the API at `base_url` (e.g. `https://api.moke.example`)
    /// acting with `token` (an API token `moke_…` or an access token).
    pub fn with_token(base_url: &str, token: &str) -> Result<Client, ConfigError> {
        Ok(Client::new_with_client(base_url.trim_end_matches('/'), http_client()?, ClientHeaders::bearer(token)?))
    }

    /// A client without a credential: for sign-up, sign-in and the catalogs.
    pub fn anonymous(base_url: &str) -> Result<Client, ConfigError> {
        Ok(Client::new_with_client(base_url.trim_end_matches('/'), http_client()?, ClientHeaders::default()))
    }

    /// A client on a connection pool made by [`Client::http_client`] and
    /// shared with other clients, sending `headers` with each request.
    pub fn on_pool(base_url: &str, pool: reqwest::Client, headers: ClientHeaders) -> Client {
        Client::new_with_client(base_url.trim_end_matches('/'), pool, headers)
    }

    /// A connection pool with the SDK's user agent and timeouts, for [`Client::on_pool`].
    pub fn http_client() -> Result<reqwest::Client, ConfigError> {
        http_client()
    }

    /// A request outside the typed operations (`moke api`), carrying this
    /// client's headers (its credential).
    pub fn raw_request(&self, method: Method, url: reqwest::Url) -> reqwest::RequestBuilder {
        self.client.request(method, url).headers(self.inner.0.clone())
    }

    /// A client from `MOKE_HOST` and `MOKE_TOKEN` (what CI sets).
    pub fn from_env() -> Result<Client, ConfigError> {
        let host = std::env::var("MOKE_HOST").map_err(|_| ConfigError("MOKE_HOST is not set".into()))?;
        let token = std::env::var("MOKE_TOKEN").map_err(|_| ConfigError("MOKE_TOKEN is not set".into()))?;
        Client::with_token(&host, &token)
    }

    /// Runs the mutation `call` makes as a dry run: the server does
    /// everything up to the commit (validation, authorization, quotas) and
    /// answers what would change, writing nothing. A refusal is the real
    /// call's error.
    ///
    /// ```no_run
    /// # async fn example(client: moke_sdk::Client) -> Result<(), moke_sdk::Error<moke_sdk::types::Problem>> {
    /// let plan = client
    ///     .dry_run(async |c| c.cluster_delete().project("web").cluster("prod").send().await)
    ///     .await?;
    /// for change in plan.changes {
    ///     println!("{} {}", change.action, change.resource_id.unwrap_or_default());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn dry_run<T, E>(
        &self,
        call: impl AsyncFnOnce(&Client) -> Result<ResponseValue<T>, Error<E>>,
    ) -> Result<types::DryRunView, Error<E>> {
        let (planning, plan) = self.planning();
        // The plan is not the operation's own answer, so the generated
        // method fails to read it; the plan was kept on the way.
        let answer = call(&planning).await;
        match (plan.take(), answer) {
            (Some(plan), _) => Ok(plan),
            (None, Err(error)) => Err(error),
            (None, Ok(_)) => Err(Error::Custom("the server answered as if this were no dry run".into())),
        }
    }

    /// A copy of this client whose mutations are dry runs (`?dry_run=true`),
    /// and where it puts the plans the server answers: what
    /// [`Client::dry_run`] uses, for callers that run generated code.
    pub fn planning(&self) -> (Client, PlanSlot) {
        let slot = PlanSlot::default();
        let headers = ClientHeaders(self.inner.0.clone(), Some(slot.clone()));
        (Client::new_with_client(self.baseurl(), self.client().clone(), headers), slot)
    }

    /// Waits until the Operation `id` has finished (the server holds each
    /// poll up to a minute), or `timeout` has passed; returns it as last seen.
    pub async fn wait_operation(
        &self,
        id: &types::OperationId,
        timeout: Duration,
    ) -> Result<types::OperationView, Error<types::Problem>> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now()).as_secs().clamp(1, 60);
            let operation =
                self.operation_view().operation(id.clone()).wait(format!("{left}s")).send().await?.into_inner();
            let finished =
                matches!(operation.status, types::OperationStatus::Succeeded | types::OperationStatus::Failed);
            if finished || tokio::time::Instant::now() >= deadline {
                return Ok(operation);
            }
        }
    }
}

/// A path parameter, percent-encoded. A value that is only dots would be
/// removed by URL normalization (`/v1/projects/../clusters` is
/// `/v1/clusters`) and so retarget the request; it is escaped twice, so the
/// server sees a name no resource has and answers 404. A `\` is escaped
/// too: URL parsing reads it as `/`, so `..\..\kubeconfig` would climb.
#[doc(hidden)]
pub fn encode_path(value: &str) -> String {
    match value {
        "." => "%252E".into(),
        ".." => "%252E%252E".into(),
        other => progenitor_client::encode_path(other).replace('\\', "%5C"),
    }
}

fn http_client() -> Result<reqwest::Client, ConfigError> {
    // reqwest is built with rustls and no bundled provider; ring is ours.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("moke-sdk-rust/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(10))
        // Long enough for `?wait=60s` on an Operation.
        .timeout(Duration::from_secs(90))
        // The API redirects only browsers (to an identity provider): a
        // client reads the answer itself and never follows one.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ConfigError(format!("could not build the HTTP client: {e}")))
}

impl progenitor_client::ClientHooks<ClientHeaders> for Client {
    /// Adds the client's own headers (and `dry_run=true` to a dry run's
    /// mutation), and gives every `POST` an idempotency key unless the
    /// caller chose one, so the retries in [`Self::exec`] (and
    /// the caller's own) change nothing twice.
    async fn pre<E>(&self, request: &mut reqwest::Request, _: &OperationInfo) -> Result<(), Error<E>> {
        for (name, value) in &self.inner.0 {
            request.headers_mut().insert(name, value.clone());
        }
        let mutation = matches!(*request.method(), Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
        if self.inner.1.is_some() && mutation {
            request.url_mut().query_pairs_mut().append_pair("dry_run", "true");
        }
        if request.method() == Method::POST && !request.headers().contains_key("idempotency-key") {
            let key = HeaderValue::from_str(&uuid::Uuid::new_v4().to_string()).expect("a UUID is a header value");
            request.headers_mut().insert("idempotency-key", key);
        }
        Ok(())
    }

    /// Sends the request, and again after the server's `Retry-After` (or a
    /// growing pause) while it answers 429 or 503.
    async fn exec(&self, request: reqwest::Request, info: &OperationInfo) -> reqwest::Result<reqwest::Response> {
        let response = self.exec_with_retries(request, info).await?;
        match &self.inner.1 {
            Some(slot) if response.headers().contains_key(DRY_RUN_HEADER) => keep_plan(slot, response).await,
            _ => Ok(response),
        }
    }
}

/// The header that marks a dry run's answer.
const DRY_RUN_HEADER: &str = "moke-dry-run";

/// Keeps a dry run's plan in `slot`, and hands the answer on unchanged.
async fn keep_plan(slot: &PlanSlot, response: reqwest::Response) -> reqwest::Result<reqwest::Response> {
    let mut answer = http::Response::builder().status(response.status()).version(response.version());
    if let Some(headers) = answer.headers_mut() {
        *headers = response.headers().clone();
    }
    let body = response.bytes().await?;
    if let Ok(plan) = serde_json::from_slice::<types::DryRunView>(&body) {
        slot.put(plan);
    }
    Ok(reqwest::Response::from(answer.body(body).expect("the parts of an answer received")))
}

impl Client {
    async fn exec_with_retries(
        &self,
        request: reqwest::Request,
        _: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        let mut pause = Duration::from_millis(500);
        for _ in 1..ATTEMPTS {
            let Some(again) = request.try_clone() else { break };
            let response = self.client().execute(again).await?;
            if !matches!(response.status(), StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE) {
                return Ok(response);
            }
            let wait = retry_after(response.headers()).unwrap_or(pause).min(LONGEST_WAIT);
            tokio::time::sleep(wait).await;
            pause = (pause * 2).min(LONGEST_WAIT);
        }
        self.client().execute(request).await
    }
}

/// `Retry-After` in seconds (the only form the server sends).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use progenitor_client::ClientInfo;

    use super::*;

    #[test]
    fn a_path_parameter_of_dots_cannot_climb() {
        let client = Client::anonymous("http://127.0.0.1:1").unwrap();
        for value in [".", ".."] {
            let url = reqwest::Url::parse(&format!("{}/v1/projects/{}/clusters", client.baseurl(), encode_path(value)))
                .unwrap();
            assert!(url.path().starts_with("/v1/projects/%25"), "{url}");
        }
        assert_eq!(encode_path("web/prod"), "web%2Fprod");
        let climbing = encode_path("..\\..\\kubeconfig");
        let url = reqwest::Url::parse(&format!("{}/v1/projects/p/clusters/{climbing}", client.baseurl())).unwrap();
        assert_eq!(url.path(), "/v1/projects/p/clusters/..%5C..%5Ckubeconfig", "{url}");
    }

    #[test]
    fn retry_after_reads_seconds_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&headers), None);
    }
}
