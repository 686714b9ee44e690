//! Webhook delivery: one task and one bounded queue per webhook, off the
//! request path. A notification is a JSON POST (Alertmanager webhook
//! payload or Slack incoming-webhook text), retried with exponential
//! backoff; a full queue drops and counts, a webhook that hangs only
//! delays its own queue. A notification a webhook could not take (every
//! retry failed with a failure that can pass, or its queue was full) is
//! kept in that webhook's [`Book`], one per alert, for the evaluation
//! loop to send again (`renotify`). URLs are never logged (they often
//! hold secrets): only their host.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, atomic::Ordering},
    time::Duration,
};

use bytes::Bytes;
use http::{Request, Uri, header};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolwarden_store::{AlertTransition, utc::rfc3339};

use super::{
    AlertsBoard, NotificationKind,
    config::AlertFormat,
    config::AlertsConfig,
    go_quote::go_quote,
    model_label,
    rules::{RuleName, resolved_for_gone_instance},
};
use crate::upstream::HttpClient;

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The senders of the webhook queues.
#[derive(Debug)]
pub(crate) struct Delivery {
    queues: Vec<Queue>,
    format: AlertFormat,
    board: Arc<AlertsBoard>,
    gateway: String,
}

/// One webhook's queue and what it could not deliver.
#[derive(Debug)]
struct Queue {
    tx: mpsc::Sender<Job>,
    book: Arc<Mutex<Book>>,
}

/// What one webhook owes: at most one notification per alert, and at
/// most `kept` (`alerts.kept_per_webhook`, as many as a round's states
/// hold by default: 1,000 firing and the 1,000 resolved last); past it
/// the oldest is forgotten.
#[derive(Debug)]
struct Book {
    kept: usize,
    /// The latest notification of each alert this webhook did not take.
    failed: HashMap<String, AlertTransition>,
    /// Alerts with a re-send or a repeat queued or on its way.
    again: HashSet<String>,
}

/// One notification for one webhook.
#[derive(Debug)]
struct Job {
    transition: AlertTransition,
    kind: NotificationKind,
    body: Bytes,
}

// === impl Delivery ===

impl Delivery {
    /// Starts one task per webhook on the current runtime.
    pub(crate) fn start(
        config: &AlertsConfig,
        client: HttpClient,
        board: Arc<AlertsBoard>,
        gateway: String,
    ) -> Delivery {
        let queues = config
            .webhooks
            .iter()
            .map(|uri| {
                let (tx, rx) = mpsc::channel(config.queue.max(1));
                let book = Arc::new(Mutex::new(Book::new(config.kept_per_webhook)));
                let worker = Worker {
                    authorization: crate::http_client::basic_auth(uri),
                    // Sent as `Authorization`, not in the URI (HTTP/2's
                    // `:authority` would carry them).
                    uri: crate::http_client::without_userinfo(uri),
                    client: client.clone(),
                    retries: config.retries,
                    timeout: config.timeout,
                    board: board.clone(),
                    book: book.clone(),
                };
                tokio::spawn(worker.run(rx));
                Queue { tx, book }
            })
            .collect();
        Delivery {
            queues,
            format: config.format,
            board,
            gateway,
        }
    }

    /// Whether there is any webhook to notify.
    pub(crate) fn has_webhooks(&self) -> bool {
        !self.queues.is_empty()
    }

    fn body(&self, t: &AlertTransition) -> Bytes {
        let body = match self.format {
            AlertFormat::Alertmanager => alertmanager(t, &self.gateway),
            AlertFormat::Slack => slack(t),
        };
        Bytes::from(body.to_string())
    }

    /// Queues the transition `t` for every webhook; never waits. It is its
    /// alert's latest notification: one kept unsent is forgotten.
    pub(crate) fn send(&self, t: &AlertTransition) {
        if self.queues.is_empty() {
            return;
        }
        let body = self.body(t);
        for queue in &self.queues {
            queue.book().failed.remove(&t.alert_key);
            self.queue(queue, t, NotificationKind::Transition, body.clone());
        }
    }

