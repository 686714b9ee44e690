//! The JSONL event log: one [`Event`] per line, as serde tags it
//! (`{"type":"tool_call",...}`), appended and flushed once per batch.
//!
//! Only events new to the store are written (the store's dedup decides);
//! results carry their resolved `tool` and computed `exec_ms`. Without a
//! store every event is written: no dedup is possible then, so a result
//! resent in later turns appears once per request that carried it.
//!
//! The log is bounded ([`JsonlLog`]): once the live file holds
//! `rotate_bytes`, it is renamed `PATH.1` (the rotated ones before it move
//! to `PATH.2` … `PATH.keep`, and the oldest beyond `keep` is deleted) and
//! the next batch starts a new `PATH`. A rotation happens between two
//! batches, so no line is ever split across files. The sink also follows a
//! rotation made by someone else: if `PATH` is no longer the file it has
//! open (renamed or deleted, as `logrotate` does by default), the next
//! batch opens `PATH` anew; a file truncated in place (`copytruncate`) is
//! simply appended to, from its new end.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::path::PathBuf;

use crate::event::Event;

mod line;

/// Where the JSONL log goes and how large it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonlLog {
    /// The live file.
    pub path: PathBuf,
    /// Rotate once the live file holds at least this many bytes; 0 never
    /// rotates.
    pub rotate_bytes: u64,
    /// Rotated files kept beside the live one (`PATH.1`, newest, to
    /// `PATH.keep`); 0 keeps none (the full file is deleted).
    pub keep: u32,
}

/// One process's hold on a [`JsonlLog`] ([`JsonlLog::claim`]), released
/// when dropped.
#[derive(Debug)]
pub struct JsonlClaim {
    /// The locked `PATH.lock`; `None` where no lock could be taken.
    lock: Option<File>,
}

/// An append-only JSONL file, opened lazily (and reopened after an error,
/// a rotation, or when `PATH` stops being the file it has open).
#[derive(Debug)]
pub(crate) struct JsonlSink {
    log: JsonlLog,
    file: Option<Open>,
    /// Whole lines waiting for their write: a write(2) never ends inside a
    /// line, so the alert task's lines (appended to the same file, each
    /// with one write) fall between two of the recorder's, never in one.
    lines: Vec<u8>,
    /// A write failed: the file may end with part of a line, which the
    /// next batch ends first if it does (so its own first line stays whole).
    torn: bool,
    /// Rotations made since the sink was created.
    rotations: u64,
    /// The size at which the live file is rotated: `rotate_bytes`, or more
    /// after a rotation failed.
    next_rotation_at: u64,
}

/// How [`JsonlSink::write`] failed: whether the batch's lines are in the log.
#[derive(Debug)]
pub(crate) enum JsonlError {
    /// Not all the lines were appended: `appended` of them are whole in
    /// the file (a write that failed partway, as on a disk that filled
    /// up), the others are not (but for the start of a torn one).
    Append {
        /// Why.
        error: io::Error,
        /// Lines whole in the file.
        appended: u64,
    },
    /// The lines were appended to the live file; rotating it first failed.
    Rotate(io::Error),
}

/// The lines of one write(2) at least, and what [`JsonlSink`]'s buffer
/// keeps between batches.
const WRITE_CHUNK: usize = 64 * 1024;

#[derive(Debug)]
struct Open {
    file: File,
    /// The open file's identity, to notice that `PATH` became another file.
    id: FileId,
}

/// What names a file whatever its path: (device, inode) on Unix.
type FileId = (u64, u64);

// === impl JsonlLog ===

impl JsonlLog {
    /// A log at `path` that is never rotated.
    pub fn unbounded(path: impl Into<PathBuf>) -> Self {
        JsonlLog {
            path: path.into(),
            rotate_bytes: 0,
            keep: 0,
        }
    }

