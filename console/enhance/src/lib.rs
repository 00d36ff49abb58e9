//! The web console's enhancements for browsers that run scripts, built for
//! `wasm32-unknown-unknown` and served by the console as
//! `/assets/console.js` (wasm-bindgen's loader) and `console_bg.wasm`.
//! Every page works without them; they only save a person clicks:
//!
//! - **Copy buttons** beside what a person copies (`[data-copy]`: secrets
//!   shown once, the kubeconfig, sample commands).
//! - **Live status**: a page with live parts (`[data-live][id]`) fetches
//!   itself again and swaps those parts in place, every
//!   [`CHANGING_EVERY_MS`] while something is changing (`[data-changing]`),
//!   else every [`SETTLED_EVERY_MS`]; a part holding the focus is left as
//!   it is, so no one loses their place. It backs off after failures
//!   (honouring `Retry-After`), stops for good once refused or moved
//!   elsewhere (signed out, another organization, deleted), and stops after
//!   [`FOLLOW_IDLE_MS`] without the person doing anything.
//! - **Live price estimate**: a form with `[data-live-estimate]` is priced
//!   as it is filled in, by sending it with its estimate button's value
//!   (the same server function the button uses) and swapping the priced
//!   part of the answer in.
//! - **Complete forms**: a form with `[data-complete]` keeps its
//!   `[data-needs-complete]` buttons disabled until it is valid.
//!
//! The console refuses any request that is not a navigation unless it
//! carries the page's token (`<meta name="moke-page-token">`, an hour long,
//! renewed from each page fetched) in [`PAGE_TOKEN_HEADER`], and then only
//! reads pages and prices the cluster form: another page on the same origin
//! cannot read a console page, so it cannot learn the token. Changes are
//! announced in the page's `#announcer` live region.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{
    Document, DomParser, Element, HtmlButtonElement, HtmlFormElement, HtmlInputElement, HtmlTextAreaElement,
    RequestCredentials, RequestInit, RequestRedirect, Response, SupportedType, Window,
};

/// The header that carries the page's token on the script's requests.
pub const PAGE_TOKEN_HEADER: &str = "x-moke-page-token";

/// How often a page fetches itself while something on it is changing.
pub const CHANGING_EVERY_MS: i32 = 2_000;

/// How often a page with live parts fetches itself when nothing changes.
pub const SETTLED_EVERY_MS: i32 = 15_000;

/// How long a form stays still before it is priced again.
const ESTIMATE_AFTER_MS: i32 = 400;

/// Runs once the module is loaded (the loader is a deferred module script,
/// so the document has been parsed).
#[wasm_bindgen(start)]
pub fn start() {
    let Some(window) = web_sys::window() else { return };
    let Some(document) = window.document() else { return };
    copy_buttons(&document);
    complete_forms(&document);
    live_estimates(&document);
    if has_live_parts(&document) {
        Follow::start(&window, &document);
    }
}

/// The page's token for the script's own requests.
fn page_token(document: &Document) -> Option<String> {
    document.query_selector("meta[name='moke-page-token']").ok().flatten()?.get_attribute("content")
}

/// Says `text` in the page's polite live region (set empty first, so the
/// same words are said again).
fn announce(document: &Document, text: &str) {
    if let Some(region) = document.get_element_by_id("announcer") {
        region.set_text_content(None);
        region.set_text_content(Some(text));
    }
}

/// Every element matching `selector`.
fn all(root: &Document, selector: &str) -> Vec<Element> {
    let Ok(list) = root.query_selector_all(selector) else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.item(i)).filter_map(|node| node.dyn_into::<Element>().ok()).collect()
}

/// Calls `handler` on `event` at `target` for as long as the page lives.
fn on(target: &web_sys::EventTarget, event: &str, handler: impl FnMut(web_sys::Event) + 'static) {
    let closure = Closure::<dyn FnMut(web_sys::Event)>::new(handler);
    let _ = target.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
    closure.forget();
}

/// Calls `then` once after `ms` milliseconds.
fn after(window: &Window, ms: i32, then: impl FnOnce() + 'static) {
    let closure = Closure::once_into_js(then);
    let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(closure.unchecked_ref(), ms);
}

