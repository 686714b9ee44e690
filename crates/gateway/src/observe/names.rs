//! Recently seen tool calls: `(session, call id) → (tool, finished_at_ms)`,
//! bounded (oldest evicted first), so a result whose call isn't in its
//! request's history still gets its tool name and execution time when the
//! call passed through this gateway. Otherwise the store resolves it from
//! the database (across instances and restarts).

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
};

/// Default capacity.
pub const DEFAULT_CAPACITY: usize = 100_000;

/// The bounded map.
#[derive(Debug)]
pub struct Names {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<(String, String), (String, i64)>,
    order: VecDeque<(String, String)>,
}

impl Names {
    /// An empty map holding at most `capacity` calls.
    pub fn new(capacity: usize) -> Names {
        Names {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Remember a call whose response finished at `finished_at_ms`.
    pub fn insert(&self, session: &str, call_id: &str, tool: &str, finished_at_ms: i64) {
        let key = (session.to_string(), call_id.to_string());
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner
            .map
            .insert(key.clone(), (tool.to_string(), finished_at_ms))
            .is_none()
        {
            inner.order.push_back(key);
            while inner.order.len() > self.capacity {
                if let Some(old) = inner.order.pop_front() {
                    inner.map.remove(&old);
                }
            }
        }
    }

    /// The tool and finish time of a call seen recently.
    pub fn get(&self, session: &str, call_id: &str) -> Option<(String, i64)> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .map
            .get(&(session.to_string(), call_id.to_string()))
            .cloned()
    }

    /// How many calls are held.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map
            .len()
    }

    /// `true` when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_evicts_oldest() {
        let names = Names::new(2);
        names.insert("s", "a", "Bash", 1);
        names.insert("s", "b", "Read", 2);
        names.insert("s", "a", "Bash", 3); // update, not a new entry
        assert_eq!(names.get("s", "a"), Some(("Bash".into(), 3)));
        names.insert("s", "c", "Edit", 4);
        assert_eq!(names.len(), 2);
        assert_eq!(names.get("s", "a"), None);
        assert_eq!(names.get("s", "c"), Some(("Edit".into(), 4)));
        assert_eq!(names.get("other", "c"), None);
    }
}
