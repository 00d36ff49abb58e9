//! Batch loaders for the nested lists of a page: whatever number of
//! projects, clusters or operations a page holds, their clusters, node
//! pools, recent operations and steps each cost one query (one per distinct
//! page size asked for).

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::dataloader::Loader;
use uuid::Uuid;

use crate::app::{App, RequestContext};
use crate::model::{ClusterView, NodePoolView, OperationStepView, OperationView};

type LoadError = Arc<async_graphql::Error>;

fn load_error(error: crate::app::Error) -> LoadError {
    Arc::new(super::error(error))
}

/// Keys that carry how many items to fetch per parent, grouped so each
/// distinct count is one query.
fn by_limit(keys: &[(Uuid, i64)]) -> HashMap<i64, Vec<Uuid>> {
    let mut groups = HashMap::<i64, Vec<Uuid>>::new();
    for (parent, limit) in keys {
        groups.entry(*limit).or_default().push(*parent);
    }
    groups
}

/// The first clusters of each project: keyed by (project, how many).
pub struct Clusters {
    pub app: Arc<App>,
    pub caller: RequestContext,
}

impl Loader<(Uuid, i64)> for Clusters {
    type Value = Vec<ClusterView>;
    type Error = LoadError;

    async fn load(&self, keys: &[(Uuid, i64)]) -> Result<HashMap<(Uuid, i64), Self::Value>, Self::Error> {
        let mut loaded = HashMap::new();
        for (limit, projects) in by_limit(keys) {
            let found = self.app.clusters_by_project(&self.caller, &projects, limit).await.map_err(load_error)?;
            loaded.extend(found.into_iter().map(|(project, clusters)| ((project, limit), clusters)));
        }
        Ok(loaded)
    }
}

/// Every node pool of each cluster (a cluster holds few).
pub struct NodePools {
    pub app: Arc<App>,
    pub caller: RequestContext,
}

impl Loader<Uuid> for NodePools {
    type Value = Vec<NodePoolView>;
    type Error = LoadError;

    async fn load(&self, keys: &[Uuid]) -> Result<HashMap<Uuid, Self::Value>, Self::Error> {
        self.app.node_pools_by_cluster(&self.caller, keys).await.map_err(load_error)
    }
}

/// The newest operations of each cluster: keyed by (cluster, how many).
pub struct Operations {
    pub app: Arc<App>,
    pub caller: RequestContext,
}

impl Loader<(Uuid, i64)> for Operations {
    type Value = Vec<OperationView>;
    type Error = LoadError;

    async fn load(&self, keys: &[(Uuid, i64)]) -> Result<HashMap<(Uuid, i64), Self::Value>, Self::Error> {
        let mut loaded = HashMap::new();
        for (limit, clusters) in by_limit(keys) {
            let found = self.app.operations_by_cluster(&self.caller, &clusters, limit).await.map_err(load_error)?;
            loaded.extend(found.into_iter().map(|(cluster, operations)| ((cluster, limit), operations)));
        }
        Ok(loaded)
    }
}

/// The steps of each operation.
pub struct OperationSteps {
    pub app: Arc<App>,
    pub caller: RequestContext,
}

impl Loader<Uuid> for OperationSteps {
    type Value = Vec<OperationStepView>;
    type Error = LoadError;

    async fn load(&self, keys: &[Uuid]) -> Result<HashMap<Uuid, Self::Value>, Self::Error> {
        self.app.operation_steps_by_operation(&self.caller, keys).await.map_err(load_error)
    }
}
