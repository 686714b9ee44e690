//! `toolwarden env`: the shell lines that point agents and SDKs at the gateway.

use std::net::SocketAddr;

/// `export` lines for Claude Code / the Anthropic SDKs, the OpenAI SDKs,
/// and Gemini (CLI and SDK), and the Codex CLI's config (as comments: Codex
/// reads `~/.codex/config.toml`, not the environment; a custom provider
/// needs `supports_websockets = true` for Codex's WebSocket transport, which
/// the gateway reads as it reads HTTP; or the same provider as `-c`
/// overrides on one command line), for a gateway at `addr`. An
/// unspecified address (`0.0.0.0`, `[::]`) is written as loopback.
pub fn env_lines(addr: SocketAddr) -> String {
    env_lines_for(&base_url(addr, false))
}

/// `http://ADDR`, or `https://ADDR` for a gateway serving HTTPS (`tls`),
/// with an unspecified address (`0.0.0.0`, `[::]`) written as loopback.
pub fn base_url(addr: SocketAddr, tls: bool) -> String {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(if addr.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    let scheme = if tls { "https" } else { "http" };
    format!("{scheme}://{addr}")
}

/// [`env_lines`] for a gateway reached at `base` (`https://gw.internal:8443`:
/// behind a load balancer, on another host), as the agents' machine names
/// it. Values are single-quoted: `eval` takes them as they are (an IPv6
/// address's brackets are no glob).
pub fn env_lines_for(base: &str) -> String {
    let base = base.trim_end_matches('/');
    format!(
        "# Claude Code, the Anthropic SDKs and the AI SDK's Anthropic provider\n\
         export ANTHROPIC_BASE_URL='{base}'\n\
         # The OpenAI SDKs and the AI SDK's OpenAI provider\n\
         export OPENAI_BASE_URL='{base}/v1'\n\
         # Codex CLI reads its config, not OPENAI_BASE_URL: at the top of\n\
         # ~/.codex/config.toml (model_provider above any [table])\n\
         #   model_provider = \"toolwarden\"\n\
         #   [model_providers.toolwarden]\n\
         #   name = \"OpenAI through toolwarden\"\n\
         #   base_url = \"{base}/v1\"\n\
         #   env_key = \"OPENAI_API_KEY\"\n\
         #   wire_api = \"responses\"\n\
         #   supports_websockets = true   # WebSocket mode, read by the gateway as HTTP is\n\
         # Codex signed in with ChatGPT: the same, with\n\
         #   base_url = \"{base}/backend-api/codex\"\n\
         #   requires_openai_auth = true   # (no env_key)\n\
         # or, for one run with an API key and no config file:\n\
         #   codex -c model_provider=toolwarden -c model_providers.toolwarden.name=toolwarden -c 'model_providers.toolwarden.base_url=\"{base}/v1\"' -c model_providers.toolwarden.env_key=OPENAI_API_KEY -c model_providers.toolwarden.wire_api=responses\n\
         # Gemini CLI with API-key auth (it sends no session id: one session per run with\n\
         #   GEMINI_CLI_CUSTOM_HEADERS=\"x-session-id: $(uuidgen)\" gemini ...);\n\
         # for the google-genai SDK pass\n\
         #   http_options={{\"base_url\": \"{base}\"}}  (Python: types.HttpOptions(base_url=...))\n\
         # and for the AI SDK's Google provider (it reads no variable)\n\
         #   createGoogleGenerativeAI({{ baseURL: \"{base}/v1beta\" }})\n\
         export GOOGLE_GEMINI_BASE_URL='{base}'\n\
         # Qwen Code reads the three variables (its --auth-type picks the API);\n\
         # OpenCode reads ANTHROPIC_BASE_URL and OPENAI_BASE_URL, and for Gemini its opencode.json\n\
         #   \"provider\": {{\"google\": {{\"options\": {{\"baseURL\": \"{base}/v1beta\"}}}}}}\n\
         # Cline's CLI takes a base URL per provider:\n\
         #   cline auth -p openai -k \"$OPENAI_API_KEY\" -m gpt-5.5 -b {base}/v1\n\
         #   and in ~/.cline/data/settings/providers.json \"baseUrl\": {base}/v1 for `openai-native`, {base} for `anthropic`\n\
         # GitHub Copilot CLI with a provider of your own (no GitHub sign-in with COPILOT_OFFLINE=true):\n\
         #   COPILOT_PROVIDER_BASE_URL={base}/v1 COPILOT_PROVIDER_API_KEY=\"$OPENAI_API_KEY\" COPILOT_PROVIDER_WIRE_API=responses copilot ...\n\
         #   (COPILOT_PROVIDER_TYPE=anthropic with COPILOT_PROVIDER_BASE_URL={base}; COPILOT_PROVIDER_TRANSPORT=websockets for WebSocket mode)\n\
         # pi (@mariozechner/pi-coding-agent): its built-in providers by base URL, in ~/.pi/agent/models.json\n\
         #   {{\"providers\": {{\"anthropic\": {{\"baseUrl\": \"{base}\"}}, \"openai\": {{\"baseUrl\": \"{base}/v1\"}}, \"google\": {{\"baseUrl\": \"{base}/v1beta\"}}, \"amazon-bedrock\": {{\"baseUrl\": \"{base}/bedrock\"}}}}}}\n\
         # OpenClaw: a provider of its own per API in ~/.openclaw/openclaw.json, \"models\": {{\"mode\": \"merge\", \"providers\": {{\"gw\": …}}}}\n\
         #   {{\"baseUrl\": \"{base}/v1\", \"api\": \"openai-responses\", \"apiKey\": \"…\", \"models\": [{{\"id\": \"gpt-5.5\", \"name\": \"gpt-5.5\"}}]}}  (\"openai-completions\"; \"anthropic-messages\" at {base})\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_point_at_the_gateway() {
        let text = env_lines("127.0.0.1:8080".parse().unwrap());
        assert!(text.contains("export ANTHROPIC_BASE_URL='http://127.0.0.1:8080'\n"));
        assert!(text.contains("export OPENAI_BASE_URL='http://127.0.0.1:8080/v1'\n"));
        assert!(text.contains("export GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:8080'\n"));
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
        assert!(v6.contains("export ANTHROPIC_BASE_URL='http://[::1]:9000'\n"));
        let remote = env_lines_for("https://gw.internal:8443/");
        assert!(remote.contains("export OPENAI_BASE_URL='https://gw.internal:8443/v1'\n"));
        assert!(remote.contains("baseURL: \"https://gw.internal:8443/v1beta\""));
    }

    /// What the lines set is what a POSIX shell's `eval` makes of them,
    /// brackets and all.
    #[test]
    fn a_shell_evaluates_the_lines_to_the_urls() {
        let dir = tempfile::tempdir().unwrap();
        let lines = dir.path().join("lines.sh");
        std::fs::write(&lines, env_lines("[::1]:9000".parse().unwrap())).unwrap();
        // A file the glob `http://[::1]:9000` matches, were it unquoted.
        std::fs::create_dir(dir.path().join("http:")).unwrap();
        std::fs::write(dir.path().join("http:").join("1:9000"), b"").unwrap();
        let Ok(out) = std::process::Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg("eval \"$(cat lines.sh)\" && printf '%s' \"$ANTHROPIC_BASE_URL\"")
            .output()
        else {
            return; // no shell here
        };
        assert_eq!(String::from_utf8_lossy(&out.stdout), "http://[::1]:9000");
    }

    /// The Codex CLI's one-run line, split as a POSIX shell splits it, is
    /// `codex` and its `-c` overrides, the base URL a TOML string, IPv6
    /// brackets and all.
    #[test]
    fn a_shell_splits_the_codex_line_into_its_overrides() {
        let text = env_lines("[::1]:9000".parse().unwrap());
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("#   codex -c "))
            .expect("a one-run line for the Codex CLI");
        let Ok(out) = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("set -- codex -c {line}; printf '%s\\n' \"$@\""))
            .output()
        else {
            return; // no shell here
        };
        let words = String::from_utf8_lossy(&out.stdout).into_owned();
        let words: Vec<&str> = words.lines().collect();
        assert_eq!(
            words,
            [
                "codex",
                "-c",
                "model_provider=toolwarden",
                "-c",
                "model_providers.toolwarden.name=toolwarden",
                "-c",
                "model_providers.toolwarden.base_url=\"http://[::1]:9000/v1\"",
                "-c",
                "model_providers.toolwarden.env_key=OPENAI_API_KEY",
                "-c",
                "model_providers.toolwarden.wire_api=responses",
            ]
        );
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
