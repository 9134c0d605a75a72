//! `Pool<T>`: a fixed-capacity, thread-safe object pool carved from a scope.
//!
//! A level loads, carves its enemy, projectile and sound pools out of its scope with
//! [`ScopeStack::new_pool`](crate::ScopeStack::new_pool), and many threads then [`insert`](Pool::insert) and erase
//! objects every frame through a shared `&Pool<T>`. When the level's scope unwinds,
//! the objects still in the pool are dropped and the memory rewinds with the rest of
//! the scope. The pool never touches the global heap.
//!
//! ```
//! use scope_stack::LinearAllocator;
//!
//! #[derive(Debug)]
//! struct Projectile { pos: [f32; 2], vel: [f32; 2] }
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 16)?;
//! memory.scope("level", |level| {
//!     let projectiles = level.new_pool::<Projectile>(256);
//!     let shared = &*projectiles;
//!     std::thread::scope(|threads| {
//!         for t in 0..2 {
//!             threads.spawn(move || {
//!                 for _ in 0..100 {
//!                     let mut p = shared.insert(Projectile { pos: [0.0; 2], vel: [t as f32, 1.0] })
//!                         .unwrap_or_else(|_| panic!("pool full"));
//!                     p.pos[0] += p.vel[0]; // a PoolBox derefs to the object
//!                 } // dropping the PoolBox frees the slot
//!             });
//!         }
//!     });
//!     assert_eq!(projectiles.len(), 0);
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! # Ownership: boxes and handles
//!
//! An object in the pool is owned in one of two ways:
//! - by a [`PoolBox`], which [`insert`](Pool::insert) returns. The box is the only way
//!   to reach the object; it derefs (`&T` and `&mut T`) and frees the slot when dropped.
//!   Any thread holding `&Pool<T>` may insert, and a box may be dropped on any thread.
//! - by the pool itself, after [`PoolBox::into_handle`]. A [`Handle`] names it. Pooled
//!   objects can be read by anyone with `&Pool<T>` ([`get`](Pool::get),
//!   [`iter`](Pool::iter), [`values`](Pool::values)), and changed or removed only with
//!   `&mut Pool<T>` ([`get_mut`](Pool::get_mut), [`remove`](Pool::remove),
//!   [`iter_mut`](Pool::iter_mut), [`values_mut`](Pool::values_mut),
//!   [`retain`](Pool::retain)): the phase-based style of
//!   an ECS, where systems share the pool during a phase and one owner edits it
//!   between phases.
//!
//! That split is what makes `get(&self)` sound while other threads insert and erase:
//! a `&T` from `get` can only name a pooled object, pooled objects leave the pool only
//! through `&mut self`, and `&mut self` cannot exist while the `&T` (which borrows
//! `&self`) lives. A box's object is never reachable by handle, so nothing can alias
//! the `&mut T` a box hands out. Each slot's *stamp* records which of the three states
//! (free, boxed, pooled) it is in, with a generation that lets stale handles fail.
//!
//! The borrow checker enforces the phase rule. A reference from `get` keeps the pool
//! shared, so nothing can remove its object meanwhile:
//!
//! ```compile_fail,E0502
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(4096).unwrap();
//! memory.scope("level", |level| {
//!     let pool = level.new_pool::<String>(4);
//!     let h = pool.insert("door".to_string()).unwrap().into_handle();
//!     let door = pool.get(h).unwrap();
//!     pool.remove(h); // error: `*pool` is also borrowed as immutable
//!     println!("{door}");
//! });
//! ```
//!
//! A pool is invariant in `T`: a `Pool<&'static str>` cannot be used as a pool of
//! shorter-lived strings, or one could store a short-lived `&str` that a later `get`
//! would return as `&'static str`:
//!
//! ```compile_fail
//! # use scope_stack::Pool;
//! fn shorten<'a, 's>(p: &'a Pool<'s, &'static str>) -> &'a Pool<'s, &'a str> {
//!     p // error: lifetime may not live long enough
//! }
//! ```
//!
//! # Iterating pools and dense pools alike
//!
//! Both pool kinds offer the same four iterators, named as in slotmap:
//!
//! | method | yields | [`Pool`] | [`DensePool`](crate::DensePool) |
//! |---|---|---|---|
//! | `iter()` | `(handle, &T)` | [`Pool::iter`] | [`DensePool::iter`](crate::DensePool::iter) |
//! | `iter_mut()` | `(handle, &mut T)` | [`Pool::iter_mut`] | [`DensePool::iter_mut`](crate::DensePool::iter_mut) |
//! | `values()` | `&T` | [`Pool::values`] | [`DensePool::values`](crate::DensePool::values) |
//! | `values_mut()` | `&mut T` | [`Pool::values_mut`] | [`DensePool::values_mut`](crate::DensePool::values_mut) |
//! | order | | slot order (ascending index) | roster order (insertion order; a removal moves the last object into the gap) |
//! | cost | | O(capacity), a stamp test per slot | O(len), no per-slot test; runs from both ends |
//! | visits | | pooled objects only (not those a [`PoolBox`] holds) | every live object |
//!
//! A handle from `iter` works with `get`, `get_mut` and `remove` like any other, and
//! `values` visits the same objects as `iter`, in the same order. The shared forms take
//! `&self` (on a [`Pool`], while other threads insert and erase: objects pooled
//! meanwhile may or may not be seen); the mutable forms take `&mut self`.
//!
//! With the `rayon` feature, both kinds also have the four walks split among rayon's
//! jobs, `par_iter`, `par_iter_mut`, `par_values` and `par_values_mut`, which visit the
//! same objects with the same borrows (a [`Pool`] splits its slot range, in no
//! particular order; a [`DensePool`](crate::DensePool) splits its packed slice, indexed
//! and in roster order). A dense pool's live objects are also one slice,
//! [`as_slice`](crate::DensePool::as_slice) and
//! [`as_mut_slice`](crate::DensePool::as_mut_slice), for any other way of splitting them.
//!
//! ```
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     let pool = level.new_pool::<u32>(8);
//!     let dense = level.new_dense_pool::<u32>(8);
//!     for i in 1..=3 {
//!         pool.insert(i).unwrap().into_handle();
//!         dense.insert(i).unwrap();
//!     }
//!     pool.values_mut().for_each(|v| *v *= 10);
//!     dense.values_mut().for_each(|v| *v *= 10);
//!     assert_eq!(pool.values().sum::<u32>(), dense.values().sum::<u32>());
//!     for (h, v) in pool.iter() {
//!         assert_eq!(pool.get(h), Some(v));
//!     }
//!     for (h, v) in dense.iter() {
//!         assert_eq!(dense.get(h), Some(v));
//!     }
//! });
//! ```
//!
//! # Shared or exclusive
//!
//! Every method on `&Pool` may run on many threads at once. The thread that *owns* a
//! shard (it holds the dense thread index equal to the shard's number alone: the first
//! threads to touch the crate, while threads are fewer than shards) inserts and frees
//! on that shard with plain loads and stores, through a private cache of freed slots;
//! every other insert and free compare-exchanges a free-list head (see "The owner's
//! path" below). Where the caller holds
//! `&mut Pool`, nothing else can be using the pool, and the exclusive methods take and
//! return slots with plain loads and stores, with no atomic read-modify-write (the seed
//! pool's unsynchronized `Allocate`/`Free` beside its lock-free ones). `&mut Pool` is
//! what the scope that carved the pool holds
//! ([`new_pool`](crate::ScopeStack::new_pool) returns `&'s mut Pool`), what a level's
//! root lends through [`Loaded::with_mut`](crate::Loaded), and what a system that owns a
//! pool between phases has.
//!
//! | holding | insert | free |
//! |---|---|---|
//! | `&Pool`, shared by threads | [`insert`](Pool::insert), [`insert_with`](Pool::insert_with), [`insert_in_shard`](Pool::insert_in_shard), `insert_wait`: a [`PoolBox`] | drop the box, [`PoolBox::into_inner`] |
//! | `&mut Pool` | [`insert_mut`](Pool::insert_mut), [`insert_with_mut`](Pool::insert_with_mut): a [`Handle`] | [`remove`](Pool::remove), [`retain`](Pool::retain) |
//!
//! - Use the `&mut` methods wherever you have `&mut`: a level placing its initial
//!   objects, despawns between phases, a pool that one system owns. Even on one
//!   thread, with no other core contending, an insert and remove pair costs a half to
//!   three quarters of the shared pair, and under half of a `Box` pair
//!   (`docs/PERFORMANCE.md`).
//! - They hand out handles, not boxes: a box would hold the `&mut` borrow for as long
//!   as it lives, so nothing else could use the pool meanwhile.
//! - The two kinds follow each other in any order on one pool: `&mut` inserts while a
//!   level loads, `&` inserts and frees from workers during a frame, `&mut` removes
//!   at the frame's end. Each keeps every promise the other makes: an exclusive insert
//!   fails only when every slot holds an object (full means full), takes a never-used
//!   slot only when no freed slot is left anywhere (so [`high_water_len`](Pool::high_water_len)
//!   keeps its bound), advances the slot's generation (stale handles find nothing),
//!   and [`len`](Pool::len), reports and the `debug-fill` paint see the same as after
//!   a shared insert or free.
//! - A full pool on the exclusive path is final: nobody else can free a slot while you
//!   hold `&mut`, so there is nothing to wait for, and `insert_wait` is `&self` only.
//!   For the same reason an exclusive free wakes nobody: a thread waiting in
//!   `insert_wait` holds `&Pool`, so none can be waiting while `&mut Pool` exists. A
//!   thread that waits later announces itself afresh and is woken by the next shared
//!   free.
//!
//! # Invariants
//! - Every slot is in exactly one state: **free** (on the free list; no object),
//!   **boxed** (an object owned by exactly one `PoolBox`, or by a box that was leaked
//!   with `mem::forget`) or **pooled** (an object owned by the pool).
//! - Only the thread that popped a slot from the free list, or the owner of its box,
//!   writes the slot's object or stamp, with one exception: `&mut self` methods, which
//!   no other access can overlap.
//! - A stamp in the pooled state can leave it only through `&mut self` (or the drop of
//!   the pool).
//! - Objects never move while they live: slot storage is a fixed array in scope memory.
//!
//! # Why `Pool<'s, T>` carries the scope's lifetime
//!
//! The pool's arrays live in the scope it was carved from, and its destructor is a
//! finalizer of that same scope. If the type were a plain `Pool<T>`, safe code could
//! `mem::swap` two pools from an outer and an inner scope through their `&mut`
//! references; when the inner scope unwound, the outer `Pool` would be left pointing
//! into rewound memory. `'s` is invariant, so pools of different scopes are different
//! types and cannot be swapped:
//!
//! ```compile_fail,E0521
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("systems", |systems| {
//!     let outer = systems.new_pool::<u32>(4);
//!     systems.scope("level", |level| {
//!         let inner = level.new_pool::<u32>(4);
//!         core::mem::swap(outer, inner); // error: lifetime mismatch
//!     });
//! });
//! ```
//!
//! Swapping two pools of the *same* scope is harmless (both are dropped, in some
//! order, before the scope's memory rewinds) and is allowed. A pool cannot be moved
//! out of its `&mut`: there is no public constructor and no `Default`.
//!
//! `T: 'static` is required for the same reason as [`ScopeStack::new_object`](crate::ScopeStack::new_object): the
//! pool's destructor runs from the type-erased finalizer chain, where the drop checker
//! cannot see what the objects borrow. Thread safety is left to `T`: `Pool<T>` is
//! `Sync` when `T: Send + Sync` (objects are made on one thread, dropped on another,
//! and shared through [`get`](Pool::get)) and `Send` when `T: Send`. A pool of a type
//! that is neither is still useful on one thread.
//!
//! # Shards
//!
//! Engines insert into and free from one pool on 8 to 16 worker threads at once. A
//! single free-list head would be one cache line that every one of those operations
//! writes, so it would bounce between cores on each of them. Instead the slots are
//! split into **shards**: contiguous ranges of slots, each with its own free lists
//! whose heads sit alone on 128-byte lines.
//!
//! - Each thread has a **home shard** ([`home_shard`](Pool::home_shard)): the thread's
//!   small dense index (handed out once per thread, lowest free first, and given back
//!   when the thread exits) modulo the shard count. Workers spawned afresh each frame
//!   get the indices the last frame's workers held: the first pool call of a new
//!   thread may wait up to 5 ms for an exiting thread's index (see
//!   [`home_shard`](Pool::home_shard)). [`insert`](Pool::insert) takes
//!   a slot from the home shard; [`insert_in_shard`](Pool::insert_in_shard) lets a job
//!   system name the shard instead.
//! - A freed slot always goes back to the shard that owns it: onto the shard's local
//!   list if the freeing thread lives there, else onto its remote list. (An exclusive
//!   free, through `&mut Pool`, always goes onto the local list: with no other thread
//!   there is no line to keep apart, and the next exclusive insert takes it back first.)
//! - So a thread that frees what it inserted, or inserts again after freeing, touches
//!   its own head, and its own contiguous run of slots, stamps and links: nothing that
//!   threads with other homes write.
//! - Objects freed on another thread (a producer hands them to a consumer) go onto the
//!   remote list, whose head stays in the freeing thread's cache; the owner takes the
//!   whole remote list in one step when its local list runs dry. So producer and
//!   consumer do not trade one cache line per object, as they would on one head. This
//!   is the remote (thread-) free list of mimalloc and sharded-slab.
//! - A shard's never-used slots are not on its lists: a per-shard count says how many
//!   of its slots were ever handed out, and the next never-used slot is the one after
//!   them. So the lists hold only slots that were used before.
//! - Only when its home shard's lists are empty does an insert look elsewhere
//!   (**stealing**), in this order: a slot freed into a shard that is no live thread's
//!   home; one of the first 32 never-used slots of its own home; a slot freed into
//!   another live thread's home; and last a never-used slot anywhere (its home's
//!   first). It visits the other shards from the highest down, starting where the last
//!   steal succeeded (threads hold the lowest indices, so the highest shards are
//!   nobody's home). Slots from a remote list are reused in the order they were freed.
//! - Why a thread's own never-used slots come before another live thread's freed ones:
//!   a slot goes back to the shard that owns it when it is freed, so a thread that
//!   took its slots from another thread's home would find its own home empty on every
//!   insert, and steal on every insert, while the thread it took from ran dry and
//!   stole in turn. On a 16-core machine, threads that each keep 16 objects live did
//!   exactly that, and ran 13 times slower than sharded-slab (`docs/PERFORMANCE.md`).
//!   With up to 32 slots of its own a thread settles into its home, and stealing stops.
//! - Which shards it looks at for freed slots: the pool keeps one bit per shard, set
//!   while the shard's lists may hold a freed slot, so the search skips the shards that
//!   hold none. A thread that fills a pool built for many threads alone (a loader
//!   thread building a level) therefore takes never-used slots at a few dozen
//!   instructions each once its home's share is used, instead of looking at every
//!   other shard's lists first (about 2,700 instructions more per insert with 32
//!   shards, `docs/PERFORMANCE.md`, "One thread filling a pool").
//!
//! [`new_pool`](crate::ScopeStack::new_pool) gives one shard per [`DEFAULT_SHARD_SLOTS`]
//! slots, at most [`DEFAULT_MAX_SHARDS`] ([`Pool::default_shards`]): it depends on the
//! capacity only, so the memory map is the same on every machine.
//! [`new_pool_with_shards`](crate::ScopeStack::new_pool_with_shards) picks the count: 1 for a
//! pool that one thread uses, about one per worker thread for a job system.
//!
//! ## What "full" promises
//!
//! Free slots are never cached per thread: every free slot sits on its shard's list,
//! where any thread can take it. `insert` gives the value back only after it found
//! each shard's list empty.
//! - If no slot is freed while the `insert` runs (all frees happen before it, in the
//!   happens-before sense, or after it returns), an `insert` that fails means that every
//!   slot held an object: **full means full**. One thread can fill every slot of a pool
//!   built for many threads and drain it again. (Another insert may be moving a batch
//!   of remotely freed slots from a shard's remote list to its local list at that
//!   moment; the batch is briefly on neither list, so an insert that finds every list
//!   empty looks again until no such move is under way. Only inserts that would
//!   otherwise report "full" ever wait for this, and the move is a few instructions.)
//! - If another thread frees a slot while the `insert` runs, the `insert` may miss
//!   that slot (it may already have looked at that shard), and fail although the pool
//!   had a free slot at the moment it returned. The freed slot is not lost: the next
//!   `insert` finds it. [`insert_wait`](Pool::insert_wait) never sleeps through such a
//!   free: a waiter marks every shard as waited on before it sleeps, and a free into
//!   any marked shard wakes it.
//!
//! # Memory
//!
//! Per slot the pool keeps `size_of::<T>()` bytes of storage plus 8 bytes: a 4-byte
//! free-list link and a 4-byte stamp. Each shard adds two 128-byte lines for its two
//! heads (the size of crossbeam's `CachePadded` on x86-64 and aarch64). The pool object
//! itself is `size_of::<Pool<T>>()` (384 bytes on x86-64: the read-only fields, the
//! steal hint, and the futex word with the shards' stock bits, each on their own
//! 128-byte line) plus a 16-byte finalizer record, padded
//! to its 128-byte alignment. So the footprint is a function of the capacity, `T` and
//! the shard count alone, and [`Pool::memory_needed`] (or
//! [`Pool::memory_needed_with_shards`]) gives a tight upper bound of it, padding
//! included.
//!
//! # The owner's path
//!
//! A compare-exchange is a locked instruction: about 20 cycles on x86-64, more on a busy
//! core. glibc's and mimalloc's per-thread free lists need none, and a pool whose every
//! insert and free paid one was 1.5 to 2.5 times slower than `Box`. So each shard's
//! owner keeps the slots it frees on a private list and takes its inserts from it with
//! plain loads and stores (`free_list/owner.rs`); slots freed on other threads reach
//! the owner through the shard's remote stack, in batches. On x86-64 Linux the pair is
//! about 93 instructions with no `lock` prefix (docs/PERFORMANCE.md, "The pool owner's
//! machine code").
//!
//! A private list must not strand slots: **full means full** still holds. An insert
//! that finds every stack and every never-used slot empty closes the owners' *gate* (one word),
//! waits until no owner is inside an operation, and then steals half of a non-empty
//! cache, or proves that every slot was in use at one moment (`free_list/steal.rs`). The
//! owner side of that handshake costs a store, a load and a compiler fence; the other
//! side pays a `membarrier` system call on Linux (a microsecond or more), or, where
//! there is none (other systems, Miri, loom), both sides pay a `SeqCst` fence
//! (`sync/asymmetric.rs`). [`insert_wait`](Pool::insert_wait) closes the gate to
//! owners' frees while it sleeps, so every free wakes it.
//!
//! Progress: every insert and free is lock-free up to that slow path. An insert into a
//! pool with no free slot outside the owners' caches (a pool that is full, or nearly
//! so) takes a short spin lock and waits for each owner to leave the few instructions
//! of its current operation; an owner preempted there delays it. Owners themselves
//! never wait: while a gate is closed they take the compare-exchange paths.
//!
//! # Choices that differ from the model
//!
//! - The model has one free-list head; here each shard has one (see above), and the
//!   ABA tag is per head.
//! - Generations and the free lists are 4-byte words in separate arrays (not one
//!   interleaved array), so the free-list code stands alone in `free_list.rs`.
//! - The slot index is 24 bits (at most 2^24 slots), so a [`Handle`] has room for an
//!   8-byte pool tag and still fits in 8 bytes.
//! - There is no shared live counter (the model keeps one). Counting there would add
//!   two atomic read-modify-writes to every insert/erase pair, on a cache line that all
//!   threads share. Instead each shard's local line keeps counts of slots handed out
//!   and given back, written by the insert and the free on the home shard's line,
//!   which they already write: a thread that holds its dense index alone (the usual
//!   case while threads are fewer than shards) counts with a plain load and store, any
//!   other thread with a read-modify-write on its home's line. [`len`](Pool::len)
//!   adds them up, one line per shard: exact when nothing runs meanwhile, a snapshot
//!   otherwise. [`high_water_len`](Pool::high_water_len) adds up each shard's count of
//!   never-used slots handed out: each shard hands them out in order, by that count,
//!   and its lists only ever hold its own slots that were used before, so the slots it
//!   ever handed out are a prefix of its range. Beyond the
//!   first 32 of its home, an insert never takes a never-used slot while a freed one
//!   waits anywhere (its home shard's lists or another shard's), so the slots ever used
//!   stay close to the most objects ever live; and since the lists hold no never-used
//!   slot, the insert fast path (a pop of the home shard's local list) needs no check
//!   for one.
//! - Full-pool waiting does not watch the live count (which lags the free lists and
//!   can miss a wake). A waiter marks each shard's head as "empty, with waiters"; the
//!   push that replaces a mark wakes all sleepers. The shared erase path therefore adds
//!   no atomic operation and no fence: it sees the mark in the value its own
//!   compare-exchange returns. The owner's erase sees a waiter through its gate, read
//!   on every operation anyway, and then pushes onto the shared stack.
//! - The model has no per-thread cache; the owner's cache and its handshake are this
//!   crate's (above).

mod access;
mod boxes;
pub(crate) mod carve;
mod exclusive;
mod free_list;
mod handle;
mod iter;
#[cfg(feature = "rayon")]
mod par;
mod report;
mod slots;
#[cfg(feature = "std")]
mod wait;

use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ptr::{self, NonNull};

use crate::scope::finalizer::ObjectLayout;

use free_list::{Head, HEADS_PER_SHARD};
pub use handle::Handle;
use handle::{INDEX_BITS, INDEX_MASK};
pub use iter::{Iter, IterMut, Values, ValuesMut};
use slots::{Core, Home, Invariant};

pub use crate::limits::{MAX_POOL_CAPACITY, MAX_POOL_SHARDS};

// The published capacity is what the slot index can address.
static_assertions::const_assert_eq!(MAX_POOL_CAPACITY, 1 << INDEX_BITS);

/// The most shards [`ScopeStack::new_pool`](crate::ScopeStack::new_pool) gives a pool (see [`Pool::default_shards`]).
pub const DEFAULT_MAX_SHARDS: usize = 32;

/// The fewest slots per shard that [`ScopeStack::new_pool`](crate::ScopeStack::new_pool) aims for.
pub const DEFAULT_SHARD_SLOTS: usize = 32;

const _: () = assert!(MAX_POOL_CAPACITY - 1 == INDEX_MASK as usize);
// The 8-bytes-per-slot promise (loom's instrumented atomics are larger).
#[cfg(not(loom))]
static_assertions::assert_eq_size!(crate::sync::AtomicU32, u32);
/// A fixed-capacity, thread-safe object pool living in a scope: plain loads and stores
/// for a shard's owner, lock-free compare-exchanges for everyone else (module docs).
///
/// Made by [`ScopeStack::new_pool`](crate::ScopeStack::new_pool). See the [module docs](crate::pool) for the
/// ownership model (boxes and handles), the memory footprint and the invariants.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let sounds = level.new_pool::<String>(2);
///     let a = sounds.insert("swish".to_string()).unwrap();
///     let _b = sounds.insert("boom".to_string()).unwrap();
///     // Full: the value comes back.
///     assert_eq!(sounds.insert("zap".to_string()).unwrap_err(), "zap");
///     drop(a);
///     assert!(sounds.insert("zap".to_string()).is_ok());
/// });
/// ```
pub struct Pool<'s, T> {
    core: Core<T>,
    /// Invariant in `'s`: see the module docs.
    _scope: PhantomData<fn(&'s ()) -> &'s ()>,
}

/// An object in a [`Pool`], owned by this box. Dereferences to the object; dropping the
/// box drops the object and frees its slot.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("level", |level| {
///     let pool = level.new_pool::<Vec<u32>>(8);
///     let mut b = pool.insert(vec![1, 2]).unwrap();
///     b.push(3);
///     assert_eq!(*b, [1, 2, 3]);
///     assert_eq!(pool.len(), 1);
///     drop(b);
///     assert_eq!(pool.len(), 0);
/// });
/// ```
pub struct PoolBox<'a, T> {
    core: NonNull<Core<T>>,
    index: u32,
    /// Borrows the pool for `'a`; owns a `T` and can write one (hence invariant).
    _borrow: PhantomData<(&'a (), Invariant<T>)>,
}

// SAFETY: a box is a unique owner of a `T` (like `Box<T>`), plus a shared borrow of the
// pool used only for the thread-safe release. Sending it sends the `T`.
unsafe impl<T: Send> Send for PoolBox<'_, T> {}
// SAFETY: `&PoolBox` gives only `&T`.
unsafe impl<T: Sync> Sync for PoolBox<'_, T> {}

impl<'s, T> Pool<'s, T> {
    /// Crate-internal: the object in slot `index`, by index alone (no handle check).
    /// The versioned store keeps its versions as leaked boxes (see
    /// [`PoolBox::leak_to_slot_index`]) and reaches them this way.
    ///
    /// # Safety
    /// Slot `index` holds a live object that nobody mutates, and it is not dropped or
    /// freed while the returned reference lives. Its contents were made visible to this
    /// thread by a happens-before edge (for example an Acquire load of a word that
    /// the writer published with Release after filling the object).
    #[inline(always)]
    pub(crate) unsafe fn slot_ref(&self, index: u32) -> &T {
        // SAFETY: per the caller; `slot` checks the bound in debug builds, and callers
        // only pass indices that came from `leak_to_slot_index` of this pool.
        unsafe { &*self.core.value_ptr(index) }
    }

    /// Crate-internal: drops the object in slot `index` and frees the slot, from `&self`.
    /// The counterpart of [`PoolBox::leak_to_slot_index`].
    ///
    /// # Safety
    /// The slot holds a live object whose box was given up with `leak_to_slot_index`, no
    /// reference to it is alive or will be used again, and this is called once per
    /// `leak_to_slot_index`.
    pub(crate) unsafe fn free_index(&self, index: u32) {
        // SAFETY: per the caller the leaked box's ownership passes to us; the object is
        // live and dropped exactly once here.
        unsafe { self.core.drop_and_release(index) }
    }

    /// Crate-internal: the slot index of a box's object (an associated function, like
    /// [`PoolBox::leak_to_slot_index`]).
    pub(crate) fn slot_index_of(b: &PoolBox<'_, T>) -> u32 {
        b.index
    }

    /// Crate-internal: `true` when `b` is a box of this pool.
    pub(crate) fn owns_box(&self, b: &PoolBox<'_, T>) -> bool {
        ptr::eq(b.core.as_ptr(), &self.core)
    }

    /// An upper bound of the bytes [`ScopeStack::new_pool`](crate::ScopeStack::new_pool) takes from the scope for
    /// `capacity` slots: the arrays, the shard heads, the pool object and its finalizer
    /// record, and the worst-case alignment padding of each. `None` if it overflows.
    ///
    /// It is [`memory_needed_with_shards`](Self::memory_needed_with_shards) with
    /// [`default_shards(capacity)`](Self::default_shards).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Pool};
    /// let need = Pool::<[u8; 24]>::memory_needed(1000).unwrap();
    /// assert!(need >= 1000 * (24 + 8));
    /// let mut memory = LinearAllocator::with_capacity(need).unwrap();
    /// memory.scope("level", |level| {
    ///     level.new_pool::<[u8; 24]>(1000);
    ///     assert!(level.used() <= need);
    /// });
    /// ```
    pub fn memory_needed(capacity: usize) -> Option<usize> {
        Self::memory_needed_with_shards(capacity, Self::default_shards(capacity))
    }

    /// An upper bound of the bytes [`ScopeStack::new_pool_with_shards`](crate::ScopeStack::new_pool_with_shards) takes from the
    /// scope: per slot `size_of::<T>()` plus 8 bytes (a 4-byte stamp and a 4-byte
    /// free-list link), two 128-byte lines per shard (on x86-64 and aarch64; the size of
    /// crossbeam's `CachePadded` elsewhere), the pool object and its finalizer record,
    /// and the worst-case alignment padding of each. `None` if it overflows or the
    /// shard count is 0.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Pool};
    /// let need = Pool::<u64>::memory_needed_with_shards(1000, 16).unwrap();
    /// let mut memory = LinearAllocator::with_capacity(need).unwrap();
    /// memory.scope("level", |level| {
    ///     level.new_pool_with_shards::<u64>(1000, 16);
    ///     assert!(level.used() <= need);
    /// });
    /// ```
    pub fn memory_needed_with_shards(capacity: usize, shards: usize) -> Option<usize> {
        if shards == 0 {
            return None;
        }
        let shards = shards.min(capacity.max(1));
        let values = capacity.checked_mul(size_of::<T>())?;
        let links = capacity.checked_mul(8)?;
        let heads = shards.checked_mul(HEADS_PER_SHARD * size_of::<Head>())?;
        let record = ObjectLayout::<Self>::SIZE + ObjectLayout::<Self>::ALIGN - 1;
        values
            .checked_add(align_of::<T>() - 1)?
            .checked_add(links + 6)?
            .checked_add(heads.checked_add(align_of::<Head>() - 1)?)?
            .checked_add(record)
    }

    /// The number of shards [`ScopeStack::new_pool`](crate::ScopeStack::new_pool) gives a pool of `capacity` slots:
    /// one per [`DEFAULT_SHARD_SLOTS`] slots, at least 1 and at most
    /// [`DEFAULT_MAX_SHARDS`]. It depends on the capacity alone, so a pool's footprint
    /// is the same on every machine.
    ///
    /// ```
    /// # use scope_stack::Pool;
    /// assert_eq!(Pool::<u32>::default_shards(8), 1);
    /// assert_eq!(Pool::<u32>::default_shards(256), 8);
    /// assert_eq!(Pool::<u32>::default_shards(1 << 20), 32);
    /// ```
    pub const fn default_shards(capacity: usize) -> usize {
        let shards = capacity / DEFAULT_SHARD_SLOTS;
        if shards == 0 {
            1
        } else if shards > DEFAULT_MAX_SHARDS {
            DEFAULT_MAX_SHARDS
        } else {
            shards
        }
    }

    /// The number of shards the slots are split into (see the
    /// [module docs](crate::pool#shards)).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     assert_eq!(level.new_pool::<u32>(1024).shard_count(), 32);
    ///     assert_eq!(level.new_pool_with_shards::<u32>(1024, 4).shard_count(), 4);
    /// });
    /// ```
    #[inline]
    pub fn shard_count(&self) -> usize {
        self.core.free.shards() as usize
    }

    /// The calling thread's home shard in this pool: where its
    /// [`insert`](Self::insert)s look first. Threads alive at the same time get
    /// different homes as long as there are no more of them than shards.
    ///
    /// A thread's home is fixed at its first call into any pool (or concurrent scope).
    /// That first call can wait: a thread that would hold more indices than the program
    /// has held at once before sleeps up to 5 ms for a thread that is exiting to give
    /// its index back, so workers respawned each frame find the homes the last frame's
    /// workers had instead of sharing one.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool_with_shards::<u32>(64, 4);
    ///     assert!(pool.home_shard() < 4);
    ///     assert_eq!(pool.home_shard(), pool.home_shard());
    /// });
    /// ```
    #[inline]
    pub fn home_shard(&self) -> usize {
        self.core.home().shard as usize
    }

    /// Puts `value` in a free slot and returns the box that owns it, or gives the value
    /// back when every slot is taken. Callable from any thread holding `&Pool<T>`;
    /// lock-free unless every free slot sits in the shards' owners' caches (see
    /// "The owner's path" in the [module docs](crate::pool)).
    ///
    /// What to do when the pool is full is the caller's policy: drop the value (a
    /// particle nobody will miss), [`insert_wait`](Self::insert_wait) for a slot, or
    /// evict something and try again.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(1);
    ///     let first = pool.insert(1).unwrap();
    ///     assert_eq!(pool.insert(2).err(), Some(2));
    ///     assert_eq!(*first, 1);
    /// });
    /// ```
    #[inline]
    pub fn insert(&self, value: T) -> Result<PoolBox<'_, T>, T> {
        let who = self.core.home();
        self.insert_from(who.shard, who, value)
    }

    /// Like [`insert`](Self::insert), but looks in shard `shard % shard_count()` first
    /// instead of the calling thread's home shard.
    ///
    /// For job systems that number their workers (pass the worker's number), and for
    /// builds without `std`, where every thread's home is shard 0. Any shard is
    /// correct; the point is speed: threads that start in different shards do not
    /// contend.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = &*level.new_pool_with_shards::<u32>(64, 4);
    ///     std::thread::scope(|s| {
    ///         for worker in 0..4 {
    ///             s.spawn(move || {
    ///                 let b = pool.insert_in_shard(worker, worker as u32).unwrap();
    ///                 assert_eq!(*b, worker as u32);
    ///             });
    ///         }
    ///     });
    /// });
    /// ```
    #[inline]
    pub fn insert_in_shard(&self, shard: usize, value: T) -> Result<PoolBox<'_, T>, T> {
        let shards = self.core.free.shards() as usize;
        self.insert_from((shard % shards) as u32, self.core.home(), value)
    }

    /// Like [`insert`](Self::insert), but takes a slot first and then builds the object
    /// in it from `f`, so a large object can be constructed in place (see
    /// [`ScopeStack`'s notes on in-place construction](crate::ScopeStack#in-place-construction):
    /// in optimised builds the closure's result is written straight into the slot; in
    /// debug builds it may pass through the stack).
    ///
    /// When the pool is full, `f` is handed back **un-called**: nothing was built, so
    /// nothing is lost, and the caller may retry with the same closure. If `f` panics,
    /// the slot goes back to the pool and the panic goes on.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<[u64; 512]>(1);
    ///     let mut page = pool.insert_with(|| [7; 512]).unwrap_or_else(|_| unreachable!());
    ///     page[0] = 1;
    ///     let build = pool.insert_with(|| [9; 512]).err().expect("full");
    ///     drop(page);
    ///     assert_eq!(pool.insert_with(build).ok().unwrap()[1], 9); // the same closure
    /// });
    /// ```
    #[inline]
    pub fn insert_with<F: FnOnce() -> T>(&self, f: F) -> Result<PoolBox<'_, T>, F> {
        let who = self.core.home();
        let index = self.core.insert_with(who.shard, who, f)?;
        Ok(PoolBox {
            core: NonNull::from(&self.core),
            index,
            _borrow: PhantomData,
        })
    }

    #[inline(always)]
    fn insert_from(&self, home: u32, who: Home, value: T) -> Result<PoolBox<'_, T>, T> {
        self.insert_searching(home, who, value, true)
    }

    /// [`insert`](Self::insert) with the full check (`exact`) or without it: without,
    /// an `Err` means only that every stack and cache looked empty, which is all a
    /// waiter needs before it closes the gate and looks again (`wait.rs`).
    #[inline(always)]
    fn insert_searching(
        &self,
        home: u32,
        who: Home,
        value: T,
        exact: bool,
    ) -> Result<PoolBox<'_, T>, T> {
        let index = self.core.insert(home, who, value, exact)?;
        Ok(PoolBox {
            core: NonNull::from(&self.core),
            index,
            _borrow: PhantomData,
        })
    }

    /// Objects in the pool now, boxed or pooled: those inserted (by any path) and not
    /// yet freed or removed. A box forgotten with `mem::forget` counts, as its slot stays
    /// taken.
    ///
    /// - **Exact** when every insert and free it should count happens before the call
    ///   (they ran on this thread, or on threads joined since, or handed over through a
    ///   channel or a lock), and none runs during it: in particular, whenever the caller
    ///   holds `&mut Pool`.
    /// - **A snapshot** while other threads insert or free: the shards are read one
    ///   after another, so an insert or free that runs during the call may be seen on
    ///   one shard's counters and not on another's. The result then differs from the
    ///   count at the call's start by at most the number of inserts and frees that ran
    ///   during the call, and is clamped to `0..=`[`capacity`](Self::capacity). An
    ///   object whose [`insert_with`](Self::insert_with) closure is still running
    ///   counts already.
    ///
    /// Costs one cache line per shard (two loads on it), whatever the capacity and the
    /// slots ever used: each shard's line keeps counts of slots handed out and given back,
    /// updated by the insert and the free on the line they already write, without an
    /// atomic read-modify-write for a thread that calls the shard home alone (see the
    /// `free_list` module's notes in the source). 32 shards (a pool of 4,096 slots or
    /// more, by default) take about 190 instructions (`benches/examples/pool_len.rs`).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     let _a = pool.insert(1).unwrap();
    ///     pool.insert(2).unwrap().into_handle();
    ///     assert_eq!(pool.len(), 2);
    /// });
    /// ```
    pub fn len(&self) -> usize {
        self.core.free.live() as usize
    }

    /// `true` when the pool holds no object: [`len`](Self::len) `== 0`, at the same cost
    /// and with the same promise (exact when no other thread inserts or frees meanwhile,
    /// else a snapshot).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     assert!(pool.is_empty());
    ///     let b = pool.insert(1).unwrap();
    ///     assert!(!pool.is_empty());
    ///     drop(b);
    ///     assert!(pool.is_empty());
    /// });
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of slots.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| assert_eq!(level.new_pool::<u32>(8).capacity(), 8));
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.core.capacity as usize
    }

    /// `true` when no slot is free, so [`insert`](Self::insert) would fail right now
    /// (a snapshot).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(1);
    ///     let b = pool.insert(1).unwrap();
    ///     assert!(pool.is_full());
    ///     drop(b);
    ///     assert!(!pool.is_full());
    /// });
    /// ```
    #[inline]
    pub fn is_full(&self) -> bool {
        self.core.free.all_empty()
    }

    /// How many slots have ever held an object: use it to tune the capacity.
    ///
    /// With one shard this is exactly the most objects that were in the pool at once:
    /// a shard reuses its freed slots (last in, first out) before it touches a slot
    /// that was never used. With several shards it is an upper bound, never below that
    /// peak: an insert takes a fresh slot of its home shard only when neither the
    /// shard's own free slots nor those other threads freed into it are there, and it
    /// takes up to 32 of them before it takes slots another live thread freed into
    /// that thread's home (so that threads settle into their own shards instead of
    /// stealing from each other on every insert: see the [module docs](crate::pool)).
    /// So threads whose homes change between bursts, or a thread that inserts while
    /// another live thread's home holds freed slots, can raise the mark above the peak
    /// by up to 32 slots per home. In the patterns games have (workers that insert
    /// while another thread retires, rings, objects freed on another thread) it stays
    /// within 1.25 times the true peak (`tests/pool_high_water.rs`); reports mark it
    /// `≤` when the pool has more than one shard
    /// ([`PoolReport::high_water_exact`](crate::PoolReport::high_water_exact)).
    ///
    /// Exact once threads are quiet; while they insert, it may miss the never-used
    /// slots they are taking at that moment. Costs one load per shard: each shard
    /// counts the never-used slots it has handed out, in order (see the module docs).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     let a = pool.insert(1).unwrap();
    ///     let b = pool.insert(2).unwrap();
    ///     drop((a, b));
    ///     let _c = pool.insert(3).unwrap();
    ///     assert_eq!(pool.high_water_len(), 2);
    /// });
    /// ```
    pub fn high_water_len(&self) -> usize {
        self.core.free.used() as usize
    }
}

impl<T> fmt::Debug for Pool<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("high_water_len", &self.high_water_len())
            .finish_non_exhaustive()
    }
}
