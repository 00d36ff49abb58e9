//! Request bodies in Kubernetes' protobuf encoding
//! (`application/vnd.kubernetes.protobuf`), which kubectl's typed clients
//! send (`auth can-i`, `create configmap|secret|namespace|deployment|service|role|rolebinding`): the
//! `k8s\0` envelope around a `runtime.Unknown`, whose `raw` is the object.
//! The object is read into the JSON the rest of the server works on, by a
//! table of the fields of each message kubectl writes (numbers as in
//! Kubernetes' `generated.proto`); fields not in the table are skipped, as
//! a JSON body's unknown fields would be dropped.

use serde_json::{Map, Value, json};

/// How a field is read.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    Int,
    Bool,
    Msg(&'static [Field]),
    /// `map<string, string>`.
    Strings,
    /// `map<string, bytes>`, as base64 (JSON's spelling of bytes).
    Bytes,
    /// `map<string, Quantity>` (a Quantity is a message of one string).
    Quantities,
    /// `IntOrString`: `type` 1, `intVal` 2, `strVal` 3.
    IntOrString,
}

#[derive(Clone, Copy)]
struct Field {
    number: u64,
    name: &'static str,
    ty: Ty,
    repeated: bool,
    /// A pointer field in Kubernetes' types: its zero (`0`, `false`) is a
    /// value the client set. Any other field written as its zero was left
    /// unset, as JSON would have left it out.
    zero_is_set: bool,
}

const fn one(number: u64, name: &'static str, ty: Ty) -> Field {
    Field { number, name, ty, repeated: false, zero_is_set: false }
}

const fn many(number: u64, name: &'static str, ty: Ty) -> Field {
    Field { number, name, ty, repeated: true, zero_is_set: false }
}

/// A pointer field (`*int32`, `*bool`, `*IntOrString`): its zero is kept.
const fn optional(number: u64, name: &'static str, ty: Ty) -> Field {
    Field { number, name, ty, repeated: false, zero_is_set: true }
}

const OBJECT_META: &[Field] = &[
    one(1, "name", Ty::Str),
    one(2, "generateName", Ty::Str),
    one(3, "namespace", Ty::Str),
    one(6, "resourceVersion", Ty::Str),
    one(11, "labels", Ty::Strings),
    one(12, "annotations", Ty::Strings),
    many(14, "finalizers", Ty::Str),
];
const CONFIG_MAP: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "data", Ty::Strings),
    one(3, "binaryData", Ty::Bytes),
    optional(4, "immutable", Ty::Bool),
];
const NAMESPACE: &[Field] =
    &[one(1, "metadata", Ty::Msg(OBJECT_META)), one(2, "spec", Ty::Msg(&[many(1, "finalizers", Ty::Str)]))];
