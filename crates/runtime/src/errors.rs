//! Errors in one place: classify what a tool returned (by type first, by
//! message as a fallback), write the text the model sees and the one the
//! operator sees, and the fatal signal the application receives.

use std::{error::Error as StdError, fmt, io, time::Duration};

use toolwarden_core::{ErrorKind, ToolError, ToolOutcome, classify};

use crate::{BoxError, policy::secs};

/// What the model is told of a timeout or a broken connection that is not
/// retried (a tool that is not idempotent): its effect may stand.
const MAY_HAVE_RUN: &str = "It was not retried, as it may have done its work before it stopped: check whether it did before calling it again.";

/// The default text the model sees for anything unexpected.
pub const UNEXPECTED_MESSAGE: &str = "An unexpected error occurred while executing this tool";

/// An HTTP error from a tool's backend; classified by its status
/// (`401` → authentication, `404` → resource not found with the URL,
/// `429` → rate limited honouring `Retry-After`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    status: u16,
    retry_after: Option<Duration>,
    url: Option<String>,
    message: Option<String>,
}

/// The signal that an agent run must stop, with a specific message for
/// the application (never a generic one).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FatalError {
    /// The tool's name as the model called it.
    pub tool: String,
    /// The call that failed.
    pub call_id: String,
    /// What went wrong.
    pub kind: ErrorKind,
    /// What the application should show or log.
    pub message: String,
}

/// A tool error, classified.
#[derive(Debug)]
pub(crate) struct Classified {
    pub(crate) kind: ErrorKind,
    pub(crate) code: Option<String>,
    /// The full chain, for the operator.
    pub(crate) technical: String,
    /// The top-level message, for the model when details may be shown.
    pub(crate) summary: String,
}

/// What the model-facing text depends on besides the kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TextContext<'a> {
    pub(crate) tool: &'a str,
    pub(crate) attempts: u32,
    pub(crate) retryable: bool,
    pub(crate) show_details: bool,
    pub(crate) unexpected: &'a str,
    /// The resource a permission error is about (see [`name_the_resource`]).
    pub(crate) resource: Option<&'a str>,
}

// === impl HttpError ===

impl HttpError {
    /// An error with this HTTP status.
    pub fn new(status: u16) -> Self {
        HttpError {
            status,
            retry_after: None,
            url: None,
            message: None,
        }
    }

    /// The parsed `Retry-After` (see `toolwarden_core::classify::retry_after_secs`).
    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// The URL requested (reported as the missing resource on 404).
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// A message from the response body.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    fn kind(&self) -> ErrorKind {
        match classify::http_status(self.status, self.retry_after) {
            ErrorKind::ResourceNotFound { .. } => ErrorKind::ResourceNotFound {
                resource: self.url.clone(),
            },
            other => other,
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(url) = &self.url {
            write!(f, " from {url}")?;
        }
        if let Some(m) = &self.message {
            write!(f, ": {m}")?;
        }
        Ok(())
    }
}

impl StdError for HttpError {}

// === impl FatalError ===

impl FatalError {
    /// The fatal signal of an outcome whose failure is fatal.
    pub fn from_outcome(outcome: &ToolOutcome) -> Option<FatalError> {
        let failure = outcome.error.as_ref().filter(|e| e.fatal)?;
        let tool = &outcome.tool;
        // Shown and logged by the application: without credentials.
        let tech = toolwarden_core::redact::without_secrets(&failure.technical_message);
        let message = match failure.kind {
            ErrorKind::Authentication => {
                format!("Tool '{tool}' could not authenticate with its backend: {tech}")
            }
            ErrorKind::Permission => format!("Tool '{tool}' was denied permission: {tech}"),
            ref kind => format!("Tool '{tool}' failed with a fatal {kind} error: {tech}"),
        };
        Some(FatalError {
            tool: outcome.tool.clone(),
            call_id: outcome.call_id.clone(),
            kind: failure.kind.clone(),
            message,
        })
    }
}

