//! The `moke.v1` service implementations: extract, call one app-layer
//! function, convert. No logic of their own beyond reading field masks.

use std::sync::Arc;
use std::time::Duration;

use moke_proto::v1::*;
use tonic::{Request, Response, Status};

use super::convert;
use super::{context, page, status, status_renaming};
use crate::app::region::operations::OperationFilter;
use crate::app::{App, Error, ResourceRef};
use crate::ids::{Id, IdKind};
use crate::model;

pub(super) type Reply<T> = Result<Response<T>, Status>;

#[derive(Clone)]
pub struct Api {
    pub app: Arc<App>,
}

/// An id from a request; text that cannot be one is simply not found.
pub(super) fn id<K: IdKind>(text: &str) -> Result<Id<K>, Status> {
    crate::app::parse_id(text).map_err(status)
}

/// The paths of a field mask, refusing ones outside `allowed`.
pub(super) fn mask_paths(mask: Option<prost_types::FieldMask>, allowed: &[&str]) -> Result<Vec<String>, Status> {
    let paths = mask.map(|m| m.paths).unwrap_or_default();
    if paths.is_empty() {
        return Err(status(Error::invalid_field("update_mask", "missing_field", "name the fields to update")));
    }
    for path in &paths {
        if !allowed.contains(&path.as_str()) {
            return Err(status(Error::invalid_field(
                "update_mask",
                "invalid",
                format!("unknown path {path:?}; allowed: {}", allowed.join(", ")),
            )));
        }
    }
    Ok(paths)
}

/// A budget basis from a request: empty is none, anything else must be one.
fn budget_basis(text: &str) -> Result<Option<model::BudgetBasis>, Status> {
    if text.is_empty() {
        return Ok(None);
    }
    model::BudgetBasis::parse(text)
        .map(Some)
        .ok_or_else(|| status(Error::invalid_field("basis", "invalid", "spend or forecast")))
}

/// An `UpdateNodePoolRequest`'s masked fields as the model's update.
fn node_pool_update_in(r: &UpdateNodePoolRequest) -> Result<model::NodePoolUpdate, Status> {
    let paths = mask_paths(
        r.update_mask.clone(),
        &[
            "labels",
            "spec.machine_type",
            "spec.count",
            "spec.autoscaling",
            "spec.zones",
            "spec.node_labels",
            "spec.taints",
            "spec.upgrade_policy",
        ],
    )?;
    let has = |path: &str| paths.iter().any(|p| p == path);
    let spec = r.spec.clone().unwrap_or_default();
    let patch = model::NodePoolSpecPatch {
        machine_type: has("spec.machine_type").then_some(spec.machine_type),
        count: has("spec.count").then_some(spec.count),
        autoscaling: has("spec.autoscaling").then(|| spec.autoscaling.map(convert::autoscaling_in)),
        zones: has("spec.zones").then_some(spec.zones),
        node_labels: has("spec.node_labels").then(|| spec.node_labels.into_iter().collect()),
        taints: has("spec.taints").then(|| spec.taints.into_iter().map(convert::taint_in).collect()),
        upgrade_policy: has("spec.upgrade_policy")
            .then(|| convert::upgrade_policy_in(spec.upgrade_policy.unwrap_or_default())),
    };
    Ok(model::NodePoolUpdate {
        labels: has("labels").then(|| r.labels.clone().into_iter().collect()),
        spec: paths.iter().any(|p| p.starts_with("spec.")).then_some(patch),
    })
}

/// A day range of a usage request: `YYYY-MM-DD`, or empty for the default.
type Days = (Option<chrono::NaiveDate>, Option<chrono::NaiveDate>);