const RESOURCE_ATTRIBUTES: &[Field] = &[
    one(1, "namespace", Ty::Str),
    one(2, "verb", Ty::Str),
    one(3, "group", Ty::Str),
    one(4, "version", Ty::Str),
    one(5, "resource", Ty::Str),
    one(6, "subresource", Ty::Str),
    one(7, "name", Ty::Str),
];
const ACCESS_REVIEW: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(
        2,
        "spec",
        Ty::Msg(&[
            one(1, "resourceAttributes", Ty::Msg(RESOURCE_ATTRIBUTES)),
            one(2, "nonResourceAttributes", Ty::Msg(&[one(1, "path", Ty::Str), one(2, "verb", Ty::Str)])),
        ]),
    ),
];
const CONTAINER: &[Field] = &[
    one(1, "name", Ty::Str),
    one(2, "image", Ty::Str),
    many(3, "command", Ty::Str),
    many(4, "args", Ty::Str),
    one(5, "workingDir", Ty::Str),
    many(
        6,
        "ports",
        Ty::Msg(&[
            one(1, "name", Ty::Str),
            one(2, "hostPort", Ty::Int),
            one(3, "containerPort", Ty::Int),
            one(4, "protocol", Ty::Str),
        ]),
    ),
    many(7, "env", Ty::Msg(&[one(1, "name", Ty::Str), one(2, "value", Ty::Str)])),
    one(8, "resources", Ty::Msg(&[one(1, "limits", Ty::Quantities), one(2, "requests", Ty::Quantities)])),
    one(14, "imagePullPolicy", Ty::Str),
];
const POD_SPEC: &[Field] = &[
    many(2, "containers", Ty::Msg(CONTAINER)),
    one(3, "restartPolicy", Ty::Str),
    optional(4, "terminationGracePeriodSeconds", Ty::Int),
    one(6, "dnsPolicy", Ty::Str),
    one(7, "nodeSelector", Ty::Strings),
    one(8, "serviceAccountName", Ty::Str),
    many(
        22,
        "tolerations",
        Ty::Msg(&[
            one(1, "key", Ty::Str),
            one(2, "operator", Ty::Str),
            one(3, "value", Ty::Str),
            one(4, "effect", Ty::Str),
        ]),
    ),
];
const DEPLOYMENT: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(
        2,
        "spec",
        Ty::Msg(&[
            optional(1, "replicas", Ty::Int),
            one(2, "selector", Ty::Msg(&[one(1, "matchLabels", Ty::Strings)])),
            one(3, "template", Ty::Msg(&[one(1, "metadata", Ty::Msg(OBJECT_META)), one(2, "spec", Ty::Msg(POD_SPEC))])),
            one(
                4,
                "strategy",
                Ty::Msg(&[
                    one(1, "type", Ty::Str),
                    one(
                        2,
                        "rollingUpdate",
                        Ty::Msg(&[
                            optional(1, "maxUnavailable", Ty::IntOrString),
                            optional(2, "maxSurge", Ty::IntOrString),
                        ]),
                    ),
                ]),
            ),
            one(5, "minReadySeconds", Ty::Int),
            optional(6, "revisionHistoryLimit", Ty::Int),
            one(7, "paused", Ty::Bool),
            optional(9, "progressDeadlineSeconds", Ty::Int),
        ]),
    ),
];

const SERVICE: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(
        2,
        "spec",
        Ty::Msg(&[
            many(
                1,
                "ports",
                Ty::Msg(&[
                    one(1, "name", Ty::Str),
                    one(2, "protocol", Ty::Str),
                    one(3, "port", Ty::Int),
                    one(4, "targetPort", Ty::IntOrString),
                    one(5, "nodePort", Ty::Int),
                    one(6, "appProtocol", Ty::Str),
                ]),
            ),
            one(2, "selector", Ty::Strings),
            one(3, "clusterIP", Ty::Str),
            one(4, "type", Ty::Str),
            many(5, "externalIPs", Ty::Str),
            one(7, "sessionAffinity", Ty::Str),
            one(10, "externalName", Ty::Str),
            one(11, "externalTrafficPolicy", Ty::Str),
            many(18, "clusterIPs", Ty::Str),
            one(22, "internalTrafficPolicy", Ty::Str),
        ]),
    ),
];

const SECRET: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "data", Ty::Bytes),
    one(3, "type", Ty::Str),
    one(4, "stringData", Ty::Strings),
    optional(5, "immutable", Ty::Bool),
];
const POLICY_RULE: &[Field] = &[
    many(1, "verbs", Ty::Str),
    many(2, "apiGroups", Ty::Str),
    many(3, "resources", Ty::Str),
    many(4, "resourceNames", Ty::Str),
    many(5, "nonResourceURLs", Ty::Str),
];
const ROLE: &[Field] = &[one(1, "metadata", Ty::Msg(OBJECT_META)), many(2, "rules", Ty::Msg(POLICY_RULE))];
const ROLE_BINDING: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(
        2,
        "subjects",
        Ty::Msg(&[
            one(1, "kind", Ty::Str),
            one(2, "apiGroup", Ty::Str),
            one(3, "name", Ty::Str),
            one(4, "namespace", Ty::Str),
        ]),
    ),
    one(3, "roleRef", Ty::Msg(&[one(1, "apiGroup", Ty::Str), one(2, "kind", Ty::Str), one(3, "name", Ty::Str)])),
];

