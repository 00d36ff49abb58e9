//! Integrations: a project's deploy webhooks and deploy policy, an
//! organization's event webhook endpoints and their deliveries. Each
//! resolver calls the app-layer function its REST twin calls.

use async_graphql::connection::Connection;
use async_graphql::{Context, ID, Object, Result};

use super::error;
use super::types::{app, caller, caller_for, caller_with_key, connection, id, list_complexity, page};
use crate::app::ResourceRef;
use crate::model::*;

#[derive(Default)]
pub struct IntegrationsQuery;

#[Object]
impl IntegrationsQuery {
    /// A project's deploy webhooks (by id or name), in creation order, never their secrets.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn deploy_hooks(
        &self,
        ctx: &Context<'_>,
        project: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, DeployHookView>> {
        let result = app(ctx)
            .deploy_hook_list(caller(ctx)?, &ResourceRef::parse(&project), page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, |h| h.id.uuid()))
    }

    /// The registries and branches a project's deploy webhooks may deploy from.
    async fn deploy_policy(&self, ctx: &Context<'_>, project: String) -> Result<DeployPolicyView> {
        app(ctx).deploy_policy_view(caller(ctx)?, &ResourceRef::parse(&project)).await.map_err(error)
    }

    /// An organization's event webhook endpoints, in creation order, never their secrets.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn webhook_endpoints(
        &self,
        ctx: &Context<'_>,
        org: ID,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, WebhookEndpointView>> {
        let result =
            app(ctx).webhook_endpoint_list(caller(ctx)?, id(&org)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |e| e.id.uuid()))
    }

    /// One event webhook endpoint of an organization, never its secret.
    async fn webhook_endpoint(&self, ctx: &Context<'_>, org: ID, endpoint: ID) -> Result<WebhookEndpointView> {
        app(ctx).webhook_endpoint_view(caller(ctx)?, id(&org)?, id(&endpoint)?).await.map_err(error)
    }

    /// An endpoint's deliveries, newest first, each with its attempts.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn webhook_deliveries(
        &self,
        ctx: &Context<'_>,
        org: ID,
        endpoint: ID,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, WebhookDeliveryView>> {
        let result = app(ctx)
            .webhook_delivery_list(caller(ctx)?, id(&org)?, id(&endpoint)?, page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, WebhookDeliveryView::cursor_key))
    }
}

#[derive(Default)]
pub struct IntegrationsMutation;

#[Object]
impl IntegrationsMutation {
    /// Creates a deploy webhook for one deployment (`target`) or for the
    /// project (`rules`); its secret is in this answer only (empty when
    /// replayed to a retry with the same idempotency key).
    async fn create_deploy_hook(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        input: DeployHookCreate,
        idempotency_key: Option<String>,
    ) -> Result<DeployHookCreated> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).deploy_hook_create(&caller, &ResourceRef::parse(&project), input).await.map_err(error)
    }

    /// Deletes a deploy webhook: its deliveries are refused from now on.
    async fn delete_deploy_hook(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        hook: ID,
    ) -> Result<bool> {
        app(ctx)
            .deploy_hook_delete(&caller_for(ctx, dry_run)?, &ResourceRef::parse(&project), id(&hook)?)
            .await
            .map_err(error)?;
        Ok(true)
    }

    /// A new secret for a deploy webhook, in this answer only; the previous
    /// one stays accepted for `input.previousSecretValidSeconds` (24 h by
    /// default; 0 revokes it now).
    async fn rotate_deploy_hook_secret(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        hook: ID,
        input: Option<DeployHookSecretRotate>,
        idempotency_key: Option<String>,
    ) -> Result<DeployHookCreated> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx)
            .deploy_hook_secret_rotate(&caller, &ResourceRef::parse(&project), id(&hook)?, input.unwrap_or_default())
            .await
            .map_err(error)
    }

    /// Replaces a project's deploy policy, if `ifMatch` (when given) is its current etag.
    async fn update_deploy_policy(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        input: DeployPolicy,
        if_match: Option<String>,
    ) -> Result<DeployPolicyView> {
        app(ctx)
            .deploy_policy_update(&caller_for(ctx, dry_run)?, &ResourceRef::parse(&project), input, if_match.as_deref())
            .await
            .map_err(error)
    }

    /// Subscribes an endpoint to the organization's events; its signing
    /// secret is in this answer only (empty when replayed to a retry with
    /// the same idempotency key).
    async fn create_webhook_endpoint(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: WebhookEndpointCreate,
        idempotency_key: Option<String>,
    ) -> Result<WebhookEndpointCreated> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).webhook_endpoint_create(&caller, id(&org)?, input).await.map_err(error)
    }

    /// Changes an endpoint: only the fields given change, each checked as on
    /// create; `enabled: true` turns a disabled endpoint back on (clearing
    /// `disabledAt`, `disabledReason` and `failingSince`), `false` disables it.
    async fn update_webhook_endpoint(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        endpoint: ID,
        patch: WebhookEndpointUpdate,
    ) -> Result<WebhookEndpointView> {
        app(ctx)
            .webhook_endpoint_update(&caller_for(ctx, dry_run)?, id(&org)?, id(&endpoint)?, patch)
            .await
            .map_err(error)
    }

    /// A new signing secret for an endpoint, in this answer only (empty when
    /// replayed to a retry with the same idempotency key); deliveries are
    /// also signed with the previous one for
    /// `input.previousSecretValidSeconds` (24 h by default; 0: not at all).
    async fn rotate_webhook_endpoint_secret(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        endpoint: ID,
        input: Option<WebhookEndpointSecretRotate>,
        idempotency_key: Option<String>,
    ) -> Result<WebhookEndpointCreated> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx)
            .webhook_endpoint_secret_rotate(&caller, id(&org)?, id(&endpoint)?, input.unwrap_or_default())
            .await
            .map_err(error)
    }

    /// Removes an endpoint and its pending deliveries.
    async fn delete_webhook_endpoint(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        endpoint: ID,
    ) -> Result<bool> {
        app(ctx).webhook_endpoint_delete(&caller_for(ctx, dry_run)?, id(&org)?, id(&endpoint)?).await.map_err(error)?;
        Ok(true)
    }

    /// Sends an event to the endpoint again, as a new pending delivery.
    async fn redeliver_webhook_event(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        endpoint: ID,
        input: RedeliveryCreate,
        idempotency_key: Option<String>,
    ) -> Result<WebhookDeliveryView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).webhook_redelivery_create(&caller, id(&org)?, id(&endpoint)?, input).await.map_err(error)
    }
}