    /// Claims the log for this process: opens the live file for appending
    /// once (creating it), then locks `PATH.lock` beside it. So a path that
    /// cannot be written is found at start rather than at every batch, and
    /// so is a log another process holds: two gateways writing one log
    /// would split each other's lines and both rotate it. The claim lasts
    /// until it is dropped, or the process ends (the kernel releases the
    /// lock, after `kill -9` too). Where no lock can be taken (a directory
    /// only the log itself may be written in, a file system without
    /// locks) the claim is made without one, with a warning.
    pub fn claim(&self) -> io::Result<JsonlClaim> {
        self.open_append()?;
        let path = self.lock_path();
        let locked = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map(|file| (file.try_lock(), file));
        let error = match locked {
            Ok((Ok(()), file)) => return Ok(JsonlClaim { lock: Some(file) }),
            Ok((Err(TryLockError::WouldBlock), _)) => {
                return Err(io::Error::new(
                    io::ErrorKind::ResourceBusy,
                    format!(
                        "another process holds {} (is another gateway writing this log? \
                         give each its own path)",
                        path.display()
                    ),
                ));
            }
            Ok((Err(TryLockError::Error(e)), _)) | Err(e) => e,
        };
        tracing::warn!(
            lock = %path.display(),
            %error,
            "cannot lock the JSONL log; another gateway writing it would go unnoticed"
        );
        Ok(JsonlClaim { lock: None })
    }

    /// `PATH.lock`: the file [`JsonlLog::claim`] locks.
    pub fn lock_path(&self) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// The live file, opened for appending (created if missing).
    fn open_append(&self) -> io::Result<File> {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
    }

    /// Appends `line` (one JSON line, ending in `\n`) to the live file
    /// (created if missing) with one write(2), for a writer beside the
    /// recorder (the alerts' lines). A file that ends inside a line (a
    /// write cut short: a full disk, `kill -9` mid-write) is ended with a
    /// newline in the same write first, as the recorder's batches do, so
    /// that `line` is not glued to the torn one (both lost to a reader).
    pub fn append_line(&self, line: &[u8]) -> io::Result<()> {
        let mut file = self.open_append()?;
        if ends_mid_line(&self.path) == Some(true) {
            let mut ended = Vec::with_capacity(line.len() + 1);
            ended.push(b'\n');
            ended.extend_from_slice(line);
            return file.write_all(&ended);
        }
        file.write_all(line)
    }

    /// The path of the `n`th rotated file (1 is the newest).
    pub fn rotated(&self, n: u32) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }
}

// === impl JsonlClaim ===

impl JsonlClaim {
    /// Whether the claim holds the lock (`false`: claimed without one).
    pub fn is_locked(&self) -> bool {
        self.lock.is_some()
    }
}

// === impl JsonlSink ===

impl JsonlSink {
    pub(crate) fn new(log: JsonlLog) -> Self {
        JsonlSink {
            next_rotation_at: log.rotate_bytes,
            log,
            file: None,
            lines: Vec::new(),
            torn: false,
            rotations: 0,
        }
    }

    /// Rotations made so far.
    pub(crate) fn rotations(&self) -> u64 {
        self.rotations
    }

