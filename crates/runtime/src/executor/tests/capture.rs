//! A tracing layer that records events and span fields, for asserting log
//! levels and fields in tests.
//!
//! One global subscriber (installed once) hands each event to the capture
//! buffer of the thread it happens on, if that thread has one. A global
//! subscriber keeps tracing's per-callsite interest cache stable while
//! tests run in parallel, which thread-local default subscribers do not.

use std::{
    cell::RefCell,
    collections::BTreeMap,
    fmt,
    sync::{Arc, Mutex, Once},
};

use tracing::{Level, Subscriber, field::Field, span};
use tracing_subscriber::{Layer, layer::Context as LayerContext, prelude::*, registry::LookupSpan};

/// One recorded event.
#[derive(Debug, Clone)]
pub struct Event {
    pub level: Level,
    pub message: String,
    pub fields: BTreeMap<String, String>,
    /// Fields of the enclosing spans, outermost first.
    pub span_fields: BTreeMap<String, String>,
}

/// One closed span: its name and its fields as they were when it closed
/// (those recorded after it opened included).
#[derive(Debug, Clone)]
pub struct ClosedSpan {
    pub name: &'static str,
    pub fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
pub struct Capture {
    events: Arc<Mutex<Vec<Event>>>,
    closed: Arc<Mutex<Vec<ClosedSpan>>>,
}

/// The global layer: forwards to the current thread's capture.
struct Router;

/// Clears the thread's capture when dropped.
pub struct Guard(());

thread_local! {
    static CURRENT: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

impl Drop for Guard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

#[derive(Default)]
struct Visitor(BTreeMap<String, String>);

struct SpanFields(BTreeMap<String, String>);

impl tracing::field::Visit for Visitor {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Router {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: LayerContext<'_, S>) {
        let mut v = Visitor::default();
        attrs.record(&mut v);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanFields(v.0));
        }
    }

    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, ctx: LayerContext<'_, S>) {
        let mut v = Visitor::default();
        values.record(&mut v);
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<SpanFields>()
        {
            fields.0.extend(v.0);
        }
    }

    fn on_close(&self, id: span::Id, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let fields = span
            .extensions()
            .get::<SpanFields>()
            .map(|f| f.0.clone())
            .unwrap_or_default();
        let Some(capture) = CURRENT.with(|c| c.borrow().clone()) else {
            return;
        };
        capture.closed.lock().unwrap().push(ClosedSpan {
            name: span.name(),
            fields,
        });
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: LayerContext<'_, S>) {
        let mut v = Visitor::default();
        event.record(&mut v);
        let message = v.0.remove("message").unwrap_or_default();
        let mut span_fields = BTreeMap::new();
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope.from_root() {
                if let Some(f) = span.extensions().get::<SpanFields>() {
                    span_fields.extend(f.0.clone());
                }
            }
        }
        let Some(capture) = CURRENT.with(|c| c.borrow().clone()) else {
            return;
        };
        capture.events.lock().unwrap().push(Event {
            level: *event.metadata().level(),
            message,
            fields: v.0,
            span_fields,
        });
    }
}

impl Capture {
    /// Install as this thread's subscriber until the guard drops.
    pub fn install() -> (Capture, Guard) {
        static GLOBAL: Once = Once::new();
        GLOBAL.call_once(|| {
            let subscriber = tracing_subscriber::registry().with(Router);
            tracing::subscriber::set_global_default(subscriber)
                .expect("no other global subscriber in unit tests");
        });
        let capture = Capture::default();
        CURRENT.with(|c| *c.borrow_mut() = Some(capture.clone()));
        (capture, Guard(()))
    }

    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    /// The spans closed so far, in the order they closed.
    pub fn closed(&self) -> Vec<ClosedSpan> {
        self.closed.lock().unwrap().clone()
    }

    /// The one event whose message is `message`.
    pub fn find(&self, message: &str) -> Event {
        let events = self.events();
        let found: Vec<&Event> = events.iter().filter(|e| e.message == message).collect();
        assert_eq!(
            found.len(),
            1,
            "expected one '{message}' event in {events:#?}"
        );
        found[0].clone()
    }
}
