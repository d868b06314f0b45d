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

fn meta(name: &'static str, target: &'static str, file: &'static str, line: u32, kind: Kind) -> Metadata<'static> {
    let fields = FieldSet::new(&[], identify_callsite!(&NOWHERE));
    Metadata::new(name, target, Level::INFO, Some(file), Some(line), None, fields, kind)
}

#[test]
fn a_program_name_becomes_a_valid_provider() {
    assert_eq!(provider_from_program("my-server"), "my_server");
    assert_eq!(provider_from_program("server"), "server");
    assert_eq!(provider_from_program("kernel-3f2a9c"), "kernel_3f2a9c");
    assert_eq!(provider_from_program("..."), "rust");
    assert_eq!(provider_from_program(""), "rust");
    assert_eq!(provider_from_program(&"x".repeat(100)).len(), MAX_PROVIDER);
    // This test program's own name is a valid provider.
    assert!(usertrace::validate_name("provider", &default_provider()).is_ok(), "{}", default_provider());
}

#[test]
fn a_span_is_named_after_its_name() {
    assert_eq!(event_name("p", &meta("handle request", "app::web", "src/web.rs", 9, Kind::SPAN)), "handle_request");
    assert_eq!(event_name("p", &meta("Foo::bar", "app", "src/lib.rs", 1, Kind::SPAN)), "Foo_bar");
    assert_eq!(event_name("p", &meta("<>", "app", "src/lib.rs", 1, Kind::SPAN)), "span");
}

#[test]
fn an_unnamed_event_is_named_after_its_target_and_line() {
    let m = meta("event src/db.rs:42", "myapp::db", "src/db.rs", 42, Kind::EVENT);
    assert_eq!(event_name("p", &m), "myapp_db_42");
    // A name that only looks like tracing's default (another file) is a name.
    let m = meta("event src/other.rs:42", "myapp::db", "src/db.rs", 42, Kind::EVENT);
    assert_eq!(event_name("p", &m), "event_src_other_rs_42");
}

#[test]
fn a_named_event_is_named_after_its_name() {
    assert_eq!(event_name("p", &meta("cache_miss", "myapp::db", "src/db.rs", 42, Kind::EVENT)), "cache_miss");
    assert_eq!(event_name("p", &meta("é", "t", "src/db.rs", 42, Kind::EVENT)), "event");
}

#[test]
fn a_long_name_is_cut_with_a_hash_and_leaves_room_for_suffixes() {
    let long: &'static str = Box::leak("a".repeat(300).into_boxed_str());
    let provider = "myprovider";
    let a = event_name(provider, &meta(long, "t", "f.rs", 1, Kind::SPAN));
    assert!(provider.len() + 1 + a.len() + SUFFIX_ROOM <= MAX_NAME, "{a}");
    assert!(usertrace::validate_name("event", &a).is_ok());
    let other: &'static str = Box::leak(format!("{}b", "a".repeat(299)).into_boxed_str());
    let b = event_name(provider, &meta(other, "t", "f.rs", 1, Kind::SPAN));
    assert_ne!(a, b, "two long names differ by their hash");
    let full = format!("{provider}_{a}_text{}", collision_suffix(&meta(long, "t", "f.rs", 1, Kind::SPAN)));
    assert!(full.len() <= MAX_NAME, "{full}");
}

#[test]
fn the_collision_suffix_is_fixed_by_where_the_callsite_is() {
    let a = collision_suffix(&meta("run", "app::a", "src/a.rs", 3, Kind::SPAN));
    assert_eq!(a, collision_suffix(&meta("run", "app::a", "src/a.rs", 3, Kind::SPAN)));
    assert_ne!(a, collision_suffix(&meta("run", "app::b", "src/b.rs", 3, Kind::SPAN)));
    assert_ne!(a, collision_suffix(&meta("run", "app::a", "src/a.rs", 4, Kind::SPAN)));
    assert!(a.len() == 9 && a.starts_with('_') && a[1..].chars().all(|c| c.is_ascii_hexdigit()), "{a}");
    // FNV-1a's own test vector, with our 0 byte after each part.
    assert_eq!(fnv1a(&[]), 0x811c_9dc5);
}

#[test]
fn field_names_are_made_valid_and_kept_apart() {
    let names = field_names(&["level"], ["http.method", "level", "a.b", "a_b", "a_b", "🙂", "r#type"]);
    assert_eq!(names, ["http_method", "level_2", "a_b", "a_b_2", "a_b_3", "field", "r_type"]);
    let names = field_names(&["span_begin"], ["span_begin", "id"]);
    assert_eq!(names, ["span_begin_2", "id"]);
}

#[test]
fn truncation_keeps_whole_characters() {
    assert_eq!(truncate_at_char("héllo", 2), "h");
    assert_eq!(truncate_at_char("héllo", 3), "hé");
    assert_eq!(truncate_at_char("abc", 10), "abc");
}
