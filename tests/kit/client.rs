//! Reaching a server: a gRPC client, requests with a bearer token, and the reason of a refusal.

use std::time::{Duration, Instant};

use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Request, Status};
use unoflip::proto as pb;
use unoflip::proto::uno_flip_service_client::UnoFlipServiceClient;

/// A client of `unoflip.v1.UnoFlipService`.
pub type Client = UnoFlipServiceClient<Channel>;

/// A client of the server at `address` (`127.0.0.1:port`), once it answers (30 s at most).
pub async fn connect(address: impl std::fmt::Display) -> Client {
    let url = format!("http://{address}");
    let started = Instant::now();
    loop {
        match UnoFlipServiceClient::connect(url.clone()).await {
            Ok(client) => return client,
            Err(_) if started.elapsed() < Duration::from_secs(30) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("no server answered at {url}: {e}"),
        }
    }
}

/// A request with a bearer token.
pub fn authed<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    let value: MetadataValue<_> = format!("Bearer {token}")
        .parse()
        .unwrap_or_else(|e| panic!("a token that is no header value: {token:?}: {e}"));
    request.metadata_mut().insert("authorization", value);
    request
}

/// The ErrorInfo reason of a refusal; a refusal without one fails the test, since every refusal
/// must carry one.
pub fn reason(status: &Status) -> String {
    use tonic_types::StatusExt;
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"))
}

/// A move that always keeps a game going, from a seat's legal actions: a card if one may be
/// played, else anything but catching a seat (which would not pass the turn).
pub fn pick_move(legal: &[pb::Action]) -> Option<pb::Action> {
    legal
        .iter()
        .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
        .or_else(|| {
            legal
                .iter()
                .find(|a| !matches!(a.kind, Some(pb::action::Kind::CatchUno(_))))
        })
        .cloned()
}
