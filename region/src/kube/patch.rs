//! The three patch formats kubectl sends: JSON merge patch (RFC 7386), JSON
//! Patch (RFC 6902) and Kubernetes' strategic merge patch, whose lists of
//! objects merge by a key (`containers` by `name`, `ports` by
//! `containerPort`...) instead of being replaced, with the `$patch`,
//! `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…`
//! directives kubectl's three-way patches carry.

use serde_json::{Map, Value};

/// RFC 7386: objects merge, `null` removes, anything else replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(fields) = target else { return };
    for (key, value) in patch {
        if value.is_null() {
            fields.remove(key);
        } else {
            merge(fields.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Why a patch could not be applied.
#[derive(Debug, PartialEq)]
pub struct PatchError(pub String);

/// The most operations of one JSON patch.
pub const MAX_OPERATIONS: usize = 1000;

fn size(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |bytes| bytes.len())
}

/// RFC 6902: a list of operations applied in order; any failure leaves the
/// target as it was. What operations add (their values, what `copy`
/// copies) is counted, and a patch that would grow the object past
/// `max_bytes` fails before it does: `copy` could otherwise double it at
/// every step.
pub fn json_patch(target: &mut Value, operations: &Value, max_bytes: usize) -> Result<(), PatchError> {
    let Value::Array(operations) = operations else {
        return Err(PatchError("a JSON patch is a list of operations".into()));
    };
    if operations.len() > MAX_OPERATIONS {
        return Err(PatchError(format!("a JSON patch holds at most {MAX_OPERATIONS} operations")));
    }
    let mut patched = target.clone();
    let mut grown = size(&patched);
    let mut grow = |by: &Value| {
        grown = grown.saturating_add(size(by));
        if grown > max_bytes {
            return Err(PatchError(format!("the patched object would be larger than {max_bytes} bytes")));
        }
        Ok(())
    };
    for operation in operations {
        let text = |name: &str| operation.get(name).and_then(Value::as_str);
        let path = text("path").ok_or_else(|| PatchError("every operation has a path".into()))?;
        match text("op") {
            Some("add") => {
                let value = value_of(operation)?;
                grow(&value)?;
                add(&mut patched, path, value)?;
            }
            Some("remove") => {
                remove(&mut patched, path)?;
            }
            Some("replace") => {
                let value = value_of(operation)?;
                grow(&value)?;
                remove(&mut patched, path)?;
                add(&mut patched, path, value)?;
            }
            Some("move") => {
                let from = text("from").ok_or_else(|| PatchError("move needs from".into()))?;
                let moved = remove(&mut patched, from)?;
                add(&mut patched, path, moved)?;
            }
            Some("copy") => {
                let from = text("from").ok_or_else(|| PatchError("copy needs from".into()))?;
                let copied = patched.pointer(from).cloned().ok_or_else(|| missing(from))?;
                grow(&copied)?;
                add(&mut patched, path, copied)?;
            }
            Some("test") => {
                if patched.pointer(path) != Some(&value_of(operation)?) {
                    return Err(PatchError(format!("test failed at {path}")));
                }
            }
            other => return Err(PatchError(format!("unknown operation {other:?}"))),
        }
    }
    *target = patched;
    Ok(())
}

fn value_of(operation: &Value) -> Result<Value, PatchError> {
    operation.get("value").cloned().ok_or_else(|| PatchError("the operation needs a value".into()))
}

fn missing(path: &str) -> PatchError {
    PatchError(format!("no value at {path}"))
}

/// The parent of a JSON pointer and its last token (unescaped).
fn split(path: &str) -> Result<(&str, String), PatchError> {
    let at = path.rfind('/').ok_or_else(|| PatchError(format!("{path:?} is not a JSON pointer")))?;
    Ok((&path[..at], path[at + 1..].replace("~1", "/").replace("~0", "~")))
}

fn add(target: &mut Value, path: &str, value: Value) -> Result<(), PatchError> {
    if path.is_empty() {
        *target = value;
        return Ok(());
    }
    let (parent, token) = split(path)?;
    match target.pointer_mut(parent) {
        Some(Value::Object(fields)) => {
            fields.insert(token, value);
            Ok(())
        }
        Some(Value::Array(items)) => {
            let index = if token == "-" { items.len() } else { token.parse().map_err(|_| missing(path))? };
            if index > items.len() {
                return Err(missing(path));
            }
            items.insert(index, value);
            Ok(())
        }
        _ => Err(missing(parent)),
    }
}

fn remove(target: &mut Value, path: &str) -> Result<Value, PatchError> {
    let (parent, token) = split(path)?;
    match target.pointer_mut(parent) {
        Some(Value::Object(fields)) => fields.remove(&token).ok_or_else(|| missing(path)),
        Some(Value::Array(items)) => {
            let index: usize = token.parse().map_err(|_| missing(path))?;
            if index >= items.len() {
                return Err(missing(path));
            }
            Ok(items.remove(index))
        }
        _ => Err(missing(path)),
    }
}

/// The key a list of objects merges by in a strategic merge patch, by the
/// list's field name (the patch metadata of the built-in types kubectl
/// sends patches for); other lists are replaced whole.
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "containers" | "initContainers" | "ephemeralContainers" | "volumes" | "env" | "imagePullSecrets" => {
            Some("name")
        }
        "ports" => Some("containerPort"),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "hostAliases" => Some("ip"),
        "topologySpreadConstraints" => Some("topologyKey"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        _ => None,
    }
}

/// A Service's ports merge by `port`, a container's by `containerPort`.
fn list_key(field: &str, items: &[Value], patch: &[Value]) -> Option<&'static str> {
    let key = merge_key(field)?;
    if key == "containerPort" {
        let has = |item: &Value| item.get("containerPort").is_some();
        if !items.iter().chain(patch).any(has) && items.iter().chain(patch).any(|i| i.get("port").is_some()) {
            return Some("port");
        }
    }
    Some(key)
}