/// A field as it is on the wire.
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// The fields of a message, in order; None when it does not parse.
fn fields(bytes: &[u8]) -> Option<Vec<(u64, Wire<'_>)>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let tag = varint(bytes, &mut at)?;
        let wire = match tag & 7 {
            0 => Wire::Varint(varint(bytes, &mut at)?),
            1 => {
                at = at.checked_add(8).filter(|end| *end <= bytes.len())?;
                Wire::Fixed
            }
            2 => {
                let length = usize::try_from(varint(bytes, &mut at)?).ok()?;
                let end = at.checked_add(length).filter(|end| *end <= bytes.len())?;
                let slice = &bytes[at..end];
                at = end;
                Wire::Bytes(slice)
            }
            5 => {
                at = at.checked_add(4).filter(|end| *end <= bytes.len())?;
                Wire::Fixed
            }
            _ => return None,
        };
        out.push((tag >> 3, wire));
    }
    Some(out)
}

fn text(bytes: &[u8]) -> Option<String> {
    String::from_utf8(bytes.to_vec()).ok()
}

/// A map entry (`key` 1, `value` 2) read with `value`.
fn entry(bytes: &[u8], value: impl Fn(&[u8]) -> Option<Value>) -> Option<(String, Value)> {
    let (mut key, mut found) = (String::new(), Value::String(String::new()));
    for (number, wire) in fields(bytes)? {
        match (number, wire) {
            (1, Wire::Bytes(b)) => key = text(b)?,
            (2, Wire::Bytes(b)) => found = value(b)?,
            _ => {}
        }
    }
    Some((key, found))
}

fn value(ty: Ty, wire: Wire<'_>, depth: usize) -> Option<Value> {
    Some(match (ty, wire) {
        (Ty::Str, Wire::Bytes(b)) => json!(text(b)?),
        (Ty::Int, Wire::Varint(v)) => json!(v as i64),
        (Ty::Bool, Wire::Varint(v)) => json!(v != 0),
        (Ty::Msg(schema), Wire::Bytes(b)) => message(schema, b, depth + 1)?,
        (Ty::IntOrString, Wire::Bytes(b)) => {
            let (mut int, mut string, mut is_string) = (0i64, String::new(), false);
            for (number, wire) in fields(b)? {
                match (number, wire) {
                    (1, Wire::Varint(kind)) => is_string = kind == 1,
                    (2, Wire::Varint(v)) => int = v as i64,
                    (3, Wire::Bytes(s)) => string = text(s)?,
                    _ => {}
                }
            }
            if is_string { json!(string) } else { json!(int) }
        }
        _ => return None,
    })
}

/// A message read with `schema` into a JSON object.
fn message(schema: &[Field], bytes: &[u8], depth: usize) -> Option<Value> {
    if depth > 16 {
        return None;
    }
    let mut object = Map::new();
    for (number, wire) in fields(bytes)? {
        let Some(field) = schema.iter().find(|f| f.number == number) else { continue };
        let (name, ty) = (field.name, field.ty);
        match (ty, wire) {
            (Ty::Strings | Ty::Bytes | Ty::Quantities, Wire::Bytes(b)) => {
                let read = |v: &[u8]| -> Option<Value> {
                    match ty {
                        Ty::Bytes => {
                            use base64::Engine;
                            Some(json!(base64::engine::general_purpose::STANDARD.encode(v)))
                        }
                        Ty::Quantities => {
                            let parts = fields(v)?;
                            let quantity = parts.into_iter().find_map(|(n, w)| match (n, w) {
                                (1, Wire::Bytes(s)) => text(s),
                                _ => None,
                            });
                            Some(json!(quantity.unwrap_or_default()))
                        }
                        _ => Some(json!(text(v)?)),
                    }
                };
                let (key, found) = entry(b, read)?;
                let map = object.entry(name).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = map {
                    map.insert(key, found);
                }
            }
            (_, wire) => {
                let found = value(ty, wire, depth)?;
                if field.repeated {
                    let list = object.entry(name).or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(list) = list {
                        list.push(found);
                    }
                } else if field.zero_is_set || !(found == "" || found == 0 || found == false) {
                    object.insert(name.to_string(), found);
                }
            }
        }
    }
    Some(Value::Object(object))
}

