//! The `unoflip` binary. The gRPC server (`unoflip serve`) is built on the rules engine in the
//! library; until it lands the binary only says what it is.

#![deny(clippy::unwrap_used)]

fn main() {
    println!(
        "unoflip {}: the rules engine is in the library; `unoflip serve` is not built yet",
        env!("CARGO_PKG_VERSION")
    );
}
