//! The cloud route parser (`routes::cloud`): which Azure OpenAI, Vertex AI
//! and Bedrock paths are read, as which dialect and model.

use http::Method;
use toolwarden_wire::Dialect;

use crate::{
    Provider,
    routes::cloud::{CloudTarget, bedrock_invoke_by_body, classify, decode_path_segment},
};

/// Any bytes as a path, `?` and a query (and as a Bedrock `invoke` body):
/// a cloud route or none, never a panic. A route is taken only by a path
/// of a cloud's shape, of the provider its prefix names; it forwards the
/// path and query unchanged but for that prefix; and a route that reads the
/// request names the dialect of the operation in the path and the model
/// the path names (panics on a finding).
pub fn cloud_route(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (path, query) = text
        .split_once('?')
        .map_or((text, None), |(p, q)| (p, Some(q)));
    for method in [Method::POST, Method::GET, Method::PUT] {
        let Some(route) = classify(&method, path) else {
            assert!(
                !["/azure", "/vertex", "/bedrock"].iter().any(|p| path
                    .strip_prefix(p)
                    .is_some_and(|r| r.is_empty() || r.starts_with('/'))),
                "{path}: a cloud prefix, and no cloud route"
            );
            continue;
        };
        let cloud = route.cloud.as_ref().expect("a cloud route says which");
        let (prefix, rest) = path.split_at(cloud.prefix_len);
        let provider = match prefix {
            "/azure" => Some(Provider::Azure),
            "/vertex" => Some(Provider::Vertex),
            "/bedrock" => Some(Provider::Bedrock),
            "" => None,
            other => panic!("{path}: prefix {other:?} stripped"),
        };
        assert!(
            provider.is_none_or(|p| p == route.provider),
            "{path}: {route:?}"
        );
        assert!(
            provider.is_some()
                || [
                    "/openai/",
                    "/v1/projects/",
                    "/v1beta1/projects/",
                    "/v1/publishers/",
                    "/v1beta1/publishers/",
                    "/model/",
                ]
                .iter()
                .any(|shape| rest.starts_with(shape)),
            "{path}: no cloud's shape, routed as {route:?}"
        );
        let target_agrees = matches!(
            (route.provider, &cloud.target),
            (Provider::Azure, CloudTarget::Azure)
                | (Provider::Vertex, CloudTarget::Vertex { .. })
                | (Provider::Bedrock, CloudTarget::Bedrock { .. })
        );
        assert!(target_agrees, "{path}: {route:?}");
        // Forwarded as it came, less the prefix.
        let path_and_query = match query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_string(),
        };
        let forwarded = route.upstream_path_and_query(&path_and_query);
        let rest_or_root = if rest.is_empty() { "/" } else { rest };
        let expected = match query {
            Some(q) => format!("{rest_or_root}?{q}"),
            None => rest_or_root.to_string(),
        };
        assert_eq!(forwarded, expected, "{path_and_query}");
        if let Some(dialect) = route.dialect {
            assert_eq!(method, Method::POST, "{path}: only a POST is read");
            read_route_agrees(rest, dialect, &route);
        } else if route.provider == Provider::Bedrock
            && let Some(read) = bedrock_invoke_by_body(&route, &method, path, data)
        {
            assert_eq!(read.dialect, Some(Dialect::Anthropic));
            assert_eq!(read.cloud, route.cloud);
        }
    }
}

