//! `AsyncRead` and `AsyncWrite` for a connection that is plain TCP or TLS
//! over it: an enum with the variants `Plain(TcpStream)` and
//! `Tls(Box<TlsStream<TcpStream>>)`, each call handed to the variant's
//! stream. The client side's ([`crate::client_io::ClientIo`]) and the
//! upstream side's ([`crate::h1::pool::UpstreamIo`]) are made by it.

/// `impl AsyncRead + AsyncWrite for $io`, an enum of `Plain` and `Tls`
/// (boxed) streams, the vectored writes too.
macro_rules! impl_plain_or_tls {
    ($io:ident) => {
        impl tokio::io::AsyncRead for $io {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                match self.get_mut() {
                    $io::Plain(s) => std::pin::Pin::new(s).poll_read(cx, buf),
                    $io::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_read(cx, buf),
                }
            }
        }

        impl tokio::io::AsyncWrite for $io {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                match self.get_mut() {
                    $io::Plain(s) => std::pin::Pin::new(s).poll_write(cx, buf),
                    $io::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_write(cx, buf),
                }
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                match self.get_mut() {
                    $io::Plain(s) => std::pin::Pin::new(s).poll_write_vectored(cx, bufs),
                    $io::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
                }
            }

            fn is_write_vectored(&self) -> bool {
                match self {
                    $io::Plain(s) => s.is_write_vectored(),
                    $io::Tls(s) => s.is_write_vectored(),
                }
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                match self.get_mut() {
                    $io::Plain(s) => std::pin::Pin::new(s).poll_flush(cx),
                    $io::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_flush(cx),
                }
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                match self.get_mut() {
                    $io::Plain(s) => std::pin::Pin::new(s).poll_shutdown(cx),
                    $io::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_shutdown(cx),
                }
            }
        }
    };
}
pub(crate) use impl_plain_or_tls;