/// What a `[data-copy]` element holds: an input's or text area's value,
/// else its text.
fn copied_text(element: &Element) -> String {
    if let Some(input) = element.dyn_ref::<HtmlInputElement>() {
        return input.value();
    }
    if let Some(area) = element.dyn_ref::<HtmlTextAreaElement>() {
        return area.value();
    }
    element.text_content().unwrap_or_default()
}

/// A "Copy" button after each `[data-copy]` element (its value names
/// what is copied, for the button's label and the announcement).
fn copy_buttons(document: &Document) {
    for element in all(document, "[data-copy]") {
        let what = element.get_attribute("data-copy").unwrap_or_else(|| "text".into());
        let Ok(button) = document.create_element("button") else { continue };
        let _ = button.set_attribute("type", "button");
        let _ = button.set_attribute("class", "secondary copy");
        // "Copy", then "Copied": the words shown begin the button's name ("Copy the kubeconfig").
        let verb = document.create_text_node("Copy");
        let Ok(object) = document.create_element("span") else { continue };
        let _ = object.set_attribute("class", "visually-hidden");
        object.set_text_content(Some(&format!(" the {what}")));
        if button.append_with_node_2(&verb, &object).is_err() || element.after_with_node_1(&button).is_err() {
            continue;
        }
        let document = document.clone();
        let shown = verb.clone();
        on(&button, "click", move |_| {
            let Some(window) = web_sys::window() else { return };
            let text = copied_text(&element);
            let promise = window.navigator().clipboard().write_text(&text);
            let (document, shown, what) = (document.clone(), shown.clone(), what.clone());
            spawn_local(async move {
                match JsFuture::from(promise).await {
                    Ok(_) => {
                        shown.set_data("Copied");
                        announce(&document, &format!("Copied the {what} to the clipboard."));
                    }
                    Err(_) => announce(&document, &format!("Could not copy the {what}: select it and copy it.")),
                }
            });
        });
    }
}

/// Keeps each `[data-complete]` form's `[data-needs-complete]` buttons
/// disabled while the form is not valid.
fn complete_forms(document: &Document) {
    for form in all(document, "form[data-complete]") {
        let Ok(form) = form.dyn_into::<HtmlFormElement>() else { continue };
        let update = {
            let form = form.clone();
            move || {
                let valid = form.check_validity();
                let Ok(buttons) = form.query_selector_all("[data-needs-complete]") else { return };
                for i in 0..buttons.length() {
                    if let Some(button) = buttons.item(i).and_then(|b| b.dyn_into::<HtmlButtonElement>().ok()) {
                        button.set_disabled(!valid);
                    }
                }
            }
        };
        update();
        let on_input = update.clone();
        on(&form, "input", move |_| on_input());
        on(&form, "change", move |_| update());
    }
}

/// Prices each `[data-live-estimate]` form as it is filled in: its value
/// is the id of the priced part, which the answer's copy replaces; the
/// form's estimate button (`[data-estimate-button]`) is hidden, as the
/// price follows the form.
fn live_estimates(document: &Document) {
    for form in all(document, "form[data-live-estimate]") {
        let Ok(form) = form.dyn_into::<HtmlFormElement>() else { continue };
        let Some(part) = form.get_attribute("data-live-estimate") else { continue };
        let Some(button) = form
            .query_selector("[data-estimate-button]")
            .ok()
            .flatten()
            .and_then(|b| b.dyn_into::<HtmlButtonElement>().ok())
        else {
            continue;
        };
        button.set_hidden(true);
        // Only the newest change is priced: each waits, then checks it is still the newest.
        let newest = Rc::new(Cell::new(0u64));
        let (document, listened) = (document.clone(), form.clone());
        let price = move |_: web_sys::Event| {
            let Some(window) = web_sys::window() else { return };
            let mine = newest.get() + 1;
            newest.set(mine);
            let (newest, form, button, part, document) =
                (newest.clone(), form.clone(), button.clone(), part.clone(), document.clone());
            after(&window, ESTIMATE_AFTER_MS, move || {
                if newest.get() != mine {
                    return;
                }
                spawn_local(async move {
                    if let Some(priced) = estimate(&document, &form, &button).await
                        && newest.get() == mine
                    {
                        swap_part(&document, &priced, &part);
                        if let Some(total) = document.query_selector(".estimate-total").ok().flatten() {
                            let total = total.text_content().unwrap_or_default();
                            announce(&document, &format!("Estimate: {total} a month."));
                        }
                    }
                });
            });
        };
        on(&listened, "change", price.clone());
        on(&listened, "input", price);
    }
}