/// The object in a protobuf body sent to `resource`, as JSON; None for a
/// body that does not parse or a resource whose messages are not read here.
pub fn decode(resource: &str, body: &[u8]) -> Option<Value> {
    let schema = match resource {
        "configmaps" => CONFIG_MAP,
        "namespaces" => NAMESPACE,
        "deployments" => DEPLOYMENT,
        "services" => SERVICE,
        "secrets" => SECRET,
        "roles" | "clusterroles" => ROLE,
        "rolebindings" | "clusterrolebindings" => ROLE_BINDING,
        "selfsubjectaccessreviews" => ACCESS_REVIEW,
        _ => return None,
    };
    let unknown = body.strip_prefix(b"k8s\0")?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), None);
    for (number, wire) in fields(unknown)? {
        match (number, wire) {
            (1, Wire::Bytes(type_meta)) => {
                for (n, w) in fields(type_meta)? {
                    match (n, w) {
                        (1, Wire::Bytes(v)) => api_version = text(v)?,
                        (2, Wire::Bytes(k)) => kind = text(k)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(bytes)) => raw = Some(bytes),
            _ => {}
        }
    }
    let mut object = message(schema, raw?, 0)?;
    object["apiVersion"] = json!(api_version);
    object["kind"] = json!(kind);
    Some(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(number: u64, wire: u64) -> Vec<u8> {
        vec![((number << 3) | wire) as u8]
    }

    fn bytes(number: u64, content: &[u8]) -> Vec<u8> {
        let mut out = tag(number, 2);
        out.push(content.len() as u8);
        out.extend_from_slice(content);
        out
    }

    #[test]
    fn a_configmap_reads_as_kubectl_sent_it() {
        let metadata = [bytes(1, b"settings"), bytes(3, b"shop")].concat();
        let data = [bytes(1, b"MODE"), bytes(2, b"production")].concat();
        let raw = [bytes(1, &metadata), bytes(2, &data)].concat();
        let type_meta = [bytes(1, b"v1"), bytes(2, b"ConfigMap")].concat();
        let body = [b"k8s\0".to_vec(), bytes(1, &type_meta), bytes(2, &raw)].concat();
        let object = decode("configmaps", &body).unwrap();
        assert_eq!(
            object,
            json!({ "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": { "name": "settings", "namespace": "shop" }, "data": { "MODE": "production" } })
        );
        assert!(decode("configmaps", b"k8s\0\xff").is_none(), "a broken body is refused, not guessed");
    }

    #[test]
    fn a_zero_is_unset_except_where_kubernetes_keeps_a_pointer() {
        let varint = |number: u64, v: u8| [tag(number, 0), vec![v]].concat();
        let envelope = |kind: &[u8], raw: &[u8]| {
            let type_meta = [bytes(1, b"v1"), bytes(2, kind)].concat();
            [b"k8s\0".to_vec(), bytes(1, &type_meta), bytes(2, raw)].concat()
        };
        // kubectl create service nodeport sends nodePort 0 and an empty type field.
        let port = [bytes(2, b"TCP"), varint(3, 80), varint(5, 0)].concat();
        let spec = [bytes(1, &port), bytes(4, b"")].concat();
        let service = decode("services", &envelope(b"Service", &bytes(2, &spec))).unwrap();
        assert_eq!(service["spec"], json!({ "ports": [{ "protocol": "TCP", "port": 80 }] }));
        // A Deployment scaled to zero keeps its zero (a pointer in Kubernetes' types).
        let deployment = decode("deployments", &envelope(b"Deployment", &bytes(2, &varint(1, 0)))).unwrap();
        assert_eq!(deployment["spec"], json!({ "replicas": 0 }));
    }
}
