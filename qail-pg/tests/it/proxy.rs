//! A fault-injecting TCP proxy between the driver and the real server (the integration tests'
//! and the soak run's).
//!
//! Every connection the proxy accepts is relayed to the test server, message by message in the
//! client's direction (so a fault can follow a given frontend message) and chunk by chunk in
//! the server's. The fault applies to connections already relayed as well as to new ones, so a
//! test can connect, then make the network fail under a connection in use:
//!
//! - [`Fault::Pass`]: relay everything.
//! - [`Fault::BlackHole`]: relay nothing more in either direction and keep both sockets open,
//!   as a peer that vanished (packets dropped) looks to the client; new connections are
//!   accepted and never relayed.
//! - [`Fault::ResetAfter`]: relay `bytes` more bytes in one direction, then reset both sockets.
//! - [`Fault::CutAfter`]: relay the client's messages up to and including the first one the
//!   matcher accepts, then close the client's socket without relaying a byte of the reply (the
//!   server still reads and runs what was relayed).
//! - [`Fault::Throttle`]: relay at most `bytes_per_sec` in each direction.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Which way bytes flow through the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From the driver to the server.
    ToServer,
    /// From the server to the driver.
    ToClient,
}

/// A frontend message as the proxy cut it: its tag (0 for the untagged startup messages)
/// and its body.
pub(crate) type Matcher = Arc<dyn Fn(u8, &[u8]) -> bool + Send + Sync>;

/// What the proxy does to the traffic.
#[derive(Clone)]
pub(crate) enum Fault {
    /// Relay everything.
    Pass,
    /// Relay nothing more; keep the sockets open.
    BlackHole,
    /// Relay `bytes` more bytes in `direction` (counted from when the fault is set), then
    /// reset both sockets.
    ResetAfter { direction: Direction, bytes: usize },
    /// Relay the client's messages up to the first one `matcher` accepts, then close the
    /// client's socket before any reply.
    CutAfter(Matcher),
    /// Relay at most this many bytes per second in each direction.
    Throttle { bytes_per_sec: usize },
}

impl Fault {
    /// Cut right after the first Sync (or simple Query) that follows a message whose text
    /// contains `sql` (case-insensitive), e.g. `"COMMIT"`: the server runs it, the client never
    /// hears back.
    pub(crate) fn cut_after_sync_following(sql: &str) -> Fault {
        let needle = sql.to_ascii_lowercase().into_bytes();
        let seen = Arc::new(Mutex::new(false));
        Fault::CutAfter(Arc::new(move |tag, body| {
            let mut seen = seen.lock().expect("no test panics while holding the flag");
            let contains = body
                .to_ascii_lowercase()
                .windows(needle.len())
                .any(|w| w == needle.as_slice());
            match tag {
                b'Q' if contains => true,
                b'S' if *seen => true,
                _ => {
                    if contains {
                        *seen = true;
                    }
                    false
                }
            }
        }))
    }

    /// Cut right after the first Sync that follows an Execute: the statement runs (and, outside
    /// a transaction, commits), the client never hears back.
    pub(crate) fn cut_after_executed_sync() -> Fault {
        let executed = Arc::new(Mutex::new(false));
        Fault::CutAfter(Arc::new(move |tag, _| {
            let mut executed = executed
                .lock()
                .expect("no test panics while holding the flag");
            match tag {
                b'E' => {
                    *executed = true;
                    false
                }
                b'S' => *executed,
                _ => false,
            }
        }))
    }

    /// Cut right after the `n`-th Sync (counted from 1) the client sends from now on.
    pub(crate) fn cut_after_nth_sync(n: usize) -> Fault {
        let count = Arc::new(AtomicUsize::new(0));
        Fault::CutAfter(Arc::new(move |tag, _| {
            tag == b'S' && count.fetch_add(1, Ordering::SeqCst) + 1 == n
        }))
    }
}

