//! A client connection as the gateway reads and writes it: plain TCP, or
//! TLS over TCP when the gateway serves HTTPS (`tls_cert` / `tls_key`,
//! [`crate::server_tls`]). One type for both, as pingora's `Stream` is,
//! so that the fast path ([`crate::h1`]) and hyper's path serve either
//! without being generic over it; the plain case costs one branch per
//! read or write.
//!
//! TLS buffers what is written: bytes a write accepted may still wait in
//! the session for the socket, so a writer that is done flushes
//! (a plain socket's flush does nothing).

use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use crate::plain_or_tls::PlainOrTls;

/// A client connection: plain, or after its TLS handshake.
pub(crate) type ClientIo = PlainOrTls<TlsStream<TcpStream>>;
