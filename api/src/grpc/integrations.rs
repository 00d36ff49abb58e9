//! `DeployHookService` and `WebhookService`: a project's deploy webhooks
//! and deploy policy, an organization's event webhook endpoints and their
//! deliveries. Extract, call the app-layer function REST calls, convert.

use moke_proto::v1::*;
use tonic::{Request, Response, Status};

use super::convert::{opt_timestamp, timestamp};
use super::services::{Api, Reply, id, if_match, mask_paths};
use super::{context, convert, page, status};
use crate::app::{Error, ResourceRef};
use crate::model;

// ---------------------------------------------------------------- conversions

fn hook_target(t: model::HookTarget) -> DeployHookTarget {
    DeployHookTarget { cluster: t.cluster, namespace: t.namespace, deployment: t.deployment }
}

/// A target from a request; an empty namespace is REST's default.
fn hook_target_in(t: DeployHookTarget) -> model::HookTarget {
    let namespace = if t.namespace.is_empty() { "default".to_string() } else { t.namespace };
    model::HookTarget { cluster: t.cluster, namespace, deployment: t.deployment }
}

fn hook_rule(r: model::HookRule) -> DeployHookRule {
    DeployHookRule { repository: r.repository, image_prefix: r.image_prefix, target: Some(hook_target(r.target)) }
}

/// A rule from a request: its target is required, as in the REST body.
fn hook_rule_in(i: usize, r: DeployHookRule) -> Result<model::HookRule, Status> {
    let target = r.target.ok_or_else(|| {
        status(Error::invalid_field(&format!("rules[{i}].target"), "required", "the deployment the rule changes"))
    })?;
    Ok(model::HookRule { repository: r.repository, image_prefix: r.image_prefix, target: hook_target_in(target) })
}

fn deploy_hook(h: model::DeployHookView) -> DeployHook {
    DeployHook {
        id: h.id.to_string(),
        project_id: h.project_id.to_string(),
        name: h.name,
        deployment_id: h.deployment_id.map(|d| d.to_string()),
        rules: h.rules.into_iter().map(hook_rule).collect(),
        image_template: h.image_template,
        url: h.url,
        previous_secret_expire_time: opt_timestamp(h.previous_secret_expires_at),
        create_time: Some(timestamp(h.created_at)),
        last_delivery_time: opt_timestamp(h.last_delivery_at),
    }
}

fn deploy_policy(p: model::DeployPolicyView) -> DeployPolicy {
    DeployPolicy {
        allowed_image_prefixes: p.allowed_image_prefixes,
        allowed_branches: p.allowed_branches,
        etag: p.etag,
        update_time: opt_timestamp(p.updated_at),
    }
}

/// A whole number of seconds from a `google.protobuf.Duration`; the range
/// is the app's to check.
fn whole_seconds(field: &str, d: prost_types::Duration) -> Result<i64, Status> {
    if d.nanos != 0 {
        return Err(status(Error::invalid_field(field, "invalid", "a whole number of seconds")));
    }
    Ok(d.seconds)
}

/// A deploy policy is written whole (REST's PUT): the mask is unset, `*`,
/// or names both of its fields.
fn whole_policy_mask(mask: Option<prost_types::FieldMask>) -> Result<(), Status> {
    const FIELDS: [&str; 2] = ["allowed_image_prefixes", "allowed_branches"];
    let paths = mask.map(|m| m.paths).unwrap_or_default();
    let whole = paths.is_empty()
        || paths.iter().all(|p| p == "*")
        || (FIELDS.iter().all(|f| paths.iter().any(|p| p == f)) && paths.iter().all(|p| FIELDS.contains(&p.as_str())));
    if whole {
        Ok(())
    } else {
        Err(status(Error::invalid_field(
            "update_mask",
            "invalid",
            "the policy is replaced whole: name allowed_image_prefixes and allowed_branches, or *",
        )))
    }
}

fn webhook_endpoint(e: model::WebhookEndpointView) -> WebhookEndpoint {
    WebhookEndpoint {
        id: e.id.to_string(),
        url: e.url,
        description: e.description,
        event_types: e.event_types,
        failing_since_time: opt_timestamp(e.failing_since),
        disable_time: opt_timestamp(e.disabled_at),
        disabled_reason: e.disabled_reason.unwrap_or_default(),
        create_time: Some(timestamp(e.created_at)),
        previous_secret_expire_time: opt_timestamp(e.previous_secret_expires_at),
    }
}

