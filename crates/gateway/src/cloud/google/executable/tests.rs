use std::path::Path;

use proptest::prelude::*;

use super::*;

const JWT: &str = "urn:ietf:params:oauth:token-type:jwt";

/// An executable running `script` (sh) from `dir`, allowed, with `fields`
/// added to its `executable` object.
fn executable(dir: &Path, script: &str, fields: &str) -> Result<Executable, FileError> {
    let path = dir.join("token.sh");
    std::fs::write(&path, script).unwrap();
    let file: ExecutableFile = serde_json::from_str(&format!(
        r#"{{"command":"sh '{}' --flag"{fields}}}"#,
        path.display()
    ))
    .unwrap();
    let mut env = AwsEnv::default();
    env.insert(ALLOW_VAR.into(), "1".into());
    Executable::new(
        file,
        &env,
        "f.json",
        ("//iam/aud", JWT, Some("sa@p.iam.gserviceaccount.com")),
    )
}

fn response(token: &str, expires: u64) -> String {
    format!(
        r#"{{"version":1,"success":true,"token_type":"{JWT}","id_token":"{token}","expiration_time":{expires}}}"#
    )
}

fn later() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600
}

#[test]
fn it_runs_only_when_allowed_and_reads_its_settings() {
    let file = |fields: &str| serde_json::from_str::<ExecutableFile>(fields).unwrap();
    let ids = ("a", JWT, None);
    let refused = Executable::new(
        file(r#"{"command":"/bin/t"}"#),
        &AwsEnv::default(),
        "f",
        ids,
    );
    assert!(matches!(refused, Err(FileError::Unsupported(e)) if e.contains(ALLOW_VAR)));
    let mut env = AwsEnv::default();
    env.insert(ALLOW_VAR.into(), "1".into());
    let e = Executable::new(file(r#"{"command":"/bin/t 'a b' c"}"#), &env, "f", ids).unwrap();
    assert_eq!(e.command, ["/bin/t", "a b", "c"]);
    assert_eq!(e.timeout, DEFAULT_TIMEOUT);
    let e = Executable::new(
        file(r#"{"command":"t","timeout_millis":5000}"#),
        &env,
        "f",
        ids,
    )
    .unwrap();
    assert_eq!(e.timeout, Duration::from_secs(5));
    for (fields, says) in [
        (r#"{"command":"t","timeout_millis":4999}"#, "between"),
        (r#"{"command":"t","timeout_millis":120001}"#, "between"),
        (r#"{"command":"t 'open"}"#, "not a command line"),
        (r#"{"command":"  "}"#, "needs command"),
        (r#"{}"#, "needs command"),
    ] {
        match Executable::new(file(fields), &env, "f", ids) {
            Err(FileError::Unusable(e)) => assert!(e.contains(says), "{fields}: {e}"),
            _ => panic!("{fields} accepted"),
        }
    }
}

/// The program gets the account's variables and no input; its response's
/// token is the subject token.
#[tokio::test]
async fn the_token_is_what_the_program_prints() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        r#"read -r line && exit 3
[ "$1" = --flag ] || exit 4
[ "$GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE$GOOGLE_EXTERNAL_ACCOUNT_REVOKE" = 00 ] || exit 5
printf '{{"version":1,"success":true,"token_type":"{JWT}","id_token":"%s|%s|%s","expiration_time":{}}}' \
  "$GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE" "$GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE" \
  "$GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL"
"#,
        later()
    );
    let e = executable(dir.path(), &script, "").unwrap();
    assert_eq!(
        e.subject_token().await.unwrap(),
        format!("//iam/aud|{JWT}|sa@p.iam.gserviceaccount.com")
    );
}

#[tokio::test]
async fn a_failure_is_named_with_the_programs_words() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "echo 'no session: run login' >&2; exit 1",
            "no session: run login",
        ),
        (
            r#"echo '{"version":1,"success":false,"code":"401","message":"denied"}'"#,
            "code 401, message denied",
        ),
        (&*format!("echo '{}'", response("t", 1)), "expired"),
        (
            r#"echo '{"version":2,"success":true}'"#,
            "version 2 is unknown",
        ),
        ("echo not json", "not JSON"),
        ("true", "printed nothing"),
        (
            r#"echo '{"version":1,"success":true,"token_type":"x"}'"#,
            "token type x is unknown",
        ),
    ];
    for (script, says) in cases {
        let e = executable(dir.path(), script, "").unwrap();
        let err = e.subject_token().await.unwrap_err();
        assert!(err.contains(says), "{script}: {err}");
    }
}

#[tokio::test]
async fn a_program_past_its_timeout_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = executable(dir.path(), "sleep 30", "").unwrap();
    e.timeout = Duration::from_millis(200);
    let started = std::time::Instant::now();
    let err = e.subject_token().await.unwrap_err();
    assert!(err.contains("did not finish within 200 ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A valid response in the output file is used without a run; an expired
/// one, or one without an expiry, is not; a program that prints nothing
/// is read from the file it wrote.
#[tokio::test]
async fn the_output_file_caches_the_response() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let fields = format!(r#","output_file":"{}""#, out.display());
    let e = executable(dir.path(), "exit 9", &fields).unwrap();
    std::fs::write(&out, response("cached", later())).unwrap();
    assert_eq!(e.subject_token().await.unwrap(), "cached");
    std::fs::write(&out, response("old", 1)).unwrap();
    assert!(e.subject_token().await.unwrap_err().contains("exited"));
    let no_expiry = r#"{"version":1,"success":true,"token_type":"urn:ietf:params:oauth:token-type:jwt","id_token":"x"}"#;
    std::fs::write(&out, no_expiry).unwrap();
    assert!(e.subject_token().await.unwrap_err().contains("exited"));

    let script = format!(
        "printf '%s' '{}' > \"$GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE\"",
        response("written", later())
    );
    std::fs::remove_file(&out).unwrap();
    let e = executable(dir.path(), &script, &fields).unwrap();
    assert_eq!(e.subject_token().await.unwrap(), "written");
}

proptest! {
    /// Any output is a token or a reason, never a panic.
    #[test]
    fn any_response_reads(text in proptest::collection::vec(any::<u8>(), 0..200), version in 0u64..3) {
        let _ = token_of(&text, SystemTime::now());
        let json = format!(r#"{{"version":{version},"success":true,"token_type":"{JWT}","id_token":"{}"}}"#, text.len());
        prop_assert_eq!(token_of(json.as_bytes(), SystemTime::now()).is_ok(), version <= 1);
    }
}
