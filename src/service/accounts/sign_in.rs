//! The host app's sign-in: a bearer JWT from its identity provider (Firebase Auth, Auth0,
//! Cognito, its own backend) stands for a player, wherever a player token does.
//!
//! - Keys come from a JWKS (`--auth-jwks`, a file or an http(s) URL, read again every
//!   `--auth-jwks-refresh` and at once when a token names a key not seen yet) and/or a shared
//!   HS256 secret (`--auth-hs256-secret`). A key is chosen by the token's `kid`.
//! - A token passes when its signature is good under a key of the algorithm it names, the
//!   algorithm is one that key is for (so an HS256 token is never checked against a public key
//!   taken as a secret, and `none` is never taken), `iss` and `aud` are the ones configured, and
//!   `exp` / `nbf` hold (30 s of leeway for clocks).
//! - A JWKS that cannot be read or parsed leaves the last good keys in use; the error is logged
//!   and counted (`unoflip_sign_in_key_refreshes_total{result="failed"}`).
//!
//! The verification is the `jsonwebtoken` crate's; this module chooses the key and names each
//! refusal's reason.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use base64::Engine;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

use crate::service::error::ServiceError;
use crate::service::reason::Reason;

/// The longest bearer JWT taken; real ones are well under 4 KiB.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// The largest JWKS document read.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// How long a JWKS fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The least time between two reads of the JWKS that a token with an unknown `kid` asks for.
const UNKNOWN_KEY_REFETCH: Duration = Duration::from_secs(10);
/// How soon a failed periodic read is tried again (or the refresh period, if shorter).
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(30);
/// Seconds of clock difference allowed on `exp` and `nbf`.
const LEEWAY_SECS: u64 = 30;

/// How the host's tokens are checked (`serve --auth-*`).
#[derive(Clone)]
pub struct Settings {
    /// A JWKS: a file path or an `http://` / `https://` URL.
    pub jwks: Option<String>,
    /// A shared secret for HS256 tokens.
    pub hs256_secret: Option<String>,
    /// The `iss` a token must carry.
    pub issuer: String,
    /// The `aud` a token must carry (one of, when it is a list).
    pub audience: String,
    /// The claim a new player's display name is taken from.
    pub name_claim: String,
    /// How often the JWKS is read again.
    pub refresh: Duration,
}

/// Who a token that passed signs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Its `iss`.
    pub issuer: String,
    /// Its `sub`.
    pub subject: String,
    /// The display name claim, if the token has one.
    pub display_name: Option<String>,
}

/// A key read from the JWKS and the algorithms it may verify.
struct Key {
    key: DecodingKey,
    algorithms: Vec<Algorithm>,
}

