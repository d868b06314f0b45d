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
/// typed `emit(...)`. Names are checked at compile time, and the field types
/// must implement [`ToValue`](crate::ToValue): integers, `bool`, `f32`,
/// `f64`, `&str`, `&[u8]`, and `[u8; N]` (or `&[u8; N]`) for a `char[N]`.
#[macro_export]
macro_rules! tracepoints {
    (
        provider $provider:ident;
        $(
            $(#[$meta:meta])*
            $vis:vis fn $event:ident ( $($field:ident : $ty:ty),* $(,)? );
        )*
    ) => {
        $(
            $(#[$meta])*
            #[allow(non_snake_case, dead_code)]
            $vis mod $event {
                /// The full event name: `<provider>_<event>`.
                pub const NAME: &str = concat!(stringify!($provider), "_", stringify!($event));
                const _: () = assert!(
                    $crate::__private::is_valid_name(NAME),
                    "usertrace: event names may contain only ASCII letters, digits and '_'"
                );

                // A named static, not a borrowed temporary: `Field` holds a
                // `Cow`, whose drop glue stops constant promotion.
                static FIELDS: [$crate::Field; {
                    let names: &[&str] = &[$(stringify!($field)),*];
                    names.len()
                }] = [
                    $( $crate::Field::new(stringify!($field), <$ty as $crate::ToValue>::FIELD_TYPE), )*
                ];

                /// The tracepoint itself.
                pub static TRACEPOINT: $crate::Tracepoint = $crate::Tracepoint::new(NAME, &FIELDS);

                /// Whether a tracer is attached: one load.
                #[inline(always)]
                pub fn enabled() -> bool {
                    TRACEPOINT.enabled()
                }

                /// Emits the event if a tracer is attached.
                #[inline]
                pub fn emit($($field: $ty),*) -> ::core::result::Result<(), $crate::Error> {
                    if !TRACEPOINT.enabled() {
                        return Ok(());
                    }
                    TRACEPOINT.emit(&[$( $crate::ToValue::to_value(&$field) ),*])
                }
            }
        )*

        /// Every tracepoint declared in this block.
        #[allow(dead_code)]
        pub static PROVIDER: $crate::StaticProvider = $crate::StaticProvider {
            name: stringify!($provider),
            tracepoints: &[ $( &$event::TRACEPOINT ),* ],
        };
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
