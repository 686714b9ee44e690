//! The cost of re-signing one Bedrock request (issue 18): the gateway's
//! [`resign`] over the headers `AnthropicBedrock` sends, for a small and a
//! large body (SigV4 hashes the whole body), against the floor of copying
//! the request head, measured in the same run; and the derivation of the
//! SigV4 signing key alone (four HMAC-SHA256s over secret, date, region,
//! service), the most a signing-key cache could save per request.
//!
//! `cargo bench -p toolwarden-gateway --bench resign`

use std::time::{Instant, SystemTime};

use toolwarden_gateway::cloud::aws::{AwsCredentials, resign};

fn parts() -> http::request::Parts {
    let mut req = http::Request::post(
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20241022-v2:0/invoke",
    );
    for (k, v) in [
        (
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDCLIENT/20251125/us-east-1/bedrock/aws4_request, SignedHeaders=accept;accept-encoding;content-type;host;x-amz-date, Signature=00",
        ),
        ("x-amz-date", "20251125T170000Z"),
        ("accept", "application/json"),
        ("accept-encoding", "gzip, deflate"),
        ("content-type", "application/json"),
        ("user-agent", "AnthropicBedrock/Python 0.70.0"),
        ("x-stainless-lang", "python"),
        ("x-stainless-package-version", "0.70.0"),
        ("x-stainless-os", "Linux"),
        ("x-stainless-arch", "x64"),
        ("x-stainless-runtime", "CPython"),
        ("x-stainless-runtime-version", "3.11.7"),
        ("x-stainless-retry-count", "0"),
        ("x-stainless-read-timeout", "600"),
        ("content-length", "2048"),
    ] {
        req = req.header(k, v);
    }
    req.body(()).expect("a valid request").into_parts().0
}

/// Best ns per request over 5 runs of `n`.
fn best(n: usize, mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let creds = AwsCredentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        None,
        "bench",
    );
    let template = parts();
    let floor = best(20_000, || {
        std::hint::black_box(template.headers.clone());
    });
    println!("bench resign: copying the head (floor) {floor:>9.0} ns/request");
    let key = best(20_000, || {
        std::hint::black_box(aws_sigv4::sign::v4::generate_signing_key(
            std::hint::black_box("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            SystemTime::now(),
            "us-east-1",
            "bedrock",
        ));
    });
    println!("bench resign: signing key derivation   {key:>9.0} ns/request");
    for size in [2 << 10, 64 << 10] {
        let body = vec![b'x'; size];
        let n = if size > 4096 { 2_000 } else { 20_000 };
        let ns = best(n, || {
            let mut p = template.clone();
            resign(
                &mut p,
                &body,
                creds.fixed().expect("fixed"),
                "us-east-1",
                SystemTime::now(),
            )
            .expect("signs");
            std::hint::black_box(p);
        });
        println!(
            "bench resign: {:>3} KiB body                {ns:>9.0} ns/request",
            size >> 10
        );
    }
}
