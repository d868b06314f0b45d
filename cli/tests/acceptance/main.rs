//! `usertrace` run as a user would, against a kernel with user_events.
//! Build with `--features kernel-tests`; run inside the guest kernel.

mod support;
// What the OTLP tests share with the host ones: the real components.
#[path = "../otel_components/mod.rs"]
mod otel_components;

mod record_runs_the_command_and_prints_json_with_names;
mod record_passes_the_exit_code_and_refuses_unknown_events;
mod record_and_perf_script_agree_on_every_field;
mod list_shows_a_registered_event_with_its_fields_and_whether_it_is_in_use;
mod list_fails_for_an_unknown_event_and_a_bad_pattern;
mod stat_counts_each_event_exactly;
mod stat_reports_what_a_tiny_ring_lost_so_counted_plus_lost_is_emitted;
mod record_shows_namespaces_where_permitted_and_goes_on_without;
mod record_and_stat_keep_only_the_processes_given_with_p;
mod a_recording_becomes_a_perfetto_and_chrome_timeline_and_a_report;
mod record_exports_live_spans_to_a_real_jaeger;
mod record_outlives_a_collector_killed_and_restarted_mid_recording;
mod the_four_language_demo_reaches_a_real_jaeger;
mod record_names_the_container_a_process_runs_in;
mod stat_accounts_for_every_event_it_exports;