    /// Queues a repeat of the firing alert `t` for every webhook that has
    /// no re-send of it on its way (that one says the same).
    pub(crate) fn repeat(&self, t: &AlertTransition) {
        let body = self.body(t);
        for queue in &self.queues {
            if queue.book().again.insert(t.alert_key.clone()) {
                queue.book().failed.remove(&t.alert_key);
                self.queue(queue, t, NotificationKind::Repeat, body.clone());
            }
        }
    }

    /// The alerts of the notifications kept to send again, on any webhook.
    pub(crate) fn kept_keys(&self) -> HashSet<String> {
        (self.queues.iter())
            .flat_map(|queue| queue.book().failed.keys().cloned().collect::<Vec<_>>())
            .collect()
    }

    /// Sends again, once per alert and webhook, each kept notification
    /// that is still its alert's latest transition (in `latest`, by key);
    /// forgets the others. Answers how many were queued.
    pub(crate) fn resend_failed(&self, latest: &HashMap<&str, &AlertTransition>) -> usize {
        let mut queued = 0;
        for queue in &self.queues {
            let due: Vec<AlertTransition> = {
                let mut book = queue.book();
                book.failed.retain(|key, t| {
                    latest
                        .get(key.as_str())
                        .is_some_and(|l| (l.seq, l.state.as_str()) == (t.seq, t.state.as_str()))
                });
                let Book { failed, again, .. } = &mut *book;
                let keys: Vec<String> = failed
                    .keys()
                    .filter(|k| !again.contains(*k))
                    .cloned()
                    .collect();
                keys.into_iter()
                    .filter_map(|key| {
                        again.insert(key.clone());
                        failed.remove(&key)
                    })
                    .collect()
            };
            for t in due {
                let body = self.body(&t);
                queued += usize::from(self.queue(queue, &t, NotificationKind::Resend, body));
            }
        }
        queued
    }

    /// Puts one notification in `queue`, or counts it dropped and keeps it
    /// to send again: `true` when queued.
    fn queue(
        &self,
        queue: &Queue,
        t: &AlertTransition,
        kind: NotificationKind,
        body: Bytes,
    ) -> bool {
        // Counted before it is queued: the worker may be done with it
        // before `try_send` returns.
        self.board.pending.fetch_add(1, Ordering::Relaxed);
        let job = Job {
            transition: t.clone(),
            kind,
            body,
        };
        match queue.tx.try_send(job) {
            Ok(()) => true,
            Err(e) => {
                self.board.pending.fetch_sub(1, Ordering::Relaxed);
                self.board
                    .outcomes(kind)
                    .dropped
                    .fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    kind = kind.as_str(),
                    "alert webhook queue full: notification dropped (kept to send again)"
                );
                let job = match e {
                    mpsc::error::TrySendError::Full(job)
                    | mpsc::error::TrySendError::Closed(job) => job,
                };
                queue.book().owe(job);
                false
            }
        }
    }
}

// === impl Queue ===

impl Queue {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }
}

// === impl Book ===

impl Book {
    fn new(kept: usize) -> Book {
        Book {
            kept,
            failed: HashMap::new(),
            again: HashSet::new(),
        }
    }

    /// `job` was not delivered: keep it to send again, unless a later
    /// notification of its alert is kept already.
    fn owe(&mut self, job: Job) {
        // A re-send or repeat on its way stays marked while a transition
        // of its alert fails (as in `settle`).
        if job.kind != NotificationKind::Transition {
            self.again.remove(&job.transition.alert_key);
        }
        let t = job.transition;
        match self.failed.get(&t.alert_key) {
            Some(kept) if kept.seq > t.seq => {}
            Some(_) => {
                self.failed.insert(t.alert_key.clone(), t);
            }
            None => {
                if self.failed.len() >= self.kept {
                    self.forget_oldest();
                }
                self.failed.insert(t.alert_key.clone(), t);
            }
        }
    }

