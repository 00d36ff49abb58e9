//! Approvals: a change the organization's policy held, with what it would
//! do, approved or rejected by someone other than who asked.

use leptos::prelude::*;
use moke_sdk::types;

use super::{param, query};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::pages::clusters::PlannedOperations;
use crate::session::request_session;
use crate::ui::{Csrf, Field, FormAlert, FormErrors, action_error, error_view, operation_chip, when};

/// Where a change the organization's policy held waits: the approval page
/// of `operation` (an Operation as the API answered it), if it is held.
pub(crate) fn held(operation: &serde_json::Value) -> Option<String> {
    let id = operation["id"].as_str().filter(|_| operation["status"] == "awaiting_approval")?;
    Some(format!("/operations/{}/approval", super::segment(id)))
}

/// Approves or rejects (`decision`) the held change of `operation`.
#[server(prefix = "/console/fn", endpoint = "operation_decide")]
pub async fn operation_decide(
    csrf: String,
    operation: String,
    /// `approve` or `reject`; a form sent without a choice has none.
    decision: Option<String>,
    reason: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let reason = reason.trim();
    let mut fields = super::account::Fields::default();
    let reason = if reason.is_empty() {
        None
    } else {
        fields.parse::<types::ApprovalDecisionReason>("reason", reason, "At most 500 characters.")
    };
    fields.finish()?;
    let body = types::ApprovalDecision { reason };
    let api = session.api().await?;
    let decision = decision.unwrap_or_default();
    match decision.as_str() {
        "approve" => api.operation_approve().operation(&operation).body(body).send().await?,
        "reject" => api.operation_reject().operation(&operation).body(body).send().await?,
        _ => return Err(ConsoleError::new(400, "Bad Request", "choose approve or reject")),
    };
    session.redirect(&format!("/operations/{}/approval?decided={decision}", super::segment(&operation)));
    Ok(())
}

/// `/operations/:operation/approval`: the request, its plan, and the
/// approve and reject forms while it waits.
#[component]
pub fn OperationApproval() -> impl IntoView {
    let decide = ServerAction::<OperationDecide>::new();
    let errors = FormErrors::new(action_error(decide.value().get_untracked()), &["reason"]);
    let operation = param("operation");
    let decided = query("decided");
    let session = request_session();
    let content = {
        let (session, operation) = (session.clone(), operation.clone());
        Suspend::new(async move {
            let viewed = async {
                let api = session.api().await?;
                let approval = api.operation_approval_view().operation(&operation).send().await?.into_inner();
                let op = api.operation_view().operation(&operation).send().await?.into_inner();
                Ok::<_, ConsoleError>((approval, op))
            };
            let (approval, op) = match viewed.await {
                Ok(found) => found,
                Err(error) => return error_view(&session, error),
            };
            let target = format!("{} {}", op.target.type_.replace('_', " "), op.target.name);
            let waiting = approval.state == types::ApprovalState::Awaiting;
            let withdraw = super::lifecycle::operation_path(&operation);
            let decision = approval.decided_by.clone().map(|by| {
                let at = approval.decided_at.map(when).unwrap_or_default();
                let why = approval.reason.clone().map(|r| format!(": {r}")).unwrap_or_default();
                format!("{} by {by} at {at}{why}", approval.state)
            });
            view! {
                <h1>{format!("{} of {target}", op.kind.replace('_', " "))}</h1>
                {decided.filter(|_| !waiting).map(|_| {
                    // Said from the request's state, whatever the address claims.
                    view! { <div class="alert ok" role="status">{format!("The request was {}.", approval.state)}</div> }
                })}
                <dl class="summary">
                    <dt>"Status"</dt><dd>{operation_chip(op.status)}</dd>
                    <dt>"Held by"</dt><dd>{format!("the rule “{}” of policy version {}", approval.rule.to_string().replace('_', " "), approval.policy_version)}</dd>
                    <dt>"Asked by"</dt><dd><code>{approval.requested_by.clone()}</code>" at "{when(approval.requested_at)}</dd>
                    <dt>"Who may decide"</dt><dd>{format!("an organization {} other than who asked", approval.approver_role)}</dd>
                    <dt>"Expires"</dt><dd>{when(approval.expires_at)}</dd>
                    {decision.map(|d| view! { <dt>"Decision"</dt><dd>{d}</dd> })}
                </dl>
                <section class="summary plan" aria-labelledby="plan-title">
                    <h2 id="plan-title">"What it would do"</h2>
                    <p>"As its dry run answered when it was asked for; an approval makes the change on the resource as it is then."</p>
                    <PlannedOperations plan=approval.plan.clone()/>
                </section>
                {waiting.then(|| view! {
                    <FormAlert errors=errors.clone()/>
                    <ActionForm action=decide>
                        <Csrf/>
                        <input type="hidden" name="operation" value=operation.clone()/>
                        <fieldset>
                            <legend>"Your decision"</legend>
                            <div class="choice">
                                <input type="radio" id="decision-approve" name="decision" value="approve" required=true/>
                                <label for="decision-approve">"Approve: make the change now, as me"</label>
                            </div>
                            <div class="choice">
                                <input type="radio" id="decision-reject" name="decision" value="reject" required=true/>
                                <label for="decision-reject">"Reject: it never happens"</label>
                            </div>
                        </fieldset>
                        <Field label="Why (optional)" name="reason" autocomplete="off" errors=errors.clone()/>
                        <button type="submit">"Send the decision"</button>
                    </ActionForm>
                    <p>"Asked for it yourself? Someone else decides; you can "<a href=withdraw.clone()>"withdraw the request"</a>" on its operation's page."</p>
                })}
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Approval request">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
