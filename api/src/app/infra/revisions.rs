//! Spec history of clusters and node pools: every generation of the desired
//! spec as it was (written by the database as the generation moves, see
//! `store::spec_revisions`), and what differs between two, so "what changed
//! before it broke" has an answer.

use moke_iam::Action;
use serde_json::Value;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::infra::clusters;
use crate::app::infra::node_pools;
use crate::app::infra::store::spec_revisions::{self as store, SpecRevisionRow};
use crate::app::infra::store::{ClusterSpecStored, NodePoolSpecStored};
use crate::app::kernel::jsonb;
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result};
use crate::ids::{ClusterKind, NodePoolKind, OperationId, ProjectKind};
use crate::model::*;

impl SpecRevisionRow {
    pub(in crate::app::infra) fn cluster_spec(&self) -> Result<ClusterSpec> {
        jsonb::from_column::<ClusterSpecStored>("cluster spec revision", &self.spec).map(ClusterSpec::from)
    }

    pub(in crate::app::infra) fn node_pool_spec(&self) -> Result<NodePoolSpec> {
        jsonb::from_column::<NodePoolSpecStored>("node pool spec revision", &self.spec).map(NodePoolSpec::from)
    }

    fn into_cluster_view(self) -> Result<ClusterRevisionView> {
        Ok(ClusterRevisionView {
            generation: self.generation,
            spec: self.cluster_spec()?,
            cause: self.operation_kind,
            operation_id: self.operation_id.map(OperationId::from_uuid),
            created_by: self.created_by,
            created_at: self.created_at,
        })
    }

    fn into_node_pool_view(self) -> Result<NodePoolRevisionView> {
        Ok(NodePoolRevisionView {
            generation: self.generation,
            spec: self.node_pool_spec()?,
            cause: self.operation_kind,
            operation_id: self.operation_id.map(OperationId::from_uuid),
            created_by: self.created_by,
            created_at: self.created_at,
        })
    }
}

/// A generation as a path names it; text that is not one names nothing.
fn parse_generation(text: &str) -> Result<i64> {
    text.parse::<i64>().ok().filter(|g| *g >= 1).ok_or_else(|| Error::not_found("revision", text))
}

/// The two revisions a diff compares: `generation` and `from` (by default
/// the revision before it; none for the first, which is compared with
/// nothing). Either not kept (the newest 100 are) is not found.
async fn revisions_to_compare(
    conn: &mut sqlx::PgConnection,
    resource: Uuid,
    generation: &str,
    from: Option<i64>,
) -> Result<(Option<SpecRevisionRow>, SpecRevisionRow)> {
    let to = store::find(conn, resource, parse_generation(generation)?)
        .await?
        .ok_or_else(|| Error::not_found("revision", generation))?;
    let older = match from {
        None => store::previous(conn, resource, to.generation).await?,
        Some(from) => Some(
            store::find(conn, resource, from).await?.ok_or_else(|| Error::not_found("revision", from.to_string()))?,
        ),
    };
    Ok((older, to))
}

