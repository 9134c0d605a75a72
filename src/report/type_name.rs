//! Short type names for reports: `core::any::type_name` without module paths, at every
//! depth (`Pool<scope_stack::store::Version<[f32; 4]>>` → `Pool<Version<[f32; 4]>>`).
//!
//! Invariant: shortening only removes path prefixes (`a::b::`) from the paths inside a
//! name; every other character (generic brackets, tuples, arrays, references, slices,
//! `dyn`, lifetimes, `fn` signatures) is kept in its place, so the short name has the
//! same shape as the full one. A closure keeps the name of the item it is written in
//! (`main::{{closure}}`), which is all that tells two closures apart.

use alloc::string::String;

/// Whether `c` can be part of a path: identifier characters, the `#` of a raw
/// identifier, `:` of the separators, and the braces of `{{closure}}`-style segments.
fn in_path(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '#' | ':' | '{' | '}')
}

/// The short form of one path (`alloc::string::String` → `String`): its last segment,
/// or for a segment like `{{closure}}` the named segment before it too.
fn shorten_path(path: &str, out: &mut String) {
    // A path that starts with `::` follows a qualified type (`<T as Trait>::Out`): the
    // separator is part of the name.
    let (lead, rest) = match path.strip_prefix("::") {
        Some(rest) => ("::", rest),
        None => ("", path),
    };
    out.push_str(lead);
    let segments: alloc::vec::Vec<&str> = rest.split("::").collect();
    let keep = segments
        .iter()
        .rposition(|s| !s.starts_with('{'))
        .unwrap_or(0);
    for (i, segment) in segments[keep..].iter().enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        out.push_str(segment);
    }
}

/// `name` with the module path stripped from every path inside it:
/// `core::option::Option<alloc::string::String>` → `Option<String>`.
pub(crate) fn short_type_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        let end = rest.find(|c| !in_path(c)).unwrap_or(rest.len());
        if end == 0 {
            // One character that is not part of a path: copy it.
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        } else {
            shorten_path(&rest[..end], &mut out);
            rest = &rest[end..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::report::type_name::short_type_name as short;

    #[test]
    fn plain_names_lose_their_path() {
        assert_eq!(short("alloc::string::String"), "String");
        assert_eq!(short("my_game::Enemy"), "Enemy");
        assert_eq!(short("u64"), "u64");
        assert_eq!(short("()"), "()");
        assert_eq!(short(""), "");
    }

    #[test]
    fn generic_arguments_lose_their_paths_at_every_depth() {
        assert_eq!(
            short("scope_stack::store::version::Version<[f32; 4]>"),
            "Version<[f32; 4]>"
        );
        assert_eq!(
            short("scope_stack::pool::Pool<scope_stack::store::Version<[f32; 4]>>"),
            "Pool<Version<[f32; 4]>>"
        );
        assert_eq!(
            short("std::collections::hash::map::HashMap<alloc::string::String, alloc::vec::Vec<my::a::B<c::D>>>"),
            "HashMap<String, Vec<B<D>>>"
        );
    }

    #[test]
    fn tuples_arrays_slices_and_references() {
        assert_eq!(
            short("(alloc::string::String, u8, (a::B, [c::D; 3]))"),
            "(String, u8, (B, [D; 3]))"
        );
        assert_eq!(short("&[my_game::Enemy]"), "&[Enemy]");
        assert_eq!(short("&mut alloc::vec::Vec<u8>"), "&mut Vec<u8>");
        assert_eq!(short("&'static str"), "&'static str");
        assert_eq!(short("*const a::B"), "*const B");
        assert_eq!(short("[[a::B; 2]; 3]"), "[[B; 2]; 3]");
    }

    #[test]
    fn trait_objects_and_function_pointers() {
        assert_eq!(
            short(
                "alloc::boxed::Box<dyn core::ops::function::Fn(a::B) -> c::D + core::marker::Send>"
            ),
            "Box<dyn Fn(B) -> D + Send>"
        );
        assert_eq!(short("fn(my::A, &my::B) -> my::C"), "fn(A, &B) -> C");
        assert_eq!(short("dyn core::any::Any"), "dyn Any");
    }

    #[test]
    fn closures_keep_the_item_they_are_written_in() {
        assert_eq!(short("my_game::main::{{closure}}"), "main::{{closure}}");
        assert_eq!(
            short("my_game::main::{{closure}}::{{closure}}"),
            "main::{{closure}}::{{closure}}"
        );
        assert_eq!(short("{{closure}}"), "{{closure}}");
        assert_eq!(short("a::main::{{closure}}::Local"), "Local");
        assert_eq!(
            short("core::option::Option<my::run::{{closure}}>"),
            "Option<run::{{closure}}>"
        );
    }

    #[test]
    fn qualified_paths_keep_their_separator() {
        assert_eq!(
            short("<a::B as core::iter::Iterator>::Item"),
            "<B as Iterator>::Item"
        );
    }

    #[test]
    fn real_type_names_shorten() {
        struct Local;
        assert_eq!(short(core::any::type_name::<Local>()), "Local");
        assert_eq!(
            short(core::any::type_name::<Option<alloc::vec::Vec<Local>>>()),
            "Option<Vec<Local>>"
        );
        let f = || ();
        fn name_of<T>(_: &T) -> &'static str {
            core::any::type_name::<T>()
        }
        assert!(
            short(name_of(&f)).ends_with("::{{closure}}"),
            "{}",
            short(name_of(&f))
        );
        assert!(!short(name_of(&f)).contains("scope_stack"));
    }
}
