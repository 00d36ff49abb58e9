//! Server-side apply and field ownership (`metadata.managedFields`): every
//! write records which manager set which fields. An apply
//! (`application/apply-patch+yaml`) sets the fields its configuration
//! names, removes the fields its manager set before and names no more
//! (unless another manager holds them too), and conflicts with another
//! manager holding a field it would change to another value, unless forced
//! (`force=true`), which takes the field over. A create, update or patch
//! makes its manager the owner of what it changed.
//!
//! Fields are paths of names; a list whose items Kubernetes merges by a key
//! (containers by `name`, ports by `containerPort` or `port`, …) is entered
//! by that key (`k:{"name":"web"}`), any other list is one field. The
//! ownership is written as Kubernetes writes it (`FieldsV1`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// One step of a field's path: a name, or a keyed list's item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Field(String),
    /// The item of a keyed list with these key fields (`{"name":"web"}`).
    Key(String),
}

/// A set of fields.
pub type Fields = BTreeSet<Vec<Step>>;

/// A conflict: the manager holding the field, and the field (`.spec.replicas`).
#[derive(Debug, PartialEq)]
pub struct Conflict {
    pub manager: String,
    pub field: String,
}

/// The fields that name an item of a list by, per list name: the lists
/// Kubernetes merges item by item rather than replacing whole.
fn merge_key(list: &str) -> Option<&'static [&'static str]> {
    Some(match list {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "volumeMounts"
        | "imagePullSecrets" => &["name"],
        "ports" => &["containerPort", "port", "protocol"],
        "volumeDevices" => &["devicePath"],
        "conditions" => &["type"],
        _ => return None,
    })
}

/// The key of a keyed list's item (`{"name":"web"}`), None if it has none.
fn item_key(list: &str, item: &Value) -> Option<String> {
    let fields = merge_key(list)?;
    let mut key = Map::new();
    for field in fields {
        if let Some(value) = item.get(*field).filter(|v| !v.is_null()) {
            // A key is a short name or number; anything else makes the list one field.
            let short = value.as_str().map_or(value.is_number(), |text| text.len() <= 253);
            if !short {
                return None;
            }
            key.insert((*field).to_string(), value.clone());
        }
    }
    (!key.is_empty()).then(|| Value::Object(key).to_string())
}

/// Fields no manager owns: identity and what the server sets.
fn untracked(path: &[Step]) -> bool {
    let names: Vec<&str> = path
        .iter()
        .map(|s| match s {
            Step::Field(name) => name.as_str(),
            Step::Key(_) => "",
        })
        .collect();
    matches!(
        names.as_slice(),
        ["apiVersion"]
            | ["kind"]
            | ["status", ..]
            | [
                "metadata",
                "name"
                    | "namespace"
                    | "uid"
                    | "resourceVersion"
                    | "generation"
                    | "creationTimestamp"
                    | "managedFields"
                    | "deletionTimestamp"
                    | "generateName",
                ..
            ]
    )
}

/// The most fields one object may have tracked, the most bytes their
/// paths may take, and the longest list merged item by item (a longer one
/// is one field): field tracking stays linear and bounded.
pub const MAX_FIELDS: usize = 5000;
const MAX_PATH_BYTES: usize = 4 * 1024 * 1024;
const MAX_KEYED_ITEMS: usize = 256;
/// The most managers that apply to one object, and the most entries of
/// ownership it keeps (older updaters fold into one, as `ancient-changes`).
pub const MAX_APPLY_MANAGERS: usize = 10;
const MAX_ENTRIES: usize = 20;

/// An object with more fields than ownership is tracked for.
#[derive(Debug, PartialEq)]
pub struct TooManyFields;

/// The leaf fields `value` sets, each with its value (a keyed list's item
/// with the item).
fn leaves(value: &Value) -> Result<BTreeMap<Vec<Step>, &Value>, TooManyFields> {
    let mut out = BTreeMap::new();
    let mut bytes = 0;
    walk(value, &mut Vec::new(), &mut out, &mut bytes)?;
    out.retain(|path, _| !untracked(path));
    Ok(out)
}

