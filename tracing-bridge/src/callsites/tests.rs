use tracing_core::callsite::Callsite;
use tracing_core::field::FieldSet;
use tracing_core::metadata::Kind;
use tracing_core::subscriber::Interest;
use tracing_core::{identify_callsite, Level, Metadata};

use super::*;

struct Nowhere;
impl Callsite for Nowhere {
    fn set_interest(&self, _: Interest) {}
    fn metadata(&self) -> &Metadata<'_> {
        unreachable!("only the identity is used")
    }
}
static NOWHERE: Nowhere = Nowhere;

fn metas(n: usize) -> Vec<&'static Metadata<'static>> {
    (0..n)
        .map(|_| {
            let fields = FieldSet::new(&[], identify_callsite!(&NOWHERE));
            &*Box::leak(Box::new(Metadata::new("m", "t", Level::INFO, None, None, None, fields, Kind::EVENT)))
        })
        .collect()
}

#[test]
fn each_callsite_keeps_its_one_entry_as_the_table_grows() {
    let table = Callsites::new();
    let metas = metas(5000);
    assert!(table.get(metas[0]).is_none());
    for (i, meta) in metas.iter().enumerate() {
        assert_eq!(*table.get_or_insert(meta, || i).unwrap(), i);
    }
    for (i, meta) in metas.iter().enumerate() {
        assert_eq!(table.get(meta), Some(&i), "entry {i}");
        assert_eq!(*table.get_or_insert(meta, || unreachable!("present")).unwrap(), i);
    }
    let mut seen = 0;
    table.for_each(|_| seen += 1);
    assert_eq!(seen, 5000);
    assert!(table.current.load(Ordering::Relaxed) > 0, "it grew");
}

#[test]
fn threads_inserting_at_once_agree_on_every_entry() {
    let table = Callsites::new();
    let metas = metas(2000);
    let made = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (table, metas, made) = (&table, &metas, &made);
            s.spawn(move || {
                for (i, meta) in metas.iter().enumerate() {
                    let entry = table.get_or_insert(meta, || {
                        made.fetch_add(1, Ordering::Relaxed);
                        i
                    });
                    assert_eq!(entry, Some(&i), "thread {t}");
                }
            });
        }
    });
    assert_eq!(made.load(Ordering::Relaxed), 2000, "one entry made per callsite");
}
