//! Which conversation a request belongs to, first match wins:
//! 1. `x-session-id` (source `header`);
//! 2. the clients' own headers: Codex `session_id`, Claude Code
//!    `x-claude-code-session-id` (source `client_header`);
//! 3. the session part of Anthropic `metadata.user_id` — Claude Code writes
//!    `user_<hash>_account_<uuid>_session_<uuid>` (or a JSON object with a
//!    `session_id`) (source `metadata`);
//! 4. a Responses API request adding to a stored conversation
//!    (`conversation`, the OpenAI Agents SDK's `conversation_id`) is the
//!    conversation's: its id (source `conversation`), the same on every
//!    turn, where each request's first item is only its new input;
//! 5. a Responses API continuation (`previous_response_id`), or an
//!    Anthropic message thread's (`thread.previous_message_id`), joins the
//!    session of the response it continues (its id and source; the
//!    continuation's own first turn is only its new input): remembered when
//!    the response passed through this gateway, else asked of the store
//!    (another instance served it, or this one before a restart; see
//!    `proxy::find_continued_session`);
//! 6. `fp-<hex>` of the wire layer's hash of the conversation's first turn,
//!    stable across the turns of one conversation (source `fingerprint`);
//! 7. `unknown` (source `none`).
//!
//! A pass-through request (not read) has steps 1–2, then, on the
//! Conversations API's paths (`/v1/conversations/{id}…`: its items added,
//! listed, deleted), the conversation the path names (source
//! `conversation`, as step 4 names a Responses request's), then `unknown`.

/// Longest session id taken from a client (longer ones are cut).
const MAX_LEN: usize = 128;

/// A session id and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Session {
    /// The id.
    pub id: String,
    /// `header`, `client_header`, `metadata`, `conversation`, `fingerprint`
    /// or `none`.
    pub source: &'static str,
}

/// The sources a session can have, as the store keeps them.
const SOURCES: [&str; 6] = [
    "header",
    "client_header",
    "metadata",
    "conversation",
    "fingerprint",
    "none",
];

/// The source named `name` (a session read back from the store); an
/// unknown name reads as `fingerprint`, how a gateway names its own.
pub(crate) fn source_named(name: &str) -> &'static str {
    SOURCES
        .iter()
        .find(|s| **s == name)
        .copied()
        .unwrap_or("fingerprint")
}

/// The session headers, in order of precedence, with their sources.
const HEADERS: [(&str, &str); 4] = [
    ("x-session-id", "header"),
    ("session_id", "client_header"),
    // The Codex CLI 0.169 names it so (on its WebSocket upgrade too).
    ("session-id", "client_header"),
    ("x-claude-code-session-id", "client_header"),
];

/// Steps 1–2, from the request headers: `get` returns the first value of
/// a header (names are given lower-case).
pub(crate) fn from_header_values<'a>(get: impl Fn(&str) -> Option<&'a [u8]>) -> Option<Session> {
    HEADERS.iter().find_map(|&(name, source)| {
        let id = get(name).and_then(clean)?;
        Some(Session { id, source })
    })
}

/// The conversation a Conversations API path names
/// (`…/conversations/{id}`, then anything): a pass-through request's
/// session when no header gives one. `None` for the create (`POST
/// /v1/conversations`, no id yet) and every other path.
pub(crate) fn of_conversation_path(path: &str) -> Option<Session> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let (_, rest) = path.split_once("/conversations/")?;
    let id = rest.split('/').next()?;
    Some(Session {
        id: clean(id.as_bytes())?,
        source: "conversation",
    })
}

/// Steps 3–7: from what the body holds; `conversation` is a Responses
/// request's stored conversation (step 4), `continued` looks up the
/// session of the response a Responses continuation names (step 5).
pub(crate) fn from_body(
    metadata_user_id: Option<&str>,
    conversation: Option<&str>,
    continued: impl FnOnce() -> Option<Session>,
    first_turn_hash: Option<u64>,
) -> Session {
    if let Some(id) = metadata_user_id.and_then(session_of_user_id) {
        return Session {
            id,
            source: "metadata",
        };
    }
    if let Some(id) = conversation.and_then(|c| clean(c.as_bytes())) {
        return Session {
            id,
            source: "conversation",
        };
    }
    if let Some(session) = continued() {
        return session;
    }
    match first_turn_hash {
        Some(hash) => Session {
            id: format!(
                "{}{hash:016x}",
                toolwarden_store::FINGERPRINT_SESSION_PREFIX
            ),
            source: "fingerprint",
        },
        None => Session {
            id: "unknown".to_string(),
            source: "none",
        },
    }
}