/// An `UpdateWebhookEndpointRequest`'s masked fields as the model's update.
fn webhook_endpoint_update_in(r: UpdateWebhookEndpointRequest) -> Result<model::WebhookEndpointUpdate, Status> {
    let paths = mask_paths(r.update_mask, &["url", "description", "event_types", "enabled"])?;
    let has = |path: &str| paths.iter().any(|p| p == path);
    Ok(model::WebhookEndpointUpdate {
        url: has("url").then_some(r.url),
        description: has("description").then_some(r.description),
        event_types: has("event_types").then_some(r.event_types),
        enabled: has("enabled").then_some(r.enabled),
    })
}

fn webhook_attempt(a: model::WebhookAttemptView) -> WebhookAttempt {
    WebhookAttempt {
        attempt: a.attempt,
        attempt_time: Some(timestamp(a.attempted_at)),
        status_code: a.status_code,
        error: a.error.unwrap_or_default(),
        latency_ms: a.latency_ms,
    }
}

fn webhook_delivery(d: model::WebhookDeliveryView) -> WebhookDelivery {
    WebhookDelivery {
        id: d.id.to_string(),
        event_id: d.event_id.to_string(),
        event_type: d.event_type,
        status: d.status,
        next_attempt_time: opt_timestamp(d.next_attempt_at),
        attempts: d.attempts.into_iter().map(webhook_attempt).collect(),
        create_time: Some(timestamp(d.created_at)),
        finish_time: opt_timestamp(d.finished_at),
    }
}

// ---------------------------------------------------------------- services

#[tonic::async_trait]
impl deploy_hook_service_server::DeployHookService for Api {
    async fn list_deploy_hooks(&self, request: Request<ListDeployHooksRequest>) -> Reply<ListDeployHooksResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self
            .app
            .deploy_hook_list(&ctx, &ResourceRef::parse(&r.project), page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListDeployHooksResponse {
            deploy_hooks: page.items.into_iter().map(deploy_hook).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn create_deploy_hook(&self, request: Request<CreateDeployHookRequest>) -> Reply<CreateDeployHookResponse> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::DeployHookCreate {
            name: r.name,
            target: r.target.map(hook_target_in),
            rules: r.rules.into_iter().enumerate().map(|(i, rule)| hook_rule_in(i, rule)).collect::<Result<_, _>>()?,
            image_template: r.image_template,
        };
        let created =
            self.app.deploy_hook_create(&ctx, &ResourceRef::parse(&r.project), input).await.map_err(status)?;
        Ok(Response::new(CreateDeployHookResponse {
            deploy_hook: Some(deploy_hook(created.hook)),
            secret: created.secret,
        }))
    }

    async fn delete_deploy_hook(&self, request: Request<DeleteDeployHookRequest>) -> Reply<DeleteDeployHookResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app
            .deploy_hook_delete(&ctx, &ResourceRef::parse(&r.project), id(&r.deploy_hook)?)
            .await
            .map_err(status)?;
        Ok(Response::new(DeleteDeployHookResponse {}))
    }

    async fn rotate_deploy_hook_secret(
        &self,
        request: Request<RotateDeployHookSecretRequest>,
    ) -> Reply<RotateDeployHookSecretResponse> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let validity = r.previous_secret_validity.map(|d| whole_seconds("previous_secret_validity", d)).transpose()?;
        let input = model::DeployHookSecretRotate { previous_secret_valid_seconds: validity };
        let rotated = self
            .app
            .deploy_hook_secret_rotate(&ctx, &ResourceRef::parse(&r.project), id(&r.deploy_hook)?, input)
            .await
            .map_err(status)?;
        Ok(Response::new(RotateDeployHookSecretResponse {
            deploy_hook: Some(deploy_hook(rotated.hook)),
            secret: rotated.secret,
        }))
    }

    async fn get_deploy_policy(&self, request: Request<GetDeployPolicyRequest>) -> Reply<DeployPolicy> {
        let ctx = context(&self.app, &request, "").await?;
        let view =
            self.app.deploy_policy_view(&ctx, &ResourceRef::parse(&request.get_ref().project)).await.map_err(status)?;
        Ok(Response::new(deploy_policy(view)))
    }

    async fn update_deploy_policy(&self, request: Request<UpdateDeployPolicyRequest>) -> Reply<DeployPolicy> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        whole_policy_mask(r.update_mask)?;
        let policy = model::DeployPolicy {
            allowed_image_prefixes: r.allowed_image_prefixes,
            allowed_branches: r.allowed_branches,
        };
        let view = self
            .app
            .deploy_policy_update(&ctx, &ResourceRef::parse(&r.project), policy, if_match(&r.etag))
            .await
            .map_err(status)?;
        Ok(Response::new(deploy_policy(view)))
    }
}

