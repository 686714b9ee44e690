//! The content detector: did a tool fail, judged from its output alone.
//! Used where the API has no error flag (Chat `role: tool`, Responses outputs).

/// Decides from a tool result's text whether the tool failed.
#[derive(Debug, Clone, Default)]
pub struct Detector {}

impl Detector {
    /// `true` when the content reads as a failed tool execution.
    pub fn is_failure(&self, content: &str) -> bool {
        let _ = content;
        todo!("detector")
    }
}
