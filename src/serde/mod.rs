//! Level files straight into scopes and slots: [`DeserializeIn`] (feature `serde`).
//!
//! A value whose references point into a scope (`&'s str`, `&'s [T]`, `&'s T`, a
//! derived level struct) is deserialized by [`DeserializeIn::deserialize_in`], which
//! carries the scope handle down the value as a serde `DeserializeSeed` ([`Seed`]), so
//! every nested value is placed where it belongs, with no detour through heap types.
//! Every scope kind takes it: `&ScopeStack`, `&Scope`, [`LocalScope`](crate::LocalScope),
//! `&`[`ConcurrentScope`](crate::ConcurrentScope), and the scope of a slot being loaded,
//! through the [`Place`](crate::Place) trait; each kind also has an inherent
//! `deserialize` method, and [`Slots`](crate::Slots) load a level from a file in one
//! call (`load_from`, `load_concurrent_from`, `load_task_from`; their error is a
//! [`LoadError`]).
//!
//! # What it covers
//!
//! Integers, floats, `bool`, `char`, `()`, `Option`, tuples (up to 12), arrays `[T; N]`,
//! `PhantomData`; `&'s str` and `&'s mut str` (always copied into the scope, so the input
//! may be dropped after the load); `&'s [T]` and `&'s mut [T]` for any element type,
//! nested to any depth; `&'s T` and `&'s mut T`; maps as [`ScopeMap`] (the entries in
//! file order, as `&'s [(K, V)]`) or [`SortedMap`] (sorted by key when read, for look-ups
//! by binary search); any type with only serde's `Deserialize` through
//! [`Serde`] (it may use the global heap). Structs and enums through
//! `#[derive(DeserializeIn)]` (feature `derive`).
//!
//! Pools: [`PoolIn`] and [`DensePoolIn`], a [`Pool`](crate::Pool) or
//! [`DensePool`](crate::DensePool) carved from the scope being loaded (as `new_pool`
//! and `new_dense_pool` carve them, reports included) and filled from a sequence, with
//! the handles of its values in the order of the file. The capacity is the number of
//! elements in the file, or given ([`DeserializeInCapacity`], [`CapacitySeed`], and
//! `#[scope(capacity = N)]` on a derived field) so that the game can insert more at run
//! time, or the file's count plus a margin (`#[scope(extra = N)]`,
//! [`CapacitySeed::extra`], so each level pays for its own size); more elements than
//! that is an error. Values with destructors must be
//! `Send + 'static` (the pool's finalizer drops them); values that need none may borrow
//! the scope and pay nothing.
//!
//! Heaps: a collection that grows and shrinks while the level is played,
//! `allocator_api2::vec::Vec<T, &'s Heap>` or (feature `hashbrown`)
//! `hashbrown::HashMap<K, V, S, &'s Heap>`, is filled from the file into a
//! [`Heap`](crate::Heap) carved first: one of `BYTES` bytes for the collection alone
//! with `#[scope(capacity = BYTES)]` on a derived field (or [`CapacitySeed`]), or a
//! heap of yours, shared by several collections, with [`HeapSeed`]
//! ([`DeserializeInHeap`]). The elements are read with [`DeserializeIn`], so what they
//! reference (`&'s str`) goes to the scope; the collection is returned by value and
//! drops its elements when its owner drops it. A heap collection has no size to read
//! from a file: without one of those it is refused when the program is built. A file
//! that outgrows the heap is an error, and the elements read so far are dropped once.
//!
//! # Saving a level
//!
//! What this module reads also serializes with serde, so an editor can save a level it
//! loaded: `&'s str`, slices and `&'s T` through serde's own impls, [`ScopeMap`] as a
//! map, and [`Pool`](crate::Pool) and [`DensePool`](crate::DensePool) as the sequence of
//! their values in iteration order (handles are not written); [`PoolIn`] and
//! [`DensePoolIn`] write their values in the order of the file, then those inserted
//! since, so a loaded level saves back as it was read.
//!
//! # Sequences of unknown length, nested
//!
//! A self-describing format (JSON) gives no length up front, and an inner list
//! finishes before the outer one, so a slice cannot simply grow at the top of the scope
//! while its elements place data of their own (each time an element placed something,
//! the slice would move, leaving a hole). Slices are therefore collected one of three
//! ways, picked per sequence:
//!
//! - **Elements that place nothing** (numbers, tuples and arrays of them, derived
//!   structs of such fields): the slice grows in place at the top of the scope
//!   (`alloc_iter`). The scope holds the data and nothing else.
//! - **A known length** (binary formats say it; elements that need no drop): the slice
//!   is carved at once and filled; what the elements place follows it.
//! - **Otherwise** the elements are *staged* in this thread's staging blocks (feature
//!   `std`), nested sequences stacked on them like scopes, and moved into the scope in
//!   one piece when the sequence ends: the scope then holds the data and nothing else,
//!   and the staging room is given back at once. A thread's first block is 1 MiB,
//!   reserved from the global heap on its first staged sequence. A sequence that
//!   outgrows the room left there moves, with its staged elements, to a larger block
//!   (2 MiB, 4 MiB, ..., at least four times what it has staged), reserved the first
//!   time it is needed and kept for the thread's life, so the next load of a level of
//!   that size reserves nothing. Only when no larger block can be reserved (or without
//!   `std`) does a sequence carry on growing at the top of the scope, where it moves
//!   each time an element placed data: correct, but the old places stay taken until
//!   the scope ends.
//!
//! A pool whose capacity is the file's length is filled the same way: its elements are
//! staged (or, without room there, kept in a doubling buffer at the top of the scope),
//! then the pool is carved and they move in (see [`PoolIn`]).
//!
//! The costs: one move of each staged element (a `memcpy`; one more for the elements
//! of a sequence that moves to a larger block, each time it moves), no global-heap
//! allocation after a thread's first load of its largest level, staging blocks kept
//! per thread (their sizes double, and the largest is at most eight times the largest
//! sequence staged, counting the elements' own size and not their data, so all of them
//! together at most sixteen times; the pages a load never wrote are never touched), and
//! for the scope exactly the data, its alignment, and one finalizer record per slice
//! whose elements need drop.
//!
//! # Enums whose variant comes late
//!
//! An internally tagged or untagged enum (`#[serde(tag = "type")]`,
//! `#[serde(untagged)]`), and an adjacently tagged one whose content comes before its
//! tag, must read a whole value before it knows the variant. The value is then
//! buffered as a tree in this thread's staging block (with `std`) and read again from
//! there: no global-heap allocation after the thread's first load, but a value bigger
//! than what is left of the staging block (1 MiB) is an error, and without `std` such
//! enums are an error at load time. An untagged enum tries its variants on the buffer
//! one after another; what a failed attempt placed in the scope stays taken until the
//! scope ends.
//!
//! # Values with destructors
//!
//! A value placed behind a reference (`&'s T`, the elements of `&'s [T]`) that needs
//! drop gets a finalizer record, as with `new_object`, and only if it may: the drop rule
//! ([`crate::rules`]) wants it `Send + 'static`, which its type states through the hidden
//! `DROP` item of [`DeserializeIn`] (set for the crate's own `'static` types and for
//! [`Serde`]). Placing one that needs drop but cannot state it (a derived struct that
//! borrows the scope and holds a `String`) is refused when the program is built (E0080,
//! as `new_pod` refuses such types). Values that need no drop pay nothing. The values
//! of a [`PoolIn`] or [`DensePoolIn`] follow the same rule and are dropped by the pool's
//! own finalizer (one record per pool, as with `new_pool`), not one record each.
//!
//! # A failed load
//!
//! Deserialization stops at the first error (bad input, a type mismatch, a missing
//! field, or a scope that ran out of room). Values built so far and not yet placed are
//! dropped at once; every value already placed with a finalizer (or in a pool already
//! carved) is dropped exactly once, when its scope ends.
//!
//! A scope that ran out of room gives the format its [`AllocError`](crate::AllocError)
//! as a message (`Error::custom`): the scope, the bytes asked for and the bytes left,
//! and that what the load placed stays taken. Whether that text reaches you is the
//! format's choice: serde_json keeps it (and adds the line and column), postcard drops
//! every message and says "Serde Deserialization Error". A slot's file load keeps the
//! crate's error beside the format's, so nothing is lost whatever the format: its
//! [`LoadError`] shows the slot's error when the format's message does not, and hands
//! out the [`SlotError`](crate::SlotError) and the `AllocError` themselves
//! ([`LoadError::alloc_error`]; the allocation error of a deserialization needs the
//! `std` feature, which keeps it aside for the thread that ran the load). A plain
//! scope's `deserialize` returns the format's error alone.
//!
//! **In a plain scope, the bytes a failed load placed stay taken until the scope
//! ends**: it is not rewound to where it was before the load. For a clean slate, load
//! into a child scope (which rewinds when it ends) or into a slot: `Slots::load_from`
//! frees the slot on an error, ready for the next load at once.
//!
//! Rewinding would be sound only if nothing placed in the scope during the load could
//! be reachable after the rewind. The ways something could be:
//! - **The values our seeds return**, through the user's own deserializer or
//!   `MapAccess`: it gets each one as the `Value` of a seed type it is generic over,
//!   so it cannot name the type to keep it; it can only pass it on, drop it or forget
//!   it. Its error is made from a `Display` (`Error::custom`), which keeps no
//!   reference. Closed.
//! - **A hand-written [`DeserializeIn`] impl** knows its types, but it is a function of
//!   the scope handle and the deserializer alone: the only places it could keep a
//!   `&'s T` are statics (which need `'static`, and no scope is `'static`) and the
//!   value it returns, which a failed load does not return. Closed.
//! - **The user's own deserializer, holding the scope itself**, and a cell placed in it
//!   before the load (a `&'s Cell<Option<&'s str>>`): `deserialize` takes the scope by
//!   shared reference, as every placement does, so the deserializer may place a value
//!   of its own in the middle of the load and store it in the older cell. A rewind at
//!   the error would leave the cell pointing at memory the next allocation overwrites.
//!   **Open**, and it stays open for as long as scopes place through `&self`:
//!
//! ```
//! use core::cell::Cell;
//! use scope_stack::{LinearAllocator, ScopeStack};
//! use serde::de::{value::Error, Deserializer, Error as _, Visitor};
//!
//! /// Places a string of its own in the scope being loaded into, keeps it in a cell
//! /// placed before the load, and fails.
//! struct Nosy<'a, 's> {
//!     scope: &'a ScopeStack<'s>,
//!     keep: &'s Cell<Option<&'s str>>,
//! }
//! impl<'de> Deserializer<'de> for Nosy<'_, '_> {
//!     type Error = Error;
//!     fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
//!         self.keep.set(Some(self.scope.alloc_str("placed during the load")));
//!         Err(Error::custom("and then the load fails"))
//!     }
//!     serde::forward_to_deserialize_any! {
//!         bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
//!         byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
//!         struct enum identifier ignored_any
//!     }
//! }
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 12)?;
//! memory.scope("level", |level| {
//!     let keep: &Cell<Option<&str>> = level.new_pod(Cell::new(None));
//!     let failed = level.deserialize::<&str, _>(Nosy { scope: &**level, keep });
//!     assert!(failed.is_err());
//!     // Had the scope been rewound at the error, this would read freed memory.
//!     assert_eq!(keep.get(), Some("placed during the load"));
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! So no scope is rewound after a failed load, and the error that a full scope gives
//! says so. A slot is freed instead because its load runs in a closure of a fresh
//! lifetime: nothing placed during it can be stored anywhere that outlives the slot
//! (see [`Slots::load`](crate::Slots::load)).
//!
//! # Files from players and mods
//!
//! A load goes down the file as deep as it nests, a few stack frames per level, and a
//! level type that contains itself (a tree of `&'s [Node<'s>]`, an `Option<&'s Node<'s>>`
//! chain) lets a file nest as deep as it likes. Not every format stops it: postcard has
//! no recursion limit, and a postcard file that nests such a type 100,000 deep overflows
//! an 8 MiB stack (10,000 deep does in a debug build). A stack overflow is not an error
//! or a panic: it aborts the process. serde's own `#[derive(Deserialize)]` reads the
//! same way, so this is no worse than a load into heap types, but it matters for files
//! you did not write (a player's save, a mod, a level from the network, a request
//! body). Any of these keeps such a load from aborting:
//! - a format with a depth limit: serde_json's deserializer fails with an error once
//!   arrays and maps nest 128 deep (its default recursion limit), and the load then
//!   fails as for any bad file;
//! - a loader thread with a stack big enough for the deepest file you accept
//!   (`std::thread::Builder::stack_size`; a thread that std spawns gets 2 MiB unless told
//!   otherwise): in postcard each level takes at least one byte of the file, so a limit
//!   on the file's length bounds the depth;
//! - a level type that does not contain itself: a tree kept flat (its nodes in one
//!   slice, children named by index) nests only as deep as its type.
//!
//! Invariant of this module: a value with drop glue is placed with a finalizer only when
//! its [`DropRule`] was made by [`DropRule::finalize`] (which requires `Send + 'static`),
//! and staged elements are owned by exactly one place at a time (the staging vector, or
//! the scope's slice after the move).

