//! `Pool<T>`: a fixed-capacity, lock-free object pool carved from a scope.
//!
//! A level loads, carves its enemy, projectile and sound pools out of its scope with
//! [`ScopeStack::new_pool`], and many threads then [`insert`](Pool::insert) and erase
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
//!   [`iter`](Pool::iter)), and changed or removed only with `&mut Pool<T>`
//!   ([`get_mut`](Pool::get_mut), [`remove`](Pool::remove),
//!   [`iter_mut`](Pool::iter_mut), [`retain`](Pool::retain)): the phase-based style of
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
//! `T: 'static` is required for the same reason as [`ScopeStack::new_object`]: the
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
//!   when the thread exits) modulo the shard count. [`insert`](Pool::insert) takes
//!   a slot from the home shard; [`insert_in_shard`](Pool::insert_in_shard) lets a job
//!   system name the shard instead.
//! - A freed slot always goes back to the shard that owns it: onto the shard's local
//!   list if the freeing thread lives there, else onto its remote list.
//! - So a thread that frees what it inserted, or inserts again after freeing, touches
//!   its own head, and its own contiguous run of slots, stamps and links: nothing that
//!   threads with other homes write.
//! - Objects freed on another thread (a producer hands them to a consumer) go onto the
//!   remote list, whose head stays in the freeing thread's cache; the owner takes the
//!   whole remote list in one step when its local list runs dry. So producer and
//!   consumer do not trade one cache line per object, as they would on one head. This
//!   is the remote (thread-) free list of mimalloc and sharded-slab.
//! - Only when its home shard is empty does an insert look at the other shards, in
//!   order, and take a slot from the first that has one (**stealing**).
//!
//! [`new_pool`](ScopeStack::new_pool) gives one shard per [`DEFAULT_SHARD_SLOTS`]
//! slots, at most [`DEFAULT_MAX_SHARDS`] ([`Pool::default_shards`]): it depends on the
//! capacity only, so the memory map is the same on every machine.
//! [`new_pool_with_shards`](ScopeStack::new_pool_with_shards) picks the count: 1 for a
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
//! steal hint and the futex word each on their own 128-byte line) plus a 16-byte finalizer record, padded
//! to its 128-byte alignment. So the footprint is a function of the capacity, `T` and
//! the shard count alone, and [`Pool::memory_needed`] (or
//! [`Pool::memory_needed_with_shards`]) gives a tight upper bound of it, padding
//! included.
//!
//! # Choices that differ from the model
//!
//! - The model has one free-list head; here each shard has one (see above), and the
//!   ABA tag is per head.
//! - Generations and the free lists are 4-byte words in separate arrays (not one
//!   interleaved array), so the free-list code stands alone in `free_list.rs`.
//! - The slot index is 24 bits (at most 2^24 slots), so a [`Handle`] has room for an
//!   8-byte pool tag and still fits in 8 bytes.
//! - There is no shared live counter (the model keeps one). Counting would add two
//!   atomic read-modify-writes to every insert/erase pair, on a cache line that all
//!   threads share; without it a pair costs two compare-exchanges on the home shard's
//!   head and nothing else shared. [`len`](Pool::len) instead counts occupied slots,
//!   and [`high_water_len`](Pool::high_water_len) finds the end of the used prefix of
//!   each shard with a binary search: each shard's list is LIFO, starts in slot order
//!   and only ever holds the shard's own slots, so the slots it ever handed out are a
//!   prefix of its range.
//! - Full-pool waiting does not watch the live count (which lags the free lists and
//!   can miss a wake). A waiter marks each shard's head as "empty, with waiters"; the
//!   push that replaces a mark wakes all sleepers. The erase fast path therefore adds
//!   no atomic operation and no fence: it sees the mark in the value its own
//!   compare-exchange returns.

mod free_list;
mod handle;

use core::fmt;
use core::marker::PhantomData;
use core::mem::{self, align_of, size_of, MaybeUninit};
use core::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::error::AllocError;
use crate::scope::finalizer::ObjectLayout;
use crate::scope::ScopeStack;
use crate::sync::{AtomicU32, Ordering, UnsafeCell};

use free_list::{FreeLists, Head, ShardLayout, Transit, HEADS_PER_SHARD};
pub use handle::Handle;
use handle::{INDEX_BITS, INDEX_MASK};

pub use crate::limits::{MAX_POOL_CAPACITY, MAX_POOL_SHARDS};

// The published capacity is what the slot index can address.
static_assertions::const_assert_eq!(MAX_POOL_CAPACITY, 1 << INDEX_BITS);

/// The most shards [`ScopeStack::new_pool`] gives a pool (see [`Pool::default_shards`]).
pub const DEFAULT_MAX_SHARDS: usize = 32;

/// The fewest slots per shard that [`ScopeStack::new_pool`] aims for.
pub const DEFAULT_SHARD_SLOTS: usize = 32;

const _: () = assert!(MAX_POOL_CAPACITY - 1 == INDEX_MASK as usize);
// The 8-bytes-per-slot promise (loom's instrumented atomics are larger).
#[cfg(not(loom))]
static_assertions::assert_eq_size!(AtomicU32, u32);

// Stamp states (low two bits of a slot's stamp).
const FREE: u32 = 0;
const BOXED: u32 = 1;
const POOLED: u32 = 2;
const STATE_MASK: u32 = 3;
/// Added to a stamp each time its slot is filled: the generation lives above the state.
const GENERATION_STEP: u32 = 4;

