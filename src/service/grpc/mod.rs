//! The gRPC edge: the handlers of `unoflip.v1.UnoFlipService`, the conversions between protobuf
//! messages and domain types, and the framing of the server streams (`Subscribe`,
//! `SubscribeAll`, `FindMatch`).

pub mod codec;
pub mod convert;
pub(crate) mod firehose;
mod handlers;
pub(crate) mod json;
pub(crate) mod stream;

pub use handlers::Service;
