//! The `sequential` lock of each tool name, shared by every registration
//! under that name: a call of a removed
//! [`sequential`](crate::ToolPolicy::sequential) tool still running holds
//! back the calls of a `sequential` tool registered again in its place, so
//! the calls of a name's `sequential` registrations never overlap. (A
//! registration that is not `sequential` takes no lock.)
//!
//! A name's lock lives as long as an entry holds it (the registered tool,
//! or a removed one whose call still runs); the table keeps weak
//! references only and sheds the dead ones at each change of the tool
//! set, so it holds no more names than were alive at the last change.

use std::{
    collections::HashMap,
    sync::{Arc, Weak},
};

/// One tool name's lock: held by a call of a `sequential` tool for its
/// whole run.
pub(crate) type NameLock = Arc<tokio::sync::Mutex<()>>;

/// The lock of each name some entry still holds.
#[derive(Debug, Default)]
pub(super) struct NameLocks {
    by_name: HashMap<Arc<str>, Weak<tokio::sync::Mutex<()>>>,
}

// === impl NameLocks ===

impl NameLocks {
    /// The lock of `name`: the one a live entry of that name holds, or a
    /// new one.
    pub(super) fn lock_for(&mut self, name: &Arc<str>) -> NameLock {
        if let Some(lock) = self.by_name.get(name).and_then(Weak::upgrade) {
            return lock;
        }
        let lock = NameLock::default();
        self.by_name.insert(name.clone(), Arc::downgrade(&lock));
        lock
    }

    /// Forget the names no entry holds any more.
    pub(super) fn shed_unused(&mut self) {
        self.by_name.retain(|_, lock| lock.strong_count() > 0);
    }

    /// How many names the table holds.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.by_name.len()
    }
}