/// The leaf fields `value` sets.
#[cfg(test)]
fn fields_of(value: &Value) -> Result<Fields, TooManyFields> {
    Ok(leaves(value)?.into_keys().collect())
}

fn step_bytes(step: &Step) -> usize {
    match step {
        Step::Field(name) | Step::Key(name) => name.len() + 8,
    }
}

fn walk<'a>(
    value: &'a Value,
    path: &mut Vec<Step>,
    out: &mut BTreeMap<Vec<Step>, &'a Value>,
    bytes: &mut usize,
) -> Result<(), TooManyFields> {
    fn leaf<'a>(
        path: &[Step],
        value: &'a Value,
        out: &mut BTreeMap<Vec<Step>, &'a Value>,
        bytes: &mut usize,
    ) -> Result<(), TooManyFields> {
        *bytes += path.iter().map(step_bytes).sum::<usize>();
        if out.len() >= MAX_FIELDS || *bytes > MAX_PATH_BYTES {
            return Err(TooManyFields);
        }
        out.insert(path.to_vec(), value);
        Ok(())
    }
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            for (name, inner) in fields {
                // What no manager owns is not walked (nor counted).
                let top = path.is_empty() && name == "status";
                let ownership = path.len() == 1 && path[0] == Step::Field("metadata".into()) && name == "managedFields";
                if top || ownership {
                    continue;
                }
                path.push(Step::Field(name.clone()));
                walk(inner, path, out, bytes)?;
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let list = match path.last() {
                Some(Step::Field(name)) => name.clone(),
                _ => String::new(),
            };
            let keys: Option<Vec<String>> = (items.len() <= MAX_KEYED_ITEMS)
                .then(|| items.iter().map(|item| item_key(&list, item)).collect())
                .flatten();
            match keys {
                Some(keys) => {
                    for (key, item) in keys.into_iter().zip(items) {
                        path.push(Step::Key(key));
                        leaf(path, item, out, bytes)?;
                        walk(item, path, out, bytes)?;
                        path.pop();
                    }
                }
                None => leaf(path, value, out, bytes)?,
            }
        }
        _ => leaf(path, value, out, bytes)?,
    }
    Ok(())
}

/// Whether `path` holds the same in two objects' leaves; a keyed list's
/// item is the same while it is in both (its fields are fields of their own).
fn same_at(a: &BTreeMap<Vec<Step>, &Value>, b: &BTreeMap<Vec<Step>, &Value>, path: &[Step]) -> bool {
    match path.last() {
        Some(Step::Key(_)) => a.contains_key(path) == b.contains_key(path),
        _ => a.get(path) == b.get(path),
    }
}

/// Removes what `path` names from `value`, if it is there.
fn remove_at(value: &mut Value, path: &[Step]) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut here = value;
    for (index, step) in parents.iter().enumerate() {
        here = match step {
            Step::Field(name) => match here.get_mut(name) {
                Some(next) => next,
                None => return,
            },
            Step::Key(key) => {
                let list = list_name(parents, index);
                // A list too long to be merged by key has no keyed fields.
                let Some(item) = here
                    .as_array_mut()
                    .filter(|items| items.len() <= MAX_KEYED_ITEMS)
                    .and_then(|items| items.iter_mut().find(|item| item_key(&list, item).as_deref() == Some(key)))
                else {
                    return;
                };
                item
            }
        };
    }
    match last {
        Step::Field(name) => {
            if let Some(fields) = here.as_object_mut() {
                fields.remove(name);
            }
        }
        Step::Key(key) => {
            let list = list_name(path, path.len() - 1);
            if let Some(items) = here.as_array_mut().filter(|items| items.len() <= MAX_KEYED_ITEMS) {
                items.retain(|item| item_key(&list, item).as_deref() != Some(key.as_str()));
            }
        }
    }
}

fn list_name(path: &[Step], index: usize) -> String {
    match index.checked_sub(1).map(|i| &path[i]) {
        Some(Step::Field(name)) => name.clone(),
        _ => String::new(),
    }
}

