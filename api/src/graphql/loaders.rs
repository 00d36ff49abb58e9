//! Batch loaders: one query for the node pools, and one for the recent
//! operations, of every cluster on a page.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::dataloader::Loader;
use uuid::Uuid;

use crate::app::{App, RequestContext};
use crate::model::{NodePoolView, OperationView};

/// Operations shown per cluster.
pub const RECENT_OPERATIONS: i64 = 5;

pub struct NodePools {
    pub app: Arc<App>,
    pub caller: RequestContext,
}

impl Loader<Uuid> for NodePools {
    type Value = Vec<NodePoolView>;
    type Error = Arc<async_graphql::Error>;

    async fn load(&self, keys: &[Uuid]) -> Result<HashMap<Uuid, Self::Value>, Self::Error> {
        self.app.node_pools_by_cluster(&self.caller, keys).await.map_err(|e| Arc::new(super::error(e)))
    }
}

pub struct Operations {
    pub app: Arc<App>,
    pub caller: RequestContext,
}

impl Loader<Uuid> for Operations {
    type Value = Vec<OperationView>;
    type Error = Arc<async_graphql::Error>;

    async fn load(&self, keys: &[Uuid]) -> Result<HashMap<Uuid, Self::Value>, Self::Error> {
        self.app
            .operations_by_cluster(&self.caller, keys, RECENT_OPERATIONS)
            .await
            .map_err(|e| Arc::new(super::error(e)))
    }
}
