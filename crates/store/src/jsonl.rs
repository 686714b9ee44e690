//! The JSONL event log: one [`Event`] per line, as serde tags it
//! (`{"type":"tool_call",...}`), appended and flushed once per batch.
//!
//! Only events new to the store are written (the store's dedup decides);
//! results carry their resolved `tool` and computed `exec_ms`. Without a
//! store every event is written: no dedup is possible then, so a result
//! resent in later turns appears once per request that carried it.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::event::Event;

/// An append-only JSONL file, opened lazily (and reopened after an error).
#[derive(Debug)]
pub(crate) struct JsonlSink {
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

// === impl JsonlSink ===

impl JsonlSink {
    pub(crate) fn new(path: &Path) -> Self {
        JsonlSink {
            path: path.to_owned(),
            file: None,
        }
    }

    /// Appends one line per event and flushes.
    pub(crate) fn write<'a>(&mut self, events: impl Iterator<Item = &'a Event>) -> io::Result<()> {
        let result = self.try_write(events);
        if result.is_err() {
            self.file = None;
        }
        result
    }

    fn try_write<'a>(&mut self, events: impl Iterator<Item = &'a Event>) -> io::Result<()> {
        let file = match &mut self.file {
            Some(f) => f,
            None => {
                let f = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)?;
                self.file.insert(BufWriter::with_capacity(64 * 1024, f))
            }
        };
        for event in events {
            serde_json::to_writer(&mut *file, event)?;
            file.write_all(b"\n")?;
        }
        file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::ToolCallRecord;

    #[test]
    fn appends_one_tagged_line_per_event() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let call = Event::ToolCall(ToolCallRecord {
            request_id: "r1".into(),
            session_id: "s1".into(),
            provider: "openai".into(),
            model: Some("gpt".into()),
            response_id: None,
            dialect: None,
            call_index: 0,
            call_id: "c1".into(),
            tool: "search".into(),
            arguments_bytes: 12,
            at_ms: 5,
            turn: None,
        });
        let mut sink = JsonlSink::new(&path);
        sink.write([&call].into_iter()).unwrap();
        sink.write([&call, &call].into_iter()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["type"], "tool_call");
        assert_eq!(v["tool"], "search");
        let back: Event = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(back, call);
    }
}
