//! Levels in place (feature `rkyv`): a cooked level file read straight into a slot and
//! used where it lies.
//!
//! Engines that stream big worlds do not parse their level files. A level is cooked
//! offline into the layout the game reads (rkyv's *archived* form: relative pointers
//! and lengths instead of heap pointers), loaded with one copy or one read into a block
//! reserved for it, and used where it lies. A [`Slots`] slot is that block: fixed,
//! aligned, and unloaded in one step. [`Slots::load_archived`] copies the bytes into a
//! free slot (or reads them from any [`std::io::Read`] through [`FromReader`], with no
//! heap buffer between), validates them with bytecheck, and hands out a
//! [`Loaded`](crate::Loaded) whose root is the `&Archived<Level>`.
//!
//! # The invariant
//!
//! The archived bytes live in the slot, in room taken from the slot's own scope at the
//! front of the slot, aligned to 16 (rkyv's buffer alignment) or to the archived root's
//! alignment if larger; they are never written after the load. No `&Archived<T>` exists
//! before bytecheck validated every byte it can reach: every relative pointer lands
//! inside the archive and is aligned, every length fits, every `str` is UTF-8, every
//! enum tag names a variant. The reference is the slot's root, lent through
//! [`Loaded::with`](crate::Loaded::with) for a borrow shorter than the slot's life
//! (rule 10), so it cannot outlive the unload that rewinds the bytes. Skipping the
//! check is only possible through the `unsafe` loads
//! ([`Slots::load_archived_unchecked`]): bytes that lie make references that lie.
//!
//! A load that fails (no slot, a slot too small, bytes that do not validate, a reader
//! that fails midway, a build step that refuses) frees its slot before the error comes
//! back, with everything placed dropped once; the [`LoadError`] names the set, the load
//! and the reason. Nothing is read past the archive's end: the check reads only the
//! bytes the load placed.
//!
//! # Cooking
//!
//! A level is cooked from the same types the game uses: derive `rkyv::Archive` and
//! `rkyv::Serialize` on them and write `rkyv::to_bytes::<rkyv::rancor::Error>(&level)`
//! to the file. The cooker and the game must share rkyv's format features (endianness,
//! alignment, pointer width): Cargo unifies features within one build, so a cooker that
//! is a binary of the same workspace (or the game itself, in a `--cook` mode) agrees by
//! construction. An archive from another format fails validation; it is not misread.
//!
//! ```
//! use scope_stack::LinearAllocator;
//!
//! /// The game's own level type, cooked by the tools and read in place by the game.
//! #[derive(rkyv::Archive, rkyv::Serialize, PartialEq, Debug)]
//! struct Level {
//!     name: String,
//!     geometry: Vec<[f32; 3]>,
//!     spawns: Vec<(String, u32)>,
//! }
//!
//! let level = Level {
//!     name: "forest".into(),
//!     geometry: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 2.0]],
//!     spawns: vec![("wolf".into(), 30)],
//! };
//! // The cooking tool: one call, from the game's types.
//! let file = rkyv::to_bytes::<rkyv::rancor::Error>(&level).unwrap();
//! // std::fs::write("forest.level", &file)?;
//!
//! // The game: one copy into a slot, validated, read where it lies.
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("game", |game| {
//!     let levels = game.new_slots("levels", 2, 64 << 10);
//!     let forest = levels.load_archived::<Level>("forest", &file).unwrap();
//!     forest.with(|l| {
//!         assert_eq!(l.name, "forest");
//!         assert_eq!(l.geometry[1][2].to_native(), 2.0);
//!         assert_eq!((l.spawns[0].0.as_str(), l.spawns[0].1.to_native()), ("wolf", 30));
//!     });
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! From a file, with no buffer on the heap:
//! `levels.load_archived::<Level>("forest", FromReader::new(file, file_len))` where
//! `file_len` is the file's `metadata().len()` (see [`FromReader`]).
//!
//! # In place, or serde?
//!
//! Pick in-place levels for large, read-mostly data that your own tools cook: meshes,
//! navigation grids, names, spawn tables. A load is one copy and one validation pass
//! (a linear walk over the bytes, with no allocation but rancor's error on failure,
//! and a small table of shared pointers in rkyv's validator), with no number parsed and
//! no string copied; a trusted build may skip the pass with the `unsafe` loads. Pick
//! serde ([`crate::serde`], feature `serde`) for files people edit by hand, formats you
//! do not control (JSON from a web service, a modder's TOML), and data that must
//! survive changes to the game's types: an archive is tied to the exact types and
//! format features that wrote it, and a changed type needs the level cooked again.
//!
//! # What the archived form cannot do
//!
//! The archive is read-only once loaded: the game gets `&Archived<T>`, never `&mut`,
//! and its containers (`ArchivedVec`, `ArchivedString`) cannot grow, shrink or be
//! replaced. Numbers are rkyv's portable forms (`u32_le` and friends: read them with
//! `to_native()`). State the game changes (live enemies, health, doors opened, a map
//! from names to handles) lives in the level's *runtime half*: the `_with` loads
//! ([`Slots::load_archived_with`] and its concurrent and task forms) run a build step
//! after validation, in the same slot after the archive's bytes, that carves pools,
//! heaps and values filled from the archived data. The runtime half may borrow from the
//! archive (an enemy's `&'s str` name pointing into it), since both live exactly as long
//! as the slot. The slot then holds the archive, what the build step placed, and the
//! root, and nothing else but the archive's row in the memory map (16 words) and, with
//! the `tracy` feature while a profiler is connected, the record that ends the
//! archive's profiler pool; it unloads in one step.
//!
//! # In the memory map
//!
//! The archive is a row of its own kind under its slot, named after the level's type,
//! before the rows of what the build step carved after it:
//!
//! ```text
//!     - Slots levels              832   128.0 KiB  1/2 slots held (high-water 1)
//!       - Slot forest             832    64.0 KiB  used 5.8 KiB of 64.0 KiB (high-water 5.8 KiB)
//!         - Archive Level         832     3.8 KiB  3.8 KiB archived, read in place
//!         - Pool<u32>            4848     1.2 KiB  len 64/64 (high-water ≤ 64)
//! ```
//!
//! The picture draws it as a box of its own colour over the slot's used part. With
//! the `tracy` feature the archive's bytes are an allocation in the slot's memory pool,
//! as everything placed in the slot is, and also a pool of their own named as the row,
//! `levels/forest/Archive Level`, whose one allocation is the whole archive, discarded
//! when the slot unloads. While a profiler is connected that costs the slot one
//! finalizer record (a few words, after the archive's row); with no profiler
//! connected, or without the feature, nothing.
//!
//! # The forms
//!
//! | kind | validated | with a build step | unchecked (`unsafe`) |
//! |---|---|---|---|
//! | plain | [`Slots::load_archived`] | [`Slots::load_archived_with`] | [`Slots::load_archived_unchecked`] |
//! | shared | [`Slots::load_archived_concurrent`] | [`Slots::load_archived_concurrent_with`] | [`Slots::load_archived_concurrent_unchecked`] |
//! | task | [`Slots::load_archived_task`] | [`Slots::load_archived_task_with`] | [`Slots::load_archived_task_unchecked`] |
//!
//! Each takes any [`Source`]: a byte slice (copied, so it may sit at any address) or a
//! [`FromReader`]. They always return a `Result`, as the serde file loads do, so there
//! are no separate `try_` forms.
//!
//! With `std`, each validated load also waits for a slot while every slot is held: a
//! loader thread blocks (`_wait`, or `_wait_timeout`, whose error names the holders),
//! a task awaits (`_async`, a future whose output is the `Result`):
//!
//! | kind | blocking | with a time limit | async |
//! |---|---|---|---|
//! | plain | [`Slots::load_archived_wait`] | [`Slots::load_archived_wait_timeout`] | [`Slots::load_archived_async`] |
//! | shared | [`Slots::load_archived_concurrent_wait`] | [`Slots::load_archived_concurrent_wait_timeout`] | [`Slots::load_archived_concurrent_async`] |
//! | task | [`Slots::load_archived_task_wait`] | [`Slots::load_archived_task_wait_timeout`] | [`Slots::load_archived_task_async`] |
//!
//! and with a build step: [`Slots::load_archived_wait_with`],
//! [`Slots::load_archived_wait_timeout_with`], [`Slots::load_archived_async_with`] and
//! their `concurrent_` and `task_` forms (the async ones with the same one
//! [`BuildError`] as the other `_with` loads).
//! They are the slots' own waiting forms ([`Slots::load_wait_timeout`],
//! [`Slots::try_load_async`] and theirs) with the in-place build, so the bytes land
//! where the other loads put them, and a refused archive frees its slot at once.
//!
//! [`Slots`]: crate::Slots
//! [`Slots::load_archived`]: crate::Slots::load_archived
//! [`Slots::load_archived_with`]: crate::Slots::load_archived_with
//! [`Slots::load_archived_unchecked`]: crate::Slots::load_archived_unchecked
//! [`Slots::load_archived_concurrent`]: crate::Slots::load_archived_concurrent
//! [`Slots::load_archived_concurrent_with`]: crate::Slots::load_archived_concurrent_with
//! [`Slots::load_archived_concurrent_unchecked`]: crate::Slots::load_archived_concurrent_unchecked
//! [`Slots::load_archived_task`]: crate::Slots::load_archived_task
//! [`Slots::load_archived_task_with`]: crate::Slots::load_archived_task_with
//! [`Slots::load_archived_task_unchecked`]: crate::Slots::load_archived_task_unchecked
//! [`Slots::load_archived_wait`]: crate::Slots::load_archived_wait
//! [`Slots::load_archived_wait_timeout`]: crate::Slots::load_archived_wait_timeout
//! [`Slots::load_archived_async`]: crate::Slots::load_archived_async
//! [`Slots::load_archived_concurrent_wait`]: crate::Slots::load_archived_concurrent_wait
//! [`Slots::load_archived_concurrent_wait_timeout`]: crate::Slots::load_archived_concurrent_wait_timeout
//! [`Slots::load_archived_concurrent_async`]: crate::Slots::load_archived_concurrent_async
//! [`Slots::load_archived_task_wait`]: crate::Slots::load_archived_task_wait
//! [`Slots::load_archived_task_wait_timeout`]: crate::Slots::load_archived_task_wait_timeout
//! [`Slots::load_archived_task_async`]: crate::Slots::load_archived_task_async
//! [`Slots::load_archived_wait_with`]: crate::Slots::load_archived_wait_with
//! [`Slots::load_archived_wait_timeout_with`]: crate::Slots::load_archived_wait_timeout_with
//! [`Slots::load_archived_async_with`]: crate::Slots::load_archived_async_with
//! [`Slots::load_wait_timeout`]: crate::Slots::load_wait_timeout
//! [`Slots::try_load_async`]: crate::Slots::try_load_async

#[cfg(feature = "std")]
mod async_builds;
mod builds;
mod error;
mod fill;
mod loads;
mod root;
mod source;
#[cfg(feature = "std")]
mod wait_builds;
#[cfg(feature = "std")]
mod waits;

pub use error::{BuildError, LoadError, LoadErrorKind};
pub use root::{ArchivedRoot, InPlace, InPlaceRoot};
#[cfg(feature = "std")]
pub use source::FromReader;
pub use source::Source;
