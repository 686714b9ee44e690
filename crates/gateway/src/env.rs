//! `toolwarden env`: the shell lines that point agents and SDKs at the gateway.

use std::net::SocketAddr;

/// `export` lines for Claude Code / the Anthropic SDKs, the OpenAI SDKs,
/// and Gemini (CLI and SDK), and the Codex CLI's config (as comments: Codex
/// reads `~/.codex/config.toml`, not the environment; a custom provider
/// needs `supports_websockets = true` for Codex's WebSocket transport, which
/// the gateway reads as it reads HTTP), for a gateway at `addr`. An
/// unspecified address (`0.0.0.0`, `[::]`) is written as loopback.
pub fn env_lines(addr: SocketAddr) -> String {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(if addr.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    format!(
        "# Claude Code and the Anthropic SDKs\n\
         export ANTHROPIC_BASE_URL=http://{addr}\n\
         # The OpenAI SDKs\n\
         export OPENAI_BASE_URL=http://{addr}/v1\n\
         # Codex CLI reads its config, not OPENAI_BASE_URL: in ~/.codex/config.toml\n\
         #   model_provider = \"toolwarden\"\n\
         #   [model_providers.toolwarden]\n\
         #   name = \"OpenAI through toolwarden\"\n\
         #   base_url = \"http://{addr}/v1\"\n\
         #   env_key = \"OPENAI_API_KEY\"\n\
         #   wire_api = \"responses\"\n\
         #   supports_websockets = true   # WebSocket mode, read by the gateway as HTTP is\n\
         # Codex signed in with ChatGPT: the same, with\n\
         #   base_url = \"http://{addr}/backend-api/codex\"\n\
         #   requires_openai_auth = true   # (no env_key)\n\
         # Gemini CLI (it sends no session id: one session per run with\n\
         #   GEMINI_CLI_CUSTOM_HEADERS=\"x-session-id: $(uuidgen)\" gemini ...);\n\
         # for the google-genai SDK pass\n\
         #   http_options={{\"base_url\": \"http://{addr}\"}}  (Python: types.HttpOptions(base_url=...))\n\
         export GOOGLE_GEMINI_BASE_URL=http://{addr}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_point_at_the_gateway() {
        let text = env_lines("127.0.0.1:8080".parse().unwrap());
        assert!(text.contains("export ANTHROPIC_BASE_URL=http://127.0.0.1:8080\n"));
        assert!(text.contains("export OPENAI_BASE_URL=http://127.0.0.1:8080/v1\n"));
        assert!(text.contains("export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8080\n"));
        assert!(text.contains("http_options"));
        assert!(text.contains("#   base_url = \"http://127.0.0.1:8080/v1\"\n"));
        assert!(text.contains("supports_websockets = true"));
        assert!(!text.contains("supports_websockets = false"));
        assert!(text.contains("#   base_url = \"http://127.0.0.1:8080/backend-api/codex\"\n"));
        // Every line is a comment or an export: `eval` takes it whole.
        assert!(
            text.lines()
                .all(|l| l.starts_with('#') || l.starts_with("export "))
        );
        let any = env_lines("0.0.0.0:9000".parse().unwrap());
        assert!(any.contains("http://127.0.0.1:9000/v1"));
        let v6 = env_lines("[::]:9000".parse().unwrap());
        assert!(v6.contains("http://[::1]:9000"));
    }

    /// The README shows `toolwarden env`'s output at the default address:
    /// it is that output, line for line.
    #[test]
    fn the_readme_shows_the_lines_as_printed() {
        let readme = include_str!("../../../README.md");
        let begin = "```sh\n$ toolwarden env\n";
        let start = readme.find(begin).expect("README shows `toolwarden env`") + begin.len();
        let stop = readme[start..].find("```").expect("end of the block") + start;
        let lines = env_lines(crate::DEFAULT_LISTEN.parse().unwrap());
        assert!(
            readme[start..stop] == lines,
            "README.md's `toolwarden env` block is stale; replace it with:\n{lines}"
        );
    }
}