/// Source of pool tags and generation seeds. A plain `core` atomic (also under loom:
/// it only names pools, it orders nothing).
static POOL_IDS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

type Slot<T> = UnsafeCell<MaybeUninit<T>>;

/// Marks a type as invariant in `T`.
type Invariant<T> = fn(T) -> T;

/// The pool's state, without the scope lifetime (which only [`Pool`] needs).
struct Core<T> {
    // Read-only after construction.
    values: NonNull<Slot<T>>,
    stamps: NonNull<AtomicU32>,
    capacity: u32,
    tag: u32,
    /// The stamp every slot starts with; a slot still holding it was never used.
    fresh_stamp: u32,
    /// The shards' free lists. The fields are read-only; the heads they point to (the
    /// hot atomics, one cache line per shard) live in scope memory.
    free: FreeLists,
    /// The slow paths' words (the steal hint, remote-list moves in transit; see
    /// `free_list`). Written only by steals and moves, on a line of its own, so that the
    /// read-only fields above stay shared in every core's cache.
    transit: CachePadded<Transit>,
    /// Written only when the pool is full and threads wait; padded so that those
    /// writes do not evict the read-only fields above from other cores' caches.
    #[cfg(feature = "std")]
    futex: CachePadded<crate::sync::Futex>,
    /// Owns `T`s, and is invariant in `T`: through `&Pool` one can store a `T`, so a
    /// `Pool<&'static str>` must not pass for a `Pool<&'short str>`.
    _owns: PhantomData<Invariant<T>>,
}

// SAFETY: the `Core` owns its `T`s (through raw pointers into scope memory that nothing
// else uses); moving it to another thread moves them, so `T: Send` suffices.
unsafe impl<T: Send> Send for Core<T> {}
// SAFETY: through `&Core`, threads insert (moving a `T` in), drop boxes (dropping a `T`
// on another thread) and share pooled objects (`&T` on many threads): hence
// `T: Send + Sync`. All shared bookkeeping is atomic.
unsafe impl<T: Send + Sync> Sync for Core<T> {}

/// The stamp of slot `index` in a stamps array of at least `index + 1` elements.
#[inline(always)]
fn stamp_at<'a>(stamps: NonNull<AtomicU32>, index: u32) -> &'a AtomicU32 {
    // SAFETY: callers pass an index below the array's capacity; the array lives in scope
    // memory for as long as the pool (and any report link to it) exists.
    unsafe { stamps.add(index as usize).as_ref() }
}

/// What a report needs to read a pool's statistics from its stamps alone, without
/// touching the pool object (which the user may hold `&mut` to).
#[derive(Clone, Copy)]
struct StampView {
    stamps: NonNull<AtomicU32>,
    capacity: u32,
    fresh_stamp: u32,
    layout: ShardLayout,
}