#[tonic::async_trait]
impl webhook_service_server::WebhookService for Api {
    async fn list_webhook_endpoints(
        &self,
        request: Request<ListWebhookEndpointsRequest>,
    ) -> Reply<ListWebhookEndpointsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self
            .app
            .webhook_endpoint_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListWebhookEndpointsResponse {
            webhook_endpoints: page.items.into_iter().map(webhook_endpoint).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn create_webhook_endpoint(
        &self,
        request: Request<CreateWebhookEndpointRequest>,
    ) -> Reply<CreateWebhookEndpointResponse> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::WebhookEndpointCreate { url: r.url, description: r.description, event_types: r.event_types };
        let created = self.app.webhook_endpoint_create(&ctx, id(&r.org)?, input).await.map_err(status)?;
        Ok(Response::new(CreateWebhookEndpointResponse {
            webhook_endpoint: Some(webhook_endpoint(created.endpoint)),
            secret: created.secret,
        }))
    }

    async fn get_webhook_endpoint(&self, request: Request<GetWebhookEndpointRequest>) -> Reply<WebhookEndpoint> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self.app.webhook_endpoint_view(&ctx, id(&r.org)?, id(&r.webhook_endpoint)?).await.map_err(status)?;
        Ok(Response::new(webhook_endpoint(view)))
    }

    async fn update_webhook_endpoint(&self, request: Request<UpdateWebhookEndpointRequest>) -> Reply<WebhookEndpoint> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (org, endpoint) = (id(&r.org)?, id(&r.webhook_endpoint)?);
        let input = webhook_endpoint_update_in(r)?;
        let view = self.app.webhook_endpoint_update(&ctx, org, endpoint, input).await.map_err(status)?;
        Ok(Response::new(webhook_endpoint(view)))
    }

    async fn rotate_webhook_endpoint_secret(
        &self,
        request: Request<RotateWebhookEndpointSecretRequest>,
    ) -> Reply<RotateWebhookEndpointSecretResponse> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let validity = r.previous_secret_validity.map(|d| whole_seconds("previous_secret_validity", d)).transpose()?;
        let input = model::WebhookEndpointSecretRotate { previous_secret_valid_seconds: validity };
        let rotated = self
            .app
            .webhook_endpoint_secret_rotate(&ctx, id(&r.org)?, id(&r.webhook_endpoint)?, input)
            .await
            .map_err(status)?;
        Ok(Response::new(RotateWebhookEndpointSecretResponse {
            webhook_endpoint: Some(webhook_endpoint(rotated.endpoint)),
            secret: rotated.secret,
        }))
    }

    async fn delete_webhook_endpoint(
        &self,
        request: Request<DeleteWebhookEndpointRequest>,
    ) -> Reply<DeleteWebhookEndpointResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.webhook_endpoint_delete(&ctx, id(&r.org)?, id(&r.webhook_endpoint)?).await.map_err(status)?;
        Ok(Response::new(DeleteWebhookEndpointResponse {}))
    }

    async fn list_webhook_deliveries(
        &self,
        request: Request<ListWebhookDeliveriesRequest>,
    ) -> Reply<ListWebhookDeliveriesResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self
            .app
            .webhook_delivery_list(&ctx, id(&r.org)?, id(&r.webhook_endpoint)?, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListWebhookDeliveriesResponse {
            deliveries: page.items.into_iter().map(webhook_delivery).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn redeliver_webhook_event(&self, request: Request<RedeliverWebhookEventRequest>) -> Reply<WebhookDelivery> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::RedeliveryCreate { event_id: r.event_id };
        let delivery = self
            .app
            .webhook_redelivery_create(&ctx, id(&r.org)?, id(&r.webhook_endpoint)?, input)
            .await
            .map_err(status)?;
        Ok(Response::new(webhook_delivery(delivery)))
    }
}
