//! Protobuf contracts of Moke, compiled with protox: the public gRPC API
//! `moke.v1` and the gateway ↔ region queue messages `moke.region.v1`. Generated code only; no logic, and no dependency on any other
//! Moke crate.

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

/// The encoded `FileDescriptorSet` of every contract, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/moke_descriptor.bin"));