impl StampView {
    /// The end of the used prefix of shard `shard`'s range (see [`Core::view`]).
    fn used_end(self, shard: u32) -> (u32, u32) {
        let (start, end) = self.layout.range(self.capacity, shard);
        let (mut lo, mut hi) = (start, end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            // Relaxed: a snapshot; nothing is read through it.
            if stamp_at(self.stamps, mid).load(Ordering::Relaxed) == self.fresh_stamp {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        (start, lo)
    }

    /// The slots ever used, as one `start..end` range per shard.
    fn used_ranges(self) -> impl Iterator<Item = (u32, u32)> {
        (0..self.layout.shards).map(move |shard| self.used_end(shard))
    }

    /// See [`Pool::high_water_len`].
    fn used_count(self) -> usize {
        self.used_ranges().map(|(s, e)| (e - s) as usize).sum()
    }

    /// See [`Pool::len`].
    fn live_count(self) -> usize {
        self.used_ranges()
            .flat_map(|(s, e)| s..e)
            .filter(|&i| stamp_at(self.stamps, i).load(Ordering::Relaxed) & STATE_MASK != FREE)
            .count()
    }
}

impl<T> Core<T> {
    #[inline(always)]
    fn stamp(&self, index: u32) -> &AtomicU32 {
        debug_assert!(index < self.capacity);
        // SAFETY: `index < capacity` (callers take it from the free list, a box, or a
        // checked handle); the stamps live as long as `self`.
        unsafe { self.stamps.add(index as usize).as_ref() }
    }

    #[inline(always)]
    fn slot(&self, index: u32) -> &Slot<T> {
        debug_assert!(index < self.capacity);
        // SAFETY: as in `stamp`.
        unsafe { self.values.add(index as usize).as_ref() }
    }

    /// Pointer to the object in slot `index`, valid while the slot holds one.
    #[inline(always)]
    fn value_ptr(&self, index: u32) -> *mut T {
        self.slot(index).with(|p| p.cast_mut().cast::<T>())
    }

    /// The slot a handle names, if it names a pooled object of this pool now.
    #[inline]
    fn find(&self, handle: Handle<T>) -> Option<u32> {
        let index = handle.index() as u32;
        if handle.tag() != self.tag
            || index >= self.capacity
            || handle.stamp() & STATE_MASK != POOLED
        {
            return None;
        }
        // Acquire: pairs with the Release in `into_handle`, so the object's contents
        // written through its box are visible to us.
        (self.stamp(index).load(Ordering::Acquire) == handle.stamp()).then_some(index)
    }

    /// The calling thread's home shard (see [`crate::thread_index`]).
    #[inline(always)]
    fn home_shard(&self) -> u32 {
        let thread = crate::thread_index::current();
        let shards = self.free.shards();
        // Most programs have fewer live threads than shards: no division then.
        if thread < shards {
            thread
        } else {
            thread % shards
        }
    }

    /// Takes a free slot, looking in shard `home` first and then in every other one.
    #[inline]
    fn insert(&self, home: u32, value: T) -> Result<u32, T> {
        let index = match self.free.pop_local(home) {
            Some(index) => index,
            None => match self.take_elsewhere(home) {
                Some(index) => index,
                None => return Err(value),
            },
        };
        // We own the slot now (see the free list's invariant). Relaxed: only owners
        // write a stamp; other threads read it only to compare it with a pooled stamp,
        // which a boxed stamp never equals.
        let stamp = self.stamp(index);
        let old = stamp.load(Ordering::Relaxed);
        stamp.store(
            (old & !STATE_MASK).wrapping_add(GENERATION_STEP) | BOXED,
            Ordering::Relaxed,
        );
        // SAFETY: the slot is ours and holds no object.
        self.slot(index)
            .with_mut(|p| unsafe { p.write(MaybeUninit::new(value)) });
        Ok(index)
    }

    /// Like [`insert`](Self::insert), but takes the slot first and then builds the
    /// object in it from `f`. On a full pool, `f` comes back un-called.
    #[inline(always)]
    fn insert_with<F: FnOnce() -> T>(&self, home: u32, f: F) -> Result<u32, F> {
        /// Frees the claimed slot if `f` panics (it holds no object then).
        struct Unclaim<'a, T>(&'a Core<T>, u32);
        impl<T> Drop for Unclaim<'_, T> {
            #[cold]
            fn drop(&mut self) {
                // SAFETY: the slot was popped by `insert_with` and no object was written.
                unsafe { self.0.release(self.1) }
            }
        }

        let index = match self.free.pop_local(home) {
            Some(index) => index,
            None => match self.take_elsewhere(home) {
                Some(index) => index,
                None => return Err(f),
            },
        };
        // We own the slot now; the stamp says boxed, as in `insert`.
        let stamp = self.stamp(index);
        let old = stamp.load(Ordering::Relaxed);
        stamp.store(
            (old & !STATE_MASK).wrapping_add(GENERATION_STEP) | BOXED,
            Ordering::Relaxed,
        );
        let unclaim = Unclaim(self, index);
        // SAFETY: the slot is ours and holds no object; `MaybeUninit<T>` has `T`'s
        // layout, so the pointer is valid and aligned for a `T`.
        self.slot(index)
            .with_mut(|p| unsafe { p.cast::<T>().write(f()) });
        core::mem::forget(unclaim);
        Ok(index)
    }

    /// The slow half of [`insert`](Self::insert): shard `home`'s local list was empty,
    /// so take its remote list, or else steal from the other shards. Reports the pool
    /// full only after a scan during which no chain of freed slots was in transit
    /// between two lists (see `free_list`'s module docs); while one is, it looks again.
    #[cold]
    #[inline(never)]
    fn take_elsewhere(&self, home: u32) -> Option<u32> {
        loop {
            let before = self.transit.before_scan();
            let (index, wake) = self.free.scan(home, &self.transit);
            if wake {
                self.wake_waiters();
            }
            if index.is_some() || self.transit.quiet_since(before) {
                return index;
            }
            crate::sync::spin_hint();
        }
    }

    /// Marks slot `index` free and puts it back on the free list, waking waiters.
    ///
    /// # Safety
    /// The caller owns the slot (a box, or `&mut self` with a checked handle) and its
    /// object has been dropped or moved out.
    #[inline]
    unsafe fn release(&self, index: u32) {
        // With `debug-fill`, paint the vacated storage so stale reads stand out.
        #[cfg(feature = "debug-fill")]
        self.slot(index).with_mut(|p| {
            if let Some(p) = NonNull::new(p.cast::<u8>()) {
                crate::block::debug_fill::freed_slot(p, size_of::<T>());
            }
        });
        let stamp = self.stamp(index);
        // Relaxed: see `insert`. The free list's Release push orders it for the next
        // owner.
        stamp.store(
            stamp.load(Ordering::Relaxed) & !STATE_MASK,
            Ordering::Relaxed,
        );
        // SAFETY: per the caller the slot was popped and is not on the list.
        let had_waiters = unsafe { self.free.push(index, self.home_shard()) };
        if had_waiters {
            self.wake_waiters();
        }
    }

    #[cold]
    fn wake_waiters(&self) {
        #[cfg(feature = "std")]
        self.futex.bump_and_wake_all();
    }

    /// Drops the object in `index` and releases the slot, even if the drop panics.
    ///
    /// # Safety
    /// As [`release`](Self::release), except the object is still alive.
    unsafe fn drop_and_release(&self, index: u32) {
        struct Release<'a, T>(&'a Core<T>, u32);
        impl<T> Drop for Release<'_, T> {
            fn drop(&mut self) {
                // SAFETY: forwarded from `drop_and_release`; the object is gone.
                unsafe { self.0.release(self.1) }
            }
        }
        let guard = Release(self, index);
        // SAFETY: the caller owns the live object; it is dropped exactly once here.
        self.slot(index)
            .with_mut(|p| unsafe { ptr::drop_in_place(p.cast::<T>()) });
        drop(guard);
    }

    /// Moves the object out of `index` and releases the slot.
    ///
    /// # Safety
    /// As [`release`](Self::release), except the object is still alive.
    unsafe fn take(&self, index: u32) -> T {
        // SAFETY: the caller owns the live object; reading it moves it out, and the
        // slot is released right after, so it is never read again.
        let value = self
            .slot(index)
            .with_mut(|p| unsafe { p.cast::<T>().read() });
        // SAFETY: forwarded.
        unsafe { self.release(index) };
        value
    }
}

