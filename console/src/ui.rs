//! The console's building blocks: the frame around signed-in pages, form
//! fields that show the API's field errors, status chips, error pages.

use leptos::prelude::*;
use leptos_meta::Title;
use moke_sdk::types;

use crate::error::ConsoleError;
use crate::session::{RequestSession, request_session};

/// The browser-side check of a name (a DNS label), in the `v`-flag regular
/// expression syntax browsers use for `pattern`; the API checks it again.
pub(crate) const NAME_PATTERN: &str = r"[a-z]([a-z0-9\-]{0,61}[a-z0-9])?";

/// The errors of one form, in the order of its fields, so that the first
/// field with an error can take the focus (`autofocus` works without
/// JavaScript).
#[derive(Clone, Default)]
pub(crate) struct FormErrors {
    error: Option<ConsoleError>,
    first: Option<&'static str>,
    /// Values to fill the form with when no error brought any back.
    prefill: Vec<(String, String)>,
}

impl FormErrors {
    /// The error a form's action came back with, if any; `fields` lists the
    /// form's field names top to bottom.
    pub(crate) fn new(error: Option<ConsoleError>, fields: &[&'static str]) -> FormErrors {
        let first = error.as_ref().and_then(|e| fields.iter().copied().find(|name| !e.field_messages(name).is_empty()));
        FormErrors { error, first, prefill: Vec::new() }
    }

    /// The form filled with `values` (input name, value) where an error
    /// brought none back: the form as it was sent for a price estimate.
    pub(crate) fn prefilled(mut self, values: Vec<(String, String)>) -> FormErrors {
        self.prefill = values;
        self
    }

    /// No error at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.error.is_none()
    }

    /// Whether the API named the field `name`.
    pub(crate) fn has_field(&self, name: &str) -> bool {
        !self.messages(name).is_empty()
    }

    /// Whether the field `name` (the API's name) is the first with an error.
    pub(crate) fn is_first(&self, name: &str) -> bool {
        self.first == Some(name)
    }

    /// What the person had typed into the input `name` before the error.
    pub(crate) fn value(&self, name: &str) -> Option<String> {
        self.error
            .as_ref()
            .and_then(|e| e.value(name))
            .or_else(|| self.prefill.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()))
    }

    /// The API's messages for the field `name`.
    pub(crate) fn messages_for(&self, name: &str) -> Vec<String> {
        self.messages(name)
    }

    fn messages(&self, name: &str) -> Vec<String> {
        self.error.as_ref().map(|e| e.field_messages(name)).unwrap_or_default()
    }

    /// The error not tied to a field of this form (shown above it).
    fn general(&self, fields_shown: bool) -> Option<ConsoleError> {
        self.error.clone().filter(|_| !fields_shown || self.first.is_none())
    }
}

/// The form's error of a server action, read from the URL after a
/// no-JavaScript post (Leptos puts it there, sealed; see [`crate::error`]).
pub(crate) fn action_error<T>(value: Option<Result<T, ConsoleError>>) -> Option<ConsoleError> {
    match value {
        Some(Err(error)) => Some(error),
        _ => None,
    }
}

/// The hidden CSRF field every state-changing form carries.
#[component]
pub(crate) fn Csrf() -> impl IntoView {
    let token = request_session().csrf_token();
    view! { <input type="hidden" name="csrf" value=token/> }
}

/// A new idempotency key for a form that creates something: sending the
/// form twice (a double click, a reload) creates it once.
#[component]
pub(crate) fn IdempotencyKey() -> impl IntoView {
    view! { <input type="hidden" name="idempotency_key" value=uuid::Uuid::new_v4().to_string()/> }
}

