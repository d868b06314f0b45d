//! The consumer's tests that need a kernel with user_events. `harness/test-all`
//! runs them inside the guest kernel (or directly on a host that has
//! user_events). Build with `--features kernel-tests`; they fail, never skip,
//! without it. The producer they record is core's `ut_emit` example, and for
//! EventHeader this crate's `eventheader_producer` and `otel_logs_producer`.

// The producer-side helpers (tracefs, ftrace, unique names) are the core's
// test support, shared rather than copied.
#[path = "../../../core/tests/kernel/support.rs"]
#[allow(dead_code)]
mod support;

mod consumer_support;
mod a_session_decodes_every_field_type_with_its_emitter;
mod no_event_is_lost_from_the_moment_the_bit_flips;
mod exec_and_rename_are_attributed_as_they_happened;
mod two_hundred_forked_children_each_get_their_own_name;
mod a_tiny_ring_counts_exactly_what_it_lost;
mod tracepoints_registered_after_start_are_attached;
mod processes_that_exec_and_exit_while_the_session_starts_keep_their_names;
mod events_carry_the_namespaces_they_were_emitted_in;
mod registration_goes_on_while_another_waits_for_the_recorder;
mod a_long_churn_of_processes_keeps_the_thread_table_small;
mod sixty_four_threads_emitting_at_once_are_all_received_or_counted_lost;
mod eventheader_support;
mod eventheader_events_read_field_by_field_as_tracepoint_decode_reads_them;
mod eventheader_events_keep_their_process_names_across_exec;
mod an_opentelemetry_log_reads_field_by_field_as_tracepoint_decode_reads_it;
