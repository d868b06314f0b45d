//! The `tracing-subscriber` layer: [`Listening`] says, per callsite,
//! whether anyone listens; [`Emitter`] writes what it lets through.
//!
//! # The enable check
//!
//! The layer is a [`Filtered`](tracing_subscriber::filter::Filtered) one:
//! its filter disables a callsite for this layer only, so the layers
//! beside it (a `fmt` layer, say) still see every event. The filter
//! answers [`Interest::sometimes`] for every callsite, so `tracing` asks
//! it at each span and event, and it answers with the callsite's enable
//! word: a lookup of the callsite by the address of its `Metadata` (a
//! lock-free table) and one relaxed load. While nobody listens, that is
//! all an `info!` costs beyond `tracing`'s own dispatch: no field is
//! visited, no string formatted. The first record of a callsite is let
//! through, to register its tracepoints with the types it has.

use std::any::TypeId;
use std::sync::{Arc, OnceLock};

use tracing_core::span::{Attributes, Id, Record};
use tracing_core::subscriber::Interest;
use tracing_core::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Filter, Layer};
use tracing_subscriber::registry::LookupSpan;
use usertrace::{DynamicTracepoint, FieldType, Provider, Value, MAX_FIELDS};

use crate::callsite::{provider_span_end, Callsite, Shape, SpanShape};
use crate::context::{self, SpanContext, WithContext};
use crate::callsites::Callsites;
use crate::record::{Scratch, Slot};
use usertrace::fit_payload;

/// What the filter and the layer share.
struct Inner {
    provider: Provider,
    callsites: Callsites<Callsite>,
    span_end: OnceLock<Option<DynamicTracepoint>>,
}

impl Inner {
    fn callsite(&self, meta: &'static Metadata<'static>) -> Option<&Callsite> {
        self.callsites.get_or_insert(meta, || Callsite::new(meta))
    }

    fn span_end(&self) -> Option<&DynamicTracepoint> {
        self.span_end.get_or_init(|| provider_span_end(&self.provider)).as_ref()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The callsites' tracepoints go with the table, each unregistered
        // before its memory is freed; unregistered first here all the same,
        // so that nobody sees them while the rest are dropped.
        self.callsites.for_each(Callsite::unregister);
    }
}

/// Writes spans and events as user_events; made by [`layer()`](crate::layer())
/// with its filter, [`Listening`].
pub struct Emitter {
    inner: Arc<Inner>,
}

/// The per-layer filter of [`Emitter`]: a callsite is enabled while a
/// tracer listens to its tracepoint (and for its first record).
pub struct Listening {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Emitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emitter").field("provider", &self.inner.provider.name()).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Listening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listening").field("provider", &self.inner.provider.name()).finish_non_exhaustive()
    }
}

/// The layer and its filter, for `provider`.
pub(crate) fn pair(provider: Provider) -> (Emitter, Listening) {
    let inner = Arc::new(Inner { provider, callsites: Callsites::new(), span_end: OnceLock::new() });
    (Emitter { inner: Arc::clone(&inner) }, Listening { inner })
}

impl Emitter {
    /// The provider whose name starts every tracepoint's.
    pub fn provider(&self) -> &Provider {
        &self.inner.provider
    }
}

impl<S> Filter<S> for Listening {
    #[inline]
    fn enabled(&self, meta: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        match self.inner.callsites.get(meta) {
            // A span that may carry a remote parent is let through to pass
            // it on (see `context`), whoever listens.
            Some(callsite) => callsite.enabled() || callsite.carries_remote_parent(),
            // Not seen yet (its registration is under way on another
            // thread, or it skipped `callsite_enabled`): the layer adds it.
            None => meta.is_span() || meta.is_event(),
        }
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if !(meta.is_span() || meta.is_event()) {
            return Interest::never();
        }
        let _ = self.inner.callsite(meta);
        // The enable word changes when a tracer comes or goes, which
        // `tracing` cannot be told: so it must ask at each record.
        Interest::sometimes()
    }
}

/// A span this layer began.
struct Open {
    id: u64,
    /// The text of each deferred field (see [`SpanShape`]), once recorded.
    deferred: Vec<Option<String>>,
}

/// Keeps the text of the deferred fields that `scratch` has values for.
fn keep_deferred(span: &SpanShape, scratch: &mut Scratch, deferred: &mut [Option<String>]) {
    for (kept, &i) in deferred.iter_mut().zip(&span.deferred) {
        if scratch.slots[i] != Slot::Absent {
            scratch.make_text(i);
            if let Some(Value::Str(text)) = scratch.value(i, FieldType::Str) {
                *kept = Some(text.to_owned());
            }
        }
    }
}

