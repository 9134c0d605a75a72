//! `#[derive(DeserializeIn)]` for [scope-stack](https://docs.rs/scope-stack): level
//! files deserialized straight into a scope or a slot. Use it through the main crate's
//! `derive` feature (`scope_stack::DeserializeIn`), which also brings the trait.
//!
//! Structs (named, tuple, newtype, unit) and externally tagged enums. Attributes, in
//! `#[serde(...)]` (shared with serde's derives) or `#[scope(...)]`:
//!
//! - on the type: `rename = "..."`, `rename_all = "..."` (lowercase, UPPERCASE,
//!   PascalCase, camelCase, snake_case, SCREAMING_SNAKE_CASE, kebab-case,
//!   SCREAMING-KEBAB-CASE), `default`, `deny_unknown_fields`;
//! - on a field: `rename`, `alias`, `default`, `default = "path"`, `skip` (or
//!   `skip_deserializing`), `with_serde` (read with serde's own `Deserialize`: it may
//!   use the global heap);
//! - on a variant: `rename`, `alias`, `rename_all` (its fields), `skip`.
//!
//! Attributes that only serialization reads (`skip_serializing`, `serialize_with`, ...)
//! are ignored; any other is a compile error at its span. Internally and adjacently
//! tagged and untagged enums (`tag`, `content`, `untagged`) are not supported yet.
//!
//! The scope lifetime is the type's first lifetime parameter (a type without one is
//! deserialized by value for any scope); every type parameter gets the bound
//! `T: DeserializeIn<'s>`.
use proc_macro::TokenStream;

mod attr;
mod expand;

/// Derives `scope_stack::serde::DeserializeIn` (see the crate docs for attributes).
#[proc_macro_derive(DeserializeIn, attributes(serde, scope))]
pub fn derive_deserialize_in(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    match expand::expand(input) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}
