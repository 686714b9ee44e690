//! A connection that is plain TCP or TLS over it, read and written as one
//! type: [`PlainOrTls`], with each call handed to the variant's stream.
//! The client side's ([`crate::client_io::ClientIo`]) and the upstream
//! side's ([`crate::h1::pool::UpstreamIo`]) are this type over the server's
//! and the client's TLS stream.

use std::{
    io::IoSlice,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
};

/// Plain TCP, or TLS over it (`T`: tokio-rustls' server or client stream).
#[derive(Debug)]
pub(crate) enum PlainOrTls<T> {
    Plain(TcpStream),
    /// Boxed: a TLS session is some hundreds of bytes, and most
    /// connections are plain.
    Tls(Box<T>),
}

impl<T: AsyncRead + Unpin> AsyncRead for PlainOrTls<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_read(cx, buf),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for PlainOrTls<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_write(cx, buf),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            PlainOrTls::Plain(s) => s.is_write_vectored(),
            PlainOrTls::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_flush(cx),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_shutdown(cx),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
