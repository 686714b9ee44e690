//! The gateway in its own process, so its CPU time and memory come from the
//! kernel's accounting of that process alone.
//!
//! The bench re-executes itself with `--serve-gateway`: the child starts
//! `Gateway::start` (recording to SQLite and JSONL), prints
//! `listening on ADDR`, and shuts down gracefully when its stdin closes.

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::Path,
    process::{Child, ChildStdin, Command, Stdio},
    time::Duration,
};

use toolwarden_gateway::{Config, Gateway};

/// The floors measured beside the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayKind {
    /// Blocking sockets, one thread per direction: the fewest syscalls.
    Blocking,
    /// `copy_bidirectional` on one event loop.
    Tcp,
    /// hyper in, hyper out.
    Http,
}

impl RelayKind {
    pub const ALL: [RelayKind; 3] = [RelayKind::Blocking, RelayKind::Tcp, RelayKind::Http];

    pub fn flag(self) -> &'static str {
        match self {
            RelayKind::Blocking => "--serve-blocking-relay",
            RelayKind::Tcp => "--serve-relay",
            RelayKind::Http => "--serve-http-relay",
        }
    }

    pub fn from_flag(flag: &str) -> Option<RelayKind> {
        RelayKind::ALL.into_iter().find(|k| k.flag() == flag)
    }
}

/// The binary run as the gateway child by the benches beside
/// `toolwarden-bench` (`ws-bench`, `voice-bench`): `TOOLWARDEN_BENCH_CHILD`
/// if set (another build's `toolwarden-bench`, whose `--serve-gateway` is
/// the same, to measure its gateway with this bench), else the
/// `toolwarden-bench` beside the running binary.
#[allow(dead_code)] // the benches in `src/bin`, not `toolwarden-bench` itself
pub fn sibling_gateway_exe() -> Result<std::path::PathBuf, String> {
    if let Some(path) = std::env::var_os("TOOLWARDEN_BENCH_CHILD").filter(|p| !p.is_empty()) {
        return Ok(path.into());
    }
    Ok(std::env::current_exe()
        .map_err(|e| format!("current exe: {e}"))?
        .with_file_name("toolwarden-bench"))
}

/// A running gateway child.
#[derive(Debug)]
pub struct GatewayChild {
    child: Child,
    stdin: Option<ChildStdin>,
    pub addr: SocketAddr,
    ticks_per_sec: f64,
}

impl GatewayChild {
    /// Start `exe --serve-gateway …` and wait for its address.
    pub fn spawn(
        exe: &Path,
        upstream: &str,
        database: &str,
        jsonl: &str,
    ) -> Result<GatewayChild, String> {
        Self::spawn_with(exe, &["--serve-gateway", upstream, database, jsonl])
    }

    /// The same gateway without recording (no database, no JSONL), on
    /// `workers` workers: those of the recording gateway it is compared
    /// with, so that the difference is recording's alone (left to itself it
    /// would take the default without a database, one more).
    pub fn spawn_unrecorded(
        exe: &Path,
        upstream: &str,
        workers: usize,
    ) -> Result<GatewayChild, String> {
        let workers = workers.to_string();
        Self::spawn_with_env(
            exe,
            &["--serve-gateway", upstream, "-", "-"],
            &[("TOOLWARDEN_WORKERS", &workers)],
        )
    }

    /// [`GatewayChild::spawn`] with alerts and OTLP export `off`, or
    /// `on:WEBHOOK_URL,OTLP_ENDPOINT` (alerts evaluated every second).
    pub fn spawn_alerts(
        exe: &Path,
        upstream: &str,
        database: &str,
        jsonl: &str,
        alerts: &str,
    ) -> Result<GatewayChild, String> {
        Self::spawn_with(exe, &["--serve-gateway", upstream, database, jsonl, alerts])
    }

