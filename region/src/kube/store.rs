//! A hosted cluster's objects as its API server keeps them: one revision
//! counter for the cluster (every change takes the next one, which becomes
//! the object's `resourceVersion`), the objects by key, and the recent
//! changes for watches. The objects are saved with the region's state; the
//! changes are not, so a watch from before a restart is told to list again
//! (410 Gone), as etcd compaction tells it.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::resources::Kind;

/// The most recent changes kept for watches to resume from, and the most
/// bytes they may hold (each keeps its object whole).
pub const KEPT_CHANGES: usize = 4096;
pub const KEPT_CHANGE_BYTES: usize = 32 * 1024 * 1024;

/// One change, as a watch event sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub revision: u64,
    /// The object's size, serialized.
    pub bytes: usize,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    pub key: String,
    pub object: Value,
}

/// The objects of one cluster.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KubeStore {
    pub revision: u64,
    pub objects: BTreeMap<String, Value>,
    #[serde(skip)]
    changes: VecDeque<Change>,
    /// Every change after this revision is in `changes` (set when the store
    /// is first used after loading: what came before is not).
    #[serde(skip)]
    complete_since: Option<u64>,
    /// What `changes` hold, in bytes.
    #[serde(skip)]
    change_bytes: usize,
    /// What each Deployment's ReplicaSets were last brought up to date
    /// from (a fingerprint), and their owners of pods then.
    #[serde(skip)]
    pub(super) reconciled: std::collections::HashMap<String, (u64, super::replicasets::Owners)>,
    /// The revision of the last change to a pod or Service, and the one
    /// the Endpoints were last made from.
    #[serde(skip)]
    pub(super) endpoint_inputs_at: u64,
    #[serde(skip)]
    pub(super) endpoints_at: Option<u64>,
    /// The revision of the last change to a Service or Namespace: what can
    /// hold up an apply of one of Moke's Services, or let it go.
    #[serde(skip)]
    pub service_holders_at: u64,
    /// Events recorded since they were last expired, and when that was.
    #[serde(skip)]
    pub(super) events_recorded: usize,
    #[serde(skip)]
    pub(super) events_expired_at: Option<std::time::Instant>,
}

/// A watch asked to resume from a revision whose changes are gone.
#[derive(Debug, PartialEq)]
pub struct Gone;

/// The key of an object: group, resource, namespace ("" when cluster-scoped), name.
pub fn key(kind: &Kind, namespace: &str, name: &str) -> String {
    format!("{}/{}/{namespace}/{name}", kind.group, kind.resource)
}

/// The prefix of every key of `kind` (in `namespace`, when given).
pub fn prefix(kind: &Kind, namespace: Option<&str>) -> String {
    match namespace {
        Some(namespace) => format!("{}/{}/{namespace}/", kind.group, kind.resource),
        None => format!("{}/{}/", kind.group, kind.resource),
    }
}

impl KubeStore {
    fn complete_since(&mut self) -> u64 {
        *self.complete_since.get_or_insert(self.revision)
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.objects.get(key)
    }

    /// The objects whose keys start with `prefix`, in key order.
    pub fn list<'a>(&'a self, prefix: &str) -> impl Iterator<Item = (&'a String, &'a Value)> + use<'a> {
        let prefix = prefix.to_string();
        self.objects.range(prefix.clone()..).take_while(move |(key, _)| key.starts_with(&prefix))
    }

    /// Stores `object` under `key` with the next revision as its
    /// `resourceVersion`, and returns it as stored.
    pub fn put(&mut self, key: &str, mut object: Value) -> Value {
        self.complete_since();
        self.revision += 1;
        object["metadata"]["resourceVersion"] = Value::String(self.revision.to_string());
        let kind = if self.objects.contains_key(key) { "MODIFIED" } else { "ADDED" };
        self.objects.insert(key.to_string(), object.clone());
        self.record(kind, key, object.clone());
        object
    }

    /// Removes the object under `key`, if any, and returns it as it was last seen.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.complete_since();
        let mut object = self.objects.remove(key)?;
        self.revision += 1;
        object["metadata"]["resourceVersion"] = Value::String(self.revision.to_string());
        self.record("DELETED", key, object.clone());
        Some(object)
    }

    fn record(&mut self, kind: &'static str, key: &str, object: Value) {
        if key.starts_with("/pods/") || key.starts_with("/services/") {
            self.endpoint_inputs_at = self.revision;
        }
        if key.starts_with("/services/") || key.starts_with("/namespaces/") {
            self.service_holders_at = self.revision;
        }
        let bytes = serde_json::to_vec(&object).map_or(0, |b| b.len());
        self.change_bytes += bytes;
        self.changes.push_back(Change { revision: self.revision, bytes, kind, key: key.to_string(), object });
        while self.changes.len() > KEPT_CHANGES || self.change_bytes > KEPT_CHANGE_BYTES {
            let Some(dropped) = self.changes.pop_front() else { break };
            self.change_bytes -= dropped.bytes;
            self.complete_since = Some(dropped.revision);
        }
    }

    /// The changes after `revision` to keys starting with `prefix`, or
    /// [`Gone`] when the changes since then are no longer all kept.
    pub fn changes_since(&mut self, revision: u64, prefix: &str) -> Result<Vec<Change>, Gone> {
        if revision < self.complete_since() {
            return Err(Gone);
        }
        Ok(self.changes.iter().filter(|c| c.revision > revision && c.key.starts_with(prefix)).cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_change_takes_the_next_revision_and_is_seen_by_watches() {
        let mut store = KubeStore::default();
        let a = store.put("/configmaps/default/a", json!({ "metadata": { "name": "a" } }));
        assert_eq!(a["metadata"]["resourceVersion"], "1");
        store.put("/configmaps/default/a", json!({ "metadata": { "name": "a" }, "data": { "k": "v" } }));
        store.put("/configmaps/other/b", json!({ "metadata": { "name": "b" } }));
        store.remove("/configmaps/default/a");
        let seen = store.changes_since(1, "/configmaps/default/").unwrap();
        let kinds: Vec<(&str, u64)> = seen.iter().map(|c| (c.kind, c.revision)).collect();
        assert_eq!(kinds, [("MODIFIED", 2), ("DELETED", 4)]);
        assert_eq!(store.list("/configmaps/").count(), 1);
    }

    #[test]
    fn a_watch_from_before_a_restart_must_list_again() {
        let mut store = KubeStore::default();
        store.put("/configmaps/default/a", json!({ "metadata": { "name": "a" } }));
        let saved = serde_json::to_string(&store).unwrap();
        let mut loaded: KubeStore = serde_json::from_str(&saved).unwrap();
        assert_eq!(loaded.changes_since(0, "/"), Err(Gone));
        assert_eq!(loaded.changes_since(1, "/"), Ok(vec![]));
    }
}
