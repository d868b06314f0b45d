//! Tests that need a kernel with user_events. `harness/test-all` runs them
//! inside the guest kernel (or directly on a host that has user_events).
//! Build with `--features kernel-tests`; they fail, never skip, without it.
//!
//! Each runs the `ut_tracing_emit` example, a program using `tracing` or
//! `log` with this crate, under a perf session of the consumer crate that
//! launched it as `usertrace record -- CMD` does (the attach handshake),
//! and holds every event to its exact name, fields, types and values.

mod support;

mod a_callsite_registers_at_its_first_record_and_writes_only_while_traced;
mod a_value_of_another_type_goes_to_the_text_twin;
mod log_records_arrive_with_level_target_and_message;
mod spans_begin_and_end_with_one_id_and_their_fields;
mod tracing_events_arrive_with_their_level_and_typed_fields;
