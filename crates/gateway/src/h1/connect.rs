//! The fast path's TCP connect to an upstream name's addresses, as
//! hyper's client connects on the other path (hyper-util's
//! `HttpConnector`): each address of a family gets an equal share of
//! the connect budget, so that one that never answers (its packets
//! dropped: a dead node behind round-robin DNS, a firewall, a broken IPv6
//! route) leaves time for the next; and when the name has addresses of
//! both families, the other family's are tried from [`FALLBACK_DELAY`] on
//! alongside (Happy Eyeballs, RFC 8305), the first connection made wins.
//! Before, the addresses were tried one after another with no bound of
//! their own: the first that dropped packets took the whole
//! `connect_timeout_ms`, and every new connection failed although the
//! upstream answered at its next address.

use std::{io, net::SocketAddr, time::Duration};

use tokio::net::TcpStream;

/// How long the addresses of the first family have before the other
/// family's are tried alongside (hyper's default).
pub(crate) const FALLBACK_DELAY: Duration = Duration::from_millis(300);

/// A connection to one of `addrs` (in the resolver's order) within
/// `budget`, or the last address's error.
pub(crate) async fn connect_tcp(addrs: &[SocketAddr], budget: Duration) -> io::Result<TcpStream> {
    let Some(first) = addrs.first() else {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no address"));
    };
    let (preferred, fallback): (Vec<SocketAddr>, Vec<SocketAddr>) =
        addrs.iter().partition(|a| a.is_ipv6() == first.is_ipv6());
    if fallback.is_empty() {
        return each_in_turn(&preferred, budget).await;
    }
    let preferred = each_in_turn(&preferred, budget);
    let fallback = async {
        tokio::time::sleep(FALLBACK_DELAY).await;
        each_in_turn(&fallback, budget).await
    };
    tokio::pin!(preferred, fallback);
    tokio::select! {
        done = &mut preferred => match done {
            Ok(stream) => Ok(stream),
            Err(e) => fallback.await.map_err(|_| e),
        },
        done = &mut fallback => match done {
            Ok(stream) => Ok(stream),
            Err(e) => preferred.await.map_err(|_| e),
        },
    }
}

/// `addrs` one after another, each within its share of `budget`.
async fn each_in_turn(addrs: &[SocketAddr], budget: Duration) -> io::Result<TcpStream> {
    let share = budget / u32::try_from(addrs.len()).unwrap_or(u32::MAX).max(1);
    let mut last = None;
    for addr in addrs {
        match tokio::time::timeout(share, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = Some(e),
            Err(_) => {
                last = Some(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{addr} did not answer within {} ms", share.as_millis()),
                ));
            }
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// A listening socket whose accept queue is full: the kernel drops
    /// the next connection's packets, and a connect to it waits.
    async fn silent_address() -> (tokio::net::TcpListener, TcpStream, SocketAddr) {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        // Fills the queue (never accepted).
        let filler = TcpStream::connect(addr).await.unwrap();
        let waits = tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(addr));
        assert!(waits.await.is_err(), "a connect to a full queue waits");
        (listener, filler, addr)
    }

    /// An address that drops the connection's packets takes its share of
    /// the budget, not all of it: the next address is reached.
    #[tokio::test]
    async fn an_address_that_never_answers_leaves_time_for_the_next() {
        let (_held, _filler, silent) = silent_address().await;
        let good = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let started = Instant::now();
        let budget = Duration::from_secs(2);
        let stream = tokio::time::timeout(
            budget + Duration::from_millis(500),
            connect_tcp(&[silent, good.local_addr().unwrap()], budget),
        )
        .await
        .expect("within the budget")
        .expect("the second address");
        assert_eq!(stream.peer_addr().unwrap(), good.local_addr().unwrap());
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(900), "{took:?}");
        assert!(took < Duration::from_millis(1800), "{took:?}");
    }

    /// A name with addresses of both families whose first family never
    /// answers is reached at the other after [`FALLBACK_DELAY`], not at
    /// the end of the first family's share. (Where the machine has no
    /// IPv6 loopback, there is nothing to try.)
    #[tokio::test]
    async fn the_other_family_is_tried_alongside_after_the_fallback_delay() {
        let Ok(socket) = tokio::net::TcpSocket::new_v6() else {
            return;
        };
        if socket.bind("[::1]:0".parse().unwrap()).is_err() {
            return;
        }
        let listener = socket.listen(0).unwrap();
        let silent = listener.local_addr().unwrap();
        let _filler = TcpStream::connect(silent).await.unwrap();
        let good = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let started = Instant::now();
        let addrs = [silent, good.local_addr().unwrap()];
        let connecting = connect_tcp(&addrs, Duration::from_secs(10));
        let stream = tokio::time::timeout(Duration::from_secs(5), connecting)
            .await
            .expect("long before the first family's share ends")
            .expect("the IPv4 address");
        assert_eq!(stream.peer_addr().unwrap(), good.local_addr().unwrap());
        let took = started.elapsed();
        assert!(took >= FALLBACK_DELAY, "{took:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    /// Every address silent: the error says which and how long.
    #[tokio::test]
    async fn silent_addresses_fail_within_the_budget_naming_the_last() {
        let (_held, _filler, silent) = silent_address().await;
        let err = connect_tcp(&[silent], Duration::from_millis(300))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(err.to_string().contains(&silent.to_string()), "{err}");
        let err = connect_tcp(&[], Duration::from_millis(300))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
