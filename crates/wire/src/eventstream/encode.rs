//! Writing event-stream messages.

use super::header::HeaderValue;

/// One message with these headers and payload.
pub fn encode(headers: &[(&str, HeaderValue<'_>)], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(&mut out, headers, payload);
    out
}

/// Append one message to `out`. Header names longer than 255 bytes and
/// values longer than 65535 are cut to fit.
pub fn encode_into(out: &mut Vec<u8>, headers: &[(&str, HeaderValue<'_>)], payload: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&[0; 12]);
    for (name, value) in headers {
        let name = &name.as_bytes()[..name.len().min(255)];
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        value.write(out);
    }
    let headers_len = out.len() - start - 12;
    out.extend_from_slice(payload);
    let total = out.len() - start + 4;
    out[start..start + 4].copy_from_slice(&(total as u32).to_be_bytes());
    out[start + 4..start + 8].copy_from_slice(&(headers_len as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out[start..start + 8]);
    out[start + 8..start + 12].copy_from_slice(&prelude_crc.to_be_bytes());
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// An `event` message of type `event_type` with a JSON payload, as Bedrock
/// sends them.
pub fn encode_event(event_type: &str, payload: &[u8]) -> Vec<u8> {
    encode(
        &[
            (":event-type", HeaderValue::String(event_type)),
            (":content-type", HeaderValue::String("application/json")),
            (":message-type", HeaderValue::String("event")),
        ],
        payload,
    )
}

/// An `exception` message (`throttlingException`, …) with a JSON payload
/// such as `{"message":"…"}`.
pub fn encode_exception(exception_type: &str, payload: &[u8]) -> Vec<u8> {
    encode(
        &[
            (":exception-type", HeaderValue::String(exception_type)),
            (":content-type", HeaderValue::String("application/json")),
            (":message-type", HeaderValue::String("exception")),
        ],
        payload,
    )
}

/// An `InvokeModelWithResponseStream` `chunk` event carrying `event_json`
/// (e.g. one Anthropic Messages stream event) as `{"bytes":"<base64>"}`.
pub fn encode_invoke_chunk(event_json: &[u8]) -> Vec<u8> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(event_json);
    let payload = format!("{{\"bytes\":\"{b64}\"}}");
    encode_event("chunk", payload.as_bytes())
}
