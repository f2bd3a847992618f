//! The services' methods as the Connect layer sees them, read from the descriptor sets the build
//! makes: each method's request and response types, whether it streams, whether it may be
//! called with `GET` (`option idempotency_level = NO_SIDE_EFFECTS` in the proto), and its proto3
//! JSON mapping: a typed one where the edge gives it (`grpc/json.rs`, pbjson's generated serde
//! code, several times cheaper), else prost-reflect's over the descriptors (the health service).

use std::collections::HashMap;
use std::sync::Arc;

use prost::Message;
use prost_reflect::{
    DescriptorError, DescriptorPool, DynamicMessage, MessageDescriptor, SerializeOptions,
};
use prost_types::method_options::IdempotencyLevel;

/// A method's messages between proto3 JSON and their binary encoding.
pub trait JsonCodec: Send + Sync {
    /// The request's binary encoding from its JSON; unknown fields, wrong types and trailing
    /// text are refused, saying where.
    fn request_to_proto(&self, json: &[u8]) -> Result<Vec<u8>, String>;
    /// A response's canonical JSON from its binary encoding.
    fn response_to_json(&self, proto: &[u8]) -> Result<Vec<u8>, String>;
}

/// The JSON mapping by reflection over the descriptors.
struct Reflected {
    input: MessageDescriptor,
    output: MessageDescriptor,
}

impl JsonCodec for Reflected {
    fn request_to_proto(&self, json: &[u8]) -> Result<Vec<u8>, String> {
        from_json(&self.input, json)
    }

    fn response_to_json(&self, proto: &[u8]) -> Result<Vec<u8>, String> {
        to_json(&self.output, proto)
    }
}

/// One method of a served service.
#[derive(Clone)]
pub(crate) struct Method {
    /// The request's type's name.
    pub input: String,
    /// Whether the server answers with a stream.
    pub streaming: bool,
    /// Whether the method has no side effects, so may be called with `GET`.
    pub safe: bool,
    /// Its JSON mapping.
    pub json: Arc<dyn JsonCodec>,
    /// Whether that mapping is typed (not by reflection): the tests check that every method of
    /// ours is.
    #[cfg(test)]
    pub typed: bool,
}

/// The methods of every service in the descriptor sets, by path (`/package.Service/Method`).
pub(crate) struct Schema {
    pool: DescriptorPool,
    methods: HashMap<String, Method>,
}

impl Schema {
    /// Reads encoded `FileDescriptorSet`s (a file in several sets is read once); `typed` gives
    /// the typed JSON mappings by path.
    pub fn new(
        sets: &[&[u8]],
        mut typed: HashMap<String, Arc<dyn JsonCodec>>,
    ) -> Result<Schema, DescriptorError> {
        let mut pool = DescriptorPool::new();
        for set in sets {
            pool.decode_file_descriptor_set(*set)?;
        }
        let mut methods = HashMap::new();
        for service in pool.services() {
            for method in service.methods() {
                let safe = method
                    .method_descriptor_proto()
                    .options
                    .as_ref()
                    .is_some_and(|o| o.idempotency_level() == IdempotencyLevel::NoSideEffects);
                let path = format!("/{}/{}", service.full_name(), method.name());
                let (json, is_typed) = match typed.remove(&path) {
                    Some(codec) => (codec, true),
                    None => (
                        Arc::new(Reflected {
                            input: method.input(),
                            output: method.output(),
                        }) as Arc<dyn JsonCodec>,
                        false,
                    ),
                };
                tracing::debug!(%path, typed = is_typed, "Connect and JSON serve a method");
                methods.insert(
                    path,
                    Method {
                        input: method.input().name().to_owned(),
                        streaming: method.is_server_streaming(),
                        safe,
                        json,
                        #[cfg(test)]
                        typed: is_typed,
                    },
                );
            }
        }
        Ok(Schema { pool, methods })
    }

    /// The method served at `path`, if any.
    pub fn method(&self, path: &str) -> Option<&Method> {
        self.methods.get(path)
    }

    /// A detail of an error (a `google.protobuf.Any`'s type name and bytes) in JSON, when its
    /// type is known.
    pub fn debug(&self, type_name: &str, value: &[u8]) -> Option<serde_json::Value> {
        let descriptor = self.pool.get_message_by_name(type_name)?;
        let message = DynamicMessage::decode(descriptor, value).ok()?;
        serde_json::to_value(&message).ok()
    }
}

