//! The NATS sink (`serve --publish`): each notification goes to JetStream subject
//! `unoflip.v1.players.<player id>.notifications` of its own stream (created if missing), its
//! body the webhook's JSON, with `Nats-Msg-Id` the notification's id: JetStream drops a
//! duplicate within the stream's duplicate window, so a notification delivered again after a
//! crash is in the stream once.

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, stream};
use tokio::sync::OnceCell;

use super::{Failed, Notification, Sink};

/// How long a publish may wait for its acknowledgement.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);

/// The header naming the notification's type.
pub const HEADER_TYPE: &str = "Unoflip-Notification";

/// The subject of `player`'s notifications (`players/{id}`).
pub fn subject(player: &str) -> String {
    format!(
        "unoflip.v1.players.{}.notifications",
        crate::service::publish::token(player)
    )
}

/// Notifications into a JetStream stream.
pub struct NatsSink {
    url: String,
    stream: String,
    duplicate_window: Duration,
    context: OnceCell<jetstream::Context>,
}

impl NatsSink {
    /// A sink into `stream` (created if missing) of the NATS server at `url`.
    pub fn new(url: &str, stream: &str, duplicate_window: Duration) -> NatsSink {
        NatsSink {
            url: url.to_owned(),
            stream: stream.to_owned(),
            duplicate_window,
            context: OnceCell::new(),
        }
    }

    /// The JetStream context, connected (and the stream made) on first use.
    async fn context(&self) -> Result<&jetstream::Context, Failed> {
        self.context
            .get_or_try_init(|| async {
                let failed = |e: &dyn std::fmt::Display| Failed {
                    error: format!("NATS: {e}"),
                    retry: true,
                };
                let client = async_nats::ConnectOptions::new()
                    .name("unoflip notifications")
                    .connect(self.url.as_str())
                    .await
                    .map_err(|e| failed(&e))?;
                let context = jetstream::ContextBuilder::new()
                    .timeout(ACK_TIMEOUT)
                    .build(client);
                context
                    .get_or_create_stream(stream::Config {
                        name: self.stream.clone(),
                        subjects: vec!["unoflip.v1.players.*.notifications".into()],
                        duplicate_window: self.duplicate_window,
                        ..Default::default()
                    })
                    .await
                    .map_err(|e| failed(&e))?;
                Ok(context)
            })
            .await
    }
}

#[async_trait::async_trait]
impl Sink for NatsSink {
    fn name(&self) -> String {
        format!("nats:{}", self.stream)
    }

    async fn deliver(&self, notification: &Notification) -> Result<(), Failed> {
        let context = self.context().await?;
        let mut headers = HeaderMap::new();
        headers.insert(
            async_nats::header::NATS_MESSAGE_ID,
            notification.id.as_str(),
        );
        headers.insert(HEADER_TYPE, notification.kind.type_name());
        let ack = context
            .publish_with_headers(
                subject(&notification.player),
                headers,
                notification.body(std::time::SystemTime::now()).into(),
            )
            .await
            .map_err(|e| Failed {
                error: format!("NATS: {e}"),
                retry: true,
            })?;
        ack.await.map(|_| ()).map_err(|e| Failed {
            error: format!("NATS: {e}"),
            retry: true,
        })
    }
}