    /// The recording gateway serving HTTPS (`tls`) or plain HTTP, whatever
    /// `TOOLWARDEN_BENCH_TLS` says for the others.
    pub fn spawn_serving(
        exe: &Path,
        upstream: &str,
        database: &str,
        jsonl: &str,
        tls: bool,
    ) -> Result<GatewayChild, String> {
        Self::spawn_with_env(
            exe,
            &["--serve-gateway", upstream, database, jsonl],
            &[(crate::tls::VAR, if tls { "1" } else { "0" })],
        )
    }

    /// Start a floor process relaying to `upstream`.
    pub fn spawn_relay(
        exe: &Path,
        upstream: SocketAddr,
        kind: RelayKind,
    ) -> Result<GatewayChild, String> {
        Self::spawn_with(exe, &[kind.flag(), &upstream.to_string()])
    }

    fn spawn_with(exe: &Path, args: &[&str]) -> Result<GatewayChild, String> {
        Self::spawn_with_env(exe, args, &[])
    }

    fn spawn_with_env(
        exe: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<GatewayChild, String> {
        // `TOOLWARDEN_BENCH_WRAP="valgrind --tool=callgrind …"`: the child
        // runs under that command (a profile of the gateway alone).
        let wrap = std::env::var("TOOLWARDEN_BENCH_WRAP").unwrap_or_default();
        let mut wrap = wrap.split_whitespace();
        let mut command = match wrap.next() {
            Some(program) => {
                let mut c = Command::new(program);
                c.args(wrap).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        let mut child = command
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the gateway child {}: {e}", exe.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| format!("reading the gateway child's address: {e}"))?;
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| format!("the gateway child did not start: {line:?}"))?;
        let stdin = child.stdin.take();
        let tls = env
            .iter()
            .find(|(k, _)| *k == crate::tls::VAR)
            .map_or_else(crate::tls::on, |(_, v)| *v == "1");
        if args.first() == Some(&"--serve-gateway") && tls {
            crate::tls::served_at(addr);
        }
        Ok(GatewayChild {
            child,
            stdin,
            addr,
            ticks_per_sec: clock_ticks(),
        })
    }

    /// user + system CPU seconds the child has used so far (all threads).
    pub fn cpu_secs(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the `(comm)`: state is field 3; utime 14, stime 15.
        let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        let get = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (get(11) + get(12)) / self.ticks_per_sec
    }

    /// CPU seconds the child has run so far, from the scheduler's own
    /// accounting in ns, not the clock-tick sampling of
    /// [`GatewayChild::cpu_secs`]: its process CPU clock
    /// ([`process_cpu_secs`]: every thread's time, those that ended
    /// included, as floor 0's threads per connection do), else its live
    /// threads' ([`threads_cpu_secs`]), else `cpu_secs`.
    pub fn cpu_secs_fine(&self) -> f64 {
        let pid = self.child.id();
        process_cpu_secs(pid)
            .or_else(|| threads_cpu_secs(&pid.to_string()))
            .unwrap_or_else(|| self.cpu_secs())
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size in bytes.
    pub fn rss_bytes(&self) -> u64 {
        self.status_kb("VmRSS:")
    }

    /// The resident set's anonymous and file-backed parts, in bytes: a
    /// binary's mapped pages count in the second, and how many of them are
    /// resident follows the page cache (a freshly written binary's pages
    /// are all cached, and a fault maps its cached neighbours too).
    pub fn rss_anon_file_bytes(&self) -> (u64, u64) {
        (self.status_kb("RssAnon:"), self.status_kb("RssFile:"))
    }

    /// Peak resident set size in bytes.
    pub fn peak_rss_bytes(&self) -> u64 {
        self.status_kb("VmHWM:")
    }

    fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0)
    }

    /// Close stdin (graceful shutdown: drain the recorder) and wait.
    pub fn stop(mut self) {
        self.close_and_wait(STOP_PATIENCE);
    }

    /// Closes stdin, waits up to `patience` for the child to exit, then
    /// kills it.
    fn close_and_wait(&mut self, patience: Duration) {
        drop(self.stdin.take());
        let step = Duration::from_millis(50);
        let mut waited = Duration::ZERO;
        while waited < patience {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(step);
            waited += step;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long [`GatewayChild::stop`] waits for the recorder's drain.
const STOP_PATIENCE: Duration = Duration::from_secs(10);

/// How long a child dropped without [`GatewayChild::stop`] (the floors)
/// gets to exit on its own: long enough for a profiler it runs under
/// (`TOOLWARDEN_BENCH_WRAP="perf stat …"`) to write its report, which a
/// kill would lose.
const DROP_PATIENCE: Duration = Duration::from_secs(3);

impl Drop for GatewayChild {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            self.close_and_wait(DROP_PATIENCE);
        }
    }
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The floor any proxy pays on this machine: a plain TCP relay (no HTTP,
/// no parsing, no recording) on one single-threaded event loop, as the
/// gateway's workers are; every connection is spliced to `upstream` with
/// `copy_bidirectional`. Serves until stdin closes.
pub async fn serve_relay(upstream: &str) -> Result<(), String> {
    let upstream: SocketAddr = upstream
        .parse()
        .map_err(|e| format!("relay upstream {upstream}: {e}"))?;
    let listener = announced_listener().await?;
    let relay = async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = client.set_nodelay(true);
                if let Ok(mut up) = tokio::net::TcpStream::connect(upstream).await {
                    let _ = up.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut up).await;
                }
            });
        }
    };
    until_stdin_closes(relay).await;
    Ok(())
}

