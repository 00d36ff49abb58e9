//! Batch loaders for the nested lists of a page: whatever number of
//! projects, clusters or operations a page holds, their clusters, node
//! pools, recent operations and steps each cost one query (one per distinct
//! page size asked for).

use std::collections::HashMap;
use std::sync::Arc;

use std::sync::OnceLock;

use async_graphql::dataloader::{DataLoader, Loader};
use uuid::Uuid;

use crate::app::{App, RequestContext};
use crate::model::{ClusterView, NodePoolView, OperationStepView, OperationView};

type LoadError = Arc<async_graphql::Error>;

fn load_error(error: crate::app::Error) -> LoadError {
    Arc::new(super::error(error))
}

/// A request's DataLoaders, each made the first time a field asks for it
/// (most requests ask for none).
pub struct Batches {
    app: Arc<App>,
    caller: RequestContext,
    clusters: OnceLock<DataLoader<Clusters>>,
    node_pools: OnceLock<DataLoader<NodePools>>,
    operations: OnceLock<DataLoader<Operations>>,
    operation_steps: OnceLock<DataLoader<OperationSteps>>,
}

impl Batches {
    pub fn new(app: Arc<App>, caller: RequestContext) -> Batches {
        Batches {
            app,
            caller,
            clusters: OnceLock::new(),
            node_pools: OnceLock::new(),
            operations: OnceLock::new(),
            operation_steps: OnceLock::new(),
        }
    }

    /// The request's loader of `L`.
    pub fn get<L: Batched>(&self) -> &DataLoader<L> {
        L::cell(self).get_or_init(|| {
            // A short gathering delay so every item of a page joins one batch even on a busy machine.
            let loader = L::new(self.app.clone(), self.caller.clone());
            DataLoader::new(loader, tokio::spawn).delay(std::time::Duration::from_millis(5))
        })
    }
}

/// A loader [`Batches`] holds.
pub trait Batched: Send + Sync + Sized + 'static {
    fn new(app: Arc<App>, caller: RequestContext) -> Self;
    fn cell(batches: &Batches) -> &OnceLock<DataLoader<Self>>;
}

macro_rules! batched {
    ($($loader:ident in $cell:ident),* $(,)?) => {$(
        impl Batched for $loader {
            fn new(app: Arc<App>, caller: RequestContext) -> Self {
                $loader { app, caller }
            }
            fn cell(batches: &Batches) -> &OnceLock<DataLoader<Self>> {
                &batches.$cell
            }
        }
    )*};
}

batched!(Clusters in clusters, NodePools in node_pools, Operations in operations, OperationSteps in operation_steps);

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
    app: Arc<App>,
    caller: RequestContext,
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
    app: Arc<App>,
    caller: RequestContext,
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
    app: Arc<App>,
    caller: RequestContext,
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
    app: Arc<App>,
    caller: RequestContext,
}

impl Loader<Uuid> for OperationSteps {
    type Value = Vec<OperationStepView>;
    type Error = LoadError;

    async fn load(&self, keys: &[Uuid]) -> Result<HashMap<Uuid, Self::Value>, Self::Error> {
        self.app.operation_steps_by_operation(&self.caller, keys).await.map_err(load_error)
    }
}