/// Sends `form` as its estimate `button` would and returns the answer's
/// document, or `None` when it failed (the price shown stays).
async fn estimate(document: &Document, form: &HtmlFormElement, button: &HtmlButtonElement) -> Option<Document> {
    let data = web_sys::FormData::new_with_form(form).ok()?;
    data.append_with_str(&button.name(), &button.value()).ok()?;
    let body = web_sys::UrlSearchParams::new_with_str_sequence_sequence(&data).ok()?;
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&body);
    let Fetched::Page(answer) = fetch(document, &form.action(), &init).await else { return None };
    let url = answer.url();
    let priced = parse(&answer).await?;
    // An answer that is not the form again (signed out, an error page) prices nothing.
    let same_page = web_sys::window().and_then(|w| w.location().pathname().ok()).is_some_and(|here| {
        url.split_once("://")
            .and_then(|(_, rest)| rest.split_once('/'))
            .is_some_and(|(_, path)| path.split('?').next() == Some(here.trim_start_matches('/')))
    });
    if !same_page {
        return None;
    }
    renew_token(document, &priced);
    Some(priced)
}

/// How a request of the script ended.
enum Fetched {
    /// The answer (after redirects).
    Page(Response),
    /// Refused, gone or moved elsewhere (signed out, another organization,
    /// deleted): asking again would not help.
    Over,
    /// Worth asking again later (the network, a restart, too many
    /// requests): after `retry_after_ms` when the server said.
    Later { retry_after_ms: Option<i32> },
}

/// A same-origin request with the page's token, following redirects.
async fn fetch(document: &Document, url: &str, init: &RequestInit) -> Fetched {
    let Some(window) = web_sys::window() else { return Fetched::Over };
    let (Ok(headers), Some(token)) = (web_sys::Headers::new(), page_token(document)) else { return Fetched::Over };
    let _ = headers.set(PAGE_TOKEN_HEADER, &token);
    // As a browser's form post: the console's server functions then answer
    // with their redirect (to the page, priced), not a script's error value.
    let _ = headers.set("accept", "text/html");
    init.set_headers(&headers);
    init.set_credentials(RequestCredentials::SameOrigin);
    init.set_redirect(RequestRedirect::Follow);
    let Ok(answer) = JsFuture::from(window.fetch_with_str_and_init(url, init)).await else {
        return Fetched::Later { retry_after_ms: None };
    };
    let Ok(answer) = answer.dyn_into::<Response>() else { return Fetched::Over };
    match answer.status() {
        200..=299 => Fetched::Page(answer),
        429 | 500..=599 => {
            let retry_after_ms = answer
                .headers()
                .get("retry-after")
                .ok()
                .flatten()
                .and_then(|seconds| seconds.trim().parse::<i32>().ok())
                .map(|seconds| seconds.clamp(1, 3600) * 1000);
            Fetched::Later { retry_after_ms }
        }
        _ => Fetched::Over,
    }
}

/// The answer's HTML as an inert document (nothing in it runs).
async fn parse(answer: &Response) -> Option<Document> {
    let text = JsFuture::from(answer.text().ok()?).await.ok()?.as_string()?;
    DomParser::new().ok()?.parse_from_string(&text, SupportedType::TextHtml).ok()
}

/// Takes the page token of a freshly drawn page (tokens lapse after an hour).
fn renew_token(document: &Document, fresh: &Document) {
    let selector = "meta[name='moke-page-token']";
    let newer = fresh.query_selector(selector).ok().flatten().and_then(|meta| meta.get_attribute("content"));
    if let (Some(meta), Some(newer)) = (document.query_selector(selector).ok().flatten(), newer) {
        let _ = meta.set_attribute("content", &newer);
    }
}