    /// Rotates the file first if it has reached its bound, then appends
    /// one line per event and flushes. An error writing leaves the file to
    /// be reopened by the next call (the lines of a failed write may be
    /// partly in the file). A rotation that fails is reported after the
    /// batch has been appended to the unrotated file, and tried again once
    /// the file has grown by another `rotate_bytes`
    /// ([`JsonlError::Rotate`]: the lines are in the log).
    pub(crate) fn write<'a>(
        &mut self,
        events: impl Iterator<Item = &'a Event>,
    ) -> Result<(), JsonlError> {
        let before = self.before_write();
        let result = self.try_write(events);
        if result.is_err() {
            self.file = None;
        }
        self.lines.clear();
        if self.lines.capacity() > 2 * WRITE_CHUNK {
            // One event larger than a chunk: give its room back.
            self.lines = Vec::new();
        }
        result.map_err(|(appended, error)| JsonlError::Append { error, appended })?;
        before.map_err(JsonlError::Rotate)
    }

    /// Appends one line per event; on failure, how many of them are whole
    /// in the file.
    fn try_write<'a>(
        &mut self,
        events: impl Iterator<Item = &'a Event>,
    ) -> Result<(), (u64, io::Error)> {
        // A file opened now may end inside a line too: a write cut short
        // before this process (a full disk, then a restart; `kill -9` in
        // the middle of a write) or by another writer (an alert's line).
        let mut torn = self.torn;
        let open = match &mut self.file {
            Some(open) => open,
            None => {
                let opened = self
                    .log
                    .open_append()
                    .and_then(|f| Ok((file_id(&f.metadata()?), f)));
                let (id, file) = opened.map_err(|e| (0, e))?;
                torn = true;
                self.file.insert(Open { file, id })
            }
        };
        let lines = &mut self.lines;
        lines.clear();
        // Bytes before the chunk's first line: the newline that ends a torn one.
        let mut lead = 0;
        if torn {
            // After this sink's own failed write an unreadable end is taken
            // as torn; a file merely opened, as whole.
            if ends_mid_line(&self.log.path).unwrap_or(self.torn) {
                lines.push(b'\n');
                lead = 1;
            }
            self.torn = false;
        }
        // Lines written whole, and lines in the chunk being filled.
        let mut appended = 0u64;
        let mut in_chunk = 0u64;
        for event in events {
            line::write(lines, event);
            lines.push(b'\n');
            in_chunk += 1;
            if lines.len() >= WRITE_CHUNK {
                put(&mut open.file, lines, lead, &mut self.torn)
                    .map_err(|(whole, e)| (appended + whole, e))?;
                appended += in_chunk;
                in_chunk = 0;
                lines.clear();
                lead = 0;
            }
        }
        if !lines.is_empty() {
            put(&mut open.file, lines, lead, &mut self.torn)
                .map_err(|(whole, e)| (appended + whole, e))?;
        }
        Ok(())
    }

    /// One `stat` of `PATH` per batch: whether it is still the open file
    /// (else open `PATH` anew) and whether it has reached its bound (then
    /// rotate). The size is the file's, so lines others append to it
    /// (alert transitions) count too.
    fn before_write(&mut self) -> io::Result<()> {
        let meta = match fs::metadata(&self.log.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.file = None;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        if self
            .file
            .as_ref()
            .is_some_and(|open| open.id != file_id(&meta))
        {
            self.file = None;
        }
        if self.log.rotate_bytes == 0 || meta.len() < self.next_rotation_at {
            return Ok(());
        }
        self.file = None;
        match self.rotate() {
            Ok(()) => {
                self.rotations += 1;
                self.next_rotation_at = self.log.rotate_bytes;
                tracing::info!(
                    path = %self.log.path.display(),
                    bytes = meta.len(),
                    keep = self.log.keep,
                    "rotated the JSONL log"
                );
                Ok(())
            }
            Err(e) => {
                self.next_rotation_at = meta.len().saturating_add(self.log.rotate_bytes);
                Err(e)
            }
        }
    }

    /// `PATH.keep-1` → `PATH.keep` … `PATH` → `PATH.1` (a rename replaces
    /// its target, which deletes the oldest); with `keep = 0`, `PATH` is
    /// deleted.
    fn rotate(&self) -> io::Result<()> {
        if self.log.keep == 0 {
            return ignore_missing(fs::remove_file(&self.log.path));
        }
        for n in (1..self.log.keep).rev() {
            ignore_missing(fs::rename(self.log.rotated(n), self.log.rotated(n + 1)))?;
        }
        ignore_missing(fs::rename(&self.log.path, self.log.rotated(1)))
    }
}

