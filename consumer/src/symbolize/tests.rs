use super::*;
use crate::mappings::Mappings;

/// A function of this test binary, at a known line, to be found again.
#[inline(never)]
fn a_function_to_find() -> u64 {
    std::hint::black_box(42)
}

/// This process's mappings, as the recorder reads a running process's.
fn own_mappings() -> Mappings {
    let mut mappings = Mappings::default();
    mappings.read_maps(1, &std::fs::read_to_string("/proc/self/maps").unwrap());
    mappings
}

#[test]
fn an_address_in_this_binary_names_its_function_file_and_line() {
    assert_eq!(a_function_to_find(), 42);
    let address = a_function_to_find as fn() -> u64 as usize as u64;
    let mappings = own_mappings();
    let location = mappings.find(1, address);
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    assert_eq!(location.as_ref().map(|l| &*l.path), exe.to_str(), "{location:?}");
    let mut symbolizer = Symbolizer::default();
    let frames = symbolizer.frames(&[address], &[location]);
    let frame = &frames[0];
    let function = frame.function.as_deref().unwrap_or_default();
    assert!(function.ends_with("symbolize::tests::a_function_to_find"), "{frame:?}");
    assert!(frame.file.as_deref().unwrap_or_default().ends_with("symbolize/tests.rs"), "{frame:?}");
    assert_eq!(frame.line, Some(6), "{frame:?}");
    assert_eq!((frame.address, frame.module.as_deref()), (address, exe.to_str()));
    // Looked up again, from the cache: the same.
    let again = symbolizer.frames(&[address], &[mappings.find(1, address)]);
    assert_eq!(again, frames);
}

#[test]
fn a_frame_of_no_known_file_or_of_an_unreadable_one_keeps_its_address() {
    let mut symbolizer = Symbolizer::default();
    let gone = Location { path: "/nonexistent/lib.so".into(), offset: 0x1234 };
    let vdso = Location { path: "[vdso]".into(), offset: 0x10 };
    let frames = symbolizer.frames(&[0x10, 0x7f00_1234, 0x7ffd_0010], &[None, Some(gone), Some(vdso)]);
    let unnamed = |address, module: Option<&str>, module_offset| Frame {
        address,
        module: module.map(Arc::from),
        module_offset,
        function: None,
        file: None,
        line: None,
    };
    assert_eq!(
        &*frames,
        [unnamed(0x10, None, 0), unnamed(0x7f00_1234, Some("/nonexistent/lib.so"), 0x1234), unnamed(0x7ffd_0010, Some("[vdso]"), 0x10)]
    );
}

#[test]
fn a_function_of_a_stripped_library_is_named_from_its_symbol_table() {
    // libc has no DWARF of its own here (Debian keeps it apart): its
    // dynamic symbols name its functions.
    let address = libc::getpid as unsafe extern "C" fn() -> libc::pid_t as usize as u64;
    let mappings = own_mappings();
    let location = mappings.find(1, address);
    assert!(location.as_ref().is_some_and(|l| l.path.contains("libc")), "{location:?}");
    let mut symbolizer = Symbolizer::default();
    let frames = symbolizer.frames(&[address], &[location]);
    assert_eq!(frames[0].function.as_deref(), Some("getpid"), "{frames:?}");
}

/// The file offset of the function whose symbol name contains `part` in
/// the ELF file at `path`: where a process maps it.
fn file_offset_of(path: &std::path::Path, part: &str) -> u64 {
    use object::{Object, ObjectSegment, ObjectSymbol};
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let symbol = file.symbols().find(|s| s.name().is_ok_and(|n| n.contains(part))).expect("the symbol");
    let address = symbol.address();
    let segment = file.segments().find(|s| (s.address()..s.address() + s.size()).contains(&address)).unwrap();
    address - segment.address() + segment.file_range().0
}

#[test]
fn a_cpp_function_is_named_demangled_with_debug_information_and_from_its_symbol_without() {
    let dir = std::env::temp_dir().join(format!("usertrace-symbolize-cpp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("shop.cc");
    std::fs::write(
        &source,
        "namespace shop { struct Cart { int total(int n) const; }; }\n\
         int shop::Cart::total(int n) const { return n * 3; }\n\
         int main() { return shop::Cart().total(1) == 3 ? 0 : 1; }\n",
    )
    .unwrap();
    for (debug, flags) in [(true, &["-g", "-O0"][..]), (false, &["-O0"][..])] {
        let program = dir.join(if debug { "with_dwarf" } else { "without" });
        let built = std::process::Command::new("c++").args(flags).arg(&source).arg("-o").arg(&program).status().expect("c++ runs");
        assert!(built.success());
        let offset = file_offset_of(&program, "Cart5total");
        let path: Arc<str> = program.to_str().unwrap().into();
        let frames = Symbolizer::default().frames(&[0x1000], &[Some(Location { path, offset })]);
        let frame = &frames[0];
        assert_eq!(frame.function.as_deref(), Some("shop::Cart::total(int) const"), "{frame:?}");
        match debug {
            true => assert_eq!((frame.file.as_deref().map(|f| f.ends_with("shop.cc")), frame.line), (Some(true), Some(2)), "{frame:?}"),
            false => assert_eq!((frame.file.as_deref(), frame.line), (None, None), "{frame:?}"),
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}