/// A usage request's organization and days.
fn usage_range(r: &GetUsageRequest) -> Result<(crate::ids::OrgId, Days), Status> {
    let day = |field: &'static str, text: &str| -> Result<Option<chrono::NaiveDate>, Status> {
        if text.is_empty() {
            return Ok(None);
        }
        text.parse().map(Some).map_err(|_| status(Error::invalid_field(field, "invalid", "a day as YYYY-MM-DD")))
    };
    Ok((id(&r.org)?, (day("start", &r.start)?, day("end", &r.end)?)))
}

pub(super) fn if_match(etag: &str) -> Option<&str> {
    (!etag.is_empty()).then_some(etag)
}

#[tonic::async_trait]
impl org_service_server::OrgService for Api {
    async fn list_orgs(&self, request: Request<ListOrgsRequest>) -> Reply<ListOrgsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self.app.org_list(&ctx, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListOrgsResponse {
            orgs: page.items.into_iter().map(convert::org).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_org(&self, request: Request<GetOrgRequest>) -> Reply<Org> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.org_view(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(convert::org(view)))
    }

    async fn create_org(&self, request: Request<CreateOrgRequest>) -> Reply<Org> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::OrgCreate {
            name: r.name,
            display_name: (!r.display_name.is_empty()).then_some(r.display_name),
            labels: r.labels.into_iter().collect(),
        };
        Ok(Response::new(convert::org(self.app.org_create(&ctx, input).await.map_err(status)?)))
    }

    async fn update_org(&self, request: Request<UpdateOrgRequest>) -> Reply<Org> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let paths = mask_paths(r.update_mask, &["name", "display_name", "labels"])?;
        let has = |path: &str| paths.iter().any(|p| p == path);
        let update = model::OrgUpdate {
            name: has("name").then_some(r.name),
            display_name: has("display_name").then_some(r.display_name),
            labels: has("labels").then(|| r.labels.into_iter().collect()),
        };
        let view = self.app.org_update(&ctx, id(&r.org)?, if_match(&r.etag), update).await.map_err(status)?;
        Ok(Response::new(convert::org(view)))
    }

    async fn delete_org(&self, request: Request<DeleteOrgRequest>) -> Reply<DeleteOrgResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.org_delete(&ctx, id(&r.org)?, if_match(&r.etag)).await.map_err(status)?;
        Ok(Response::new(DeleteOrgResponse {}))
    }

    async fn get_quotas(&self, request: Request<GetQuotasRequest>) -> Reply<Quotas> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.quota_view(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(convert::quotas(view)))
    }

    async fn get_org_policy(&self, request: Request<GetOrgPolicyRequest>) -> Reply<OrgPolicy> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.org_policy_view(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(convert::org_policy(view)))
    }

    async fn update_org_policy(&self, request: Request<UpdateOrgPolicyRequest>) -> Reply<OrgPolicy> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (org, etag) = (id(&r.org)?, r.etag.clone());
        let input = convert::org_policy_update(r)?;
        let view = self.app.org_policy_update(&ctx, org, input, if_match(&etag)).await.map_err(status)?;
        Ok(Response::new(convert::org_policy(view)))
    }

    async fn list_org_policy_versions(
        &self,
        request: Request<ListOrgPolicyVersionsRequest>,
    ) -> Reply<ListOrgPolicyVersionsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self
            .app
            .org_policy_version_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListOrgPolicyVersionsResponse {
            versions: page.items.into_iter().map(convert::org_policy_version).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }
}

#[tonic::async_trait]
impl project_service_server::ProjectService for Api {
    async fn list_projects(&self, request: Request<ListProjectsRequest>) -> Reply<ListProjectsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self.app.project_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListProjectsResponse {
            projects: page.items.into_iter().map(convert::project).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_project(&self, request: Request<GetProjectRequest>) -> Reply<Project> {
        let ctx = context(&self.app, &request, "").await?;
        let view =
            self.app.project_view(&ctx, &ResourceRef::parse(&request.get_ref().project)).await.map_err(status)?;
        Ok(Response::new(convert::project(view)))
    }

    async fn create_project(&self, request: Request<CreateProjectRequest>) -> Reply<Project> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::ProjectCreate {
            name: r.name,
            labels: r.labels.into_iter().collect(),
            spec: model::ProjectSpec { description: r.spec.map(|s| s.description).unwrap_or_default() },
        };
        let view = self.app.project_create(&ctx, id(&r.org)?, input).await.map_err(status)?;
        Ok(Response::new(convert::project(view)))
    }