impl<T> Core<T> {
    /// The pool's stamps with what it takes to read them.
    ///
    /// The slots ever used form a prefix of each shard's range. Each shard's free list
    /// starts as its range in order, lowest on top, is a stack, and only ever holds its
    /// own slots, so its never-used slots always sit at its bottom, in order: a fresh
    /// slot is taken only when every slot of the shard before it is in use, and it is
    /// always the shard's lowest fresh one. A never-used slot still has its first
    /// stamp, so a binary search per shard finds the boundary. (A slot refilled exactly
    /// 2^30 times and free at that moment looks fresh again; the count is then low.)
    fn view(&self) -> StampView {
        StampView {
            stamps: self.stamps,
            capacity: self.capacity,
            fresh_stamp: self.fresh_stamp,
            layout: self.free.layout(),
        }
    }

    /// Drops every object in slots `from..capacity`. If a destructor panics, the rest
    /// are still dropped while the panic unwinds (a second panic aborts, as anywhere).
    ///
    /// # Safety
    /// Called once, from the pool's drop: no box or reference to any object is alive
    /// (boxes borrow the pool; leaked boxes are gone for good).
    unsafe fn drop_objects_from(&self, from: u32) {
        /// Drops the objects after a panicking one.
        struct Rest<'a, T>(&'a Core<T>, u32);
        impl<T> Drop for Rest<'_, T> {
            fn drop(&mut self) {
                // SAFETY: forwarded; the slots from `self.1` on are untouched.
                unsafe { self.0.drop_objects_from(self.1) }
            }
        }
        for index in from..self.capacity {
            // Relaxed: the pool is being dropped, so whatever handed it to this thread
            // (the end of every borrow) already ordered all earlier writes.
            if self.stamp(index).load(Ordering::Relaxed) & STATE_MASK != FREE {
                let rest = Rest(self, index + 1);
                // SAFETY: a non-free slot holds a live object, and we are its last
                // owner (see the function's contract); it is dropped once, since the
                // guard carries on after it.
                self.slot(index)
                    .with_mut(|p| unsafe { ptr::drop_in_place(p.cast::<T>()) });
                mem::forget(rest);
            }
        }
    }
}

impl<T> Drop for Core<T> {
    fn drop(&mut self) {
        if mem::needs_drop::<T>() {
            // SAFETY: `&mut self` in drop: nothing else can reach the objects.
            unsafe { self.drop_objects_from(0) };
        }
    }
}

/// A fixed-capacity, lock-free, thread-safe object pool living in a scope.
///
/// Made by [`ScopeStack::new_pool`]. See the [module docs](crate::pool) for the
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

