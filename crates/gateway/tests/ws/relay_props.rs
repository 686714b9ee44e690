//! What the gateway forwards of a client's messages is what the client
//! sent, byte for byte, whatever the text and however the client cut it
//! into fragments (a property test through real sockets).

use std::time::Duration;

use proptest::{prelude::*, test_runner::TestRunner};

use super::client::Raw;
use crate::e2e::support::Harness;

/// Text messages that are not turns: any text (multi-byte characters
/// included, so that a cut can fall inside one), JSON that is not an object
/// or names another `type`, an object cut short.
fn message() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}",
        "[ \\r\\n{}\\[\\]\":,a-z\u{e9}\u{1F600}]{0,40}",
        "[a-z.]{1,12}".prop_map(|t| format!(r#"{{"type":"{t}","response_id":"r"}}"#)),
        "[a-z.]{1,12}".prop_map(|t| format!(r#"{{"type":"response.{t}","x":"#)),
    ]
    .prop_filter("not a turn", |m| !m.contains("response.create"))
}

/// Messages, each with the offsets at which it is cut into fragments.
fn messages() -> impl Strategy<Value = Vec<(String, Vec<usize>)>> {
    prop::collection::vec(
        (message(), prop::collection::vec(any::<usize>(), 0..4)),
        1..4,
    )
}

/// `message` as frames cut at `cuts` (taken modulo its length): a text
/// frame, continuations, the last with FIN.
async fn send_fragmented(raw: &mut Raw, message: &[u8], cuts: &[usize]) {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| c % (message.len() + 1))
        .filter(|&c| c > 0 && c < message.len())
        .collect();
    at.sort_unstable();
    at.dedup();
    at.push(message.len());
    let mut from = 0;
    for (i, &cut) in at.iter().enumerate() {
        let opcode = if i == 0 { 0x01 } else { 0x00 };
        let fin = if cut == message.len() { 0x80 } else { 0 };
        raw.frame(opcode | fin, &message[from..cut]).await;
        from = cut;
    }
}

#[test]
fn client_messages_are_forwarded_as_sent_however_fragmented() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let h = rt.block_on(Harness::start());
    let mut runner = TestRunner::new(ProptestConfig::with_cases(24));
    runner
        .run(&messages(), |messages| {
            rt.block_on(async {
                h.mock.take_received();
                let mut raw = Raw::connect(&h.gw(), &[]).await;
                for (m, cuts) in &messages {
                    send_fragmented(&mut raw, m.as_bytes(), cuts).await;
                }
                let mut got = Vec::new();
                for _ in 0..200 {
                    got = h.mock.received();
                    if got.len() >= messages.len() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                let got: Vec<&[u8]> = got.iter().map(|r| r.body.as_ref()).collect();
                let sent: Vec<&[u8]> = messages.iter().map(|(m, _)| m.as_bytes()).collect();
                prop_assert_eq!(got, sent);
                Ok(())
            })
        })
        .unwrap();
}