    async fn update_project(&self, request: Request<UpdateProjectRequest>) -> Reply<Project> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let paths = mask_paths(r.update_mask, &["name", "labels", "spec", "spec.description"])?;
        let update = model::ProjectUpdate {
            name: paths.iter().any(|p| p == "name").then_some(r.name),
            labels: paths.iter().any(|p| p == "labels").then(|| r.labels.into_iter().collect()),
            spec: paths
                .iter()
                .any(|p| p.starts_with("spec"))
                .then(|| model::ProjectSpec { description: r.spec.map(|s| s.description).unwrap_or_default() }),
        };
        let view = self
            .app
            .project_update(&ctx, &ResourceRef::parse(&r.project), if_match(&r.etag), update)
            .await
            .map_err(status)?;
        Ok(Response::new(convert::project(view)))
    }

    async fn delete_project(&self, request: Request<DeleteProjectRequest>) -> Reply<DeleteProjectResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        self.app.project_delete(&ctx, &ResourceRef::parse(&r.project), if_match(&r.etag)).await.map_err(status)?;
        Ok(Response::new(DeleteProjectResponse {}))
    }
}

#[tonic::async_trait]
impl cluster_service_server::ClusterService for Api {
    async fn list_clusters(&self, request: Request<ListClustersRequest>) -> Reply<ListClustersResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self
            .app
            .cluster_list(&ctx, &ResourceRef::parse(&r.project), page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListClustersResponse {
            clusters: page.items.into_iter().map(convert::cluster).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    type WatchClusterStream = super::Updates<Cluster>;

    async fn watch_cluster(&self, request: Request<GetClusterRequest>) -> Reply<Self::WatchClusterStream> {
        use crate::app::kernel::watch::{ClusterAt, polled_updates};
        let watcher = super::watcher(&self.app, &request).await?;
        let r = request.into_inner();
        super::follow(polled_updates(watcher, ClusterAt { project: r.project, cluster: r.cluster }), convert::cluster)
            .await
    }

    async fn get_cluster(&self, request: Request<GetClusterRequest>) -> Reply<Cluster> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self
            .app
            .cluster_view(&ctx, &ResourceRef::parse(&r.project), &ResourceRef::parse(&r.cluster))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::cluster(view)))
    }

    async fn create_cluster(&self, request: Request<CreateClusterRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let project = ResourceRef::parse(&r.project);
        let op = self.app.cluster_create(&ctx, &project, convert::cluster_create_in(r)?).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn estimate_cluster(&self, request: Request<EstimateClusterRequest>) -> Reply<PriceEstimate> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let input = model::ClusterEstimateRequest {
            cluster: convert::cluster_create_in(r.cluster.unwrap_or_default())?,
            node_pools: r.node_pools.into_iter().map(convert::node_pool_create_in).collect(),
        };
        let estimate = self.app.cluster_estimate(&ctx, &ResourceRef::parse(&r.project), input).await.map_err(status)?;
        Ok(Response::new(convert::price_estimate(estimate)))
    }

    async fn update_cluster(&self, request: Request<UpdateClusterRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let paths = mask_paths(
            r.update_mask,
            &[
                "labels",
                "spec.region",
                "spec.kubernetes_version",
                "spec.control_plane_replicas",
                "spec.maintenance_window",
                "spec.deletion_protection",
                "spec.snapshot_policy",
                "spec.control_plane_firewall",
                "spec.release_channel",
                "spec.maintenance_exclusions",
            ],
        )?;
        let has = |path: &str| paths.iter().any(|p| p == path);
        let spec = r.spec.unwrap_or_default();
        let mut patch = model::ClusterSpecPatch::default();
        if has("spec.region") {
            patch.region = Some(spec.region);
        }
        if has("spec.kubernetes_version") {
            patch.kubernetes_version = Some(spec.kubernetes_version);
        }
        if has("spec.control_plane_replicas") {
            patch.control_plane = Some(model::ControlPlaneInput { replicas: spec.control_plane_replicas });
        }
        if has("spec.maintenance_window") {
            patch.maintenance_window = Some(spec.maintenance_window.map(convert::window_in));
        }
        if has("spec.deletion_protection") {
            patch.deletion_protection = Some(spec.deletion_protection);
        }
        if has("spec.snapshot_policy") {
            let policy = spec.snapshot_policy.unwrap_or_default();
            patch.snapshot_policy = Some(convert::snapshot_policy_in(policy));
        }
        if has("spec.release_channel") {
            patch.release_channel = Some(convert::release_channel_in("spec.release_channel", &spec.release_channel)?);
        }
        if has("spec.maintenance_exclusions") {
            let list = convert::exclusions_in("spec.maintenance_exclusions", spec.maintenance_exclusions)?;
            patch.maintenance_exclusions = Some(list);
        }
        if has("spec.control_plane_firewall") {
            let firewall = spec.control_plane_firewall.unwrap_or_default();
            patch.control_plane_firewall = Some(convert::firewall_in(firewall));
        }
        let update = model::ClusterUpdate {
            labels: has("labels").then(|| r.labels.into_iter().collect()),
            spec: paths.iter().any(|p| p.starts_with("spec.")).then_some(patch),
        };
        let op = self
            .app
            .cluster_update(
                &ctx,
                &ResourceRef::parse(&r.project),
                &ResourceRef::parse(&r.cluster),
                if_match(&r.etag),
                update,
            )
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn delete_cluster(&self, request: Request<DeleteClusterRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let op = self
            .app
            .cluster_delete(&ctx, &ResourceRef::parse(&r.project), &ResourceRef::parse(&r.cluster), if_match(&r.etag))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn list_cluster_upgrades(&self, request: Request<ListClusterUpgradesRequest>) -> Reply<ClusterUpgrades> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let upgrades = self
            .app
            .cluster_upgrade_list(&ctx, &ResourceRef::parse(&r.project), &ResourceRef::parse(&r.cluster))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::cluster_upgrades(upgrades)))
    }

    async fn list_cluster_events(
        &self,
        request: Request<ListClusterEventsRequest>,
    ) -> Reply<ListClusterEventsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let since = r.since.map(|t| convert::timestamp_in("since", t)).transpose()?;
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let page = self
            .app
            .cluster_event_list(&ctx, &project, &cluster, since, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListClusterEventsResponse {
            events: page.items.into_iter().map(convert::cluster_event).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn list_cluster_snapshots(
        &self,
        request: Request<ListClusterSnapshotsRequest>,
    ) -> Reply<ListClusterSnapshotsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let list = self.app.cluster_snapshot_list(&ctx, &project, &cluster).await.map_err(status)?;
        Ok(Response::new(convert::snapshots(list)))
    }

    async fn create_cluster_snapshot(&self, request: Request<CreateClusterSnapshotRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let op = self.app.cluster_snapshot_create(&ctx, &project, &cluster, if_match(&r.etag)).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn restore_cluster_snapshot(&self, request: Request<RestoreClusterSnapshotRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let op = self
            .app
            .cluster_snapshot_restore(&ctx, &project, &cluster, &r.snapshot, if_match(&r.etag))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn list_cluster_revisions(
        &self,
        request: Request<ListClusterRevisionsRequest>,
    ) -> Reply<ListClusterRevisionsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let page = self
            .app
            .cluster_revision_list(&ctx, &project, &cluster, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListClusterRevisionsResponse {
            revisions: page.items.into_iter().map(convert::cluster_revision).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn diff_cluster_revisions(&self, request: Request<DiffClusterRevisionsRequest>) -> Reply<SpecDiff> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let from = (r.from_generation != 0).then_some(r.from_generation);
        let diff = self
            .app
            .cluster_revision_diff(&ctx, &project, &cluster, &r.generation.to_string(), from)
            .await
            .map_err(status)?;
        Ok(Response::new(convert::spec_diff(diff)))
    }

    async fn upgrade_cluster(&self, request: Request<UpgradeClusterRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let upgrade = model::ClusterUpgradeRequest { kubernetes_version: r.kubernetes_version };
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let op =
            self.app.cluster_upgrade(&ctx, &project, &cluster, if_match(&r.etag), upgrade).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }
}

#[tonic::async_trait]
impl node_pool_service_server::NodePoolService for Api {
    async fn list_node_pools(&self, request: Request<ListNodePoolsRequest>) -> Reply<ListNodePoolsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self
            .app
            .node_pool_list(
                &ctx,
                &ResourceRef::parse(&r.project),
                &ResourceRef::parse(&r.cluster),
                page(r.page_size, &r.page_token)?,
            )
            .await
            .map_err(status)?;
        Ok(Response::new(ListNodePoolsResponse {
            node_pools: page.items.into_iter().map(convert::node_pool).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_node_pool(&self, request: Request<GetNodePoolRequest>) -> Reply<NodePool> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self
            .app
            .node_pool_view(
                &ctx,
                &ResourceRef::parse(&r.project),
                &ResourceRef::parse(&r.cluster),
                &ResourceRef::parse(&r.node_pool),
            )
            .await
            .map_err(status)?;
        Ok(Response::new(convert::node_pool(view)))
    }

    async fn create_node_pool(&self, request: Request<CreateNodePoolRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let op = self
            .app
            .node_pool_create(&ctx, &project, &cluster, convert::node_pool_create_in(r))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn update_node_pool(&self, request: Request<UpdateNodePoolRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let update = node_pool_update_in(&r)?;
        let op = self
            .app
            .node_pool_update(
                &ctx,
                &ResourceRef::parse(&r.project),
                &ResourceRef::parse(&r.cluster),
                &ResourceRef::parse(&r.node_pool),
                if_match(&r.etag),
                update,
            )
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn estimate_node_pool(&self, request: Request<CreateNodePoolRequest>) -> Reply<PriceChange> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let change = self
            .app
            .node_pool_estimate(&ctx, &project, &cluster, convert::node_pool_create_in(r))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::price_change(change)))
    }

    async fn estimate_node_pool_update(&self, request: Request<UpdateNodePoolRequest>) -> Reply<PriceChange> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let update = node_pool_update_in(&r)?;
        let (project, cluster, pool) =
            (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster), ResourceRef::parse(&r.node_pool));
        let change =
            self.app.node_pool_update_estimate(&ctx, &project, &cluster, &pool, update).await.map_err(status)?;
        Ok(Response::new(convert::price_change(change)))
    }

    async fn delete_node_pool(&self, request: Request<DeleteNodePoolRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let op = self
            .app
            .node_pool_delete(
                &ctx,
                &ResourceRef::parse(&r.project),
                &ResourceRef::parse(&r.cluster),
                &ResourceRef::parse(&r.node_pool),
                if_match(&r.etag),
            )
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn recycle_node_pool(&self, request: Request<RecycleNodePoolRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (project, cluster, pool) =
            (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster), ResourceRef::parse(&r.node_pool));
        let recycle = model::NodePoolRecycleRequest { nodes: (!r.nodes.is_empty()).then_some(r.nodes) };
        let op = self
            .app
            .node_pool_recycle(&ctx, &project, &cluster, &pool, if_match(&r.etag), recycle)
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn delete_node(&self, request: Request<DeleteNodeRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster, pool) =
            (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster), ResourceRef::parse(&r.node_pool));
        let op = self
            .app
            .node_pool_node_delete(&ctx, &project, &cluster, &pool, &r.node, r.replace, if_match(&r.etag))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn list_node_pool_revisions(
        &self,
        request: Request<ListNodePoolRevisionsRequest>,
    ) -> Reply<ListNodePoolRevisionsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster, pool) =
            (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster), ResourceRef::parse(&r.node_pool));
        let page = self
            .app
            .node_pool_revision_list(&ctx, &project, &cluster, &pool, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListNodePoolRevisionsResponse {
            revisions: page.items.into_iter().map(convert::node_pool_revision).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn diff_node_pool_revisions(&self, request: Request<DiffNodePoolRevisionsRequest>) -> Reply<SpecDiff> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster, pool) =
            (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster), ResourceRef::parse(&r.node_pool));
        let from = (r.from_generation != 0).then_some(r.from_generation);
        let diff = self
            .app
            .node_pool_revision_diff(&ctx, &project, &cluster, &pool, &r.generation.to_string(), from)
            .await
            .map_err(status)?;
        Ok(Response::new(convert::spec_diff(diff)))
    }
}

