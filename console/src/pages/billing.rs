//! Billing: this month's usage and balance, the invoices with their lines
//! and PDF and CSV downloads, budgets, the plan, and the credits. Reading billing needs the
//! `read_billing` permission (owners, admins, the billing role); others
//! get the API's refusal as a page.

use std::sync::Arc;

use chrono::Datelike;

use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::org::OrgTabs;
use super::projects::PAGE_SIZE;
use super::{param, query, segment};
use crate::Console;
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::{RequestSession, request_session};
use crate::ui::{Csrf, Field, FormAlert, FormErrors, IdempotencyKey, Pager, action_error, error_view};

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

#[server(prefix = "/console/fn", endpoint = "billing_plan_change")]
pub async fn billing_plan_change(csrf: String, plan: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let org = session.acting_organization()?;
    let body = types::PlanChange { plan: plan.parse().map_err(|_| ConsoleError::invalid(Vec::new()))? };
    session.api().await?.billing_plan_update().org(org).body(body).send().await?;
    session.redirect("/org/billing?plan_changed=1");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "budget_create")]
pub async fn budget_create(
    csrf: String,
    idempotency_key: String,
    name: String,
    amount: String,
    thresholds: String,
    basis: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("name", name.as_str()), ("amount", amount.as_str()), ("thresholds", thresholds.as_str())];
    let made = async {
        let mut fields = Fields::default();
        let budget_name =
            fields.parse::<types::BudgetCreateName>("name", &name, "1 to 100 characters, no control characters.");
        let budget_amount =
            fields.parse::<types::BudgetCreateAmount>("amount", &amount, "An amount such as 250.00, more than 0.");
        let mut percents = Vec::new();
        for percent in thresholds.split([',', ' ', '%']).map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(percent) =
                fields.parse::<std::num::NonZeroU32>("thresholds", percent, "Percents such as 50, 90, 100.")
            {
                percents.push(percent);
            }
        }
        let basis = match basis.as_str() {
            "forecast" => types::BudgetBasis::Forecast,
            _ => types::BudgetBasis::Spend,
        };
        fields.finish()?;
        let body = types::BudgetCreate {
            amount: budget_amount.expect("finish() refused a missing field"),
            basis: Some(basis),
            name: budget_name.expect("finish() refused a missing field"),
            thresholds: (!percents.is_empty()).then(|| types::BudgetThresholds::from(percents)),
        };
        let org = session.acting_organization()?;
        session.api().await?.budget_create().org(org).idempotency_key(idempotency_key).body(body).send().await?;
        session.redirect("/org/billing#budgets-title");
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "budget_delete")]
pub async fn budget_delete(csrf: String, budget: String, confirm: Option<String>) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: the budget and its alerts go.")?;
    let org = session.acting_organization()?;
    session.api().await?.budget_delete().org(org).budget(&budget).send().await?;
    session.redirect("/org/billing#budgets-title");
    Ok(())
}

