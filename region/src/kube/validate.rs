//! What an object a client writes must be before anything reads or changes
//! it: the shape of every field the server touches (objects where objects
//! go, strings where strings go), bounded size and depth, and the limits
//! of Moke's own API (at most 1 000 replicas). A write that fails here is a
//! 422 naming the field, never a panic.

use serde_json::Value;

use super::resources::Kind;

/// The largest object a client may store (serialized).
pub const MAX_OBJECT_BYTES: usize = 256 * 1024;
/// The deepest an object may nest.
pub const MAX_DEPTH: usize = 32;
/// The most replicas a Deployment may ask for (as through Moke's API).
pub const MAX_REPLICAS: i64 = 1000;
/// The most old ReplicaSets a Deployment may keep (Kubernetes' default).
pub const MAX_REVISION_HISTORY: i64 = 10;
/// The most bytes of annotations on one object.
pub const MAX_ANNOTATION_BYTES: usize = 64 * 1024;

/// A field that is not what it must be, and why.
pub type Invalid = (String, String);

fn invalid(field: &str, why: &str) -> Invalid {
    (field.to_string(), why.to_string())
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Object(fields) => 1 + fields.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// An object (or absent), whose fields are strings when `strings`.
fn map(value: &Value, field: &str, strings: bool) -> Result<(), Invalid> {
    match value {
        Value::Null => Ok(()),
        Value::Object(fields) if !strings || fields.values().all(Value::is_string) => Ok(()),
        Value::Object(_) => Err(invalid(field, "every value must be a string")),
        _ => Err(invalid(field, "must be an object")),
    }
}

fn string(value: &Value, field: &str) -> Result<(), Invalid> {
    if value.is_null() || value.is_string() { Ok(()) } else { Err(invalid(field, "must be a string")) }
}

/// Checks an object of `kind` as a client sent it (after a patch, as patched).
pub fn check(kind: &Kind, object: &Value) -> Result<(), Invalid> {
    if !object.is_object() {
        return Err(invalid("", "the object must be a JSON object"));
    }
    // The ownership the server records is bounded on its own (`apply`).
    let without_ownership;
    let object = if object["metadata"].get("managedFields").is_some() {
        let mut copy = object.clone();
        if let Some(metadata) = copy["metadata"].as_object_mut() {
            metadata.remove("managedFields");
        }
        without_ownership = copy;
        &without_ownership
    } else {
        object
    };
    if depth(object) > MAX_DEPTH {
        return Err(invalid("", &format!("nests deeper than {MAX_DEPTH} levels")));
    }
    let size = serde_json::to_vec(object).map(|bytes| bytes.len()).unwrap_or(usize::MAX);
    if size > MAX_OBJECT_BYTES {
        return Err(invalid("", &format!("is {size} bytes; an object holds at most {MAX_OBJECT_BYTES}")));
    }
    for field in ["apiVersion", "kind"] {
        string(&object[field], field)?;
    }
    let metadata = &object["metadata"];
    map(metadata, "metadata", false)?;
    for field in ["name", "generateName", "namespace", "resourceVersion", "uid"] {
        string(&metadata[field], &format!("metadata.{field}"))?;
    }
    map(&metadata["labels"], "metadata.labels", true)?;
    map(&metadata["annotations"], "metadata.annotations", true)?;
    if let Some(labels) = metadata["labels"].as_object() {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or_default();
            if key.is_empty() || key.len() > 317 || value.len() > 63 {
                return Err(invalid("metadata.labels", "keys hold at most 317 characters and values at most 63"));
            }
        }
    }
    let annotations: usize =
        metadata["annotations"].as_object().map_or(0, |a| a.iter().map(|(k, v)| k.len() + v.to_string().len()).sum());
    if annotations > MAX_ANNOTATION_BYTES {
        return Err(invalid("metadata.annotations", &format!("hold at most {MAX_ANNOTATION_BYTES} bytes")));
    }
    map(&object["spec"], "spec", false)?;
    map(&object["status"], "status", false)?;
    match kind.resource {
        "configmaps" => {
            map(&object["data"], "data", true)?;
            map(&object["binaryData"], "binaryData", true)?;
        }
        "deployments" => deployment(&object["spec"])?,
        _ => {}
    }
    Ok(())
}