#[tonic::async_trait]
impl operation_service_server::OperationService for Api {
    async fn list_operations(&self, request: Request<ListOperationsRequest>) -> Reply<ListOperationsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self
            .app
            .cluster_operation_list(
                &ctx,
                &ResourceRef::parse(&r.project),
                &ResourceRef::parse(&r.cluster),
                page(r.page_size, &r.page_token)?,
            )
            .await
            .map_err(status)?;
        Ok(Response::new(ListOperationsResponse {
            operations: page.items.into_iter().map(convert::operation).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn list_project_operations(
        &self,
        request: Request<ListProjectOperationsRequest>,
    ) -> Reply<ListOperationsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let wanted = match r.status.as_str() {
            "" => None,
            text => Some(model::OperationStatus::parse(text).ok_or_else(|| {
                status(Error::invalid_field("status", "invalid", "pending, running, succeeded or failed"))
            })?),
        };
        let filter = OperationFilter::parse(Some(&r.target), Some(&r.kind), wanted).map_err(status)?;
        let page = self
            .app
            .project_operation_list(&ctx, &ResourceRef::parse(&r.project), filter, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListOperationsResponse {
            operations: page.items.into_iter().map(convert::operation).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn cancel_operation(&self, request: Request<CancelOperationRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let op = self.app.operation_cancel(&ctx, id(&request.get_ref().operation)?).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn get_operation_approval(&self, request: Request<GetOperationApprovalRequest>) -> Reply<Approval> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.operation_approval_view(&ctx, id(&request.get_ref().operation)?).await.map_err(status)?;
        Ok(Response::new(convert::approval(view)))
    }

    async fn approve_operation(&self, request: Request<DecideOperationRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let decision = model::ApprovalDecision { reason: (!r.reason.is_empty()).then_some(r.reason) };
        let op = self.app.operation_approve(&ctx, id(&r.operation)?, decision).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn reject_operation(&self, request: Request<DecideOperationRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let decision = model::ApprovalDecision { reason: (!r.reason.is_empty()).then_some(r.reason) };
        let op = self.app.operation_reject(&ctx, id(&r.operation)?, decision).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn get_operation(&self, request: Request<GetOperationRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let op = self.app.operation_view(&ctx, id(&request.get_ref().operation)?, None).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn list_operation_steps(
        &self,
        request: Request<ListOperationStepsRequest>,
    ) -> Reply<ListOperationStepsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let steps = self.app.operation_step_list(&ctx, id(&request.get_ref().operation)?).await.map_err(status)?;
        Ok(Response::new(ListOperationStepsResponse {
            steps: steps.items.into_iter().map(convert::operation_step).collect(),
        }))
    }

    type WatchOperationStream = super::Updates<Operation>;

    async fn watch_operation(&self, request: Request<GetOperationRequest>) -> Reply<Self::WatchOperationStream> {
        let watcher = super::watcher(&self.app, &request).await?;
        let updates = crate::app::kernel::watch::operation_updates(watcher, id(&request.get_ref().operation)?);
        super::follow(updates, convert::operation).await
    }

    async fn wait_operation(&self, request: Request<WaitOperationRequest>) -> Reply<Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let max = self.app.config().http.max_wait_seconds;
        let timeout = r.timeout.unwrap_or_default();
        let wait = u64::try_from(timeout.seconds)
            .ok()
            .zip(u32::try_from(timeout.nanos).ok())
            .map(|(seconds, nanos)| Duration::new(seconds, nanos))
            .filter(|wait| *wait <= Duration::from_secs(max))
            .ok_or_else(|| {
                status(Error::invalid_field("timeout", "out_of_range", format!("must be between 0 and {max} s")))
            })?;
        let op = self.app.operation_view(&ctx, id(&r.operation)?, Some(wait)).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }
}

#[tonic::async_trait]
impl token_service_server::TokenService for Api {
    async fn list_tokens(&self, request: Request<ListTokensRequest>) -> Reply<ListTokensResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self.app.token_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListTokensResponse {
            tokens: page.items.into_iter().map(convert::token).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_token(&self, request: Request<GetTokenRequest>) -> Reply<Token> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self.app.token_view(&ctx, id(&r.org)?, id(&r.token)?).await.map_err(status)?;
        Ok(Response::new(convert::token(view)))
    }

    async fn create_token(&self, request: Request<CreateTokenRequest>) -> Reply<CreateTokenResponse> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input =
            model::TokenCreate { name: r.name, role: r.role, expires_in_seconds: r.expires_in.map(|d| d.seconds) };
        let created = self
            .app
            .token_create(&ctx, id(&r.org)?, input)
            .await
            .map_err(|e| status_renaming(e, &[("expires_in_seconds", "expires_in")]))?;
        Ok(Response::new(CreateTokenResponse { token: Some(convert::token(created.view)), secret: created.token }))
    }

    async fn delete_token(&self, request: Request<DeleteTokenRequest>) -> Reply<DeleteTokenResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.token_delete(&ctx, id(&r.org)?, id(&r.token)?).await.map_err(status)?;
        Ok(Response::new(DeleteTokenResponse {}))
    }
}

#[tonic::async_trait]
impl billing_service_server::BillingService for Api {
    async fn list_budgets(&self, request: Request<ListBudgetsRequest>) -> Reply<ListBudgetsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self.app.budget_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListBudgetsResponse {
            budgets: page.items.into_iter().map(convert::budget).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_budget(&self, request: Request<GetBudgetRequest>) -> Reply<Budget> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self.app.budget_view(&ctx, id(&r.org)?, id(&r.budget)?).await.map_err(status)?;
        Ok(Response::new(convert::budget(view)))
    }

    async fn create_budget(&self, request: Request<CreateBudgetRequest>) -> Reply<Budget> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::BudgetCreate {
            name: r.name,
            amount: r.amount,
            thresholds: if r.thresholds.is_empty() { vec![50, 90, 100] } else { r.thresholds },
            basis: budget_basis(&r.basis)?.unwrap_or_default(),
        };
        let view = self.app.budget_create(&ctx, id(&r.org)?, input).await.map_err(status)?;
        Ok(Response::new(convert::budget(view)))
    }

    async fn update_budget(&self, request: Request<UpdateBudgetRequest>) -> Reply<Budget> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let paths = mask_paths(r.update_mask, &["name", "amount", "thresholds", "basis"])?;
        let has = |field: &str| paths.iter().any(|p| p == field);
        let input = model::BudgetUpdate {
            name: has("name").then_some(r.name),
            amount: has("amount").then_some(r.amount),
            thresholds: has("thresholds").then_some(r.thresholds),
            basis: if has("basis") { budget_basis(&r.basis)? } else { None },
        };
        let view = self.app.budget_update(&ctx, id(&r.org)?, id(&r.budget)?, input).await.map_err(status)?;
        Ok(Response::new(convert::budget(view)))
    }

    async fn delete_budget(&self, request: Request<GetBudgetRequest>) -> Reply<DeleteBudgetResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.budget_delete(&ctx, id(&r.org)?, id(&r.budget)?).await.map_err(status)?;
        Ok(Response::new(DeleteBudgetResponse {}))
    }

    async fn get_usage(&self, request: Request<GetUsageRequest>) -> Reply<UsageReport> {
        let ctx = context(&self.app, &request, "").await?;
        let (org, (start, end)) = usage_range(request.get_ref())?;
        let report = self.app.billing_usage_view(&ctx, org, start, end).await.map_err(status)?;
        Ok(Response::new(convert::usage_report(report)))
    }

    async fn get_usage_csv(&self, request: Request<GetUsageRequest>) -> Reply<GetUsageCsvResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let (org, (start, end)) = usage_range(request.get_ref())?;
        let (file_name, csv) = self.app.billing_usage_csv(&ctx, org, start, end).await.map_err(status)?;
        Ok(Response::new(GetUsageCsvResponse { file_name, csv }))
    }

