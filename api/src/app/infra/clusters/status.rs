//! What a cluster's region last observed inside it: its nodes, and the CPU
//! and memory its pods request against what the nodes can give.

use std::collections::BTreeMap;

use moke_iam::Action;

use crate::app::authz::Lock;
use crate::app::infra::node_pools::{RESERVED_CPU_MILLIS, RESERVED_MEMORY_MIB};
use crate::app::{App, RequestContext, ResourceRef, Result, infra::clusters};
use crate::ids::{ClusterKind, ProjectKind};
use crate::model::*;

/// A cluster's observed nodes and pods, joined.
struct Observed {
    nodes: Vec<NodeView>,
    deployments: Vec<DeploymentMetrics>,
}

impl App {
    async fn observe(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<Observed> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let pools = sqlx::query!(
            "SELECT name, spec->>'machine_type' AS machine_type, status FROM node_pools
             WHERE cluster_id = $1 AND deletion_requested_at IS NULL ORDER BY name",
            cluster_row.id
        )
        .fetch_all(&mut *conn)
        .await?;
        let deployments = sqlx::query!(
            "SELECT namespace, name, spec, status FROM deployments WHERE cluster_id = $1 ORDER BY namespace, name",
            cluster_row.id
        )
        .fetch_all(&mut *conn)
        .await?;
        let mut nodes: BTreeMap<String, NodeView> = BTreeMap::new();
        for pool in pools {
            let machine = pool.machine_type.as_deref().and_then(|m| self.config().catalog.machine_type(m));
            for node in pool.status["nodes"].as_array().into_iter().flatten() {
                let name = node["name"].as_str().unwrap_or_default().to_string();
                nodes.insert(
                    name.clone(),
                    NodeView {
                        name,
                        node_pool: pool.name.clone(),
                        zone: node["zone"].as_str().unwrap_or_default().to_string(),
                        rack: node["rack"].as_str().unwrap_or_default().to_string(),
                        ready: node["ready"].as_bool().unwrap_or(false),
                        unschedulable: node["unschedulable"].as_bool().unwrap_or(false),
                        allocatable_cpu_millis: machine.map_or(0, |m| m.vcpus * 1000 - RESERVED_CPU_MILLIS),
                        allocatable_memory_mib: machine.map_or(0, |m| m.memory_gib * 1024 - RESERVED_MEMORY_MIB),
                        pods: 0,
                        requested_cpu_millis: 0,
                        requested_memory_mib: 0,
                    },
                );
            }
        }
        let mut metrics = Vec::new();
        for deployment in deployments {
            let cpu = deployment.spec["resources"]["cpu_millis"].as_i64().unwrap_or(0);
            let memory = deployment.spec["resources"]["memory_mib"].as_i64().unwrap_or(0);
            let mut entry = DeploymentMetrics {
                namespace: deployment.namespace,
                name: deployment.name,
                pods: 0,
                ready_pods: 0,
                pending_pods: 0,
                requested_cpu_millis: 0,
                requested_memory_mib: 0,
            };
            for pod in deployment.status["workload"]["pods"].as_array().into_iter().flatten() {
                entry.pods += 1;
                entry.ready_pods += i64::from(pod["ready"].as_bool().unwrap_or(false));
                match nodes.get_mut(pod["node"].as_str().unwrap_or_default()) {
                    Some(node) => {
                        node.pods += 1;
                        node.requested_cpu_millis += cpu;
                        node.requested_memory_mib += memory;
                        entry.requested_cpu_millis += cpu;
                        entry.requested_memory_mib += memory;
                    }
                    None => entry.pending_pods += 1,
                }
            }
            metrics.push(entry);
        }
        Ok(Observed { nodes: nodes.into_values().collect(), deployments: metrics })
    }

    /// `cluster_node_list`: the worker nodes as last observed.
    pub async fn cluster_node_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<Vec<NodeView>> {
        Ok(self.observe(ctx, project, cluster).await?.nodes)
    }

    /// `cluster_metrics_view`: capacity against requests, cluster-wide and per deployment.
    pub async fn cluster_metrics_view(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<ClusterMetrics> {
        let observed = self.observe(ctx, project, cluster).await?;
        let sum = |f: &dyn Fn(&NodeView) -> i64| observed.nodes.iter().map(f).sum::<i64>();
        let ready = |n: &NodeView| n.ready;
        Ok(ClusterMetrics {
            nodes: observed.nodes.len() as i64,
            ready_nodes: observed.nodes.iter().filter(|n| ready(n)).count() as i64,
            allocatable_cpu_millis: sum(&|n| if ready(n) { n.allocatable_cpu_millis } else { 0 }),
            allocatable_memory_mib: sum(&|n| if ready(n) { n.allocatable_memory_mib } else { 0 }),
            requested_cpu_millis: sum(&|n| n.requested_cpu_millis),
            requested_memory_mib: sum(&|n| n.requested_memory_mib),
            pods: observed.deployments.iter().map(|d| d.pods).sum(),
            ready_pods: observed.deployments.iter().map(|d| d.ready_pods).sum(),
            deployments: observed.deployments,
        })
    }
}
