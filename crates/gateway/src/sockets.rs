//! The TCP settings of every connection the gateway holds, client and
//! upstream alike: no Nagle delay (a request or an event goes at once) and
//! TCP keepalive, so that a peer gone without a word (a laptop asleep, a
//! NAT that forgot the flow, a crashed host) is found and its connection
//! closed: the kernel probes a connection idle for [`KEEPALIVE_IDLE`], every
//! [`KEEPALIVE_INTERVAL`], and gives up after [`KEEPALIVE_PROBES`]
//! unanswered probes (about two minutes in all). A live peer's kernel
//! answers the probes whatever its program does, so a quiet client (an
//! agent's WebSocket between turns, a kept-alive HTTP connection) is not
//! disturbed; only dead ones are cut.

use std::time::Duration;

use socket2::{SockRef, TcpKeepalive};

/// Idle time before the first keepalive probe.
pub(crate) const KEEPALIVE_IDLE: Duration = Duration::from_secs(60);
/// Time between unanswered probes.
pub(crate) const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
/// Unanswered probes before the connection is dropped.
pub(crate) const KEEPALIVE_PROBES: u32 = 6;

/// Sets `stream`'s TCP settings (best effort: a socket that refuses them
/// still serves).
pub(crate) fn tune(stream: &tokio::net::TcpStream) {
    let _ = stream.set_nodelay(true);
    let keepalive = TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    if let Err(e) = SockRef::from(stream).set_tcp_keepalive(&keepalive) {
        tracing::debug!(error = %e, "cannot set TCP keepalive");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tuned_socket_has_nodelay_and_keepalive() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        for stream in [&client, &accepted] {
            tune(stream);
            let s = SockRef::from(stream);
            assert!(stream.nodelay().unwrap());
            assert!(s.keepalive().unwrap());
            assert_eq!(s.tcp_keepalive_time().unwrap(), KEEPALIVE_IDLE);
            assert_eq!(s.tcp_keepalive_interval().unwrap(), KEEPALIVE_INTERVAL);
            assert_eq!(s.tcp_keepalive_retries().unwrap(), KEEPALIVE_PROBES);
        }
    }
}
