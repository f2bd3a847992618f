//! Client connections: accepted with limits, counted while open.
//!
//! [`accept`] takes connections off the listener and hands them to tonic. Over `--max-connections`
//! in all, or over `--max-connections-per-address` from one address, a new connection is refused at
//! once (counted in `unoflip_connections_refused_total`): it gets the server's HTTP/2 preface and a
//! GOAWAY with `ENHANCE_YOUR_CALM` and the reason `TOO_MANY_CONNECTIONS` as its debug data, then
//! is closed; the connections already open go on. An
//! accept error (at the open-file limit, say) is logged and waited out rather than retried in a
//! spin. Each [`Counted`] connection must send its first `HANDSHAKE_BYTES` bytes (an HTTP/2
//! preface, or an HTTP/1 request line) within the handshake timeout, or it is closed: idle and
//! half-sent connections cannot pile up. It tells tonic its peer address, so per-address limits
//! further in still see who it is.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Sleep;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use crate::service::metrics::{Metrics, Open};

/// Bytes a connection must send before the handshake timeout: the HTTP/2 preface's length.
const HANDSHAKE_BYTES: usize = 24;

/// Refused connections that may be answered at once; more are closed with no answer.
const MAX_REFUSING: usize = 256;

/// How long a refused connection is given to read its answer.
const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// The answer to a connection over the limits: the server's HTTP/2 preface (an empty SETTINGS
/// frame), then GOAWAY (no stream processed, `ENHANCE_YOUR_CALM`) with the reason as debug data.
fn refusal() -> Vec<u8> {
    let debug: &[u8] = b"TOO_MANY_CONNECTIONS: as many connections are open as the server \
        allows (in all, or from this address); try again later";
    let mut out = vec![0, 0, 0, 0x4, 0, 0, 0, 0, 0];
    let len = (8 + debug.len()) as u32;
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.extend_from_slice(&[0x7, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&0xbu32.to_be_bytes());
    out.extend_from_slice(debug);
    out
}

/// Answers a refused connection with [`refusal`] and closes it, waiting a moment for the peer to
/// read it (closing with its preface unread would reset the connection and lose the answer).
fn refuse(socket: TcpStream, refusing: &Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::Ordering;
    if refusing.fetch_add(1, Ordering::Relaxed) >= MAX_REFUSING {
        refusing.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    let refusing = refusing.clone();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut socket = socket;
        let _ = tokio::time::timeout(REFUSAL_LINGER, async {
            socket.write_all(&refusal()).await?;
            socket.shutdown().await?;
            let mut sink = [0u8; 1024];
            while socket.read(&mut sink).await? > 0 {}
            Ok::<_, io::Error>(())
        })
        .await;
        refusing.fetch_sub(1, Ordering::Relaxed);
    });
}

/// How long to wait after a failed accept before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The limits on connections.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Open connections in all.
    pub max_total: usize,
    /// Open connections from one client address.
    pub max_per_address: usize,
    /// How long a new connection may take to send its first bytes.
    pub handshake_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_total: 10_000,
            max_per_address: 512,
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

/// Open connections per address.
#[derive(Default)]
struct Table {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// Accepts connections from `listener` within `limits`, as a stream for tonic. Stops when tonic
/// stops taking them.
pub fn accept(
    listener: TcpListener,
    limits: ConnectionLimits,
    metrics: Arc<Metrics>,
) -> ReceiverStream<io::Result<Counted>> {
    let (tx, rx) = mpsc::channel(64);
    let table = Arc::new(Mutex::new(Table::default()));
    let refusing = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = tx.closed() => return,
            };
            let (socket, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed; waiting before the next");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            };
            let Some(slot) = Slot::take(&table, peer.ip(), limits) else {
                metrics.connections_refused.inc();
                tracing::debug!(%peer, "connection refused: too many open");
                refuse(socket, &refusing);
                continue;
            };
            // Small messages go out at once: without TCP_NODELAY, Nagle's algorithm and
            // delayed ACKs hold each event back by up to 40 ms.
            let _ = socket.set_nodelay(true);
            let counted = Counted {
                stream: socket,
                handshake: Some(Box::pin(tokio::time::sleep(limits.handshake_timeout))),
                received: 0,
                _slot: slot,
                _open: Open::new(&metrics.connections),
            };
            if tx.send(Ok(counted)).await.is_err() {
                return;
            }
        }
    });
    ReceiverStream::new(rx)
}