fn deployment(spec: &Value) -> Result<(), Invalid> {
    match &spec["replicas"] {
        Value::Null => {}
        Value::Number(n) if n.as_i64().is_some_and(|r| (0..=MAX_REPLICAS).contains(&r)) => {}
        _ => return Err(invalid("spec.replicas", &format!("must be a whole number from 0 to {MAX_REPLICAS}"))),
    }
    match &spec["revisionHistoryLimit"] {
        Value::Null => {}
        Value::Number(n) if n.as_i64().is_some_and(|r| (0..=MAX_REVISION_HISTORY).contains(&r)) => {}
        _ => {
            let why = format!("must be a whole number from 0 to {MAX_REVISION_HISTORY} here");
            return Err(invalid("spec.revisionHistoryLimit", &why));
        }
    }
    map(&spec["selector"], "spec.selector", false)?;
    map(&spec["selector"]["matchLabels"], "spec.selector.matchLabels", true)?;
    map(&spec["strategy"], "spec.strategy", false)?;
    string(&spec["strategy"]["type"], "spec.strategy.type")?;
    if let Some(kind) = spec["strategy"]["type"].as_str()
        && !matches!(kind, "RollingUpdate" | "Recreate")
    {
        return Err(invalid("spec.strategy.type", "must be RollingUpdate or Recreate"));
    }
    let rolling = &spec["strategy"]["rollingUpdate"];
    map(rolling, "spec.strategy.rollingUpdate", false)?;
    for field in ["maxSurge", "maxUnavailable"] {
        let value = &rolling[field];
        let fine = match value {
            Value::Null => true,
            Value::Number(n) => n.as_i64().is_some_and(|n| n >= 0),
            Value::String(text) => text.strip_suffix('%').and_then(|p| p.parse::<u32>().ok()).is_some_and(|p| p <= 100),
            _ => false,
        };
        if !fine {
            let why = "must be a count or a percentage such as \"25%\"";
            return Err(invalid(&format!("spec.strategy.rollingUpdate.{field}"), why));
        }
    }
    let template = &spec["template"];
    map(template, "spec.template", false)?;
    map(&template["metadata"], "spec.template.metadata", false)?;
    map(&template["metadata"]["labels"], "spec.template.metadata.labels", true)?;
    map(&template["spec"], "spec.template.spec", false)?;
    map(&template["spec"]["nodeSelector"], "spec.template.spec.nodeSelector", true)?;
    match &template["spec"]["containers"] {
        Value::Null => {}
        Value::Array(containers) => {
            for (at, container) in containers.iter().enumerate() {
                let field = format!("spec.template.spec.containers[{at}]");
                map(container, &field, false)?;
                string(&container["name"], &format!("{field}.name"))?;
                string(&container["image"], &format!("{field}.image"))?;
                map(&container["resources"], &format!("{field}.resources"), false)?;
                map(&container["resources"]["requests"], &format!("{field}.resources.requests"), false)?;
            }
        }
        _ => return Err(invalid("spec.template.spec.containers", "must be a list")),
    }
    if !matches!(template["spec"]["tolerations"], Value::Null | Value::Array(_)) {
        return Err(invalid("spec.template.spec.tolerations", "must be a list"));
    }
    if spec["paused"].as_bool().is_none() && !spec["paused"].is_null() {
        return Err(invalid("spec.paused", "must be true or false"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::resources;

    fn kind(resource: &str) -> &'static Kind {
        resources::KINDS.iter().find(|k| k.resource == resource).unwrap()
    }

    #[test]
    fn shapes_the_server_touches_are_checked_before_it_touches_them() {
        let cm = kind("configmaps");
        assert!(check(cm, &json!({ "metadata": { "name": "a" }, "data": { "k": "v" } })).is_ok());
        assert_eq!(check(cm, &json!({ "metadata": "x" })).unwrap_err().0, "metadata");
        assert_eq!(check(cm, &json!({ "metadata": { "annotations": "x" } })).unwrap_err().0, "metadata.annotations");
        assert_eq!(
            check(cm, &json!({ "metadata": { "resourceVersion": 5 } })).unwrap_err().0,
            "metadata.resourceVersion"
        );
        assert_eq!(check(cm, &json!({ "data": { "k": { "deep": 1 } } })).unwrap_err().0, "data");
        let deploy = kind("deployments");
        assert_eq!(check(deploy, &json!({ "spec": { "strategy": "Recreate" } })).unwrap_err().0, "spec.strategy");
        assert_eq!(check(deploy, &json!({ "spec": { "replicas": 1_000_000_000 } })).unwrap_err().0, "spec.replicas");
        let history = json!({ "spec": { "revisionHistoryLimit": 2_147_483_647 } });
        assert_eq!(check(deploy, &history).unwrap_err().0, "spec.revisionHistoryLimit");
        let owned = json!({ "metadata": { "managedFields": [{ "fieldsV1": { "f:data": { "f:k": {} } } }] } });
        assert!(check(cm, &owned).is_ok(), "recorded ownership does not count against the object's bounds");
        let mut deep = json!("v");
        for _ in 0..40 {
            deep = json!({ "a": deep });
        }
        assert!(check(cm, &json!({ "data": {}, "spec": deep })).is_err());
        let big = "x".repeat(MAX_OBJECT_BYTES);
        assert!(check(cm, &json!({ "data": { "k": big } })).is_err());
    }
}
