//! [`Pending`]: the events the writer holds, in order, with what folding
//! one of them into the aggregate needs to know.

use std::collections::VecDeque;

use super::Queued;
use crate::event::Event;

/// The writer's backlog: events in arrival order and, apart, whether each
/// one's call was known when it was recorded ([`Queued::call_known`]).
/// Apart, so that the events stay a `VecDeque<Event>` whose front is written
/// in place as one slice, no copy per batch.
#[derive(Debug, Default)]
pub(super) struct Pending {
    events: VecDeque<Event>,
    call_known: VecDeque<bool>,
}

// === impl Pending ===

impl Pending {
    pub(super) fn len(&self) -> usize {
        self.events.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub(super) fn push_back(&mut self, q: Queued) {
        self.events.push_back(q.event);
        self.call_known.push_back(q.call_known);
    }

    /// Puts back in front an event taken with [`Pending::pop_front`].
    pub(super) fn push_front(&mut self, q: Queued) {
        self.events.push_front(q.event);
        self.call_known.push_front(q.call_known);
    }

    pub(super) fn pop_front(&mut self) -> Option<Queued> {
        let event = self.events.pop_front()?;
        let call_known = self.call_known.pop_front().unwrap_or(false);
        Some(Queued { event, call_known })
    }

    /// The first `n` events (at most all), as one slice to write in place.
    pub(super) fn front_mut(&mut self, n: usize) -> &mut [Event] {
        let events = self.events.make_contiguous();
        let n = n.min(events.len());
        &mut events[..n]
    }

    /// Forgets the first `n` events (written).
    pub(super) fn remove_front(&mut self, n: usize) {
        let n = n.min(self.events.len());
        self.events.drain(..n);
        self.call_known.drain(..n);
    }

    /// Takes every event, in order.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Queued> + '_ {
        self.events
            .drain(..)
            .zip(self.call_known.drain(..))
            .map(|(event, call_known)| Queued { event, call_known })
    }

    /// Gives back what a backlog grew to beyond `2 × keep` events (a
    /// `VecDeque` never shrinks by itself).
    pub(super) fn release(&mut self, keep: usize) {
        if self.events.capacity() > 2 * keep {
            self.events.shrink_to(keep);
            self.call_known.shrink_to(keep);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RequestRecord;

    fn queued(id: &str, call_known: bool) -> Queued {
        Queued {
            event: Event::Request(RequestRecord::for_test(id, "s", "header", 1)),
            call_known,
        }
    }

    fn ids(p: &mut Pending) -> Vec<(String, bool)> {
        p.drain()
            .map(|q| match q.event {
                Event::Request(r) => (r.request_id, q.call_known),
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn each_event_keeps_its_call_known() {
        let mut p = Pending::default();
        for (id, known) in [("a", true), ("b", false), ("c", true), ("d", false)] {
            p.push_back(queued(id, known));
        }
        assert_eq!(p.front_mut(9).len(), 4);
        p.remove_front(1);
        let b = p.pop_front().unwrap();
        assert!(!b.call_known);
        p.push_front(b);
        assert_eq!(p.len(), 3);
        assert_eq!(
            ids(&mut p),
            [("b".into(), false), ("c".into(), true), ("d".into(), false)]
        );
        assert!(p.is_empty());
    }
}
