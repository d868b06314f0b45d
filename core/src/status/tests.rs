use super::*;

const KERNEL: &str = "6.8.0-test";

fn probed(availability: Availability, tracefs: Option<&str>, errno: Option<i32>) -> Status {
    let tried = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].map(PathBuf::from).to_vec();
    Status { availability, tracefs: tracefs.map(PathBuf::from), tried, errno, kernel_config: None }
}

fn config(value: Option<ConfigValue>) -> KernelConfig {
    let tried = vec![PathBuf::from("/proc/config.gz"), PathBuf::from(format!("/boot/config-{KERNEL}"))];
    KernelConfig { release: KERNEL.into(), tried, found: value.map(|v| (PathBuf::from("/proc/config.gz"), v)) }
}

/// `status` weighed against a config that `config` gives.
fn weighed_by(status: &Status, config: impl FnOnce() -> KernelConfig) -> Status {
    let mut status = status.clone();
    status.weigh(config);
    status
}

/// `status` weighed against a config that says `value`.
fn weighed(status: &Status, value: Option<ConfigValue>) -> Status {
    weighed_by(status, || config(value))
}

#[test]
fn off_linux_the_status_says_user_events_are_linux_only() {
    // What `status()` answers on every OS but Linux; built, and so
    // tested, on Linux too.
    let status = Status::linux_only();
    assert!(!status.is_available());
    assert_eq!(status.availability, Availability::UserEventsMissing);
    assert_eq!(status.data_path(), None);
    let message = status.to_string();
    assert!(message.contains("Linux only"), "{message}");
    assert!(message.contains(std::env::consts::OS), "{message}");
    // There is no kernel config to read, and none is read.
    assert_eq!(weighed_by(&status, || panic!("no config off Linux")), status);
}

#[test]
fn on_linux_a_missing_user_events_data_is_the_kernel_s_config_not_the_os() {
    let status = probed(Availability::UserEventsMissing, Some("/sys/kernel/tracing"), Some(libc::ENOENT));
    let message = status.to_string();
    assert!(message.contains("lacks CONFIG_USER_EVENTS"), "{message}");
    assert!(!message.contains("Linux only"), "{message}");
}

#[test]
fn a_kernel_without_user_events_says_so_first_and_not_to_mount_tracefs() {
    let expected = format!(
        "user_events is not available: this kernel ({KERNEL}) lacks user_events (/proc/config.gz says \
         `# CONFIG_USER_EVENTS is not set`), so mounting tracefs or granting access will not help; kernels that have \
         it: Ubuntu 24.04 and later, Azure Linux, WSL2, or any Linux 6.4 or later built with CONFIG_USER_EVENTS=y; \
         boot one of those, or record through shared memory (see transport)"
    );
    // Whatever the probe met: no mount, a mount without user_events_data,
    // a tracefs root this user may not look into.
    for probe in [
        probed(Availability::TracefsNotMounted, None, None),
        probed(Availability::UserEventsMissing, Some("/sys/kernel/tracing"), Some(libc::ENOENT)),
        probed(Availability::PermissionDenied, Some("/sys/kernel/tracing"), None),
    ] {
        let status = weighed(&probe, Some(ConfigValue::NotSet));
        assert_eq!(status.to_string(), expected, "{probe:?}");
        assert_eq!(status.availability, Availability::UserEventsMissing, "{probe:?}");
        assert_eq!(status.kernel_config, Some(config(Some(ConfigValue::NotSet))));
    }
    let status = weighed(&probed(Availability::TracefsNotMounted, None, None), Some(ConfigValue::Absent));
    assert_eq!(status.availability, Availability::UserEventsMissing);
    let message = status.to_string();
    assert!(
        message.contains(&format!(
            "this kernel ({KERNEL}) lacks user_events (/proc/config.gz has no CONFIG_USER_EVENTS line: \
             it predates Linux 6.4 or lacks ftrace), so mounting tracefs"
        )),
        "{message}"
    );
    assert!(!message.contains("mount -t"), "{message}");
}