fn ignore_missing(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// One write of whole lines (after `lead` bytes that end a torn one); on
/// failure, how many of them are whole in the file (counted then only: the
/// caller knows how many lines a chunk it filled holds). `torn` is set
/// while it may have written part of them.
fn put(
    file: &mut File,
    lines: &[u8],
    lead: usize,
    torn: &mut bool,
) -> Result<(), (u64, io::Error)> {
    let whole = |bytes: &[u8]| bytes.get(lead..).map_or(0, |b| newlines(b) as u64);
    *torn = true;
    let mut done = 0;
    while done < lines.len() {
        match file.write(&lines[done..]) {
            Ok(0) => return Err((whole(&lines[..done]), io::ErrorKind::WriteZero.into())),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((whole(&lines[..done]), e)),
        }
    }
    *torn = false;
    Ok(())
}

/// The newlines in `bytes`.
fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// Whether the file at `path` ends inside a line (a write that failed
/// partway); `None` when its last byte cannot be read.
fn ends_mid_line(path: &std::path::Path) -> Option<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let last = || -> io::Result<Option<u8>> {
        let mut f = File::open(path)?;
        if f.metadata()?.len() == 0 {
            return Ok(None);
        }
        f.seek(SeekFrom::End(-1))?;
        let mut b = [0u8];
        f.read_exact(&mut b)?;
        Ok(Some(b[0]))
    };
    match last() {
        Ok(None) => Some(false),
        Ok(Some(b)) => Some(b != b'\n'),
        Err(_) => None,
    }
}

