//! The response body type every route returns: a whole buffer (gateway
//! responses, errors), a proxied upstream body with its tee, or an admin
//! (axum) body.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

pub(crate) mod tee;

use http::{HeaderValue, Response, header};

use crate::stream_stall::Watched;
use crate::{
    errors::{ProxyError, error_body},
    routes::Provider,
};
use tee::TeeBody;

/// Boxed error for bodies.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A response body.
#[derive(Debug)]
pub(crate) enum GatewayBody {
    /// A complete buffer, sent once.
    Full(Option<Bytes>),
    /// A proxied upstream body, observed as it passes.
    Tee(Box<TeeBody>),
    /// A body from the admin router.
    Admin(axum::body::Body),
    /// Any of those on an HTTP/2 stream, under its stall limit.
    Http2(Box<Watched<GatewayBody>>),
}

impl GatewayBody {
    /// A complete body.
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        GatewayBody::Full((!bytes.is_empty()).then_some(bytes))
    }

    /// Made by an HTTP/2 stream's service: watched for the client's
    /// reading ([`crate::stream_stall`]); otherwise unchanged.
    pub(crate) fn on_stream(self) -> Self {
        match crate::stream_stall::current() {
            Some(progress) => GatewayBody::Http2(Box::new(Watched::new(self, progress))),
            None => self,
        }
    }
}

impl Body for GatewayBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            GatewayBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            GatewayBody::Tee(tee) => Pin::new(tee.as_mut()).poll_frame(cx),
            GatewayBody::Admin(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            GatewayBody::Http2(body) => Pin::new(body.as_mut()).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            GatewayBody::Full(bytes) => bytes.is_none(),
            GatewayBody::Tee(tee) => tee.is_end_stream(),
            GatewayBody::Admin(body) => body.is_end_stream(),
            GatewayBody::Http2(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            GatewayBody::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            GatewayBody::Tee(tee) => tee.size_hint(),
            GatewayBody::Admin(body) => body.size_hint(),
            GatewayBody::Http2(body) => body.size_hint(),
        }
    }
}

/// The error as a complete response in `provider`'s envelope.
pub(crate) fn error_response(provider: Provider, err: &ProxyError) -> Response<GatewayBody> {
    let (status, body) = error_body(provider, err);
    let mut response = Response::new(GatewayBody::full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(seconds) = err.retry_after() {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static(seconds));
    }
    if provider == Provider::Bedrock {
        // AWS clients name the error by this header (botocore's code,
        // the SDKs' exception class); without it they see a bare status.
        response.headers_mut().insert(
            "x-amzn-errortype",
            HeaderValue::from_static(crate::errors::aws_error_type(status)),
        );
    }
    response
}
