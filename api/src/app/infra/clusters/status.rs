//! What a cluster's region last observed inside it: its nodes, and the CPU
//! and memory its pods request against what the nodes can give.

use std::collections::BTreeMap;

use moke_iam::Action;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::infra::node_pools::{RESERVED_CPU_MILLIS, RESERVED_MEMORY_MIB};
use crate::app::kernel::jsonb;
use crate::app::region::observed::ObservedStored;
use crate::app::workloads::store::DeploymentSpecStored;
use crate::app::{App, PageRequest, RequestContext, ResourceRef, Result, infra::clusters};
use crate::ids::{ClusterKind, ProjectKind};
use crate::model::*;

/// The 16 bytes that order a node list and continue it in a page token: the
/// name's first 8 bytes (zero-padded), then 8 bytes of its SHA-256. Nodes
/// come grouped by the start of their names (a pool's nodes together), and
/// two names never share a key, so a page never skips or repeats a node
/// that stayed.
fn node_key(name: &str) -> Uuid {
    let mut key = [0u8; 16];
    let prefix = &name.as_bytes()[..name.len().min(8)];
    key[..prefix.len()].copy_from_slice(prefix);
    key[8..].copy_from_slice(&Sha256::digest(name.as_bytes())[..8]);
    Uuid::from_bytes(key)
}

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
        let pools = crate::app::infra::store::node_pools::live_in(&mut conn, cluster_row.id).await?;
        let deployments = crate::app::workloads::store::deployments::all_in_cluster(&mut conn, cluster_row.id).await?;
        let mut nodes: BTreeMap<String, NodeView> = BTreeMap::new();
        for pool in pools {
            let machine = self.config().catalog.machine_type(&pool.spec()?.machine_type);
            let status: ObservedStored = jsonb::from_column("node pool status", &pool.status)?;
            for node in status.nodes.unwrap_or_default() {
                nodes.insert(
                    node.name.clone(),
                    NodeView {
                        name: node.name,
                        node_pool: pool.name.clone(),
                        zone: node.zone,
                        rack: node.rack,
                        ready: node.ready,
                        unschedulable: node.unschedulable,
                        kubernetes_version: node.kubernetes_version,
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
            let spec: DeploymentSpecStored = jsonb::from_column("deployment spec", &deployment.spec)?;
            let (cpu, memory) = (spec.resources.cpu_millis, spec.resources.memory_mib);
            let mut entry = DeploymentMetrics {
                namespace: deployment.namespace,
                name: deployment.name,
                pods: 0,
                ready_pods: 0,
                pending_pods: 0,
                requested_cpu_millis: 0,
                requested_memory_mib: 0,
            };
            let status: ObservedStored = jsonb::from_column("deployment status", &deployment.status)?;
            for pod in status.workload.map(|w| w.pods).unwrap_or_default() {
                entry.pods += 1;
                entry.ready_pods += i64::from(pod.ready);
                match nodes.get_mut(&pod.node) {
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

    /// `cluster_node_list`: the worker nodes as last observed, in the order
    /// of [`node_key`].
    pub async fn cluster_node_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        page: PageRequest,
    ) -> Result<Page<NodeView>> {
        let mut nodes = self.observe(ctx, project, cluster).await?.nodes;
        nodes.sort_by_cached_key(|n| node_key(&n.name));
        Ok(page.page_sorted(nodes, |n| node_key(&n.name)))
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

#[cfg(test)]
mod tests {
    use super::node_key;

    #[test]
    fn node_keys_sort_by_the_start_of_the_name_and_never_collide() {
        assert!(node_key("a-node-1") < node_key("b-node-1"));
        assert!(node_key("short") < node_key("shorter"), "zero padding sorts a prefix first");
        assert_ne!(node_key("workers-node-1"), node_key("workers-node-2"));
        assert_eq!(&node_key("workers-node-1").as_bytes()[..8], b"workers-");
    }
}