/// The proxy: listens on an ephemeral port of 127.0.0.1 for as long as it lives.
pub(crate) struct Proxy {
    addr: SocketAddr,
    fault: watch::Sender<Epoch>,
    accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

/// A fault and when it was set (each `set` starts a new epoch, so byte counts restart).
#[derive(Clone)]
struct Epoch {
    fault: Fault,
    number: u64,
}

impl Proxy {
    /// A proxy in front of `upstream`, relaying everything until told otherwise.
    pub(crate) async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral port is free on 127.0.0.1");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let (fault, watch) = watch::channel(Epoch {
            fault: Fault::Pass,
            number: 0,
        });
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(relay(client, upstream, watch.clone()));
            }
        });
        Proxy {
            addr,
            fault,
            accepted,
            task,
        }
    }

    /// The port to connect to.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The test server's connection string, pointed at the proxy.
    pub(crate) fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres?sslmode=disable",
            self.port()
        )
    }

    /// The address of the test server (`DATABASE_URL`, else 127.0.0.1:5432), to relay to.
    pub(crate) async fn test_server() -> SocketAddr {
        let url = std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let config =
            qail_pg::Config::parse(&url).expect("DATABASE_URL is a valid connection string");
        let host = match config.hosts.first() {
            Some(qail_pg::Host::Tcp(name)) => name.clone(),
            _ => "127.0.0.1".to_owned(),
        };
        let port = config.ports.first().copied().unwrap_or(5432);
        tokio::net::lookup_host((host.as_str(), port))
            .await
            .expect("the test server's host resolves")
            .next()
            .expect("the test server's host has an address")
    }

    /// Applies `fault` to every connection, those relayed already included.
    pub(crate) fn set(&self, fault: Fault) {
        self.fault.send_modify(|epoch| {
            epoch.fault = fault;
            epoch.number += 1;
        });
    }

    /// How many connections the proxy accepted so far.
    pub(crate) fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(client: TcpStream, upstream: SocketAddr, mut watch: watch::Receiver<Epoch>) {
    // A connection accepted while the network is black-holed is never relayed.
    while matches!(watch.borrow_and_update().fault, Fault::BlackHole) {
        if watch.changed().await.is_err() {
            return;
        }
    }
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let (stop, stopped) = watch::channel(false);
    let stop = Arc::new(stop);
    let to_server = tokio::spawn(pump_messages(
        client_read,
        server_write,
        watch.clone(),
        Stop {
            tx: Arc::clone(&stop),
            rx: stopped.clone(),
        },
    ));
    let to_client = tokio::spawn(pump_bytes(
        server_read,
        client_write,
        watch,
        Stop {
            tx: stop,
            rx: stopped,
        },
    ));
    let _ = tokio::join!(to_server, to_client);
}

/// Ends both directions of one relayed connection when either ends it.
struct Stop {
    tx: Arc<watch::Sender<bool>>,
    rx: watch::Receiver<bool>,
}

impl Stop {
    fn now(&self) {
        self.tx.send_replace(true);
    }

    async fn wait(&mut self) {
        let _ = self.rx.wait_for(|stopped| *stopped).await;
    }
}

/// What a pump does with the next bytes under the current fault.
enum Step {
    Relay,
    /// Relay at most this many bytes (what is left of the fault's budget), then reset.
    RelayThenReset(usize),
    Hold,
}

/// The per-direction state of the current fault.
struct Budget {
    epoch: u64,
    relayed: usize,
}

impl Budget {
    fn new() -> Budget {
        Budget {
            epoch: 0,
            relayed: 0,
        }
    }

    fn step(&mut self, epoch: &Epoch, direction: Direction) -> Step {
        if epoch.number != self.epoch {
            self.epoch = epoch.number;
            self.relayed = 0;
        }
        match &epoch.fault {
            Fault::BlackHole => Step::Hold,
            Fault::ResetAfter {
                direction: d,
                bytes,
            } if *d == direction => Step::RelayThenReset(bytes.saturating_sub(self.relayed)),
            _ => Step::Relay,
        }
    }
}

