//! TLS on the built server's port: gRPC (HTTP/2 by ALPN), Connect over HTTP/1.1 and HTTP/2 and
//! the probes with curl, all over https with a test CA; bad certificate files refused at start
//! with the flag named; and a certificate replaced on disk while a stream is open: new
//! connections get the new one, the open stream goes on.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use unoflip::proto as pb;

/// A fresh directory for one test's files.
fn scratch(label: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!(
        "unoflip-tls-{label}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl runs (apt-get install openssl)");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA named `name` (`name.pem`) and a certificate it signed for localhost and 127.0.0.1
/// (`name-server.pem`, key `name-server.key`).
fn authority(dir: &Path, name: &str) {
    let (ca, ca_key) = (format!("{name}.pem"), format!("{name}.key"));
    let (cert, key, csr) = (
        format!("{name}-server.pem"),
        format!("{name}-server.key"),
        format!("{name}-server.csr"),
    );
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &ca_key,
            "-out",
            &ca,
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        dir.join("ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-out",
            &cert,
            "-days",
            "2",
            "-extfile",
            "ext",
        ],
    );
}

/// `unoflip serve` over TLS with these files, on a free port; waits for its serving line.
async fn serve_tls(cert: &Path, key: &Path) -> (std::process::Child, u16) {
    let mut child = Command::new(crate::kit::binary())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--bot-delay-ms",
            "0",
        ])
        .arg("--tls-cert")
        .arg(cert)
        .arg("--tls-key")
        .arg(key)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = tokio::process::ChildStderr::from_std(child.stderr.take().unwrap()).unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let started = Instant::now();
    let port = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the server logs within 30 s")
            .unwrap()
            .expect("the server serves");
        if let Some((_, address)) = line.split_once("address=") {
            let address = address.split_whitespace().next().unwrap();
            break address.rsplit_once(':').unwrap().1.parse().unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(30));
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, port)
}

/// A TLS connection trusting only `ca`, asking for `alpn`.
async fn tls_connect(
    port: u16,
    ca: &Path,
    alpn: &[u8],
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
}

