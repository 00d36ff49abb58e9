//! Protobuf contracts of Moke, compiled with protox: the public gRPC API
//! `moke.v1` and the gateway ↔ region queue messages `moke.region.v1`, plus
//! the names of the NATS subjects and streams they travel on. No logic, and
//! no dependency on any other Moke crate.

/// The public API, version 1.
pub mod v1 {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("moke.v1");
}

/// Messages on the regional work queues and status streams, version 1.
pub mod region {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("moke.region.v1");
}

/// The encoded `FileDescriptorSet` of every contract.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/moke_descriptor.bin"));

/// The encoded `FileDescriptorSet` of the public API alone (`moke.v1` and
/// what it imports), which the gateway's gRPC reflection serves.
pub const PUBLIC_FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/moke_public_descriptor.bin"));

/// Where region messages travel on NATS JetStream. `prefix` separates
/// deployments (and tests) sharing one NATS server; it is `moke` by default.
pub mod subjects {
    /// Commands for one region: `<prefix>.cmd.<region>`.
    pub fn commands(prefix: &str, region: &str) -> String {
        format!("{prefix}.cmd.{region}")
    }

    /// The stream holding one region's commands (one stream per region, so
    /// each has its own limits).
    pub fn command_stream(prefix: &str, region: &str) -> String {
        format!("{}_CMD_{}", prefix.to_uppercase(), region.to_uppercase().replace(['.', '-'], "_"))
    }

    /// Status from one region: `<prefix>.status.<region>`.
    pub fn status(prefix: &str, region: &str) -> String {
        format!("{prefix}.status.{region}")
    }

    /// Every region's status: the subject filter of the status stream.
    pub fn all_status(prefix: &str) -> String {
        format!("{prefix}.status.>")
    }

    /// The stream holding status from every region.
    pub fn status_stream(prefix: &str) -> String {
        format!("{}_STATUS", prefix.to_uppercase())
    }

    /// Commands a region gave up on: `<prefix>.dlq.<region>`.
    pub fn dead_letters(prefix: &str, region: &str) -> String {
        format!("{prefix}.dlq.{region}")
    }

    /// Status reports the gateway could not apply, from one region:
    /// `<prefix>.dlq.status.<region>`.
    pub fn status_dead_letters(prefix: &str, region: &str) -> String {
        format!("{prefix}.dlq.status.{region}")
    }

    /// The header saying why a dead letter could not be applied.
    pub const DEAD_LETTER_REASON: &str = "Moke-Dead-Letter-Reason";

    /// The stream keeping every region's dead letters.
    pub fn dead_letter_stream(prefix: &str) -> String {
        format!("{}_DLQ", prefix.to_uppercase())
    }

    /// Every region's dead letters.
    pub fn all_dead_letters(prefix: &str) -> String {
        format!("{prefix}.dlq.>")
    }

    /// The header carrying the command id (JetStream de-duplicates on it).
    pub const MESSAGE_ID: &str = "Nats-Msg-Id";

    /// The header carrying the command's operation id, so even a command
    /// that cannot be decoded can have its operation failed.
    pub const OPERATION_ID: &str = "Moke-Operation-Id";
}
