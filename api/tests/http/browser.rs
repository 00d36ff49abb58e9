//! A headless Chromium driven over WebDriver (W3C, Debian's `chromedriver`),
//! for the console's tests: pages as a person sees them, with or without
//! JavaScript. Each step can be kept as a screenshot under
//! `<target>/console-screenshots/<test>/`, checked for errors in the
//! browser's console, and checked by axe-core for serious or critical
//! accessibility violations.
//!
//! `cargo xtask test` installs Chromium, ChromeDriver and axe-core and sets
//! `CHROMIUM`, `CHROMEDRIVER` and `AXE_CORE_JS`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

/// The W3C name of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    _driver: tokio::process::Child,
    http: reqwest::Client,
    /// `http://127.0.0.1:<port>/session/<id>`.
    session: String,
    screenshots: PathBuf,
    step: AtomicUsize,
    pub javascript: bool,
    pub downloads: tempfile::TempDir,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// A fresh browser (own profile, no cookies) named `name` for its screenshots.
    pub async fn start(name: &str, javascript: bool) -> Browser {
        let chromedriver = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
        let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = tokio::process::Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("{chromedriver} did not start ({e}); `cargo xtask test` installs it"));
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        crate::common::eventually(20, "chromedriver to listen", async || {
            http.get(format!("{base}/status")).send().await.is_ok_and(|r| r.status().is_success())
        })
        .await;
        let downloads = tempfile::tempdir().unwrap();
        let profile = tempfile::tempdir().unwrap();
        let mut prefs = json!({
            "download.default_directory": downloads.path(),
            "download.prompt_for_download": false,
        });
        if !javascript {
            prefs["profile.managed_default_content_settings.javascript"] = json!(2);
        }
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": { "browser": "ALL" },
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1280,1000", "--no-first-run", "--disable-extensions",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
                "prefs": prefs,
            },
        }}});
        let answer: Value =
            http.post(format!("{base}/session")).json(&capabilities).send().await.unwrap().json().await.unwrap();
        let id = answer["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no WebDriver session: {answer}"));
        let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
        let screenshots = deps.parent().unwrap().parent().unwrap().join("console-screenshots").join(name);
        let _ = std::fs::remove_dir_all(&screenshots);
        std::fs::create_dir_all(&screenshots).unwrap();
        let browser = Browser {
            _driver: driver,
            http,
            session: format!("{base}/session/{id}"),
            screenshots,
            step: AtomicUsize::new(0),
            javascript,
            downloads,
            _profile: profile,
        };
        if javascript {
            // The console's copy buttons write to the clipboard, and the tests read it back.
            browser
                .command(
                    reqwest::Method::POST,
                    "/goog/cdp/execute",
                    json!({ "cmd": "Browser.grantPermissions", "params": { "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"] } }),
                )
                .await;
        }
        let downloads = browser.downloads.path().display().to_string();
        browser
            .command(
                reqwest::Method::POST,
                "/goog/cdp/execute",
                json!({ "cmd": "Browser.setDownloadBehavior", "params": { "behavior": "allow", "downloadPath": downloads } }),
            )
            .await;
        browser
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        self.try_command(method.clone(), path, body)
            .await
            .unwrap_or_else(|(error, message)| panic!("WebDriver {method} {path} failed: {error}: {message}"))
    }

    /// A WebDriver command; its error and message when it failed.
    async fn try_command(&self, method: reqwest::Method, path: &str, body: Value) -> Result<Value, (String, Value)> {
        let request = self.http.request(method.clone(), format!("{}{path}", self.session));
        let request = if method == reqwest::Method::GET { request } else { request.json(&body) };
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        if let Some(error) = answer["value"]["error"].as_str() {
            return Err((error.to_string(), answer["value"]["message"].clone()));
        }
        Ok(answer["value"].clone())
    }

    /// The visible text of each `css`, read again when the page's script
    /// swapped an element out while it was read.
    async fn read_texts(&self, css: &str, first_only: bool) -> Vec<String> {
        'again: for _ in 0..20 {
            let mut elements = self.elements(css).await;
            if first_only {
                elements.truncate(1);
            }
            let mut texts = Vec::new();
            for element in elements {
                match self.try_command(reqwest::Method::GET, &format!("/element/{element}/text"), Value::Null).await {
                    Ok(text) => texts.push(text.as_str().unwrap_or_default().to_string()),
                    Err((error, _)) if error == "stale element reference" => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue 'again;
                    }
                    Err((error, message)) => panic!("WebDriver text of `{css}` failed: {error}: {message}"),
                }
            }
            return texts;
        }
        panic!("`{css}` kept being replaced while it was read");
    }

    pub async fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", json!({ "url": url })).await;
    }

    pub async fn url(&self) -> String {
        self.command(reqwest::Method::GET, "/url", Value::Null).await.as_str().unwrap().to_string()
    }

    /// The path and query of the current page.
    pub async fn path(&self) -> String {
        let url = reqwest::Url::parse(&self.url().await).unwrap();
        match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        }
    }

    pub async fn title(&self) -> String {
        self.command(reqwest::Method::GET, "/title", Value::Null).await.as_str().unwrap().to_string()
    }

    async fn elements(&self, css: &str) -> Vec<String> {
        let found =
            self.command(reqwest::Method::POST, "/elements", json!({ "using": "css selector", "value": css })).await;
        found.as_array().unwrap().iter().map(|e| e[ELEMENT].as_str().unwrap().to_string()).collect()
    }

    async fn element(&self, css: &str) -> String {
        let found = self.elements(css).await;
        assert!(!found.is_empty(), "no `{css}` on {} ({})", self.path().await, self.title().await);
        found[0].clone()
    }

    pub async fn exists(&self, css: &str) -> bool {
        !self.elements(css).await.is_empty()
    }

    /// Types `text` into the field `css` (emptied first).
    pub async fn fill(&self, css: &str, text: &str) {
        let element = self.element(css).await;
        self.command(reqwest::Method::POST, &format!("/element/{element}/clear"), json!({})).await;
        self.command(reqwest::Method::POST, &format!("/element/{element}/value"), json!({ "text": text })).await;
    }

    pub async fn click(&self, css: &str) {
        let element = self.element(css).await;
        self.command(reqwest::Method::POST, &format!("/element/{element}/click"), json!({})).await;
    }

    /// Clicks the submit button `css` and waits for the next page (every
    /// console form ends in a redirect: to another page, back with an
    /// error, or to the same page; a new document either way).
    pub async fn submit(&self, css: &str) {
        let before = self.element("html").await;
        let url = self.url().await;
        self.click(css).await;
        // Generous: the whole suite shares two cores with this browser.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if self.elements("html").await.first().is_some_and(|now| *now != before) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("sending the form `{css}` on {url} led nowhere: {}", self.body_text().await);
    }

    /// The visible text of the first `css`.
    pub async fn text(&self, css: &str) -> String {
        let texts = self.read_texts(css, true).await;
        match texts.into_iter().next() {
            Some(text) => text,
            None => panic!("no `{css}` on {} ({})", self.path().await, self.title().await),
        }
    }

    /// The visible text of every `css`.
    pub async fn texts(&self, css: &str) -> Vec<String> {
        self.read_texts(css, false).await
    }

    /// The `value` of the input `css`.
    pub async fn source_value(&self, css: &str) -> String {
        let element = self.element(css).await;
        let value =
            self.command(reqwest::Method::GET, &format!("/element/{element}/property/value"), Value::Null).await;
        value.as_str().unwrap_or_default().to_string()
    }

    /// The DOM property `name` of the first `css` (e.g. `textContent`,
    /// `disabled`), whether or not it is displayed.
    pub async fn property(&self, css: &str, name: &str) -> Value {
        let element = self.element(css).await;
        self.command(reqwest::Method::GET, &format!("/element/{element}/property/{name}"), Value::Null).await
    }

    /// Whether the first `css` is displayed.
    pub async fn displayed(&self, css: &str) -> bool {
        let element = self.element(css).await;
        self.command(reqwest::Method::GET, &format!("/element/{element}/displayed"), Value::Null).await == json!(true)
    }

    /// Runs `script` in the page (WebDriver's, not the page's) and returns its value.
    pub async fn execute(&self, script: &str) -> Value {
        self.command(reqwest::Method::POST, "/execute/sync", json!({ "script": script, "args": [] })).await
    }

    /// Runs the asynchronous `script` in the page: it ends by calling
    /// `arguments[arguments.length - 1]` with its value.
    pub async fn execute_async(&self, script: &str) -> Value {
        self.command(reqwest::Method::POST, "/execute/async", json!({ "script": script, "args": [] })).await
    }

    /// The page's HTML as the browser holds it.
    pub async fn source(&self) -> String {
        self.command(reqwest::Method::GET, "/source", Value::Null).await.as_str().unwrap_or_default().to_string()
    }

    /// The whole page's visible text.
    pub async fn body_text(&self) -> String {
        self.text("body").await
    }

    /// Saves a screenshot of this step, the whole page and not only what fits
    /// the window (Chromium's DevTools through ChromeDriver, which works with
    /// the page's JavaScript off too), numbered, under the test's folder.
    pub async fn screenshot(&self, step: &str) {
        use base64::Engine;
        let shot = self
            .command(
                reqwest::Method::POST,
                "/goog/cdp/execute",
                json!({ "cmd": "Page.captureScreenshot", "params": { "format": "png", "captureBeyondViewport": true } }),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap()).unwrap();
        let n = self.step.fetch_add(1, Ordering::Relaxed);
        std::fs::write(self.screenshots.join(format!("{n:02}-{step}.png")), png).unwrap();
    }

    /// The browser console's errors since the last call.
    pub async fn console_errors(&self) -> Vec<String> {
        let entries = self.command(reqwest::Method::POST, "/se/log", json!({ "type": "browser" })).await;
        entries
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
                    .map(|e| e["message"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// axe-core's serious and critical violations on the current page
    /// (injected through WebDriver, which the pages' CSP does not govern).
    pub async fn accessibility_violations(&self) -> Vec<String> {
        let axe = std::fs::read_to_string(std::env::var("AXE_CORE_JS").expect("AXE_CORE_JS (set by cargo xtask test)"))
            .expect("axe-core's script");
        self.command(
            reqwest::Method::POST,
            "/execute/sync",
            json!({ "script": format!("{axe}\nreturn true;"), "args": [] }),
        )
        .await;
        let script = "const done = arguments[arguments.length - 1];\
            axe.run(document, { resultTypes: ['violations'] }).then(r => done(r.violations\
              .filter(v => v.impact === 'serious' || v.impact === 'critical')\
              .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.map(n => n.target.join(' ')).join(', '))));";
        let found =
            self.command(reqwest::Method::POST, "/execute/async", json!({ "script": script, "args": [] })).await;
        found.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    }

    /// A step as a person would check it: screenshot, no errors in the
    /// browser's console and, with JavaScript, no serious accessibility
    /// violations.
    pub async fn check(&self, step: &str) {
        self.screenshot(step).await;
        let errors = self.console_errors().await;
        assert!(errors.is_empty(), "the browser logged errors on {} ({step}): {errors:#?}", self.path().await);
        if self.javascript {
            let violations = self.accessibility_violations().await;
            assert!(violations.is_empty(), "axe-core on {} ({step}): {violations:#?}", self.path().await);
        }
    }

    /// [`Self::check`] of a page that answers 404 on purpose: Chromium logs
    /// that status, and nothing else may be logged.
    pub async fn check_not_found(&self, step: &str) {
        self.screenshot(step).await;
        let errors: Vec<String> =
            self.console_errors().await.into_iter().filter(|e| !e.contains("status of 404 (Not Found)")).collect();
        assert!(errors.is_empty(), "the browser logged errors on {} ({step}): {errors:#?}", self.path().await);
        if self.javascript {
            let violations = self.accessibility_violations().await;
            assert!(violations.is_empty(), "axe-core on {} ({step}): {violations:#?}", self.path().await);
        }
    }

    /// Waits for a downloaded file named `name`.
    pub async fn downloaded(&self, name: &str) -> PathBuf {
        let path = self.downloads.path().join(name);
        // A kubeconfig is signed by Vault first, which a loaded machine slows.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if path.exists() && std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) {
                return path;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let present: Vec<_> =
            std::fs::read_dir(self.downloads.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        panic!("{name} was not downloaded; the folder holds {present:?}");
    }

    /// Ends the session: ChromeDriver closes the browser.
    pub async fn close(self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}