impl fmt::Display for FatalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for FatalError {}

// === classification ===

/// Classify a tool's error: [`HttpError`], [`ToolError`], `io::Error` and
/// tokio's `Elapsed` by type along the chain; otherwise by message.
pub(crate) fn classify(err: &BoxError) -> Classified {
    let root: &(dyn StdError + 'static) = &**err;
    let mut kind_code: Option<(ErrorKind, String)> = None;
    let mut link = Some(root);
    while let Some(e) = link {
        if let Some(h) = e.downcast_ref::<HttpError>() {
            kind_code = Some((h.kind(), format!("http_{}", h.status)));
            break;
        }
        if let Some(t) = e.downcast_ref::<ToolError>() {
            kind_code = Some((t.kind().clone(), t.kind().as_str().to_string()));
            break;
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            let kind = classify::io_error(io);
            if kind != ErrorKind::Internal {
                kind_code = Some((kind, format!("io_{}", snake(&format!("{:?}", io.kind())))));
                break;
            }
        }
        if e.is::<tokio::time::error::Elapsed>() {
            kind_code = Some((ErrorKind::Timeout, "timeout".to_string()));
            break;
        }
        link = e.source();
    }
    let (mut kind, code) = kind_code.unwrap_or_else(|| {
        let kind = classify::error(root);
        let code = kind.as_str().to_string();
        (kind, code)
    });
    // A typed error that wraps an `io::Error` often names the path in its
    // own message ("reading /etc/app.toml: No such file or directory").
    if let ErrorKind::ResourceNotFound { resource: None } = kind {
        let mut link = Some(root);
        while let Some(e) = link {
            if let Some(r) = classify::extract_resource(&e.to_string()) {
                kind = ErrorKind::ResourceNotFound { resource: Some(r) };
                break;
            }
            link = e.source();
        }
    }
    Classified {
        kind,
        code: Some(code),
        technical: chain(root),
        summary: root.to_string(),
    }
}

/// Name the resource of a not-found or permission failure whose error did
/// not (a `std::io::Error` carries no path): the call's path- or URL-like
/// argument (see `toolwarden_core::classify::argument_resource`). A
/// not-found kind gets it as its resource; the resource of a permission
/// failure is returned for the model's text; both are added to the
/// operator's technical message. Errors that name a resource themselves
/// are left as they are.
pub(crate) fn name_the_resource(
    kind: &mut ErrorKind,
    technical: &mut String,
    arguments: &str,
) -> Option<String> {
    let wanted = matches!(
        kind,
        ErrorKind::ResourceNotFound { resource: None } | ErrorKind::Permission
    );
    if !wanted || classify::extract_resource(technical).is_some() {
        return None;
    }
    let args = crate::validate::parse_arguments(arguments).ok()?;
    let resource = classify::argument_resource(&args)?;
    if !technical.contains(resource.as_str()) {
        technical.push_str(&format!(" (resource: {resource})"));
    }
    if let ErrorKind::ResourceNotFound { resource: r } = kind {
        *r = Some(resource.clone());
    }
    Some(resource)
}

/// `outer: cause: root cause`.
pub(crate) fn chain(err: &(dyn StdError + 'static)) -> String {
    let mut out = err.to_string();
    let mut link = err.source();
    while let Some(e) = link {
        let text = e.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        link = e.source();
    }
    out
}

/// The message of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("the tool panicked: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("the tool panicked: {s}")
    } else {
        "the tool panicked".to_string()
    }
}

fn snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

// === model-facing text ===

