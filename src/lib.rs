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
//! ## Layers
//! The source tree is five layers; each file imports only from its own layer and the
//! ones below it, and no files import each other in a circle (`scripts/layers.sh`
//! checks both in CI):
//!
//! ```text
//! above    report/ (memory map: types, text, SVG)   scratch/ (per-thread arenas, pads)
//! carved   pool/   dense/   store/   concurrent/   slots/   (carved from a scope)
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
//! - Carved from a scope: [`Pool`] (sharded, lock-free), [`DensePool`] (swap-delete
//!   roster), [`Store`] (versioned objects), [`ConcurrentScope`] (many threads
//!   allocating into one scope) and [`Slots`] (sub-blocks loaded and unloaded in any
//!   order: streaming levels, frame rings; see [`slots`]).
//! - Above them all: reports ([`MemoryMap`]) and per-thread scratch scopes
//!   ([`scratch()`]).
//!
//! A `LinearAllocator::scope` method lives in the scope layer (an `impl` block there),
//! which is how the block can offer it without knowing scopes.
//!
//! ## Lifetimes that do not nest
//!
//! Levels stream: B loads while A plays, and A goes first. Frames overlap: frame N is
//! built while N-1 is drawn on another thread. A [`Slots`] serves both; a loaded slot is
//! an owned [`Loaded`] value, dropped in any order, on any thread when it was built by
//! jobs ([`Slots::load_concurrent`]).
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
//! - `debug-fill`: paints fresh memory 0xCD, rewound memory 0xDD and freed pool slots
//!   0x1deadb0b ([`debug_fill`]), so stale reads stand out. Costs nothing when off.
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
pub mod concurrent;
pub mod dense;
mod error;
mod limits;
pub mod pool;
#[cfg(feature = "alloc")]
mod report;
pub mod rules;
mod scope;
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub mod scratch;
pub mod slots;
pub mod store;
mod sync;
mod thread_index;

pub use block::debug_fill;
pub use block::linear::LinearAllocator;
pub use concurrent::{ConcurrentConfig, ConcurrentScope, LocalScope};
pub use dense::{DenseHandle, DensePool};
pub use error::{AllocError, AllocErrorKind, AllocErrorWith, MAX_ERROR_NAME_LEN};
pub use limits::MAX_ALIGN;
pub use pool::{Handle, Pool, PoolBox, MAX_POOL_CAPACITY, MAX_POOL_SHARDS};
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use report::{
    ChunkReport, ConcurrentReport, MemoryMap, PoolReport, ScopeReport, SlotReport, SlotState,
    SlotsReport,
};
#[cfg(feature = "alloc")]
#[doc(hidden)]
pub use report::{SvgLabel, SvgLayout};
pub use scope::{Scope, ScopeStack};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use scratch::{scratch, scratch_for, ScratchPads};
pub use slots::{Loaded, LoadedKind, Plain, Shared, SlotError, SlotErrorKind, SlotRoot, Slots};
pub use store::{Draft, Pinned, Store};

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
