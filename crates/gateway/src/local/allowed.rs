//! [`AllowedHosts`]: the host names a gateway bound to a loopback address
//! answers besides its loopback ones (setting `allowed_hosts`), read and
//! checked once with the rest of the config.

use std::net::IpAddr;

/// Host names a gateway bound to a loopback address answers besides
/// `localhost`, names under it and loopback address literals (setting
/// `allowed_hosts`; the guard against DNS rebinding: a web page whose name
/// resolves to 127.0.0.1 names its own host). An entry is a name (`gw.example`),
/// a name with its subdomains (`.example.com`: `example.com` and any name
/// under it), an IP address, or `*` for any host. Ports are not compared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    any: bool,
    /// Lower case, without a final dot.
    names: Vec<String>,
    /// Each with its subdomains: lower case, without the leading dot.
    domains: Vec<String>,
    addresses: Vec<IpAddr>,
}

// === impl AllowedHosts ===

impl AllowedHosts {
    /// Reads the entries of `allowed_hosts`; a malformed one is a problem
    /// naming it (a URL, a port, a wildcard other than `*`, a character no
    /// host name has).
    pub(crate) fn parse(entries: &[String]) -> Result<AllowedHosts, String> {
        let mut allowed = AllowedHosts::default();
        for entry in entries {
            allowed
                .add(entry.trim())
                .map_err(|why| format!("allowed_hosts {entry:?}: {why}"))?;
        }
        Ok(allowed)
    }

    fn add(&mut self, entry: &str) -> Result<(), &'static str> {
        if entry == "*" {
            self.any = true;
            return Ok(());
        }
        if entry.is_empty() {
            return Err(
                "an empty entry (give a host name, .domain for a domain and its subdomains, or *)",
            );
        }
        if entry.contains("://") || entry.contains('/') {
            return Err("a host name, not a URL (gw.example, not https://gw.example/)");
        }
        if let Some(v6) = entry.strip_prefix('[') {
            let Some(address) = v6.strip_suffix(']').and_then(|a| a.parse().ok()) else {
                return Err("not an IPv6 address in brackets, and without a port");
            };
            self.addresses.push(address);
            return Ok(());
        }
        if let Ok(address) = entry.parse::<IpAddr>() {
            self.addresses.push(address);
            return Ok(());
        }
        if entry.contains(':') {
            return Err("a host name without a port (any port of it is allowed)");
        }
        if entry.starts_with("*.") {
            return Err("write .example.com for example.com and every name under it");
        }
        let (name, domain) = match entry.strip_prefix('.') {
            Some(name) => (name, true),
            None => (entry, false),
        };
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        };
        if !name.split('.').all(label_ok) {
            return Err("not a host name (letters, digits, - and _ between dots)");
        }
        if domain {
            self.domains.push(name);
        } else {
            self.names.push(name);
        }
        Ok(())
    }

    /// Whether any host is allowed (`*`).
    pub fn allows_any(&self) -> bool {
        self.any
    }

    /// Whether no entry was given.
    pub fn is_empty(&self) -> bool {
        !self.any && self.names.is_empty() && self.domains.is_empty() && self.addresses.is_empty()
    }

    /// Whether the name of a `Host` value (without its port, brackets or
    /// final dot: [`super::host_name`]) is allowed.
    pub(crate) fn admits(&self, name: &str) -> bool {
        if self.any {
            return true;
        }
        if let Ok(address) = name.parse::<IpAddr>() {
            return self
                .addresses
                .iter()
                .any(|a| a.to_canonical() == address.to_canonical());
        }
        let matches = |want: &String| name.eq_ignore_ascii_case(want);
        self.names.iter().any(matches)
            || self.domains.iter().any(|d| {
                matches(d)
                    || name
                        .len()
                        .checked_sub(d.len() + 1)
                        .and_then(|at| name.get(at..))
                        .and_then(|tail| tail.strip_prefix('.'))
                        .is_some_and(|tail| tail.eq_ignore_ascii_case(d))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(entries: &[&str]) -> Result<AllowedHosts, String> {
        AllowedHosts::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn entries_name_hosts_domains_addresses_or_any() {
        let a = allowed(&[
            "GW.example",
            " .corp.example. ",
            "10.0.0.7",
            "[2001:db8::1]",
            "::2",
        ])
        .unwrap();
        for name in [
            "gw.example",
            "gw.EXAMPLE",
            "corp.example",
            "a.b.corp.example",
            "10.0.0.7",
            "2001:db8::1",
            "::2",
            "::ffff:10.0.0.7",
        ] {
            assert!(a.admits(name), "{name}");
        }
        for name in [
            "attacker.example",
            "x.gw.example",
            "evilcorp.example",
            "corp.example.attacker.example",
            "10.0.0.8",
            "",
        ] {
            assert!(!a.admits(name), "{name}");
        }
        assert!(!a.allows_any() && !a.is_empty());
        let any = allowed(&["*"]).unwrap();
        assert!(any.allows_any() && any.admits("attacker.example"));
        assert!(allowed(&[]).unwrap().is_empty());
    }

    #[test]
    fn a_malformed_entry_is_named_with_the_fix() {
        for (entry, says) in [
            ("https://gw.example/", "not a URL"),
            ("gw.example:8443", "without a port"),
            ("*.example.com", ".example.com"),
            ("", "empty"),
            ("gw example", "not a host name"),
            ("a..b", "not a host name"),
            ("[::1", "IPv6"),
            ("[gw]", "IPv6"),
        ] {
            let err = allowed(&["ok.example", entry]).expect_err(entry);
            assert!(
                err.contains(&format!("{entry:?}")) && err.contains(says),
                "{err}"
            );
        }
    }
}