/// The least any proxy can do per request on this machine: blocking
/// sockets, two threads per connection (one per direction), each message
/// moved with one `read` and one `write` of up to 64 KB — no event loop,
/// no `EAGAIN` reads, no HTTP. Serves until stdin closes.
pub fn serve_blocking_relay(upstream: &str) -> Result<(), String> {
    use std::{
        io::{Read, Write},
        net::{TcpListener, TcpStream},
    };

    fn pump(mut from: TcpStream, mut to: TcpStream) {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    }

    let upstream: SocketAddr = upstream
        .parse()
        .map_err(|e| format!("relay upstream {upstream}: {e}"))?;
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("relay bind: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("relay address: {e}"))?;
    println!("listening on {addr}");
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(up) = TcpStream::connect(upstream) else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = up.set_nodelay(true);
            let (Ok(client2), Ok(up2)) = (client.try_clone(), up.try_clone()) else {
                continue;
            };
            std::thread::spawn(move || pump(client, up));
            std::thread::spawn(move || pump(up2, client2));
        }
    });
    block_until_stdin_closes();
    Ok(())
}

/// The floor of an HTTP proxy built as the gateway is: hyper's server (the
/// same auto builder, one event loop) and hyper-util's pooled client, the
/// request and response passed through untouched (no parsing, no
/// recording). Serves until stdin closes.
pub async fn serve_http_relay(upstream: &str) -> Result<(), String> {
    use std::convert::Infallible;

    use hyper::{Request, body::Incoming, service::service_fn};
    use hyper_util::{
        client::legacy::{Client, connect::HttpConnector},
        rt::{TokioExecutor, TokioIo},
        server::conn::auto,
    };

    let listener = announced_listener().await?;
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Client<HttpConnector, Incoming> =
        Client::builder(TokioExecutor::new()).build(connector);
    let base = format!("http://{upstream}");
    let relay = async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let client = client.clone();
            let base = base.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let client = client.clone();
                    let uri = format!(
                        "{base}{}",
                        req.uri().path_and_query().map_or("/", |p| p.as_str())
                    );
                    async move {
                        let (mut parts, body) = req.into_parts();
                        parts.uri = uri.parse().unwrap_or_default();
                        parts.headers.remove(http::header::HOST);
                        let response = match client.request(Request::from_parts(parts, body)).await
                        {
                            Ok(r) => r.map(http_body_util::Either::Left),
                            Err(e) => {
                                let mut r = hyper::Response::new(http_body_util::Either::Right(
                                    http_body_util::Full::new(bytes::Bytes::from(e.to_string())),
                                ));
                                *r.status_mut() = http::StatusCode::BAD_GATEWAY;
                                r
                            }
                        };
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    };
    until_stdin_closes(relay).await;
    Ok(())
}

