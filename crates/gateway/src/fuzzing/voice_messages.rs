//! The voice sockets' message readers (`ws::live::message`: the OpenAI
//! Realtime API, Gemini Live): what the records read of each message, and
//! the bodies made from it for the HTTP path's views.

use toolwarden_wire::{Dialect, StreamParser, request_view, response_view};

use crate::ws::{
    live::message::{
        Client, Protocol, Server, generate_content, live_client, live_server, realtime_client,
        realtime_server, results_body, setup_location,
    },
    turns::as_sse,
};

/// A Realtime response's events as its turn feeds them (`items` as
/// `response.output_item.done`, then `payload` as its last event) through
/// a Responses stream parser: read without a panic.
fn realtime_stream(items: &[bytes::Bytes], payload: &[u8]) {
    let mut parser = StreamParser::new(Dialect::OpenAiResponses);
    let mut sse = Vec::new();
    for item in items {
        as_sse(Some("response.output_item.done"), item, &mut sse);
        parser.feed(&sse);
    }
    as_sse(Some("response.completed"), payload, &mut sse);
    parser.feed(&sse);
    let _ = parser.finish();
}

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
/// reader read is JSON that its dialect's request view reads; the events
/// a Realtime server message gives are read by a Responses stream parser
/// without a panic; the body a Gemini Live server message makes of a turn
/// is JSON, which its dialect's response view reads without a panic (and
/// reads, when the turn is usage alone). A Vertex AI Live first message's
/// location, when one is read, is one a host is made of
/// ([`crate::cloud::vertex_default`]).
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
            Server::Started(_) | Server::CallDone { .. } => {
                realtime_stream(&[], payload);
                continue;
            }
            Server::Done { items, .. } => {
                for item in &items {
                    assert!(
                        serde_json::from_slice::<serde_json::Value>(item).is_ok(),
                        "an item's event is JSON: {}",
                        String::from_utf8_lossy(item)
                    );
                }
                realtime_stream(&items, payload);
                continue;
            }
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