/// A route that reads the request: `rest` (the path without the prefix) is
/// the shape of its provider, with the operation of `dialect`, and names
/// the route's model (and Vertex's location).
fn read_route_agrees(rest: &str, dialect: Dialect, route: &crate::routes::ProxyRoute) {
    let model = route.model.as_deref();
    match route.provider {
        Provider::Azure => {
            let op = match dialect {
                Dialect::OpenAiChat => "/chat/completions",
                Dialect::OpenAiResponses => "/responses",
                other => panic!("{rest}: Azure read as {other}"),
            };
            let deployment = rest
                .strip_prefix("/openai/deployments/")
                .and_then(|d| d.strip_suffix(op));
            match deployment {
                Some(d) => {
                    assert!(!d.is_empty() && !d.contains('/'), "{rest}");
                    assert_eq!(model, Some(&*decode_path_segment(d)), "{rest}");
                }
                None => {
                    let known = ["/openai/v1/chat/completions", "/openai/v1/responses"];
                    assert!(
                        known.contains(&rest) || rest == "/openai/responses",
                        "{rest}: read as {dialect}"
                    );
                    assert_eq!(model, None, "{rest}");
                }
            }
        }
        Provider::Vertex if dialect == Dialect::OpenAiChat => {
            // `/{version}/projects/{p}/locations/{l}/endpoints/{e}/chat/completions`.
            let parts: Vec<&str> = rest.split('/').collect();
            let read = matches!(
                parts[..],
                ["", "v1" | "v1beta1", "projects", p, "locations", l, "endpoints", e, "chat", "completions"]
                    if !p.is_empty() && !l.is_empty() && !e.is_empty()
            );
            assert!(read, "{rest}: read as {dialect}");
            assert_eq!(model, None, "{rest}: the model is the body's");
            let target = &route.cloud.as_ref().expect("cloud").target;
            assert_eq!(
                *target,
                CloudTarget::Vertex {
                    location: parts[5]
                        .split(':')
                        .next()
                        .filter(|l| !l.is_empty())
                        .unwrap_or("global")
                        .into()
                },
                "{rest}"
            );
        }
        Provider::Vertex => {
            let (resource, method) = rest.rsplit_once(':').expect("a Vertex method");
            let (publisher, stream) = match (dialect, method) {
                (Dialect::Gemini, "generateContent") => ("google", false),
                (Dialect::Gemini, "streamGenerateContent") => ("google", true),
                (Dialect::Anthropic, "rawPredict" | "streamRawPredict") => ("anthropic", false),
                other => panic!("{rest}: read as {other:?}"),
            };
            assert_eq!(route.gemini_stream, stream, "{rest}");
            let (before, m) = resource.rsplit_once('/').expect("a model segment");
            assert!(
                before.ends_with(&format!("/publishers/{publisher}/models")),
                "{rest}: read as {dialect}"
            );
            assert!(!m.is_empty() && m != "count-tokens", "{rest}");
            assert_eq!(model, Some(&*decode_path_segment(m)), "{rest}");
            // The segment after `locations/` (past `/projects/`, which
            // the path starts with), up to a `/` or `:`; express mode's
            // `/{version}/publishers/…` names none: the global endpoint.
            let location = match rest.split_once("/projects/") {
                Some((_, project)) => project
                    .split_once("/locations/")
                    .and_then(|(_, l)| l.split(['/', ':']).next())
                    .filter(|l| !l.is_empty())
                    .unwrap_or("global"),
                None => {
                    assert!(
                        rest.starts_with("/v1/publishers/")
                            || rest.starts_with("/v1beta1/publishers/"),
                        "{rest}: read as {dialect}"
                    );
                    "global"
                }
            };
            let target = &route.cloud.as_ref().expect("cloud").target;
            assert_eq!(
                *target,
                CloudTarget::Vertex {
                    location: location.into()
                },
                "{rest}"
            );
        }
        Provider::Bedrock => {
            let (id, op) = rest
                .strip_prefix("/model/")
                .and_then(|r| r.rsplit_once('/'))
                .expect("/model/{id}/{op}");
            let decoded = decode_path_segment(id);
            let read = match op {
                "invoke" | "invoke-with-response-stream" => {
                    decoded.contains("anthropic.") && dialect == Dialect::Anthropic
                }
                "converse" | "converse-stream" => dialect == Dialect::BedrockConverse,
                _ => false,
            };
            assert!(read && !id.is_empty(), "{rest}: read as {dialect}");
            assert_eq!(model, Some(&*decoded), "{rest}");
            let target = &route.cloud.as_ref().expect("cloud").target;
            assert_eq!(
                *target,
                CloudTarget::Bedrock {
                    stream: op.ends_with("-stream")
                },
                "{rest}"
            );
        }
        other => panic!("{rest}: a cloud route of {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A deployment, project, location or model name as the clouds allow
    /// them (letters, digits, `-`, `_`, `.`, and `@` in Vertex model
    /// versions).
    fn name() -> impl Strategy<Value = String> {
        "[A-Za-z0-9][A-Za-z0-9._@-]{0,24}".prop_filter("not count-tokens", |n| n != "count-tokens")
    }

    fn prefix() -> impl Strategy<Value = bool> {
        any::<bool>()
    }

    /// A valid path, and the route it must take: (provider, dialect,
    /// model, Gemini stream, target).
    type Expected = (Provider, Dialect, String, bool, CloudTarget);

    fn azure() -> impl Strategy<Value = (String, Expected)> {
        (prefix(), name(), any::<bool>()).prop_map(|(prefixed, d, chat)| {
            let (op, dialect) = if chat {
                ("chat/completions", Dialect::OpenAiChat)
            } else {
                ("responses", Dialect::OpenAiResponses)
            };
            let p = if prefixed { "/azure" } else { "" };
            let path = format!("{p}/openai/deployments/{d}/{op}");
            (
                path,
                (Provider::Azure, dialect, d, false, CloudTarget::Azure),
            )
        })
    }

    fn vertex() -> impl Strategy<Value = (String, Expected)> {
        let method = prop::sample::select(vec![
            ("google", "generateContent", Dialect::Gemini, false),
            ("google", "streamGenerateContent", Dialect::Gemini, true),
            ("anthropic", "rawPredict", Dialect::Anthropic, false),
            ("anthropic", "streamRawPredict", Dialect::Anthropic, false),
        ]);
        let version = prop::sample::select(vec!["v1", "v1beta1"]);
        let express = any::<bool>();
        (prefix(), version, name(), name(), name(), method, express).prop_map(
            |(prefixed, v, project, location, model, (publisher, m, dialect, stream), express)| {
                let p = if prefixed { "/vertex" } else { "" };
                // Express mode (an API key, no project): the global endpoint.
                let (scope, location) = if express {
                    (String::new(), "global".to_string())
                } else {
                    (
                        format!("projects/{project}/locations/{location}/"),
                        location,
                    )
                };
                let path = format!("{p}/{v}/{scope}publishers/{publisher}/models/{model}:{m}");
                let target = CloudTarget::Vertex { location };
                (path, (Provider::Vertex, dialect, model, stream, target))
            },
        )
    }

    fn bedrock() -> impl Strategy<Value = (String, Expected)> {
        let op = prop::sample::select(vec![
            ("invoke", true),
            ("invoke-with-response-stream", true),
            ("converse", false),
            ("converse-stream", false),
        ]);
        let region = prop::sample::select(vec!["", "us.", "eu.", "apac.", "global."]);
        (prefix(), region, name(), any::<bool>(), op).prop_map(
            |(prefixed, region, model, escaped, (op, invoke))| {
                let p = if prefixed { "/bedrock" } else { "" };
                // An invoke is read for Anthropic models only.
                let id = if invoke {
                    format!("{region}anthropic.{model}")
                } else {
                    format!("{region}{model}")
                };
                let written = format!("{id}:0");
                let written = if escaped {
                    written.replace(':', "%3A")
                } else {
                    written
                };
                let path = format!("{p}/model/{written}/{op}");
                let dialect = if invoke {
                    Dialect::Anthropic
                } else {
                    Dialect::BedrockConverse
                };
                let target = CloudTarget::Bedrock {
                    stream: op.ends_with("-stream"),
                };
                (
                    path,
                    (Provider::Bedrock, dialect, format!("{id}:0"), false, target),
                )
            },
        )
    }

    /// A path with one character inserted, removed or replaced at `at`.
    fn mutate(path: &str, at: usize, how: u8, c: char) -> String {
        let mut chars: Vec<char> = path.chars().collect();
        let at = at % (chars.len() + 1);
        match how % 3 {
            0 => chars.insert(at, c),
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ if at < chars.len() => chars[at] = c,
            _ => chars.push(c),
        }
        chars.into_iter().collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A path built from valid parts is read back as those parts, and
        /// forwarded as it came (less the prefix), with any query.
        #[test]
        fn valid_paths_parse_back_to_their_parts(
            (path, (provider, dialect, model, stream, target)) in prop_oneof![azure(), vertex(), bedrock()],
            query in "[a-z=&%0-9.-]{0,16}",
        ) {
            let route = classify(&Method::POST, &path).expect("a cloud route");
            prop_assert_eq!(route.provider, provider);
            prop_assert_eq!(route.dialect, Some(dialect));
            prop_assert_eq!(route.model.as_deref(), Some(model.as_str()));
            prop_assert_eq!(route.gemini_stream, stream);
            prop_assert_eq!(&route.cloud.as_ref().unwrap().target, &target);
            cloud_route(format!("{path}?{query}").as_bytes());
        }

        /// A valid path with one character changed: a route that reads it
        /// still names what the path says, or it is passed through unread.
        #[test]
        fn changed_paths_are_read_as_they_are_or_passed_through(
            (path, _) in prop_oneof![azure(), vertex(), bedrock()],
            at in any::<usize>(),
            how in any::<u8>(),
            c in prop::sample::select(vec!['/', ':', '%', '?', 'a', '.', '@', 'é', ' ']),
        ) {
            cloud_route(mutate(&path, at, how, c).as_bytes());
        }

        /// Any text: never a panic, never a route that disagrees with it.
        #[test]
        fn any_path_and_query(text in "(/(azure|vertex|bedrock|openai|model|v1|v1beta1|projects|locations|publishers|google|anthropic|models|deployments|endpoints|chat|completions|[a-z.%:@-]{0,6}))*(:[a-zA-Z]{0,12})?(/[a-z/-]{0,20})?(\\?.{0,8})?") {
            cloud_route(text.as_bytes());
        }

        #[test]
        fn any_bytes(data in prop::collection::vec(any::<u8>(), 0..64)) {
            cloud_route(&data);
        }
    }

    #[test]
    fn the_cloud_route_target_takes_every_shape() {
        for path in [
            "",
            "/azure",
            "/azure?api-version=1",
            "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
            "/openai/responses",
            "/vertex/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude@1:rawPredict",
            "/v1/projects/p/locations/us:x/endpoints/openapi/chat/completions",
            "/v1beta1/projects/p/locations/:x/endpoints/e/chat/completions",
            "/v1/projects/locations/x/publishers/google/models/m:generateContent",
            "/bedrock/model/anthropic.claude-x%3A0/invoke-with-response-stream",
            "/model/arn%3Aaws%3Abedrock/invoke",
            "/model//converse",
        ] {
            cloud_route(path.as_bytes());
        }
    }
}
