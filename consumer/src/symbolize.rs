//! Naming the frames of a recorded stack: each address, as a file and an
//! offset in it ([`crate::mappings`]), becomes the function there, and the
//! source file and line where the file has debug information.
//!
//! The files are read with `addr2line` (gimli's DWARF reader, the one
//! Rust's own backtraces use) and `object`: DWARF where present (inlined
//! calls then are frames of their own, as a debugger shows them), else the
//! ELF symbol table. C++ and Rust names are demangled. Each file is opened
//! once and each (file, offset) looked up once, so that a recording of
//! 100,000 stacks through the same few functions costs a few lookups.
//!
//! A file is read by the path the process mapped, when the stacks are
//! named (while recording, or when converting later): one replaced or
//! removed since gives names from the new file or none. A file that cannot
//! be read, or an address outside its code, keeps its address, file and
//! offset, unnamed.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::mappings::Location;

/// One frame of a stack, innermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The address in the process: the first frame's is where the thread
    /// was (in the system call), the others' are return addresses.
    pub address: u64,
    /// The file mapped there, when the recording knows of one.
    pub module: Option<Arc<str>>,
    /// The address's offset in `module` (0 without one).
    pub module_offset: u64,
    /// The function, demangled, when the file names it.
    pub function: Option<Arc<str>>,
    /// The source file, when the file has line information.
    pub file: Option<Arc<str>>,
    /// The line in `file`.
    pub line: Option<u32>,
}

/// A function, and where in the source: (function, file, line).
type Name = (Option<Arc<str>>, Option<Arc<str>>, Option<u32>);

/// What one code address names, one entry per function inlined there
/// (innermost first).
type Names = Arc<[Name]>;

/// A file's code, as it was loaded.
struct Module {
    /// DWARF and the symbol table.
    loader: addr2line::Loader,
    /// Each loadable segment: (file offset, file size, virtual address),
    /// to turn a file offset into the address the DWARF speaks of.
    segments: Vec<(u64, u64, u64)>,
    /// The functions of the symbol tables (`.symtab`, else `.dynsym` of a
    /// stripped library), with their sizes: (start, end, name), by start,
    /// one name per address.
    functions: Vec<(u64, u64, Arc<str>)>,
}

/// Names frames, remembering each file and each address it has read.
#[derive(Default)]
pub(crate) struct Symbolizer {
    /// Each file, or None if it could not be read.
    modules: FxHashMap<Arc<str>, Option<Module>>,
    /// What each (file, offset) names.
    names: FxHashMap<(Arc<str>, u64), Names>,
}

impl Symbolizer {
    /// The frames of a stack whose addresses are `addresses` (innermost
    /// first) at `locations` (their file and offset, where known).
    pub(crate) fn frames(&mut self, addresses: &[u64], locations: &[Option<Location>]) -> Box<[Frame]> {
        let mut frames = Vec::with_capacity(addresses.len());
        for (i, (&address, location)) in addresses.iter().zip(locations).enumerate() {
            let Some(Location { path, offset }) = location else {
                frames.push(Frame { address, module: None, module_offset: 0, function: None, file: None, line: None });
                continue;
            };
            // A return address is the instruction after the call: the call
            // itself, which is where the line is, is the byte before.
            let probe = if i == 0 { *offset } else { offset.saturating_sub(1) };
            let names = self.names_at(path, probe);
            if names.is_empty() {
                frames.push(Frame { address, module: Some(path.clone()), module_offset: *offset, function: None, file: None, line: None });
            }
            for (function, file, line) in names.iter() {
                frames.push(Frame {
                    address,
                    module: Some(path.clone()),
                    module_offset: *offset,
                    function: function.clone(),
                    file: file.clone(),
                    line: *line,
                });
            }
        }
        frames.into_boxed_slice()
    }

    fn names_at(&mut self, path: &Arc<str>, offset: u64) -> Names {
        if let Some(names) = self.names.get(&(path.clone(), offset)) {
            return names.clone();
        }
        let module = self.modules.entry(path.clone()).or_insert_with(|| Module::load(path));
        let names: Names = match module {
            Some(module) => module.names(offset).into(),
            None => Arc::new([]),
        };
        self.names.insert((path.clone(), offset), names.clone());
        names
    }
}

impl Module {
    fn load(path: &str) -> Option<Module> {
        // `[vdso]` and the like are no file to read.
        if !path.starts_with('/') {
            return None;
        }
        let data = std::fs::read(path).ok()?;
        let (segments, functions) = {
            use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
            let file = object::File::parse(&*data).ok()?;
            let segments = file
                .segments()
                .map(|s| {
                    let (offset, size) = s.file_range();
                    (offset, size, s.address())
                })
                .collect();
            let mut functions: Vec<(u64, u64, &str)> = file
                .symbols()
                .chain(file.dynamic_symbols())
                .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0 && s.is_definition())
                .filter_map(|s| Some((s.address(), s.address() + s.size(), s.name().ok()?)))
                .collect();
            // Of the aliases of one address (`writev`, `__writev`,
            // `__GI___writev`), the public one: the fewest leading `_`.
            let underscores = |name: &str| name.len() - name.trim_start_matches('_').len();
            functions.sort_by_key(|&(start, _, name)| (start, underscores(name)));
            functions.dedup_by_key(|(start, ..)| *start);
            let functions = functions
                .into_iter()
                .map(|(start, end, name)| (start, end, Arc::from(addr2line::demangle_auto(name.into(), None).as_ref())))
                .collect();
            (segments, functions)
        };
        let loader = addr2line::Loader::new(path).ok()?;
        Some(Module { loader, segments, functions })
    }

    /// What the code at file offset `offset` names.
    fn names(&self, offset: u64) -> Vec<Name> {
        let Some(&(file_offset, _, address)) = self.segments.iter().find(|(start, size, _)| (*start..start + size).contains(&offset)) else {
            return Vec::new();
        };
        let probe = offset - file_offset + address;
        let mut names = Vec::new();
        if let Ok(mut frames) = self.loader.find_frames(probe) {
            while let Ok(Some(frame)) = frames.next() {
                let function = frame.function.as_ref().and_then(|f| f.demangle().ok()).map(|name| Arc::from(name.as_ref()));
                let file = frame.location.as_ref().and_then(|l| l.file).map(Arc::from);
                let line = frame.location.as_ref().and_then(|l| l.line);
                names.push((function, file, line));
            }
        }
        // No DWARF for it: the symbol table's function around it, if any
        // (a symbol that ends before the address does not name it).
        if names.iter().all(|(function, ..)| function.is_none()) {
            let at = self.functions.partition_point(|(start, ..)| *start <= probe);
            let symbol = at.checked_sub(1).map(|i| &self.functions[i]).filter(|(_, end, _)| probe < *end).map(|(.., name)| name.clone());
            let (file, line) = names.first().map_or((None, None), |(_, file, line)| (file.clone(), *line));
            names = symbol.map(|s| vec![(Some(s), file, line)]).unwrap_or_default();
        }
        names
    }
}

#[cfg(test)]
mod tests;
