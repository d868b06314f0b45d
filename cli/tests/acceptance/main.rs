//! `usertrace` run as a user would, against a kernel with user_events.
//! Build with `--features kernel-tests`; run inside the guest kernel.

mod support;

mod record_runs_the_command_and_prints_json_with_names;
mod record_passes_the_exit_code_and_refuses_unknown_events;
mod record_and_perf_script_agree_on_every_field;
