//! Compiles the protobuf contracts with protox (pure Rust, no system
//! `protoc`) and writes the encoded descriptor set for gRPC reflection.

use std::path::PathBuf;

use protox::prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "moke/v1/moke.proto",
        "moke/v1/iam.proto",
        "moke/v1/workloads.proto",
        "moke/v1/integrations.proto",
        "moke/v1/catalog.proto",
        "moke/region/v1/region.proto",
        "google/rpc/status.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["."])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("moke_descriptor.bin"), descriptors.encode_to_vec())?;
    // What the gateway's reflection tells anyone: the public API, without
    // the internal gateway ↔ region messages.
    let public: Vec<&str> = files.into_iter().filter(|file| !file.starts_with("moke/region/")).collect();
    std::fs::write(out.join("moke_public_descriptor.bin"), protox::compile(public, ["."])?.encode_to_vec())?;
    // The region agent keeps these specs in its own store.
    let stored = [
        "Taint",
        "Toleration",
        "NodePoolSpec",
        "WorkloadSpec",
        "EnvVar",
        "ContainerPort",
        "ServiceSpec",
        "ServicePort",
    ];
    // google.rpc.Status is tonic-types' own (the type tonic's rich errors use).
    let mut config = tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .extern_path(".google.rpc", "::tonic_types::pb");
    for message in stored {
        config = config.type_attribute(
            format!("moke.region.v1.{message}"),
            "#[derive(serde::Serialize, serde::Deserialize)] #[serde(default)]",
        );
    }
    config.compile_fds(descriptors)?;
    Ok(())
}
