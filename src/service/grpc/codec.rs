//! The protobuf codec of every gRPC method: prost's, with small starting buffers.
//!
//! Each open stream keeps its encoder's buffer for as long as it is open; tonic's default is
//! 8 KiB, which for tens of thousands of idle game streams is most of the server's memory. The
//! buffers here start small and grow as a message needs (a view is a few hundred bytes).

use std::marker::PhantomData;

use tonic::codec::{BufferSettings, Codec as TonicCodec};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// Bytes an encoder or decoder buffer starts with.
const BUFFER: usize = 256;

/// Bytes encoded before a stream yields to let them be sent (tonic's default).
const YIELD_THRESHOLD: usize = 32 * 1024;

/// The codec the generated services and clients use (`build.rs` names it).
#[derive(Debug, Clone)]
pub struct Codec<T, U> {
    _types: PhantomData<(T, U)>,
}

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec {
            _types: PhantomData,
        }
    }
}

impl<T, U> TonicCodec for Codec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::raw_encoder(BufferSettings::new(BUFFER, YIELD_THRESHOLD))
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstCodec::<T, U>::raw_decoder(BufferSettings::new(BUFFER, YIELD_THRESHOLD))
    }
}
