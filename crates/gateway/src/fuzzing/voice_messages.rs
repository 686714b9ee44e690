//! The voice sockets' message readers (`ws::live::message`: the OpenAI
//! Realtime API, Gemini Live): what the records read of each message, and
//! the bodies made from it for the HTTP path's views.

use toolwarden_wire::{Dialect, request_view, response_view};

use crate::ws::live::message::{
    Client, Protocol, Server, generate_content, live_client, live_server, realtime_client,
    realtime_server, results_body, setup_location,
};

/// Any bytes as messages (cut at each `0xFF` byte, which text messages,
/// being UTF-8, never hold), each read by [`voice_message`] (panics on a
/// finding).
pub fn voice_messages(data: &[u8]) {
    for message in data.split(|&b| b == 0xff) {
        voice_message(message);
    }
}

/// One message read by each reader, client and server, of both
/// protocols, never a panic; a results body made from what a client
/// reader read is JSON that its dialect's request view reads; the body a
/// server reader makes of a turn is JSON, which its dialect's response
/// view reads without a panic (and reads, when the turn is Gemini Live's
/// usage alone). A Vertex AI Live first message's location, when one is
/// read, is one a host is made of ([`crate::cloud::vertex_default`]).
pub fn voice_message(payload: &[u8]) {
    if let Some(location) = setup_location(payload) {
        assert!(
            crate::cloud::vertex_default(&location).is_ok(),
            "a location read names a host: {location:?}"
        );
    }
    for protocol in [Protocol::Realtime, Protocol::GeminiLive] {
        let dialect = match protocol {
            Protocol::Realtime => Dialect::OpenAiResponses,
            Protocol::GeminiLive => Dialect::Gemini,
        };
        let client = match protocol {
            Protocol::Realtime => realtime_client(payload),
            Protocol::GeminiLive => live_client(payload),
        };
        if let Client::Results(results) = client {
            let body = results_body(protocol, &results, |_| None);
            assert!(
                serde_json::from_slice::<serde_json::Value>(&body).is_ok(),
                "a results body is JSON: {}",
                String::from_utf8_lossy(&body)
            );
            if let Err(e) = request_view(dialect, &body) {
                panic!(
                    "a results body reads as a request: {e}: {}",
                    String::from_utf8_lossy(&body)
                );
            }
        }
        let server = match protocol {
            Protocol::Realtime => realtime_server(payload),
            Protocol::GeminiLive => live_server(payload),
        };
        let body = match server {
            Server::Done { body, .. } => body,
            Server::Calls { parts, usage, .. } => generate_content(&parts, usage),
            Server::Usage(usage) => {
                let body = generate_content(&[], Some(usage));
                if let Err(e) = response_view(dialect, &body) {
                    panic!(
                        "a usage turn's body reads as a response: {e}: {}",
                        String::from_utf8_lossy(&body)
                    );
                }
                body
            }
            _ => continue,
        };
        assert!(
            serde_json::from_slice::<serde_json::Value>(&body).is_ok(),
            "a turn's body is JSON: {}",
            String::from_utf8_lossy(&body)
        );
        // The view may refuse what the provider wrote (a call whose
        // arguments are no object): the turn is then counted unparsed.
        let _ = response_view(dialect, &body);
    }
}
