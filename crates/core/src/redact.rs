//! Credentials cut out of text that leaves a tool's hands: the runtime's
//! model-facing messages and the gateway's failure excerpts (stored, logged
//! as JSON lines, shown on the dashboard and sent to webhooks). Tools echo
//! what they were given: an HTTP client's error names the URL it fetched
//! (`?appid=…`, `user:password@`), a failed `curl -v` prints its
//! `Authorization` header, a stack trace holds a config's `api_key=…`.
//!
//! [`without_secrets`] replaces:
//! - in a URL (`scheme://…`): everything but scheme, host and path (no
//!   `user:password@`, no `?query`, no `#fragment`), and a webhook's
//!   secret path (Slack's `hooks.slack.com/services/…`, Discord's, Teams',
//!   `/hooks/…`, a Telegram bot's token), the hosts' own also without a
//!   scheme (`hooks.slack.com/services/…` in a config file);
//! - the token after `Bearer ` / `Basic ` / `Token ` / `ApiKey `;
//! - keys recognisable by their prefix (`sk-…` for OpenAI and Anthropic,
//!   `AIza…` Google, `ghp_…`/`github_pat_…` GitHub, `xoxb-…` Slack,
//!   `AKIA…` AWS, and the like), with [`REDACTED`];
//! - the value of a `name=value` or `name: value` pair whose name ends in
//!   `key`, `token`, `secret`, `password`, `passwd`, `signature` or
//!   `credential` (`api_key=…`, `"password": "…"`, `X-Api-Key: …`, an AWS
//!   SigV4 `Authorization` header's `Credential=…` and `Signature=…`, a
//!   presigned URL's `X-Amz-Signature=…`, `X-Amz-Credential=…` and
//!   `X-Amz-Security-Token=…` when its query stands without its URL), and
//!   of such a command-line flag (`--password x`, `--password=x`); a
//!   `name: value` that starts its line (a header, a YAML key) loses its
//!   unquoted value to the line's end, spaces and all;
//! - curl's `-u user:pass` / `--user user:pass`;
//! - a `Cookie:` or `Set-Cookie:` header's value, to the line's end.
//!
//! It errs on the side of cutting: an excerpt that loses a harmless word
//! is still an excerpt. The same text always gives the same output.

use std::borrow::Cow;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The prefixes of API keys and tokens that start with `first` (each
/// prefix followed by at least [`MIN_KEY_TAIL`] characters of the key's
/// alphabet is a key), by a jump on the byte: most words start with no
/// prefix's letter, and those that do are compared with a few prefixes.
fn key_prefixes(first: u8) -> &'static [&'static str] {
    match first {
        b's' => &["sk-", "sk_live_", "sk_test_"],
        b'r' => &["rk_live_"],
        b'p' => &["pk_live_"],
        b'A' => &["AIza", "AKIA", "ASIA"],
        b'g' => &[
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
            "glpat-",
        ],
        b'x' => &["xoxb-", "xoxp-", "xoxa-", "xapp-"],
        b'h' => &["hf_"],
        b'n' => &["npm_"],
        b'y' => &["ya29."],
        _ => &[],
    }
}

/// How many characters must follow a key prefix for it to be a key (`sk-`
/// alone, `ASIAN` or `task-1` are not).
const MIN_KEY_TAIL: usize = 16;

/// Words after which the next token is a credential (`ApiKey`:
/// Elasticsearch's authorization scheme).
const SCHEMES: &[&str] = &["bearer", "basic", "token", "apikey"];

/// Endings of a name whose value is a credential (`signature` and
/// `credential`: AWS SigV4's, in an `Authorization` header or a presigned
/// URL's query).
const SECRET_NAMES: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "signature",
    "credential",
];

/// `text` with the secrets described in the module's documentation replaced.
pub fn without_secrets(text: &str) -> Cow<'_, str> {
    let keys = without_private_keys(text);
    let urls = match without_url_secrets(&keys) {
        Cow::Borrowed(_) => keys,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let urls = match without_bare_webhooks(&urls) {
        Cow::Borrowed(_) => urls,
        Cow::Owned(s) => Cow::Owned(s),
    };
    match without_tokens(&urls) {
        Cow::Borrowed(_) => urls,
        Cow::Owned(s) => Cow::Owned(s),
    }
}

