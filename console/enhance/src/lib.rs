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
//!   it is, so no one loses their place.
//! - **Live price estimate**: a form with `[data-live-estimate]` is priced
//!   as it is filled in, by sending it with its estimate button's value
//!   (the same server function the button uses) and swapping the priced
//!   part of the answer in.
//! - **Complete forms**: a form with `[data-complete]` keeps its
//!   `[data-needs-complete]` buttons disabled until it is valid.
//!
//! The console refuses any request that is not a navigation unless it
//! carries the page's token (`<meta name="moke-page-token">`) in
//! [`PAGE_TOKEN_HEADER`]: another page on the same origin cannot read a
//! console page, so it cannot learn the token. Changes are announced in the
//! page's `#announcer` live region.

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
        schedule_refresh(&window, &document);
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
    let answer = fetch(document, &form.action(), &init).await?;
    let url = answer.url();
    let priced = parse(&answer).await?;
    // An answer that is not the form again (signed out, an error page) prices nothing.
    let same_page = web_sys::window().and_then(|w| w.location().pathname().ok()).is_some_and(|here| {
        url.split_once("://")
            .and_then(|(_, rest)| rest.split_once('/'))
            .is_some_and(|(_, path)| path.split('?').next() == Some(here.trim_start_matches('/')))
    });
    same_page.then_some(priced)
}

/// A same-origin request with the page's token, following redirects;
/// `None` unless it was answered with a success.
async fn fetch(document: &Document, url: &str, init: &RequestInit) -> Option<Response> {
    let window = web_sys::window()?;
    let headers = web_sys::Headers::new().ok()?;
    headers.set(PAGE_TOKEN_HEADER, &page_token(document)?).ok()?;
    // As a browser's form post: the console's server functions then answer
    // with their redirect (to the page, priced), not a script's error value.
    headers.set("accept", "text/html").ok()?;
    init.set_headers(&headers);
    init.set_credentials(RequestCredentials::SameOrigin);
    init.set_redirect(RequestRedirect::Follow);
    let answer = JsFuture::from(window.fetch_with_str_and_init(url, init)).await.ok()?;
    let answer: Response = answer.dyn_into().ok()?;
    answer.ok().then_some(answer)
}

/// The answer's HTML as an inert document (nothing in it runs).
async fn parse(answer: &Response) -> Option<Document> {
    let text = JsFuture::from(answer.text().ok()?).await.ok()?.as_string()?;
    DomParser::new().ok()?.parse_from_string(&text, SupportedType::TextHtml).ok()
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

/// Fetches the page again after a while and swaps its live parts in; a
/// page that moved elsewhere (signed out, deleted) stops following.
fn schedule_refresh(window: &Window, document: &Document) {
    let every = if changing(document) { CHANGING_EVERY_MS } else { SETTLED_EVERY_MS };
    let document = document.clone();
    after(window, every, move || {
        spawn_local(async move {
            let Some(window) = web_sys::window() else { return };
            // A page in a background tab waits until it is looked at again.
            if !document.hidden() && !refresh(&window, &document).await {
                return;
            }
            schedule_refresh(&window, &document);
        });
    });
}

/// Swaps in the page's live parts as the server draws them now; `false`
/// when the page is gone or answers with another one.
async fn refresh(window: &Window, document: &Document) -> bool {
    let Ok(here) = window.location().href() else { return false };
    let init = RequestInit::new();
    init.set_method("GET");
    let Some(answer) = fetch(document, &here, &init).await else {
        // A failed round (the network, a restart) is tried again.
        return true;
    };
    if answer.redirected() {
        return false;
    }
    let Some(fresh) = parse(&answer).await else { return true };
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
    true
}