/// Merges an applied configuration into the live object: objects field by
/// field, keyed lists item by item, anything else replaced.
fn merge(live: &mut Value, applied: &Value, list: &str) {
    match (live, applied) {
        (Value::Object(live), Value::Object(applied)) => {
            for (name, value) in applied {
                let entry = live.entry(name.clone()).or_insert(Value::Null);
                if entry.is_null() {
                    *entry = value.clone();
                } else {
                    merge(entry, value, name);
                }
            }
        }
        (Value::Array(live), Value::Array(applied))
            if applied.len() <= MAX_KEYED_ITEMS
                && live.len() <= MAX_KEYED_ITEMS
                && applied.iter().all(|item| item_key(list, item).is_some())
                && live.iter().all(|item| item_key(list, item).is_some()) =>
        {
            let mut index: std::collections::HashMap<String, usize> =
                live.iter().enumerate().filter_map(|(at, item)| item_key(list, item).map(|key| (key, at))).collect();
            for item in applied {
                let key = item_key(list, item).unwrap_or_default();
                match index.get(&key) {
                    Some(&at) => merge(&mut live[at], item, ""),
                    None => {
                        index.insert(key, live.len());
                        live.push(item.clone());
                    }
                }
            }
        }
        (live, applied) => *live = applied.clone(),
    }
}

/// A field as Kubernetes names it in a conflict (`.spec.template.spec.containers[name="web"].image`).
fn field_name(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            Step::Key(key) => {
                let pairs: Vec<String> = serde_json::from_str::<Map<String, Value>>(key)
                    .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                    .unwrap_or_default();
                out.push_str(&format!("[{}]", pairs.join(",")));
            }
        }
    }
    out
}

/// The most bytes an object's recorded ownership may take.
pub const MAX_OWNERSHIP_BYTES: usize = 1024 * 1024;

/// Whether an object's recorded ownership is within its bound.
pub fn ownership_fits(object: &Value) -> bool {
    serde_json::to_vec(&object["metadata"]["managedFields"]).is_ok_and(|b| b.len() <= MAX_OWNERSHIP_BYTES)
}

/// One manager's entry in `managedFields`.
#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: String,
    fields: Fields,
}

fn entries(object: &Value) -> Vec<Entry> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| {
            let mut fields = Fields::new();
            read_tree(&entry["fieldsV1"], &mut Vec::new(), &mut fields);
            Entry {
                manager: entry["manager"].as_str().unwrap_or_default().to_string(),
                operation: entry["operation"].as_str().unwrap_or("Update").to_string(),
                api_version: entry["apiVersion"].as_str().unwrap_or_default().to_string(),
                time: entry["time"].as_str().unwrap_or_default().to_string(),
                fields,
            }
        })
        .collect()
}

/// Reads a `FieldsV1` tree (`{"f:spec":{"f:replicas":{}}}`) into fields.
fn read_tree(tree: &Value, path: &mut Vec<Step>, out: &mut Fields) {
    let Some(children) = tree.as_object() else { return };
    let mut leaf = true;
    for (name, child) in children {
        let step = if let Some(field) = name.strip_prefix("f:") {
            Step::Field(field.to_string())
        } else if let Some(key) = name.strip_prefix("k:") {
            Step::Key(key.to_string())
        } else {
            if name == "." {
                out.insert(path.clone());
            }
            continue;
        };
        leaf = false;
        path.push(step);
        read_tree(child, path, out);
        path.pop();
    }
    if leaf && !path.is_empty() {
        out.insert(path.clone());
    }
}

/// Writes fields as a `FieldsV1` tree.
fn write_tree(fields: &Fields) -> Value {
    let mut tree = json!({});
    for path in fields {
        let mut here = &mut tree;
        for step in path {
            let name = match step {
                Step::Field(name) => format!("f:{name}"),
                Step::Key(key) => format!("k:{key}"),
            };
            here = here.as_object_mut().map(|m| m.entry(name).or_insert_with(|| json!({}))).expect("an object");
        }
        // An item that also has fields inside marks itself with ".".
        if matches!(path.last(), Some(Step::Key(_))) {
            here["."] = json!({});
        }
    }
    tree
}