mod capacity;
mod collect;
mod content;
mod heap;
mod map;
mod methods;
mod pools;
#[doc(hidden)]
pub mod private;
mod refs;
mod scalars;
mod ser_dense;
mod ser_pool;
mod serde_field;
mod slices;
#[cfg(feature = "std")]
mod slot_wait_builds;
#[cfg(feature = "std")]
mod slot_waits;
mod slots;
mod sorted_map;
#[cfg(feature = "std")]
mod staging;
mod stash;
mod trait_in;

/// The paths `#[derive(DeserializeIn)]` writes (not public API).
#[doc(hidden)]
pub mod __private {
    pub use super::private::*;
    pub use super::private::{DeserializeInTrait as DeserializeIn, PlaceTrait as Place};
}

pub use capacity::{CapacitySeed, DeserializeInCapacity};
pub use heap::{DeserializeInHeap, HeapSeed};
pub use map::ScopeMap;
pub use pools::{DensePoolIn, PoolIn};
/// `#[derive(DeserializeIn)]` (feature `derive`): see the `scope-stack-derive` crate for
/// the attributes it reads (serde's `rename`, `rename_all`, `alias`, `default`, `skip`,
/// `deny_unknown_fields`, the enum representations `tag`, `content` and `untagged`, and
/// this crate's `with_serde` and `capacity`).
///
/// Internally tagged and untagged enums are buffered before their variant is known: in
/// this thread's staging block (no global-heap allocation after the thread's first
/// load; at most 1 MiB per value; an error without the `std` feature). An untagged
/// enum tries each variant on the buffer in turn; what a failed attempt placed in the
/// scope stays taken until the scope ends.
///
/// `#[scope(capacity = N)]` on a field reads it with [`CapacitySeed`] and capacity `N`
/// (an integer literal or a `usize` constant expression), through the field type's
/// [`DeserializeInCapacity`]: a container with room for more than the file holds.
/// `#[scope(extra = N)]` gives it the file's element count plus `N` instead
/// ([`CapacitySeed::extra`]).
///
/// ```
/// use scope_stack::serde::DeserializeIn;
/// use scope_stack::{slot_root, LinearAllocator};
///
/// #[derive(DeserializeIn)]
/// #[serde(rename_all = "camelCase")]
/// struct Level<'s> {
///     level_name: &'s str,
///     spawns: &'s [[f32; 2]],
///     #[serde(default)]
///     music: Option<&'s str>,
/// }
/// slot_root!(struct LevelRoot => Level);
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 2, 64 << 10);
///     let file = r#"{"levelName": "forest", "spawns": [[1, 2], [3, 4]]}"#;
///     let mut de = serde_json::Deserializer::from_str(file);
///     let forest = levels.load_from::<LevelRoot, _>("forest", &mut de).unwrap();
///     forest.with(|l| assert_eq!((l.level_name, l.spawns.len(), l.music), ("forest", 2, None)));
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// The three other enum representations of serde:
///
/// ```
/// use scope_stack::serde::DeserializeIn;
/// use scope_stack::LinearAllocator;
///
/// #[derive(DeserializeIn, Debug, PartialEq)]
/// #[serde(tag = "type")]
/// enum Shape<'s> { Circle { r: f32 }, Poly { points: &'s [[f32; 2]] } }
///
/// #[derive(DeserializeIn, Debug, PartialEq)]
/// #[serde(tag = "t", content = "c")]
/// enum Cmd<'s> { Stop, Say(&'s str) }
///
/// #[derive(DeserializeIn, Debug, PartialEq)]
/// #[serde(untagged)]
/// enum Value<'s> { Int(i64), Text(&'s str), List(&'s [u32]) }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let json = |t| serde_json::Deserializer::from_str(t);
///     let s: Shape = level.deserialize(&mut json(r#"{"r": 2, "type": "Circle"}"#)).unwrap();
///     assert_eq!(s, Shape::Circle { r: 2.0 });
///     let c: Cmd = level.deserialize(&mut json(r#"{"t": "Say", "c": "hi"}"#)).unwrap();
///     assert_eq!(c, Cmd::Say("hi"));
///     let v: &[Value] = level.deserialize(&mut json(r#"[1, "two", [3]]"#)).unwrap();
///     assert_eq!(v, [Value::Int(1), Value::Text("two"), Value::List(&[3])]);
///     let e = level.deserialize::<Value, _>(&mut json("true")).unwrap_err();
///     assert_eq!(e.to_string(), "data did not match any variant of untagged enum Value");
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// A field with a capacity (here a hand-written container; the crate's pools implement
/// [`DeserializeInCapacity`] too):
///
/// ```
/// use scope_stack::serde::{DeserializeIn, DeserializeInCapacity};
/// use scope_stack::{LinearAllocator, Place};
/// use serde::de::{Deserializer, Error};
///
/// /// The file's names, and room for `room` of them.
/// struct Names<'s> { names: &'s [&'s str], room: usize }
/// impl<'s> DeserializeIn<'s> for Names<'s> {
///     fn deserialize_in<'de, P: Place<'s> + Copy, D: Deserializer<'de>>(
///         scope: P, de: D,
///     ) -> Result<Self, D::Error> {
///         let names = <&[&str]>::deserialize_in(scope, de)?;
///         Ok(Names { names, room: names.len() })
///     }
/// }
/// impl<'s> DeserializeInCapacity<'s> for Names<'s> {
///     fn deserialize_in_capacity<'de, P: Place<'s> + Copy, D: Deserializer<'de>>(
///         scope: P, room: usize, de: D,
///     ) -> Result<Self, D::Error> {
///         let names = <&[&str]>::deserialize_in(scope, de)?;
///         if names.len() > room {
///             return Err(D::Error::invalid_length(names.len(), &"fewer names"));
///         }
///         Ok(Names { names, room })
///     }
/// }
///
/// const PLAYERS: usize = 4;
/// #[derive(DeserializeIn)]
/// struct Lobby<'s> {
///     #[scope(capacity = PLAYERS)]
///     players: Names<'s>,
/// }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("lobby", |scope| {
///     let mut de = serde_json::Deserializer::from_str(r#"{"players": ["ann"]}"#);
///     let lobby: Lobby = scope.deserialize(&mut de).unwrap();
///     assert_eq!((lobby.players.names, lobby.players.room), (&["ann"][..], 4));
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// A collection in a heap of its own (`allocator_api2::vec::Vec<T, &'s Heap>`, and with
/// the feature `hashbrown` `hashbrown::HashMap<K, V, S, &'s Heap>`): the heap is
/// carved from the scope being loaded with `#[scope(capacity = BYTES)]`'s bytes, then
/// the file fills the collection ([`DeserializeInHeap`]):
///
/// ```
/// use allocator_api2::vec::Vec;
/// use scope_stack::serde::DeserializeIn;
/// use scope_stack::{slot_root, Heap, LinearAllocator};
///
/// #[derive(DeserializeIn)]
/// struct Level<'s> {
///     name: &'s str,
///     // A heap of 4 KiB carved from the level's slot, then the spawns fill it; the
///     // game pushes and removes spawns while the level is loaded.
///     #[scope(capacity = 4 << 10)]
///     spawns: Vec<[f32; 2], &'s Heap>,
/// }
/// slot_root!(struct LevelRoot => Level);
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 2, 64 << 10);
///     let file = r#"{"name": "forest", "spawns": [[1, 2], [3, 4]]}"#;
///     let mut de = serde_json::Deserializer::from_str(file);
///     let mut forest = levels.load_from::<LevelRoot, _>("forest", &mut de).unwrap();
///     forest.with_mut(|l, _| {
///         l.spawns.push([5.0, 6.0]);
///         l.spawns.remove(0);
///         assert_eq!((l.name, &l.spawns[..]), ("forest", &[[3.0, 4.0], [5.0, 6.0]][..]));
///     });
/// }); // the slot unloads: the level drops, then its heap goes with the slot
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// Without a size for its heap, a heap collection is refused when the program is built:
///
/// ```compile_fail,E0080
/// use allocator_api2::vec::Vec;
/// use scope_stack::serde::DeserializeIn;
/// use scope_stack::{Heap, LinearAllocator};
///
/// #[derive(DeserializeIn)]
/// struct Level<'s> {
///     spawns: Vec<[f32; 2], &'s Heap>, // error: no #[scope(capacity = BYTES)]
/// }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"{"spawns": []}"#);
///     let _level: Level = level.deserialize(&mut de).unwrap();
/// });
/// ```
///
/// A loaded level's references stay inside `with`:
///
/// ```compile_fail
/// use scope_stack::serde::DeserializeIn;
/// use scope_stack::{slot_root, LinearAllocator};
/// #[derive(DeserializeIn)]
/// struct Level<'s> { name: &'s str }
/// slot_root!(struct LevelRoot => Level);
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 1, 4096);
///     let mut de = serde_json::Deserializer::from_str(r#"{"name": "forest"}"#);
///     let forest = levels.load_from::<LevelRoot, _>("forest", &mut de).unwrap();
///     let mut name = "";
///     forest.with(|l| name = l.name); // error: the name would outlive the slot
///     drop(forest);
///     println!("{name}");
/// });
/// ```
#[cfg(feature = "derive")]
#[cfg_attr(docsrs, doc(cfg(feature = "derive")))]
pub use scope_stack_derive::DeserializeIn;
pub use serde_field::Serde;
pub use slots::{BuildError, LoadError};
pub use sorted_map::SortedMap;
#[cfg(feature = "std")]
pub use staging::{warm_staging, STAGING_BYTES};
pub use trait_in::{DeserializeIn, DropRule, Seed};
