//! The session of each recent response, by response id, so that an OpenAI
//! Responses request continuing a conversation with `previous_response_id`
//! (its history kept at the provider; only the new items sent) joins the
//! session of the response it continues, when the client sends no session
//! header. Without this each continuation would get the fingerprint of its
//! own first item and the conversation would split. Bounded: two
//! generations of at most `capacity` ids; this gateway's responses only (a
//! continuation through another gateway falls back to the fingerprint).

use std::{collections::HashMap, sync::Mutex};

use super::session::Session;

/// Response ids kept per generation by default.
pub const DEFAULT_CAPACITY: usize = 50_000;

/// Recent response ids and their sessions.
#[derive(Debug)]
pub struct ResponseSessions {
    capacity: usize,
    generations: Mutex<[HashMap<String, Session>; 2]>,
}

impl ResponseSessions {
    /// An empty map keeping up to `capacity` ids per generation.
    pub fn new(capacity: usize) -> ResponseSessions {
        ResponseSessions {
            capacity: capacity.max(1),
            generations: Mutex::new([HashMap::new(), HashMap::new()]),
        }
    }

    /// The response `id` belongs to `session`.
    pub fn insert(&self, id: &str, session: &Session) {
        let mut g = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        if g[0].len() >= self.capacity {
            g[1] = std::mem::take(&mut g[0]);
        }
        g[0].insert(id.to_string(), session.clone());
    }

    /// The session of response `id`, if this gateway saw it recently.
    pub fn get(&self, id: &str) -> Option<Session> {
        let g = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        g[0].get(id).or_else(|| g[1].get(id)).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(id: &str) -> Session {
        Session {
            id: id.to_string(),
            source: "fingerprint",
        }
    }

    #[test]
    fn finds_recent_responses_and_forgets_old_ones() {
        let m = ResponseSessions::new(2);
        m.insert("resp_1", &s("a"));
        m.insert("resp_2", &s("a"));
        assert_eq!(m.get("resp_1"), Some(s("a")));
        assert_eq!(m.get("resp_9"), None);
        m.insert("resp_3", &s("b")); // resp_1, resp_2 become the old generation
        m.insert("resp_4", &s("b"));
        assert_eq!(m.get("resp_2"), Some(s("a")));
        m.insert("resp_5", &s("c")); // resp_1, resp_2 forgotten
        assert_eq!(m.get("resp_1"), None);
        assert_eq!(m.get("resp_4"), Some(s("b")));
    }
}