fn write_entries(object: &mut Value, entries: &[Entry]) {
    let written: Vec<Value> = entries
        .iter()
        .filter(|entry| !entry.fields.is_empty())
        .map(|entry| {
            json!({
                "manager": entry.manager, "operation": entry.operation, "apiVersion": entry.api_version,
                "time": entry.time, "fieldsType": "FieldsV1", "fieldsV1": write_tree(&entry.fields),
            })
        })
        .collect();
    if written.is_empty() {
        if let Some(metadata) = object["metadata"].as_object_mut() {
            metadata.remove("managedFields");
        }
    } else {
        object["metadata"]["managedFields"] = json!(written);
    }
}

/// Why an apply was not made.
#[derive(Debug, PartialEq)]
pub enum ApplyError {
    /// Other managers hold fields it would change.
    Conflicts(Vec<Conflict>),
    TooManyFields,
    /// The object has as many appliers as it may.
    TooManyManagers,
}

impl From<TooManyFields> for ApplyError {
    fn from(_: TooManyFields) -> Self {
        ApplyError::TooManyFields
    }
}

/// Applies `applied` as `manager` to `live` (None: the object is new), and
/// returns the object as it is to be stored, or why not.
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    now: &str,
) -> Result<Value, ApplyError> {
    let mut object = live.cloned().unwrap_or_else(|| json!({ "metadata": {} }));
    let mut owners = entries(&object);
    let new_manager = !owners.iter().any(|o| o.manager == manager && o.operation == "Apply");
    if new_manager && owners.iter().filter(|o| o.operation == "Apply").count() >= MAX_APPLY_MANAGERS {
        return Err(ApplyError::TooManyManagers);
    }
    let wanted: Fields;
    {
        let live_leaves = leaves(&object)?;
        let applied_leaves = leaves(applied)?;
        wanted = applied_leaves.keys().cloned().collect();
        let mut conflicts = Vec::new();
        for owner in owners.iter_mut().filter(|o| !(o.manager == manager && o.operation == "Apply")) {
            // A field both name, or one inside the other (a whole list and
            // one of its items), that the configuration would change.
            let taken: Vec<Vec<Step>> = owner
                .fields
                .iter()
                .filter_map(|held| {
                    // Objects merge field by field; a list or a value in
                    // place of what another holds inside it replaces it whole.
                    let whole = |leaf: Option<&&Value>| leaf.is_some_and(|v| !v.is_object());
                    let conflicting = if wanted.contains(held) {
                        !same_at(&live_leaves, &applied_leaves, held)
                    } else if let Some(n) =
                        (1..held.len()).find(|&n| wanted.contains(&held[..n]) && whole(applied_leaves.get(&held[..n])))
                    {
                        !same_at(&live_leaves, &applied_leaves, &held[..n])
                    } else {
                        let inside = wanted.range(held.clone()..).next().is_some_and(|w| w.starts_with(held));
                        inside && whole(live_leaves.get(held))
                    };
                    conflicting.then(|| held.clone())
                })
                .collect();
            if force {
                for path in &taken {
                    owner.fields.remove(path);
                }
            } else {
                conflicts.extend(
                    taken.iter().map(|path| Conflict { manager: owner.manager.clone(), field: field_name(path) }),
                );
            }
        }
        if !conflicts.is_empty() {
            return Err(ApplyError::Conflicts(conflicts));
        }
    }
    let before =
        owners.iter().position(|o| o.manager == manager && o.operation == "Apply").map(|index| owners.remove(index));
    // What this manager applied before and no longer names goes, unless
    // another manager holds it too.
    if let Some(before) = &before {
        let held_by_others: Fields = owners.iter().flat_map(|o| o.fields.iter().cloned()).collect();
        for path in before.fields.difference(&wanted) {
            if !held_by_others.contains(path) {
                remove_at(&mut object, path);
            }
        }
    }
    let mut configuration = applied.clone();
    if let Some(metadata) = configuration["metadata"].as_object_mut() {
        metadata.remove("managedFields");
        metadata.remove("resourceVersion");
    }
    merge(&mut object, &configuration, "");
    owners.push(Entry {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version: applied["apiVersion"].as_str().unwrap_or_default().to_string(),
        time: now.to_string(),
        fields: wanted,
    });
    // Nobody owns what is no longer there (a list replaced whole).
    let present: Fields = leaves(&object)?.into_keys().collect();
    for owner in &mut owners {
        owner.fields.retain(|path| present.contains(path));
    }
    write_entries(&mut object, &owners);
    Ok(object)
}

