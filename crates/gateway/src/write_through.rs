//! `AsyncWrite` handed through unchanged to the stream a wrapper holds: the
//! wrappers that change only how a connection is read ([`crate::h1`]'s
//! `Rewind`, [`crate::ws`]'s `Metered`) write straight to it.

/// `impl AsyncWrite for $wrapper<$io>`, every call passed to
/// `self.$field` (of type `$io: AsyncWrite + Unpin`), the vectored writes
/// too.
macro_rules! impl_write_through {
    ($wrapper:ident<$io:ident>, $field:ident) => {
        impl<$io: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for $wrapper<$io> {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.get_mut().$field).poll_write(cx, buf)
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.get_mut().$field).poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                self.$field.is_write_vectored()
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.get_mut().$field).poll_flush(cx)
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.get_mut().$field).poll_shutdown(cx)
            }
        }
    };
}
pub(crate) use impl_write_through;

#[cfg(test)]
mod tests {
    use std::io::IoSlice;

    use tokio::io::{AsyncWrite, AsyncWriteExt};

    struct Wrapper<W> {
        inner: W,
    }
    impl_write_through!(Wrapper<W>, inner);

    #[tokio::test]
    async fn every_write_reaches_the_wrapped_stream() {
        let mut w = Wrapper { inner: Vec::new() };
        assert_eq!(w.is_write_vectored(), w.inner.is_write_vectored());
        w.write_all(b"head ").await.unwrap();
        let parts = [IoSlice::new(b"and "), IoSlice::new(b"body")];
        let n = w.write_vectored(&parts).await.unwrap();
        assert_eq!(n, 8, "a Vec takes every slice at once");
        w.flush().await.unwrap();
        w.shutdown().await.unwrap();
        assert_eq!(w.inner, b"head and body");
    }
}
