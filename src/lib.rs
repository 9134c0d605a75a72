//! # scope-stack
//!
//! A fully deterministic memory map for games and other real-time programs. One block is
//! reserved up front; every lifetime in the program (systems, level, frame, function
//! scratch) is a scope stacked on it. Scopes bump-allocate, keep an intrusive finalizer
//! chain, and when they end, run destructors in reverse order and rewind the block in one
//! step. The idea comes from Andreas Fredriksson's *Scope Stack Allocation* (DICE).
//!
//! ```
//! use scope_stack::LinearAllocator;
//!
//! struct FrogSystem<'s> {
//!     frogs: &'s mut [[f32; 3]],
//!     lock: &'s std::sync::Mutex<()>,
//! }
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("systems", |systems| {
//!     systems.scope("level", |level| {
//!         let frogs = level.new_pod(FrogSystem {
//!             frogs: level.alloc_slice_fill_with(128, |_| [0.0; 3]),
//!             lock: level.new_object(std::sync::Mutex::new(())), // finalized
//!         });
//!         let _guard = frogs.lock.lock().unwrap();
//!         frogs.frogs[0][1] = 1.0;
//!     }); // the Mutex is dropped and the level's memory rewinds here
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! ## Threads and rayon
//!
//! A scope belongs to its thread: [`ScopeStack`], [`Scope`] and [`LocalScope`] are
//! neither `Send` nor `Sync`, and a closure that captures one cannot go to a rayon
//! pool (the compiler names [`NotThreadSafe`], whose docs give the fix). What workers
//! share is a [`ConcurrentScope`]: open one where the parallel part begins, run the
//! pool's `install` inside it, and let each job place its output through its worker's
//! [`local`](ConcurrentScope::local) handle. The opening thread reads everything after
//! the pool returns; the concurrent scope rewinds it all when its closure ends.
//!
//! ```
//! use rayon::prelude::*;
//! use scope_stack::{ConcurrentScope, LinearAllocator};
//!
//! /// One job: the even numbers of a batch, placed through this worker's handle.
//! fn evens<'c>(jobs: &'c ConcurrentScope<'_>, batch: &[u32]) -> &'c [u32] {
//!     jobs.local().alloc_iter(batch.iter().copied().filter(|n| n % 2 == 0))
//! }
//!
//! # // rayon's epoch collector is not strict-provenance clean, so Miri skips the body.
//! # #[cfg(miri)] fn main() {}
//! # #[cfg(not(miri))] fn main() -> Result<(), scope_stack::AllocError> {
//! let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let numbers: Vec<u32> = (0..1000).collect();
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("frame", |frame| {
//!     let total = frame.scope_concurrent("jobs", |jobs| {
//!         let lists: Vec<&[u32]> =
//!             pool.install(|| numbers.par_chunks(100).map(|b| evens(jobs, b)).collect());
//!         lists.iter().map(|l| l.len()).sum::<usize>() // read on the opening thread
//!     });
//!     assert_eq!(total, 500);
//! });
//! # Ok(()) }
//! ```
//!
//! `examples/jobs.rs` runs frames of rayon culling jobs this way.
//!
//! ## Layers
//! The source tree is five layers; each file imports only from its own layer and the
//! ones below it, and no files import each other in a circle (`scripts/layers.sh`
//! checks both in CI):
//!
//! ```text
//! above    report/ (memory map: types, text, SVG)   scratch/ (per-thread arenas, pads)
//! carved   pool/   dense/   store/   heap/   concurrent/   slots/   (carved from a scope)
//! scope    scope/  (Scope, ScopeStack, registry, finalizer chain, placement, Allocator)
//! block    block/  (LinearAllocator, its bump cursor, debug fill; knows no scopes)
//! ground   sync.rs  thread_index.rs  limits.rs (every MAX_*)  error.rs
//! ```
//!
//! - [`LinearAllocator`]: one fixed block, a bump offset, statistics. Never grows, and
//!   after construction never calls the global allocator. It keeps the innermost live
//!   scope's record only as an address; the scope layer knows its type, so the block
//!   needs nothing from above.
//! - [`ScopeStack`]: a rewind point plus a finalizer chain; scopes nest, and only the
//!   innermost live one can allocate. `Allocator` (allocator-api2 0.2) for
//!   `&ScopeStack`, so `allocator_api2::vec::Vec` and `hashbrown::HashMap` can live in a
//!   scope.
//! - Carved from a scope: [`Pool`] (sharded; plain loads and stores for a shard's
//!   owner), [`DensePool`] (swap-delete roster), [`Store`] (versioned objects),
//!   [`ConcurrentScope`] (many threads allocating into one scope) and [`Slots`]
//!   (sub-blocks loaded and unloaded in any order: streaming levels, frame rings; see
//!   [`slots`]).
//! - Above them all: reports ([`MemoryMap`]) and per-thread scratch scopes
//!   ([`scratch()`]).
//!
//! A `LinearAllocator::scope` method lives in the scope layer (an `impl` block there),
//! which is how the block can offer it without knowing scopes.
//!
//! ## One placement API
//!
//! A [`ScopeStack`], one thread's [`LocalScope`] and a shared `&`[`ConcurrentScope`]
//! offer the same placement methods (each written once), and the [`Place`] trait names
//! them, so one helper serves a level loader, a rayon job and a concurrent frame:
//!
//! ```
//! use scope_stack::{LinearAllocator, Place};
//!
//! /// Spawn points and their names, in whatever scope it is given.
//! fn spawns<'s>(into: impl Place<'s>, n: u32) -> (&'s [[f32; 2]], &'s [&'s str]) {
//!     let points = into.alloc_slice_fill_with(n as usize, |i| [i as f32, 0.0]);
//!     let names = into.alloc_iter_pod((0..n).map(|i| &*into.alloc_fmt(format_args!("spawn {i}"))));
//!     (points, names)
//! }
//!
//! # // rayon's epoch collector is not strict-provenance clean, so Miri skips the body.
//! # #[cfg(miri)] fn main() {}
//! # #[cfg(not(miri))] fn main() -> Result<(), scope_stack::AllocError> {
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("level", |level| {
//!     let (points, _) = spawns(&**level, 8); // the level loader: a plain scope
//!     level.scope_concurrent("frame", |frame| {
//!         let counts: Vec<usize> = {
//!             use rayon::prelude::*;
//!             (1..=4u32) // rayon jobs, each through its thread's handle
//!                 .into_par_iter()
//!                 .map(|n| spawns(frame.local(), n).1.len())
//!                 .collect()
//!         };
//!         assert_eq!(counts, [1, 2, 3, 4]);
//!         let (_, names) = spawns(frame, 2); // or the shared handle
//!         assert_eq!(names[1], "spawn 1");
//!     });
//!     assert_eq!(points.len(), 8);
//! });
//! # Ok(()) }
//! ```
//!
//! ## Lifetimes that do not nest
//!
//! Levels stream: B loads while A plays, and A goes first. Frames overlap: frame N is
//! built while N-1 is drawn on another thread. A [`Slots`] serves both; a loaded slot is
//! an owned [`Loaded`] value, dropped in any order, on any thread when it was built by
//! jobs ([`Slots::load_concurrent`]) or for one task that moves between threads, an
//! async request's arena ([`Slots::load_task`]).
//!
//! ```
//! use scope_stack::{slot_root, LinearAllocator};
//!
//! struct Level<'s> { name: &'s str, spawns: &'s [[f32; 2]] }
//! slot_root!(struct LevelRoot = for<'s> Level<'s>);
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("game", |game| {
//!     let levels = game.new_slots("levels", 2, 64 << 10);
//!     let load = |name: &str| {
//!         levels
//!             .load::<LevelRoot>(name, |s| Level {
//!                 name: s.alloc_str(name),
//!                 spawns: s.alloc_slice_fill_with(16, |i| [i as f32, 0.0]),
//!             })
//!             .unwrap()
//!     };
//!     let forest = load("forest");
//!     let castle = load("castle"); // the transition: both loaded
//!     drop(forest); // its slot rewinds in one step
//!     castle.with(|l| assert_eq!((l.name, l.spawns.len()), ("castle", 16)));
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! The frame-ring pattern (jobs build each frame, a render thread drops it, three in
//! flight) is in the [`slots`] module docs.
//!
//! ## Features
//! - `std` (default): implies `alloc`; adds [`scratch()`], [`ScratchPads`] and the
//!   pool's blocking inserts.
//! - `alloc`: [`LinearAllocator::with_capacity`] (one global-heap reservation),
//!   allocator-api2's `alloc` collections and reports ([`MemoryMap`]). Without it the
//!   crate is `no_std` and blocks come from [`LinearAllocator::from_static`].
//! - `debug-fill`: paints fresh memory 0xCD, rewound memory and freed heap blocks 0xDD
//!   and freed pool slots 0x1deadb0b ([`debug_fill`]), so stale reads stand out. Costs nothing when off.
//! - `hashbrown` (with `serde`): a `hashbrown::HashMap<K, V, S, &Heap>` filled from a
//!   level file in a [`Heap`] carved first (see the `serde` module).
//! - `tracy`: shows the block in the Tracy profiler (scopes, slots, pools and heaps as named
//!   memory pools, rewinds as discards, use plots, the memory map on out-of-memory; see
//!   the `tracy` module). Implies `std`; adds the `tracy-client` dependency and costs
//!   nothing when off.
//!
//! ## Soundness
//! See [`rules`] for the rules that keep safe code free of undefined behaviour, and the
//! proofs of each.

#![no_std]
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod block;
mod carve;
pub mod concurrent;
pub mod dense;
mod error;
pub mod heap;
#[cfg(feature = "rkyv")]
#[cfg_attr(docsrs, doc(cfg(feature = "rkyv")))]
pub mod inplace;
mod limits;
pub mod pool;
#[cfg(feature = "tracy")]
mod profiler;
#[cfg(feature = "alloc")]
mod report;
pub mod rules;
mod scope;
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub mod scratch;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod serde;
pub mod slots;
pub mod store;
mod sync;
mod thread_index;
#[cfg(feature = "tracy")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracy")))]
pub mod tracy;

#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use crate::serde::DeserializeIn;
pub use block::debug_fill;
pub use block::linear::LinearAllocator;
pub use carve::Carve;
pub use concurrent::{ConcurrentConfig, ConcurrentScope, LocalScope};
pub use dense::{DenseHandle, DensePool};
pub use error::{AllocError, AllocErrorKind, AllocErrorWith, MAX_ERROR_NAME_LEN};
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use heap::string::HeapString;
pub use heap::Heap;
pub use limits::MAX_ALIGN;
pub use pool::{Handle, Pool, PoolBox, MAX_POOL_CAPACITY, MAX_POOL_SHARDS};
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use report::{
    ChunkReport, ConcurrentReport, HeapReport, MapHandle, MemoryMap, PoolReport, ScopeReport,
    SlotReport, SlotState, SlotsReport,
};
#[cfg(feature = "alloc")]
#[doc(hidden)]
pub use report::{SvgLabel, SvgLayout};
pub use scope::builders::{Finalizes, ScopeString, ScopeVec};
pub use scope::place::Place;
pub use scope::{NotThreadSafe, Scope, ScopeStack};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use scratch::{scratch, scratch_for, ScratchPads};
pub use slots::{
    Loaded, LoadedKind, Plain, Shared, SlotError, SlotErrorKind, SlotRoot, Slots, Task, TaskScope,
};
pub use store::{Draft, Pinned, Store};

/// Loom models only: one slot record, to model the read-pin protocol of reports.
#[cfg(loom)]
#[doc(hidden)]
pub use slots::table::LoomSlotRecord;

/// Loom models only: makes the calling loom thread hold thread index `index` alone (a
/// model gives each of its threads a different one), so the models reach the
/// per-thread paths that real threads reach through the thread registry.
#[cfg(loom)]
#[doc(hidden)]
pub fn loom_hold_thread_index(index: u32) {
    thread_index::hold(index)
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