/// A gRPC `GetDecks` over TLS (HTTP/2 by ALPN): its grpc-status and message.
async fn grpc_get_decks(port: u16, ca: &Path) -> (String, pb::GetDecksResponse) {
    let tls = tls_connect(port, ca, b"h2").await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (client, connection) = h2::client::handshake(tls).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let request = http::Request::builder()
        .method("POST")
        .uri(format!(
            "https://localhost:{port}/unoflip.v1.UnoFlipService/GetDecks"
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    send.send_data(Bytes::from_static(&[0, 0, 0, 0, 0]), true)
        .unwrap();
    let mut body = response.await.unwrap().into_body();
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        data.extend_from_slice(&chunk.unwrap());
    }
    let trailers = body.trailers().await.unwrap().unwrap();
    let status = trailers["grpc-status"].to_str().unwrap().to_owned();
    (status, pb::GetDecksResponse::decode(&data[5..]).unwrap())
}

/// curl over https trusting `ca`: its output (`-w` appended).
fn curl(ca: &Path, args: &[&str]) -> String {
    let output = Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(ca)
        .args(args)
        .output()
        .expect("curl runs");
    assert!(
        output.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_connect_the_page_and_the_probes_are_served_over_https() {
    let dir = scratch("serve");
    authority(&dir, "ca1");
    let (mut child, port) =
        serve_tls(&dir.join("ca1-server.pem"), &dir.join("ca1-server.key")).await;
    let ca = dir.join("ca1.pem");
    let (status, decks) = grpc_get_decks(port, &ca).await;
    assert_eq!((status.as_str(), decks.flip.len()), ("0", 112));
    let base = format!("https://localhost:{port}");
    let resolve = format!("localhost:{port}:127.0.0.1");
    for version in ["--http1.1", "--http2"] {
        let out = curl(
            &ca,
            &[
                version,
                "--resolve",
                &resolve,
                "-w",
                " %{http_version}",
                &format!("{base}/unoflip.v1.UnoFlipService/GetDecks"),
            ],
        );
        assert!(out.starts_with(r#"{"flip":[{"#), "{out:.80}");
        assert!(
            out.ends_with(if version == "--http2" { " 2" } else { " 1.1" }),
            "{version}: {}",
            &out[out.len() - 10..]
        );
        assert_eq!(
            curl(
                &ca,
                &[version, "--resolve", &resolve, &format!("{base}/healthz")]
            ),
            "ok\n"
        );
        assert!(
            curl(&ca, &[version, "--resolve", &resolve, &format!("{base}/")]).contains("<html")
        );
    }
    // Plain HTTP to a TLS port is not served.
    let plain = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "5",
            &format!("http://127.0.0.1:{port}/healthz"),
        ])
        .output()
        .unwrap();
    assert!(!plain.status.success() || !String::from_utf8_lossy(&plain.stdout).contains("ok"));
    // A client that does not trust the CA is refused by its own check.
    authority(&dir, "other");
    assert!(
        tls_connect(port, &dir.join("other.pem"), b"h2")
            .await
            .is_err()
    );
    child.kill().unwrap();
    let _ = child.wait();
}

#[test]
fn missing_or_mismatched_certificate_files_are_refused_at_start_with_the_flag_named() {
    let dir = scratch("bad");
    authority(&dir, "a");
    authority(&dir, "b");
    let start = |cert: &Path, key: &Path| {
        let output = Command::new(crate::kit::binary())
            .args(["serve", "--listen", "127.0.0.1:0", "--store", "memory"])
            .arg("--tls-cert")
            .arg(cert)
            .arg("--tls-key")
            .arg(key)
            .output()
            .unwrap();
        assert!(!output.status.success(), "the server refuses to start");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = start(&dir.join("none.pem"), &dir.join("a-server.key"));
    assert!(
        stderr.contains("--tls-cert") && stderr.contains("none.pem"),
        "{stderr}"
    );
    let stderr = start(&dir.join("a-server.pem"), &dir.join("none.key"));
    assert!(
        stderr.contains("--tls-key") && stderr.contains("none.key"),
        "{stderr}"
    );
    let stderr = start(&dir.join("a-server.key"), &dir.join("a-server.key"));
    assert!(
        stderr.contains("--tls-cert") && stderr.contains("no certificate"),
        "{stderr}"
    );
    let stderr = start(&dir.join("a-server.pem"), &dir.join("b-server.key"));
    assert!(stderr.contains("is not the key of --tls-cert"), "{stderr}");
    // One without the other is refused by the flags' parser.
    let output = Command::new(crate::kit::binary())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--tls-cert",
        ])
        .arg(dir.join("a-server.pem"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tls-key"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_replaced_on_disk_serves_new_connections_while_open_streams_go_on() {
    let dir = scratch("reload");
    authority(&dir, "old");
    authority(&dir, "new");
    let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
    std::fs::copy(dir.join("old-server.pem"), &cert).unwrap();
    std::fs::copy(dir.join("old-server.key"), &key).unwrap();
    let (mut child, port) = serve_tls(&cert, &key).await;
    // A live stream over the old certificate: the firehose as NDJSON, read line by line.
    let tls = tls_connect(port, &dir.join("old.pem"), b"h2")
        .await
        .unwrap();
    let (client, connection) = h2::client::handshake(tls).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let request = http::Request::builder()
        .method("GET")
        .uri(format!(
            "https://localhost:{port}/unoflip.v1.UnoFlipService/SubscribeAll"
        ))
        .body(())
        .unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let mut firehose = response.await.unwrap().into_body();
    let first = firehose.data().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("caughtUp"));

    // The files are replaced (new key first, as an operator's tool might): within the watch
    // interval, new connections get the new certificate.
    std::fs::copy(dir.join("new-server.key"), &key).unwrap();
    std::fs::copy(dir.join("new-server.pem"), &cert).unwrap();
    let started = Instant::now();
    while tls_connect(port, &dir.join("new.pem"), b"h2")
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the new certificate is served"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        tls_connect(port, &dir.join("old.pem"), b"h2")
            .await
            .is_err()
    );
    let (status, _) = grpc_get_decks(port, &dir.join("new.pem")).await;
    assert_eq!(status, "0");

    // The stream opened before goes on: a game started now shows on it.
    let call = |method: &str, body: String, token: Option<&str>| {
        let resolve = format!("localhost:{port}:127.0.0.1");
        let url = format!("https://localhost:{port}/unoflip.v1.UnoFlipService/{method}");
        let auth = token
            .map(|t| format!("authorization: Bearer {t}"))
            .unwrap_or_default();
        let mut args = vec![
            "--fail-with-body",
            "--resolve",
            &resolve,
            "-H",
            "content-type: application/json",
            "-d",
            &body,
            &url,
        ];
        if !auth.is_empty() {
            args.extend(["-H", &auth]);
        }
        let out = curl(&dir.join("new.pem"), &args);
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let game = call(
        "CreateGame",
        r#"{"options": {"seats": 2, "botSeats": [1]}}"#.into(),
        None,
    );
    let name = game["game"]["name"].as_str().unwrap().to_owned();
    let joined = call("JoinGame", format!(r#"{{"game": "{name}"}}"#), None);
    let token = joined["seatToken"].as_str().unwrap().to_owned();
    call(
        "StartGame",
        format!(r#"{{"game": "{name}"}}"#),
        Some(&token),
    );
    let mut seen = String::new();
    while !seen.contains(&name) {
        let chunk = tokio::time::timeout(Duration::from_secs(10), firehose.data())
            .await
            .expect("the old stream goes on")
            .unwrap()
            .unwrap();
        let _ = firehose.flow_control().release_capacity(chunk.len());
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    // A broken replacement is refused and the certificate in use kept.
    std::fs::write(&cert, "not a certificate").unwrap();
    Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _) = grpc_get_decks(port, &dir.join("new.pem")).await;
    assert_eq!(status, "0");
    child.kill().unwrap();
    let _ = child.wait();
}
