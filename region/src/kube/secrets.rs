//! Secrets: checked and normalized as the API server does (`stringData`
//! folded into base64 `data`, `type` defaulted to `Opaque`, the keys each
//! well-known type needs), and kept encrypted at rest by envelope
//! encryption: when the region saves its state, each Secret's data and
//! annotations (where kubectl's last-applied configuration repeats them) are
//! sealed with AES-256-GCM under a fresh data key, itself sealed under the
//! region's key-encryption key (the KMS key, kept apart from the state);
//! on load it is opened again, and a state whose secrets the key cannot
//! open is refused rather than read without them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{Map, Value, json};

use super::validate::Invalid;

/// Where a sealed Secret keeps its envelope in the saved state.
const ENVELOPE: &str = "moke.dev/envelope";
/// The envelope format: AES-256-GCM data key under an AES-256-GCM KEK.
const FORMAT: &str = "aes256gcm-v1";
/// The Secret types whose keys the API server insists on.
const REQUIRED_KEYS: &[(&str, &[&str])] = &[
    ("kubernetes.io/tls", &["tls.crt", "tls.key"]),
    ("kubernetes.io/dockerconfigjson", &[".dockerconfigjson"]),
    ("kubernetes.io/dockercfg", &[".dockercfg"]),
    ("kubernetes.io/basic-auth", &[]),
    ("kubernetes.io/ssh-auth", &["ssh-privatekey"]),
];

fn invalid(field: &str, why: &str) -> Invalid {
    (field.to_string(), why.to_string())
}

/// A data key name: letters, digits, `-`, `_` and `.`, at most 253.
fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 253
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Normalizes a Secret being written: `stringData` into `data`, `type`
/// defaulted; refuses keys and values the API server refuses, and a
/// change to an immutable Secret's data or to any Secret's type.
pub fn prepare(secret: &mut Value, previous: Option<&Value>) -> Result<(), Invalid> {
    if secret.get(ENVELOPE).is_some() {
        return Err(invalid(ENVELOPE, "is the server's own field"));
    }
    let mut data: Map<String, Value> = match &secret["data"] {
        Value::Null => Map::new(),
        Value::Object(data) => data.clone(),
        _ => return Err(invalid("data", "must be an object")),
    };
    for (key, value) in &data {
        if !valid_key(key) {
            return Err(invalid(
                &format!("data[{key}]"),
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            ));
        }
        if value.as_str().is_none_or(|v| STANDARD.decode(v).is_err()) {
            return Err(invalid(&format!("data[{key}]"), "must be base64-encoded bytes"));
        }
    }
    match &secret["stringData"] {
        Value::Null => {}
        Value::Object(strings) => {
            for (key, value) in strings {
                let Some(text) = value.as_str().filter(|_| valid_key(key)) else {
                    return Err(invalid(&format!("stringData[{key}]"), "a valid key with a string value"));
                };
                data.insert(key.clone(), json!(STANDARD.encode(text)));
            }
        }
        _ => return Err(invalid("stringData", "must be an object")),
    }
    if let Some(fields) = secret.as_object_mut() {
        fields.remove("stringData");
    }
    if secret["type"].is_null() || secret["type"] == "" {
        secret["type"] = json!("Opaque");
    }
    let Some(kind) = secret["type"].as_str().map(str::to_string) else {
        return Err(invalid("type", "must be a string"));
    };
    if let Some((_, keys)) = REQUIRED_KEYS.iter().find(|(t, _)| *t == kind)
        && let Some(missing) = keys.iter().find(|k| !data.contains_key(**k))
    {
        return Err(invalid(&format!("data[{missing}]"), &format!("Required value: a {kind} Secret holds it")));
    }
    if let Some(previous) = previous {
        if previous["type"] != secret["type"] {
            return Err(invalid("type", "field is immutable"));
        }
        if previous["immutable"] == true && (previous["data"] != json!(data) || secret["immutable"] != true) {
            return Err(invalid("data", "field is immutable when `immutable` is set"));
        }
    }
    if data.is_empty() {
        if let Some(fields) = secret.as_object_mut() {
            fields.remove("data");
        }
    } else {
        secret["data"] = Value::Object(data);
    }
    Ok(())
}

/// The region's key-encryption key.
pub struct Kek {
    key: LessSafeKey,
    /// A short fingerprint naming the key in each envelope.
    id: String,
    /// The envelope each Secret was last sealed in, by place and a digest
    /// of its version and content: a Secret that did not change is not sealed again
    /// (no work, and no nonce spent under the key).
    sealed: std::sync::Mutex<std::collections::HashMap<String, (Value, Value)>>,
}

