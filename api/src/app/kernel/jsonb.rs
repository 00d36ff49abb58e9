//! JSONB columns and the `*Stored` shapes each domain's store keeps in
//! them (see `infra/store.rs`): written whole, read strictly.

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::app::{Error, Result};

/// Writes a stored shape into its JSONB column.
pub(in crate::app) fn to_column(stored: &impl Serialize) -> Value {
    serde_json::to_value(stored).expect("stored shapes are plain data")
}

/// Reads a JSONB column as its stored shape; `what` names it in the error.
pub(in crate::app) fn from_column<T: DeserializeOwned>(what: &str, value: &Value) -> Result<T> {
    T::deserialize(value).map_err(|e| Error::Internal(anyhow::anyhow!("stored {what} does not read: {e}")))
}
