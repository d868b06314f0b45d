//! Providers: a name prefix shared by a group of tracepoints.

use super::dynamic::DynamicTracepoint;
use super::definition::{validate_name, Definition};
use super::field::Field;
use super::tracepoint::{RegisterOptions, Tracepoint};
use crate::Error;

/// Creates tracepoints named `<provider>_<event>` at run time.
#[derive(Debug, Clone)]
pub struct Provider {
    name: String,
    options: RegisterOptions,
}

impl Provider {
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
}

/// The `static` tracepoints of one [`tracepoints!`](crate::tracepoints)
/// block, so they can be registered together at start-up (which makes them
/// visible to `usertrace list` and perf before their first emit).
#[derive(Debug)]
pub struct StaticProvider {
    pub name: &'static str,
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
