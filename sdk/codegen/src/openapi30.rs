//! Down-conversion of the served OpenAPI 3.1 document to the 3.0.3 that
//! progenitor reads. Every rewrite keeps the meaning; what 3.0 cannot say
//! (`propertyNames`) is dropped, because the server still enforces it.

use serde_json::{Map, Value, json};

/// Operations a client library has no use for, left out of the Rust SDK
/// (progenitor also wants one answer type per outcome, which these lack).
pub const NOT_IN_SDK: [(&str, &str); 3] = [
    ("sso_login_start", "a browser redirect to the identity provider"),
    ("sso_login_finish", "the identity provider sends the browser back here"),
    ("hook_delivery_create", "CI systems call it with a signature, not a bearer token"),
];

/// The 3.0.3 form of `document` (a 3.1 document as utoipa writes it),
/// without the [`NOT_IN_SDK`] operations.
pub fn down_convert(mut document: Value) -> Value {
    document["openapi"] = json!("3.0.3");
    if let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) {
        for item in paths.values_mut().filter_map(Value::as_object_mut) {
            item.retain(|_, operation| {
                let id = operation.get("operationId").and_then(Value::as_str);
                !NOT_IN_SDK.iter().any(|(left_out, _)| Some(*left_out) == id)
            });
        }
        paths.retain(|_, item| item.as_object().is_some_and(|ops| !ops.is_empty()));
    }
    if let Some(license) = document.pointer_mut("/info/license").and_then(Value::as_object_mut) {
        license.remove("identifier");
    }
    convert(&mut document);
    without_dry_runs(&mut document);
    plain_parameters(&mut document);
    json_problems(&mut document);
    mark_pages(&mut document);
    document
}

/// The operations of `document` that take `?dry_run=`, sorted.
pub fn dry_run_operations(document: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for item in document.get("paths").and_then(Value::as_object).into_iter().flat_map(|paths| paths.values()) {
        for operation in item.as_object().into_iter().flat_map(|ops| ops.values()) {
            let takes = operation
                .get("parameters")
                .and_then(Value::as_array)
                .is_some_and(|ps| ps.iter().any(|p| p.get("name").and_then(Value::as_str) == Some("dry_run")));
            if let Some(id) = operation.get("operationId").and_then(Value::as_str).filter(|_| takes) {
                ids.push(id.to_string());
            }
        }
    }
    ids.sort();
    ids
}

/// A dry run (`?dry_run=true`) answers a `DryRunView` in place of the
/// operation's own answer, and progenitor wants one answer type per
/// operation: the generated methods leave it out, and `Client::dry_run`
/// (by hand) offers it for every one of them.
fn without_dry_runs(document: &mut Value) {
    let plan = json!({ "$ref": "#/components/schemas/DryRunView" });
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for operation in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut()) {
        if let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) {
            parameters.retain(|p| p.get("name").and_then(Value::as_str) != Some("dry_run"));
        }
        let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) else { continue };
        let Some(ok) = responses.get_mut("200") else { continue };
        let mut only_plan = false;
        if let Some(contents) = ok.get_mut("content").and_then(Value::as_object_mut) {
            for content in contents.values_mut() {
                let Some(schema) = content.get_mut("schema") else { continue };
                if *schema == plan {
                    only_plan = true;
                } else if let Some(own) = schema
                    .get("anyOf")
                    .and_then(Value::as_array)
                    .filter(|any| any.contains(&plan))
                    .and_then(|any| any.iter().find(|s| **s != plan))
                {
                    *schema = own.clone();
                }
            }
        }
        if let Some(description) = ok.get_mut("description")
            && let Some(text) = description.as_str()
        {
            *description = json!(text.trim_end_matches(" (or, for a dry run, what would change)"));
        }
        if only_plan {
            responses.remove("200");
        }
    }
}

/// progenitor types only `application/json` bodies; a problem is JSON too,
/// so error answers deserialize into `Problem` instead of raw bytes.
fn json_problems(document: &mut Value) {
    fn as_json(response: &mut Value) {
        if let Some(content) = response.get_mut("content").and_then(Value::as_object_mut)
            && let Some(problem) = content.remove("application/problem+json")
        {
            content.entry("application/json").or_insert(problem);
        }
    }
    if let Some(shared) = document.pointer_mut("/components/responses").and_then(Value::as_object_mut) {
        shared.values_mut().for_each(as_json);
    }
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    let operations = paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut());
    for responses in operations.filter_map(|op| op.get_mut("responses")).filter_map(Value::as_object_mut) {
        responses.values_mut().for_each(as_json);
    }
}

/// A parameter is there or not; it is never `null`. And a page token is an
/// opaque string the client passes back as it came (progenitor's page
/// streams need it to be a plain `String`).
fn plain_parameters(document: &mut Value) {
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    let operations = paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut());
    for operation in operations {
        let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) else { continue };
        for parameter in parameters {
            let name = parameter.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            let Some(schema) = parameter.get_mut("schema").and_then(Value::as_object_mut) else { continue };
            schema.remove("nullable");
            if name == "page_token" {
                schema.retain(|key, _| key == "type" || key == "description");
            }
            // A page size fits 32 bits, and progenitor's CLI reads `limit` as
            // a `NonZeroU32` whatever its declared width.
            if name == "limit" {
                schema.insert("format".into(), json!("uint32"));
            }
        }
    }
}

