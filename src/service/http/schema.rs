//! The services' methods as the Connect layer sees them, read from the descriptor sets the build
//! makes: each method's request and response types, whether it streams, and whether it may be
//! called with `GET` (`option idempotency_level = NO_SIDE_EFFECTS` in the proto). The proto3
//! JSON mapping is prost-reflect's, over the same descriptors.

use std::collections::HashMap;

use prost::Message;
use prost_reflect::{
    DescriptorError, DescriptorPool, DynamicMessage, MessageDescriptor, SerializeOptions,
};
use prost_types::method_options::IdempotencyLevel;

/// One method of a served service.
#[derive(Clone, Debug)]
pub(crate) struct Method {
    /// The request's type.
    pub input: MessageDescriptor,
    /// The response's type.
    pub output: MessageDescriptor,
    /// Whether the server answers with a stream.
    pub streaming: bool,
    /// Whether the method has no side effects, so may be called with `GET`.
    pub safe: bool,
}

/// The methods of every service in the descriptor sets, by path (`/package.Service/Method`).
#[derive(Debug)]
pub(crate) struct Schema {
    pool: DescriptorPool,
    methods: HashMap<String, Method>,
}

impl Schema {
    /// Reads encoded `FileDescriptorSet`s (a file in several sets is read once).
    pub fn new(sets: &[&[u8]]) -> Result<Schema, DescriptorError> {
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
                methods.insert(
                    format!("/{}/{}", service.full_name(), method.name()),
                    Method {
                        input: method.input(),
                        output: method.output(),
                        streaming: method.is_server_streaming(),
                        safe,
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
        Schema::new(&[
            crate::proto::FILE_DESCRIPTOR_SET,
            tonic_health::pb::FILE_DESCRIPTOR_SET,
            tonic_types::pb::FILE_DESCRIPTOR_SET,
        ])
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
        let proto =
            from_json(&method.input, br#"{"game":"games/abc"}"#).expect("as the proto says");
        let json = to_json(&method.input, &proto).expect("as the proto says");
        assert_eq!(
            String::from_utf8(json).expect("as the proto says"),
            r#"{"game":"games/abc"}"#
        );
    }

    #[test]
    fn unknown_fields_wrong_types_and_trailing_text_are_refused() {
        let schema = schema();
        let input = &schema
            .method("/unoflip.v1.UnoFlipService/GetView")
            .expect("as the proto says")
            .input;
        let unknown = from_json(input, br#"{"game":"games/abc","sneaky":1}"#).expect_err("refused");
        assert!(unknown.contains("sneaky"), "{unknown}");
        let wrong = from_json(input, br#"{"game":7}"#).expect_err("refused");
        assert!(wrong.contains("string"), "{wrong}");
        assert!(from_json(input, br#"{"game":"games/abc"} {}"#).is_err());
        assert!(from_json(input, br#"{"game":"#).is_err());
    }
}