/// `/org/billing?page=`: the month so far, the invoices, the credits.
#[component]
pub fn Billing() -> impl IntoView {
    let change_plan = ServerAction::<BillingPlanChange>::new();
    let create_budget = ServerAction::<BudgetCreate>::new();
    let delete_budget = ServerAction::<BudgetDelete>::new();
    let plan_errors = FormErrors::new(action_error(change_plan.value().get_untracked()), &["plan"]);
    let budget_errors =
        FormErrors::new(action_error(create_budget.value().get_untracked()), &["name", "amount", "thresholds"]);
    let delete_errors = FormErrors::new(action_error(delete_budget.value().get_untracked()), &[]);
    // Not after a refused change (its error comes back to the same URL).
    let plan_changed = query("plan_changed").is_some() && plan_errors.is_empty();
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
                let plan = api.billing_plan_view().org(&org).send().await?.into_inner();
                let plans = api.plan_list().send().await?.into_inner();
                let budgets = api.budget_list().org(&org).limit(100u32).send().await?.into_inner();
                // The whole month, so each day has its place whatever the date.
                let today = chrono::Utc::now().date_naive();
                let month = today.with_day(1).unwrap_or(today);
                let next = month.checked_add_months(chrono::Months::new(1)).unwrap_or(today);
                // A month too busy to chart (the report's row cap) leaves the rest of the page as it is.
                let usage =
                    api.billing_usage_view().org(&org).start(month).end(next).send().await.ok().map(|u| u.into_inner());
                Ok::<_, ConsoleError>((balance, invoices, credits, plan, plans, budgets, usage))
            };
            let (balance, invoices, credits, plan, plans, budgets, usage) = match fetched.await {
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
                {usage.map(|usage| view! { <UsageChart usage=usage/> })}
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
                <Budgets budgets=budgets.items create=create_budget delete=delete_budget
                    errors=budget_errors.clone() delete_errors=delete_errors.clone()/>
                <Plans current=plan plans=plans change=change_plan errors=plan_errors.clone() changed=plan_changed/>
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

/// This month's usage by day as an SVG bar chart, each bar titled with its
/// day and amount (the figures are also `GET …/billing/usage[/csv]`).
#[component]
fn UsageChart(usage: types::UsageReport) -> impl IntoView {
    let amount = |text: &str| text.parse::<f64>().unwrap_or(0.0);
    let highest = usage.days.iter().map(|d| amount(&d.amount)).fold(0.0_f64, f64::max);
    let days = (usage.end - usage.start).num_days().max(1);
    let width = 100.0 / days as f64;
    let bars = usage
        .days
        .iter()
        .map(|day| {
            let x = (day.day - usage.start).num_days() as f64 * width;
            let height = if highest > 0.0 { amount(&day.amount) / highest * 40.0 } else { 0.0 };
            let title = format!("{}: {}", day.day.format("%b %-d"), money(&day.amount, &usage.currency));
            view! {
                <rect x=format!("{:.2}", x + width * 0.1) y=format!("{:.2}", 40.0 - height) width=format!("{:.2}", width * 0.8)
                    height=format!("{height:.2}") class="meter-fill"><title>{title}</title></rect>
            }
        })
        .collect_view();
    let summary = format!(
        "Usage in {}: {} at list price so far, the most on one day {}.",
        usage.start.format("%B %Y"),
        money(&usage.total, &usage.currency),
        money(&format!("{highest:.2}"), &usage.currency)
    );
    view! {
        <section aria-labelledby="usage-title">
            <h2 id="usage-title">"Usage by day"</h2>
            {if usage.days.is_empty() {
                view! { <p class="empty">"No usage this month yet."</p> }.into_any()
            } else {
                view! {
                    <figure class="usage-chart">
                        <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label=summary.clone()>
                            <rect x="0" y="0" width="100" height="40" class="meter-track"/>
                            {bars}
                        </svg>
                        <figcaption class="hint">{summary}</figcaption>
                    </figure>
                }.into_any()
            }}
        </section>
    }
}

/// The quota limits a plan lists, in the order people compare plans by.
const PLAN_LIMITS: [(&str, &str); 4] = [
    ("clusters", "Clusters"),
    ("nodes", "Nodes"),
    ("vcpus", "vCPUs"),
    ("node_pools_per_cluster", "Node pools a cluster"),
];

/// The organization's budgets with their alerts, and the form that adds one.
#[component]
fn Budgets(
    budgets: Vec<types::BudgetView>,
    create: ServerAction<BudgetCreate>,
    delete: ServerAction<BudgetDelete>,
    errors: FormErrors,
    delete_errors: FormErrors,
) -> impl IntoView {
    let none = budgets.is_empty();
    let rows = budgets
        .into_iter()
        .map(|budget| {
            let id = budget.id.to_string();
            let confirm_id = format!("delete-{id}");
            let basis = match budget.basis {
                types::BudgetBasis::Forecast => "forecast for the month",
                types::BudgetBasis::Spend => "spend so far",
            };
            let fired: Vec<String> = budget.alerts.iter().map(|a| format!("{}%", a.threshold)).collect();
            let thresholds: Vec<String> = budget.thresholds.iter().map(|t| format!("{t}%")).collect();
            view! {
                <tr>
                    <td>{budget.name.clone()}</td>
                    <td class="number">{money(budget.amount.as_str(), &budget.currency)}</td>
                    <td>{format!("{} of the {basis}", thresholds.join(", "))}</td>
                    <td class="number">{money(budget.spend.as_str(), &budget.currency)}</td>
                    <td class="number">{money(budget.forecast.as_str(), &budget.currency)}</td>
                    <td>{if fired.is_empty() { "none yet".to_string() } else { fired.join(", ") }}</td>
                    <td>
                        <ActionForm action=delete>
                            <Csrf/>
                            <input type="hidden" name="budget" value=id.clone()/>
                            <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                            <label for=confirm_id>"Sure"</label>
                            <button type="submit" class="danger">"Delete"</button>
                        </ActionForm>
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section aria-labelledby="budgets-title">
            <h2 id="budgets-title">"Budgets"</h2>
            <p class="hint">"A budget alerts owners and billing members by mail, and endpoints subscribed to budget.*, once a month at each threshold. It never stops anything."</p>
            <FormAlert errors=delete_errors/>
            {if none {
                view! { <p class="empty">"No budgets yet. Add one to hear before the month costs more than you planned."</p> }.into_any()
            } else {
                view! {
                    <table>
                        <thead><tr><th scope="col">"Budget"</th><th scope="col">"A month"</th><th scope="col">"Alerts at"</th>
                            <th scope="col">"Spent"</th><th scope="col">"Forecast"</th><th scope="col">"Alerted"</th><th scope="col">"Delete"</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                }.into_any()
            }}
            <section class="card" aria-labelledby="new-budget">
                <h3 id="new-budget">"Add a budget"</h3>
                <FormAlert errors=errors.clone()/>
                <ActionForm action=create>
                    <Csrf/>
                    <IdempotencyKey/>
                    <Field label="Name" name="name" required=true errors=errors.clone()/>
                    <Field label="Amount a month" name="amount" placeholder="250.00" hint="In the currency of your invoices." required=true errors=errors.clone()/>
                    <Field label="Alert at (percent)" name="thresholds" value="50, 90, 100" hint="Comma-separated percents of the amount." errors=errors.clone()/>
                    <fieldset>
                        <legend>"Compare with"</legend>
                        <div class="choice">
                            <input type="radio" id="basis-spend" name="basis" value="spend" checked=true/>
                            <label for="basis-spend">"What the month has cost so far"</label>
                        </div>
                        <div class="choice">
                            <input type="radio" id="basis-forecast" name="basis" value="forecast"/>
                            <label for="basis-forecast">"The month's forecast (its spend so far, carried on to the month's end)"</label>
                        </div>
                    </fieldset>
                    <button type="submit">"Add budget"</button>
                </ActionForm>
            </section>
        </section>
    }
}

/// The organization's plan, the plans on offer, and the form that changes it.
#[component]
fn Plans(
    current: types::OrgPlanView,
    plans: Vec<types::PlanView>,
    change: ServerAction<BillingPlanChange>,
    errors: FormErrors,
    changed: bool,
) -> impl IntoView {
    let current_id = current.plan.id.clone();
    let header =
        PLAN_LIMITS.iter().map(|(_, label)| view! { <th scope="col" class="number">{*label}</th> }).collect_view();
    let rows = plans
        .into_iter()
        .map(|plan| {
            let radio = format!("plan-{}", plan.id);
            let is_current = plan.id == current_id;
            let through_sales = !plan.self_serve && !is_current;
            let limits = PLAN_LIMITS
                .iter()
                .map(|(quota, _)| {
                    let limit = plan.limits.get(*quota).map(|l| l.to_string()).unwrap_or_default();
                    view! { <td class="number">{limit}</td> }
                })
                .collect_view();
            view! {
                <tr>
                    <td>
                        <input type="radio" id=radio.clone() name="plan" value=plan.id.clone() checked=is_current disabled=through_sales/>
                        <label for=radio>{plan.display_name.clone()}{is_current.then_some(" (current)")}{through_sales.then_some(" (through sales)")}</label>
                    </td>
                    <td>{plan.description.clone()}</td>
                    {limits}
                </tr>
            }
        })
        .collect_view();
    view! {
        <section aria-labelledby="plan-title">
            <h2 id="plan-title">"Plan"</h2>
            {changed.then(|| view! { <p class="alert ok" role="status">{format!("You are now on the {} plan.", current.plan.display_name)}</p> })}
            <p class="hint">"Plans set your organization's quotas (see Quotas). Moving to a smaller plan waits until you use no more than it allows."</p>
            <FormAlert errors=errors.clone()/>
            <ActionForm action=change>
                <Csrf/>
                <table>
                    <thead><tr><th scope="col">"Plan"</th><th scope="col">"For"</th>{header}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <button type="submit">"Change plan"</button>
            </ActionForm>
        </section>
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
                        (
                            format!("{} {}", line.quantity.as_str(), line.unit),
                            crate::ui::price(line.unit_price.as_str()),
                        )
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
                {invoice.replaced_by.as_ref().map(|replacement| view! {
                    <p class="alert" role="status">
                        {format!("Void: {}. ", invoice.void_reason.clone().unwrap_or_default())}
                        <a href=format!("/org/billing/invoices/{}", segment(replacement))>"The invoice issued in its place"</a>
                    </p>
                })}
                {invoice.replaces.as_ref().map(|replaced| view! {
                    <p class="hint">"Issued in place of "
                        <a href=format!("/org/billing/invoices/{}", segment(replaced))>"a void invoice"</a> "."</p>
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