/// Rewrites one schema (and everything under it) in place.
fn convert(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for child in object.values_mut() {
                convert(child);
            }
            convert_object(object);
        }
        Value::Array(items) => items.iter_mut().for_each(convert),
        _ => {}
    }
}

fn convert_object(object: &mut Map<String, Value>) {
    // `type: [T, "null"]` → `type: T, nullable: true`.
    if let Some(Value::Array(types)) = object.get("type").cloned() {
        let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if non_null.len() == 1 {
            object.insert("type".into(), non_null[0].clone());
        }
        if non_null.len() < types.len() {
            object.insert("nullable".into(), json!(true));
        }
    }
    // `oneOf: [{type: null}, X]` → `allOf: [X], nullable: true`.
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(arms)) = object.get(key) {
            let is_null = |arm: &Value| arm.get("type") == Some(&json!("null"));
            if arms.iter().any(is_null) {
                let rest: Vec<Value> = arms.iter().filter(|arm| !is_null(arm)).cloned().collect();
                object.remove(key);
                if let [Value::Object(arm)] = rest.as_slice()
                    && arm.contains_key("allOf")
                    && arm.keys().all(|k| ["allOf", "description", "title", "default", "example"].contains(&k.as_str()))
                {
                    // A wrapped reference with a description: lift both up.
                    for (k, v) in arm {
                        object.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                } else if rest.len() == 1 {
                    object.insert("allOf".into(), json!(rest));
                } else {
                    object.insert(key.into(), json!(rest));
                }
                object.insert("nullable".into(), json!(true));
            }
        }
    }
    // `$ref` with siblings: 3.0 ignores the siblings, so wrap the reference.
    if object.contains_key("$ref") && object.len() > 1 {
        let reference = object.remove("$ref").expect("checked");
        object.insert("allOf".into(), json!([{ "$ref": reference }]));
    }
    if let Some(value) = object.remove("const") {
        object.insert("enum".into(), json!([value]));
    }
    if let Some(Value::Array(mut examples)) = object.remove("examples")
        && !examples.is_empty()
    {
        object.insert("example".into(), examples.swap_remove(0));
    }
    object.remove("propertyNames");
}

/// Marks every list that pages (`limit` and `page_token` in, `{items,
/// next_page}` out) so progenitor generates a stream over all pages.
fn mark_pages(document: &mut Value) {
    let schemas = document.pointer("/components/schemas").cloned().unwrap_or(Value::Null);
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for item in paths.values_mut() {
        let Some(get) = item.get_mut("get").and_then(Value::as_object_mut) else { continue };
        let names: Vec<&str> = get
            .get("parameters")
            .and_then(Value::as_array)
            .map(|ps| ps.iter().filter_map(|p| p.get("name").and_then(Value::as_str)).collect())
            .unwrap_or_default();
        let answer = get
            .get("responses")
            .and_then(|r| r.pointer("/200/content/application~1json/schema/$ref"))
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
            .and_then(|name| schemas.get(name));
        let pages = answer
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .is_some_and(|p| p.len() == 2 && p.contains_key("items") && p.contains_key("next_page"));
        if pages && names.contains(&"limit") && names.contains(&"page_token") {
            get.insert("x-dropshot-pagination".into(), json!({ "required": [] }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_forms_become_3_0() {
        let converted = down_convert(json!({
            "openapi": "3.1.0",
            "info": { "title": "t", "version": "1", "license": { "name": "Apache-2.0", "identifier": "Apache-2.0" } },
            "paths": {},
            "components": { "schemas": {
                "A": { "type": "object", "properties": {
                    "name": { "type": ["string", "null"] },
                    "spec": { "oneOf": [{ "type": "null" }, { "$ref": "#/components/schemas/B", "description": "d" }] },
                    "kind": { "const": "x" },
                    "labels": { "type": "object", "propertyNames": { "pattern": "^a$" }, "examples": [{ "a": "b" }] },
                }},
                "B": { "type": "string" },
            }},
        }));
        assert_eq!(converted["openapi"], "3.0.3");
        assert!(converted.pointer("/info/license/identifier").is_none());
        let a = &converted["components"]["schemas"]["A"]["properties"];
        assert_eq!(a["name"], json!({ "type": "string", "nullable": true }));
        assert_eq!(
            a["spec"],
            json!({ "allOf": [{ "$ref": "#/components/schemas/B" }], "description": "d", "nullable": true })
        );
        assert_eq!(a["kind"], json!({ "enum": ["x"] }));
        assert_eq!(a["labels"], json!({ "type": "object", "example": { "a": "b" } }));
    }

    #[test]
    fn lists_that_page_are_marked() {
        let item = json!({ "type": "object", "properties": { "id": { "type": "string" } } });
        let converted = down_convert(json!({
            "openapi": "3.1.0",
            "info": { "title": "t", "version": "1" },
            "paths": { "/v1/things": { "get": {
                "operationId": "thing_list",
                "parameters": [{ "name": "limit", "in": "query" }, { "name": "page_token", "in": "query" }],
                "responses": { "200": { "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Page_Thing" } } } } },
            }}},
            "components": { "schemas": {
                "Thing": item,
                "Page_Thing": { "type": "object", "properties": {
                    "items": { "type": "array", "items": { "$ref": "#/components/schemas/Thing" } },
                    "next_page": { "type": ["string", "null"] },
                }},
            }},
        }));
        assert!(converted.pointer("/paths/~1v1~1things/get/x-dropshot-pagination").is_some());
    }
}
