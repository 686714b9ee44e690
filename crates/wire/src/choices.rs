//! [`ChoiceEnds`]: which of a stream's choices (Chat) or candidates
//! (Gemini) have begun and which have finished. A Chat request with `n` >
//! 1 streams its choices interleaved, each ending with its own
//! `finish_reason`; a Gemini request with `candidateCount` > 1 streams
//! its candidates side by side, each ending with its own `finishReason`.
//! The stream's calls are whole only once the last of them has finished,
//! not the first.

use crate::seed::Needle;

/// Most choices told apart (OpenAI's `n` is at most 128, Gemini's
/// `candidateCount` 8). A choice past them is not waited for.
const MAX_CHOICES: usize = 256;

static INDEX: Needle = Needle::new("\"index\"");

/// The choices a stream has named, each with whether it has finished.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChoiceEnds {
    /// `(choice, finished)`, in the order first named.
    choices: Vec<(u64, bool)>,
}

impl ChoiceEnds {
    /// `choice` has begun (a chunk named it); a finished one stays so.
    pub(crate) fn begun(&mut self, choice: u64) {
        if !self.choices.iter().any(|&(c, _)| c == choice) && self.choices.len() < MAX_CHOICES {
            self.choices.push((choice, false));
        }
    }

    /// `choice` gave its `finish_reason`.
    pub(crate) fn finished(&mut self, choice: u64) {
        self.begun(choice);
        if let Some(entry) = self.choices.iter_mut().find(|(c, _)| *c == choice) {
            entry.1 = true;
        }
    }

    /// The choices named in a chunk that is not otherwise read (a content
    /// delta: no tool calls, no finish reason, no usage, no error), found
    /// by their `"index":` keys without parsing it: in such a chunk the
    /// only objects with an `index` are its choices (a string holding
    /// `"index"` escapes its quotes).
    pub(crate) fn begun_in(&mut self, data: &[u8]) {
        for end in INDEX.ends_in(data) {
            let mut rest = &data[end..];
            while let [b' ' | b'\t' | b'\r' | b'\n', tail @ ..] = rest {
                rest = tail;
            }
            let [b':', tail @ ..] = rest else { continue };
            rest = tail;
            while let [b' ' | b'\t' | b'\r' | b'\n', tail @ ..] = rest {
                rest = tail;
            }
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            if let Some(choice) = std::str::from_utf8(&rest[..digits])
                .ok()
                .and_then(|d| d.parse().ok())
            {
                self.begun(choice);
            }
        }
    }

    /// An event too large to read named a `finish_reason`: it finished the
    /// one open choice, if only one is open (which one it was is not
    /// known). Whether every choice has now finished.
    pub(crate) fn finished_unread(&mut self) -> bool {
        let mut open = self.choices.iter_mut().filter(|(_, done)| !done);
        match (open.next(), open.next()) {
            (Some(entry), None) => entry.1 = true,
            (None, _) => self.finished(0),
            (Some(_), Some(_)) => return false,
        }
        true
    }

    /// Whether a choice has finished and every choice named has.
    pub(crate) fn all_finished(&self) -> bool {
        !self.choices.is_empty() && self.choices.iter().all(|&(_, done)| done)
    }
}

#[cfg(test)]
mod tests {
    use super::ChoiceEnds;

    #[test]
    fn the_last_choice_to_finish_ends_them() {
        let mut c = ChoiceEnds::default();
        assert!(!c.all_finished());
        c.begun_in(br#"{"choices":[{"index": 1,"delta":{"content":"\"index\":7"}}]}"#);
        c.begun(0);
        c.finished(0);
        assert!(!c.all_finished(), "choice 1 is still open");
        c.begun(0); // a chunk after its finish does not reopen it
        c.finished(1);
        assert!(c.all_finished());
        assert_eq!(c.choices, vec![(1, true), (0, true)]);
    }

    #[test]
    fn an_unread_finish_ends_only_a_lone_open_choice() {
        let mut c = ChoiceEnds::default();
        assert!(c.finished_unread());
        let mut c = ChoiceEnds::default();
        c.begun(0);
        c.begun(1);
        assert!(!c.finished_unread());
        c.finished(0);
        assert!(c.finished_unread());
        assert!(c.all_finished());
    }

    #[test]
    fn choices_past_the_cap_are_not_waited_for() {
        let mut c = ChoiceEnds::default();
        for choice in 0..10_000 {
            c.begun(choice);
        }
        assert_eq!(c.choices.len(), super::MAX_CHOICES);
    }
}