/// Replaces the element `id` of this page with its copy in `fresh`,
/// unless the focus is inside it or `fresh` has no such element.
fn swap_part(document: &Document, fresh: &Document, id: &str) -> bool {
    let (Some(current), Some(replacement)) = (document.get_element_by_id(id), fresh.get_element_by_id(id)) else {
        return false;
    };
    if let Some(focused) = document.active_element()
        && current.contains(Some(&focused))
    {
        return false;
    }
    if current.outer_html() == replacement.outer_html() {
        return false;
    }
    let Ok(imported) = document.import_node_with_deep(&replacement, true) else { return false };
    current.replace_with_with_node_1(&imported).is_ok()
}

/// The page has parts that follow what they show.
fn has_live_parts(document: &Document) -> bool {
    document.query_selector("[data-live][id]").ok().flatten().is_some()
}

/// Whether the page says something on it is changing.
fn changing(document: &Document) -> bool {
    document.query_selector("[data-changing]").ok().flatten().is_some()
}

/// How long a page follows what it shows after the person last did
/// something on it: an unattended tab stops asking (and stops keeping the
/// session alive).
const FOLLOW_IDLE_MS: f64 = 30.0 * 60.0 * 1000.0;

/// The longest wait between two rounds after failures.
const LONGEST_BACKOFF_MS: i32 = 5 * 60 * 1000;

/// A page following what it shows.
#[derive(Clone)]
struct Follow {
    document: Document,
    /// When the person last clicked, typed or scrolled (ms since the epoch).
    last_activity: Rc<Cell<f64>>,
}

impl Follow {
    fn start(window: &Window, document: &Document) {
        let last_activity = Rc::new(Cell::new(js_sys::Date::now()));
        for event in ["pointerdown", "keydown", "scroll", "focus"] {
            let last_activity = last_activity.clone();
            on(window, event, move |_| last_activity.set(js_sys::Date::now()));
        }
        Follow { document: document.clone(), last_activity }.schedule(window, None);
    }

    /// The next round after `wait_ms`, or the page's own pace.
    fn schedule(self, window: &Window, wait_ms: Option<i32>) {
        let pace = if changing(&self.document) { CHANGING_EVERY_MS } else { SETTLED_EVERY_MS };
        after(window, wait_ms.unwrap_or(pace), move || spawn_local(self.round(0)));
    }

    /// One round; `failures` in a row before it.
    async fn round(self, failures: u32) {
        let Some(window) = web_sys::window() else { return };
        if js_sys::Date::now() - self.last_activity.get() > FOLLOW_IDLE_MS {
            return;
        }
        // A page in a background tab waits until it is looked at again.
        if self.document.hidden() {
            return self.schedule(&window, None);
        }
        match refresh(&window, &self.document).await {
            Fetched::Page(_) => self.schedule(&window, None),
            Fetched::Over => {}
            Fetched::Later { retry_after_ms } => {
                let backoff = CHANGING_EVERY_MS.saturating_mul(1 << failures.min(8)).min(LONGEST_BACKOFF_MS);
                let wait = retry_after_ms.unwrap_or(backoff).max(backoff);
                let next = self.clone();
                after(&window, wait, move || spawn_local(next.round(failures + 1)));
            }
        }
    }
}

/// Swaps in the page's live parts as the server draws them now.
async fn refresh(window: &Window, document: &Document) -> Fetched {
    let Ok(here) = window.location().href() else { return Fetched::Over };
    let init = RequestInit::new();
    init.set_method("GET");
    let answer = match fetch(document, &here, &init).await {
        // Sent elsewhere (to sign in, say): this page no longer follows.
        Fetched::Page(answer) if answer.redirected() => return Fetched::Over,
        Fetched::Page(answer) => answer,
        other => return other,
    };
    let Some(fresh) = parse(&answer).await else { return Fetched::Later { retry_after_ms: None } };
    renew_token(document, &fresh);
    let was_changing = changing(document);
    let mut parts = Vec::new();
    for part in all(document, "[data-live][id]") {
        // Only the outermost: an inner part comes with its outer one.
        let nested = part.parent_element().and_then(|parent| parent.closest("[data-live]").ok().flatten()).is_some();
        if !nested {
            parts.push(part.id());
        }
    }
    for id in parts {
        swap_part(document, &fresh, &id);
    }
    if was_changing && !changing(document) {
        announce(document, "Changes are done: the page shows the latest state.");
    }
    Fetched::Page(answer)
}
