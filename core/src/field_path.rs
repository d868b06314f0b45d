//! How a decoded field is named by its path: `pt.x` is member `x` of the
//! struct field `pt` (an EventHeader event's). One rule for every model
//! that holds decoded fields: the consumer's, as it decodes a payload,
//! and the outputs', as a recording holds it.

/// The value at `path` among `fields`: the field of that exact name, else,
/// for `a.b.c`, member `c` of struct member `b` of struct field `a`, where
/// `members` gives a value's members if it is a struct.
///
/// The exact name comes first: a field's own name may hold a dot, and
/// files written before structs were nested hold their members as flat
/// fields named `a.b.c`.
///
/// ```
/// enum V { N(u8), S(Vec<(&'static str, V)>) }
/// fn members(v: &V) -> Option<&[(&'static str, V)]> {
///     match v { V::S(m) => Some(m.as_slice()), _ => None }
/// }
/// let fields = [("pt", V::S(vec![("x", V::N(7))])), ("a.b", V::N(1))];
/// assert!(matches!(usertrace::find_field_by_path(&fields, "pt.x", members), Some(V::N(7))));
/// assert!(matches!(usertrace::find_field_by_path(&fields, "a.b", members), Some(V::N(1))));
/// assert!(usertrace::find_field_by_path(&fields, "pt.y", members).is_none());
/// ```
pub fn find_field_by_path<'v, N: AsRef<str>, V>(
    fields: &'v [(N, V)],
    path: &str,
    members: impl Fn(&'v V) -> Option<&'v [(N, V)]>,
) -> Option<&'v V> {
    let find = |list: &'v [(N, V)], name: &str| list.iter().find(|(n, _)| n.as_ref() == name).map(|(_, v)| v);
    if let Some(value) = find(fields, path) {
        return Some(value);
    }
    if !path.contains('.') {
        return None;
    }
    let mut parts = path.split('.');
    let mut value = find(fields, parts.next()?)?;
    for part in parts {
        value = find(members(value)?, part)?;
    }
    Some(value)
}