    /// Forgets the kept notification decided first (a scan: only while
    /// as many as `kept` are kept, a webhook down through a flood of
    /// alerts).
    fn forget_oldest(&mut self) {
        let oldest = (self.failed.iter())
            .min_by(|a, b| (a.1.at_ms, a.0).cmp(&(b.1.at_ms, b.0)))
            .map(|(key, _)| key.clone());
        if let Some(key) = oldest {
            tracing::warn!(
                kept = self.kept,
                "alert notifications kept to send again are at their bound: the oldest is forgotten"
            );
            self.failed.remove(&key);
        }
    }

    /// `job` is done with (delivered, or refused for good).
    fn settle(&mut self, job: &Job) {
        if job.kind != NotificationKind::Transition {
            self.again.remove(&job.transition.alert_key);
        }
    }
}

struct Worker {
    uri: Uri,
    /// `Authorization: Basic` from the URL's credentials, if it has any.
    authorization: Option<http::HeaderValue>,
    client: HttpClient,
    retries: u32,
    timeout: Duration,
    board: Arc<AlertsBoard>,
    book: Arc<Mutex<Book>>,
}

impl Worker {
    async fn run(self, mut rx: mpsc::Receiver<Job>) {
        while let Some(job) = rx.recv().await {
            let delivered = self.deliver(&job).await;
            {
                let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
                match delivered {
                    Delivered::No => book.owe(job),
                    Delivered::Yes | Delivered::Refused => book.settle(&job),
                }
            }
            self.board.pending.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// POSTs the job's body, retried with backoff (or the receiver's
    /// `Retry-After`) while the failure can pass; counts it sent or failed.
    async fn deliver(&self, job: &Job) -> Delivered {
        let outcomes = self.board.outcomes(job.kind);
        let kind = job.kind.as_str();
        let mut backoff = FIRST_BACKOFF;
        for attempt in 0..=self.retries {
            match self.post(job.body.clone()).await {
                Ok(()) => {
                    outcomes.sent.fetch_add(1, Ordering::Relaxed);
                    return Delivered::Yes;
                }
                Err(refused) => {
                    self.board.attempts_failed.fetch_add(1, Ordering::Relaxed);
                    let host = self.uri.host().unwrap_or("?");
                    let why = &refused.why;
                    match refused.retry_after {
                        Some(after) if attempt < self.retries => {
                            tracing::debug!(host, attempt, kind, %why, "alert webhook failed; retrying");
                            tokio::time::sleep(after.unwrap_or(backoff).min(MAX_BACKOFF)).await;
                            backoff = (backoff * 2).min(MAX_BACKOFF);
                        }
                        passing => {
                            outcomes.failed.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!(host, attempts = attempt + 1, kind, %why, "alert webhook: giving up on a notification for now");
                            return if passing.is_some() {
                                Delivered::No
                            } else {
                                Delivered::Refused
                            };
                        }
                    }
                }
            }
        }
        Delivered::No
    }
    async fn post(&self, body: Bytes) -> Result<(), Refused> {
        let mut request = Request::post(self.uri.clone());
        if let Some(auth) = &self.authorization {
            request = request.header(header::AUTHORIZATION, auth.clone());
        }
        let request = request
            .header(header::CONTENT_TYPE, "application/json")
            .header(
                header::USER_AGENT,
                concat!("toolwarden/", env!("CARGO_PKG_VERSION")),
            )
            .body(crate::http_client::whole(body))
            .map_err(|e| Refused::final_(e.to_string()))?;
        let response = tokio::time::timeout(self.timeout, self.client.request(request))
            .await
            .map_err(|_| Refused::passing(format!("no answer within {:?}", self.timeout)))?
            .map_err(|e| Refused::passing(e.to_string()))?;
        let (status, retry_after) = crate::http_client::answered(response, self.timeout).await;
        if status.is_success() {
            return Ok(());
        }
        // A receiver that refuses the request itself (a Slack
        // `invalid_payload`, a revoked hook's 404) refuses it again.
        let passing = status.is_server_error() || matches!(status.as_u16(), 408 | 425 | 429);
        Err(Refused {
            why: format!("status {status}"),
            retry_after: passing.then_some(retry_after),
        })
    }
}

/// How a notification's delivery ended.
enum Delivered {
    /// A webhook accepted it.
    Yes,
    /// Every attempt failed with a failure that can pass: it may be sent
    /// again later.
    No,
    /// The receiver refused it: sending it again cannot help.
    Refused,
}

/// Why a POST failed, and whether (and after how long, if the receiver
/// said) it may be sent again.
struct Refused {
    why: String,
    /// `None`: sending it again cannot help; `Some(after)`: it may, after
    /// the receiver's `Retry-After` if it gave one.
    retry_after: Option<Option<Duration>>,
}

impl Refused {
    fn passing(why: String) -> Self {
        Refused {
            why,
            retry_after: Some(None),
        }
    }

    fn final_(why: String) -> Self {
        Refused {
            why,
            retry_after: None,
        }
    }
}

fn summary(t: &AlertTransition) -> String {
    let what = match t.rule.as_str() {
        "tool_failure_rate" => format!("tool {} fails", t.tool),
        "tool_exec_time" => format!("tool {} is slow", t.tool),
        "repairs" => "conversations needed repairs".to_string(),
        "upstream_error_rate" => "upstream errors".to_string(),
        "events_dropped" => format!("gateway {} dropped events", t.instance),
        other => other.to_string(),
    };
    // All models: the key's model is `*` (a model named `*` is `%2A`).
    let model = if model_label(t) == "*" {
        String::new()
    } else {
        format!(" (model {})", t.model)
    };
    let numbers = format!(
        "{what}{model}: {} (threshold {}, volume {})",
        RuleName::format_value(&t.rule, t.value),
        RuleName::format_value(&t.rule, t.threshold),
        t.volume
    );
    match resolved_for_gone_instance(t) {
        Some(why) => format!("{numbers}; {why}"),
        None => numbers,
    }
}

fn labels(t: &AlertTransition) -> Value {
    let mut labels = json!({
        "alertname": RuleName::alertname(&t.rule),
        "rule": t.rule,
        "tool": t.tool,
        "model": model_label(t),
        "severity": "warning",
        "source": "toolwarden",
    });
    if !t.instance.is_empty() {
        labels["instance"] = json!(t.instance);
    }
    labels
}

/// The labels that tell one alert from another (`labels` less the fixed
/// ones), sorted by name: the alert's group, one group per alert.
fn group_labels(t: &AlertTransition) -> serde_json::Map<String, Value> {
    let mut group = serde_json::Map::new();
    group.insert("alertname".into(), json!(RuleName::alertname(&t.rule)));
    if !t.instance.is_empty() {
        group.insert("instance".into(), json!(t.instance));
    }
    group.insert("model".into(), json!(model_label(t)));
    group.insert("rule".into(), json!(t.rule));
    group.insert("tool".into(), json!(t.tool));
    group
}

/// Alertmanager's group key, `{}:{name="value", …}` over the group's
/// labels in name order, each value quoted as Alertmanager quotes it
/// ([`go_quote`]): receivers key incidents on it, so two tools' alerts
/// must not share one.
fn group_key(group: &serde_json::Map<String, Value>) -> String {
    let mut key = String::from("{}:{");
    for (i, (name, value)) in group.iter().enumerate() {
        if i > 0 {
            key.push_str(", ");
        }
        key.push_str(name);
        key.push('=');
        go_quote(value.as_str().unwrap_or_default(), &mut key);
    }
    key.push('}');
    key
}

/// The Alertmanager webhook payload (version 4) with one alert. Labels and
/// annotations are maps of strings, as Alertmanager's own types (receivers
/// written in Go decode them so).
pub(crate) fn alertmanager(t: &AlertTransition, gateway: &str) -> Value {
    let labels = labels(t);
    let annotations = json!({
        "summary": summary(t),
        "description": format!("{} over the alert window; decided by gateway {}", summary(t), t.gateway),
        "value": t.value.to_string(),
        "threshold": t.threshold.to_string(),
    });
    let resolved = t.state == "resolved";
    let group = group_labels(t);
    json!({
        "version": "4",
        "groupKey": group_key(&group),
        "truncatedAlerts": 0,
        "status": t.state,
        "receiver": "toolwarden",
        "groupLabels": group,
        "commonLabels": labels,
        "commonAnnotations": annotations,
        "externalURL": format!("http://{gateway}"),
        "alerts": [{
            "status": t.state,
            "labels": labels,
            "annotations": annotations,
            "startsAt": rfc3339(t.started_ms),
            "endsAt": if resolved { rfc3339(t.at_ms) } else { "0001-01-01T00:00:00Z".to_string() },
            "generatorURL": format!("http://{gateway}/dashboard"),
            "fingerprint": format!("{:016x}", fnv1a(&t.alert_key)),
        }],
    })
}

/// A Slack incoming-webhook message.
pub(crate) fn slack(t: &AlertTransition) -> Value {
    let head = if t.state == "resolved" {
        ":white_check_mark: RESOLVED"
    } else {
        ":rotating_light: FIRING"
    };
    let text = format!("{head} [toolwarden {}] {}", t.rule, summary(t));
    json!({"text": slack_escaped(&text)})
}

/// `&`, `<` and `>` as Slack's message formatting wants them: a tool or
/// model name (chosen by any client) such as `<!channel>` is shown, not
/// obeyed.
fn slack_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transition(state: &str) -> AlertTransition {
        AlertTransition {
            alert_key: "tool_failure_rate|book|*|".into(),
            seq: 1,
            state: state.into(),
            rule: "tool_failure_rate".into(),
            tool: "book".into(),
            model: "*".into(),
            instance: String::new(),
            value: 0.25,
            threshold: 0.05,
            volume: 40,
            started_ms: 1_764_028_800_000,
            at_ms: 1_764_028_861_500,
            gateway: "gw:8080".into(),
        }
    }

    #[test]
    fn alertmanager_payload_has_the_receivers_fields() {
        let v = alertmanager(&transition("firing"), "gw:8080");
        assert_eq!(v["version"], "4");
        assert_eq!(v["status"], "firing");
        let alert = &v["alerts"][0];
        assert_eq!(alert["labels"]["alertname"], "ToolwardenToolFailureRate");
        assert_eq!(alert["labels"]["tool"], "book");
        assert_eq!(alert["startsAt"], "2025-11-25T00:00:00.000Z");
        assert_eq!(alert["endsAt"], "0001-01-01T00:00:00Z");
        assert!(
            alert["annotations"]["summary"]
                .as_str()
                .unwrap()
                .contains("25.0%")
        );
        let r = alertmanager(&transition("resolved"), "gw:8080");
        assert_eq!(r["alerts"][0]["endsAt"], "2025-11-25T00:01:01.500Z");
        assert_eq!(r["alerts"][0]["fingerprint"], alert["fingerprint"]);
        // Labels and annotations are maps of strings, as Alertmanager's
        // types (Go receivers decode them so).
        for map in [
            &alert["labels"],
            &alert["annotations"],
            &v["commonLabels"],
            &v["commonAnnotations"],
            &v["groupLabels"],
        ] {
            serde_json::from_value::<std::collections::HashMap<String, String>>(map.clone())
                .unwrap_or_else(|e| panic!("{e}: {map}"));
        }
        assert_eq!(alert["annotations"]["value"], "0.25");
        // One group per alert: another tool's alert has another key.
        let mut other = transition("firing");
        other.tool = "search \"x\"".into();
        let o = alertmanager(&other, "gw:8080");
        assert_ne!(o["groupKey"], v["groupKey"]);
        assert_eq!(
            v["groupKey"],
            "{}:{alertname=\"ToolwardenToolFailureRate\", model=\"*\", rule=\"tool_failure_rate\", tool=\"book\"}"
        );
        let key = o["groupKey"].as_str().unwrap();
        assert!(key.contains("tool=\"search \\\"x\\\"\""), "{key}");
    }

    /// A label value in the group key is quoted as Alertmanager quotes it
    /// (Go's `strconv.Quote`, through `model.LabelSet.String`): a newline
    /// or another control character escaped, not sent raw, so a receiver
    /// keying incidents on `groupKey` keys them as it would Alertmanager's.
    #[test]
    fn the_group_key_quotes_label_values_as_alertmanager_does() {
        let mut t = transition("firing");
        t.tool = "a\nb\t\u{7f}\u{a0}é☺\u{200b}\u{10ffff}\\\"".into();
        let v = alertmanager(&t, "gw:8080");
        assert_eq!(
            v["groupKey"],
            "{}:{alertname=\"ToolwardenToolFailureRate\", model=\"*\", rule=\"tool_failure_rate\", \
             tool=\"a\\nb\\t\\x7f\\u00a0é☺\\u200b\\U0010ffff\\\\\\\"\"}"
        );
    }

    /// Regression: the all-models alert and the alert of a model a client
    /// named `*` had the same labels (`model="*"`) and so the same group
    /// key, which receivers key incidents on (one resolving closed the
    /// other's), and the summary called the named model all models. The
    /// `model` label is the key's model, as in `/metrics`.
    #[test]
    fn a_model_named_star_is_an_alert_group_of_its_own() {
        let all = transition("firing");
        let mut star = transition("firing");
        star.alert_key = "tool_failure_rate|book|%2A|".into();
        let (a, s) = (alertmanager(&all, "gw"), alertmanager(&star, "gw"));
        assert_ne!(a["groupKey"], s["groupKey"]);
        assert_eq!(a["alerts"][0]["labels"]["model"], "*");
        assert_eq!(s["alerts"][0]["labels"]["model"], "%2A");
        assert_eq!(s["groupLabels"]["model"], "%2A");
        let summary = |v: &Value| {
            v["commonAnnotations"]["summary"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            summary(&a),
            "tool book fails: 25.0% (threshold 5.0%, volume 40)"
        );
        assert_eq!(
            summary(&s),
            "tool book fails (model *): 25.0% (threshold 5.0%, volume 40)"
        );
        // Other names are as they were.
        let mut m = transition("firing");
        m.alert_key = "tool_failure_rate|book|gpt-4o|".into();
        m.model = "gpt-4o".into();
        assert_eq!(alertmanager(&m, "gw")["groupLabels"]["model"], "gpt-4o");
    }

    #[test]
    fn slack_payload_is_text() {
        let v = slack(&transition("firing"));
        let text = v["text"].as_str().unwrap();
        assert!(text.contains("FIRING") && text.contains("book"), "{text}");
        // A name a client chose is shown, not obeyed.
        let mut t = transition("firing");
        t.tool = "<!channel> & x".into();
        let text = slack(&t)["text"].as_str().unwrap().to_string();
        assert!(text.contains("&lt;!channel&gt; &amp; x"), "{text}");
        assert!(!text.contains("<!channel>"), "{text}");
    }
}

#[cfg(test)]
mod book_tests {
    use super::*;

    fn job(kind: NotificationKind, seq: i64) -> Job {
        Job {
            transition: AlertTransition {
                alert_key: "k".into(),
                seq,
                state: "firing".into(),
                rule: "tool_failure_rate".into(),
                tool: "book".into(),
                model: "*".into(),
                instance: String::new(),
                value: 1.0,
                threshold: 0.2,
                volume: 20,
                started_ms: 0,
                at_ms: 0,
                gateway: "gw".into(),
            },
            kind,
            body: Bytes::new(),
        }
    }

    /// A transition that fails leaves a queued re-send or repeat of its
    /// alert marked, so a round queues no second one; a failed repeat
    /// clears its own mark.
    #[test]
    fn a_failed_transition_keeps_the_mark_of_a_repeat_on_its_way() {
        let mut book = Book::new(10);
        book.again.insert("k".into());
        book.owe(job(NotificationKind::Transition, 2));
        assert!(book.again.contains("k"));
        assert_eq!(book.failed["k"].seq, 2);
        book.owe(job(NotificationKind::Repeat, 2));
        assert!(!book.again.contains("k"));
    }

    /// The notifications kept are bounded: past `kept_per_webhook` alerts
    /// (the default here) the one decided first is forgotten; a later step
    /// of a kept alert replaces it and forgets nothing.
    #[test]
    fn kept_notifications_are_bounded_oldest_forgotten() {
        let kept = AlertsConfig::default().kept_per_webhook;
        assert_eq!(kept, 2_000);
        let mut book = Book::new(kept);
        let at = |key: &str, seq: i64, at_ms: i64| {
            let mut j = job(NotificationKind::Transition, seq);
            j.transition.alert_key = key.into();
            j.transition.at_ms = at_ms;
            j
        };
        for i in 0..kept {
            let at_ms = i64::try_from(i).expect("i") + 10;
            book.owe(at(&format!("k{i}"), 1, at_ms));
        }
        book.owe(at("k5", 2, 5_000));
        assert_eq!(book.failed.len(), kept);
        assert_eq!(book.failed["k5"].seq, 2);
        book.owe(at("new", 1, 9_000));
        assert_eq!(book.failed.len(), kept);
        assert!(!book.failed.contains_key("k0"), "the oldest forgotten");
        assert!(book.failed.contains_key("new") && book.failed.contains_key("k1"));
    }

    /// A webhook URL's credentials (`http://user:pass@receiver/…`, a
    /// receiver behind basic auth) are sent as `Authorization: Basic`, as
    /// curl and the HTTP libraries send them; they were dropped, and the
    /// receiver's 401 lost every notification.
    #[tokio::test]
    async fn a_webhook_urls_credentials_are_sent_as_basic_auth() {
        let (addr, seen) = crate::http_client::auth_receiver::start(true).await;
        let config = crate::Config::for_tests("http://127.0.0.1:9");
        let client = crate::upstream::build_client(&config).unwrap();
        for (url, expected) in [
            (
                format!("http://alert%40ops:p%40ss:w@{addr}/hook"),
                Some("Basic YWxlcnRAb3BzOnBAc3M6dw=="), // alert@ops:p@ss:w
            ),
            (format!("http://bot@{addr}/hook"), Some("Basic Ym90Og==")), // bot:
            (format!("http://{addr}/hook"), None),
        ] {
            let alerts = crate::config::alerts::RawAlerts {
                webhooks: Some(vec![url.clone()]),
                retries: Some(0),
                ..Default::default()
            }
            .validated()
            .unwrap();
            let board = Arc::new(AlertsBoard::default());
            let delivery = Delivery::start(&alerts, client.clone(), board.clone(), "gw".into());
            delivery.send(&job(NotificationKind::Transition, 1).transition);
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while board.pending.load(Ordering::Relaxed) > 0 {
                assert!(std::time::Instant::now() < deadline, "{url}: not delivered");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let sent = seen.lock().unwrap().pop().expect("a request");
            assert_eq!(
                sent.as_ref().map(|v| v.to_str().unwrap()),
                expected,
                "{url}"
            );
            let taken = board
                .outcomes(NotificationKind::Transition)
                .sent
                .load(Ordering::Relaxed);
            assert_eq!(taken, u64::from(expected.is_some()), "{url}");
        }
    }
}