/// What the model is told about a failure of `kind`. URLs in it lose
/// their credentials and queries ([`without_secrets`]): an HTTP
/// client's error names the URL it fetched, API key and all.
pub(crate) fn model_message(kind: &ErrorKind, summary: &str, cx: TextContext<'_>) -> String {
    let summary = &*without_secrets(summary);
    let resource = cx.resource.map(without_secrets);
    let cx = TextContext {
        resource: resource.as_deref(),
        ..cx
    };
    let n = cx.attempts;
    let hint = if cx.retryable {
        "Trying again later may help."
    } else {
        "Retrying will not help."
    };
    // A timeout or a broken connection is not retried only for a tool
    // whose effect may stand (`ToolPolicy::not_idempotent`): retrying
    // could help, but the call may have done its work already.
    let midway = if cx.retryable { hint } else { MAY_HAVE_RUN };
    let always_shown = matches!(
        kind,
        ErrorKind::NotAvailable | ErrorKind::CircuitOpen { .. }
    );
    if !cx.show_details && !always_shown {
        return cx.unexpected.to_string();
    }
    match kind {
        ErrorKind::NotAvailable => format!("Tool '{}' is not available.", cx.tool),
        ErrorKind::InvalidArguments => summary.to_string(),
        ErrorKind::ResourceNotFound { resource: Some(r) } => {
            format!("Resource not found: {}", without_secrets(r))
        }
        ErrorKind::ResourceNotFound { resource: None } => {
            format!("Resource not found ({summary})")
        }
        ErrorKind::Timeout => {
            format!("The tool timed out ({summary}) after {n} attempt(s). {midway}")
        }
        ErrorKind::RateLimited {
            retry_after: Some(d),
        } => format!(
            "The tool's backend is rate-limiting requests (after {n} attempt(s)). Retry after {}.",
            secs(*d)
        ),
        ErrorKind::RateLimited { retry_after: None } => {
            format!("The tool's backend is rate-limiting requests (after {n} attempt(s)). {hint}")
        }
        ErrorKind::Network => {
            format!("A network error stopped the tool after {n} attempt(s): {summary}. {midway}")
        }
        ErrorKind::Authentication => format!(
            "The tool could not authenticate with its backend ({summary}). Retrying will not help; the operator has been notified."
        ),
        ErrorKind::Permission => match cx.resource {
            Some(r) => format!(
                "The tool is not permitted to access {r} ({summary}). Retrying will not help."
            ),
            None => {
                format!("The tool is not permitted to do this ({summary}). Retrying will not help.")
            }
        },
        ErrorKind::CircuitOpen {
            retry_after: Some(after),
        } => format!(
            "Tool '{}' is temporarily unavailable, retry after {} s.",
            cx.tool,
            ceil_secs(*after)
        ),
        ErrorKind::CircuitOpen { retry_after: None } => format!(
            "Tool '{}' is unavailable, with no known time it will be back. Do not call it again; try another way.",
            cx.tool
        ),
        ErrorKind::Cancelled => format!("The tool call was cancelled: {summary}"),
        _ => cx.unexpected.to_string(),
    }
}

/// `text` with its credentials cut ([`toolwarden_core::redact`]): URLs
/// keep scheme, host and path; tokens, keys and named secrets go.
pub(crate) fn without_secrets(text: &str) -> std::borrow::Cow<'_, str> {
    toolwarden_core::redact::without_secrets(text)
}

/// Whole seconds, rounded up, at least 1.
pub(crate) fn ceil_secs(d: Duration) -> u64 {
    let s = d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0));
    s.max(1)
}

#[cfg(test)]
mod tests {
    /// The model-facing cut is core's (`toolwarden_core::redact`, tested
    /// there); one case shows it is the one applied.
    #[test]
    fn model_facing_text_loses_its_credentials() {
        assert_eq!(
            super::without_secrets("401 for url (https://api.x/w?appid=SECRET)"),
            "401 for url (https://api.x/w)"
        );
    }

