//! A client connection handed from the fast path to hyper: the bytes the
//! fast path already read are read again first (hyper-util's `Rewind`).

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, ReadBuf};

/// `prefix` then `inner`.
#[derive(Debug)]
pub(crate) struct Rewind<T> {
    prefix: BytesMut,
    inner: T,
}

impl<T> Rewind<T> {
    /// Read `prefix` before `inner`.
    pub(crate) fn new(prefix: BytesMut, inner: T) -> Rewind<T> {
        Rewind { prefix, inner }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.prefix.is_empty() {
            let n = this.prefix.len().min(buf.remaining());
            buf.put_slice(&this.prefix[..n]);
            this.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

crate::write_through::impl_write_through!(Rewind<T>, inner);

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn reads_the_prefix_then_the_rest() {
        let rest: &[u8] = b" world";
        let mut r = Rewind::new(BytesMut::from(&b"hello"[..]), rest);
        let mut out = String::new();
        r.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "hello world");
    }
}
