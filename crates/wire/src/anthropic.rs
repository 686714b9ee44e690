//! anthropic: request view, response view, stream state, validation, repair, render.

use toolwarden_core::ToolOutcome;

use crate::{Defect, Detector, Repaired, RequestView, ResponseView, WireError, stream::EventSink};

/// Stream state for this dialect.
#[derive(Debug, Default)]
pub struct StreamState {}

impl EventSink for StreamState {
    fn on_event(&mut self, _event: &[u8], _data: &[u8]) {
        todo!()
    }

    fn finish(self) -> ResponseView {
        todo!()
    }
}

pub(crate) fn request_view<'a>(
    _body: &'a [u8],
    _detector: &Detector,
) -> Result<RequestView<'a>, WireError> {
    todo!()
}

pub(crate) fn response_view(_body: &[u8]) -> Result<ResponseView, WireError> {
    todo!()
}

pub(crate) fn validate(_body: &[u8]) -> Result<Vec<Defect>, WireError> {
    todo!()
}

pub(crate) fn repair(_body: &[u8]) -> Result<Repaired<'_>, WireError> {
    todo!()
}

pub(crate) fn render_results(_outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    todo!()
}
