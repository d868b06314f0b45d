use std::io::Write as _;

use super::*;

const RELEASE: &str = "6.8.0-test";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-kernel-config-unit-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_config_says_y_not_set_or_nothing_and_a_non_config_says_nothing() {
    assert_eq!(user_events_in("CONFIG_FTRACE=y\nCONFIG_USER_EVENTS=y\n"), Some(ConfigValue::Set));
    assert_eq!(user_events_in("CONFIG_FTRACE=y\n# CONFIG_USER_EVENTS is not set\n"), Some(ConfigValue::NotSet));
    assert_eq!(user_events_in("# CONFIG_FTRACE is not set\n"), Some(ConfigValue::Absent));
    // The last line wins; a longer name is another option.
    assert_eq!(user_events_in("CONFIG_USER_EVENTS=y\n# CONFIG_USER_EVENTS is not set\n"), Some(ConfigValue::NotSet));
    assert_eq!(user_events_in("CONFIG_USER_EVENTS_X=y\n"), Some(ConfigValue::Absent));
    // An empty or foreign file is no evidence either way.
    assert_eq!(user_events_in(""), None);
    assert_eq!(user_events_in("<html>not found</html>\n"), None);
}

#[test]
fn not_set_and_absent_mean_the_kernel_lacks_user_events_and_unreadable_means_nothing() {
    let config = |found: Option<ConfigValue>| KernelConfig {
        release: RELEASE.into(),
        tried: vec![PathBuf::from("/proc/config.gz")],
        found: found.map(|v| (PathBuf::from("/proc/config.gz"), v)),
    };
    let said = |found| {
        let c = config(found);
        (c.lacks_user_events(), c.name(), c.to_string())
    };
    assert_eq!(said(Some(ConfigValue::Set)), (false, "y", "/proc/config.gz: CONFIG_USER_EVENTS=y".into()));
    assert_eq!(said(Some(ConfigValue::NotSet)), (true, "not_set", "/proc/config.gz: # CONFIG_USER_EVENTS is not set".into()));
    assert_eq!(said(Some(ConfigValue::Absent)), (true, "absent", "/proc/config.gz: no CONFIG_USER_EVENTS line".into()));
    assert_eq!(said(None), (false, "unreadable", "unreadable (tried /proc/config.gz)".into()));
}

#[test]
fn a_gzipped_config_reads_as_its_plain_text_does() {
    let dir = scratch("gzip");
    let text = "CONFIG_FTRACE=y\n# CONFIG_USER_EVENTS is not set\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    std::fs::write(dir.join("config.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(dir.join("config"), text).unwrap();
    for name in ["config.gz", "config"] {
        let path = dir.join(name);
        assert_eq!(read_config_file(&path).as_deref(), Some(text), "{name}");
        let read = KernelConfig::read(RELEASE.into(), std::slice::from_ref(&path));
        assert_eq!(read.found, Some((path, ConfigValue::NotSet)), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_first_readable_config_counts_and_with_none_the_config_is_unreadable() {
    let dir = scratch("order");
    let (missing, corrupt, empty, plain) = (dir.join("missing.gz"), dir.join("corrupt.gz"), dir.join("empty"), dir.join("plain"));
    std::fs::write(&corrupt, [0x1f, 0x8b, 0, 1, 2, 3]).unwrap();
    std::fs::write(&empty, "").unwrap();
    std::fs::write(&plain, "CONFIG_USER_EVENTS=y\n").unwrap();

    let read = KernelConfig::read(RELEASE.into(), &[missing.clone(), corrupt.clone(), plain.clone()]);
    assert_eq!(read.found, Some((plain.clone(), ConfigValue::Set)));
    assert_eq!(read.to_string(), format!("{}: CONFIG_USER_EVENTS=y", plain.display()));

    let paths = [missing, corrupt, empty];
    let unreadable = KernelConfig::read(RELEASE.into(), &paths);
    assert_eq!(unreadable, KernelConfig { release: RELEASE.into(), tried: paths.to_vec(), found: None });
    let tried = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    assert_eq!(unreadable.to_string(), format!("unreadable (tried {tried})"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_running_kernel_s_config_is_looked_for_in_proc_then_boot() {
    assert_eq!(config_paths(RELEASE), [PathBuf::from("/proc/config.gz"), PathBuf::from(format!("/boot/config-{RELEASE}"))]);
    assert_eq!(config_paths(""), [PathBuf::from("/proc/config.gz")]);
    let running = KernelConfig::running();
    assert_eq!(running.tried, config_paths(&running.release));
    assert_eq!(KernelConfig::running(), running, "read once, then kept");
}
