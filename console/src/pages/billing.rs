//! Billing: this month's usage and balance, the credits, and the invoices
//! with their lines and PDF and CSV downloads. Reading billing needs the
//! `read_billing` permission (owners, admins, the billing role); others
//! get the API's refusal as a page.

use std::sync::Arc;

use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use leptos::prelude::*;
use moke_sdk::types;

use super::org::OrgTabs;
use super::projects::PAGE_SIZE;
use super::{param, query, segment};
use crate::Console;
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::{RequestSession, request_session};
use crate::ui::{Pager, error_view};

/// `12.50 USD`.
fn money(amount: &str, currency: &str) -> String {
    format!("{amount} {currency}")
}

/// `December 2026`.
fn month(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%B %Y").to_string()
}

fn status_chip(status: types::InvoiceStatus) -> impl IntoView {
    let (text, tone) = match status {
        types::InvoiceStatus::Draft => ("draft", "busy"),
        types::InvoiceStatus::Finalized => ("finalized", "good"),
        types::InvoiceStatus::Void => ("void", "muted"),
    };
    view! { <span class=format!("chip {tone}")>{text}</span> }
}

/// `/org/billing?page=`: the month so far, the invoices, the credits.
#[component]
pub fn Billing() -> impl IntoView {
    let session = request_session();
    let page = query("page");
    let content = {
        let (session, page) = (session.clone(), page.clone());
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                let balance = api.billing_balance_view().org(&org).send().await?.into_inner();
                let mut invoices = api.invoice_list().org(&org).limit(PAGE_SIZE);
                if let Some(token) = page.clone() {
                    invoices = invoices.page_token(token);
                }
                // A stale or altered page token shows the newest page.
                let invoices = match invoices.send().await {
                    Ok(listed) => listed.into_inner(),
                    Err(_) if page.is_some() => {
                        api.invoice_list().org(&org).limit(PAGE_SIZE).send().await?.into_inner()
                    }
                    Err(error) => return Err(error.into()),
                };
                let credits = api.credit_grant_list().org(&org).limit(PAGE_SIZE).send().await?.into_inner();
                Ok::<_, ConsoleError>((balance, invoices, credits))
            };
            let (balance, invoices, credits) = match fetched.await {
                Ok(fetched) => fetched,
                Err(error) => return error_view(&session, error),
            };
            let currency = balance.currency.clone();
            let shown_at = balance.generated_at.format("%Y-%m-%d %H:%M UTC").to_string();
            let invoice_rows = invoices
                .items
                .iter()
                .map(|invoice| {
                    let href = format!("/org/billing/invoices/{}", segment(&invoice.id));
                    let number = invoice.number.as_ref().map(|n| n.to_string()).unwrap_or_else(|| "—".into());
                    view! {
                        <tr>
                            <td><a href=href.clone()>{month(invoice.period_start)}</a></td>
                            <td>{number}</td>
                            <td>{status_chip(invoice.status)}</td>
                            <td class="number">{money(&invoice.subtotal, &invoice.currency)}</td>
                            <td class="number">{money(&invoice.credits, &invoice.currency)}</td>
                            <td class="number">{money(&invoice.total, &invoice.currency)}</td>
                            <td><a href=format!("{href}/csv") download="">"CSV"</a></td>
                        </tr>
                    }
                })
                .collect_view();
            let credit_rows = credits.items.iter().map(|grant| {
                let expires = grant.expires_at.map_or_else(|| "never".to_string(), |at| at.format("%Y-%m-%d").to_string());
                view! {
                    <tr>
                        <td>{grant.description.clone()}</td>
                        <td>{grant.kind.to_string()}</td>
                        <td>{grant.granted_at.format("%Y-%m-%d").to_string()}</td>
                        <td>{expires}</td>
                        <td class="number">{format!("{} of {}", money(&grant.remaining, &currency), grant.amount.as_str())}</td>
                    </tr>
                }
            }).collect_view();
            let no_invoices = invoices.items.is_empty();
            let no_credits = credits.items.is_empty();
            view! {
                <h1>"Billing"</h1>
                <OrgTabs current="billing"/>
                <section class="summary" aria-label="This month">
                    <dl>
                        <div><dt>"Usage this month"</dt><dd>{money(&balance.month_to_date_usage, &currency)}</dd></div>
                        <div><dt>"Credits left"</dt><dd>{money(&balance.credits_remaining, &currency)}</dd></div>
                        <div><dt>"This month after credits"</dt><dd>{money(&balance.month_to_date_balance, &currency)}</dd></div>
                    </dl>
                    <p class="hint">{format!("As of {shown_at}. Each month's invoice is finalized two days after it ends.")}</p>
                </section>
                <section aria-labelledby="invoices-title">
                    <h2 id="invoices-title">"Invoices"</h2>
                    {if no_invoices {
                        view! { <p class="empty">"No invoices yet. Once your clusters run, this month's usage shows here as a draft invoice."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <thead><tr><th scope="col">"Month"</th><th scope="col">"Number"</th><th scope="col">"Status"</th><th scope="col">"Usage"</th><th scope="col">"Credits"</th><th scope="col">"Total"</th><th scope="col">"Download"</th></tr></thead>
                                <tbody>{invoice_rows}</tbody>
                            </table>
                        }.into_any()
                    }}
                    <Pager base="/org/billing".to_string() next=invoices.next_page.clone() paged=page.is_some()/>
                </section>
                <section aria-labelledby="credits-title">
                    <h2 id="credits-title">"Credits"</h2>
                    {if no_credits {
                        view! { <p class="empty">"No credits."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <thead><tr><th scope="col">"Credit"</th><th scope="col">"Kind"</th><th scope="col">"Granted"</th><th scope="col">"Expires"</th><th scope="col">"Left"</th></tr></thead>
                                <tbody>{credit_rows}</tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Billing">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// `/org/billing/invoices/:invoice`: one invoice and its lines.
#[component]
pub fn Invoice() -> impl IntoView {
    let session = request_session();
    let id = param("invoice");
    let content = {
        let (session, id) = (session.clone(), id.clone());
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                Ok::<_, ConsoleError>(api.invoice_view().org(&org).invoice(&id).send().await?.into_inner())
            };
            let invoice = match fetched.await {
                Ok(invoice) => invoice,
                Err(error) => return error_view(&session, error),
            };
            let currency = invoice.currency.clone();
            let title = match &invoice.number {
                Some(number) => format!("Invoice {}", number.as_str()),
                None => format!("Draft invoice, {}", month(invoice.period_start)),
            };
            let draft = invoice.status == types::InvoiceStatus::Draft;
            let files = format!("/org/billing/invoices/{}", segment(&invoice.id));
            let lines = invoice
                .lines
                .iter()
                .map(|line| {
                    let what = match line.kind {
                        types::InvoiceLineKind::Adjustment => {
                            format!("{} (adjustment for {})", line.product, month(line.start))
                        }
                        _ => line.product.clone(),
                    };
                    let resource =
                        if line.resource_name.is_empty() { "—".to_string() } else { line.resource_name.clone() };
                    // A credit is an amount, not a quantity at a price.
                    let (quantity, unit_price) = if line.kind == types::InvoiceLineKind::Credit {
                        (String::new(), String::new())
                    } else {
                        (format!("{} {}", line.quantity.as_str(), line.unit), line.unit_price.as_str().to_string())
                    };
                    view! {
                        <tr>
                            <td>{what}</td>
                            <td>{if line.project.is_empty() { "—".to_string() } else { line.project.clone() }}</td>
                            <td>{resource}</td>
                            <td class="number">{quantity}</td>
                            <td class="number">{unit_price}</td>
                            <td class="number">{money(&line.amount, &currency)}</td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <h1>{title}</h1>
                <OrgTabs current="billing"/>
                <p><a href="/org/billing">"All invoices"</a></p>
                {draft.then(|| view! {
                    <p class="alert" role="status">"A draft: it changes as usage arrives until it is finalized, two days after the month ends. Credits show as they would apply now."</p>
                })}
                <section class="summary" aria-label="Summary">
                    <dl>
                        <div><dt>"Status"</dt><dd>{status_chip(invoice.status)}</dd></div>
                        <div><dt>"Period"</dt><dd>{format!("{} to {} (UTC)", invoice.period_start.format("%Y-%m-%d"), (invoice.period_end - chrono::Duration::days(1)).format("%Y-%m-%d"))}</dd></div>
                        <div><dt>"Usage"</dt><dd>{money(&invoice.subtotal, &currency)}</dd></div>
                        <div><dt>"Credits"</dt><dd>{money(&invoice.credits, &currency)}</dd></div>
                        <div><dt>"Total"</dt><dd>{money(&invoice.total, &currency)}</dd></div>
                    </dl>
                    <p class="actions">
                        <a class="button" href=format!("{files}/pdf") download="">"Download PDF"</a>
                        " "
                        <a class="button secondary" href=format!("{files}/csv") download="">"Download CSV"</a>
                    </p>
                </section>
                <section aria-labelledby="lines-title">
                    <h2 id="lines-title">"Lines"</h2>
                    <table>
                        <thead><tr><th scope="col">"Product"</th><th scope="col">"Project"</th><th scope="col">"Resource"</th><th scope="col">"Quantity"</th><th scope="col">"Unit price"</th><th scope="col">"Amount"</th></tr></thead>
                        <tbody>{lines}</tbody>
                    </table>
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Invoice">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// `GET /org/billing/invoices/{invoice}/csv` (and `…/pdf` below): the invoice as a CSV or
/// PDF download, under the name the API gives it.
pub(crate) async fn invoice_csv_download(
    console: axum::Extension<Arc<Console>>,
    invoice: Path<String>,
    request: axum::extract::Request,
) -> Response {
    invoice_download(console, invoice, "csv", request).await
}

/// `GET /org/billing/invoices/{invoice}/pdf`.
pub(crate) async fn invoice_pdf_download(
    console: axum::Extension<Arc<Console>>,
    invoice: Path<String>,
    request: axum::extract::Request,
) -> Response {
    invoice_download(console, invoice, "pdf", request).await
}

async fn invoice_download(
    axum::Extension(console): axum::Extension<Arc<Console>>,
    Path(invoice): Path<String>,
    format: &'static str,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let (session, response) = RequestSession::outside_leptos(console, &parts);
    let fetched = async {
        let org = session.acting_organization()?;
        let api = session.api().await?;
        let answer = if format == "csv" {
            api.invoice_csv_view().org(&org).invoice(&invoice).send().await?
        } else {
            api.invoice_pdf_view().org(&org).invoice(&invoice).send().await?
        };
        let name: String = answer
            .headers()
            .get(http::header::CONTENT_DISPOSITION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split("filename=\"").nth(1))
            .map(|rest| {
                rest.trim_end_matches('"').chars().filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c)).collect()
            })
            .unwrap_or_else(|| format!("invoice.{format}"));
        Ok::<_, ConsoleError>((name, answer.into_inner()))
    };
    let answer = match fetched.await {
        Ok((name, body)) => (
            [
                (
                    http::header::CONTENT_TYPE,
                    if format == "csv" { "text/csv; charset=utf-8" } else { "application/pdf" }.to_string(),
                ),
                (http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
                (http::header::CACHE_CONTROL, "no-store".to_string()),
            ],
            axum::body::Body::from_stream(body.into_inner()),
        )
            .into_response(),
        Err(error) if error.status == 401 => {
            let next: String = form_urlencoded::byte_serialize(parts.uri.path().as_bytes()).collect();
            (http::StatusCode::SEE_OTHER, [(http::header::LOCATION, format!("/signin?next={next}"))]).into_response()
        }
        Err(error) => {
            let status = http::StatusCode::from_u16(error.status).unwrap_or(http::StatusCode::BAD_GATEWAY);
            let text = if error.is_not_found() {
                "Not found.".to_string()
            } else {
                format!("{}: {}", error.title, error.detail)
            };
            (status, text).into_response()
        }
    };
    RequestSession::with_cookie(&response, answer)
}
