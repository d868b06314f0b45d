use super::*;

const ID: &str = "3f1c0c2b8e9d4a7f6b5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19080";
const UID: &str = "1b4f0d2e-7c3a-4e5b-9c2e-0a1b2c3d4e5f";

/// A pod under the systemd cgroup driver (kubeadm's default), cgroup v2.
fn systemd_pod() -> String {
    format!(
        "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{ID}.scope\n",
        UID.replace('-', "_")
    )
}

#[test]
fn a_pod_under_the_systemd_driver_names_its_container_and_pod() {
    let who = ContainerIdentity::parse(&systemd_pod());
    assert_eq!(who.container_id.as_deref(), Some(ID));
    assert_eq!(who.pod_uid.as_deref(), Some(UID));
    assert!(who.cgroup.starts_with("/kubepods.slice/kubepods-burstable.slice/"), "{}", who.cgroup);
}

#[test]
fn a_pod_under_the_cgroupfs_driver_in_cgroup_v1_names_its_container_and_pod() {
    let text = format!(
        "12:pids:/kubepods/besteffort/pod{UID}/{ID}\n4:memory:/kubepods/besteffort/pod{UID}/{ID}\n1:name=systemd:/kubepods/besteffort/pod{UID}/{ID}\n0::/\n"
    );
    let who = ContainerIdentity::parse(&text);
    assert_eq!((who.container_id.as_deref(), who.pod_uid.as_deref()), (Some(ID), Some(UID)));
    // v2's path is `/` here: the v1 path that names the container is kept.
    assert_eq!(who.cgroup, format!("/kubepods/besteffort/pod{UID}/{ID}"));
}

#[test]
fn docker_podman_and_crio_name_a_container_and_no_pod() {
    for text in [
        format!("0::/system.slice/docker-{ID}.scope\n"),
        format!("0::/machine.slice/libpod-{ID}.scope/container\n"),
        format!("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{ID}.scope\n"),
        format!("0::/system.slice/crio-{ID}.scope\n"),
        format!("11:devices:/docker/{ID}\n"),
    ] {
        let who = ContainerIdentity::parse(&text);
        assert_eq!(who.container_id.as_deref(), Some(ID), "{text}");
        assert_eq!(who.pod_uid, None, "{text}");
    }
}

#[test]
fn a_host_process_has_no_container_and_a_pod_named_outside_kubepods_is_no_pod() {
    let who = ContainerIdentity::parse("0::/user.slice/user-0.slice/session-3.scope\n");
    assert_eq!(who, ContainerIdentity { cgroup: "/user.slice/user-0.slice/session-3.scope".into(), container_id: None, pod_uid: None });
    assert_eq!(pod_uid(&format!("0::/system.slice/pod{UID}.service\n")), None);
    assert_eq!(pod_uid("0::/kubepods.slice/kubepods-podnot_a_uid.slice\n"), None);
    assert_eq!(ContainerIdentity::parse(""), ContainerIdentity::default());
}

#[test]
fn nspid_gives_every_level_outermost_first() {
    let status = "Name:\tut_emit\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t48213\nNgid:\t0\nPid:\t48213\nPPid:\t48200\n\
                  TracerPid:\t0\nNStgid:\t48213\t1\nNSpid:\t48213\t1\nNSpgid:\t48213\t1\nNSsid:\t48200\t0\n";
    assert_eq!(ns_pids(status), Some(vec![48213, 1]));
    assert_eq!(ns_pids("Name:\tbash\nNSpid:\t777\n"), Some(vec![777]));
    assert_eq!(ns_pids("NSpid:\t12\t7\t1\n"), Some(vec![12, 7, 1]));
    assert_eq!(ns_pids("Name:\told kernel\nPid:\t5\n"), None);
    assert_eq!(ns_pids("NSpid:\t12\tx\n"), None);
    assert_eq!(ns_pids("NSpid:\n"), None);
}

#[test]
fn our_own_pid_is_the_last_of_our_nspid_and_we_are_in_no_container() {
    assert_eq!(own_pid("/proc/self/status"), Some(std::process::id()));
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    assert_eq!(pid_in_container(&status), None);
    assert_eq!(pid_in_container("NSpid:\t48213\t1\n"), Some(1));
}

#[test]
fn selectors_parse_and_say_what_is_wrong() {
    assert_eq!("cgroup:/kubepods.slice/".parse(), Ok(ContainerSelector::CgroupPrefix("/kubepods.slice".into())));
    assert_eq!(format!("id:{}", &ID[..12].to_uppercase()).parse(), Ok(ContainerSelector::ContainerId(ID[..12].into())));
    assert_eq!(format!("pod:{UID}").parse(), Ok(ContainerSelector::PodUid(UID.into())));
    for (text, said) in [
        ("kubepods", "expected cgroup:PATH"),
        ("cgroup:kubepods", "starts with /"),
        ("id:abc", "12 to 64 hex digits"),
        ("pod:xyz", "8-4-4-4-12"),
        ("name:web", "one of cgroup, id or pod"),
    ] {
        let error = text.parse::<ContainerSelector>().unwrap_err();
        assert!(error.to_string().contains(said) && error.to_string().contains(text), "{error}");
    }
}

#[test]
fn a_selector_takes_its_containers_and_nothing_beside_them() {
    let pod = ContainerIdentity::parse(&systemd_pod());
    let host = ContainerIdentity::parse("0::/user.slice\n");
    let selectors = |texts: &[&str]| -> Vec<ContainerSelector> { texts.iter().map(|t| t.parse().unwrap()).collect() };
    assert!(selected(&[], &host), "no selector: everything");
    assert!(selected(&selectors(&["cgroup:/kubepods.slice"]), &pod));
    assert!(!selected(&selectors(&["cgroup:/kubepods"]), &pod), "a prefix ends at a path boundary");
    assert!(!selected(&selectors(&["cgroup:/kubepods.slice"]), &host));
    assert!(selected(&selectors(&[&format!("id:{}", &ID[..12])]), &pod));
    assert!(!selected(&selectors(&[&format!("id:{}", &ID[1..13])]), &pod), "a prefix, not a substring");
    assert!(selected(&selectors(&["id:000000000000", &format!("pod:{UID}")]), &pod), "any term");
    assert!(!selected(&selectors(&[&format!("pod:{UID}")]), &host));
    assert!(selected(&selectors(&["cgroup:/"]), &host), "the root takes everything");
}