/// Kubernetes' strategic merge patch.
pub fn strategic(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replaced = patch.clone();
        replaced.remove("$patch");
        *target = Value::Object(replaced);
        return Ok(());
    }
    if patch.get("$patch").and_then(Value::as_str) == Some("delete") {
        *target = Value::Null;
        return Ok(());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(fields) = target else { return Ok(()) };
    if let Some(Value::Array(retained)) = patch.get("$retainKeys") {
        let keep: Vec<&str> = retained.iter().filter_map(Value::as_str).collect();
        fields.retain(|key, _| keep.contains(&key.as_str()));
    }
    for (key, value) in patch {
        if key.starts_with("$setElementOrder/") || key == "$retainKeys" || key == "$patch" {
            continue;
        }
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Value::Array(gone)) = (fields.get_mut(field), value) {
                items.retain(|item| !gone.contains(item));
            }
            continue;
        }
        if value.is_null() {
            fields.remove(key);
            continue;
        }
        match (fields.get_mut(key), value) {
            (Some(Value::Array(items)), Value::Array(patch_items)) => match list_key(key, items, patch_items) {
                Some(merge_by) => merge_list(items, patch_items, merge_by)?,
                None => *items = patch_items.clone(),
            },
            (Some(existing @ Value::Object(_)), Value::Object(_)) => strategic(existing, value)?,
            _ => {
                let mut fresh = Value::Null;
                strategic(&mut fresh, value)?;
                if let Value::Array(items) = &mut fresh {
                    items.retain(|item| item.get("$patch").is_none());
                }
                strip_directives(&mut fresh);
                fields.insert(key.clone(), fresh);
            }
        }
    }
    Ok(())
}

