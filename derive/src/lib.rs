//! `#[derive(DeserializeIn)]` for [scope-stack](https://docs.rs/scope-stack): level
//! files deserialized straight into a scope or a slot. Use it through the main crate's
//! `derive` feature (`scope_stack::DeserializeIn`), which also brings the trait.
//!
//! Structs (named, tuple, newtype, unit) and enums in all four of serde's
//! representations. Attributes, in `#[serde(...)]` (shared with serde's derives) or
//! `#[scope(...)]`:
//!
//! - on the type: `rename = "..."`, `rename_all = "..."` (lowercase, UPPERCASE,
//!   PascalCase, camelCase, snake_case, SCREAMING_SNAKE_CASE, kebab-case,
//!   SCREAMING-KEBAB-CASE), `default`, `deny_unknown_fields`;
//! - on an enum, its representation: none (externally tagged: `"Unit"`,
//!   `{"Newtype": value}`, `{"Struct": {..}}`), `tag = "type"` (internally tagged:
//!   `{"type": "Struct", ..fields}`; unit, newtype and struct variants, no tuple
//!   variants), `tag = "t", content = "c"` (adjacently tagged: `{"t": "Newtype", "c":
//!   value}`, in either order) or `untagged` (the first variant, in declaration order,
//!   that reads the value);
//! - on a field: `rename`, `alias`, `default`, `default = "path"`, `skip` (or
//!   `skip_deserializing`), `with_serde` (read with serde's own `Deserialize`: it may
//!   use the global heap), `capacity = N` (read with
//!   `scope_stack::serde::CapacitySeed` and capacity `N`, an integer literal or a
//!   `usize` constant expression, through the field type's `DeserializeInCapacity`:
//!   a pool with room for more than the file holds; the same `N` for every file),
//!   `extra = N` (read with `CapacitySeed::extra`: room for the file's elements and
//!   `N` more, so a level of 3 enemies with `extra = 8` gets 11 slots and one of 50
//!   gets 58; for `PoolIn` and `DensePoolIn`, not heap collections, whose capacity is
//!   bytes; a count plus `N` past what the pool can address is the pool's "too many
//!   slots" error, and a file with no elements and `extra = 0` its capacity-0 error;
//!   a field marked `extra` that the file leaves out is a missing-field error unless
//!   it has a `default`). `capacity` and `extra` together are a compile error, and
//!   neither goes with `with_serde` or on a variant;
//! - on a variant: `rename`, `alias`, `rename_all` (its fields), `skip`.
//!
//! Internally tagged and untagged enums (and adjacently tagged ones whose content
//! comes before the tag) read their value twice: once into a buffer in the thread's
//! staging block (no global heap after the thread's first load; at most 1 MiB; not
//! without the main crate's `std` feature), then from the buffer. An untagged enum
//! tries its variants one after another on the buffer: what a failed attempt placed in
//! the scope stays taken until the scope ends, and when none fits the error is "data
//! did not match any variant of untagged enum X" (the attempts' own errors, a scope
//! out of room among them, are not kept: keeping them would cost an allocation per
//! attempt with some formats). Formats that are not
//! self-describing (postcard, bincode) cannot carry internally tagged or untagged
//! enums, as with serde's own derive.
//!
//! Because the value is read into the buffer first and parsed from there, an error
//! inside an internally tagged or untagged enum (a wrong type in a field, a missing
//! field) is reported where the reader stood once it had buffered the whole record,
//! not at the offending field: serde_json's `line` and `column` point just past the
//! `}` that closes the enum's record (a wrong `"r": "oops"` on line 4 of a record
//! closing on line 4 reads "expected f32 at line 5 column 1" when the next line starts
//! the next token). serde's own derive behaves the same for the same reason. Externally
//! tagged enums, and adjacently tagged ones whose tag comes first, are read straight
//! from the file and point at the field.
//!
//! Attributes that only serialization reads (`skip_serializing`, `serialize_with`, ...)
//! are ignored; any other is a compile error at its span:
//!
//! ```compile_fail
//! use scope_stack::serde::DeserializeIn;
//! #[derive(DeserializeIn)]
//! struct Level<'s> {
//!     #[serde(flatten)] // error: DeserializeIn does not support `flatten` here
//!     name: &'s str,
//! }
//! ```
//!
//! ```
//! use scope_stack::serde::DeserializeIn;
//! use scope_stack::LinearAllocator;
//!
//! #[derive(DeserializeIn, Debug, PartialEq)]
//! #[serde(tag = "type", rename_all = "snake_case")]
//! enum Prop<'s> {
//!     Lamp { color: [u8; 3] },
//!     Sign { text: &'s str },
//! }
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 16)?;
//! memory.scope("level", |level| {
//!     let file = r#"[{"type": "sign", "text": "north"}, {"color": [255, 0, 0], "type": "lamp"}]"#;
//!     let props: &[Prop] = level.deserialize(&mut serde_json::Deserializer::from_str(file)).unwrap();
//!     assert_eq!(props[0], Prop::Sign { text: "north" });
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! Pools sized from the file, with room to grow: `extra` pays for each level's own
//! count, where `capacity` pays for the largest level's in every level:
//!
//! ```
//! use scope_stack::serde::{DensePoolIn, DeserializeIn, PoolIn};
//! use scope_stack::LinearAllocator;
//!
//! #[derive(DeserializeIn)]
//! struct Level<'s> {
//!     #[scope(extra = 8)] // the file's enemies and 8 more
//!     enemies: PoolIn<'s, u32>,
//!     #[scope(capacity = 64)] // 64 shots in every level
//!     shots: DensePoolIn<'s, [f32; 2]>,
//! }
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("level", |level| {
//!     let file = r#"{"enemies": [30, 80, 45], "shots": []}"#;
//!     let mut small: Level = level.deserialize(&mut serde_json::Deserializer::from_str(file)).unwrap();
//!     assert_eq!((small.enemies.capacity(), small.shots.capacity()), (3 + 8, 64));
//!     for hp in 0..8 {
//!         small.enemies.insert_mut(hp).unwrap(); // the 8 spawned at run time
//!     }
//!     assert_eq!(small.enemies.insert_mut(99), Err(99)); // full
//!     let file = format!(r#"{{"enemies": {:?}, "shots": []}}"#, [10u32; 50]);
//!     let big: Level = level.deserialize(&mut serde_json::Deserializer::from_str(&file)).unwrap();
//!     assert_eq!(big.enemies.capacity(), 50 + 8);
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
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
