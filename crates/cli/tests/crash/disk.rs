//! The database's file system refusing writes during load: full (a tmpfs
//! filled up) or read-only (file modes, the gateway unprivileged).

use super::*;

/// Whether this process may mount a tmpfs (root).
fn can_mount() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A tmpfs mounted at a temporary directory, unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(ok.success(), "mount a tmpfs at {}", dir.path().display());
        Tmpfs(dir)
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// Fills the file system of `path` with a file there until it is full.
fn fill_up(path: &Path) {
    let mut f = std::fs::File::create(path).expect("create the filler");
    let block = vec![0u8; 64 * 1024];
    loop {
        if f.write_all(&block).is_err() {
            break;
        }
    }
    let _ = f.sync_all();
}

#[test]
fn a_full_disk_during_load_keeps_the_proxy_serving_and_recording_resumes() {
    if !can_mount() {
        eprintln!("SKIPPED: mounting a small tmpfs needs root");
        return;
    }
    let mock = mock();
    let fs = Tmpfs::mount("16m");
    let db = fs.path().join("tw.db");
    let filler = fs.path().join("filler");
    let gw = Served::start(fs.path(), &db, &mock.url, &[]);
    let (stop, answered) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(Answered::default()),
    );
    let clients = load(gw.addr, "f", 2, &stop, &answered);
    std::thread::sleep(Duration::from_millis(500));
    fill_up(&filler);
    let before_full = answered.0.lock().unwrap().len();
    // Load against the full disk until writes have failed for a while.
    let errors = failed_writes(gw.addr);
    let served_while_full = answered.0.lock().unwrap().len();
    assert!(errors > 0, "no write failed on a full disk");
    assert!(
        served_while_full > before_full + 20,
        "the proxy stopped serving on a full disk: {before_full} answered before, {served_while_full} after"
    );
    std::fs::remove_file(&filler).expect("make room");
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    // Recording resumes: the backlog is written within the retry backoff.
    let (written, dropped, errors, backlog) = drained(gw.addr);
    let answered = answered.0.lock().unwrap().clone();
    eprintln!(
        "full disk: {} requests answered ({served_while_full} by the end of the full spell), \
         {written} events written, {dropped} dropped, {errors} failed writes, backlog {backlog}",
        answered.len()
    );
    assert_eq!(
        backlog, 0,
        "the backlog was not written once there was room"
    );
    assert_eq!(dropped, 0, "events dropped within the backlog's bound");
    let mut gw = gw;
    gw.signal("TERM");
    assert!(
        gw.wait(Duration::from_secs(10))
            .is_some_and(|s| s.success())
    );
    let (check, recorded) = read_db(&db);
    assert_eq!(check, "ok");
    let lost = answered
        .iter()
        .filter(|(s, _)| !recorded.contains(s))
        .count();
    assert_eq!(
        lost, 0,
        "answered requests not recorded after the disk had room"
    );
}

/// `toolwarden serve` as the unprivileged user 65534 (`setpriv`; root
/// ignores file modes), on `db` in `dir` (handed to that user).
fn serve_unprivileged(dir: &Path, db: &Path, upstream: &str) -> Served {
    let ok = Command::new("chown")
        .args(["65534:65534"])
        .arg(dir)
        .status()
        .expect("run chown");
    assert!(ok.success(), "chown {}", dir.display());
    let database = format!("sqlite://{}", db.display());
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_toolwarden"))
        .current_dir(dir)
        .args(["serve", "--listen", "127.0.0.1:0", "--database", &database])
        .args(["--anthropic-upstream", upstream])
        // One pooled connection: the one replaced after a failed batch.
        .args(["--database-max-connections", "1"]);
    Served::spawn(command)
}

/// `chmod mode` on the database file, its WAL and shared-memory files and
/// their directory.
fn chmod_all(dir: &Path, db: &Path, file_mode: &str, dir_mode: &str) {
    for suffix in ["", "-wal", "-shm"] {
        let path = format!("{}{suffix}", db.display());
        if Path::new(&path).exists() {
            let ok = Command::new("chmod").args([file_mode, &path]).status();
            assert!(ok.is_ok_and(|s| s.success()), "chmod {path}");
        }
    }
    let ok = Command::new("chmod").arg(dir_mode).arg(dir).status();
    assert!(ok.is_ok_and(|s| s.success()), "chmod {}", dir.display());
}