impl<'s> ScopeStack<'s> {
    /// Carves a [`Pool`] of `capacity` slots out of this scope.
    ///
    /// The slot storage, free-list links and stamps are allocated first, then the pool
    /// object with a finalizer: when the scope unwinds, objects still in the pool are
    /// dropped, then the memory rewinds.
    ///
    /// # Panics
    /// Where [`try_new_pool`](Self::try_new_pool) returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let enemies = level.new_pool::<[f32; 4]>(100);
    ///     assert_eq!(enemies.capacity(), 100);
    /// });
    /// ```
    pub fn new_pool<T: 'static>(&self, capacity: usize) -> &'s mut Pool<'s, T> {
        match self.try_new_pool(capacity) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`Pool`] out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`](crate::AllocErrorKind::InvalidCapacity) for a capacity of 0;
    /// - [`AllocErrorKind::TooManySlots`](crate::AllocErrorKind::TooManySlots) above [`MAX_POOL_CAPACITY`];
    /// - [`AllocErrorKind::CapacityOverflow`](crate::AllocErrorKind::CapacityOverflow) when the arrays' size overflows;
    /// - [`AllocErrorKind::OutOfMemory`](crate::AllocErrorKind::OutOfMemory) when the scope has no room (memory already
    ///   taken for the arrays stays taken until the scope unwinds).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator, MAX_POOL_CAPACITY};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_pool::<u64>(0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     let e = level.try_new_pool::<u8>(MAX_POOL_CAPACITY + 1).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::TooManySlots);
    ///     let e = level.try_new_pool::<u64>(1 << 20).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(level.try_new_pool::<u64>(64).is_ok());
    /// });
    /// ```
    pub fn try_new_pool<T: 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut Pool<'s, T>, AllocError> {
        self.try_new_pool_with_shards(capacity, Pool::<T>::default_shards(capacity))
    }

    /// Carves a [`Pool`] of `capacity` slots split into `shards` shards (see the
    /// [module docs](crate::pool#shards)).
    ///
    /// One shard is the right choice for a pool that only one thread uses at a time;
    /// about one shard per thread that inserts into the pool is the right choice for a
    /// pool shared by a job system. Each shard costs two 128-byte lines of scope memory.
    /// The slots are split into shards of equal length (the last may be shorter), so
    /// the pool can end up with fewer shards than asked: 10 slots in 6 shards become
    /// 5 shards of 2 ([`Pool::shard_count`] says how many).
    ///
    /// # Panics
    /// Where [`try_new_pool_with_shards`](Self::try_new_pool_with_shards) returns an
    /// error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    ///     let bullets = level.new_pool_with_shards::<[f32; 4]>(1024, workers);
    ///     assert!(bullets.shard_count() <= workers);
    ///     let lonely = level.new_pool_with_shards::<u64>(64, 1);
    ///     assert_eq!(lonely.shard_count(), 1);
    /// });
    /// ```
    pub fn new_pool_with_shards<T: 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> &'s mut Pool<'s, T> {
        match self.try_new_pool_with_shards(capacity, shards) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`Pool`] with `shards` shards out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// As [`try_new_pool`](Self::try_new_pool), and
    /// [`AllocErrorKind::InvalidShardCount`](crate::AllocErrorKind::InvalidShardCount)
    /// for 0 shards or more than [`MAX_POOL_SHARDS`].
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_pool_with_shards::<u64>(64, 0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidShardCount);
    ///     let pool = level.try_new_pool_with_shards::<u64>(10, 6).unwrap();
    ///     assert_eq!(pool.shard_count(), 5);
    /// });
    /// ```
    pub fn try_new_pool_with_shards<T: 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> Result<&'s mut Pool<'s, T>, AllocError> {
        self.check_pool_capacity::<T>(capacity, MAX_POOL_CAPACITY, size_of::<T>() + 8)?;
        if shards == 0 || shards > MAX_POOL_SHARDS {
            return Err(self.error(
                crate::AllocErrorKind::InvalidShardCount,
                shards.saturating_mul(size_of::<Head>()),
                align_of::<Head>(),
            ));
        }
        let layout = ShardLayout::new(capacity as u32, shards as u32);
        let values = self.try_alloc_array_uninit::<Slot<T>>(capacity)?;
        let stamps = self.try_alloc_array_uninit::<AtomicU32>(capacity)?;
        let links = self.try_alloc_array_uninit::<AtomicU32>(capacity)?;
        let heads =
            self.try_alloc_array_uninit::<Head>(HEADS_PER_SHARD * layout.shards as usize)?;

        let id = POOL_IDS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        // A per-pool starting generation, so handles of pools that share a tag rarely
        // collide (see `Handle`).
        let seed = id.wrapping_mul(0x9E37_79B9) & !STATE_MASK;
        let cap = capacity as u32;
        for i in 0..capacity {
            // SAFETY: `i < capacity`, and the arrays have `capacity` elements of fresh,
            // aligned memory that lives until this scope rewinds.
            unsafe {
                UnsafeCell::init_uninit(values.add(i).as_ptr());
                stamps.add(i).as_ptr().write(AtomicU32::new(seed | FREE));
            }
        }
        // SAFETY: `links` has `capacity` and `heads` has `2 * layout.shards` fresh elements
        // that only these lists will use, valid until the scope rewinds, which is after
        // the pool's finalizer has run; `layout` is for `cap <= MAX_POOL_CAPACITY`.
        let free = unsafe { FreeLists::new(heads, links, cap, layout) };
        let pool = Pool {
            core: Core {
                values,
                stamps,
                capacity: cap,
                tag: id & 0xFF,
                fresh_stamp: seed | FREE,
                free,
                transit: CachePadded::new(Transit::new()),
                #[cfg(feature = "std")]
                futex: CachePadded::new(crate::sync::Futex::new()),
                _owns: PhantomData,
            },
            _scope: PhantomData,
        };
        // SAFETY: `new_object_unchecked`'s drop contract: the destructor drops `'static`
        // `T`s and reads the pool's own arrays, carved in this scope before its record and
        // valid until the rewind, which follows all finalizers. `'s` is only a marker.
        match unsafe { self.try_new_object_unchecked(pool) } {
            Ok(p) => {
                // Register with the scope for reports. The link copies what a report needs
                // (the stamps array lives in scope memory, apart from the pool object), so a
                // report never reads the pool object the caller holds `&mut` to.
                let core = &p.core;
                let link = crate::scope::info::PoolLink {
                    ptr: core.stamps.cast(),
                    words: [
                        core.values.as_ptr().addr(),
                        capacity * (size_of::<Slot<T>>() + 2 * size_of::<AtomicU32>())
                            + HEADS_PER_SHARD * layout.shards as usize * size_of::<Head>(),
                        core.capacity as usize,
                        core.fresh_stamp as usize,
                        layout.len as usize,
                    ],
                    kind: "Pool",
                    type_name: core::any::type_name::<T>(),
                    snapshot: pool_snapshot,
                    next: None,
                };
                // SAFETY: `pool_snapshot` reads only the stamps array, which stays valid
                // until this scope ends.
                unsafe { self.register_pool(link) };
                Ok(p)
            }
            Err(e) => Err(e.error),
        }
    }
}