/// A listener on a free loopback port, its address printed for the parent.
async fn announced_listener() -> Result<tokio::net::TcpListener, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("relay bind: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("relay address: {e}"))?;
    println!("listening on {addr}");
    Ok(listener)
}

/// Run `serving` until the parent closes our stdin.
async fn until_stdin_closes(serving: impl std::future::Future<Output = ()>) {
    tokio::select! {
        _ = serving => {}
        _ = wait_for_stdin_eof() => {}
    }
}

async fn wait_for_stdin_eof() {
    let _ = tokio::task::spawn_blocking(block_until_stdin_closes).await;
}

/// Read stdin until the parent closes it (or dies).
fn block_until_stdin_closes() {
    let mut sink = String::new();
    while std::io::stdin()
        .read_line(&mut sink)
        .map(|n| n > 0)
        .unwrap_or(false)
    {
        sink.clear();
    }
}

/// The gateway child's proxy workers, as `toolwarden serve` picks them:
/// `TOOLWARDEN_WORKERS`, else one per CPU, less one when recording to a
/// database ([`Config::default_workers`]).
pub fn gateway_workers(recording: bool) -> usize {
    std::env::var("TOOLWARDEN_WORKERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| Config::default_workers(recording))
}

/// The child side: serve until stdin closes.
pub async fn serve(
    upstream: &str,
    database: &str,
    jsonl: &str,
    alerts: Option<&str>,
) -> Result<(), String> {
    let mut config = Config::for_tests(upstream);
    // `TOOLWARDEN_BENCH_TLS=1`: the gateway serves HTTPS (the test
    // certificate), its clients connect over TLS.
    config.tls = crate::tls::server()?;
    // Issue 19: `off`, or `on[@INTERVAL_MS]:WEBHOOK,OTLP` (alerts every
    // second unless said, OTLP export).
    match alerts {
        Some("off") => config.alerts.enabled = false,
        Some(on) => {
            let usage = "alerts: expected off or on[@INTERVAL_MS]:WEBHOOK,[grpc+][gzip+]OTLP";
            let (every, urls) = on
                .strip_prefix("on")
                .and_then(|rest| rest.split_once(':'))
                .ok_or(usage)?;
            let interval_ms = match every.strip_prefix('@') {
                Some(ms) => ms.parse::<u64>().map_err(|_| usage)?,
                None if every.is_empty() => 1000,
                None => return Err(usage.into()),
            };
            let (hook, otlp) = urls.split_once(',').ok_or(usage)?;
            config.alerts.enabled = true;
            config.alerts.interval = Duration::from_millis(interval_ms);
            config.alerts.webhooks = vec![hook.parse().map_err(|e| format!("webhook: {e}"))?];
            // `gzip+URL`: bodies gzipped; `grpc+URL`: the same collector
            // spoken to over OTLP/gRPC (either prefix first).
            let (mut protocol, mut compression, mut otlp) = (
                toolwarden_gateway::OtlpProtocol::HttpProtobuf,
                toolwarden_gateway::OtlpCompression::None,
                otlp,
            );
            loop {
                if let Some(rest) = otlp.strip_prefix("grpc+") {
                    (protocol, otlp) = (toolwarden_gateway::OtlpProtocol::Grpc, rest);
                } else if let Some(rest) = otlp.strip_prefix("gzip+") {
                    (compression, otlp) = (toolwarden_gateway::OtlpCompression::Gzip, rest);
                } else {
                    break;
                }
            }
            let mut otlp = toolwarden_gateway::OtlpConfig::parse_with(
                protocol,
                otlp,
                toolwarden_gateway::EndpointKind::Base,
                None,
            )?;
            otlp.compression = compression;
            config.otlp = Some(otlp);
        }
        None => {}
    }
    // "-": no recording (to measure what recording costs).
    config.database = (database != "-").then(|| database.to_string());
    // As `toolwarden serve` reads them (`fix` by default).
    config.workers = gateway_workers(config.database.is_some());
    if let Some(mode) = std::env::var("TOOLWARDEN_REPAIR")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        config.repair = mode;
    }
    // Issue 14: the memory bounds, retention and the JSONL log's bound as
    // `toolwarden serve` reads them (`TOOLWARDEN_DATABASE_CACHE_KIB`,
    // `TOOLWARDEN_RETENTION_DAYS`, `TOOLWARDEN_JSONL_ROTATE_MIB`, …); the
    // log at the path given ("-": none, whatever the environment says).
    let jsonl_var = (jsonl != "-").then(|| ("TOOLWARDEN_JSONL".to_string(), jsonl.to_string()));
    let settings = toolwarden_gateway::RawConfig::from_env(std::env::vars().chain(jsonl_var))
        .validate()
        .map_err(|e| format!("gateway child: {e}"))?;
    config.memory = settings.memory;
    config.retention = settings.retention;
    config.jsonl = if jsonl == "-" { None } else { settings.jsonl };
    let gw = Gateway::start(config)
        .await
        .map_err(|e| format!("gateway: {e}"))?;
    println!("listening on {}", gw.addr());
    // Wait for the parent to close our stdin (or die).
    wait_for_stdin_eof().await;
    gw.shutdown().await;
    Ok(())
}