/// Driver → server: cut into frontend messages so `CutAfter` can follow one.
async fn pump_messages(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut watch: watch::Receiver<Epoch>,
    mut stop: Stop,
) {
    let mut budget = Budget::new();
    // The startup packet, and an SSLRequest/GSSENCRequest before it, carry no tag.
    let mut untagged = true;
    loop {
        let next = tokio::select! {
            next = read_frontend(&mut from, untagged) => next,
            () = stop.wait() => return,
        };
        let Some((tag, message)) = next else {
            let _ = to.shutdown().await;
            stop.now();
            return;
        };
        if untagged {
            // 80877103 = SSLRequest, 80877104 = GSSENCRequest: the startup packet follows.
            let code = message.get(4..8).map(|c| [c[0], c[1], c[2], c[3]]);
            untagged =
                matches!(code, Some(c) if matches!(u32::from_be_bytes(c), 80877103 | 80877104));
        }
        let epoch = watch.borrow_and_update().clone();
        match budget.step(&epoch, Direction::ToServer) {
            Step::Hold => return hold(watch, stop).await,
            Step::RelayThenReset(left) => {
                let n = left.min(message.len());
                let _ = to.write_all(&message[..n]).await;
                budget.relayed += n;
                if budget.relayed >= left {
                    return reset(&from, &to, &stop);
                }
            }
            Step::Relay => {
                if let Fault::Throttle { bytes_per_sec } = epoch.fault {
                    throttle(&mut to, &message, bytes_per_sec).await;
                } else if to.write_all(&message).await.is_err() {
                    stop.now();
                    return;
                }
                budget.relayed += message.len();
                if let Fault::CutAfter(matcher) = &epoch.fault {
                    let body = message.get(if tag == 0 { 4 } else { 5 }..).unwrap_or(&[]);
                    if matcher(tag, body) {
                        // The client hears nothing more; the server reads and runs what it
                        // got, then sees the end of the stream.
                        stop.now();
                        drop(from);
                        let _ = to.shutdown().await;
                        return;
                    }
                }
            }
        }
    }
}

/// Server → driver: relayed as it comes.
async fn pump_bytes(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut watch: watch::Receiver<Epoch>,
    mut stop: Stop,
) {
    let mut budget = Budget::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => {
                    let _ = to.shutdown().await;
                    stop.now();
                    return;
                }
                Ok(n) => n,
            },
            // The other direction ended the connection (a cut, a reset, the client's close).
            () = stop.wait() => return,
        };
        let epoch = watch.borrow_and_update().clone();
        match budget.step(&epoch, Direction::ToClient) {
            Step::Hold => return hold(watch, stop).await,
            Step::RelayThenReset(left) => {
                let n = left.min(n);
                let _ = to.write_all(&buf[..n]).await;
                budget.relayed += n;
                if budget.relayed >= left {
                    return reset(&from, &to, &stop);
                }
            }
            Step::Relay => {
                let chunk = &buf[..n];
                if let Fault::Throttle { bytes_per_sec } = epoch.fault {
                    throttle(&mut to, chunk, bytes_per_sec).await;
                } else if to.write_all(chunk).await.is_err() {
                    stop.now();
                    return;
                }
                budget.relayed += n;
            }
        }
    }
}

/// Reads one frontend message whole (header included); `None` at end of stream.
async fn read_frontend(from: &mut OwnedReadHalf, untagged: bool) -> Option<(u8, Vec<u8>)> {
    let header = if untagged { 4 } else { 5 };
    let mut message = vec![0u8; header];
    from.read_exact(&mut message).await.ok()?;
    let tag = if untagged { 0 } else { message[0] };
    let len: [u8; 4] = message[header - 4..header].try_into().ok()?;
    // The length counts itself, not the tag.
    let body = usize::try_from(u32::from_be_bytes(len))
        .ok()?
        .checked_sub(4)?;
    message.resize(header + body, 0);
    from.read_exact(&mut message[header..]).await.ok()?;
    Some((tag, message))
}

/// Relays nothing more and keeps the sockets open, silent, while the network is
/// black-holed; when the fault changes, the connection is dropped (a black-holed connection is
/// never resumed: by then its client gave up on it).
async fn hold(mut watch: watch::Receiver<Epoch>, stop: Stop) {
    let _ = watch
        .wait_for(|e| !matches!(e.fault, Fault::BlackHole))
        .await;
    stop.now();
}

/// Resets both sockets: with SO_LINGER 0, closing sends RST instead of FIN. The other
/// direction drops its halves when it sees the stop.
fn reset(from: &OwnedReadHalf, to: &OwnedWriteHalf, stop: &Stop) {
    let _ = from.as_ref().set_zero_linger();
    let _ = to.as_ref().set_zero_linger();
    stop.now();
}

/// Writes `bytes` at about `bytes_per_sec`, in tenths of a second.
async fn throttle(to: &mut OwnedWriteHalf, bytes: &[u8], bytes_per_sec: usize) {
    let slice = (bytes_per_sec / 10).max(1);
    for chunk in bytes.chunks(slice) {
        if to.write_all(chunk).await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
