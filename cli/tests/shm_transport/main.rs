//! `usertrace` on this host as it comes: its kernel lacks user_events, so
//! every producer takes the shared-memory transport (`auto`), and the
//! recorder finds it in /dev/shm, writes its enable words and reads its
//! rings beside the perf sideband. Runs natively in `cargo test`; the guest
//! keeps the user_events path.
//!
//! Some tests are the guest's own acceptance tests, run unchanged: the same
//! command lines and the same expectations hold on either transport.

#[path = "../acceptance/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "../acceptance/record_runs_the_command_and_prints_json_with_names.rs"]
mod record_runs_the_command_and_prints_json_with_names;
#[path = "../acceptance/stat_counts_each_event_exactly.rs"]
mod stat_counts_each_event_exactly;
#[path = "../otel_components/mod.rs"]
mod otel_components;
#[path = "../acceptance/record_exports_live_spans_to_a_real_jaeger.rs"]
mod record_exports_live_spans_to_a_real_jaeger;
#[path = "../acceptance/a_flight_recorder_dumps_the_seconds_around_a_trigger.rs"]
mod a_flight_recorder_dumps_the_seconds_around_a_trigger;

mod every_field_type_arrives_with_its_exact_value;
mod a_producer_started_before_the_recorder_is_found_and_loses_nothing;
mod a_fork_storm_of_200_children_arrives_under_each_child_s_name;
mod sixty_four_threads_received_plus_lost_is_emitted;
mod list_shows_a_tracepoint_in_shared_memory_with_its_fields_and_process;
mod a_producer_another_recorder_holds_is_named_and_taken_once_it_ends;
mod a_producer_in_another_pid_namespace_is_named_and_left_alone;
mod the_archive_alone_holds_and_counts_every_childs_event;
mod a_full_ring_is_named_as_the_thread_s_own_with_what_sizes_it;
mod bursts_into_a_default_ring_against_an_idle_recorder_lose_nothing;
mod an_event_s_time_lies_between_the_clock_reads_around_its_emit;
mod call_graph_says_events_in_shared_memory_carry_no_stack;
mod a_storm_of_two_hundred_dumps_writes_every_dump_it_starts_and_answers_every_caller;
mod live_timelines_and_report_are_those_convert_and_report_make_from_the_archive;
mod two_processes_continue_one_trace_through_a_traceparent;
mod a_rust_sdk_s_spans_and_logs_arrive_exactly_as_it_exported_them;
mod one_request_through_four_opentelemetry_services_is_one_trace_in_jaeger;
mod a_recorder_that_attaches_late_names_a_rust_sdk_s_spans_by_its_resource;
/// The HTTP chain through the four languages, shared with the guest's test.
#[path = "../http_chain/mod.rs"]
mod http_chain;
mod each_request_over_http_through_four_languages_is_one_trace_in_jaeger;

/// Containers made as runtimes make them, for the tests below.
mod container;
/// Debian's podman, for the tests that run a real container runtime.
mod podman;
mod producers_in_two_containers_both_pid_1_are_recorded_apart_under_their_host_pids;
mod a_symlink_planted_in_a_container_s_dev_shm_is_refused_and_never_opened;
mod a_registry_that_lies_is_named_and_the_recorder_goes_on;
mod a_process_outside_the_container_selector_is_neither_read_nor_enabled;
mod a_producer_under_podman_is_recorded_with_its_container_id;
mod a_python_producer_in_a_container_is_recorded_with_exact_values;
mod c_and_java_producers_in_a_container_are_recorded_with_exact_values;
mod a_restricted_pod_is_recorded_by_the_node_agent_as_their_manifests_say;
mod a_container_process_gone_right_after_its_events_keeps_its_description;

/// `ut_emit seq NAME COUNT PAUSE_US` on shared memory, once it said "ready
/// PID" (registered, and waiting for a recorder); with its pid.
fn ready_producer(name: &str, count: u64, pause_us: u64) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut producer = std::process::Command::new(support::ut_emit())
        .args(["seq", name, &count.to_string(), &pause_us.to_string()])
        .env("USERTRACE_TRANSPORT", "shm")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufReader::new(producer.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert!(ready.starts_with("ready "), "{ready}");
    let pid = producer.id().to_string();
    (producer, pid)
}