    /// What the application shows and logs of a fatal failure has no
    /// credentials either.
    #[test]
    fn a_fatal_message_loses_its_credentials() {
        let failure = toolwarden_core::ToolFailure {
            kind: ErrorKind::Authentication,
            code: None,
            technical_message: "401 for url (https://api.x/w?key=SECRETKEY123)".into(),
            model_message: String::new(),
            retryable: false,
            fatal: true,
        };
        let outcome = ToolOutcome::failure("c1", "weather", failure);
        let fatal = FatalError::from_outcome(&outcome).expect("fatal");
        assert!(!fatal.to_string().contains("SECRETKEY123"), "{fatal}");
        assert!(fatal.to_string().contains("https://api.x/w"), "{fatal}");
    }

    use super::*;

    fn boxed(e: impl StdError + Send + Sync + 'static) -> BoxError {
        Box::new(e)
    }

    #[test]
    fn http_errors_by_status() {
        let c = classify(&boxed(
            HttpError::new(404).with_url("https://api.example.com/items/7"),
        ));
        assert_eq!(
            c.kind,
            ErrorKind::ResourceNotFound {
                resource: Some("https://api.example.com/items/7".into())
            }
        );
        assert_eq!(c.code.as_deref(), Some("http_404"));
        let c = classify(&boxed(
            HttpError::new(429).with_retry_after(Some(Duration::from_secs(3))),
        ));
        assert_eq!(c.kind.retry_after(), Some(Duration::from_secs(3)));
        assert_eq!(
            classify(&boxed(HttpError::new(401))).kind,
            ErrorKind::Authentication
        );
    }

    #[test]
    fn io_and_tool_errors_by_type() {
        let c = classify(&boxed(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "nope",
        )));
        assert_eq!(c.kind, ErrorKind::Network);
        assert_eq!(c.code.as_deref(), Some("io_connection_refused"));
        let c = classify(&boxed(ToolError::not_found("/tmp/x")));
        assert_eq!(c.code.as_deref(), Some("resource_not_found"));
    }

    #[test]
    fn foreign_errors_by_message() {
        #[derive(Debug)]
        struct Foreign;
        impl fmt::Display for Foreign {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("open 'data.csv': no such file")
            }
        }
        impl StdError for Foreign {}
        let c = classify(&boxed(Foreign));
        assert_eq!(
            c.kind,
            ErrorKind::ResourceNotFound {
                resource: Some("data.csv".into())
            }
        );
    }

    #[test]
    fn chain_is_joined() {
        let inner = io::Error::other("disk on fire");
        let outer = ToolError::new(ErrorKind::Internal, "write failed").with_source(inner);
        assert_eq!(chain(&outer), "write failed: disk on fire");
    }

    /// Regression: a tool's own `CircuitOpen` error (a client with a
    /// breaker of its own) with a wait of `Duration::MAX` overflowed the
    /// rounding up, a panic that made the call an unexpected error.
    #[test]
    fn the_longest_wait_rounds_up_without_overflow() {
        assert_eq!(ceil_secs(Duration::MAX), u64::MAX);
        assert_eq!(ceil_secs(Duration::from_millis(1)), 1);
        let cx = TextContext {
            tool: "t",
            attempts: 1,
            retryable: false,
            show_details: true,
            unexpected: UNEXPECTED_MESSAGE,
            resource: None,
        };
        let open = ErrorKind::CircuitOpen {
            retry_after: Some(Duration::MAX),
        };
        assert!(model_message(&open, "", cx).starts_with("Tool 't' is temporarily unavailable"));
    }

    #[test]
    fn hidden_details_use_the_generic_text() {
        let cx = TextContext {
            tool: "t",
            attempts: 1,
            retryable: false,
            show_details: false,
            unexpected: UNEXPECTED_MESSAGE,
            resource: None,
        };
        assert_eq!(
            model_message(&ErrorKind::Network, "secret host", cx),
            UNEXPECTED_MESSAGE
        );
        let open = ErrorKind::CircuitOpen {
            retry_after: Some(Duration::from_millis(42_100)),
        };
        assert_eq!(
            model_message(&open, "", cx),
            "Tool 't' is temporarily unavailable, retry after 43 s."
        );
    }
}
