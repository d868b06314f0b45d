//! Providers: a name prefix shared by a group of tracepoints.

use super::dynamic::DynamicTracepoint;
use super::definition::{validate_name, Definition};
use super::field::Field;
use super::tracepoint::{RegisterOptions, Tracepoint};
use crate::Error;

/// Creates tracepoints named `<provider>_<event>` at run time, for events
/// not known when the program is compiled (bindings, plugins, config).
/// Static events are cheaper with [`tracepoints!`](crate::tracepoints).
///
/// ```
/// use usertrace::{ErrorKind, Field, FieldType, Provider, Value};
///
/// let provider = Provider::new("myapp")?;
/// let fields = vec![Field::new("status", FieldType::U32), Field::new("path", FieldType::Str)];
/// let request = match provider.tracepoint("request", fields.clone()) {
///     Ok(tp) => tp,
///     // No user_events here: keep an unregistered tracepoint, whose emits
///     // do nothing, so the program runs the same with or without tracing.
///     Err(e) if e.kind() == ErrorKind::Unavailable => provider.define("request", fields)?,
///     Err(e) => return Err(e),
/// };
/// assert_eq!(request.name(), "myapp_request");
/// request.emit(&[Value::U32(200), Value::Str("/index.html")])?;
/// # Ok::<(), usertrace::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Provider {
    name: String,
    options: RegisterOptions,
}

impl Provider {
    /// A provider named `name`, which must be `[A-Za-z0-9_]+`. Nothing is
    /// registered until [`tracepoint`](Self::tracepoint).
    pub fn new(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        validate_name("provider", &name)?;
        Ok(Provider { name, options: RegisterOptions::default() })
    }

    /// Options for the tracepoints this provider creates from now on.
    pub fn with_options(mut self, options: RegisterOptions) -> Self {
        self.options = options;
        self
    }

    /// The provider's name, without the `_` that joins it to event names.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The full event name of `event` under this provider.
    pub fn event_name(&self, event: &str) -> String {
        format!("{}_{}", self.name, event)
    }

    /// Defines `<provider>_<event>` and registers it.
    pub fn tracepoint(&self, event: &str, fields: Vec<Field>) -> Result<DynamicTracepoint, Error> {
        let tp = self.define(event, fields)?;
        tp.register()?;
        Ok(tp)
    }

    /// Defines `<provider>_<event>` without registering it.
    pub fn define(&self, event: &str, fields: Vec<Field>) -> Result<DynamicTracepoint, Error> {
        let definition = Definition::with_provider(&self.name, event, fields)?;
        Ok(DynamicTracepoint::from_definition(definition, self.options))
    }

    /// Declares and registers a span `<provider>_<event>` (see
    /// [`span`](mod@crate::span)); begin it with [`DynamicTracepoint::begin_span`].
    pub fn span(&self, event: &str, fields: Vec<Field>) -> Result<DynamicTracepoint, Error> {
        let tp = DynamicTracepoint::from_definition(Definition::span_begin(&self.name, event, fields)?, self.options);
        tp.register()?;
        Ok(tp)
    }

    /// Declares and registers `<provider>_span_end`, which ends this
    /// provider's spans ([`DynamicTracepoint::end_span`]).
    pub fn span_end(&self) -> Result<DynamicTracepoint, Error> {
        let tp = DynamicTracepoint::from_definition(Definition::span_end(&self.name)?, self.options);
        tp.register()?;
        Ok(tp)
    }

    /// Declares and registers `<provider>_span_error`, which ends this
    /// provider's spans because of an error ([`DynamicTracepoint::end_span_with`]).
    pub fn span_error(&self) -> Result<DynamicTracepoint, Error> {
        let tp = DynamicTracepoint::from_definition(Definition::span_error(&self.name)?, self.options);
        tp.register()?;
        Ok(tp)
    }
}

/// The `static` tracepoints of one [`tracepoints!`](crate::tracepoints)
/// block, so they can be registered together at start-up (which makes them
/// visible to `usertrace list` and perf before their first emit).
#[derive(Debug)]
pub struct StaticProvider {
    /// The provider's name, as written after `provider` in the block.
    pub name: &'static str,
    /// The block's tracepoints, in declaration order.
    pub tracepoints: &'static [&'static Tracepoint],
}

impl StaticProvider {
    /// Registers every tracepoint; returns the first error, after trying all.
    pub fn register(&self) -> Result<(), Error> {
        let mut first_error = None;
        for tp in self.tracepoints {
            if let Err(e) = tp.register() {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Unregisters every tracepoint.
    pub fn unregister(&self) -> Result<(), Error> {
        let mut first_error = None;
        for tp in self.tracepoints {
            if let Err(e) = tp.unregister() {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