/// A connection's place in the table, given back when it closes.
struct Slot {
    table: Arc<Mutex<Table>>,
    address: IpAddr,
}

impl Slot {
    fn take(table: &Arc<Mutex<Table>>, address: IpAddr, limits: ConnectionLimits) -> Option<Slot> {
        let mut t = table.lock().ok()?;
        let here = t.by_address.get(&address).copied().unwrap_or(0);
        if t.total >= limits.max_total || here >= limits.max_per_address {
            return None;
        }
        t.total += 1;
        *t.by_address.entry(address).or_default() += 1;
        Some(Slot {
            table: table.clone(),
            address,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut t) = self.table.lock() {
            t.total = t.total.saturating_sub(1);
            if let Some(n) = t.by_address.get_mut(&self.address) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    t.by_address.remove(&self.address);
                }
            }
        }
    }
}

/// See the module's documentation.
pub struct Counted {
    stream: TcpStream,
    /// Runs until the connection has sent its first bytes.
    handshake: Option<Pin<Box<Sleep>>>,
    received: usize,
    _slot: Slot,
    _open: Open,
}

impl Connected for Counted {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if self.handshake.is_none() {
            return read;
        }
        if let Poll::Ready(Ok(())) = read {
            self.received += buf.filled().len() - before;
            if self.received >= HANDSHAKE_BYTES || buf.filled().len() == before {
                self.handshake = None;
            }
            return read;
        }
        match self.handshake.as_mut().map(|t| t.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the connection sent too little before the handshake timeout",
            ))),
            _ => read,
        }
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// A connection as tonic serves it: plain, or over TLS.
pub enum Conn {
    /// Plain TCP.
    Plain(Counted),
    /// TLS over TCP.
    Secure(Box<tokio_rustls::server::TlsStream<Counted>>),
}

/// Plain connections as [`Conn`]s.
pub fn plain(
    incoming: ReceiverStream<io::Result<Counted>>,
) -> impl tokio_stream::Stream<Item = io::Result<Conn>> {
    use tokio_stream::StreamExt;
    incoming.map(|accepted| accepted.map(Conn::Plain))
}

/// Connections over TLS: each handshake runs on its own (a slow one holds no other back) within
/// `timeout`; a failed one is dropped.
pub fn secure(
    mut incoming: ReceiverStream<io::Result<Counted>>,
    acceptor: tokio_rustls::TlsAcceptor,
    timeout: Duration,
) -> ReceiverStream<io::Result<Conn>> {
    use tokio_stream::StreamExt;
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = incoming.next() => accepted,
                () = tx.closed() => return,
            };
            let Some(accepted) = accepted else { return };
            let counted = match accepted {
                Ok(counted) => counted,
                Err(error) => {
                    if tx.send(Err(error)).await.is_err() {
                        return;
                    }
                    continue;
                }
            };
            let acceptor = acceptor.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                match tokio::time::timeout(timeout, acceptor.accept(counted)).await {
                    Ok(Ok(stream)) => {
                        let _ = tx.send(Ok(Conn::Secure(Box::new(stream)))).await;
                    }
                    Ok(Err(error)) => tracing::debug!(%error, "TLS handshake failed"),
                    Err(_) => tracing::debug!("TLS handshake timed out"),
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

impl Connected for Conn {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        match self {
            Conn::Plain(counted) => counted.connect_info(),
            Conn::Secure(stream) => stream.get_ref().0.connect_info(),
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(counted) => Pin::new(counted).poll_read(cx, buf),
            Conn::Secure(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(counted) => Pin::new(counted).poll_write(cx, buf),
            Conn::Secure(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(counted) => Pin::new(counted).poll_flush(cx),
            Conn::Secure(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(counted) => Pin::new(counted).poll_shutdown(cx),
            Conn::Secure(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(counted) => Pin::new(counted).poll_write_vectored(cx, bufs),
            Conn::Secure(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(counted) => counted.is_write_vectored(),
            Conn::Secure(stream) => stream.is_write_vectored(),
        }
    }
}
