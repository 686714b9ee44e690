//! Reading a tool result on demand.
//!
//! [`crate::request_view`] does not decode result contents: each
//! [`ResultView`] keeps its content as the raw JSON text borrowed from the
//! body (syntax already checked by the parse) plus the flags beside it that
//! the verdict needs. [`ResultView::read`] decodes the text and decides the
//! verdict, with the same rules the dialects always had (see each dialect's
//! module docs). A caller that skips results it has already seen (the
//! gateway: a client resends the whole conversation every turn) pays for
//! decoding only the results it keeps.
//!
//! Errors: JSON syntax and UTF-8 are checked for the whole body by
//! [`crate::request_view`], so a malformed content still fails the view as a
//! whole. What only the read can find is a content of the wrong *type* (a
//! number where text is expected, a text part whose `text` is not a
//! string): [`ResultView::read`] returns a [`WireError`] of kind
//! [`WireErrorKind::Shape`](crate::WireErrorKind::Shape) for that result,
//! with line and column relative to the content's own JSON text.

use std::borrow::Cow;

use toolwarden_core::Verdict;

use crate::{
    Detector, ResultView, WireError, anthropic, bedrock_converse, gemini, openai_chat,
    openai_responses,
};

/// A tool result's decoded content and failure verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultContent<'a> {
    /// The content as text (text parts joined with newlines; borrowed from
    /// the body when it needed no unescaping).
    pub text: Cow<'a, str>,
    /// Whether the tool failed, and on what basis.
    pub verdict: Verdict,
}

pub(crate) use crate::raw_result::RawResult;

// === impl ResultView ===

impl<'a> ResultView<'a> {
    /// Decode the content and decide the verdict: the dialect's explicit
    /// flags first, the `detector` only where the dialect has none (see the
    /// dialect modules).
    ///
    /// A result its client left unflagged in a conversation where it flags
    /// results (Anthropic `is_error`, Bedrock `status`) is a success unless
    /// its text is the harness's refusal ([`Detector::refusal_verdict`]).
    pub fn read(&self, detector: &Detector) -> Result<ResultContent<'a>, WireError> {
        self.read_for_call(detector, None)
    }

    /// [`ResultView::read`] knowing the call the result answers (see
    /// [`crate::CallIndex`]): the output of a shell command that only
    /// prints files (`tail -1 build.log`) is judged as the files' text,
    /// that of a Go tool with its failures (`go build ./...` printing `go:
    /// updates to go.mod needed; …`) ([`Detector::verdict_for_command`]).
    pub fn read_for_call(
        &self,
        detector: &Detector,
        call: Option<&crate::CallView<'_>>,
    ) -> Result<ResultContent<'a>, WireError> {
        let program = call.and_then(|c| crate::detect::Program::of_arguments(&c.arguments));
        self.read_for_program(detector, program)
    }

    /// [`ResultView::read_for_call`] with the call's command already read:
    /// the [`Program`](crate::detect::Program) it runs, if the verdict
    /// reads its output so (a gateway keeps that of a call it passed, for
    /// a result whose request does not hold the call).
    pub fn read_for_program(
        &self,
        detector: &Detector,
        program: Option<crate::detect::Program>,
    ) -> Result<ResultContent<'a>, WireError> {
        let mut read = self.read_with(&|text| detector.verdict_for_program(text, program))?;
        if self.raw.unflagged_where_client_flags_successes() && read.verdict == Verdict::NONE {
            read.verdict = detector.refusal_verdict(&read.text);
        } else if self.raw.flagged_success() && read.verdict == Verdict::explicit(false) {
            let status = detector.client_failure_verdict(&read.text);
            if status.failed {
                read.verdict = status;
            }
        }
        Ok(read)
    }

    /// The content as text, without a verdict (no detector run).
    pub fn content(&self) -> Result<Cow<'a, str>, WireError> {
        self.read_with(&|_| toolwarden_core::Verdict::NONE)
            .map(|r| r.text)
    }

    /// The content exactly as it appears in the body, as JSON text (a
    /// string with its quotes, an array, an object); `None` when the result
    /// has none or it is `null`. Its length is a cheap size measure.
    pub fn raw_content(&self) -> Option<&'a str> {
        match self.raw {
            RawResult::Anthropic { content, .. }
            | RawResult::Chat { content }
            | RawResult::TextAnswer { content, .. }
            | RawResult::Converse { content, .. } => content,
            RawResult::Responses { output, .. } => output,
            RawResult::Gemini { response } => response,
        }
    }

    /// The fingerprint of the model turn the result names itself
    /// ([`crate::turn::fingerprint`]; the call at its first place), where
    /// the request replays no call it answers: a call read from the error
    /// that answers it, as Hugging Face smolagents' agent writes one (`Error
    /// executing tool '<name>' with arguments {…}: …`, the step's calls
    /// forgotten). The gateway finds the call by it as by a
    /// [`crate::turn::ReplayedTurn`].
    pub fn named_turn(&self) -> Option<u64> {
        match self.raw {
            RawResult::TextAnswer { turn, .. } => turn,
            _ => None,
        }
    }

    /// [`ResultView::read`] with the content detector given as a function
    /// (a seam for tests).
    pub(crate) fn read_with(
        &self,
        judge: crate::text::Judge<'_>,
    ) -> Result<ResultContent<'a>, WireError> {
        let (text, verdict) = match self.raw {
            RawResult::Anthropic {
                content,
                is_error,
                server,
                client_flags_successes,
            } => anthropic::read_result(content, is_error, server, client_flags_successes, judge)?,
            RawResult::Chat { content } => openai_chat::read_result(content, judge)?,
            RawResult::TextAnswer {
                content, segment, ..
            } => crate::text_answers::read_result(content, segment, judge)?,
            RawResult::Responses {
                output,
                status_flag,
            } => openai_responses::read_result(output, status_flag, judge)?,
            RawResult::Gemini { response } => gemini::read_result(response, judge)?,
            RawResult::Converse {
                content,
                failed,
                client_flags_successes,
            } => bedrock_converse::read_result(content, failed, client_flags_successes, judge)?,
        };
        Ok(ResultContent { text, verdict })
    }
}

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;
