//! [`HttpClient`]: the type of the pooled upstream client, a leaf so that
//! the credential providers (`cloud`), which `config` holds, can name it
//! without depending on [`crate::upstream`] (which reads the config).

use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::{Client, connect::HttpConnector};

/// The client every proxied request goes through.
pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;