/// A PEM private key block (`-----BEGIN … PRIVATE KEY-----` to its
/// `-----END … PRIVATE KEY-----`, or to the text's end) as [`REDACTED`]. A
/// search for its marker when there is none: cheap on any text, so a
/// caller that cuts a long text into windows can run it on the whole
/// first (a key spans lines, and a window may hold only its middle).
pub fn without_private_keys(text: &str) -> Cow<'_, str> {
    const BEGIN: &str = "-----BEGIN ";
    const END: &str = "PRIVATE KEY-----";
    if !text.contains(END) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(b) = rest.find(BEGIN) {
        let header_end = rest[b..].find('\n').map_or(rest.len(), |i| b + i);
        if !rest[b..header_end].contains(END) {
            out.push_str(&rest[..header_end]);
            rest = &rest[header_end..];
            continue;
        }
        out.push_str(&rest[..b]);
        out.push_str(REDACTED);
        rest = match rest[header_end..].find("-----END ") {
            Some(e) => {
                let after = header_end + e;
                let close = rest[after..]
                    .find(END)
                    .map_or(rest.len(), |i| after + i + END.len());
                &rest[close..]
            }
            None => "",
        };
    }
    // Key material whose header is not in `text` (cut before it): the run
    // of base64 lines before its `-----END … PRIVATE KEY-----`.
    if let Some(e) = rest.find("-----END ").filter(|&e| rest[e..].contains(END)) {
        let start = key_lines_start(&rest[..e]);
        out.push_str(&rest[..start]);
        out.push_str(REDACTED);
        let close = rest[e..]
            .find(END)
            .map_or(rest.len(), |i| e + i + END.len());
        rest = &rest[close..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Where the run of base64 lines (a key's body) that ends `text` starts.
fn key_lines_start(text: &str) -> usize {
    let mut start = text.len();
    for line in text.split_inclusive('\n').rev() {
        let l = line.trim();
        let base64 = !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
        if !base64 {
            break;
        }
        start -= line.len();
    }
    start
}

/// `text` with every URL in it (`scheme://…`, up to a space, a quote or a
/// bracket) cut to scheme, host and path: no `user:password@`, no
/// `?query` (where API keys travel: `?key=`, `&appid=`), no `#fragment`.
pub fn without_url_secrets(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The scheme: the letters, digits, `+ - .` just before `://`.
        let scheme = scheme_start(&rest[..at]);
        out.push_str(&rest[..at + 3]);
        let after = &rest[at + 3..];
        let end_from = |from: usize| {
            after[from..]
                .find(ends_url)
                .map_or(after.len(), |e| from + e)
        };
        let mut end = end_from(0);
        // An IPv6 host's `]` (`[::1]:8080`) does not end its URL.
        if after[end..].starts_with(']')
            && after[..end]
                .find('[')
                .is_some_and(|b| !after[..b].contains(['/', '?', '#']))
        {
            end = end_from(end + 1);
        }
        let url = &after[..end];
        if scheme == at {
            // No scheme before `://`: not a URL.
            out.push_str(url);
        } else {
            let url = after_raw_password(url);
            // Host and path: what precedes the query, after its last `@`
            // (a password may hold a `/`; a path's own `@` loses what is
            // before it, which errs on the safe side).
            let path_end = url.find(['?', '#']).unwrap_or(url.len());
            let before_query = &url[..path_end];
            // A webhook's secret path goes too (its `@`s are its own).
            // One cut already (`…/services/[redacted]`, whose `]` ends
            // the URL) is left as it is.
            let cut_already = |s: &usize| {
                before_query[*s..] == REDACTED[..REDACTED.len() - 1]
                    && after[end..].starts_with(']')
            };
            let secret_path = secret_path_start(before_query).filter(|s| !cut_already(s));
            let kept = &before_query[..secret_path.unwrap_or(before_query.len())];
            let host_and_path = match kept.rfind('@') {
                Some(i) => &kept[i + 1..],
                None => kept,
            };
            out.push_str(host_and_path);
            if secret_path.is_some() {
                out.push_str(REDACTED);
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A URL (after its `scheme://`) without a `user:password@` whose password
/// holds a raw `?` or `#` (`app:pa#ss@db/x`): what follows its `@`. The
/// query or fragment such a password seems to start is not one when what
/// precedes it is `name:` and not a port (`host:8443?a=b@c` keeps its
/// host).
fn after_raw_password(url: &str) -> &str {
    let authority = &url[..url.find(['/', '?', '#']).unwrap_or(url.len())];
    let password_like = !authority.contains('@')
        && !authority.starts_with('[')
        && authority
            .split_once(':')
            .is_some_and(|(_, after)| !after.bytes().all(|b| b.is_ascii_digit()));
    match url[authority.len()..].find('@') {
        Some(at) if password_like => &url[authority.len() + at + 1..],
        _ => url,
    }
}

/// Where the scheme that `before` (a text up to a `://`) ends with
/// starts: after the last character that cannot be a scheme's. Always a
/// char boundary (`链接https://…`: the scheme starts after `接`).
fn scheme_start(before: &str) -> usize {
    before
        .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        .len()
}

/// Whether `c` ends a URL (what [`without_url_secrets`] reads as one).
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')' | ']' | '}' | '`')
}

/// Where a URL that `text` ends inside starts (its scheme), if it ends
/// inside one: a `scheme://` with nothing that ends a URL after it. A
/// caller that cuts a text short ends it there: a URL cut before its `@`
/// looks like one without `user:password@`, and keeps them.
pub fn open_url_start(text: &str) -> Option<usize> {
    let at = text.rfind("://")?;
    if text[at..].contains(ends_url) {
        return None;
    }
    let scheme = scheme_start(&text[..at]);
    (scheme < at).then_some(scheme)
}

/// Where the secret part of a URL's path begins (its host and path, no
/// query), if it has one: a webhook's URL is its credential, and anyone who
/// holds it can post. Slack (`hooks.slack.com/services/T…/B…/…`, also
/// `workflows/` and `triggers/`), Discord (`/api/webhooks/{id}/{token}`),
/// Microsoft Teams (`….webhook.office.com/webhookb2/…`), Mattermost,
/// Rocket.Chat, Zapier and the like (`/hooks/…`, `/webhooks/…`,
/// `/webhook/…`), IFTTT (`/with/key/{key}`) and a Telegram bot's token
/// (`api.telegram.org/bot{token}/…`). It errs on the side of cutting:
/// `/repos/o/r/hooks/1` loses its hook's number.
fn secret_path_start(url: &str) -> Option<usize> {
    const AFTER: &[&str] = &[
        "/hooks/",
        "/webhooks/",
        "/webhook/",
        "/webhookb2/",
        "/with/key/",
    ];
    let lower = url.to_ascii_lowercase();
    let mut start = AFTER
        .iter()
        .filter_map(|marker| lower.find(marker).map(|i| i + marker.len()))
        .min();
    // Slack: the first segment (`services/`) names the kind; the rest is
    // the secret.
    if let Some(i) = lower.find("hooks.slack.com/") {
        let kind = i + "hooks.slack.com/".len();
        let from = lower[kind..].find('/').map_or(kind, |j| kind + j + 1);
        start = Some(start.map_or(from, |s| s.min(from)));
    }
    if let Some(i) = lower.find("api.telegram.org/") {
        let path = &lower[i + "api.telegram.org/".len()..];
        let bot = path.strip_prefix("file/").unwrap_or(path);
        if bot.starts_with("bot") {
            let from = lower.len() - bot.len() + "bot".len();
            start = Some(start.map_or(from, |s| s.min(from)));
        }
    }
    // Nothing to cut when the marker ends the URL.
    start.filter(|&s| s < url.len())
}

/// Webhook hosts (and their API's path) also written without a scheme, as a config file or a log may: Slack's, Discord's, Teams' and
/// a Telegram bot's.
const BARE_WEBHOOKS: &[&str] = &[
    "hooks.slack.com/",
    "discord.com/api/",
    "discordapp.com/api/",
    ".webhook.office.com/",
    "api.telegram.org/",
];

/// `text` with the secret path of a webhook URL written without its
/// scheme (`hooks.slack.com/services/T…/B…/…`) replaced, as
/// [`without_url_secrets`] replaces it in a `scheme://` URL (one it has
/// cut already is left as it is).
fn without_bare_webhooks(text: &str) -> Cow<'_, str> {
    if !names_a_webhook_host(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    // ASCII lower case keeps every byte where it was.
    let lower = text.to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for marker in BARE_WEBHOOKS {
        let mut from = 0;
        while let Some(at) = lower[from..].find(marker).map(|a| from + a) {
            // The URL: from its host's start to what ends a URL.
            let start = lower[..at]
                .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
                .len();
            let end = lower[at..].find(ends_url).map_or(lower.len(), |e| at + e);
            from = end.max(at + 1);
            let url = &text[start..end];
            let path_end = url.find(['?', '#']).unwrap_or(url.len());
            let Some(secret) = secret_path_start(&url[..path_end]) else {
                continue;
            };
            // (A `[redacted]` there ends the URL at its `]`.)
            if !text[..start].ends_with("://") && !text[start + secret..].starts_with(REDACTED) {
                cuts.push((start + secret, end));
            }
        }
    }
    if cuts.is_empty() {
        return Cow::Borrowed(text);
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (from, to) in cuts {
        if from < copied {
            continue;
        }
        out.push_str(&text[copied..from]);
        out.push_str(REDACTED);
        copied = to;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Whether `text` may hold one of [`BARE_WEBHOOKS`]: each has a `.com/`
/// or `.org/` (in any case), which most texts with a `/` in them (paths)
/// do not; only then is the text lower-cased and searched for each.
fn names_a_webhook_host(text: &[u8]) -> bool {
    memchr::memchr_iter(b'/', text).any(|slash| {
        text.get(slash.saturating_sub(4)..slash).is_some_and(|tld| {
            tld.eq_ignore_ascii_case(b".com") || tld.eq_ignore_ascii_case(b".org")
        })
    })
}

/// A character of a token, key or credential value.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/' | '=')
}

/// A character of a name (`api_key`, `X-Api-Key`).
fn is_name_char(c: char) -> bool {
    u8::try_from(c).is_ok_and(is_name_byte)
}

/// [`is_name_char`] of a byte, by table: it is asked of every byte of a
/// text being redacted.
fn is_name_byte(b: u8) -> bool {
    const NAME_BYTES: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            table[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
            b += 1;
        }
        table
    };
    NAME_BYTES[usize::from(b)]
}

/// A name ending in `key`, `token`, `secret`, `password`, `passwd`,
/// `signature` or `credential`: all but `key` however they are joined to
/// the rest of it
/// (`PGPASSWORD`, libpq's variable, `DBSECRET`); `key` as a word of its
/// own: the whole name (`key`), after `_` or `-` (`api_key`, `X-Api-Key`),
/// in camel case (`apiKey`), or `apikey`. Not `monkey`. The rule the
/// redaction of `name=value` pairs uses, for other names too (a URL's
/// query parameters: `toolwarden_store::redact_url`).
pub fn is_secret_name(name: &str) -> bool {
    if name.eq_ignore_ascii_case("apikey") {
        return true;
    }
    let last = name.as_bytes().last().map(u8::to_ascii_lowercase);
    SECRET_NAMES.iter().any(|s| {
        // The last letter first: most names end in none of theirs.
        if last != s.as_bytes().last().copied() {
            return false;
        }
        let Some(start) = name.len().checked_sub(s.len()) else {
            return false;
        };
        // A name that is not ASCII may not split there.
        if !name.is_char_boundary(start) || !name[start..].eq_ignore_ascii_case(s) {
            return false;
        }
        let head = &name[..start];
        if *s != "key" || head.is_empty() || head.ends_with(['_', '-']) {
            return true;
        }
        // Camel case: the ending starts with a capital after a small letter.
        name[start..].starts_with(|c: char| c.is_ascii_uppercase())
            && head.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
    })
}

/// Bearer tokens, prefixed keys and named secrets (not URLs).
fn without_tokens(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    // Bytes of `text` already handled (copied to `out` or replaced).
    let mut copied = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    // A flag's name after its dashes starts a word too.
    let mut flag_name = false;
    while i < bytes.len() {
        // Neither a word nor a flag starts at what is not a letter, a
        // digit or a dash: the spaces and signs between words cost this.
        if !bytes[i].is_ascii_alphanumeric() && bytes[i] != b'-' {
            flag_name = false;
            i += 1;
            continue;
        }
        // Only at the start of a word.
        let word_start = i == 0 || flag_name || !is_name_byte(bytes[i - 1]);
        flag_name = false;
        // A flag (`-u`, `--password`): its secret, else its name as a word.
        let dashes = bytes[i..].iter().take_while(|&&b| b == b'-').count();
        let flag = word_start
            && (1..=2).contains(&dashes)
            && bytes.get(i + dashes).is_some_and(u8::is_ascii_alphanumeric);
        if !flag && (!word_start || !bytes[i].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let found = if flag {
            flag_secret_at(text, dashes, i + dashes)
        } else {
            let name_len = name_len(&bytes[i..]);
            if !may_start_a_secret(&bytes[i..], name_len) {
                // The rest of the word, at once.
                i += name_len;
                continue;
            }
            secret_at(text, i)
        };
        if flag && found.is_none() {
            i += dashes;
            flag_name = true;
            continue;
        }
        if let Some((from, to)) = found {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..from]);
            o.push_str(REDACTED);
            copied = to;
            i = to;
            continue;
        }
        // Skip the rest of the word.
        while i < bytes.len() && is_name_byte(bytes[i]) {
            i += 1;
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

/// Where a quoted value (after its opening `quote`) ends: at its closing
/// quote (not an escaped one inside it) or its line's end, whichever comes
/// first; `None` at neither. The line's end is looked for before the quote
/// only: a search to the text's end for each value would make a long line
/// of them quadratic.
fn quoted_len(value: &str, quote: &str) -> Option<usize> {
    let close = closing_quote(value, quote);
    value[..close.unwrap_or(value.len())].find('\n').or(close)
}

/// Where `quote` closes `value`: its first occurrence not escaped with a
/// backslash (for the escaped quote `\"`, its first occurrence).
fn closing_quote(value: &str, quote: &str) -> Option<usize> {
    if quote.len() > 1 {
        return value.find(quote);
    }
    let mut escaped = false;
    for (i, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if quote.starts_with(c) => return Some(i),
            _ => {}
        }
    }
    None
}

/// The byte range of a command-line flag's secret value: `--password x`
/// and the like (a flag whose name [`is_secret_name`], its value the next
/// word unless that is another flag; a quoted one, to its closing quote),
/// curl's `-u user:pass` and `--user user:pass` (a value with a `:`).
/// `--password=x` is [`secret_at`]'s. `name_from`: where the name starts, after its `dashes`.
fn flag_secret_at(text: &str, dashes: usize, name_from: usize) -> Option<(usize, usize)> {
    let rest = &text[name_from..];
    let name_len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
    let name = &rest[..name_len];
    let after = &rest[name_len..];
    let user = (dashes == 1 && name == "u") || (dashes == 2 && name == "user");
    if !user && !is_secret_name(name) {
        return None;
    }
    if !user && after.starts_with(['=', ':']) {
        return secret_at(text, name_from);
    }
    let value = after
        .strip_prefix(['=', ' '])
        .filter(|_| user || after.starts_with(' '))?;
    // A quoted value (`--password 'a b'`) ends at its closing quote or the
    // line's end, and keeps its quotes; another, at a space.
    let quote = ["\"", "'"].into_iter().find(|q| value.starts_with(q));
    let value = quote.map_or(value, |q| &value[q.len()..]);
    let len = match quote {
        Some(q) => quoted_len(value, q).unwrap_or(value.len()),
        None => value.find(char::is_whitespace).unwrap_or(value.len()),
    };
    let word = &value[..len];
    if word.is_empty() || word.starts_with('-') || (user && !word.contains(':')) {
        return None;
    }
    let from = text.len() - value.len();
    Some((from, from + len))
}

/// Whether a word at the start of `rest`, whose name (letters, digits,
/// `-`, `_`) is `name_len` bytes long, may begin a secret that
/// [`secret_at`] finds: it starts with a key's prefix, or its name ends
/// like one [`secret_at`] reads ([`ends_like_a_name`]). Most words do
/// neither, and this is all they cost.
fn may_start_a_secret(rest: &[u8], name_len: usize) -> bool {
    key_prefixes(rest[0])
        .iter()
        .any(|p| rest.starts_with(p.as_bytes()))
        || ends_like_a_name(&rest[..name_len])
}

/// How many name bytes ([`is_name_byte`]) `rest` starts with.
fn name_len(rest: &[u8]) -> usize {
    rest.iter()
        .position(|&b| !is_name_byte(b))
        .unwrap_or(rest.len())
}

/// The byte range of a secret whose word starts at `i`, if one does.
fn secret_at(text: &str, i: usize) -> Option<(usize, usize)> {
    let rest = &text[i..];
    // A token ends at the first character not of its alphabet; a final
    // `.` is the sentence's (a JWT's dots are inside it).
    let token_end = |from: usize| {
        let len = text[from..]
            .find(|c: char| !is_token_char(c))
            .unwrap_or(text.len() - from);
        from + text[from..from + len].trim_end_matches('.').len()
    };
    // A key by its prefix (most words start with no prefix's letter).
    for prefix in key_prefixes(rest.as_bytes()[0]) {
        if rest.starts_with(prefix) {
            let end = token_end(i + prefix.len());
            if end - (i + prefix.len()) >= MIN_KEY_TAIL {
                return Some((i, end));
            }
        }
    }
    // Name characters are ASCII: a byte search.
    let name_len = name_len(rest.as_bytes());
    let name = &rest[..name_len];
    // Every name read below (`cookie`, a scheme, a secret's name) ends
    // like one ([`ends_like_a_name`]): any other word is none of them.
    if !ends_like_a_name(name.as_bytes()) {
        return None;
    }
    let after = &rest[name_len..];
    // A `Cookie:` or `Set-Cookie:` header: its whole value, to the line's end.
    if name.eq_ignore_ascii_case("cookie") || name.eq_ignore_ascii_case("set-cookie") {
        let value = after.trim_start_matches([' ', '\t']).strip_prefix(':');
        if let Some(value) = value.map(|v| v.trim_start_matches([' ', '\t'])) {
            let len = value.find(['\r', '\n']).unwrap_or(value.len());
            if len > 0 {
                let from = text.len() - value.len();
                return Some((from, from + len));
            }
        }
    }
    // `Bearer <token>`: the scheme stays, the token goes; a token has a
    // digit, a sign or a capital after its first letter in it, or is long
    // (`Invalid token provided`, `basic functionality` are words; base64
    // such as `YWxhZGRpbjpvcGVuc2VzYW1l` is not).
    // Spaces or tabs between them, as a header's writer put them.
    let gap = after.len() - after.trim_start_matches([' ', '\t']).len();
    if SCHEMES.iter().any(|s| name.eq_ignore_ascii_case(s)) && gap > 0 {
        let from = i + name_len + gap;
        let end = token_end(from);
        let token = &text[from..end];
        let looks_issued = |t: &str| {
            t.contains(|c: char| c.is_ascii_digit() || "._-+/=~".contains(c))
                || t[1..].contains(|c: char| c.is_ascii_uppercase())
                || t.len() >= 20
        };
        // Token characters are ASCII: `t[1..]` is a boundary.
        if token.len() >= 8 && looks_issued(token) {
            return Some((from, end));
        }
    }
    // `name=value`, `name = 'value'`, `name: value`, `"name": "value"`,
    // and the same escaped inside a JSON string (`\"name\": \"value\"`).
    if is_secret_name(&rest[..name_len]) {
        let quote = |s: &str| -> Option<usize> {
            ["\\\"", "\"", "'"]
                .iter()
                .find(|q| s.starts_with(**q))
                .map(|q| q.len())
        };
        let mut sep = after;
        let quoted_name = quote(sep).is_some();
        if let Some(n) = quote(sep) {
            sep = &sep[n..];
        }
        let sep = sep.trim_start_matches([' ', '\t']);
        // `=`, `:`, Go's `:=`, PHP's and Ruby's `=>`; not a comparison (`==`).
        let (op, value) = ["=>", ":=", "=", ":"]
            .iter()
            .find_map(|op| sep.strip_prefix(op).map(|v| (*op, v)))
            .filter(|(_, v)| !v.starts_with('='))?;
        let value = value.trim_start_matches([' ', '\t']);
        let (value, closing) = match quote(value) {
            Some(n) => (&value[n..], Some(&value[..n])),
            None => (value, None),
        };
        let from = text.len() - value.len();
        // A header or a YAML key (`X-Api-Key: abc def`, curl's `> ` before
        // it): an unquoted value runs to its line's end, spaces and all.
        let header = !quoted_name && op == ":" && starts_line(text, i);
        let len = match closing {
            Some(q) => quoted_len(value, q),
            None if header => value.find(['\r', '\n']),
            None => value.find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ',' | ';' | '&' | '}' | ')')
            }),
        }
        .unwrap_or(value.len());
        if len > 0 {
            return Some((from, from + len));
        }
    }
    None
}

/// Whether `name` ends, in any case, like a name [`secret_at`] reads
/// after a word: `cookie`, the [`SCHEMES`], the [`SECRET_NAMES`] and
/// `apikey` (a jump on the last letter, then the endings with it). Most
/// words end in one of those names' last letters (`e`, `t`, `n`, `r`, `d`,
/// `l`), so the whole ending is what rules a word out.
fn ends_like_a_name(name: &[u8]) -> bool {
    let ends = |ending: &[u8]| {
        name.len() >= ending.len() && name[name.len() - ending.len()..].eq_ignore_ascii_case(ending)
    };
    match name.last().map(u8::to_ascii_lowercase) {
        Some(b'e') => ends(b"cookie") || ends(b"signature"),
        Some(b'r') => ends(b"bearer"),
        Some(b'c') => ends(b"basic"),
        Some(b'n') => ends(b"token"),
        Some(b'y') => ends(b"key"),
        Some(b't') => ends(b"secret"),
        Some(b'd') => ends(b"password") || ends(b"passwd"),
        Some(b'l') => ends(b"credential"),
        _ => false,
    }
}

/// Whether the word at `i` starts its line: only spaces, tabs and curl's
/// `> ` / `< ` markers before it. Looks back over those alone, so a long
/// line of words costs no more than reading it.
fn starts_line(text: &str, i: usize) -> bool {
    let before = text[..i].trim_end_matches([' ', '\t', '>', '<']);
    before.is_empty() || before.ends_with('\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The jumps `secret_at` skips words by hold what the lists they
    /// stand for need: a prefix filed under another byte, or a name added
    /// to a list without its ending, would never be found.
    #[test]
    fn the_skip_jumps_cover_their_lists() {
        for first in 0..=u8::MAX {
            for prefix in key_prefixes(first) {
                assert_eq!(prefix.as_bytes()[0], first, "{prefix}");
            }
        }
        let names = ["cookie", "set-cookie", "apikey"];
        for name in names.iter().chain(SCHEMES).chain(SECRET_NAMES) {
            assert!(ends_like_a_name(name.as_bytes()), "{name}");
            assert!(ends_like_a_name(name.to_uppercase().as_bytes()), "{name}");
            assert!(ends_like_a_name(format!("x_{name}").as_bytes()), "{name}");
        }
        for word in ["", "e", "the", "error", "monkeys", "tokens", "keyboard"] {
            assert!(!ends_like_a_name(word.as_bytes()), "{word}");
        }
        for host in BARE_WEBHOOKS {
            assert!(names_a_webhook_host(host.as_bytes()), "{host}");
            assert!(
                names_a_webhook_host(host.to_uppercase().as_bytes()),
                "{host}"
            );
        }
        for text in ["src/main.rs", ".com", "a.co/m", "/", "x.orgs/"] {
            assert!(!names_a_webhook_host(text.as_bytes()), "{text}");
        }
        // Upper case names end in the same letters.
        assert_eq!(without_secrets("PASSWORD=hunter2"), "PASSWORD=[redacted]");
        assert_eq!(without_secrets("Cookie: a=b"), "Cookie: [redacted]");
    }

    #[test]
    fn urls_lose_their_credentials_and_queries() {
        let clean = without_url_secrets;
        assert_eq!(clean("no url here"), "no url here");
        assert_eq!(
            clean(
                "HTTP status client error (401 Unauthorized) for url (https://api.x/w?q=Paris&appid=SECRET)"
            ),
            "HTTP status client error (401 Unauthorized) for url (https://api.x/w)"
        );
        assert_eq!(
            clean(
                "error sending request for url (https://user:hunter2@db.example:5432/a/b#frag): refused"
            ),
            "error sending request for url (https://db.example:5432/a/b): refused"
        );
        assert_eq!(
            clean("postgres://app:pa/ss@db:5432/x?sslmode=require"),
            "postgres://db:5432/x"
        );
        assert_eq!(clean("a :// b"), "a :// b");
        // A password with a raw `#` or `?` (not a URL's own, but what a
        // config holds and an error echoes).
        assert_eq!(
            clean("invalid dsn: postgres://app:pa#ss@db:5432/x"),
            "invalid dsn: postgres://db:5432/x"
        );
        assert_eq!(clean("redis://:p?w@cache:6379/0"), "redis://cache:6379/0");
        // An IPv6 host's `]` does not end the URL: its query goes too.
        assert_eq!(
            clean("GET http://u:pw@[::1]:8080/w?appid=SECRET failed"),
            "GET http://[::1]:8080/w failed"
        );
        assert_eq!(clean("[see http://x/a]"), "[see http://x/a]");
        // A port, an IPv6 host or no colon: the `@` is the query's.
        for (text, want) in [
            ("https://api.x:8443?email=a@b.c", "https://api.x:8443"),
            ("https://[::1]:8080?u=a@b", "https://[::1]:8080"),
            ("http://localhost#a@b", "http://localhost"),
        ] {
            assert_eq!(clean(text), want, "{text}");
        }
    }

    #[test]
    fn a_url_a_text_ends_inside_is_found() {
        // After a letter outside ASCII: the scheme's start, not a byte
        // inside that letter (the excerpt slices the text there).
        assert_eq!(open_url_start("链接https://admin:pw"), Some("链接".len()));
        assert_eq!(
            without_secrets("请访问https://admin:pw@h.example/x?k=1 失败"),
            "请访问https://h.example/x 失败"
        );
        assert_eq!(open_url_start("see https://admin:pw"), Some(4));
        assert_eq!(open_url_start("(git+ssh://u:p"), Some(1));
        for text in ["see https://x/y ", "see https://x/y)", "no url", "a ://b"] {
            assert_eq!(open_url_start(text), None, "{text}");
        }
    }

    #[test]
    fn webhook_urls_lose_their_secret_paths() {
        let clean = without_url_secrets;
        let cases = [
            (
                "POST https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/aBcDeFgHiJkLmNoPqRsTuVwX failed: 404 no_service",
                "POST https://hooks.slack.com/services/[redacted] failed: 404 no_service",
            ),
            (
                "https://hooks.slack.com/workflows/T01/A02/345/abcdef",
                "https://hooks.slack.com/workflows/[redacted]",
            ),
            (
                "error sending request for url (https://discord.com/api/webhooks/1234567890/AbCdEf-GhIjKl_MnOp)",
                "error sending request for url (https://discord.com/api/webhooks/[redacted])",
            ),
            (
                "https://discordapp.com/api/v10/webhooks/1/tok?wait=true",
                "https://discordapp.com/api/v10/webhooks/[redacted]",
            ),
            (
                "400 from https://contoso.webhook.office.com/webhookb2/6a1c@72f9/IncomingWebhook/4f0e/8b1d",
                "400 from https://contoso.webhook.office.com/webhookb2/[redacted]",
            ),
            (
                "https://chat.example.com/hooks/xxxgeneratedkeyxxx",
                "https://chat.example.com/hooks/[redacted]",
            ),
            (
                "https://hooks.zapier.com/hooks/catch/123456/abcdef/",
                "https://hooks.zapier.com/hooks/[redacted]",
            ),
            (
                "https://maker.ifttt.com/trigger/door/with/key/dXyZ123",
                "https://maker.ifttt.com/trigger/door/with/key/[redacted]",
            ),
            (
                "https://api.telegram.org/bot123456:ABC-DEF1234ghIkl/sendMessage",
                "https://api.telegram.org/bot[redacted]",
            ),
            (
                "https://api.telegram.org/file/bot123456:ABC/documents/a.pdf",
                "https://api.telegram.org/file/bot[redacted]",
            ),
            (
                "https://user:pa@ss@discord.com/api/webhooks/1/t",
                "https://discord.com/api/webhooks/[redacted]",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(clean(text), want, "{text}");
            assert_eq!(without_secrets(text), want, "{text}");
        }
        // Without a scheme (a config file, a log line): the same hosts'
        // secret paths go; a URL already cut is left as it is.
        let bare = [
            (
                "SLACK_WEBHOOK=hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/aBcDeFgHiJkLmNoPqRsTuVwX\nnext",
                "SLACK_WEBHOOK=hooks.slack.com/services/[redacted]\nnext",
            ),
            (
                "posting to discord.com/api/v10/webhooks/123/AbC-dEf failed",
                "posting to discord.com/api/v10/webhooks/[redacted] failed",
            ),
            (
                "url: contoso.webhook.office.com/webhookb2/6a1c@72f9/IncomingWebhook/4f",
                "url: contoso.webhook.office.com/webhookb2/[redacted]",
            ),
            (
                "(api.telegram.org/bot123456:ABC-DEF/getMe)",
                "(api.telegram.org/bot[redacted])",
            ),
            (
                "HOOKS.SLACK.COM/services/T1/B2/x and https://hooks.slack.com/services/T1/B2/y",
                "HOOKS.SLACK.COM/services/[redacted] and https://hooks.slack.com/services/[redacted]",
            ),
        ];
        for (text, want) in bare {
            assert_eq!(without_secrets(text), want, "{text}");
            assert_eq!(without_secrets(want), want, "{want}");
        }
        for text in [
            "see discord.com/api/ for the docs",
            "hooks.slack.com/ is Slack's",
            "api.telegram.org/file",
        ] {
            assert_eq!(without_secrets(text), text);
        }
        // Paths without a secret are kept whole.
        for text in [
            "https://hooks.slack.com/",
            "https://api.example.com/v1/hooks",
            "https://api.telegram.org/",
            "https://example.com/robots/bottle",
            "https://api.example.com/webhooks/",
        ] {
            assert_eq!(clean(text), text);
        }
    }

    #[test]
    fn tokens_keys_and_named_secrets_are_cut() {
        let cases = [
            (
                "401: header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc was refused",
                "401: header Authorization: Bearer [redacted] was refused",
            ),
            (
                "Incorrect API key provided: sk-proj-AbCdEfGhIjKlMnOpQrStUv. You can find",
                "Incorrect API key provided: [redacted]. You can find",
            ),
            (
                "key AIzaSyA1234567890abcdefghijklmnopqrstu is invalid",
                "key [redacted] is invalid",
            ),
            (
                "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123",
                "export GITHUB_TOKEN=[redacted]",
            ),
            (
                "api_key=abc123&units=metric",
                "api_key=[redacted]&units=metric",
            ),
            (
                r#"{"user": "ann", "password": "hunter2", "ok": false}"#,
                r#"{"user": "ann", "password": "[redacted]", "ok": false}"#,
            ),
            (
                "X-Api-Key: 0123456789abcdef\nnext",
                "X-Api-Key: [redacted]\nnext",
            ),
            // A header's value runs to its line's end, spaces and all.
            (
                "> X-Api-Key: abc def ghi\r\n> Accept: */*",
                "> X-Api-Key: [redacted]\r\n> Accept: */*",
            ),
            (
                "  api_key: first second\nnext: 1",
                "  api_key: [redacted]\nnext: 1",
            ),
            // Not at a line's start: a word.
            (
                "error: invalid api_key: abc def",
                "error: invalid api_key: [redacted] def",
            ),
            (
                "AWS key AKIAIOSFODNN7EXAMPLE denied",
                "AWS key [redacted] denied",
            ),
            (
                "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l sent",
                "Authorization: Basic [redacted] sent",
            ),
            (
                r#"$cfg = ['password' => 'hunter2'];"#,
                r#"$cfg = ['password' => '[redacted]'];"#,
            ),
            ("apiKey := \"abc123\"", "apiKey := \"[redacted]\""),
            (
                r#"{"password": "ab\"cd ef", "n": 1}"#,
                r#"{"password": "[redacted]", "n": 1}"#,
            ),
            (
                "x key: -----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY----- done",
                "x key: [redacted] done",
            ),
            ("MIIEow\nIBAAK\n-----END PRIVATE KEY-----\n", "[redacted]\n"),
            (
                "error: bad key\nMIIEow\nIBAAK\n-----END PRIVATE KEY-----",
                "error: bad key\n[redacted]",
            ),
            (
                "password = 'hunter2' # in config.py",
                "password = '[redacted]' # in config.py",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
                "aws_secret_access_key = [redacted]\n",
            ),
            (
                r#"{"password": "correct horse battery", "user": "ann"}"#,
                r#"{"password": "[redacted]", "user": "ann"}"#,
            ),
            // A word joined to its ending: libpq's `PGPASSWORD` and the like.
            (
                "PGPASSWORD=hunter2 psql -h db",
                "PGPASSWORD=[redacted] psql -h db",
            ),
            (
                "x DBPASSWD: x1 MYAPPSECRET=s2 SLACKTOKEN=t3",
                "x DBPASSWD: [redacted] MYAPPSECRET=[redacted] SLACKTOKEN=[redacted]",
            ),
            (
                r#"{"body": "{\"api_key\": \"abc123\", \"q\": 1}"}"#,
                r#"{"body": "{\"api_key\": \"[redacted]\", \"q\": 1}"}"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(without_secrets(text), want, "{text}");
        }
    }

    /// What a failed command echoes: its flags (`--password x`,
    /// `--password=x`, curl's `-u user:pass`), and an HTTP dump's cookies
    /// and `ApiKey` authorization.
    #[test]
    fn command_lines_and_http_dumps_lose_their_secrets() {
        let cases = [
            (
                "command failed: mysql --user=app --password=hunter2 -h db",
                "command failed: mysql --user=app --password=[redacted] -h db",
            ),
            (
                "exec: psql --password hunter2 --host db",
                "exec: psql --password [redacted] --host db",
            ),
            (
                "gh auth login --with-token --token ghx_0123 -h github.com",
                "gh auth login --with-token --token [redacted] -h github.com",
            ),
            (
                "$ curl -u admin:s3cret https://api.example/x",
                "$ curl -u [redacted] https://api.example/x",
            ),
            (
                "curl --user admin:s3cret -X POST",
                "curl --user [redacted] -X POST",
            ),
            // A quoted value, spaces and all.
            (
                "mysql --password 'correct horse battery' -h db",
                "mysql --password '[redacted]' -h db",
            ),
            (
                "vault login --token=\"s.ab cd\" -x",
                "vault login --token=\"[redacted]\" -x",
            ),
            (
                "$ curl -u \"admin:correct horse\" https://api.example/x",
                "$ curl -u \"[redacted]\" https://api.example/x",
            ),
            (
                "> Cookie: session=abc123; theme=dark\n> Accept: */*",
                "> Cookie: [redacted]\n> Accept: */*",
            ),
            (
                "< Set-Cookie: sid=xyz; Path=/; HttpOnly\n< Server: x",
                "< Set-Cookie: [redacted]\n< Server: x",
            ),
            (
                "Authorization: ApiKey VnVUY1g0NEJ1aDdlM0dVNA== refused",
                "Authorization: ApiKey [redacted] refused",
            ),
            (
                "Authorization: Bearer\teyJhbGciOiJIUzI1NiJ9.e30.abc",
                "Authorization: Bearer\t[redacted]",
            ),
            (
                "authorization: bearer   ghx_0123456789abcdefXYZ refused",
                "authorization: bearer   [redacted] refused",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(without_secrets(text), want, "{text}");
        }
        // Not secrets: a flag's other value, a user without a password,
        // `-u` for other tools, a word `cookie`.
        for text in [
            "git push -u origin main",
            "sort -u names.txt",
            "curl --user admin https://x",
            "mysql --password --host db",
            "the cookie jar was empty",
            "--token-file /run/secrets/t",
        ] {
            assert_eq!(without_secrets(text), text, "{text}");
        }
    }

    /// AWS SigV4: a dumped `Authorization` header and a presigned URL's
    /// query (whole, or without its URL: a log that prints the query, a
    /// path and query) lose the signature, the credential and the session
    /// token.
    #[test]
    fn aws_sigv4_signatures_and_credentials_are_cut() {
        let cases = [
            (
                "> Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, \
                 SignedHeaders=content-type;host;x-amz-date, \
                 Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7\n> Accept: */*",
                "> Authorization: AWS4-HMAC-SHA256 Credential=[redacted], \
                 SignedHeaders=content-type;host;x-amz-date, Signature=[redacted]\n> Accept: */*",
            ),
            (
                "GET /bucket/k.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256\
                 &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
                 &X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\
                 &X-Amz-Security-Token=IQoJb3JpZ2luX2VjEJr%2F%2F%2F\
                 &X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404 403",
                "GET /bucket/k.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=[redacted]\
                 &X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\
                 &X-Amz-Security-Token=[redacted]&X-Amz-Signature=[redacted] 403",
            ),
            (
                "fetch https://b.s3.amazonaws.com/k?X-Amz-Signature=aeeed9bb&X-Amz-Credential=AKIA failed",
                "fetch https://b.s3.amazonaws.com/k failed",
            ),
            (
                r#"{"headers": {"x-amz-security-token": "FwoGZXIvYXdzE", "signature": "abc"}}"#,
                r#"{"headers": {"x-amz-security-token": "[redacted]", "signature": "[redacted]"}}"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(without_secrets(text), want, "{text}");
        }
        // The words alone are not a pair.
        for text in [
            "The request signature we calculated does not match the signature you provided.",
            "no credential was found",
        ] {
            assert_eq!(without_secrets(text), text, "{text}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "Error: ENOENT: no such file or directory, open '/tmp/x'",
            "max_tokens=1024 exceeded; task-1234567890abcdefghij failed",
            "Unexpected token } in JSON at position 5",
            "The ASIAN market and the sk- prefix, Bearer abc",
            "monkey: banana",
            "Invalid token provided; basic functionality works",
            "assert token == expected",
            "",
            "ünïcödé café ✓ token=",
        ] {
            assert!(
                matches!(without_secrets(text), Cow::Borrowed(_)),
                "{text}: {}",
                without_secrets(text)
            );
        }
    }

    /// A long line of quoted pairs (no line's end to stop at) and of
    /// every other pattern's start: redaction takes time linear in the
    /// text (a search to the line's end for each quoted pair took ~20 s
    /// for 2 MB).
    #[test]
    fn long_texts_of_patterns_are_redacted_in_linear_time() {
        for piece in [
            "key=\"a\" ",
            "password: 'a' ",
            "\n> key: a b ",
            "  token: a ",
            r#"\"token\": \"a\", "#,
            "/hooks/",
            "hooks.slack.com/x/",
            "discord.com/api/webhooks/",
            "@",
            "a://",
            "sk-.",
            "--password ",
            "--password 'a\n",
            "-u \"a:b ",
            "Bearer ",
        ] {
            let text = piece.repeat((2 << 20) / piece.len());
            let started = std::time::Instant::now();
            let _ = without_secrets(&text);
            let took = started.elapsed();
            assert!(
                took < std::time::Duration::from_secs(5),
                "{piece:?}: {took:?}"
            );
        }
    }

    #[test]
    fn any_text_is_handled_without_panicking() {
        // Every split point of text mixing multi-byte characters with the
        // patterns' starts.
        let text = "é sk-ü AIza€ Bearer ü key=é token:\"€ https://ü@é/?k=€ passwd='x";
        for (i, _) in text.char_indices() {
            let _ = without_secrets(&text[i..]);
            let _ = without_secrets(&text[..i]);
        }
    }

    proptest::proptest! {
        /// Any text: no panic, the same answer twice, and a text with
        /// nothing to cut comes back as it was; a key put anywhere is cut.
        #[test]
        fn redaction_holds_on_any_text(
            text in "[ -~éü€\\n]{0,200}",
            at in 0usize..200,
        ) {
            let once = without_secrets(&text).into_owned();
            proptest::prop_assert_eq!(&once, &without_secrets(&text).into_owned());
            let at = text.char_indices().map(|(i, _)| i).nth(at).unwrap_or(text.len());
            let planted = format!("{} sk-abcdefghijklmnopqrstuv {}", &text[..at], &text[at..]);
            proptest::prop_assert!(
                !without_secrets(&planted).contains("sk-abcdefghijklmnopqrstuv"),
                "{}", planted
            );
            // A SigV4 header dump or a presigned query put anywhere: its
            // signature is cut.
            for sigv4 in [
                "Authorization: AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/iam/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6",
                "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=5d672d79c15b13162d9279b0855cfba6&a=b",
            ] {
                let planted = format!("{} {sigv4} {}", &text[..at], &text[at..]);
                proptest::prop_assert!(
                    !without_secrets(&planted).contains("5d672d79c15b"),
                    "{}", planted
                );
            }
        }
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of every pattern, letters outside ASCII among them, joined
    /// at random.
    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "https://",
            "u:p@",
            "h.example",
            "/hooks/",
            "hooks.slack.com/",
            "services/T1/",
            "x",
            "?k=v",
            "#f",
            " ",
            "\n",
            "> ",
            "X-Api-Key",
            ": ",
            "=",
            "\"",
            "'",
            "Bearer ",
            "ghx_0123456789abcdefXYZ",
            "sk-abcdefghijklmnopqrst",
            "--password ",
            "-u ",
            "a:b",
            "Cookie",
            "[redacted]",
            "]",
            "discord.com/api/",
            "webhooks/1/t",
            "api.telegram.org/",
            "bot1:A",
            "é",
            "链接",
            "\\",
            "token",
            "[",
            "::1",
            "@",
        ]);
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Any text is redacted without a panic, and where a URL it ends
        /// inside starts is a char boundary (the gateway's excerpt slices
        /// its text there).
        #[test]
        fn any_text_is_redacted_and_cut_at_boundaries(text in pieces()) {
            let _ = without_secrets(&text);
            if let Some(at) = open_url_start(&text) {
                prop_assert!(text.is_char_boundary(at));
            }
        }
    }
}