/// Issue 14: the database file made read-only during load. A tmpfs cannot
/// be remounted read-only while SQLite holds the file open for writing
/// (`mount: mount point is busy`), so this is the read-only file of an
/// unprivileged gateway: its connections are reopened after a failed
/// batch (here: another process holds the write lock beyond the busy
/// timeout) and open the file read-only. The proxy keeps serving, the
/// failed writes are counted and retried (a read-only file is not a
/// refusal of the events: before this test each was written alone and
/// dropped), the backlog holds the events, and once the file is writable
/// again recording resumes: nothing dropped, every answered request recorded.
#[test]
fn a_read_only_database_during_load_keeps_the_proxy_serving_and_recording_resumes() {
    if !can_mount() {
        eprintln!("SKIPPED: running the gateway as another user needs root");
        return;
    }
    let mock = mock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tw.db");
    let gw = serve_unprivileged(dir.path(), &db, &mock.url);
    let (stop, answered) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(Answered::default()),
    );
    let clients = load(gw.addr, "ro", 2, &stop, &answered);
    std::thread::sleep(Duration::from_millis(500));
    chmod_all(dir.path(), &db, "0444", "0555");
    // Another writer beyond the busy timeout (5 s): the batch in hand fails
    // and its connection is replaced by one opened on the read-only file.
    let lock = WriteLock::take(&db);
    std::thread::sleep(Duration::from_millis(5500));
    lock.release();
    let before = answered.0.lock().unwrap().len();
    let errors = failed_writes(gw.addr);
    let served_read_only = answered.0.lock().unwrap().len();
    assert!(errors > 0, "no write failed on a read-only database");
    assert!(
        served_read_only > before + 20,
        "the proxy stopped serving: {before} answered before, {served_read_only} after"
    );
    chmod_all(dir.path(), &db, "0644", "0755");
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let (written, dropped, errors, backlog) = drained(gw.addr);
    // New events after it is writable again.
    for k in 0..5 {
        assert_eq!(post(gw.addr, &format!("after-{k}")), Some(200));
    }
    let answered = answered.0.lock().unwrap().clone();
    eprintln!(
        "read-only database: {} requests answered ({served_read_only} by the end of the \
         read-only spell), {written} events written, {dropped} dropped, {errors} failed \
         writes, backlog {backlog}",
        answered.len()
    );
    assert_eq!(backlog, 0, "the backlog was not written once writable");
    assert_eq!(dropped, 0, "events dropped within the backlog's bound");
    let mut gw = gw;
    gw.signal("TERM");
    assert!(
        gw.wait(Duration::from_secs(10))
            .is_some_and(|s| s.success())
    );
    let (check, recorded) = read_db(&db);
    assert_eq!(check, "ok");
    let lost = answered
        .iter()
        .filter(|(s, _)| !recorded.contains(s))
        .count();
    assert_eq!(lost, 0, "answered requests not recorded once writable");
    for k in 0..5 {
        assert!(
            recorded.contains(&format!("after-{k}")),
            "after-{k} not recorded"
        );
    }
}

/// Failed writes, once the load has gone on against the refusing file
/// system until writes have failed for a while (at least 3 failures and
/// 2 s, at most 8 s).
fn failed_writes(addr: SocketAddr) -> u64 {
    let since = Instant::now();
    let mut errors = 0;
    while since.elapsed() < Duration::from_secs(8) {
        std::thread::sleep(Duration::from_millis(200));
        errors = recorder(addr).2;
        if errors >= 3 && since.elapsed() > Duration::from_secs(2) {
            break;
        }
    }
    errors
}

/// The recorder's counters once its backlog is written (at most 15 s).
fn drained(addr: SocketAddr) -> (u64, u64, u64, u64) {
    let since = Instant::now();
    loop {
        let r = recorder(addr);
        if r.3 == 0 || since.elapsed() > Duration::from_secs(15) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