/// CPU seconds process `pid` has run so far, all its threads' including
/// those that ended, from its CPU clock (`clock_getcpuclockid`, read with
/// `clock_gettime`: the kernel's `sum_exec_runtime`, in ns); `None` where
/// the clock cannot be had (another user's process, a kernel without it).
pub fn process_cpu_secs(pid: u32) -> Option<f64> {
    let pid = i32::try_from(pid).ok()?;
    let clock = nix::time::clock_getcpuclockid(nix::unistd::Pid::from_raw(pid)).ok()?;
    let t = clock.now().ok()?;
    Some(t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
}

/// CPU seconds the threads of process `pid` (a number, or `self`) have run
/// so far, from the scheduler's own accounting (`se.sum_exec_runtime` of
/// each `/proc/PID/task/*/sched`, in ns); `None` where that is not
/// available. Time of threads that ended is not in it.
pub fn threads_cpu_secs(pid: &str) -> Option<f64> {
    let tasks = task_runtimes(pid)?;
    (!tasks.is_empty()).then(|| tasks.iter().map(|(_, secs)| secs).sum())
}

/// Each live thread of process `pid`: its name and the CPU seconds it has
/// run (`se.sum_exec_runtime`); `None` without `/proc/PID/task`.
fn task_runtimes(pid: &str) -> Option<Vec<(String, f64)>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut out = Vec::new();
    for task in tasks.flatten() {
        let sched = std::fs::read_to_string(task.path().join("sched")).unwrap_or_default();
        let run = sched
            .lines()
            .find_map(|l| l.strip_prefix("se.sum_exec_runtime"))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|v| v.trim().parse::<f64>().ok());
        if let Some(ms) = run {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            out.push((comm.trim_end().to_string(), ms / 1e3));
        }
    }
    Some(out)
}

/// CPU seconds of a gateway's live threads by what they do.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadsCpu {
    /// The proxy workers (`toolwarden-w*`).
    pub proxy: f64,
    /// SQLite's connection threads (sqlx's, one a connection: the
    /// recorder's writer, the checkpointer, the pool's readers).
    pub sqlite: f64,
    /// The rest: the control runtime (the recorder's task, the store's
    /// other tasks, `/api/*`) and the main thread.
    pub control: f64,
}