impl<S> Layer<S> for Emitter
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    /// Hands [`context`](crate::context())'s lookup to whoever asks the
    /// subscriber for it, as `tracing-opentelemetry` hands its own: the
    /// one way from a `tracing::Span` to this layer's span extensions.
    // The one unsafe item of the crate: `Layer`'s own signature.
    #[allow(unsafe_code)]
    unsafe fn downcast_raw(&self, id: TypeId) -> Option<*const ()> {
        if id == TypeId::of::<Self>() {
            return Some(self as *const Self as *const ());
        }
        // A 'static value, promoted from this constant: the pointer stays
        // valid for as long as anyone holds it.
        let with: &'static WithContext = const { &WithContext(context::lookup::<S>) };
        // SAFETY: the caller casts the pointer back to the type whose
        // TypeId it asked for, which is `WithContext`'s here.
        (id == TypeId::of::<WithContext>()).then_some(with as *const WithContext as *const ())
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        let Some(callsite) = self.inner.callsite(meta) else { return };
        Scratch::with(|scratch| {
            event.record(&mut scratch.visitor());
            if let Shape::Event(typed) = callsite.shape(&self.inner.provider, scratch) {
                if callsite.enabled() {
                    typed.write(&self.inner.provider, meta, scratch, Some(Value::Str(meta.level().as_str())), None);
                }
            }
        });
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let meta = attrs.metadata();
        let Some(callsite) = self.inner.callsite(meta) else { return };
        let Some(new) = ctx.span(id) else { return };
        let (open, handed_on) = Scratch::with(|scratch| {
            attrs.record(&mut scratch.visitor());
            let remote = if callsite.carries_remote_parent() { context::remote_parent(meta, scratch) } else { None };
            let Shape::Span(span) = callsite.shape(&self.inner.provider, scratch) else { return (None, remote) };
            // Registered before the first begin, so a tracer sees both.
            if self.inner.span_end().is_none() || !callsite.enabled() {
                // Not recorded: a remote parent is passed on as it came.
                return (None, remote);
            }
            let parent = remote.clone().or_else(|| context::parent_of(&new));
            let level = Some(Value::Str(meta.level().as_str()));
            let begun = span.begin.write(&self.inner.provider, meta, scratch, level, parent.as_ref());
            if begun.id == 0 {
                return (None, remote);
            }
            let mut deferred = vec![None; span.deferred.len()];
            keep_deferred(span, scratch, &mut deferred);
            (Some(Open { id: begun.id, deferred }), begun.context)
        });
        let mut extensions = new.extensions_mut();
        if let Some(context) = handed_on {
            extensions.insert(SpanContext(context));
        }
        if let Some(open) = open {
            extensions.insert(open);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        if span.extensions().get::<Open>().is_none_or(|open| open.deferred.is_empty()) {
            return;
        }
        let Some(Shape::Span(shape)) = self.inner.callsites.get(span.metadata()).and_then(Callsite::registered) else { return };
        let mut recorded = vec![None; shape.deferred.len()];
        // Visited before the span's extensions are locked: a value's
        // Debug may use the span.
        Scratch::with(|scratch| {
            values.record(&mut scratch.visitor());
            keep_deferred(shape, scratch, &mut recorded);
        });
        let mut extensions = span.extensions_mut();
        if let Some(open) = extensions.get_mut::<Open>() {
            for (kept, new) in open.deferred.iter_mut().zip(recorded) {
                if new.is_some() {
                    *kept = new;
                }
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(open) = span.extensions_mut().remove::<Open>() else { return };
        let shape = self.inner.callsites.get(span.metadata()).and_then(Callsite::registered);
        if let (Some(Shape::Span(SpanShape { end: Some(end), .. })), true) = (shape, open.deferred.iter().any(Option::is_some)) {
            let mut values = [Value::U8(0); MAX_FIELDS];
            let n = open.deferred.len().min(MAX_FIELDS - 1);
            for (value, text) in values.iter_mut().zip(&open.deferred[..n]) {
                *value = Value::Str(text.as_deref().unwrap_or(""));
            }
            fit_payload(&mut values[..n], end.fields().iter().map(|f| f.ty.fixed_size()).sum());
            let _ = end.end_span_with(open.id, &values[..n]);
        } else if let Some(end) = self.inner.span_end() {
            let _ = end.end_span(open.id);
        }
    }
}
