//! `usertrace._native`: the private native half of the `usertrace` Python
//! package. It only converts values; everything else is the `usertrace`
//! crate. Python code imports the typed front (`usertrace`), never this.

// Unsafe is opt-in per module (`enabled`, `fastcall`: CPython's C API).
#![deny(unsafe_code)]

mod arguments;
mod convert;
mod enabled;
mod errors;
mod fastcall;
mod otel_span;
mod span;
mod status;
mod tables;
mod thread_names;
mod trace_context;
mod tracepoint;
mod transport;

use pyo3::prelude::*;

#[pymodule]
mod _native {
    #[pymodule_export]
    use crate::otel_span::OtelLogs;
    #[pymodule_export]
    use crate::otel_span::OtelResources;
    #[pymodule_export]
    use crate::otel_span::OtelSpans;
    #[pymodule_export]
    use crate::span::span_event_name;
    #[pymodule_export]
    use crate::span::Span;
    #[pymodule_export]
    use crate::span::SpanTracepoint;
    #[pymodule_export]
    use crate::status::status;
    #[pymodule_export]
    use crate::trace_context::TraceContext;
    #[pymodule_export]
    use crate::tracepoint::check_name;
    #[pymodule_export]
    use crate::tracepoint::Tracepoint;
    #[pymodule_export]
    use crate::transport::transport;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("MAX_FIELDS", usertrace::MAX_FIELDS)?;
        m.add("ATTACH_FD_ENV", usertrace::ATTACH_FD_ENV)?;
        crate::tables::add(m)?;
        let tracepoint = m.py().get_type::<crate::tracepoint::Tracepoint>();
        crate::enabled::install(&tracepoint)?;
        crate::tracepoint::install_methods(&tracepoint)?;
        crate::span::install_methods(&m.py().get_type::<crate::span::SpanTracepoint>())
    }

    use pyo3::prelude::*;
}