impl ThreadsCpu {
    /// The gateway `pid`'s live threads' CPU by role; `None` without
    /// `/proc/PID/task`.
    pub fn of(pid: u32) -> Option<ThreadsCpu> {
        let mut by = ThreadsCpu::default();
        for (comm, secs) in task_runtimes(&pid.to_string())? {
            *by.role_mut(&comm) += secs;
        }
        Some(by)
    }

    /// The counter a thread named `comm` adds to.
    fn role_mut(&mut self, comm: &str) -> &mut f64 {
        if comm.starts_with("toolwarden-w") {
            &mut self.proxy
        } else if comm.starts_with("sqlx-sqlite") {
            &mut self.sqlite
        } else {
            &mut self.control
        }
    }

    /// Each role's CPU µs per request from `before` to `self`, over
    /// `requests` requests.
    pub fn per_request_us(self, before: ThreadsCpu, requests: usize) -> ThreadsCpu {
        let per = |a: f64, b: f64| (a - b) * 1e6 / requests.max(1) as f64;
        ThreadsCpu {
            proxy: per(self.proxy, before.proxy),
            sqlite: per(self.sqlite, before.sqlite),
            control: per(self.control, before.control),
        }
    }
}

#[cfg(test)]
mod tests {
    use nix::time::ClockId;

    /// Runs on a thread of its own until that thread has used `secs` of CPU.
    fn burn_on_a_thread(secs: f64) {
        std::thread::spawn(move || {
            let used = || {
                let t = ClockId::CLOCK_THREAD_CPUTIME_ID.now().unwrap();
                t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9
            };
            let start = used();
            while used() - start < secs {
                std::hint::black_box(0u64);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_process_clock_keeps_the_time_of_threads_that_ended() {
        let pid = std::process::id();
        let before = super::process_cpu_secs(pid).expect("this process's CPU clock");
        burn_on_a_thread(0.05);
        let after = super::process_cpu_secs(pid).unwrap();
        assert!(after - before >= 0.05, "{before} -> {after}");
    }

    #[test]
    fn threads_are_told_apart_by_their_names() {
        let mut by = super::ThreadsCpu::default();
        for (comm, secs) in [
            ("toolwarden-w0", 1.0),
            ("toolwarden-w1", 2.0),
            ("sqlx-sqlite-wor", 4.0),
            ("tokio-rt-worker", 8.0),
            ("toolwarden-bench", 16.0),
        ] {
            *by.role_mut(comm) += secs;
        }
        assert_eq!((by.proxy, by.sqlite, by.control), (3.0, 4.0, 24.0));
        let per = by.per_request_us(super::ThreadsCpu::default(), 1_000_000);
        assert_eq!((per.proxy, per.sqlite, per.control), (3.0, 4.0, 24.0));
    }

    #[test]
    fn this_process_has_its_threads_counted() {
        // Read one after the other: this thread ran in between, and the
        // other tests' threads (the harness runs them in parallel) may
        // have exited, taking their time out of the second read (a CI
        // run saw 0.057 s against 0.007 s). A role that dropped threads
        // would fall short every time; a thread's exit, once.
        let mut seen = Vec::new();
        for _ in 0..5 {
            let by = super::ThreadsCpu::of(std::process::id()).expect("/proc/self/task");
            let total = super::threads_cpu_secs("self").unwrap();
            let sum = by.proxy + by.sqlite + by.control;
            if sum > 0.0 && (sum - total).abs() < 0.05 {
                return;
            }
            seen.push((sum, total));
        }
        panic!("the roles' sum against the threads' total, each try: {seen:?}");
    }

    #[test]
    fn no_clock_for_a_process_that_does_not_exist() {
        assert_eq!(super::process_cpu_secs(u32::MAX), None);
        // Past any pid_max (2^22).
        assert_eq!(super::process_cpu_secs(1 << 23), None);
    }
}