#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Elsewhere a file is not told apart from its replacement: only the size
/// bound applies.
#[cfg(not(unix))]
fn file_id(_meta: &fs::Metadata) -> FileId {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::event::ToolCallRecord;

    fn call(n: u64) -> Event {
        Event::ToolCall(ToolCallRecord {
            threaded: false,
            request_id: format!("r{n}"),
            session_id: "s1".into(),
            provider: "openai".into(),
            model: Some("gpt".into()),
            response_id: None,
            dialect: None,
            call_index: 0,
            call_id: format!("c{n}"),
            tool: "search".into(),
            arguments_bytes: 12,
            at_ms: n as i64,
            turn: None,
        })
    }

    /// The `at_ms` of every line of `path` (empty if it does not exist).
    fn lines(path: &Path) -> Vec<i64> {
        let Ok(text) = fs::read_to_string(path) else {
            return vec![];
        };
        text.lines()
            .map(|l| match serde_json::from_str::<Event>(l).unwrap() {
                Event::ToolCall(c) => c.at_ms,
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_claimed_log_cannot_be_claimed_again_until_the_claim_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let log = JsonlLog::unbounded(dir.path().join("events.jsonl"));
        let claim = log.claim().unwrap();
        assert!(claim.is_locked());
        assert!(log.path.exists(), "the live file is created");
        let err = log.claim().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ResourceBusy);
        assert!(err.to_string().contains("events.jsonl.lock"), "{err}");
        drop(claim);
        let _again = log.claim().unwrap();
        let missing = JsonlLog::unbounded(dir.path().join("no-such-dir").join("e.jsonl"));
        assert_eq!(missing.claim().unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_log_whose_lock_cannot_be_taken_is_claimed_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let log = JsonlLog::unbounded(dir.path().join("events.jsonl"));
        // `PATH.lock` a directory: it cannot be opened for writing, as in a
        // directory where only the log itself may be written.
        fs::create_dir(log.lock_path()).unwrap();
        let claim = log.claim().unwrap();
        assert!(!claim.is_locked());
        assert!(log.path.exists());
        let _second = log.claim().unwrap();
    }

    /// Another writer appending whole lines to the same file (the alert
    /// task, one write per line) never lands inside one of the sink's
    /// lines, however large its batches: the sink writes whole lines only.
    #[test]
    fn lines_appended_by_another_writer_stay_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut sink = JsonlSink::new(JsonlLog::unbounded(&path));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let other = {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let line =
                        format!("{}\n", serde_json::to_string(&call(1_000_000 + n)).unwrap());
                    let mut f = OpenOptions::new()
                        .append(true)
                        .create(true)
                        .open(&path)
                        .unwrap();
                    f.write_all(line.as_bytes()).unwrap();
                    n += 1;
                }
                n
            })
        };
        // Batches of ~300 KB: several writes each.
        let batch: Vec<Event> = (0..1500).map(call).collect();
        for _ in 0..40 {
            sink.write(batch.iter()).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let others = other.join().unwrap();
        let got = lines(&path);
        assert_eq!(got.len() as u64, 40 * 1500 + others);
    }

    /// After a write that failed partway, the next batch ends the torn
    /// line first: its own first line stays whole.
    #[test]
    fn a_torn_line_is_ended_before_the_next_batch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut sink = JsonlSink::new(JsonlLog::unbounded(&path));
        sink.write([call(1)].iter()).unwrap();
        OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"type\":\"tool_ca")
            .unwrap();
        sink.torn = true;
        sink.write([call(2)].iter()).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert_eq!(rows[1], "{\"type\":\"tool_ca");
        assert!(serde_json::from_str::<Event>(rows[2]).is_ok(), "{text}");
        // A write that failed before writing anything adds no empty line.
        sink.torn = true;
        sink.write([call(3)].iter()).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 4);
    }

    /// A log left ending inside a line by an earlier run (a write cut
    /// short by a full disk, then a restart; `kill -9` in the middle of a
    /// write) is ended with a newline before the first batch of a new
    /// sink: that batch's first line stays whole, and was glued to the
    /// torn one (both lost to a reader) before.
    #[test]
    fn a_log_torn_before_this_run_is_ended_before_its_first_batch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut earlier = serde_json::to_vec(&call(1)).unwrap();
        earlier.extend_from_slice(b"\n{\"type\":\"tool_ca");
        fs::write(&path, &earlier).unwrap();
        let mut sink = JsonlSink::new(JsonlLog::unbounded(&path));
        sink.write([call(2), call(3)].iter()).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert_eq!(rows[1], "{\"type\":\"tool_ca");
        for row in [rows[2], rows[3]] {
            assert!(serde_json::from_str::<Event>(row).is_ok(), "{text}");
        }
        // A whole log, or an empty one, gets no empty line.
        let mut again = JsonlSink::new(JsonlLog::unbounded(&path));
        again.write([call(4)].iter()).unwrap();
        let empty = dir.path().join("empty.jsonl");
        fs::write(&empty, b"").unwrap();
        JsonlSink::new(JsonlLog::unbounded(&empty))
            .write([call(5)].iter())
            .unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 5);
        assert_eq!(lines(&empty), [5]);
    }

    /// A line appended beside the recorder (an alert's) after a torn one
    /// starts a line of its own; a whole, empty or missing log gets no
    /// empty line.
    #[test]
    fn a_line_appended_after_a_torn_one_starts_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        fs::write(&path, b"{\"type\":\"tool_call\"}\n{\"type\":\"tool_ca").unwrap();
        let log = JsonlLog::unbounded(&path);
        log.append_line(b"{\"type\":\"alert\"}\n").unwrap();
        log.append_line(b"{\"type\":\"alert\",\"seq\":2}\n")
            .unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\"type\":\"tool_call\"}\n{\"type\":\"tool_ca\n\
             {\"type\":\"alert\"}\n{\"type\":\"alert\",\"seq\":2}\n"
        );
        for name in ["empty.jsonl", "missing.jsonl"] {
            let path = dir.path().join(name);
            if name == "empty.jsonl" {
                fs::write(&path, b"").unwrap();
            }
            JsonlLog::unbounded(&path).append_line(b"{}\n").unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n", "{name}");
        }
    }

    #[test]
    fn appends_one_tagged_line_per_event() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut sink = JsonlSink::new(JsonlLog::unbounded(&path));
        sink.write([&call(1)].into_iter()).unwrap();
        sink.write([&call(2), &call(3)].into_iter()).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["type"], "tool_call");
        assert_eq!(first["tool"], "search");
        assert_eq!(lines(&path), [1, 2, 3]);
        assert_eq!(sink.rotations(), 0);
    }

    #[test]
    fn a_full_file_is_rotated_between_batches_and_only_keep_files_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let line_len = serde_json::to_string(&call(10)).unwrap().len() as u64 + 1;
        // Three batches of two lines fill a file.
        let log = JsonlLog {
            path: path.clone(),
            rotate_bytes: line_len * 5 + 1,
            keep: 2,
        };
        let mut sink = JsonlSink::new(log.clone());
        for b in 0..14u64 {
            let (x, y) = (call(10 + 2 * b), call(11 + 2 * b));
            sink.write([&x, &y].into_iter()).unwrap();
        }
        // 28 lines: four full files of six, the live one holds the last four.
        assert_eq!(sink.rotations(), 4);
        assert_eq!(lines(&path), [34, 35, 36, 37]);
        assert_eq!(lines(&log.rotated(1)), (28..34).collect::<Vec<_>>());
        assert_eq!(lines(&log.rotated(2)), (22..28).collect::<Vec<_>>());
        assert!(!log.rotated(3).exists(), "only two rotated files are kept");
        for n in [1, 2] {
            let len = fs::metadata(log.rotated(n)).unwrap().len();
            assert!(len >= log.rotate_bytes && len < log.rotate_bytes + 2 * line_len);
        }
    }

    /// Lines another writer appends (the alerts' [`JsonlLog::append_line`])
    /// count towards the bound: the file they fill is rotated before the
    /// recorder's next batch, with them in it, and the live file starts
    /// anew. They are not written through the sink on purpose: the
    /// recorder's queue drops under overload, when `events_dropped` fires.
    #[test]
    fn lines_appended_beside_the_sink_are_rotated_with_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let line_len = serde_json::to_string(&call(1)).unwrap().len() as u64 + 1;
        let log = JsonlLog {
            path: path.clone(),
            rotate_bytes: line_len + 10,
            keep: 1,
        };
        let mut sink = JsonlSink::new(log.clone());
        sink.write([&call(1)].into_iter()).unwrap();
        let alert = format!("{{\"type\":\"alert\",\"pad\":\"{}\"}}\n", "x".repeat(80));
        log.append_line(alert.as_bytes()).unwrap();
        assert_eq!(sink.rotations(), 0);
        sink.write([&call(2)].into_iter()).unwrap();
        assert_eq!(sink.rotations(), 1, "the alert's line filled the file");
        let rotated = fs::read_to_string(log.rotated(1)).unwrap();
        assert!(rotated.ends_with(&alert), "{rotated}");
        assert_eq!(lines(&path), [2]);
    }

    #[test]
    fn with_keep_zero_a_full_file_is_deleted_and_zero_bytes_never_rotates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut sink = JsonlSink::new(JsonlLog {
            path: path.clone(),
            rotate_bytes: 1,
            keep: 0,
        });
        sink.write([&call(1)].into_iter()).unwrap();
        sink.write([&call(2)].into_iter()).unwrap();
        assert_eq!(lines(&path), [2]);
        assert_eq!(sink.rotations(), 1);
        assert!(!JsonlLog::unbounded(&path).rotated(1).exists());

        let unbounded = dir.path().join("never.jsonl");
        let mut never = JsonlSink::new(JsonlLog::unbounded(&unbounded));
        for n in 0..100 {
            never.write([&call(n)].into_iter()).unwrap();
        }
        assert_eq!(never.rotations(), 0);
        assert_eq!(lines(&unbounded).len(), 100);
    }

    #[test]
    fn a_file_renamed_or_deleted_by_someone_else_is_followed_by_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let moved = dir.path().join("events.jsonl-20261127");
        let mut sink = JsonlSink::new(JsonlLog::unbounded(&path));
        sink.write([&call(1)].into_iter()).unwrap();
        // logrotate's default: rename; the next batch starts a new file.
        fs::rename(&path, &moved).unwrap();
        sink.write([&call(2)].into_iter()).unwrap();
        sink.write([&call(3)].into_iter()).unwrap();
        assert_eq!(lines(&moved), [1]);
        assert_eq!(lines(&path), [2, 3]);
        // Deleted: the next batch creates it again.
        fs::remove_file(&path).unwrap();
        sink.write([&call(4)].into_iter()).unwrap();
        sink.write([&call(5)].into_iter()).unwrap();
        assert_eq!(lines(&path), [4, 5]);
        // Truncated in place (copytruncate): appended from the new end.
        fs::write(&path, b"").unwrap();
        sink.write([&call(6)].into_iter()).unwrap();
        assert_eq!(lines(&path), [6]);
        assert_eq!(sink.rotations(), 0);
    }

    /// A batch whose append fails partway (the file reaches the size it
    /// may have, as on a disk that fills up) loses only the lines that are
    /// not whole in the file, not the whole batch: the count of lines lost
    /// said all of them were. Run in a child process whose file size limit
    /// is 64 KiB (`ulimit -f`, with `SIGXFSZ` ignored so that a write past
    /// it fails with `EFBIG` instead of ending the process).
    #[cfg(unix)]
    #[test]
    fn a_write_that_fails_partway_says_how_many_lines_are_in_the_file() {
        const CHILD: &str = "TOOLWARDEN_TEST_JSONL_FSIZE_CHILD";
        const NAME: &str =
            "jsonl::tests::a_write_that_fails_partway_says_how_many_lines_are_in_the_file";
        if std::env::var_os(CHILD).is_none() {
            let exe = std::env::current_exe().unwrap();
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg("trap '' XFSZ; ulimit -f 128 && exec \"$0\" --exact \"$1\" --test-threads 1")
                .arg(exe)
                .arg(NAME)
                .env(CHILD, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{text}");
            assert!(text.contains("1 passed"), "the child ran the test: {text}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut sink = JsonlSink::new(JsonlLog::unbounded(&path));
        // About 300 KiB of lines, in chunks of 64 KiB: the limit falls in
        // the middle of one.
        let batch: Vec<Event> = (0..1500).map(call).collect();
        let JsonlError::Append { appended, .. } = sink.write(batch.iter()).unwrap_err() else {
            panic!("the append fails");
        };
        let text = fs::read(&path).unwrap();
        let whole = text.iter().filter(|&&b| b == b'\n').count() as u64;
        assert!(whole > 0 && whole < 1500, "{whole}");
        assert_eq!(appended, whole, "the lines whole in the file");
    }

    #[test]
    fn a_rotated_name_that_cannot_be_replaced_is_an_error_and_writing_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let log = JsonlLog {
            path: path.clone(),
            rotate_bytes: 1,
            keep: 1,
        };
        // A non-empty directory where `PATH.1` should go: the rename fails.
        fs::create_dir(log.rotated(1)).unwrap();
        fs::write(log.rotated(1).join("x"), b"x").unwrap();
        let mut sink = JsonlSink::new(log);
        sink.write([&call(1)].into_iter()).unwrap();
        let failed = sink.write([&call(2)].into_iter()).unwrap_err();
        assert!(matches!(failed, JsonlError::Rotate(_)), "{failed:?}");
        // Tried again once the file has grown by another `rotate_bytes`.
        let failed = sink.write([&call(3)].into_iter()).unwrap_err();
        assert!(matches!(failed, JsonlError::Rotate(_)), "{failed:?}");
        assert_eq!(
            lines(&path),
            [1, 2, 3],
            "nothing is lost while rotation fails"
        );
        assert_eq!(sink.rotations(), 0);
    }
}