/// Records a create, update or patch by `manager` (`before` None: a
/// create): it owns every field it set to a new value, which no other
/// manager owns any longer; a field it removed is no one's.
pub fn record_update(
    before: Option<&Value>,
    after: &mut Value,
    manager: &str,
    api_version: &str,
    now: &str,
) -> Result<(), TooManyFields> {
    let mut owners = before.map(entries).unwrap_or_default();
    let (changed, removed): (Fields, Fields) = {
        let empty = BTreeMap::new();
        let old = match before {
            Some(before) => leaves(before)?,
            None => empty,
        };
        let new = leaves(after)?;
        let changed = new.keys().filter(|path| before.is_none() || !same_at(&old, &new, path)).cloned().collect();
        let removed = old.keys().filter(|path| !new.contains_key(*path)).cloned().collect();
        (changed, removed)
    };
    if changed.is_empty() && removed.is_empty() {
        write_entries(after, &owners);
        return Ok(());
    }
    for owner in &mut owners {
        owner.fields.retain(|path| !changed.contains(path) && !removed.contains(path));
    }
    let mut mine = owners
        .iter()
        .position(|o| o.manager == manager && o.operation == "Update")
        .map(|index| owners.remove(index))
        .unwrap_or_else(|| Entry {
            manager: manager.to_string(),
            operation: "Update".into(),
            api_version: api_version.to_string(),
            time: String::new(),
            fields: Fields::new(),
        });
    mine.fields.extend(changed);
    mine.time = now.to_string();
    owners.push(mine);
    if owners.len() > MAX_ENTRIES {
        // The oldest updaters' fields fold into one entry.
        let (ancient, kept): (Vec<Entry>, Vec<Entry>) = {
            let excess = owners.len() - MAX_ENTRIES + 1;
            let mut updaters = 0;
            owners.into_iter().partition(|o| {
                let fold = o.operation == "Update" && o.manager != manager && updaters < excess;
                updaters += usize::from(fold);
                fold
            })
        };
        owners = kept;
        owners.push(Entry {
            manager: "ancient-changes".into(),
            operation: "Update".into(),
            api_version: api_version.to_string(),
            time: now.to_string(),
            fields: ancient.into_iter().flat_map(|o| o.fields).collect(),
        });
    }
    write_entries(after, &owners);
    Ok(())
}

