use std::path::PathBuf;

use usertrace::{Availability, ConfigValue};

use super::*;

const KERNEL: &str = "6.8.0-test";

fn config(value: Option<ConfigValue>) -> KernelConfig {
    let tried = vec![PathBuf::from("/proc/config.gz"), PathBuf::from(format!("/boot/config-{KERNEL}"))];
    KernelConfig { release: KERNEL.into(), tried, found: value.map(|v| (PathBuf::from("/proc/config.gz"), v)) }
}

/// A status as the core gives it: the verdict, and the config it weighed.
fn status(availability: Availability, errno: Option<i32>, value: Option<Option<ConfigValue>>) -> Status {
    let tried = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].map(PathBuf::from).to_vec();
    let tracefs = (availability != Availability::TracefsNotMounted).then(|| PathBuf::from("/sys/kernel/tracing"));
    Status { availability, tracefs, tried, errno, kernel_config: value.map(config) }
}

fn findings(status: &Status, value: Option<ConfigValue>) -> Findings {
    let transport = TransportStatus { name: "user_events", reason: "a test".into() };
    Findings::new(status, config(value), permission(Some(2), true), transport)
}

#[test]
fn a_kernel_without_user_events_says_so_first_with_its_config_and_nothing_to_record() {
    let lacking = status(Availability::UserEventsMissing, None, Some(Some(ConfigValue::NotSet)));
    let f = findings(&lacking, Some(ConfigValue::NotSet));
    let lines = f.text_lines();
    assert_eq!(lines[0], format!("user_events:  {lacking}"));
    assert!(lines[0].contains(&format!("this kernel ({KERNEL}) lacks user_events")), "{lines:#?}");
    assert_eq!(lines[1], format!("kernel:       {KERNEL}"));
    assert_eq!(lines[2], "config:       /proc/config.gz: # CONFIG_USER_EVENTS is not set");
    assert!(!lines.iter().any(|l| l.contains("mount -t") || l.contains("mount it")), "{lines:#?}");
    assert_eq!((f.line.user_events.available, f.line.user_events.state), (false, "user_events_missing"));
    // Root may record, but there is nothing to record.
    assert!(!f.line.recording.allowed);
    assert_eq!(
        lines[5],
        "recording:    not possible until user_events is available (see user_events); perf would allow it: \
         this process has CAP_PERFMON (perf_event_paranoid is 2)"
    );
    assert_eq!(f.json().kernel_config.user_events, "not_set");
}

#[test]
fn with_config_y_and_no_tracefs_the_state_is_tracefs_not_mounted_and_nothing_is_recorded() {
    let unmounted = status(Availability::TracefsNotMounted, None, Some(Some(ConfigValue::Set)));
    let f = findings(&unmounted, Some(ConfigValue::Set));
    assert_eq!((f.line.user_events.state, f.line.user_events.message.as_str()), ("tracefs_not_mounted", unmounted.to_string().as_str()));
    assert!(f.line.user_events.message.contains("mount -t tracefs nodev /sys/kernel/tracing"));
    assert!(!f.line.recording.allowed);
    assert_eq!(f.text_lines()[2], "config:       /proc/config.gz: CONFIG_USER_EVENTS=y");
}

#[test]
fn with_the_config_unreadable_the_config_line_says_what_was_tried() {
    let f = findings(&status(Availability::TracefsNotMounted, None, Some(None)), None);
    assert_eq!(f.text_lines()[2], format!("config:       unreadable (tried /proc/config.gz, /boot/config-{KERNEL})"));
    let json = f.json().kernel_config;
    assert_eq!((json.user_events, json.source), ("unreadable", None));
}

#[test]
fn a_user_events_data_that_exists_can_be_recorded_whatever_the_config_says() {
    let available = status(Availability::Available, None, None);
    let f = findings(&available, Some(ConfigValue::NotSet));
    assert_eq!((f.line.user_events.available, f.line.user_events.state), (true, "available"));
    assert_eq!(f.line.user_events.message, available.to_string());
    assert_eq!(f.line.recording.message, "allowed: this process has CAP_PERFMON (perf_event_paranoid is 2)");
    assert!(f.line.recording.allowed);

    // It exists but may not be opened: whoever has perf may still record.
    let denied = status(Availability::PermissionDenied, Some(libc::EACCES), None);
    let f = findings(&denied, Some(ConfigValue::NotSet));
    assert_eq!((f.line.user_events.state, f.line.user_events.message.as_str()), ("permission_denied", denied.to_string().as_str()));
    assert!(f.line.recording.allowed);
}

#[test]
fn recording_is_allowed_only_with_something_to_record_and_perf_s_permission() {
    let said = |recordable, paranoid, cap| {
        let r = recording(recordable, permission(paranoid, cap));
        (r.allowed, r.message)
    };
    assert_eq!(said(true, Some(-1), false), (true, "allowed: perf_event_paranoid is -1".to_owned()));
    let (allowed, message) = said(true, Some(2), false);
    assert!(!allowed && message.starts_with("not allowed: perf_event_paranoid is 2 and this process lacks CAP_PERFMON; run as root"), "{message}");
    let (allowed, message) = said(false, None, false);
    assert!(!allowed, "{message}");
    assert!(message.starts_with("not possible until user_events is available (see user_events); nor would perf allow it: perf_event_paranoid is unknown"), "{message}");
    assert!(!said(false, Some(-1), false).0);
}

#[test]
fn the_text_and_the_json_say_the_same() {
    let f = findings(&status(Availability::TracefsNotMounted, None, Some(Some(ConfigValue::NotSet))), Some(ConfigValue::NotSet));
    let json = serde_json::to_value(f.json()).unwrap();
    let lines = f.text_lines();
    assert_eq!(lines[0], format!("user_events:  {}", json["user_events"]["message"].as_str().unwrap()));
    assert_eq!(lines[1], format!("kernel:       {}", json["kernel"].as_str().unwrap()));
    assert_eq!(lines[3], "tracefs:      not found");
    assert_eq!(json["tracefs"], serde_json::Value::Null);
    assert_eq!(lines[5], format!("recording:    {}", json["recording"]["message"].as_str().unwrap()));
    assert_eq!(
        json["kernel_config"],
        serde_json::json!({"source": "/proc/config.gz", "user_events": "not_set", "tried": ["/proc/config.gz", format!("/boot/config-{KERNEL}")]})
    );
    // One line, the documented fields in their order, then kernel_config.
    let mut line = Vec::new();
    crate::json::write_line(&f.json(), &mut line);
    let line = String::from_utf8(line).unwrap();
    let at = |key: &str| line.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("{key}: {line}"));
    let order = ["kernel", "tracefs", "tried", "user_events", "recording", "kernel_config"].map(at);
    assert!(order.is_sorted() && line.ends_with("}\n") && line.matches('\n').count() == 1, "{line}");
}
