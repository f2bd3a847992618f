//! TLS on the serving port (rustls, with ring): `--tls-cert` and `--tls-key` (PEM). ALPN offers
//! `h2` and `http/1.1`, so gRPC, grpc-web, Connect, the page and the probes all work over https
//! on one port. The certificate is read again from disk on SIGHUP and whenever either file
//! changes (checked every [`WATCH_EVERY`]), without a restart: new connections get the new
//! certificate and open ones go on. A file that cannot be read, holds no certificate or key, or
//! a key that is not the certificate's, is refused at start with the flag named; on a reload it
//! is logged and the certificate in use is kept.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, ServerConfig};

/// How often the files are checked for a change.
pub const WATCH_EVERY: Duration = Duration::from_secs(2);

/// Why a certificate could not be used.
#[derive(Debug, thiserror::Error)]
// The fields are the message's parts: the files and what was wrong.
#[allow(missing_docs)]
pub enum TlsError {
    /// The certificate file.
    #[error("--tls-cert {path}: {reason}")]
    Cert { path: String, reason: String },
    /// The key file.
    #[error("--tls-key {path}: {reason}")]
    Key { path: String, reason: String },
    /// The two do not go together.
    #[error("--tls-key {key} is not the key of --tls-cert {cert}: {reason}")]
    Mismatch {
        cert: String,
        key: String,
        reason: String,
    },
}

/// When and how big a file was, to notice a change.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The server's certificate and key, reloadable.
pub struct Certificates {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
    stamps: Mutex<(Stamp, Stamp)>,
}

impl std::fmt::Debug for Certificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificates")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Certificates {
    /// Reads the certificate chain at `cert` and the private key at `key`.
    pub fn load(cert: &Path, key: &Path) -> Result<Arc<Certificates>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let stamps = (stamp(cert), stamp(key));
        let current = read(cert, key, &provider)?;
        Ok(Arc::new(Certificates {
            cert: cert.to_owned(),
            key: key.to_owned(),
            provider,
            current: RwLock::new(Arc::new(current)),
            stamps: Mutex::new(stamps),
        }))
    }

    /// Reads the files again: `Ok(true)` when the certificate in use changed.
    pub fn reload(&self) -> Result<bool, TlsError> {
        let stamps = (stamp(&self.cert), stamp(&self.key));
        let fresh = read(&self.cert, &self.key, &self.provider)?;
        if let Ok(mut kept) = self.stamps.lock() {
            *kept = stamps;
        }
        let Ok(mut current) = self.current.write() else {
            return Ok(false);
        };
        let changed = current.cert != fresh.cert;
        *current = Arc::new(fresh);
        Ok(changed)
    }

    /// Whether either file changed since it was last read.
    fn changed_on_disk(&self) -> bool {
        let now = (stamp(&self.cert), stamp(&self.key));
        self.stamps.lock().map(|kept| *kept != now).unwrap_or(false)
    }

    /// The acceptor for the serving port: these certificates, ALPN `h2` and `http/1.1`.
    pub fn acceptor(self: &Arc<Self>) -> Result<TlsAcceptor, rustls::Error> {
        let mut config = ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(Resolver(self.clone())));
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }

    /// Reloads on SIGHUP and when the files change, until the process ends.
    pub fn watch(self: &Arc<Self>) {
        let certificates = self.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            let mut hangup =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
            loop {
                #[cfg(unix)]
                let asked = async {
                    match hangup.as_mut() {
                        Some(signal) => signal.recv().await.is_some(),
                        None => std::future::pending().await,
                    }
                };
                #[cfg(not(unix))]
                let asked = std::future::pending::<bool>();
                let asked = tokio::select! {
                    asked = asked => asked,
                    () = tokio::time::sleep(WATCH_EVERY) => false,
                };
                if !asked && !certificates.changed_on_disk() {
                    continue;
                }
                match certificates.reload() {
                    Ok(changed) => tracing::info!(changed, "TLS certificate read again"),
                    Err(error) => {
                        tracing::error!(%error, "TLS certificate not reloaded; the one in use is kept")
                    }
                }
            }
        });
    }
}

/// Reads and checks a certificate chain and its key.
fn read(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    let cert_error = |reason: String| TlsError::Cert {
        path: cert.display().to_string(),
        reason,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| cert_error(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_error(e.to_string()))?;
    if chain.is_empty() {
        return Err(cert_error(
            "no certificate in the file (PEM expected)".into(),
        ));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Key {
        path: key.display().to_string(),
        reason: e.to_string(),
    })?;
    CertifiedKey::from_der(chain, private, provider).map_err(|e| TlsError::Mismatch {
        cert: cert.display().to_string(),
        key: key.display().to_string(),
        reason: e.to_string(),
    })
}

/// Hands out the certificate in use.
#[derive(Debug)]
struct Resolver(Arc<Certificates>);

impl ResolvesServerCert for Resolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.current.read().ok().map(|c| c.clone())
    }
}