fn session_of_user_id(user_id: &str) -> Option<String> {
    if let Some(i) = user_id.rfind("_session_") {
        return clean(&user_id.as_bytes()[i + "_session_".len()..]);
    }
    if user_id.trim_start().starts_with('{') {
        #[derive(serde::Deserialize)]
        struct Ids {
            session_id: Option<String>,
        }
        let ids: Ids = serde_json::from_str(user_id).ok()?;
        return ids.session_id.and_then(|s| clean(s.as_bytes()));
    }
    None
}

/// Printable ASCII only, trimmed, at most [`MAX_LEN`] bytes; empty → `None`.
fn clean(raw: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(raw).ok()?.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    Some(text[..text.len().min(MAX_LEN)].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    use http::HeaderMap;

    fn from_headers(headers: &HeaderMap) -> Option<Session> {
        from_header_values(|name| headers.get(name).map(|v| v.as_bytes()))
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(*k, v.parse().unwrap());
        }
        m
    }

    #[test]
    fn explicit_header_wins_over_client_headers() {
        let h = headers(&[
            ("session_id", "codex-1"),
            ("x-session-id", "mine"),
            ("x-claude-code-session-id", "cc"),
        ]);
        assert_eq!(
            from_headers(&h),
            Some(Session {
                id: "mine".into(),
                source: "header"
            })
        );
        let h = headers(&[("x-claude-code-session-id", "  cc-42 ")]);
        assert_eq!(from_headers(&h).unwrap().id, "cc-42");
        assert_eq!(from_headers(&headers(&[("session_id", " ")])), None);
    }

    #[test]
    fn claude_code_user_id_gives_its_session() {
        let s = from_body(
            Some("user_abc123_account_1111-2222_session_9f8e7d6c-0000-4000-8000-000000000001"),
            None,
            || None,
            Some(7),
        );
        assert_eq!(s.id, "9f8e7d6c-0000-4000-8000-000000000001");
        assert_eq!(s.source, "metadata");
        let s = from_body(
            Some(r#"{"device_id":"d","session_id":"s-1"}"#),
            None,
            || None,
            None,
        );
        assert_eq!(s.id, "s-1");
    }

    #[test]
    fn a_continuation_takes_the_session_it_continues_before_the_fingerprint() {
        let earlier = || {
            Some(Session {
                id: "fp-0000000000000001".into(),
                source: "fingerprint",
            })
        };
        assert_eq!(
            from_body(None, None, earlier, Some(0xabc)).id,
            "fp-0000000000000001"
        );
        let s = from_body(Some("user_x_session_s-9"), None, earlier, Some(0xabc));
        assert_eq!((s.id.as_str(), s.source), ("s-9", "metadata"));
    }

    #[test]
    fn a_stored_conversation_is_the_session_before_a_continuation_or_fingerprint() {
        let conversation = Some(" conv_68a1f0c2e4b88190 ");
        let earlier = || {
            Some(Session {
                id: "fp-0000000000000001".into(),
                source: "fingerprint",
            })
        };
        let s = from_body(None, conversation, earlier, Some(0xabc));
        assert_eq!(
            (s.id.as_str(), s.source),
            ("conv_68a1f0c2e4b88190", "conversation")
        );
        let s = from_body(Some("user_x_session_s-9"), conversation, earlier, None);
        assert_eq!((s.id.as_str(), s.source), ("s-9", "metadata"));
        // Not printable: no session from it.
        let s = from_body(None, Some("conv\n1"), || None, Some(0xabc));
        assert_eq!(s.source, "fingerprint");
    }

    #[test]
    fn falls_back_to_fingerprint_then_none() {
        let s = from_body(Some("plain-user"), None, || None, Some(0xabc));
        assert_eq!(s.id, "fp-0000000000000abc");
        assert_eq!(s.source, "fingerprint");
        assert_eq!(from_body(None, None, || None, None).source, "none");
    }

    #[test]
    fn stored_sources_read_back_as_themselves() {
        for s in SOURCES {
            assert_eq!(source_named(s), s);
        }
        assert_eq!(source_named("something-else"), "fingerprint");
    }

    #[test]
    fn a_conversations_api_path_names_its_conversation() {
        let id = |path| of_conversation_path(path).map(|s| (s.id, s.source));
        let conv = Some(("conv_68a1f0c2".to_string(), "conversation"));
        assert_eq!(id("/v1/conversations/conv_68a1f0c2"), conv);
        assert_eq!(id("/v1/conversations/conv_68a1f0c2/items"), conv);
        assert_eq!(
            id("/v1/conversations/conv_68a1f0c2/items?limit=100&order=asc"),
            conv
        );
        assert_eq!(id("/v1/conversations/conv_68a1f0c2/items/msg_1"), conv);
        assert_eq!(id("/openai/v1/conversations/conv_68a1f0c2/items"), conv);
        for none in [
            "/v1/conversations",
            "/v1/conversations/",
            "/v1/conversations/?x=1",
            "/v1/models",
            "/v1/responses",
        ] {
            assert_eq!(id(none), None, "{none}");
        }
    }
}
