//! Credentials pass through to the provider but never reach the SQLite
//! file (with its WAL) or the JSONL log.

use http::Method;

use super::{
    convo::{ANTHROPIC_KEY, Convo, GEMINI_KEY, Kind, OPENAI_KEY},
    support::{Harness, send},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_are_never_stored() {
    let mut h = Harness::start().await;
    let bearer_anthropic = "sk-ant-e2e-SECRET-bearer-77aa";
    let query_key = "AIzaE2eSECRETqueryKey99";
    for kind in Kind::ALL {
        for stream in [false, true] {
            let mut convo = Convo::new(kind, stream, Some("secrets"));
            convo
                .tool_round(&h.client, &h.gw(), &[(true, "Error: no such flight")])
                .await;
        }
    }
    // Anthropic with a Bearer token, Gemini with ?key=.
    let convo = Convo::new(Kind::Anthropic, false, None);
    let auth = format!("Bearer {bearer_anthropic}");
    let r = send(
        &h.client,
        Method::POST,
        convo.url(&h.gw()),
        &[
            ("authorization", auth.as_str()),
            ("anthropic-version", "2023-06-01"),
        ],
        serde_json::to_vec(&convo.body).unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let convo = Convo::new(Kind::Gemini, false, None);
    let url = format!(
        "{}/v1beta/models/gemini-2.0-flash:generateContent?key={query_key}",
        h.gw()
    );
    let r = send(
        &h.client,
        Method::POST,
        url,
        &[],
        serde_json::to_vec(&convo.body).unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    // The keys did reach the provider.
    let received = h.mock.received();
    assert!(
        received
            .iter()
            .any(|r| r.header("x-api-key") == Some(ANTHROPIC_KEY))
    );
    assert!(
        received
            .iter()
            .any(|r| r.query.as_deref().is_some_and(|q| q.contains(query_key)))
    );

    let secrets = [
        ANTHROPIC_KEY,
        OPENAI_KEY,
        GEMINI_KEY,
        bearer_anthropic,
        query_key,
        "SECRET",
    ];
    // While the gateway runs (the WAL holds the recent writes) …
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while h.events().len() < 10 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_no_secrets(&h, &secrets, false);
    // … and after a graceful shutdown.
    let stats = h.finish().await;
    assert!(stats.requests.total >= 18, "{:?}", stats.requests);
    assert_no_secrets(&h, &secrets, true);
}

/// None of `secrets` in the JSONL log or the SQLite files (the WAL and
/// shared-memory files only while they exist).
fn assert_no_secrets(h: &Harness, secrets: &[&str], finished: bool) {
    let wal = |suffix: &str| h.db_path.with_file_name(format!("toolwarden.db{suffix}"));
    let files = [
        (h.jsonl.clone(), true),
        (h.db_path.clone(), true),
        (wal("-wal"), false),
        (wal("-shm"), false),
    ];
    for (file, required) in files {
        let bytes = match std::fs::read(&file) {
            Ok(b) => b,
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("{}: {e}", file.display()),
        };
        if required && finished {
            assert!(
                !bytes.is_empty(),
                "{} is empty: nothing recorded?",
                file.display()
            );
        }
        for secret in secrets {
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "{secret} found in {}", file.display());
        }
    }
}