/// The keys in use.
#[derive(Default)]
struct Keys {
    /// Whether a JWKS was ever read (until then, asymmetric tokens cannot be checked).
    loaded: bool,
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid`: used for tokens without one.
    unnamed: Vec<Arc<Key>>,
}

/// The outcome of a JWKS read, as counted.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RefreshLabels {
    /// `ok` or `failed`.
    pub result: &'static str,
}

/// The sign-in's metrics, registered with the server's.
#[derive(Clone, Default)]
pub struct SignInMetrics {
    /// JWKS reads, by result.
    pub refreshes: Family<RefreshLabels, Counter>,
    /// Keys in use from the JWKS.
    pub keys: Gauge,
}

/// Checks the host's tokens.
pub struct SignIn {
    settings: Settings,
    hs256: Option<DecodingKey>,
    keys: RwLock<Arc<Keys>>,
    /// When the JWKS was last read (or tried); one read at a time.
    fetching: tokio::sync::Mutex<Option<Instant>>,
    client: reqwest::Client,
    metrics: SignInMetrics,
}

/// Why a sign-in configuration cannot be used, naming the flag.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Neither a JWKS nor a secret.
    #[error("--auth-issuer and --auth-audience need --auth-jwks or --auth-hs256-secret")]
    NoKeys,
    /// A key source without issuer or audience.
    #[error("--auth-jwks and --auth-hs256-secret need --auth-issuer and --auth-audience")]
    Unchecked,
    /// An HS256 secret too short to be one.
    #[error("--auth-hs256-secret: at least 32 bytes (256 bits), as RFC 7518 asks for HS256")]
    WeakSecret,
    /// A JWKS file that cannot be read or holds no usable key.
    #[error("--auth-jwks {path}: {error}")]
    Jwks {
        /// The path given.
        path: String,
        /// What is wrong.
        error: String,
    },
    /// The HTTP client could not be made.
    #[error("--auth-jwks: {0}")]
    Client(String),
}

/// A token refused, with its reason.
fn refused(reason: Reason, message: impl Into<String>) -> ServiceError {
    ServiceError::Credential {
        reason,
        message: message.into(),
    }
}

/// Whether `bearer` has the shape of a JWT (three dot-separated parts); player and seat tokens
/// are hex and never do.
pub fn looks_like_jwt(bearer: &str) -> bool {
    bearer.bytes().filter(|&b| b == b'.').count() == 2
}

/// The header fields read before the key is chosen.
#[derive(serde::Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("jwks", &self.settings.jwks)
            .field("hs256", &self.hs256.is_some())
            .field("issuer", &self.settings.issuer)
            .field("audience", &self.settings.audience)
            .finish_non_exhaustive()
    }
}

impl SignIn {
    /// The sign-in of `settings`: the secret checked and a JWKS file read now (a JWKS URL is
    /// read by [`SignIn::start`]; it may be down when the server starts).
    pub fn load(settings: Settings) -> Result<SignIn, SettingsError> {
        if settings.jwks.is_none() && settings.hs256_secret.is_none() {
            return Err(SettingsError::NoKeys);
        }
        if settings.issuer.is_empty() || settings.audience.is_empty() {
            return Err(SettingsError::Unchecked);
        }
        let hs256 = match &settings.hs256_secret {
            Some(secret) if secret.len() < 32 => return Err(SettingsError::WeakSecret),
            Some(secret) => Some(
                DecodingKey::from_secret(secret.as_bytes())
                    .map_err(|_| SettingsError::WeakSecret)?,
            ),
            None => None,
        };
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| SettingsError::Client(e.to_string()))?;
        let sign_in = SignIn {
            hs256,
            keys: RwLock::default(),
            fetching: tokio::sync::Mutex::new(None),
            client,
            metrics: SignInMetrics::default(),
            settings,
        };
        if let Some(path) = sign_in.jwks_file() {
            let keys = std::fs::read(path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| parse_jwks(&bytes))
                .map_err(|error| SettingsError::Jwks {
                    path: path.to_owned(),
                    error,
                })?;
            sign_in.install(keys);
        }
        Ok(sign_in)
    }

    /// The metrics to register with the server's.
    pub fn metrics(&self) -> &SignInMetrics {
        &self.metrics
    }

    /// The JWKS path, when the JWKS is a file.
    fn jwks_file(&self) -> Option<&str> {
        self.settings
            .jwks
            .as_deref()
            .filter(|s| !s.starts_with("http://") && !s.starts_with("https://"))
    }

    /// Reads the JWKS now, then every refresh period (sooner after a failure), while the
    /// sign-in is in use.
    pub fn start(self: &Arc<Self>) {
        if self.settings.jwks.is_none() {
            return;
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut first = true;
            loop {
                let Some(sign_in) = weak.upgrade() else {
                    return;
                };
                let wait = if first && sign_in.jwks_file().is_some() {
                    // Read at load.
                    sign_in.settings.refresh
                } else if sign_in.refetch(Duration::ZERO).await {
                    sign_in.settings.refresh
                } else {
                    sign_in.settings.refresh.min(RETRY_AFTER_FAILURE)
                };
                first = false;
                drop(sign_in);
                tokio::time::sleep(wait.max(Duration::from_secs(1))).await;
            }
        });
    }

    /// Reads the JWKS again unless it was read less than `min_age` ago; whether the keys in
    /// use are fresh.
    async fn refetch(&self, min_age: Duration) -> bool {
        let mut last = self.fetching.lock().await;
        if last.is_some_and(|at| at.elapsed() < min_age) {
            return false;
        }
        *last = Some(Instant::now());
        let Some(source) = self.settings.jwks.clone() else {
            return false;
        };
        match self.read(&source).await.and_then(|b| parse_jwks(&b)) {
            Ok(keys) => {
                self.install(keys);
                self.metrics
                    .refreshes
                    .get_or_create(&RefreshLabels { result: "ok" })
                    .inc();
                true
            }
            Err(error) => {
                self.metrics
                    .refreshes
                    .get_or_create(&RefreshLabels { result: "failed" })
                    .inc();
                tracing::warn!(jwks = %source, %error, "the JWKS could not be read; the last good keys stay in use");
                false
            }
        }
    }

    /// The bytes of the JWKS at `source`.
    async fn read(&self, source: &str) -> Result<Vec<u8>, String> {
        if self.jwks_file().is_some() {
            return tokio::fs::read(source).await.map_err(|e| e.to_string());
        }
        let mut response = self
            .client
            .get(source)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| e.without_url().to_string())?;
        if !response.status().is_success() {
            return Err(format!("answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| e.without_url().to_string())?
        {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(format!("larger than {MAX_JWKS_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Puts `keys` in use.
    fn install(&self, keys: Keys) {
        let count = keys.by_kid.len() + keys.unnamed.len();
        self.metrics
            .keys
            .set(i64::try_from(count).unwrap_or(i64::MAX));
        if let Ok(mut current) = self.keys.write() {
            *current = Arc::new(keys);
        }
        tracing::info!(keys = count, "sign-in keys loaded");
    }

    /// The keys in use.
    fn current(&self) -> Arc<Keys> {
        self.keys.read().map(|k| k.clone()).unwrap_or_default()
    }

    /// The identity `token` signs in, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<Identity, ServiceError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused(
                Reason::TokenMalformed,
                format!("a bearer JWT of at most {MAX_TOKEN_BYTES} bytes is taken"),
            ));
        }
        let header = read_header(token)?;
        let alg = match header.alg.as_str() {
            "HS256" => Algorithm::HS256,
            "RS256" => Algorithm::RS256,
            "RS384" => Algorithm::RS384,
            "RS512" => Algorithm::RS512,
            "PS256" => Algorithm::PS256,
            "PS384" => Algorithm::PS384,
            "PS512" => Algorithm::PS512,
            "ES256" => Algorithm::ES256,
            "ES384" => Algorithm::ES384,
            "EdDSA" => Algorithm::EdDSA,
            other => {
                return Err(refused(
                    Reason::TokenAlgorithmNotAllowed,
                    format!(
                        "the algorithm {:?} is not taken (HS256 with a shared secret; RS, PS, ES \
                         and EdDSA with the JWKS)",
                        other.chars().take(16).collect::<String>()
                    ),
                ));
            }
        };
        let key = self.key_for(alg, header.kid.as_deref()).await?;
        let mut validation = Validation::new(alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        validation.set_required_spec_claims(&["exp", "sub", "iss", "aud"]);
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
            token,
            &key,
            &validation,
        )
        .map_err(|e| why(&e))?;
        let claims = data.claims;
        let text = |name: &str| claims.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        let subject = text("sub").filter(|s| !s.is_empty() && s.len() <= 255);
        let Some(subject) = subject else {
            return Err(refused(
                Reason::TokenClaimMissing,
                "the token's sub is empty, not text, or longer than 255 bytes",
            ));
        };
        Ok(Identity {
            issuer: self.settings.issuer.clone(),
            subject,
            display_name: text(&self.settings.name_claim),
        })
    }

    /// The key `alg` and `kid` name.
    async fn key_for(
        &self,
        alg: Algorithm,
        kid: Option<&str>,
    ) -> Result<DecodingKey, ServiceError> {
        if alg == Algorithm::HS256 {
            return self.hs256.clone().ok_or_else(|| {
                refused(
                    Reason::TokenAlgorithmNotAllowed,
                    "HS256 tokens are not taken here: this server checks tokens with the public \
                     keys of its JWKS",
                )
            });
        }
        if self.settings.jwks.is_none() {
            return Err(refused(
                Reason::TokenAlgorithmNotAllowed,
                format!("{alg:?} tokens are not taken here: this server takes HS256 tokens only"),
            ));
        }
        let find = |keys: &Keys| -> Option<Arc<Key>> {
            match kid {
                Some(kid) => keys.by_kid.get(kid).cloned(),
                None => {
                    let mut fitting = keys.unnamed.iter().filter(|k| k.algorithms.contains(&alg));
                    match (fitting.next(), fitting.next()) {
                        (Some(one), None) => Some(one.clone()),
                        _ => None,
                    }
                }
            }
        };
        let mut found = find(&self.current());
        if found.is_none() {
            // A key rotated in since the last read, perhaps.
            self.refetch(UNKNOWN_KEY_REFETCH).await;
            found = find(&self.current());
        }
        let Some(key) = found else {
            if !self.current().loaded {
                return Err(ServiceError::Upstream {
                    reason: Reason::SignInUnavailable,
                    message: "the identity provider's keys (--auth-jwks) could not be read yet; \
                              try again"
                        .into(),
                });
            }
            return Err(refused(
                Reason::TokenKeyUnknown,
                match kid {
                    Some(kid) => format!(
                        "no key {:?} in the JWKS",
                        kid.chars().take(64).collect::<String>()
                    ),
                    None => "the token names no key (kid), and the JWKS has not exactly one \
                             key for its algorithm"
                        .to_owned(),
                },
            ));
        };
        if !key.algorithms.contains(&alg) {
            return Err(refused(
                Reason::TokenAlgorithmNotAllowed,
                format!(
                    "the key {:?} is not for {alg:?}",
                    kid.unwrap_or_default().chars().take(64).collect::<String>()
                ),
            ));
        }
        Ok(key.key.clone())
    }
}

/// The token's header, read without trusting it.
fn read_header(token: &str) -> Result<Header, ServiceError> {
    let malformed = |what: &str| {
        refused(
            Reason::TokenMalformed,
            format!("the bearer token is not a JWT: {what}"),
        )
    };
    let mut parts = token.split('.');
    let (Some(head), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed("it has not three parts"));
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head.trim_end_matches('='))
        .map_err(|_| malformed("its header is not base64url"))?;
    serde_json::from_slice(&bytes).map_err(|_| malformed("its header is not JSON with an alg"))
}

/// The reason for a `jsonwebtoken` refusal.
fn why(error: &jsonwebtoken::errors::Error) -> ServiceError {
    use jsonwebtoken::errors::ErrorKind as K;
    let (reason, message) = match error.kind() {
        K::ExpiredSignature => (Reason::TokenExpired, "the token expired (exp)".to_owned()),
        K::ImmatureSignature => (
            Reason::TokenNotYetValid,
            "the token is not valid yet (nbf)".to_owned(),
        ),
        K::InvalidSignature => (
            Reason::TokenSignatureInvalid,
            "the token's signature does not verify".to_owned(),
        ),
        K::InvalidAudience => (
            Reason::TokenAudienceInvalid,
            "the token's aud is not this server's audience".to_owned(),
        ),
        K::InvalidIssuer => (
            Reason::TokenIssuerInvalid,
            "the token's iss is not this server's issuer".to_owned(),
        ),
        K::InvalidAlgorithm | K::MissingAlgorithm | K::UnsupportedAlgorithm => (
            Reason::TokenAlgorithmNotAllowed,
            "the token's algorithm does not fit its key".to_owned(),
        ),
        K::MissingRequiredClaim(claim) => (
            Reason::TokenClaimMissing,
            format!(
                "the token has no {} claim",
                claim.chars().take(16).collect::<String>()
            ),
        ),
        other => (
            Reason::TokenMalformed,
            format!("the token cannot be read: {other:?}")
                .chars()
                .take(200)
                .collect(),
        ),
    };
    refused(reason, message)
}

/// The usable keys of a JWKS document; keys of other uses (`enc`) or types are skipped, and a
/// document with none is refused.
fn parse_jwks(bytes: &[u8]) -> Result<Keys, String> {
    #[derive(serde::Deserialize)]
    struct Document {
        keys: Vec<serde_json::Value>,
    }
    let document: Document =
        serde_json::from_slice(bytes).map_err(|e| format!("not a JWKS document: {e}"))?;
    let mut keys = Keys {
        loaded: true,
        ..Keys::default()
    };
    for value in document.keys {
        let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
            continue;
        };
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            continue;
        }
        let family: &[Algorithm] = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => &[
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
            ],
            AlgorithmParameters::EllipticCurve(_) => &[Algorithm::ES256, Algorithm::ES384],
            AlgorithmParameters::OctetKeyPair(_) => &[Algorithm::EdDSA],
            // A JWKS is for public keys: a shared secret published in one is not taken.
            _ => continue,
        };
        let algorithms = match jwk
            .common
            .key_algorithm
            .and_then(|a| a.to_string().parse::<Algorithm>().ok())
        {
            Some(alg) if family.contains(&alg) => vec![alg],
            Some(_) => continue,
            None => family.to_vec(),
        };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let key = Arc::new(Key { key, algorithms });
        match jwk.common.key_id {
            Some(kid) => {
                keys.by_kid.insert(kid, key);
            }
            None => keys.unnamed.push(key),
        }
    }
    if keys.by_kid.is_empty() && keys.unnamed.is_empty() {
        return Err("the JWKS has no usable signing key".to_owned());
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwts_are_told_from_hex_tokens() {
        assert!(looks_like_jwt("eyJh.eyJz.c2ln"));
        assert!(!looks_like_jwt(&"ab".repeat(32)));
        assert!(!looks_like_jwt("a.b"));
    }

    #[test]
    fn a_jwks_without_signing_keys_is_refused() {
        assert!(parse_jwks(b"garbage").is_err());
        assert!(parse_jwks(br#"{"keys": []}"#).is_err());
        // A shared secret published as a JWK is not a public key.
        assert!(parse_jwks(br#"{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}"#).is_err());
        // An unknown key type is skipped, not fatal.
        let keys = parse_jwks(
            br#"{"keys": [{"kty": "XYZ"}, {"kty": "OKP", "crv": "Ed25519", "kid": "a",
                "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#,
        );
        assert_eq!(keys.map(|k| k.by_kid.len()).ok(), Some(1));
    }

    #[test]
    fn headers_that_are_not_jwts_are_malformed() {
        for token in ["a.b", "a.b.c.d", "!!!.b.c", "e30.e30.e30"] {
            let reason = read_header(token).err().map(|e| e.reason());
            assert_eq!(reason, Some(Reason::TokenMalformed), "{token}");
        }
    }
}
