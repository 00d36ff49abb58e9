//! The API as the console uses it: the SDK's client, made by
//! [`crate::session::RequestSession`] with the person's credential and the
//! browser's address.

use moke_sdk::types;

use crate::error::ConsoleError;

/// An SDK client for one request of one person.
pub(crate) struct Api {
    client: moke_sdk::Client,
    base_url: String,
}

impl Api {
    pub(crate) fn new(client: moke_sdk::Client, base_url: &str) -> Api {
        Api { client, base_url: base_url.trim_end_matches('/').to_string() }
    }

    /// A PATCH whose body the SDK's types cannot state: an explicit `null`
    /// that clears a field (e.g. turns a node pool's autoscaling off), which
    /// the generated Rust types leave out. `path` is built with
    /// [`moke_sdk::encode_path`]; errors arrive as the typed calls' do.
    /// With `if_match` (the ETag the form was filled from), a change made
    /// by someone else since is refused (412) rather than overwritten.
    /// The answer's body, as JSON (`null` when it is not).
    pub(crate) async fn patch_json(
        &self,
        path: &str,
        body: &serde_json::Value,
        if_match: Option<&str>,
    ) -> Result<serde_json::Value, ConsoleError> {
        self.send_json(reqwest::Method::PATCH, path, body, if_match).await
    }

    /// A PUT of a document the form built as JSON, so that every rule is
    /// the API's and its refusals name the fields (the SDK's types would
    /// refuse some values before sending, without a field); as
    /// [`Api::patch_json`] otherwise.
    pub(crate) async fn put_json(
        &self,
        path: &str,
        body: &serde_json::Value,
        if_match: Option<&str>,
    ) -> Result<serde_json::Value, ConsoleError> {
        self.send_json(reqwest::Method::PUT, path, body, if_match).await
    }

    async fn send_json(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &serde_json::Value,
        if_match: Option<&str>,
    ) -> Result<serde_json::Value, ConsoleError> {
        let url = reqwest::Url::parse(&format!("{}{path}", self.base_url))
            .map_err(|_| ConsoleError::new(400, "Invalid input", "The address could not be built."))?;
        let mut request = self.client.raw_request(method, url).json(body);
        if let Some(etag) = if_match {
            request = request.header(reqwest::header::IF_MATCH, etag);
        }
        let answer = request.send().await.map_err(|_| {
            ConsoleError::new(503, "Moke is unavailable", "The API could not be reached. Try again in a moment.")
        })?;
        if answer.status().is_success() {
            return Ok(answer.json().await.unwrap_or(serde_json::Value::Null));
        }
        Err(Api::problem(answer).await)
    }
}

impl Api {
    /// A GET of a browser-only operation (single sign-on), which the SDK
    /// leaves out: the answer as it came (redirects are not followed), or
    /// [`ConsoleError`] when the API could not be reached. `cookie` is sent
    /// as the `Cookie` header.
    pub(crate) async fn get_raw(
        &self,
        path_and_query: &str,
        cookie: Option<&str>,
    ) -> Result<reqwest::Response, ConsoleError> {
        let url = reqwest::Url::parse(&format!("{}{path_and_query}", self.base_url))
            .map_err(|_| ConsoleError::new(400, "Invalid input", "The address could not be built."))?;
        let mut request = self.client.raw_request(reqwest::Method::GET, url);
        if let Some(cookie) = cookie {
            request = request.header(reqwest::header::COOKIE, cookie);
        }
        request.send().await.map_err(|_| {
            ConsoleError::new(503, "Moke is unavailable", "The API could not be reached. Try again in a moment.")
        })
    }

    /// A problem answer as a [`ConsoleError`].
    pub(crate) async fn problem(answer: reqwest::Response) -> ConsoleError {
        let status = answer.status().as_u16();
        match answer.json::<types::Problem>().await {
            Ok(problem) => ConsoleError::from_problem(status, problem),
            Err(_) => {
                ConsoleError::new(status, "Unexpected answer", "The API answered in a way the console did not expect.")
            }
        }
    }
}

impl std::ops::Deref for Api {
    type Target = moke_sdk::Client;

    fn deref(&self) -> &moke_sdk::Client {
        &self.client
    }
}