/// The message and causes of a 409 for `conflicts`, as the API server words them.
pub fn conflict_status(conflicts: &[Conflict]) -> (String, Value) {
    let mut by_manager: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for conflict in conflicts {
        by_manager.entry(&conflict.manager).or_default().push(&conflict.field);
    }
    let noun = if conflicts.len() == 1 { "conflict" } else { "conflicts" };
    let mut message = format!("Apply failed with {} {noun}:", conflicts.len());
    for (manager, fields) in &by_manager {
        for field in fields {
            message.push_str(&format!(" conflict with \"{manager}\": {field}"));
        }
    }
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| json!({ "reason": "FieldManagerConflict", "message": format!("conflict with \"{}\"", c.manager), "field": c.field }))
        .collect();
    (message, json!({ "causes": causes }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "web" },
                "spec": { "replicas": replicas, "template": { "spec": { "containers": [{ "name": "web", "image": image }] } } } })
    }

    #[test]
    fn a_second_manager_conflicts_until_it_forces() {
        let first = apply(None, &deployment(2, "web:1"), "alice", false, "t1").unwrap();
        let fields = &first["metadata"]["managedFields"][0]["fieldsV1"];
        assert_eq!(fields["f:spec"]["f:replicas"], json!({}));
        assert!(fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]["."].is_object());

        // The same values are shared, not conflicts.
        let shared = apply(Some(&first), &deployment(2, "web:1"), "bob", false, "t2").unwrap();
        assert_eq!(shared["metadata"]["managedFields"].as_array().unwrap().len(), 2);

        let ApplyError::Conflicts(refused) =
            apply(Some(&shared), &deployment(5, "web:1"), "bob", false, "t3").unwrap_err()
        else {
            panic!("a conflict");
        };
        assert_eq!(refused, [Conflict { manager: "alice".into(), field: ".spec.replicas".into() }]);
        let (message, _) = conflict_status(&refused);
        assert_eq!(message, "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas");

        let forced = apply(Some(&shared), &deployment(5, "web:1"), "bob", true, "t3").unwrap();
        assert_eq!(forced["spec"]["replicas"], 5);
        let alice = entries(&forced).into_iter().find(|e| e.manager == "alice").unwrap();
        assert!(!alice.fields.contains(&vec![Step::Field("spec".into()), Step::Field("replicas".into())]));
    }

    #[test]
    fn a_field_no_longer_applied_is_removed_unless_another_holds_it() {
        let mut config = deployment(2, "web:1");
        config["metadata"]["labels"] = json!({ "tier": "front", "team": "a" });
        let first = apply(None, &config, "alice", false, "t1").unwrap();
        let mut edited = first.clone();
        edited["metadata"]["labels"]["team"] = json!("b");
        record_update(Some(&first), &mut edited, "kubectl-edit", "apps/v1", "t2").unwrap();
        let mut fewer = deployment(2, "web:1");
        fewer["metadata"]["labels"] = json!({});
        let after = apply(Some(&edited), &fewer, "alice", false, "t3").unwrap();
        assert_eq!(after["metadata"]["labels"], json!({ "team": "b" }));
    }

    #[test]
    fn an_object_of_too_many_fields_is_refused_not_walked_for_long() {
        let data: Map<String, Value> = (0..MAX_FIELDS + 1).map(|i| (format!("k{i}"), json!("v"))).collect();
        let mut huge = json!({ "metadata": { "name": "c" }, "data": data });
        assert_eq!(record_update(None, &mut huge, "m", "v1", "t"), Err(TooManyFields));
        let list: Vec<Value> = (0..MAX_KEYED_ITEMS + 1).map(|i| json!({ "name": format!("e{i}") })).collect();
        let long = json!({ "spec": { "env": list } });
        assert_eq!(fields_of(&long).unwrap().len(), 1, "a list too long to merge by key is one field");
    }

    #[test]
    fn replacing_a_list_whole_conflicts_with_the_owner_of_its_items() {
        let first = apply(None, &deployment(2, "web:1"), "alice", false, "t1").unwrap();
        let long: Vec<Value> =
            (0..MAX_KEYED_ITEMS + 1).map(|i| json!({ "name": format!("c{i}"), "image": "x" })).collect();
        let mut whole = deployment(2, "web:1");
        whole["spec"]["template"]["spec"]["containers"] = json!(long);
        assert!(matches!(apply(Some(&first), &whole, "bob", false, "t2"), Err(ApplyError::Conflicts(_))));
        let forced = apply(Some(&first), &whole, "bob", true, "t2").unwrap();
        let alice = entries(&forced).into_iter().find(|e| e.manager == "alice").unwrap();
        assert!(
            alice.fields.iter().all(|path| !path.contains(&Step::Field("containers".into()))),
            "{:?}",
            alice.fields
        );
        let mut many = first;
        for n in 1..MAX_APPLY_MANAGERS {
            many = apply(Some(&many), &deployment(2, "web:1"), &format!("m{n}"), false, "t").unwrap();
        }
        assert_eq!(
            apply(Some(&many), &deployment(2, "web:1"), "one-more", false, "t"),
            Err(ApplyError::TooManyManagers)
        );
    }

    #[test]
    fn keyed_lists_merge_item_by_item() {
        let mut live =
            json!({ "spec": { "containers": [{ "name": "a", "image": "a:1" }, { "name": "b", "image": "b:1" }] } });
        merge(&mut live, &json!({ "spec": { "containers": [{ "name": "b", "image": "b:2" }] } }), "");
        assert_eq!(live["spec"]["containers"][1]["image"], "b:2");
        assert_eq!(live["spec"]["containers"][0]["image"], "a:1");
    }
}