/// Reads a registered pool's statistics for a memory map report.
///
/// # Safety
/// `link` was filled in by `try_new_pool`, and its pool's scope is live.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
unsafe fn pool_snapshot(link: &crate::scope::info::PoolLink) -> crate::scope::info::PoolSnapshot {
    let [addr, bytes, capacity, fresh, shard_len] = link.words;
    let view = StampView {
        stamps: link.ptr.cast::<AtomicU32>(),
        capacity: capacity as u32,
        fresh_stamp: fresh as u32,
        layout: ShardLayout {
            len: shard_len as u32,
            shards: (capacity as u32).div_ceil(shard_len as u32),
        },
    };
    crate::scope::info::PoolSnapshot {
        len: view.live_count(),
        capacity,
        high_water_len: view.used_count(),
        addr,
        bytes,
    }
}

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

    /// An upper bound of the bytes [`ScopeStack::new_pool`] takes from the scope for
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

    /// An upper bound of the bytes [`ScopeStack::new_pool_with_shards`] takes from the
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

    /// The number of shards [`ScopeStack::new_pool`] gives a pool of `capacity` slots:
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
        self.core.home_shard() as usize
    }

    /// Puts `value` in a free slot and returns the box that owns it, or gives the value
    /// back when every slot is taken. Lock-free; callable from any thread holding
    /// `&Pool<T>`.
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
        self.insert_from(self.core.home_shard(), value)
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
        self.insert_from((shard % shards) as u32, value)
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
        let index = self.core.insert_with(self.core.home_shard(), f)?;
        Ok(PoolBox {
            core: NonNull::from(&self.core),
            index,
            _borrow: PhantomData,
        })
    }

    #[inline(always)]
    fn insert_from(&self, home: u32, value: T) -> Result<PoolBox<'_, T>, T> {
        let index = self.core.insert(home, value)?;
        Ok(PoolBox {
            core: NonNull::from(&self.core),
            index,
            _borrow: PhantomData,
        })
    }

    /// Like [`insert`](Self::insert), but when the pool is full, sleeps until a slot
    /// is freed and then tries again, as often as needed.
    ///
    /// The thread sleeps on a futex, so it does not spin a core. A thread that frees a
    /// slot while others wait wakes all of them (one will get the slot; the others go
    /// back to sleep); no wake-up is lost. Requires the `std` feature.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = &*level.new_pool::<u32>(1);
    ///     let held = pool.insert(1).unwrap();
    ///     std::thread::scope(|s| {
    ///         let waiter = s.spawn(|| *pool.insert_wait(2));
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(held); // frees the slot and wakes the waiter
    ///         assert_eq!(waiter.join().unwrap(), 2);
    ///     });
    /// });
    /// ```
    #[cfg(feature = "std")]
    pub fn insert_wait(&self, mut value: T) -> PoolBox<'_, T> {
        loop {
            match self.insert(value) {
                Ok(b) => return b,
                Err(v) => value = v,
            }
            // Read the futex *before* announcing ourselves (see `announce_waiter`): a
            // push that sees our announcement bumps it past this value. We announce on
            // every shard, so a free into any of them wakes us; a shard that got a
            // slot meanwhile sends us back to `insert`.
            let seen = self.core.futex.load();
            let free = &self.core.free;
            let all_marked = (0..free.shards())
                .all(|shard| matches!(free.announce_waiter(shard), free_list::Announce::Sleep));
            if all_marked {
                self.core.futex.wait(seen);
            }
        }
    }

    /// Like [`insert_wait`](Self::insert_wait), but gives up after about `timeout`:
    /// the value comes back if no slot could be had by then.
    ///
    /// The thread sleeps (it does not spin) and wakes when any slot of any shard is
    /// freed, as in `insert_wait`; no wake-up is lost, so it returns as soon as it
    /// gets a slot, long before the timeout if one frees early. It sleeps at most about
    /// `timeout` in all (plus the scheduler's wake-up latency), trying once more at
    /// the end. A zero timeout is one [`insert`](Self::insert). Timed sleeps use std's
    /// `Mutex` + `Condvar::wait_timeout` (see the `Futex` notes in the source), so a
    /// free that wakes waiters takes one more uncontended lock. Requires the `std`
    /// feature.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use std::time::{Duration, Instant};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = &*level.new_pool::<u32>(1);
    ///     let held = pool.insert(1).unwrap();
    ///     // Nobody frees: the value comes back after about 20 ms.
    ///     let started = Instant::now();
    ///     assert_eq!(pool.insert_wait_timeout(2, Duration::from_millis(20)).err(), Some(2));
    ///     assert!(started.elapsed() >= Duration::from_millis(20));
    ///     std::thread::scope(|s| {
    ///         let waiter = s.spawn(|| pool.insert_wait_timeout(3, Duration::from_secs(60)).map(|b| *b));
    ///         std::thread::sleep(Duration::from_millis(10));
    ///         drop(held); // wakes the waiter long before its minute is up
    ///         assert_eq!(waiter.join().unwrap(), Ok(3));
    ///     });
    /// });
    /// ```
    #[cfg(feature = "std")]
    pub fn insert_wait_timeout(
        &self,
        mut value: T,
        timeout: core::time::Duration,
    ) -> Result<PoolBox<'_, T>, T> {
        let deadline = crate::sync::Deadline::after(timeout);
        loop {
            match self.insert(value) {
                Ok(b) => return Ok(b),
                Err(v) => value = v,
            }
            let left = deadline.left();
            if left.is_some_and(|left| left.is_zero()) {
                return Err(value);
            }
            // As in `insert_wait`: read the futex, then announce on every shard.
            let seen = self.core.futex.load();
            let free = &self.core.free;
            let all_marked = (0..free.shards())
                .all(|shard| matches!(free.announce_waiter(shard), free_list::Announce::Sleep));
            if all_marked {
                match left {
                    Some(left) => self.core.futex.wait_timeout(seen, left),
                    None => self.core.futex.wait(seen),
                }
            }
        }
    }

    /// The object a handle names, if it is still in this pool.
    ///
    /// Safe to call while other threads insert and erase: it only ever returns pooled
    /// objects (see [`PoolBox::into_handle`]), which can leave the pool only through
    /// `&mut self`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<&str>(4);
    ///     let h = pool.insert("door").unwrap().into_handle();
    ///     assert_eq!(pool.get(h), Some(&"door"));
    ///     pool.remove(h);
    ///     assert_eq!(pool.get(h), None);
    /// });
    /// ```
    #[inline]
    pub fn get(&self, handle: Handle<T>) -> Option<&T> {
        let index = self.core.find(handle)?;
        // SAFETY: the slot holds a pooled object (checked with Acquire, so its contents
        // are visible). It stays in the pool while `&self` is borrowed, and pooled
        // objects are only mutated through `&mut self`.
        Some(unsafe { &*self.core.value_ptr(index) })
    }

    /// The object a handle names, mutably, if it is still in this pool.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(4);
    ///     let h = pool.insert(1).unwrap().into_handle();
    ///     *pool.get_mut(h).unwrap() += 1;
    ///     assert_eq!(pool.get(h), Some(&2));
    /// });
    /// ```
    #[inline]
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<&mut T> {
        let index = self.core.find(handle)?;
        // SAFETY: a pooled object, and `&mut self` excludes every other access to it
        // (boxes never own pooled slots).
        Some(unsafe { &mut *self.core.value_ptr(index) })
    }

    /// Takes the object a handle names out of the pool and frees its slot. `None` if
    /// the handle is stale or from another pool.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<String>(4);
    ///     let h = pool.insert("crate".to_string()).unwrap().into_handle();
    ///     assert_eq!(pool.remove(h).as_deref(), Some("crate"));
    ///     assert_eq!(pool.remove(h), None);
    ///     assert!(pool.is_empty());
    /// });
    /// ```
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        let index = self.core.find(handle)?;
        // SAFETY: `&mut self` owns every pooled object; the slot is released once.
        Some(unsafe { self.core.take(index) })
    }

    /// Keeps only the pooled objects for which `keep` returns `true`; drops the rest
    /// and frees their slots. Objects owned by boxes are not visited.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     for i in 0..8 {
    ///         pool.insert(i).unwrap().into_handle();
    ///     }
    ///     pool.retain(|_, v| *v % 2 == 0);
    ///     assert_eq!(pool.len(), 4);
    /// });
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, &mut T) -> bool) {
        for index in 0..self.core.capacity {
            let stamp = self.core.stamp(index).load(Ordering::Relaxed);
            if stamp & STATE_MASK != POOLED {
                continue;
            }
            // SAFETY: a pooled object under `&mut self`.
            let value = unsafe { &mut *self.core.value_ptr(index) };
            if !keep(Handle::new(index, self.core.tag, stamp), value) {
                // SAFETY: `&mut self` owns the pooled object; `keep` has returned, so
                // no reference to it remains.
                unsafe { self.core.drop_and_release(index) };
            }
        }
    }

    /// Every pooled object with its handle, in slot order. Objects owned by boxes are
    /// not visited (their boxes have exclusive access). Takes time in proportion to
    /// the capacity.
    ///
    /// Safe while other threads insert and erase; objects they hand to the pool
    /// meanwhile may or may not be seen.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     let h = pool.insert(5).unwrap().into_handle();
    ///     let _boxed = pool.insert(6).unwrap();
    ///     let seen: Vec<_> = pool.iter().collect();
    ///     assert_eq!(seen, [(h, &5)]);
    /// });
    /// ```
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            core: &self.core,
            next: 0,
        }
    }

    /// Every pooled object with its handle, mutably, in slot order.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     let h = pool.insert(5).unwrap().into_handle();
    ///     for (_, v) in pool.iter_mut() {
    ///         *v *= 10;
    ///     }
    ///     assert_eq!(pool.get(h), Some(&50));
    /// });
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        IterMut {
            core: NonNull::from(&self.core),
            next: 0,
            _borrow: PhantomData,
        }
    }

    /// Objects in the pool now, boxed or pooled. Exact when no other thread is
    /// inserting or erasing; otherwise a snapshot that may already be out of date.
    ///
    /// It counts the occupied slots among those ever used (see
    /// [`high_water_len`](Self::high_water_len)), so it takes time in proportion to
    /// that mark: the pool keeps no shared live counter, which would cost two more
    /// atomic read-modify-writes on every insert and erase.
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
        self.core.view().live_count()
    }

    /// `true` when the pool holds no object (a snapshot, like [`len`](Self::len)).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| assert!(level.new_pool::<u32>(8).is_empty()));
    /// ```
    pub fn is_empty(&self) -> bool {
        let core = &self.core;
        core.view()
            .used_ranges()
            .flat_map(|(s, e)| s..e)
            .all(|i| core.stamp(i).load(Ordering::Relaxed) & STATE_MASK == FREE)
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
    /// For a pool with one shard, or filled by one thread through `insert`, this is the
    /// most objects that were in the pool at once. Otherwise it can be more than that
    /// peak, never less: two threads that each filled their home shard with 10 objects
    /// at different times count 20, and a slot freed by a thread that lives in another
    /// shard waits on the shard's remote list until its local list runs dry, so a fresh
    /// slot may be used first.
    ///
    /// Exact once threads are quiet. While they run, a slot whose object another
    /// thread is dropping at that moment counts as in use. Costs `O(shards × log
    /// capacity)`: each shard reuses its freed slots last-in first-out, so the slots it
    /// ever handed out are a prefix of its range (see the module docs).
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
        self.core.view().used_count()
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

impl<'a, T> PoolBox<'a, T> {
    #[inline(always)]
    fn core(&self) -> &'a Core<T> {
        // SAFETY: the box borrows the pool for `'a`.
        unsafe { self.core.as_ref() }
    }

    /// Hands the object to the pool and returns a [`Handle`] to it. The object stays in
    /// its slot; it is now reached through [`Pool::get`] (any thread with `&Pool`) and
    /// changed or removed through `&mut Pool`. If never removed, it is dropped when the
    /// pool's scope unwinds.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<String>(4);
    ///     let h = pool.insert("boss".to_string()).unwrap().into_handle();
    ///     assert_eq!(pool.len(), 1);
    ///     assert_eq!(pool.get(h).map(String::as_str), Some("boss"));
    /// }); // the String is dropped here
    /// ```
    pub fn into_handle(self) -> Handle<T> {
        let core = self.core();
        let index = self.index;
        mem::forget(self);
        let stamp = core.stamp(index);
        let pooled = (stamp.load(Ordering::Relaxed) & !STATE_MASK) | POOLED;
        // Release: pairs with the Acquire in `find`, so readers on other threads see
        // everything written to the object through the box.
        stamp.store(pooled, Ordering::Release);
        Handle::new(index, core.tag, pooled)
    }

    /// Crate-internal (an associated function, not a method, so that it never shadows a
    /// method of `T` reached through `Deref`): gives up the box but leaves the object
    /// alive in its slot (still in the boxed state, so handles never reach it) and
    /// returns the slot index. The object is then owned by whoever keeps the index: it is read with
    /// [`Pool::slot_ref`] and freed with [`Pool::free_index`], or, if never freed,
    /// dropped with the pool (the pool drops every occupied slot).
    pub(crate) fn leak_to_slot_index(this: Self) -> u32 {
        let index = this.index;
        mem::forget(this);
        index
    }

    /// Moves the object out and frees its slot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<String>(4);
    ///     let b = pool.insert("note".to_string()).unwrap();
    ///     assert_eq!(b.into_inner(), "note");
    ///     assert!(pool.is_empty());
    /// });
    /// ```
    pub fn into_inner(self) -> T {
        let core = self.core();
        let index = self.index;
        mem::forget(self);
        // SAFETY: the box owned the live object; it is forgotten, so it will not be
        // released again.
        unsafe { core.take(index) }
    }
}