#[test]
fn with_config_y_the_advice_is_to_mount_tracefs() {
    let status = weighed(&probed(Availability::TracefsNotMounted, None, None), Some(ConfigValue::Set));
    let message = status.to_string();
    assert!(message.starts_with("user_events is not available: tracefs is not mounted"), "{message}");
    assert!(message.contains("mount -t tracefs nodev /sys/kernel/tracing"), "{message}");
    assert!(
        message.ends_with(&format!("; this kernel ({KERNEL}) has CONFIG_USER_EVENTS=y (/proc/config.gz), so mounting tracefs is all it takes")),
        "{message}"
    );
    assert_eq!(status.availability, Availability::TracefsNotMounted);

    // A tracefs without user_events_data on such a kernel is not its tracefs.
    let status = weighed(&probed(Availability::UserEventsMissing, Some("/tmp/fake"), Some(libc::ENOENT)), Some(ConfigValue::Set));
    assert_eq!(
        status.to_string(),
        format!(
            "user_events is not available: /tmp/fake/user_events_data does not exist, yet this kernel ({KERNEL}) has \
             CONFIG_USER_EVENTS=y (/proc/config.gz): /tmp/fake is not this kernel's tracefs; mount that with \
             `mount -t tracefs nodev /sys/kernel/tracing`, and unset USERTRACE_TRACEFS or point it there"
        )
    );
    assert_eq!(status.availability, Availability::UserEventsMissing);

    // A tracefs root this user may not look into: the probe's advice stands.
    let denied = probed(Availability::PermissionDenied, Some("/sys/kernel/tracing"), None);
    let status = weighed(&denied, Some(ConfigValue::Set));
    assert_eq!((status.availability, status.to_string()), (Availability::PermissionDenied, denied.to_string()));
}

#[test]
fn with_the_config_unreadable_the_probe_speaks_and_says_the_config_was_unreadable() {
    let probe = probed(Availability::TracefsNotMounted, None, None);
    let status = weighed(&probe, None);
    assert_eq!(
        status.to_string(),
        format!(
            "{probe}; the kernel's build config was unreadable (tried /proc/config.gz, /boot/config-{KERNEL}), \
             so whether it has CONFIG_USER_EVENTS is not known"
        )
    );
    assert!(status.to_string().contains("mount -t tracefs nodev /sys/kernel/tracing"));
    assert_eq!(status.availability, Availability::TracefsNotMounted);
}

#[test]
fn a_user_events_data_that_exists_outranks_a_config_that_denies_it() {
    // It opened, or it exists but may not be opened: the config is not read.
    for probe in [
        probed(Availability::Available, Some("/sys/kernel/tracing"), None),
        probed(Availability::PermissionDenied, Some("/sys/kernel/tracing"), Some(libc::EACCES)),
        probed(Availability::OpenFailed, Some("/sys/kernel/tracing"), Some(libc::EIO)),
    ] {
        assert!(probe.user_events_data_exists(), "{probe:?}");
        assert_eq!(weighed_by(&probe, || panic!("no config when user_events_data exists")), probe);
    }
    assert!(!probed(Availability::UserEventsMissing, Some("/sys/kernel/tracing"), Some(libc::ENOENT)).user_events_data_exists());
    assert!(!probed(Availability::PermissionDenied, Some("/sys/kernel/tracing"), None).user_events_data_exists());
}

#[test]
fn status_probes_tracefs_only_where_user_events_exist() {
    let status = status();
    if sys::OS_HAS_USER_EVENTS {
        assert!(!status.tried.is_empty(), "Linux looks for tracefs: {status:?}");
    } else {
        assert_eq!(status, Status::linux_only());
    }
}

#[test]
fn on_this_host_status_weighs_the_running_kernel_s_config_when_the_probe_cannot_tell() {
    let status = status();
    if !sys::OS_HAS_USER_EVENTS || status.user_events_data_exists() {
        assert_eq!(status.kernel_config, None, "{status:?}");
        return;
    }
    let config = KernelConfig::running();
    assert_eq!(status.kernel_config.as_ref(), Some(&config), "{status:?}");
    if config.lacks_user_events() {
        assert_eq!(status.availability, Availability::UserEventsMissing);
        assert!(status.to_string().contains(&format!("this kernel ({}) lacks user_events", config.release)), "{status}");
    }
}
