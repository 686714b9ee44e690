//! `toolwarden env`: shell lines that point agent clients at the gateway.

use std::path::Path;

use super::{CmdError, Outcome};
use crate::config;

/// Print the lines for the gateway at `url` (as the agents reach it), else
/// for the given (`--listen`: no configuration read) or configured
/// listen address, read as `serve` reads it
/// ([`toolwarden_gateway::parse_listen`]: a bare port and `localhost:PORT`
/// included; an unspecified address is written as loopback).
pub fn run(
    listen: Option<String>,
    url: Option<String>,
    config_file: Option<&Path>,
) -> Result<Outcome, CmdError> {
    if let Some(url) = url {
        let base = gateway_url(&url)?;
        out!("{}", toolwarden_gateway::env_lines_for(&base));
        return Ok(Outcome::Ok);
    }
    // Given, the address is all the lines need: the config file and the
    // variables are not read (a `toolwarden.toml` of the working
    // directory that does not parse cannot stop them).
    let (listen, tls) = match listen {
        Some(listen) => (listen, false),
        None => {
            let raw = config::file_and_env(config_file)?;
            let tls = raw.tls_cert.is_some();
            let listen = raw
                .listen
                .unwrap_or_else(|| toolwarden_gateway::DEFAULT_LISTEN.to_string());
            (listen, tls)
        }
    };
    let addr = toolwarden_gateway::parse_listen(&listen).map_err(CmdError)?;
    // Port 0 is a free port taken at start: lines naming it reach nothing.
    if addr.port() == 0 {
        return Err(CmdError(format!(
            "listen {listen:?}: port 0 is a free port `serve` takes at start; pass the port \
             it printed (`toolwarden: listening on …`) with --listen or --url"
        )));
    }
    // A gateway serving HTTPS (`tls_cert`) is reached by `https://`.
    out!(
        "{}",
        toolwarden_gateway::env_lines_for(&toolwarden_gateway::base_url(addr, tls))
    );
    Ok(Outcome::Ok)
}

/// `http(s)://host[:port]` with no path, query or credentials: the base the
/// lines append `/v1` and the rest to.
fn gateway_url(url: &str) -> Result<String, CmdError> {
    let bad = |why: &str| CmdError(format!("--url {url:?}: {why}"));
    let uri: http::Uri = url
        .trim_end_matches('/')
        .parse()
        .map_err(|_| bad("not a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(bad("expected http:// or https://")),
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("no credentials in the URL"));
    }
    // The lines are `eval`ed: a quote in the host (`http://a'$(cmd)'b`,
    // which `http::Uri` takes) would end the quoted value and run the rest.
    if !authority.as_str().chars().all(host_char) {
        return Err(bad(
            "the host must be a name, an IP address or [IPv6], with a port or not",
        ));
    }
    if uri.path_and_query().is_some_and(|p| p.as_str() != "/") {
        return Err(bad("no path or query: the gateway's root"));
    }
    Ok(format!(
        "{}://{authority}",
        uri.scheme_str().unwrap_or("http")
    ))
}

/// A character of `host[:port]`: a DNS name (or a container's, with `_`),
/// an IPv4 or a bracketed IPv6 address (with a `%` zone), a port.
fn host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']' | '%')
}

#[cfg(test)]
mod tests {
    use super::gateway_url;

    #[test]
    fn a_gateway_url_is_a_scheme_and_a_host() {
        assert_eq!(
            gateway_url("https://gw.internal:8443/").unwrap(),
            "https://gw.internal:8443"
        );
        assert_eq!(
            gateway_url("http://[::1]:9000").unwrap(),
            "http://[::1]:9000"
        );
        assert_eq!(
            gateway_url("http://toolwarden_gw-1.svc:8080").unwrap(),
            "http://toolwarden_gw-1.svc:8080"
        );
        for bad in [
            "gw:8080",
            "ftp://x",
            "https://u:p@x",
            "https://x/v1",
            "https://x?a=1",
            "",
            // Shell text in the host: the lines are `eval`ed.
            "http://a'$(touch${IFS}pwned)'b:80",
            "http://gw!x",
        ] {
            assert!(gateway_url(bad).is_err(), "{bad}");
        }
    }
}