/// A message's canonical proto3 JSON from its binary encoding.
pub(crate) fn to_json(output: &MessageDescriptor, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let message = DynamicMessage::decode(output.clone(), bytes).map_err(|e| e.to_string())?;
    let mut json = Vec::with_capacity(bytes.len() * 2 + 16);
    let mut serializer = serde_json::Serializer::new(&mut json);
    message
        .serialize_with_options(&mut serializer, &SerializeOptions::new())
        .map_err(|e| e.to_string())?;
    Ok(json)
}

/// A message's binary encoding from its proto3 JSON. Unknown fields, wrong types and trailing
/// text are refused, with serde's account of where.
pub(crate) fn from_json(input: &MessageDescriptor, json: &[u8]) -> Result<Vec<u8>, String> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let message =
        DynamicMessage::deserialize(input.clone(), &mut deserializer).map_err(|e| e.to_string())?;
    deserializer.end().map_err(|e| e.to_string())?;
    Ok(message.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        Schema::new(
            &[
                crate::proto::FILE_DESCRIPTOR_SET,
                tonic_health::pb::FILE_DESCRIPTOR_SET,
                tonic_types::pb::FILE_DESCRIPTOR_SET,
            ],
            HashMap::new(),
        )
        .expect("the build's descriptors read")
    }

    #[test]
    fn methods_are_found_by_path_with_their_kind() {
        let schema = schema();
        let decks = schema
            .method("/unoflip.v1.UnoFlipService/GetDecks")
            .expect("as the proto says");
        assert!(decks.safe && !decks.streaming);
        let act = schema
            .method("/unoflip.v1.UnoFlipService/SubmitAction")
            .expect("as the proto says");
        assert!(!act.safe && !act.streaming);
        let subscribe = schema
            .method("/unoflip.v1.UnoFlipService/Subscribe")
            .expect("as the proto says");
        assert!(subscribe.streaming);
        assert!(schema.method("/grpc.health.v1.Health/Check").is_some());
        // The methods Connect clients may GET: a client relying on one would break if it lost
        // its level (buf's own check of levels is off for the proto, see proto/buf.yaml).
        let mut safe: Vec<&str> = schema
            .methods
            .iter()
            .filter(|(path, m)| m.safe && path.starts_with("/unoflip."))
            .map(|(path, _)| path.rsplit('/').next().unwrap_or(path))
            .collect();
        safe.sort_unstable();
        assert_eq!(
            safe,
            [
                "ExportGame",
                "GetDecks",
                "GetGame",
                "GetLeaderboard",
                "GetPlayer",
                "GetReplay",
                "GetView",
                "ListGames",
                "ListMyGames",
                "Subscribe",
                "SubscribeAll"
            ]
        );
        assert!(schema.method("/unoflip.v1.UnoFlipService/Nope").is_none());
    }

    #[test]
    fn json_goes_to_proto_and_back_in_canonical_form() {
        let schema = schema();
        let method = schema
            .method("/unoflip.v1.UnoFlipService/GetView")
            .expect("as the proto says");
        assert!(!method.typed, "no typed mappings given: by reflection");
        let proto = method
            .json
            .request_to_proto(br#"{"game":"games/abc"}"#)
            .expect("as the proto says");
        let input = schema
            .pool
            .get_message_by_name("unoflip.v1.GetViewRequest")
            .expect("as the proto says");
        let json = to_json(&input, &proto).expect("as the proto says");
        assert_eq!(
            String::from_utf8(json).expect("as the proto says"),
            r#"{"game":"games/abc"}"#
        );
    }

    #[test]
    fn unknown_fields_wrong_types_and_trailing_text_are_refused() {
        let schema = schema();
        let input = &schema
            .pool
            .get_message_by_name("unoflip.v1.GetViewRequest")
            .expect("as the proto says");
        let unknown = from_json(input, br#"{"game":"games/abc","sneaky":1}"#).expect_err("refused");
        assert!(unknown.contains("sneaky"), "{unknown}");
        let wrong = from_json(input, br#"{"game":7}"#).expect_err("refused");
        assert!(wrong.contains("string"), "{wrong}");
        assert!(from_json(input, br#"{"game":"games/abc"} {}"#).is_err());
        assert!(from_json(input, br#"{"game":"#).is_err());
    }
}
