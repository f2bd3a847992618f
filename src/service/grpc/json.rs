//! The proto3 JSON mapping of each method of `UnoFlipService`, for Connect's JSON: the serde
//! code pbjson generates for every message (build.rs), typed, so that no JSON passes through
//! reflection (the Connect bench measured reflection at nearly 3x gRPC's CPU per call).

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use prost::Message;

use crate::proto as pb;
use crate::service::http::schema::JsonCodec;

/// The mapping of a method with request `Req` and response `Resp`.
struct Typed<Req, Resp>(PhantomData<fn() -> (Req, Resp)>);

impl<Req, Resp> JsonCodec for Typed<Req, Resp>
where
    Req: Message + Default + serde::de::DeserializeOwned,
    Resp: Message + Default + serde::Serialize,
{
    fn request_to_proto(&self, json: &[u8]) -> Result<Vec<u8>, String> {
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let request = Req::deserialize(&mut deserializer).map_err(|e| e.to_string())?;
        deserializer.end().map_err(|e| e.to_string())?;
        Ok(request.encode_to_vec())
    }

    fn response_to_json(&self, proto: &[u8]) -> Result<Vec<u8>, String> {
        let response = Resp::decode(proto).map_err(|e| e.to_string())?;
        // JSON is a few times the size of the binary: one allocation, not a series of doublings.
        let mut json = Vec::with_capacity(proto.len() * 4 + 64);
        serde_json::to_writer(&mut json, &response).map_err(|e| e.to_string())?;
        Ok(json)
    }
}

macro_rules! methods {
    ($($method:ident: $request:ident => $response:ident,)*) => {
        /// The typed JSON mapping of every method, by path.
        pub(crate) fn codecs() -> HashMap<String, Arc<dyn JsonCodec>> {
            let mut codecs: HashMap<String, Arc<dyn JsonCodec>> = HashMap::new();
            $(
                codecs.insert(
                    concat!("/unoflip.v1.UnoFlipService/", stringify!($method)).to_owned(),
                    Arc::new(Typed::<pb::$request, pb::$response>(PhantomData)),
                );
            )*
            codecs
        }
    };
}

methods! {
    GetDecks: GetDecksRequest => GetDecksResponse,
    CreateGame: CreateGameRequest => CreateGameResponse,
    GetGame: GetGameRequest => GetGameResponse,
    ListGames: ListGamesRequest => ListGamesResponse,
    JoinGame: JoinGameRequest => JoinGameResponse,
    StartGame: StartGameRequest => StartGameResponse,
    SubmitAction: SubmitActionRequest => SubmitActionResponse,
    GetView: GetViewRequest => GetViewResponse,
    LeaveGame: LeaveGameRequest => LeaveGameResponse,
    Subscribe: SubscribeRequest => SubscribeResponse,
    SubscribeAll: SubscribeAllRequest => SubscribeAllResponse,
    ExportGame: ExportGameRequest => ExportGameResponse,
    GetReplay: GetReplayRequest => GetReplayResponse,
    Rematch: RematchRequest => RematchResponse,
    RegisterPlayer: RegisterPlayerRequest => RegisterPlayerResponse,
    GetPlayer: GetPlayerRequest => GetPlayerResponse,
    ListMyGames: ListMyGamesRequest => ListMyGamesResponse,
    GetLeaderboard: GetLeaderboardRequest => GetLeaderboardResponse,
    FindMatch: FindMatchRequest => FindMatchResponse,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::http::schema::Schema;

    #[test]
    fn every_method_of_the_service_has_a_typed_mapping() {
        let schema = Schema::new(&[crate::proto::FILE_DESCRIPTOR_SET], codecs())
            .expect("the build's descriptors read");
        let pool = prost_reflect::DescriptorPool::decode(crate::proto::FILE_DESCRIPTOR_SET)
            .expect("the build's descriptors read");
        let service = pool
            .get_service_by_name("unoflip.v1.UnoFlipService")
            .expect("the service");
        assert_eq!(service.methods().len(), codecs().len());
        for method in service.methods() {
            let path = format!("/unoflip.v1.UnoFlipService/{}", method.name());
            let found = schema.method(&path).expect("every method is served");
            assert!(found.typed, "{path} is mapped by reflection");
            assert_eq!(found.input, method.input().name());
        }
    }

    #[test]
    fn typed_and_reflected_mappings_agree() {
        let reflected = Schema::new(&[crate::proto::FILE_DESCRIPTOR_SET], HashMap::new())
            .expect("the build's descriptors read");
        let typed = codecs();
        let response = pb::SubmitActionResponse {
            version: 12,
            events: vec![pb::Event {
                version: 12,
                ..Default::default()
            }],
        };
        let path = "/unoflip.v1.UnoFlipService/SubmitAction";
        let bytes = response.encode_to_vec();
        let by_reflection = reflected
            .method(path)
            .expect("served")
            .json
            .response_to_json(&bytes)
            .expect("encodes");
        let by_type = typed[path].response_to_json(&bytes).expect("encodes");
        assert_eq!(
            String::from_utf8_lossy(&by_type),
            String::from_utf8_lossy(&by_reflection)
        );
        let request = br#"{"game":"games/x","action":{"drawCard":{}},"expectedVersion":"3","request_id":"r"}"#;
        assert_eq!(
            typed[path].request_to_proto(request),
            reflected
                .method(path)
                .expect("served")
                .json
                .request_to_proto(request)
        );
        let unknown = typed[path]
            .request_to_proto(br#"{"game":"games/x","cheat":1}"#)
            .expect_err("an unknown field is refused");
        assert!(unknown.contains("cheat"), "{unknown}");
    }
}
