//! [`ChoiceEnds`]: which of a stream's choices (Chat) or candidates
//! (Gemini) have begun and which have finished. A Chat request with `n` >
//! 1 streams its choices interleaved, each ending with its own
//! `finish_reason`; a Gemini request with `candidateCount` > 1 streams
//! its candidates side by side, each ending with its own `finishReason`.
//! The stream's calls are whole only once the last of them has finished,
//! not the first.
//!
//! The request says how many it asked for (Chat's `n`, Gemini's
//! `generationConfig.candidateCount`, [`ChoiceEnds::expect`]): with
//! several, a choice named only after all the others have finished still
//! holds the stream open, and only the first choice's calls are the
//! response's (the client continues the conversation with one choice,
//! `choices[0]` as the SDKs give it; the others are alternatives it never
//! answers). Without a count (or a count of one) every choice named is
//! waited for and read, since some servers number their one choice
//! otherwise than 0.

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
    /// How many choices the request asked for when more than one
    /// (bounded by [`MAX_CHOICES`]), else 0.
    expected: u64,
    /// How many of `choices` are open (named, not finished).
    open: usize,
    /// How many of `choices` below `expected` have finished.
    done_expected: u64,
}

impl ChoiceEnds {
    /// The request asked for `n` choices: with more than one, choices
    /// `0..n` must all finish before the stream is whole, and only the
    /// first one's calls are read ([`Self::only_first`]).
    pub(crate) fn expect(&mut self, n: u64) {
        self.expected = if n > 1 { n.min(MAX_CHOICES as u64) } else { 0 };
        let expected = self.expected;
        self.done_expected = self
            .choices
            .iter()
            .filter(|&&(c, done)| done && c < expected)
            .count() as u64;
    }

    /// Whether only the first choice (index 0) is read: the request
    /// asked for several.
    pub(crate) fn only_first(&self) -> bool {
        self.expected > 1
    }

    /// `choice` has begun (a chunk named it); a finished one stays so.
    pub(crate) fn begun(&mut self, choice: u64) {
        if !self.choices.iter().any(|&(c, _)| c == choice) && self.choices.len() < MAX_CHOICES {
            self.choices.push((choice, false));
            self.open += 1;
        }
    }

    /// `choice` gave its `finish_reason`.
    pub(crate) fn finished(&mut self, choice: u64) {
        self.begun(choice);
        if let Some(entry) = self.choices.iter_mut().find(|(c, _)| *c == choice)
            && !entry.1
        {
            entry.1 = true;
            self.open -= 1;
            if choice < self.expected {
                self.done_expected += 1;
            }
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
    /// one choice left, if only one is left — open, or asked for and not
    /// named yet (which one it was is not known). Whether every choice has
    /// now finished.
    pub(crate) fn finished_unread(&mut self) -> bool {
        let open = self
            .choices
            .iter()
            .filter(|(_, done)| !done)
            .map(|&(c, _)| c);
        let unnamed = (0..self.expected).filter(|c| !self.choices.iter().any(|(n, _)| n == c));
        let mut left = open.chain(unnamed);
        match (left.next(), left.next()) {
            (Some(choice), None) => self.finished(choice),
            (None, _) => self.finished(0),
            (Some(_), Some(_)) => return false,
        }
        self.all_finished()
    }

    /// Whether a choice has finished, every choice named has, and so has
    /// every choice the request asked for ([`Self::expect`]).
    pub(crate) fn all_finished(&self) -> bool {
        self.all_named_finished() && self.done_expected == self.expected
    }

    /// Whether a choice has finished and every choice named has: at the
    /// stream's end, whatever the request asked for (a server that gives
    /// fewer choices than asked).
    pub(crate) fn all_named_finished(&self) -> bool {
        !self.choices.is_empty() && self.open == 0
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
    fn a_choice_asked_for_holds_the_stream_until_it_finishes() {
        let mut c = ChoiceEnds::default();
        c.expect(2);
        assert!(c.only_first());
        c.begun(0);
        c.finished(0);
        assert!(c.all_named_finished());
        assert!(!c.all_finished(), "choice 1 was asked for, not named yet");
        c.begun(1);
        assert!(!c.all_named_finished());
        c.finished(1);
        c.finished(1);
        assert!(c.all_finished());
        // Asked for after the choices were named.
        let mut c = ChoiceEnds::default();
        c.finished(0);
        c.finished(1);
        c.expect(3);
        assert!(!c.all_finished());
        c.finished(2);
        assert!(c.all_finished());
        // One (or none) asked for: the choices named, whatever their index.
        for n in [0, 1] {
            let mut c = ChoiceEnds::default();
            c.expect(n);
            assert!(!c.only_first());
            c.finished(1);
            assert!(c.all_finished());
        }
    }

    #[test]
    fn an_unread_finish_ends_the_one_choice_asked_for_and_not_named() {
        let mut c = ChoiceEnds::default();
        c.expect(2);
        c.finished(0);
        assert!(c.finished_unread(), "choice 1, begun and finished at once");
        let mut c = ChoiceEnds::default();
        c.expect(3);
        c.finished(0);
        assert!(!c.finished_unread(), "1 or 2");
        let mut c = ChoiceEnds::default();
        c.expect(2);
        c.begun(0);
        assert!(!c.finished_unread(), "0, or 1 begun and finished at once");
    }

    #[test]
    fn choices_past_the_cap_are_not_waited_for() {
        let mut c = ChoiceEnds::default();
        for choice in 0..10_000 {
            c.begun(choice);
        }
        assert_eq!(c.choices.len(), super::MAX_CHOICES);
        let mut c = ChoiceEnds::default();
        c.expect(u64::MAX);
        for choice in 0..super::MAX_CHOICES as u64 {
            c.finished(choice);
        }
        assert!(c.all_finished());
    }
}
