use super::*;

/// Decoded messages: event type and payload.
type Decoded = Vec<(Option<String>, Vec<u8>)>;

/// Every message of `bytes` fed in one push, then the end.
fn decode_all(bytes: &[u8]) -> (Decoded, Vec<EventStreamErrorKind>) {
    let mut d = Decoder::new();
    d.push(bytes);
    let mut ok = Vec::new();
    let mut errs = Vec::new();
    while let Some(m) = d.next_message() {
        match m {
            Ok(m) => ok.push((m.event_type().map(str::to_owned), m.payload().to_vec())),
            Err(e) => errs.push(e.kind()),
        }
    }
    if let Err(e) = d.finish() {
        errs.push(e.kind());
    }
    (ok, errs)
}

#[test]
fn a_known_aws_frame_decodes() {
    // Lengths and the prelude CRC where AWS puts them (the reference
    // vector below checks the CRCs against AWS's own bytes).
    let frame = encode_event("messageStop", br#"{"stopReason":"end_turn"}"#);
    // Total length and the prelude CRC as AWS computes them.
    assert_eq!(
        u32::from_be_bytes(frame[0..4].try_into().unwrap()) as usize,
        frame.len()
    );
    assert_eq!(
        u32::from_be_bytes(frame[8..12].try_into().unwrap()),
        crc32fast::hash(&frame[..8])
    );
    let (ok, errs) = decode_all(&frame);
    assert!(errs.is_empty());
    assert_eq!(ok[0].0.as_deref(), Some("messageStop"));
    assert_eq!(ok[0].1, br#"{"stopReason":"end_turn"}"#);
}

#[test]
fn aws_reference_vector_int32_header() {
    // From the AWS SDKs' shared event-stream test suite
    // (`encoded/positive/int32_header`): header "event-type" = int32 0x0000A00C,
    // payload {'foo':'bar'}.
    let hex = "0000002d0000001041c424b80a6576656e742d747970650400\
               00a00c7b27666f6f273a27626172277d36f480a0";
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let mut d = Decoder::new();
    d.push(&bytes);
    let m = d.next_message().unwrap().unwrap();
    assert_eq!(
        m.headers().get("event-type"),
        Some(HeaderValue::Int(0xa00c))
    );
    assert_eq!(m.payload(), b"{'foo':'bar'}");
    // Our encoder writes the same bytes.
    let again = encode(
        &[("event-type", HeaderValue::Int(0xa00c))],
        b"{'foo':'bar'}",
    );
    assert_eq!(again, bytes);
}

#[test]
fn every_header_type_round_trips() {
    let uuid = [7u8; 16];
    let headers = [
        ("t", HeaderValue::Bool(true)),
        ("f", HeaderValue::Bool(false)),
        ("b", HeaderValue::Byte(-3)),
        ("s", HeaderValue::Short(-300)),
        ("i", HeaderValue::Int(70000)),
        ("l", HeaderValue::Long(-5_000_000_000)),
        ("bytes", HeaderValue::Bytes(b"\x00\xff")),
        ("str", HeaderValue::String("héllo")),
        ("ts", HeaderValue::Timestamp(1_700_000_000_000)),
        ("u", HeaderValue::Uuid(uuid)),
    ];
    let frame = encode(&headers, b"p");
    let mut d = Decoder::new();
    d.push(&frame);
    let m = d.next_message().unwrap().unwrap();
    let got: Vec<_> = m.headers().iter().collect();
    assert_eq!(got, headers.to_vec());
    assert_eq!(m.headers().get_str("str"), Some("héllo"));
    assert_eq!(m.headers().get("missing"), None);
}

#[test]
fn accessors_read_the_standard_headers() {
    let e = encode_exception("throttlingException", br#"{"message":"slow down"}"#);
    let mut d = Decoder::new();
    d.push(&e);
    let m = d.next_message().unwrap().unwrap();
    assert_eq!(m.message_type(), Some("exception"));
    assert_eq!(m.exception_type(), Some("throttlingException"));
    assert_eq!(m.content_type(), Some("application/json"));
    assert_eq!(m.event_type(), None);
    let err = encode(
        &[
            (":message-type", HeaderValue::String("error")),
            (":error-code", HeaderValue::String("InternalError")),
            (":error-message", HeaderValue::String("boom")),
        ],
        b"",
    );
    d.push(&err);
    let m = d.next_message().unwrap().unwrap();
    assert_eq!(
        (m.error_code(), m.error_message()),
        (Some("InternalError"), Some("boom"))
    );
}

#[test]
fn byte_at_a_time_gives_the_same_messages() {
    let mut stream = encode_event("a", b"1");
    stream.extend(encode_event("b", b"22"));
    stream.extend(encode_event("c", b""));
    let mut d = Decoder::new();
    let mut seen = Vec::new();
    for b in &stream {
        d.push(std::slice::from_ref(b));
        while let Some(m) = d.next_message() {
            seen.push(m.unwrap().event_type().unwrap().to_owned());
        }
    }
    assert_eq!(seen, ["a", "b", "c"]);
    assert_eq!(d.buffered(), 0);
    assert!(d.finish().is_ok());
}

#[test]
fn errors_have_their_kinds() {
    let good = encode_event("x", b"{}");
    // Prelude CRC.
    let mut bad = good.clone();
    bad[9] ^= 1;
    assert_eq!(decode_all(&bad).1, [EventStreamErrorKind::PreludeCrc]);
    // Message CRC: skipped, the next message is still read.
    let mut bad = good.clone();
    let last = bad.len() - 5;
    bad[last] ^= 1;
    bad.extend_from_slice(&good);
    let (ok, errs) = decode_all(&bad);
    assert_eq!(errs, [EventStreamErrorKind::MessageCrc]);
    assert_eq!(ok.len(), 1);
    // Too short: total length 8.
    let mut short = Vec::new();
    short.extend_from_slice(&8u32.to_be_bytes());
    short.extend_from_slice(&0u32.to_be_bytes());
    short.extend_from_slice(&crc32fast::hash(&short).to_be_bytes());
    assert_eq!(decode_all(&short).1, [EventStreamErrorKind::TooShort]);
    // Too long for a small limit.
    let mut d = Decoder::with_max_message_len(20);
    d.push(&good);
    assert_eq!(
        d.next_message().unwrap().unwrap_err().kind(),
        EventStreamErrorKind::TooLong
    );
    assert!(d.next_message().is_none() && d.is_broken());
    // Unknown header type 42.
    let bad = encode(&[], b"");
    let mut with_header = Vec::new();
    let headers = [1u8, b'h', 42];
    let total = 16 + headers.len();
    with_header.extend_from_slice(&(total as u32).to_be_bytes());
    with_header.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    with_header.extend_from_slice(&crc32fast::hash(&with_header.clone()).to_be_bytes());
    with_header.extend_from_slice(&headers);
    with_header.extend_from_slice(&crc32fast::hash(&with_header.clone()).to_be_bytes());
    assert_eq!(
        decode_all(&with_header).1,
        [EventStreamErrorKind::BadHeaderType]
    );
    // Truncated at the end.
    assert_eq!(
        decode_all(&good[..good.len() - 1]).1,
        [EventStreamErrorKind::Truncated]
    );
    assert!(decode_all(&bad).1.is_empty());
}

#[test]
fn invoke_chunks_carry_base64_event_json() {
    let event = br#"{"type":"message_stop"}"#;
    let frame = encode_invoke_chunk(event);
    let mut d = Decoder::new();
    d.push(&frame);
    let m = d.next_message().unwrap().unwrap();
    assert_eq!(m.event_type(), Some("chunk"));
    assert_eq!(invoke_chunk(m.payload()).as_deref(), Some(&event[..]));
    assert_eq!(invoke_chunk(b"{\"bytes\":\"!!\"}"), None);
    assert_eq!(invoke_chunk(b"not json"), None);
}

#[test]
fn feed_after_push_reads_what_push_left_in_the_buffer() {
    let a = encode_event("a", b"1");
    let b = encode_event("b", b"22");
    let c = encode_event("c", b"333");
    let mut d = Decoder::new();
    // Two whole messages and half of the third pushed, nothing read yet.
    let mut pushed = a.clone();
    pushed.extend_from_slice(&b);
    pushed.extend_from_slice(&c[..5]);
    d.push(&pushed);
    let mut seen = Vec::new();
    d.feed(&c[5..], &mut |m| {
        seen.push(m.unwrap().event_type().unwrap().to_owned());
    });
    assert_eq!(seen, ["a", "b", "c"]);
    assert_eq!(d.buffered(), 0);
    assert!(d.finish().is_ok());
}
