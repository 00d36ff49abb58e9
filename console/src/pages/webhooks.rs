//! The organization's event webhooks: endpoints (the signing secret shown
//! once), each endpoint's delivery log with every attempt, and redelivery.

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::org::OrgTabs;
use super::{param, query, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::{Flash, request_session};
use crate::ui::{
    Csrf, Field, FormAlert, FormErrors, IdempotencyKey, Pager, StatusChip, action_error, ago, error_view, when,
};

#[server(prefix = "/console/fn", endpoint = "webhook_endpoint_create")]
pub async fn webhook_endpoint_create(
    csrf: String,
    idempotency_key: String,
    url: String,
    event_types: String,
    description: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    // Not the URL: it may hold a secret (a token in its path or user:pass@),
    // and a form's error travels in the page's URL.
    let kept = [("event_types", event_types.as_str()), ("description", description.as_deref().unwrap_or_default())];
    let made = async {
        let mut fields = Fields::default();
        let checked_url = fields.parse::<types::WebhookEndpointCreateUrl>("url", &url, "Enter an https:// URL.");
        let mut patterns = Vec::new();
        for pattern in event_types.split([',', ' ', '\n']).map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(pattern) = fields.parse::<types::EventTypePattern>(
                "event_types",
                pattern,
                "Use patterns like cluster.*, deployment.rollout.* or *.",
            ) {
                patterns.push(pattern);
            }
        }
        if patterns.is_empty() {
            fields.problem("event_types", "Name at least one event pattern, e.g. *.");
        }
        let description = match description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            Some(d) => {
                fields.parse::<types::WebhookEndpointCreateDescription>("description", d, "At most 500 characters.")
            }
            None => None,
        };
        fields.finish()?;
        let body = types::WebhookEndpointCreate {
            description,
            event_types: patterns,
            url: checked_url.expect("finish() refused a missing field"),
        };
        let org = session.acting_organization()?;
        let made = session
            .api()
            .await?
            .webhook_endpoint_create()
            .org(org)
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await?
            .into_inner();
        if !made.secret.is_empty() {
            session.show_once(Flash {
                id: String::new(),
                issued: 0,
                for_path: "/org/webhooks".into(),
                what: "signing secret of the new endpoint".into(),
                secret: made.secret,
                url: None,
            });
        }
        session.redirect("/org/webhooks");
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "webhook_endpoint_delete")]
pub async fn webhook_endpoint_delete(
    csrf: String,
    endpoint: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: no more events go to this endpoint.")?;
    let org = session.acting_organization()?;
    session.api().await?.webhook_endpoint_delete().org(org).endpoint(&endpoint).send().await?;
    session.redirect("/org/webhooks");
    Ok(())
}

/// A new (or rotated) endpoint's signing secret, shown once, with what it
/// is for: not a credential to send, but the key a receiver checks each
/// delivery's signature with.
#[component]
fn SigningSecretOnce(flash: Flash) -> impl IntoView {
    view! {
        <section class="card secret" aria-labelledby="secret-title" role="alert">
            <h2 id="secret-title">{format!("The {}", flash.what)}</h2>
            <p><strong>"Copy it now: it is shown only this once."</strong> " If it is lost, rotate it."</p>
            <div class="field">
                <label for="signing-secret">"Signing secret"</label>
                <input id="signing-secret" readonly=true value=flash.secret autocomplete="off" spellcheck="false" data-copy="signing secret"/>
            </div>
            <p class="hint">"Your receiver checks each delivery with it: the "<code>"webhook-signature"</code>" header signs "<code>"webhook-id.webhook-timestamp.body"</code>" (Standard Webhooks; any of its libraries verifies it). Refuse a delivery whose signature does not match or whose timestamp is more than five minutes old."</p>
            <p><a class="button" href="/org/webhooks">"I have saved it"</a></p>
        </section>
    }
}