/// Why secrets could not be sealed or opened.
#[derive(Debug)]
pub struct SealError(pub String);

impl std::fmt::Display for SealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SealError {}

fn aes_key(bytes: &[u8]) -> Result<LessSafeKey, SealError> {
    UnboundKey::new(&AES_256_GCM, bytes)
        .map(LessSafeKey::new)
        .map_err(|_| SealError("an encryption key must be 32 bytes".into()))
}

fn random<const N: usize>() -> Result<[u8; N], SealError> {
    let mut bytes = [0u8; N];
    SystemRandom::new().fill(&mut bytes).map_err(|_| SealError("the system has no randomness".into()))?;
    Ok(bytes)
}

/// Seals `plain` under `key`: nonce followed by ciphertext and tag.
fn seal_with(key: &LessSafeKey, plain: &[u8], aad: &[u8]) -> Result<Vec<u8>, SealError> {
    let nonce = random::<NONCE_LEN>()?;
    let mut sealed = plain.to_vec();
    key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(aad), &mut sealed)
        .map_err(|_| SealError("sealing failed".into()))?;
    Ok([nonce.as_slice(), &sealed].concat())
}

fn open_with(key: &LessSafeKey, sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>, SealError> {
    if sealed.len() < NONCE_LEN {
        return Err(SealError("an envelope is too short".into()));
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SealError("a bad nonce".into()))?;
    let mut body = body.to_vec();
    let plain = key.open_in_place(nonce, Aad::from(aad), &mut body).map_err(|_| {
        SealError("a Secret could not be opened: the state was sealed under another key, or changed".into())
    })?;
    Ok(plain.to_vec())
}

impl Kek {
    /// The key from its 32 bytes.
    pub fn new(bytes: &[u8]) -> Result<Kek, SealError> {
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
        let id = digest.as_ref()[..6].iter().map(|b| format!("{b:02x}")).collect();
        Ok(Kek { key: aes_key(bytes)?, id, sealed: Default::default() })
    }

    /// A new random key's bytes.
    pub fn generate() -> Result<[u8; 32], SealError> {
        random::<32>()
    }

    /// Seals the data of every Secret in a saved state (`SimState` as JSON):
    /// each under a fresh data key, bound to its cluster and object key.
    pub fn seal_state(&self, state: &mut Value) -> Result<(), SealError> {
        let mut sealed = self.sealed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut seen = std::collections::HashSet::new();
        let result = for_each_secret(state, |place, secret| {
            seen.insert(place.to_string());
            if let Some(fields) = secret.as_object_mut() {
                fields.remove(ENVELOPE);
            }
            // Reused only for the same version holding the same bytes.
            let plain =
                json!([secret["metadata"]["resourceVersion"], secret["data"], secret["metadata"]["annotations"]]);
            let version = json!(ring::digest::digest(&ring::digest::SHA256, plain.to_string().as_bytes()).as_ref());
            if let Some((at, envelope)) = sealed.get(place)
                && *at == version
            {
                let envelope = envelope.clone();
                if let Some(fields) = secret.as_object_mut() {
                    fields.remove("data");
                }
                if let Some(metadata) = secret["metadata"].as_object_mut() {
                    metadata.remove("annotations");
                }
                secret[ENVELOPE] = envelope;
                return Ok(());
            }
            // The data, and the annotations (kubectl's last-applied
            // configuration repeats the data, or a manifest's stringData).
            let data = secret.as_object_mut().and_then(|fields| fields.remove("data")).unwrap_or(Value::Null);
            let annotations = secret["metadata"]
                .as_object_mut()
                .and_then(|metadata| metadata.remove("annotations"))
                .unwrap_or(Value::Null);
            if data.is_null() && annotations.is_null() {
                return Ok(());
            }
            let data = json!({ "data": data, "annotations": annotations });
            let dek_bytes = random::<32>()?;
            let dek = aes_key(&dek_bytes)?;
            let ciphertext = seal_with(&dek, &serde_json::to_vec(&data).unwrap_or_default(), place.as_bytes())?;
            let wrapped = seal_with(&self.key, &dek_bytes, place.as_bytes())?;
            secret[ENVELOPE] = json!({
                "format": FORMAT, "kek": self.id,
                "dek": STANDARD.encode(wrapped), "data": STANDARD.encode(ciphertext),
            });
            sealed.insert(place.to_string(), (version, secret[ENVELOPE].clone()));
            Ok(())
        });
        sealed.retain(|place, _| seen.contains(place));
        result
    }

    /// Whether a saved state holds sealed Secrets.
    pub fn holds_sealed(state: &Value) -> bool {
        state["kube"].as_object().is_some_and(|clusters| {
            clusters.values().any(|store| {
                store["objects"].as_object().is_some_and(|objects| objects.values().any(|o| o.get(ENVELOPE).is_some()))
            })
        })
    }

    /// Opens what [`Kek::seal_state`] sealed.
    pub fn open_state(&self, state: &mut Value) -> Result<(), SealError> {
        for_each_secret(state, |place, secret| {
            let Some(envelope) = secret.as_object_mut().and_then(|fields| fields.remove(ENVELOPE)) else {
                return Ok(());
            };
            if envelope["kek"] != self.id.as_str() {
                return Err(SealError(format!(
                    "the Secret {place} was sealed under key {}, not this region's key {}",
                    envelope["kek"], self.id
                )));
            }
            let decode = |field: &str| {
                STANDARD
                    .decode(envelope[field].as_str().unwrap_or_default())
                    .map_err(|_| SealError(format!("the envelope of {place} is not base64")))
            };
            let dek = aes_key(&open_with(&self.key, &decode("dek")?, place.as_bytes())?)?;
            let opened: Value = serde_json::from_slice(&open_with(&dek, &decode("data")?, place.as_bytes())?)
                .map_err(|_| SealError(format!("the data of {place} does not read")))?;
            if !opened["data"].is_null() {
                secret["data"] = opened["data"].clone();
            }
            if !opened["annotations"].is_null() {
                secret["metadata"]["annotations"] = opened["annotations"].clone();
            }
            Ok(())
        })
    }
}

/// Calls `act` with each Secret of a saved state and where it is
/// (`<cluster>/<object key>`, which its envelope is bound to).
fn for_each_secret(
    state: &mut Value,
    mut act: impl FnMut(&str, &mut Value) -> Result<(), SealError>,
) -> Result<(), SealError> {
    let Some(clusters) = state["kube"].as_object_mut() else { return Ok(()) };
    for (cluster, store) in clusters {
        let Some(objects) = store["objects"].as_object_mut() else { continue };
        for (key, object) in objects.iter_mut().filter(|(key, _)| key.starts_with("/secrets/")) {
            act(&format!("{cluster}/{key}"), object)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_is_folded_in_and_types_are_checked() {
        let mut secret = json!({ "stringData": { "password": "hunter2" }, "data": { "user": "YWRh" } });
        prepare(&mut secret, None).unwrap();
        assert_eq!(secret["data"], json!({ "user": "YWRh", "password": "aHVudGVyMg==" }));
        assert_eq!((secret["type"].as_str(), secret.get("stringData")), (Some("Opaque"), None));
        let mut tls = json!({ "type": "kubernetes.io/tls", "data": { "tls.crt": "eA==" } });
        assert_eq!(prepare(&mut tls, None).unwrap_err().0, "data[tls.key]");
        let mut bad = json!({ "data": { "x": "not base64!" } });
        assert_eq!(prepare(&mut bad, None).unwrap_err().0, "data[x]");
    }

    #[test]
    fn secrets_are_sealed_at_rest_and_open_only_under_their_key() {
        let kek = Kek::new(&Kek::generate().unwrap()).unwrap();
        let data = json!({ "password": "aHVudGVyMg==" });
        let mut state = json!({ "kube": { "cl_1": { "objects": {
            "/secrets/default/db": { "kind": "Secret", "data": data,
                                     "metadata": { "name": "db", "annotations": { "last": "aHVudGVyMg==" } } },
            "/configmaps/default/c": { "kind": "ConfigMap", "data": { "k": "v" } },
        } } } });
        let plain = state.clone();
        kek.seal_state(&mut state).unwrap();
        let saved = state.to_string();
        assert!(!saved.contains("aHVudGVyMg") && saved.contains("\"k\":\"v\""), "{saved}");

        let other = Kek::new(&Kek::generate().unwrap()).unwrap();
        assert!(other.open_state(&mut state.clone()).is_err());
        // An envelope moved to another object does not open.
        let mut moved = state.clone();
        let envelope = moved["kube"]["cl_1"]["objects"]["/secrets/default/db"].clone();
        moved["kube"]["cl_1"]["objects"]["/secrets/default/other"] = envelope;
        assert!(kek.open_state(&mut moved).is_err());

        kek.open_state(&mut state).unwrap();
        assert_eq!(state, plain);
    }
}
