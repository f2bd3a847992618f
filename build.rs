//! Compiles `proto/` with protox (pure Rust, no system `protoc`) into tonic code, a descriptor
//! set for server reflection, and (pbjson) the messages' proto3 JSON mapping for Connect.

use std::path::PathBuf;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/unoflip/v1/cards.proto",
        "proto/unoflip/v1/game.proto",
        "proto/unoflip/v1/service.proto",
    ];
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(files, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("unoflip_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .codec_path("crate::service::grpc::codec::Codec")
        // pbjson's Timestamp: the same message, with its JSON mapping.
        .extern_path(".google.protobuf.Timestamp", "::pbjson_types::Timestamp")
        .compile_fds(fds.clone())?;
    pbjson_build::Builder::new()
        .register_descriptors(&fds.encode_to_vec())?
        .out_dir(&out)
        .build(&[".unoflip.v1"])?;
    // For the load benchmark's bare transport baseline: a server trait whose methods answer
    // UNIMPLEMENTED unless implemented, so the baseline implements only what its clients call.
    let stubbed = out.join("stubbed");
    std::fs::create_dir_all(&stubbed)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .generate_default_stubs(true)
        .codec_path("unoflip::service::grpc::codec::Codec")
        .out_dir(stubbed)
        .compile_fds(fds)?;
    Ok(())
}
