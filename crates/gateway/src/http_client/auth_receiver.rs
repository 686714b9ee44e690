//! A receiver on 127.0.0.1 that keeps each request's `Authorization`
//! header (tests of the gateway's own clients: webhooks, OTLP).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderValue, header};
use http_body_util::BodyExt as _;

/// The `Authorization` header of each request received, `None` for one
/// without.
pub(crate) type Seen = Arc<Mutex<Vec<Option<HeaderValue>>>>;

/// Starts the receiver: it answers 200, or 401 to a request without
/// `Authorization` when `refuse_without`.
pub(crate) async fn start(refuse_without: bool) -> (SocketAddr, Seen) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let keep = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let keep = keep.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: http::Request<_>| {
                    let keep = keep.clone();
                    async move {
                        let auth = req.headers().get(header::AUTHORIZATION).cloned();
                        let status = if refuse_without && auth.is_none() {
                            http::StatusCode::UNAUTHORIZED
                        } else {
                            http::StatusCode::OK
                        };
                        keep.lock().unwrap().push(auth);
                        let _ = hyper::body::Incoming::collect(req.into_body()).await;
                        let mut resp = http::Response::new(http_body_util::Empty::<Bytes>::new());
                        *resp.status_mut() = status;
                        Ok::<_, hyper::Error>(resp)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, seen)
}
