//! A cluster's events: the history behind its status. The database writes
//! them (triggers on `operation_steps`, `clusters` and `node_pools`, see
//! migration 47) as operation progress and region observations are
//! recorded; this reads them.

use chrono::{DateTime, Utc};
use moke_iam::Action;

use crate::app::authz::Lock;
use crate::app::infra::clusters;
use crate::app::infra::store::clusters::{self as store, ClusterEventRow};
use crate::app::region::command::ResourceKind;
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result};
use crate::ids::{ClusterKind, OperationId, ProjectKind};
use crate::model::*;

impl ClusterEventRow {
    fn into_view(self) -> Result<ClusterEventView> {
        let kind = ClusterEventKind::parse(&self.kind)
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown cluster event kind {}", self.kind)))?;
        let resource = ResourceKind::parse(&self.resource_type)
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown resource type {}", self.resource_type)))?;
        Ok(ClusterEventView {
            at: self.at,
            kind,
            resource_id: resource.id_text(self.resource_id),
            resource_type: self.resource_type,
            resource_name: self.resource_name,
            message: self.message,
            operation_id: self.operation_id.map(OperationId::from_uuid),
            sequence: self.seq,
        })
    }
}

impl App {
    /// `cluster_event_list`: what happened in the cluster, newest first,
    /// none older than `since` when given.
    pub async fn cluster_event_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        since: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Page<ClusterEventView>> {
        let mut conn = self.db().acquire().await?;
        let row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        // A page token holds the sequence number of the last event seen.
        let before = page.after.map(|token| token.as_u128() as i64);
        let rows = store::events(&mut conn, row.id, since, before, page.fetch_limit()).await?;
        let events = rows.into_iter().map(ClusterEventRow::into_view).collect::<Result<Vec<_>>>()?;
        Ok(page.page(events, ClusterEventView::cursor_key))
    }
}