/// Merges a list of objects by `key`: an item of the patch with `$patch:
/// delete` removes its match, one with a match merges into it, and a new one
/// is added at the end.
fn merge_list(items: &mut Vec<Value>, patch: &[Value], key: &str) -> Result<(), PatchError> {
    for item in patch {
        let Some(id) = item.get(key).cloned() else {
            return Err(PatchError(format!("an item of the list has no merge key {key:?}")));
        };
        let at = items.iter().position(|existing| existing.get(key) == Some(&id));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (at, delete) {
            (Some(at), true) => {
                items.remove(at);
            }
            (None, true) => {}
            (Some(at), false) => strategic(&mut items[at], item)?,
            (None, false) => {
                let mut added = item.clone();
                strip_directives(&mut added);
                items.push(added);
            }
        }
    }
    Ok(())
}

/// Removes directive keys (`$…`) left in a value added whole.
fn strip_directives(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.retain(|key, _| !key.starts_with('$'));
            fields.values_mut().for_each(strip_directives);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_merges_objects_and_null_removes() {
        let mut target = json!({ "a": 1, "b": { "c": 2, "d": 3 }, "l": [1, 2] });
        merge(&mut target, &json!({ "a": null, "b": { "c": 5 }, "l": [3] }));
        assert_eq!(target, json!({ "b": { "c": 5, "d": 3 }, "l": [3] }));
    }

    #[test]
    fn json_patch_applies_in_order_or_not_at_all() {
        let mut target = json!({ "spec": { "replicas": 1, "items": ["a"] } });
        let ops = json!([
            { "op": "replace", "path": "/spec/replicas", "value": 3 },
            { "op": "add", "path": "/spec/items/-", "value": "b" },
            { "op": "test", "path": "/spec/replicas", "value": 3 },
        ]);
        json_patch(&mut target, &ops, 1 << 20).unwrap();
        assert_eq!(target, json!({ "spec": { "replicas": 3, "items": ["a", "b"] } }));
        let failing = json!([{ "op": "remove", "path": "/spec/replicas" }, { "op": "remove", "path": "/nope" }]);
        assert!(json_patch(&mut target, &failing, 1 << 20).is_err());
        assert_eq!(target["spec"]["replicas"], 3, "a failed patch changes nothing");
        // Copying the whole object into itself doubles it each time: refused once past the bound.
        let doubling: Vec<Value> =
            (0..40).map(|n| serde_json::json!({ "op": "copy", "from": "", "path": format!("/c{n}") })).collect();
        assert!(json_patch(&mut target, &Value::Array(doubling), 1 << 20).is_err());
    }

    #[test]
    fn strategic_patch_merges_containers_by_name() {
        let mut deployment = json!({ "spec": { "template": { "spec": { "containers": [
            { "name": "web", "image": "web:1", "env": [{ "name": "A", "value": "1" }] },
            { "name": "sidecar", "image": "proxy:1" },
        ] } } } });
        let patch = json!({ "spec": { "template": { "spec": {
            "$setElementOrder/containers": [{ "name": "web" }, { "name": "sidecar" }],
            "containers": [
                { "name": "web", "image": "web:2", "env": [{ "name": "B", "value": "2" }] },
                { "name": "sidecar", "$patch": "delete" },
            ],
        } } } });
        strategic(&mut deployment, &patch).unwrap();
        let containers = &deployment["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers.as_array().unwrap().len(), 1);
        assert_eq!(containers[0]["image"], "web:2");
        assert_eq!(containers[0]["env"], json!([{ "name": "A", "value": "1" }, { "name": "B", "value": "2" }]));
        assert!(deployment["spec"]["template"]["spec"].get("$setElementOrder/containers").is_none());
    }

    #[test]
    fn strategic_patch_replaces_plain_lists_and_honours_directives() {
        let mut target = json!({ "args": ["a", "b"], "meta": { "x": 1, "y": 2 }, "finalizers": ["f", "g"] });
        let patch = json!({
            "args": ["c"],
            "meta": { "$patch": "replace", "z": 3 },
            "$deleteFromPrimitiveList/finalizers": ["f"],
        });
        strategic(&mut target, &patch).unwrap();
        assert_eq!(target, json!({ "args": ["c"], "meta": { "z": 3 }, "finalizers": ["g"] }));
    }
}
