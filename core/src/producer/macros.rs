//! `tracepoints!` declares static, typed tracepoints; `emit!` emits one,
//! evaluating its arguments only when a tracer is attached.

/// Declares a provider's static tracepoints with typed fields.
///
/// ```
/// mod events {
///     usertrace::tracepoints! {
///         provider myapp;
///         /// A request finished.
///         pub fn request_done(status: u32, path: &str, latency_ms: f64);
///         pub fn cache_flush();
///         /// A span: its id and trace context first, ended by `myapp_span_end`.
///         pub span handle(request_id: u64);
///     }
/// }
/// // Optional: make them visible to tracers before their first use.
/// let _ = events::PROVIDER.register();
/// let path = "/index.html";
/// let _ = usertrace::emit!(events::request_done(200, path, 1.5));
/// assert_eq!(events::request_done::NAME, "myapp_request_done");
/// ```
///
/// Each `fn` becomes a module with `TRACEPOINT`, `NAME`, `enabled()` and a
/// typed `emit(...)`. Each `span` becomes a module with `TRACEPOINT`,
/// `NAME`, `enabled()` and a typed `begin(...)` returning a
/// [`Span`](crate::Span) guard (use [`span!`](crate::span!)); the block also declares
/// `SPAN_END`, the provider's `<provider>_span_end` event, which
/// `PROVIDER` registers with the rest. The span convention is described in
/// [`usertrace::span`](mod@crate::span). Names are checked at compile time, and the field types
/// must implement [`ToValue`](crate::ToValue): integers, `bool`, `f32`,
/// `f64`, `&str`, `&[u8]`, and `[u8; N]` (or `&[u8; N]`) for a `char[N]`.
#[macro_export]
macro_rules! tracepoints {
    (
        provider $provider:ident;
        $(
            $(#[$meta:meta])*
            $vis:vis $kind:ident $event:ident ( $($field:ident : $ty:ty),* $(,)? );
        )*
    ) => {
        $(
            $crate::tracepoints!(@item $provider $kind $(#[$meta])* $vis $event ( $($field : $ty),* ));
        )*

        /// `<provider>_span_end`: ends every span this block declares.
        #[allow(dead_code)]
        pub static SPAN_END: $crate::Tracepoint = $crate::Tracepoint::new(
            concat!(stringify!($provider), "_", "span_end"),
            &$crate::span::SPAN_END_FIELDS,
        );

        /// Every tracepoint declared in this block, and its `span_end`.
        #[allow(dead_code)]
        pub static PROVIDER: $crate::StaticProvider = $crate::StaticProvider {
            name: stringify!($provider),
            tracepoints: &[ $( &$event::TRACEPOINT, )* &SPAN_END ],
        };
    };

    (@item $provider:ident fn $(#[$meta:meta])* $vis:vis $event:ident ( $($field:ident : $ty:ty),* )) => {
        $(#[$meta])*
        #[allow(non_snake_case, dead_code)]
        $vis mod $event {
            $crate::tracepoints!(@tracepoint $provider $event [] ( $($field : $ty),* ));

            /// Emits the event if a tracer is attached.
            // One argument per field the user declared: as many as it has.
            #[allow(clippy::too_many_arguments)]
            #[inline]
            pub fn emit($($field: $ty),*) -> ::core::result::Result<(), $crate::Error> {
                if !TRACEPOINT.enabled() {
                    return Ok(());
                }
                TRACEPOINT.emit(&[$( $crate::ToValue::to_value(&$field) ),*])
            }
        }
    };

    (@item $provider:ident span $(#[$meta:meta])* $vis:vis $event:ident ( $($field:ident : $ty:ty),* )) => {
        $(#[$meta])*
        #[allow(non_snake_case, dead_code)]
        $vis mod $event {
            $crate::tracepoints!(@tracepoint $provider $event [span_begin: u64, trace_id_hi: u64, trace_id_lo: u64, parent_span_id: u64,] ( $($field : $ty),* ));

            /// Begins the span if a tracer is attached, under the innermost
            /// span open on this thread (else as a new trace's root); it
            /// ends when the returned guard drops.
            #[allow(clippy::too_many_arguments)]
            #[inline]
            pub fn begin($($field: $ty),*) -> ::core::result::Result<$crate::Span, $crate::Error> {
                $crate::Span::begin(&TRACEPOINT, &super::SPAN_END, &[$( $crate::ToValue::to_value(&$field) ),*])
            }

            /// Begins the span if a tracer is attached, under `parent` (from
            /// another process, say); under `None`, as a new trace's root.
            #[allow(clippy::too_many_arguments)]
            #[inline]
            pub fn begin_in(
                parent: ::core::option::Option<&$crate::TraceContext>,
                $($field: $ty),*
            ) -> ::core::result::Result<$crate::Span, $crate::Error> {
                $crate::Span::begin_in(&TRACEPOINT, &super::SPAN_END, parent, &[$( $crate::ToValue::to_value(&$field) ),*])
            }

            /// A guard that ends nothing, for when nobody listens.
            #[inline]
            pub fn inert() -> ::core::result::Result<$crate::Span, $crate::Error> {
                Ok($crate::Span::inert(&super::SPAN_END))
            }

            /// A guard that ends nothing and passes `parent` on, for when
            /// nobody listens.
            #[inline]
            pub fn inert_in(parent: ::core::option::Option<&$crate::TraceContext>) -> ::core::result::Result<$crate::Span, $crate::Error> {
                Ok($crate::Span::inert_in(&super::SPAN_END, parent))
            }
        }
    };

    (@item $provider:ident $other:ident $($rest:tt)*) => {
        compile_error!(concat!("usertrace: expected `fn` or `span` before the event name, found `", stringify!($other), "`"));
    };

    // The shared part of both kinds: name, fields, tracepoint, enabled().
    (@tracepoint $provider:ident $event:ident [$($lead:ident : $lead_ty:ty,)*] ( $($field:ident : $ty:ty),* )) => {
        /// The full event name: `<provider>_<event>`.
        pub const NAME: &str = concat!(stringify!($provider), "_", stringify!($event));
        const _: () = assert!(
            $crate::__private::is_valid_name(NAME),
            "usertrace: event names may contain only ASCII letters, digits and '_'"
        );

        // A named static, not a borrowed temporary: `Field` holds a
        // `Cow`, whose drop glue stops constant promotion.
        static FIELDS: [$crate::Field; {
            let names: &[&str] = &[$(stringify!($lead),)* $(stringify!($field)),*];
            names.len()
        }] = [
            $( $crate::Field::new(stringify!($lead), <$lead_ty as $crate::ToValue>::FIELD_TYPE), )*
            $( $crate::Field::new(stringify!($field), <$ty as $crate::ToValue>::FIELD_TYPE), )*
        ];

        /// The tracepoint itself.
        pub static TRACEPOINT: $crate::Tracepoint = $crate::Tracepoint::new(NAME, &FIELDS);

        /// Whether a tracer is attached: one load.
        #[inline(always)]
        pub fn enabled() -> bool {
            TRACEPOINT.enabled()
        }
    };
}

/// Begins a span declared by a `span` item of [`tracepoints!`], evaluating
/// the arguments only if a tracer is attached. Returns
/// `Result<Span, Error>`; the span ends when the [`Span`](crate::Span)
/// guard drops, so bind it to a name (`let _span`), not to `_`.
///
/// ```
/// mod events {
///     usertrace::tracepoints! {
///         provider myapp;
///         /// Handling one request; its fields are recorded at the begin.
///         pub span handle_request(request_id: u64, path: &str);
///     }
/// }
/// fn handle(id: u64) {
///     let _span = usertrace::span!(events::handle_request(id, "/index.html"));
///     // ... the work the span measures; it ends here, when `_span` drops.
/// }
/// handle(7);
/// assert_eq!(events::handle_request::NAME, "myapp_handle_request");
/// ```
///
/// To end a span on another thread, move the guard there; its id links the
/// two events.
///
/// A span begins under the innermost span open on its thread, or as the
/// root of a new trace. With `parent = EXPR` (an
/// `Option<&`[`TraceContext`](crate::TraceContext)`>`, say the one a
/// request's `traceparent` header gives) it begins under that parent, from
/// another process or machine, or as a new trace's root under `None`;
/// while nobody listens, its guard then passes `parent` on:
///
/// ```
/// # mod events {
/// #     usertrace::tracepoints! {
/// #         provider myapp;
/// #         pub span handle_request(request_id: u64, path: &str);
/// #     }
/// # }
/// use usertrace::TraceContext;
/// let headers = vec![("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")];
/// let incoming = TraceContext::extract(&headers);
/// let span = usertrace::span!(events::handle_request(7, "/index.html"), parent = incoming.as_ref()).unwrap();
/// // The header of the next request: this span's, or (nobody listening)
/// // the incoming one, passed on.
/// let outgoing = span.traceparent();
/// # assert!(outgoing.is_some());
/// ```
#[macro_export]
macro_rules! span {
    ($($path:ident)::+ ( $($arg:expr),* $(,)? )) => {
        if $($path)::+::enabled() {
            $($path)::+::begin($($arg),*)
        } else {
            $($path)::+::inert()
        }
    };
    ($($path:ident)::+ ( $($arg:expr),* $(,)? ), parent = $parent:expr) => {
        if $($path)::+::enabled() {
            $($path)::+::begin_in($parent, $($arg),*)
        } else {
            $($path)::+::inert_in($parent)
        }
    };
}

/// Emits a tracepoint declared by [`tracepoints!`], evaluating the
/// arguments only if a tracer is attached. Returns `Result<(), Error>`.
///
/// ```
/// mod events {
///     usertrace::tracepoints! {
///         provider myapp;
///         pub fn cache_miss(key: &str, size: u64);
///     }
/// }
/// fn describe(id: u32) -> String {
///     format!("user/{id}")
/// }
/// // `describe` runs only while a tracer is attached. The first emit also
/// // registers the tracepoint, and says so if user_events is unavailable;
/// // later emits do nothing.
/// if let Err(e) = usertrace::emit!(events::cache_miss(&describe(42), 4096)) {
///     eprintln!("tracing is off: {e}");
/// }
/// ```
#[macro_export]
macro_rules! emit {
    ($($path:ident)::+ ( $($arg:expr),* $(,)? )) => {
        if $($path)::+::enabled() {
            $($path)::+::emit($($arg),*)
        } else {
            ::core::result::Result::<(), $crate::Error>::Ok(())
        }
    };
}