/// A labelled input with its hint and the API's messages for it (by
/// `error_name`, the API's name of the field, when it differs from the
/// input's), filled in again after an error.
#[component]
pub(crate) fn Field(
    label: &'static str,
    name: &'static str,
    errors: FormErrors,
    #[prop(optional)] error_name: Option<&'static str>,
    #[prop(optional)] kind: Option<&'static str>,
    #[prop(optional, into)] value: Option<String>,
    #[prop(optional)] hint: Option<&'static str>,
    #[prop(optional)] required: bool,
    #[prop(optional)] autocomplete: Option<&'static str>,
    #[prop(optional)] placeholder: Option<&'static str>,
    #[prop(optional)] pattern: Option<&'static str>,
    #[prop(optional)] min: Option<&'static str>,
    #[prop(optional)] max: Option<&'static str>,
) -> impl IntoView {
    let id = format!("field-{}", name.replace(['.', '[', ']'], "-"));
    let error_name = error_name.unwrap_or(name);
    let messages = errors.messages(error_name);
    let value = errors.value(name).or(value);
    let invalid = !messages.is_empty();
    let hint_id = hint.map(|_| format!("{id}-hint"));
    let error_id = invalid.then(|| format!("{id}-error"));
    let described = [hint_id.clone(), error_id.clone()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    let autofocus = errors.first == Some(error_name);
    view! {
        <div class="field" class:invalid=invalid>
            <label for=id.clone()>{label}</label>
            {hint.map(|hint| view! { <p class="hint" id=hint_id.clone()>{hint}</p> })}
            <input
                id=id
                name=name
                type=kind.unwrap_or("text")
                value=value
                required=required
                autocomplete=autocomplete
                placeholder=placeholder
                pattern=pattern
                min=min
                max=max
                autofocus=autofocus
                aria-invalid=invalid.then_some("true")
                aria-describedby=(!described.is_empty()).then_some(described)
            />
            {error_id.map(|error_id| view! {
                <p class="field-error" id=error_id>{messages.join(" ")}</p>
            })}
        </div>
    }
}

/// A labelled text area with its hint and the API's messages for it (for
/// `error_name` and the fields under it); refilled after an error.
#[component]
pub(crate) fn TextArea(
    label: &'static str,
    name: &'static str,
    errors: FormErrors,
    hint: &'static str,
    #[prop(optional)] error_name: Option<&'static str>,
    #[prop(optional, into)] value: Option<String>,
    #[prop(default = 14)] rows: u32,
    /// May be left empty.
    #[prop(optional)]
    optional: bool,
) -> impl IntoView {
    let id = format!("field-{}", name.replace(['.', '[', ']'], "-"));
    let error_name = error_name.unwrap_or(name);
    let messages = errors.messages_for(error_name);
    let invalid = !messages.is_empty();
    let hint_id = format!("{id}-hint");
    let error_id = format!("{id}-error");
    let described = if invalid { format!("{hint_id} {error_id}") } else { hint_id.clone() };
    let value = errors.value(name).or(value).unwrap_or_default();
    view! {
        <div class="field" class:invalid=invalid>
            <label for=id.clone()>{label}</label>
            <p class="hint" id=hint_id>{hint}</p>
            <textarea id=id name=name rows=rows.to_string() spellcheck="false" required=!optional autofocus=errors.is_first(error_name)
                aria-invalid=invalid.then_some("true") aria-describedby=described>{value}</textarea>
            {invalid.then(|| view! { <p class="field-error" id=error_id.clone()>{messages.join(" ")}</p> })}
        </div>
    }
}

/// A labelled checkbox (a confirmation) with the API's or the form's
/// message for it.
#[component]
pub(crate) fn Choice(
    label: &'static str,
    name: &'static str,
    errors: FormErrors,
    #[prop(optional)] required: bool,
) -> impl IntoView {
    let id = format!("field-{name}");
    let messages = errors.messages(name);
    let invalid = !messages.is_empty();
    let error_id = format!("{id}-error");
    view! {
        <div class="choice" class:invalid=invalid>
            <input type="checkbox" id=id.clone() name=name value="yes" required=required autofocus=errors.first == Some(name)
                aria-invalid=invalid.then_some("true") aria-describedby=invalid.then(|| error_id.clone())/>
            <label for=id>{label}</label>
        </div>
        {invalid.then(|| view! { <p class="field-error" id=error_id.clone()>{messages.join(" ")}</p> })}
    }
}

/// The error above a form: what went wrong that no field explains (or a
/// summary pointing at the fields).
#[component]
pub(crate) fn FormAlert(errors: FormErrors, #[prop(default = None)] done: Option<&'static str>) -> impl IntoView {
    let error = errors.general(false);
    let fields = errors.first.is_some();
    view! {
        <div class="live" role="status" aria-live="polite">
            {error.map(|error| view! {
                <div class="alert error" role="alert">
                    <strong>{error.title.clone()}</strong>
                    " "
                    {if fields { "Correct the marked fields and send again.".to_string() } else { error.detail.clone() }}
                    {error.request_id.clone().map(|id| view! { <span class="request-id">" Request id: " <code>{id}</code></span> })}
                </div>
            })}
            {done.map(|done| view! { <div class="alert ok">{done}</div> })}
        </div>
    }
}

/// A cluster's or node pool's phase as a chip, with the stale marker when
/// its region has been silent.
#[component]
pub(crate) fn StatusChip(phase: String, #[prop(optional)] stale: bool) -> impl IntoView {
    let tone = match phase.as_str() {
        "running" | "ready" | "succeeded" => "good",
        "failed" | "error" | "degraded" => "bad",
        "deleting" | "deleted" => "muted",
        _ => "busy",
    };
    view! {
        <span class=format!("chip {tone}")>{phase}</span>
        {stale.then(|| view! {
            <span class="chip stale" title="The region has not reported for a while; this status may be out of date.">"stale"</span>
        })}
    }
}

/// An Operation's state as a chip.
pub(crate) fn operation_chip(status: types::OperationStatus) -> impl IntoView {
    let phase = match status {
        types::OperationStatus::AwaitingApproval => "awaiting approval",
        types::OperationStatus::Pending => "pending",
        types::OperationStatus::Running => "running",
        types::OperationStatus::Succeeded => "succeeded",
        types::OperationStatus::Failed => "failed",
    };
    view! { <StatusChip phase=phase.to_string()/> }
}

/// What a page shows when its data could not be had: the browser goes to
/// sign in when signed out; otherwise the status, what happened and the
/// request id. Never a stack trace.
pub(crate) fn error_view(session: &RequestSession, mut error: ConsoleError) -> AnyView {
    if error.request_id.is_none() {
        error.request_id = session.request_id();
    }
    if error.status == 401 {
        session.redirect_to_sign_in();
        return ().into_any();
    }
    session.set_status(error.status);
    let title = if error.is_not_found() { "Not found".to_string() } else { error.title.clone() };
    let detail = if error.is_not_found() {
        "There is nothing here, or you have no access to it.".to_string()
    } else {
        error.detail.clone()
    };
    view! {
        <Title text=title.clone()/>
        <section class="error-page" role="alert">
            <h1>{title}</h1>
            <p>{detail}</p>
            {error.request_id.map(|id| view! { <p class="request-id">"Request id: " <code>{id}</code></p> })}
            <p><a href="/projects">"Back to your projects"</a></p>
        </section>
    }
    .into_any()
}

/// A price the API gives exactly (`"0.1"`, `"12"`, `"0.1786"`) shown with
/// at least cents (`0.10`, `12.00`, `0.1786`): the API's digits are kept.
pub(crate) fn price(exact: &str) -> String {
    match exact.split_once('.') {
        Some((whole, cents)) if cents.len() < 2 => format!("{whole}.{cents:0<2}"),
        Some(_) => exact.to_string(),
        None => format!("{exact}.00"),
    }
}

/// A relative time, for lists ("3 min ago").
pub(crate) fn ago(at: chrono::DateTime<chrono::Utc>) -> String {
    let seconds = (chrono::Utc::now() - at).num_seconds().max(0);
    match seconds {
        0..5 => "just now".to_string(),
        5..60 => format!("{seconds} s ago"),
        60..3600 => format!("{} min ago", seconds / 60),
        3600..86400 => format!("{} h ago", seconds / 3600),
        _ => at.format("%Y-%m-%d").to_string(),
    }
}

/// A timestamp as people read it, in UTC.
pub(crate) fn when(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// "Next page" and "First page" links for a list whose page token is kept
/// in the URL (`?page=`).
#[component]
pub(crate) fn Pager(base: String, next: Option<String>, #[prop(optional)] paged: bool) -> impl IntoView {
    let next_href = next
        .map(|token| format!("{base}?page={}", form_urlencoded::byte_serialize(token.as_bytes()).collect::<String>()));
    (next_href.is_some() || paged).then(|| {
        view! {
            <nav class="pager" aria-label="Pages">
                {paged.then(|| view! { <a href=base.clone()>"First page"</a> })}
                {next_href.map(|href| view! { <a href=href rel="next">"Next page"</a> })}
            </nav>
        }
    })
}

/// Says that something on the page is changing, as of when the page was
/// made, with a link that shows the latest state. The page never reloads on
/// its own: a timed reload takes a reader's place and focus away (WCAG
/// 2.2.1; axe-core's `meta-refresh`). With the console's script, the page's
/// live parts (`data-live`) follow what they show in place, often while
/// this says something is changing (`data-changing`).
#[component]
pub(crate) fn InProgress(changing: bool, here: String) -> impl IntoView {
    let notice = changing.then(|| {
        let shown_at = chrono::Utc::now().format("%H:%M:%S UTC").to_string();
        view! {
            <p class="alert" role="status" data-changing="">
                {format!("Changes are in progress (shown as of {shown_at}). ")}
                <a href=here>"Refresh"</a>
                " to see the latest state."
            </p>
        }
    });
    view! { <div id="in-progress" data-live="">{notice}</div> }
}

#[cfg(test)]
mod tests {
    #[test]
    fn prices_show_at_least_cents_and_every_digit_the_api_gave() {
        for (exact, shown) in
            [("0.1", "0.10"), ("12", "12.00"), ("0.1786", "0.1786"), ("-100.00", "-100.00"), ("5.", "5.00")]
        {
            assert_eq!(super::price(exact), shown, "{exact}");
        }
    }
}