    async fn list_plans(&self, _request: Request<ListPlansRequest>) -> Reply<ListPlansResponse> {
        Ok(Response::new(ListPlansResponse { plans: self.app.plan_list().into_iter().map(convert::plan).collect() }))
    }

    async fn get_plan(&self, request: Request<GetPlanRequest>) -> Reply<OrgPlan> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.billing_plan_view(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(convert::org_plan(view)))
    }

    async fn update_plan(&self, request: Request<UpdatePlanRequest>) -> Reply<OrgPlan> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let view = self
            .app
            .billing_plan_update(&ctx, id(&r.org)?, model::PlanChange { plan: r.plan })
            .await
            .map_err(status)?;
        Ok(Response::new(convert::org_plan(view)))
    }

    async fn get_balance(&self, request: Request<GetBalanceRequest>) -> Reply<BillingBalance> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.billing_balance_view(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(convert::billing_balance(view)))
    }

    async fn list_credits(&self, request: Request<ListCreditsRequest>) -> Reply<ListCreditsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page =
            self.app.credit_grant_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListCreditsResponse {
            credits: page.items.into_iter().map(convert::credit_grant).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn list_invoices(&self, request: Request<ListInvoicesRequest>) -> Reply<ListInvoicesResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let page = self.app.invoice_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListInvoicesResponse {
            invoices: page.items.into_iter().map(|s| convert::invoice(s, Vec::new())).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_invoice(&self, request: Request<GetInvoiceRequest>) -> Reply<Invoice> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self.app.invoice_view(&ctx, id(&r.org)?, id(&r.invoice)?).await.map_err(status)?;
        Ok(Response::new(convert::invoice(view.summary, view.lines)))
    }

    async fn get_invoice_csv(&self, request: Request<GetInvoiceRequest>) -> Reply<GetInvoiceCsvResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let (file_name, csv) = self.app.invoice_csv(&ctx, id(&r.org)?, id(&r.invoice)?).await.map_err(status)?;
        Ok(Response::new(GetInvoiceCsvResponse { file_name, csv }))
    }

    async fn get_invoice_pdf(&self, request: Request<GetInvoiceRequest>) -> Reply<GetInvoicePdfResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let (file_name, pdf) = self.app.invoice_pdf(&ctx, id(&r.org)?, id(&r.invoice)?).await.map_err(status)?;
        Ok(Response::new(GetInvoicePdfResponse { file_name, pdf }))
    }
}
