use super::*;

fn at(m: &Mappings, pid: u32, address: u64) -> Option<(String, u64)> {
    m.find(pid, address).map(|l| (l.path.to_string(), l.offset))
}

#[test]
fn an_address_is_found_in_the_code_mapped_there_at_its_file_offset() {
    let mut m = Mappings::default();
    m.map(1, 0x40_0000, 0x1000, 0x1000, true, b"/bin/app");
    m.map(1, 0x7f00_0000, 0x2000, 0, true, b"/lib/libc.so.6");
    m.map(1, 0x50_0000, 0x1000, 0, false, b"/bin/app");
    assert_eq!(at(&m, 1, 0x40_0010), Some(("/bin/app".into(), 0x1010)));
    assert_eq!(at(&m, 1, 0x7f00_1fff), Some(("/lib/libc.so.6".into(), 0x1fff)));
    // Data, a gap, the end of a mapping, another process.
    assert_eq!(at(&m, 1, 0x50_0000), None);
    assert_eq!(at(&m, 1, 0x40_1000), None);
    assert_eq!(at(&m, 2, 0x40_0010), None);
}

#[test]
fn a_newer_mapping_replaces_what_it_overlaps_and_keeps_the_rest() {
    let mut m = Mappings::default();
    m.map(1, 0x1000, 0x3000, 0, true, b"/old");
    m.map(1, 0x2000, 0x1000, 0, true, b"/new");
    assert_eq!(at(&m, 1, 0x1800), Some(("/old".into(), 0x800)));
    assert_eq!(at(&m, 1, 0x2800), Some(("/new".into(), 0x800)));
    assert_eq!(at(&m, 1, 0x3800), Some(("/old".into(), 0x2800)));
    // Unmapped code replaced by anonymous memory is no code any more.
    m.map(1, 0x1000, 0x1000, 0, false, b"//anon");
    assert_eq!(at(&m, 1, 0x1800), None);
}

#[test]
fn an_exec_forgets_the_old_program_and_a_fork_inherits_the_parents() {
    let mut m = Mappings::default();
    m.map(1, 0x1000, 0x1000, 0, true, b"/parent");
    m.fork(1, 2);
    assert_eq!(at(&m, 2, 0x1000), Some(("/parent".into(), 0)));
    m.exec(2);
    m.map(2, 0x1000, 0x1000, 0, true, b"/child");
    assert_eq!(at(&m, 2, 0x1000), Some(("/child".into(), 0)));
    assert_eq!(at(&m, 1, 0x1000), Some(("/parent".into(), 0)), "the parent keeps its own");
    // A new thread shares its process's mappings: nothing to copy.
    m.fork(1, 1);
    assert_eq!(at(&m, 1, 0x1000), Some(("/parent".into(), 0)));
    m.exit(1);
    assert_eq!(at(&m, 1, 0x1000), None);
}

#[test]
fn a_table_is_complete_from_an_exec_a_complete_parent_or_proc_not_from_later_mappings_alone() {
    let mut m = Mappings::default();
    // Running before the session: a library it loaded since is all we saw.
    m.map(1, 0x1000, 0x1000, 0, true, b"/lib/late.so");
    assert!(!m.is_complete(1));
    m.fork(1, 2);
    assert!(!m.is_complete(2), "the child of an incomplete parent");
    m.read_maps(1, "00400000-00401000 r-xp 00000000 08:01 1 /bin/app\n");
    assert!(m.is_complete(1));
    assert_eq!(at(&m, 1, 0x1000), Some(("/lib/late.so".into(), 0)), "what was seen stays");
    m.fork(1, 3);
    assert!(m.is_complete(3));
    m.exec(2);
    assert!(m.is_complete(2));
    m.exit(3);
    assert!(!m.is_complete(3));
}

#[test]
fn proc_maps_lines_give_their_code_mappings() {
    let mut m = Mappings::default();
    m.read_maps(
        7,
        "00400000-00401000 r--p 00000000 08:01 123  /usr/bin/app\n\
         00401000-00402000 r-xp 00001000 08:01 123                              /usr/bin/app\n\
         7ffd1000-7ffd3000 r-xp 00000000 00:00 0                                  [vdso]\n\
         7ffe0000-7ffe1000 rw-p 00000000 00:00 0 \n\
         not a line\n",
    );
    assert_eq!(at(&m, 7, 0x40_1234), Some(("/usr/bin/app".into(), 0x1234)));
    assert_eq!(at(&m, 7, 0x40_0000), None, "not executable");
    assert_eq!(at(&m, 7, 0x7ffd_1000), Some(("[vdso]".into(), 0)));
    assert_eq!(parse_maps_line("zz-10 r-xp 0 0 0 /x"), None);
    assert_eq!(parse_maps_line("20-10 r-xp 0 0 0 /x"), None);
}