impl App {
    /// `cluster_revision_list`: the cluster's spec revisions, newest first.
    pub async fn cluster_revision_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        page: PageRequest,
    ) -> Result<Page<ClusterRevisionView>> {
        let mut conn = self.db().acquire().await?;
        let row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let before = page.after.map(|token| token.as_u128() as i64);
        let rows = store::list(&mut conn, row.id, before, page.fetch_limit()).await?;
        let views = rows.into_iter().map(SpecRevisionRow::into_cluster_view).collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, ClusterRevisionView::cursor_key))
    }

    /// `cluster_revision_diff`: what differs between the cluster's spec at
    /// `generation` and at `from` (by default the revision before).
    pub async fn cluster_revision_diff(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        generation: &str,
        from: Option<i64>,
    ) -> Result<SpecDiff> {
        let mut conn = self.db().acquire().await?;
        let row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let (older, newer) = revisions_to_compare(&mut conn, row.id, generation, from).await?;
        let before = older.as_ref().map(|r| r.cluster_spec()).transpose()?;
        let after = newer.cluster_spec()?;
        Ok(diff_of(older.map(|r| r.generation), newer.generation, before.as_ref(), &after))
    }

    /// `node_pool_revision_list`: the pool's spec revisions, newest first.
    pub async fn node_pool_revision_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        page: PageRequest,
    ) -> Result<Page<NodePoolRevisionView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let pool = node_pools::find(&mut conn, &cluster_row, pool, Lock::None).await?;
        let before = page.after.map(|token| token.as_u128() as i64);
        let rows = store::list(&mut conn, pool.id, before, page.fetch_limit()).await?;
        let views = rows.into_iter().map(SpecRevisionRow::into_node_pool_view).collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, NodePoolRevisionView::cursor_key))
    }

    /// `node_pool_revision_diff`: what differs between the pool's spec at
    /// `generation` and at `from` (by default the revision before).
    pub async fn node_pool_revision_diff(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        generation: &str,
        from: Option<i64>,
    ) -> Result<SpecDiff> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let pool = node_pools::find(&mut conn, &cluster_row, pool, Lock::None).await?;
        let (older, newer) = revisions_to_compare(&mut conn, pool.id, generation, from).await?;
        let before = older.as_ref().map(|r| r.node_pool_spec()).transpose()?;
        let after = newer.node_pool_spec()?;
        Ok(diff_of(older.map(|r| r.generation), newer.generation, before.as_ref(), &after))
    }
}

/// The diff between two public specs (`before` none: compared with nothing,
/// `from` 0).
fn diff_of<S: serde::Serialize>(from: Option<i64>, to: i64, before: Option<&S>, after: &S) -> SpecDiff {
    let json = |spec: &S| serde_json::to_value(spec).unwrap_or(Value::Null);
    let before = before.map(json).unwrap_or_else(|| Value::Object(Default::default()));
    SpecDiff { from: from.unwrap_or(0), to, changes: spec_diff(&before, &json(after)) }
}

/// Every value that differs between two JSON documents, by JSON Pointer:
/// objects compared key by key, arrays index by index, anything else as a
/// whole. A null counts as absent.
pub fn spec_diff(before: &Value, after: &Value) -> Vec<SpecChange> {
    let mut changes = Vec::new();
    diff_into(&mut String::new(), Some(before), Some(after), &mut changes);
    changes
}

fn diff_into(path: &mut String, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<SpecChange>) {
    let before = before.filter(|v| !v.is_null());
    let after = after.filter(|v| !v.is_null());
    let len = path.len();
    match (before, after) {
        (Some(Value::Object(old)), Some(Value::Object(new))) => {
            let added = new.keys().filter(|key| !old.contains_key(*key));
            for key in old.keys().chain(added) {
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                diff_into(path, old.get(key), new.get(key), out);
                path.truncate(len);
            }
        }
        (Some(Value::Array(old)), Some(Value::Array(new))) => {
            for index in 0..old.len().max(new.len()) {
                path.push_str(&format!("/{index}"));
                diff_into(path, old.get(index), new.get(index), out);
                path.truncate(len);
            }
        }
        (old, new) if old == new => {}
        (old, new) => out.push(SpecChange { path: path.clone(), before: old.cloned(), after: new.cloned() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_names_each_changed_value_by_json_pointer() {
        let before = json!({"version": "1.31", "pools": [{"count": 3}], "firewall": null, "a/b": 1, "gone": true});
        let after = json!({"version": "1.32", "pools": [{"count": 3}, {"count": 1}], "a/b": 2, "new": {"x": 1}});
        let changes: Vec<_> = spec_diff(&before, &after).into_iter().map(|c| (c.path, c.before, c.after)).collect();
        assert_eq!(
            changes,
            vec![
                ("/a~1b".to_string(), Some(json!(1)), Some(json!(2))),
                ("/gone".to_string(), Some(json!(true)), None),
                ("/pools/1".to_string(), None, Some(json!({"count": 1}))),
                ("/version".to_string(), Some(json!("1.31")), Some(json!("1.32"))),
                ("/new".to_string(), None, Some(json!({"x": 1}))),
            ]
        );
        assert!(spec_diff(&after, &after).is_empty());
        // A null and an absent value are the same.
        assert!(spec_diff(&json!({"a": null}), &json!({})).is_empty());
    }
}
