//! The webhook sink: each notification is a POST of JSON to the host's URL, signed as the
//! Standard Webhooks specification says (<https://www.standardwebhooks.com/>):
//!
//! - `webhook-id`: the notification's id (stable: the same on every retry and after a restart);
//! - `webhook-timestamp`: Unix seconds when this attempt was sent;
//! - `webhook-signature`: `v1,` and the base64 HMAC-SHA256, keyed by the secret, of
//!   `<webhook-id>.<webhook-timestamp>.<body>`.
//!
//! The secret is given as Standard Webhooks writes it, `whsec_` and the key in base64, or as
//! plain text (its bytes are the key). A 2xx answer delivers; anything else (a redirect is not
//! followed), a timeout or a refused connection is tried again; a 4xx other than 408 and 429 is
//! given up at once, as the receiver said it will never take it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::{Failed, Notification, Sink};

/// How long a receiver may take to answer.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The shortest key taken (Standard Webhooks asks for 24 to 64 bytes).
const MIN_KEY_BYTES: usize = 16;

/// One webhook receiver.
pub struct Webhook {
    url: reqwest::Url,
    key: Vec<u8>,
    client: reqwest::Client,
}

/// Why a webhook flag cannot be used, naming it.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// Not an http(s) URL.
    #[error("--webhook-url {0:?}: expected an http:// or https:// URL")]
    Url(String),
    /// No secret.
    #[error(
        "--webhook-url needs --webhook-secret (whsec_ and base64, as Standard Webhooks writes it)"
    )]
    NoSecret,
    /// A secret that is not one.
    #[error("--webhook-secret: {0}")]
    Secret(String),
    /// The HTTP client could not be made.
    #[error("--webhook-url: {0}")]
    Client(String),
}

/// The key of a secret: `whsec_<base64>` decoded, or the text's bytes.
pub fn key_of(secret: &str) -> Result<Vec<u8>, WebhookError> {
    let key = match secret.strip_prefix("whsec_") {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| WebhookError::Secret("whsec_ is followed by base64".into()))?,
        None => secret.as_bytes().to_vec(),
    };
    if key.len() < MIN_KEY_BYTES {
        return Err(WebhookError::Secret(format!(
            "at least {MIN_KEY_BYTES} bytes of key"
        )));
    }
    Ok(key)
}

/// The `webhook-signature` of `body` sent as `id` at `timestamp` (none only if HMAC refused
/// the key, which it does for no length).
pub fn sign(key: &[u8], id: &str, timestamp: u64, body: &str) -> Option<String> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).ok()?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    Some(format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    ))
}

impl Webhook {
    /// A receiver at `url`, signed with `secret`.
    pub fn new(url: &str, secret: &str) -> Result<Webhook, WebhookError> {
        let parsed = reqwest::Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| WebhookError::Url(url.to_owned()))?;
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("unoflip/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| WebhookError::Client(e.to_string()))?;
        Ok(Webhook {
            url: parsed,
            key: key_of(secret)?,
            client,
        })
    }
}

#[async_trait::async_trait]
impl Sink for Webhook {
    fn name(&self) -> String {
        // The URL without its query (which may hold a token).
        let mut shown = self.url.clone();
        shown.set_query(None);
        shown.set_fragment(None);
        let _ = shown.set_password(None);
        format!("webhook:{shown}")
    }

    async fn deliver(&self, notification: &Notification) -> Result<(), Failed> {
        let now = SystemTime::now();
        let timestamp = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let body = notification.body(now);
        let signature =
            sign(&self.key, &notification.id, timestamp, &body).ok_or_else(|| Failed {
                error: "the secret is not an HMAC key".into(),
                retry: false,
            })?;
        let answer = self
            .client
            .post(self.url.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", &notification.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await
            .map_err(|e| Failed {
                // Not the URL: its query may hold a key.
                error: e.without_url().to_string(),
                retry: true,
            })?;
        let status = answer.status();
        if status.is_success() {
            return Ok(());
        }
        let retry = !status.is_client_error()
            || status == reqwest::StatusCode::REQUEST_TIMEOUT
            || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
        Err(Failed {
            error: format!("the receiver answered {status}"),
            retry,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_standard_webhooks_test_vector() {
        // From the Standard Webhooks reference libraries' tests.
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("a key");
        assert_eq!(
            sign(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                r#"{"test": 2432232314}"#
            )
            .as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
    }

    #[test]
    fn bad_flags_are_refused() {
        assert!(matches!(key_of("whsec_!!"), Err(WebhookError::Secret(_))));
        assert!(matches!(key_of("short"), Err(WebhookError::Secret(_))));
        assert!(matches!(
            Webhook::new("ftp://x", "a secret of enough bytes"),
            Err(WebhookError::Url(_))
        ));
        assert!(Webhook::new("https://hooks.example/x", "a secret of enough bytes").is_ok());
    }
}
