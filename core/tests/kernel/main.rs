//! Tests that need a kernel with user_events. `harness/test-all` runs them
//! inside the guest kernel (or directly on a host that has user_events).
//! Build with `--features kernel-tests`; they fail, never skip, without it.

mod support;

mod the_enable_bit_follows_ftrace_and_perf;
mod events_arrive_with_exact_field_values;
mod a_reregistration_with_other_fields_names_both_formats;
mod unregister_clears_the_bit_and_stops_kernel_writes;
mod an_external_word_is_written_in_place_and_released;
mod a_forked_child_inherits_enablement_and_exec_registers_afresh;
mod eight_threads_emit_an_exact_count;
mod ten_thousand_tracepoints_register_and_unregister;
mod persist_delete_and_multi_format;
mod oversized_payloads_are_refused_not_dropped;
mod spans_are_begin_and_end_events_linked_by_id;
mod a_tracepoint_first_registered_on_a_thread_that_exited_is_still_enabled;
mod a_tracepoint_unregistered_on_another_thread_is_no_longer_written;
mod a_child_forked_by_another_thread_than_registered_gets_its_tracepoints_enabled;