impl<T> core::ops::Deref for PoolBox<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the box owns a live object in this slot.
        unsafe { &*self.core().value_ptr(self.index) }
    }
}

impl<T> core::ops::DerefMut for PoolBox<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the box owns a live object in this slot, exclusively.
        unsafe { &mut *self.core().value_ptr(self.index) }
    }
}

impl<T> Drop for PoolBox<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the box owns the live object and is being dropped, so the slot is
        // released exactly once.
        unsafe { self.core().drop_and_release(self.index) }
    }
}

impl<T: fmt::Debug> fmt::Debug for PoolBox<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Iterator over a pool's pooled objects and their handles; see [`Pool::iter`].
pub struct Iter<'a, T> {
    core: &'a Core<T>,
    next: u32,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = (Handle<T>, &'a T);

    fn next(&mut self) -> Option<Self::Item> {
        while self.next < self.core.capacity {
            let index = self.next;
            self.next += 1;
            // Acquire: as in `Core::find`.
            let stamp = self.core.stamp(index).load(Ordering::Acquire);
            if stamp & STATE_MASK == POOLED {
                // SAFETY: as in `Pool::get`.
                let value = unsafe { &*self.core.value_ptr(index) };
                return Some((Handle::new(index, self.core.tag, stamp), value));
            }
        }
        None
    }
}

/// Mutable iterator over a pool's pooled objects; see [`Pool::iter_mut`].
pub struct IterMut<'a, T> {
    core: NonNull<Core<T>>,
    next: u32,
    _borrow: PhantomData<&'a mut Core<T>>,
}

// SAFETY: the iterator is a `&mut Pool` in disguise: sending it sends `&mut T`s.
unsafe impl<T: Send> Send for IterMut<'_, T> {}
// SAFETY: `&IterMut` gives nothing.
unsafe impl<T: Sync> Sync for IterMut<'_, T> {}

impl<'a, T> Iterator for IterMut<'a, T> {
    type Item = (Handle<T>, &'a mut T);

    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the iterator borrows the pool mutably for `'a`.
        let core = unsafe { self.core.as_ref() };
        while self.next < core.capacity {
            let index = self.next;
            self.next += 1;
            let stamp = core.stamp(index).load(Ordering::Relaxed);
            if stamp & STATE_MASK == POOLED {
                // SAFETY: a pooled object under the pool's `&mut` borrow; each slot
                // is yielded once, so the `&mut T`s never alias.
                let value = unsafe { &mut *core.value_ptr(index) };
                return Some((Handle::new(index, core.tag, stamp), value));
            }
        }
        None
    }
}