/// `/org/webhooks`: the organization's endpoints.
#[component]
pub fn Webhooks() -> impl IntoView {
    let create = ServerAction::<WebhookEndpointCreate>::new();
    let delete = ServerAction::<WebhookEndpointDelete>::new();
    let errors = FormErrors::new(action_error(create.value().get_untracked()), &["url", "event_types", "description"]);
    let delete_errors = FormErrors::new(action_error(delete.value().get_untracked()), &[]);
    let session = request_session();
    let flash = session.take_flash();
    let content = {
        let session = session.clone();
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                Ok::<_, ConsoleError>(
                    api.webhook_endpoint_list().org(org).limit(100u32).send().await?.into_inner().items,
                )
            };
            let endpoints = match fetched.await {
                Ok(endpoints) => endpoints,
                Err(error) => return error_view(&session, error),
            };
            view! {
                <h1>"Event webhooks"</h1>
                <OrgTabs current="webhooks"/>
                {flash.map(|flash| view! { <SigningSecretOnce flash=flash/> })}
                <p class="hint">"Moke posts signed events (Standard Webhooks) to these URLs when clusters, node pools, deployments and operations change."</p>
                <FormAlert errors=delete_errors.clone()/>
                {if endpoints.is_empty() {
                    view! { <p class="empty">"No endpoints yet."</p> }.into_any()
                } else {
                    view! {
                        <table>
                            <caption class="visually-hidden">"Endpoints"</caption>
                            <thead><tr><th scope="col">"URL"</th><th scope="col">"Events"</th><th scope="col">"State"</th><th scope="col">"Delete"</th></tr></thead>
                            <tbody>
                                {endpoints.into_iter().map(|e| {
                                    let id = e.id.to_string();
                                    let confirm_id = format!("delete-{id}");
                                    let state = match (&e.disabled_at, &e.failing_since) {
                                        (Some(_), _) => format!("disabled: {}", e.disabled_reason.clone().unwrap_or_default()),
                                        (None, Some(since)) => format!("failing since {}", when(*since)),
                                        (None, None) => "delivering".to_string(),
                                    };
                                    view! {
                                        <tr>
                                            <td><a href=format!("/org/webhooks/{}", segment(&id))>{e.url.clone()}</a></td>
                                            <td>{e.event_types.join(", ")}</td>
                                            <td>{state}</td>
                                            <td>
                                                <ActionForm action=delete>
                                                    <Csrf/>
                                                    <input type="hidden" name="endpoint" value=id.clone()/>
                                                    <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                                                    <label for=confirm_id>"Sure"</label>
                                                    <button type="submit" class="danger">"Delete"</button>
                                                </ActionForm>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                }}
                <section class="card" aria-labelledby="new-endpoint">
                    <h2 id="new-endpoint">"Add an endpoint"</h2>
                    <FormAlert errors=errors.clone()/>
                    <ActionForm action=create>
                        <Csrf/>
                        <IdempotencyKey/>
                        <Field label="URL" name="url" kind="url" placeholder="https://hooks.example.com/moke" required=true errors=errors.clone()/>
                        <Field label="Events" name="event_types" value="*" hint="Comma-separated patterns: cluster.*, nodepool.*, deployment.rollout.*, operation.*, or * for all." required=true errors=errors.clone()/>
                        <Field label="Description (optional)" name="description" errors=errors.clone()/>
                        <button type="submit">"Add endpoint"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Event webhooks">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

#[server(prefix = "/console/fn", endpoint = "webhook_redeliver")]
pub async fn webhook_redeliver(
    csrf: String,
    idempotency_key: String,
    endpoint: String,
    event_id: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let event = fields.parse::<types::RedeliveryCreateEventId>("event_id", &event_id, "Not an event id.");
    fields.finish()?;
    let org = session.acting_organization()?;
    session
        .api()
        .await?
        .webhook_redelivery_create()
        .org(org)
        .endpoint(&endpoint)
        .idempotency_key(idempotency_key)
        .body(types::RedeliveryCreate { event_id: event.expect("finish() refused a missing field") })
        .send()
        .await?;
    session.redirect(&format!("/org/webhooks/{}?redelivered=1", segment(&endpoint)));
    Ok(())
}

/// `/org/webhooks/:endpoint`: the endpoint's deliveries, every attempt, redelivery.
#[component]
pub fn WebhookDeliveries() -> impl IntoView {
    let redeliver = ServerAction::<WebhookRedeliver>::new();
    let errors = FormErrors::new(action_error(redeliver.value().get_untracked()), &[]);
    let endpoint = param("endpoint");
    let page = query("page");
    let redelivered = query("redelivered").is_some();
    let session = request_session();
    let content = {
        let (session, endpoint) = (session.clone(), endpoint.clone());
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                let mut call = api.webhook_delivery_list().org(org).endpoint(&endpoint).limit(25u32);
                if let Some(token) = page.clone() {
                    call = call.page_token(token);
                }
                Ok::<_, ConsoleError>(call.send().await?.into_inner())
            };
            let listed = match fetched.await {
                Ok(listed) => listed,
                Err(error) => return error_view(&session, error),
            };
            let base = format!("/org/webhooks/{}", segment(&endpoint));
            view! {
                <h1>"Deliveries"</h1>
                <FormAlert errors=errors.clone() done=redelivered.then_some("Sent again.")/>
                {if listed.items.is_empty() {
                    view! { <p class="empty">"No events have been sent to this endpoint yet."</p> }.into_any()
                } else {
                    view! {
                        <table>
                            <caption class="visually-hidden">"Deliveries"</caption>
                            <thead><tr><th scope="col">"Event"</th><th scope="col">"Status"</th><th scope="col">"Attempts"</th><th scope="col">"When"</th><th scope="col">"Again"</th></tr></thead>
                            <tbody>
                                {listed.items.into_iter().map(|d| {
                                    let endpoint = endpoint.clone();
                                    let event = d.event_id.to_string();
                                    let attempts = d.attempts.iter().map(|a| {
                                        let outcome = a.status_code.map_or_else(|| a.error.clone().unwrap_or_default(), |code| format!("HTTP {code}"));
                                        format!("#{} {} ({} ms)", a.attempt, outcome, a.latency_ms)
                                    }).collect::<Vec<_>>().join("; ");
                                    view! {
                                        <tr>
                                            <td><code>{d.event_type.clone()}</code><br/><span class="muted">{event.clone()}</span></td>
                                            <td><StatusChip phase=d.status.clone()/></td>
                                            <td>{attempts}</td>
                                            <td>{ago(d.created_at)}</td>
                                            <td>
                                                <ActionForm action=redeliver>
                                                    <Csrf/>
                                                    <IdempotencyKey/>
                                                    <input type="hidden" name="endpoint" value=endpoint/>
                                                    <input type="hidden" name="event_id" value=event.clone()/>
                                                    <button type="submit" class="secondary" aria-label=format!("Send {event} again")>"Redeliver"</button>
                                                </ActionForm>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                }}
                <Pager base=base next=listed.next_page paged=page.is_some()/>
            }
            .into_any()
        })
    };
    let crumbs = vec![("Event webhooks".to_string(), "/org/webhooks".to_string())];
    view! {
        <Frame title="Deliveries" crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
