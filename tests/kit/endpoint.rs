//! A local HTTP/1.1 endpoint the server under test calls: a JWKS it reads, a webhook receiver it
//! posts to. The test sets how it answers (a body, an error status, garbage, slowness, silence)
//! and reads back what it was sent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How the endpoint answers.
#[derive(Clone, Debug)]
pub enum Answer {
    /// 200 with this body (JSON).
    Ok(String),
    /// This status with an empty body.
    Status(u16),
    /// A redirect (307) to this location.
    Redirect(String),
    /// Waits this long, then answers 200 with the body.
    Slow(Duration, String),
    /// Closes the connection without answering.
    Hang,
}

/// A request the endpoint was sent.
#[derive(Clone, Debug)]
pub struct Received {
    /// `GET`, `POST`.
    pub method: String,
    /// The path.
    pub path: String,
    /// Header lines, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// The status it was answered (0: none).
    pub answered: u16,
}

impl Received {
    /// The first header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running endpoint; it stops when dropped.
pub struct Endpoint {
    /// Its port on 127.0.0.1.
    pub port: u16,
    answer: Arc<Mutex<Answer>>,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Endpoint {
    /// An endpoint answering `answer` to every request, until told otherwise.
    pub async fn start(answer: Answer) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        Endpoint::serve(listener, port, answer, Arc::default())
    }

    /// The same on `port` (a receiver coming back where it was), keeping `received`.
    pub async fn start_on(
        port: u16,
        answer: Answer,
        received: Arc<Mutex<Vec<Received>>>,
    ) -> Endpoint {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        Endpoint::serve(listener, port, answer, received)
    }

    fn serve(
        listener: TcpListener,
        port: u16,
        answer: Answer,
        received: Arc<Mutex<Vec<Received>>>,
    ) -> Endpoint {
        let answer = Arc::new(Mutex::new(answer));
        let (shared_answer, log) = (answer.clone(), received.clone());
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (answer, log) = (shared_answer.clone(), log.clone());
                tokio::spawn(async move {
                    let _ = handle(socket, answer, log).await;
                });
            }
        });
        Endpoint {
            port,
            answer,
            received,
            task,
        }
    }

    /// `http://127.0.0.1:{port}{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Answers `answer` from now on.
    pub fn set(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// The shared log of requests (to keep across a restart of the endpoint).
    pub fn log(&self) -> Arc<Mutex<Vec<Received>>> {
        self.received.clone()
    }
}

async fn handle(
    mut socket: tokio::net::TcpStream,
    answer: Arc<Mutex<Answer>>,
    log: Arc<Mutex<Vec<Received>>>,
) -> std::io::Result<()> {
    loop {
        let mut buffer = Vec::new();
        let head_end = loop {
            let mut chunk = [0u8; 4096];
            let n = socket.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buffer.extend_from_slice(&chunk[..n]);
            if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or_default().split_whitespace();
        let method = first.next().unwrap_or_default().to_owned();
        let path = first.next().unwrap_or_default().to_owned();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = buffer[head_end + 4..].to_vec();
        while body.len() < length {
            let mut chunk = [0u8; 4096];
            let n = socket.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            body.extend_from_slice(&chunk[..n]);
        }
        let now = answer.lock().unwrap().clone();
        let (status, extra, text) = match now {
            Answer::Ok(text) => (200, String::new(), text),
            Answer::Status(code) => (code, String::new(), String::new()),
            Answer::Redirect(to) => (307, format!("Location: {to}\r\n"), String::new()),
            Answer::Slow(wait, text) => {
                log.lock().unwrap().push(Received {
                    method,
                    path,
                    headers,
                    body,
                    answered: 200,
                });
                tokio::time::sleep(wait).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
                    text.len()
                );
                socket.write_all(response.as_bytes()).await?;
                continue;
            }
            Answer::Hang => {
                log.lock().unwrap().push(Received {
                    method,
                    path,
                    headers,
                    body,
                    answered: 0,
                });
                return Ok(());
            }
        };
        log.lock().unwrap().push(Received {
            method,
            path,
            headers,
            body,
            answered: status,
        });
        let response = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n{text}",
            text.len()
        );
        socket.write_all(response.as_bytes()).await?;
    }
}
