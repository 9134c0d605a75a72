//! [`Heap`]: a general-purpose allocator carved from a scope, for collections that grow,
//! shrink and free for as long as the scope lives.
//!
//! A scope's memory is a stack: a collection that grows in it leaves its old buffers
//! behind until the scope ends, and the collection borrows the scope handle, so no
//! child scope can open while it lives. A heap is a region of the scope run by a TLSF
//! allocator (two-level segregated fit, the `rlsf` crate): allocation and free take
//! constant time, and freed blocks merge with their free neighbours. Carve one with
//! `new_heap(bytes)` on any kind of scope (or through [`Carve`](crate::Carve)); you get
//! `&'s Heap`, a shared reference with the scope's lifetime, and `&Heap` is an
//! allocator-api2 0.2 `Allocator`. A collection in the heap borrows the heap, not the
//! scope handle, so frames open and close above it. For text that grows and shrinks
//! (names of entities spawned at run time) there is [`HeapString`](crate::HeapString)
//! (feature `alloc`):
//!
//! ```
//! use allocator_api2::vec::Vec;
//! use hashbrown::{DefaultHashBuilder, HashMap};
//! use scope_stack::LinearAllocator;
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("level", |level| {
//!     let heap = level.new_heap(8 << 10);
//!     let mut alive: HashMap<u32, [f32; 2], _, _> =
//!         HashMap::with_hasher_in(DefaultHashBuilder::default(), heap);
//!     for frame_number in 0..30u32 {
//!         level.scope("frame", |frame| {
//!             // Frame data bumps in the frame scope; the level's map grows and
//!             // shrinks in the heap beside it.
//!             let spawned = frame.alloc_slice_fill_with(4, |i| frame_number * 4 + i as u32);
//!             for &id in spawned.iter() {
//!                 alive.insert(id, [0.0; 2]);
//!             }
//!             alive.retain(|id, _| id + 36 >= frame_number * 4);
//!         });
//!     }
//!     assert_eq!(alive.len(), 40);
//!     let mut names: Vec<u8, _> = Vec::new_in(heap);
//!     names.extend_from_slice(b"forest");
//!     assert!(heap.used() >= 6 && heap.live() >= 2);
//! }); // the heap goes here in one step, with whatever it still holds
//! ```
//!
//! # What the heap's lifetime guarantees
//!
//! The heap's region and the `Heap` itself are placed in the scope, so both live until
//! the scope ends (or its slot unloads), and every pointer the heap hands out carries
//! the borrow of `&'s Heap`: a collection that holds the heap cannot outlive `'s`
//! ([rule 12](crate::rules#12-a-heap-lives-as-long-as-its-scope)). At the end the
//! region goes in one step: nothing is walked and no destructor of a heap collection
//! runs, so a collection that is never dropped leaks what it owns elsewhere (a `String`
//! on the global heap), which is safe; one whose items need no drop never needs
//! dropping at all.
//!
//! # Threads
//!
//! `Heap` is `Sync`: every call takes a small lock (see `lock.rs`), so collections on
//! different threads may share one heap, and a level loaded on a loader thread with
//! [`load_concurrent`](crate::Slots::load_concurrent) can hold one and be played on the
//! game thread. A report's heap row and the heap's `Debug` text take every figure
//! under one hold of the lock, so they describe one moment even while other threads
//! allocate and free.
//!
//! # Profiler
//!
//! With the feature `tracy`, a heap is a Tracy memory pool of its own,
//! `"<scope's path>/Heap"`: each allocation and free is an event in it, a grow or
//! shrink is a free and an allocation, and when the heap's scope ends (or its slot
//! unloads) the pool is discarded once. Only then does the `Heap` need a drop (a
//! finalizer record in its scope); without the feature it has none.
//!
//! Invariant of this module: the TLSF state and the counters are touched only while
//! the lock is held; the region (`pool`, `capacity`) is fixed when the heap is carved
//! and is scope memory nothing else hands out.
mod alloc_api;
pub(crate) mod carve;
mod lock;
#[cfg(feature = "alloc")]
pub(crate) mod report;
// Re-exported at the crate root (lib.rs), not here: `string.rs` names `Heap` from this
// file, so a `pub use` here would be an import circle (scripts/layers.sh).
#[cfg(feature = "alloc")]
pub(crate) mod string;

use core::ptr::NonNull;

use lock::SpinLock;

use crate::sync::UnsafeCell;

pub use crate::limits::MAX_HEAP_BYTES;

/// First-level classes of the TLSF: blocks up to `GRANULARITY << FLLEN` bytes
/// (8 GiB on 64-bit targets), more than [`MAX_HEAP_BYTES`] everywhere.
const FLLEN: usize = 28;
/// Second-level classes per first-level class: a free block is found for a request at
/// most 1/16 larger than what it needs.
const SLLEN: usize = 16;

/// The TLSF the heap runs (its free lists and bitmaps, about 3.6 KiB on 64-bit targets).
type Tlsf = rlsf::Tlsf<'static, u32, u16, FLLEN, SLLEN>;

/// TLSF's allocation granule: block sizes are multiples of it, and a region starts
/// aligned to it.
const GRANULARITY: usize = rlsf::GRANULARITY;

/// What the lock guards.
struct State {
    tlsf: Tlsf,
    /// Bytes callers hold (the sum of their layouts' sizes).
    used: usize,
    /// Allocations not yet freed (zero-sized ones are not counted).
    live: usize,
    /// The most `used` has been.
    high_water: usize,
}

/// A TLSF heap carved from a scope: see the [module docs](self).
///
/// You only ever get `&'s Heap` (from `new_heap`), and `&Heap` implements
/// allocator-api2's `Allocator`, so `allocator_api2::vec::Vec<T, &Heap>`,
/// `allocator_api2::boxed::Box<T, &Heap>` and `hashbrown::HashMap<K, V, S, &Heap>`
/// live in it. Out of room is an `AllocError` from the allocator (so `try_reserve`
/// reports it and nothing is lost).
///
/// ```
/// use allocator_api2::vec::Vec;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let heap = level.new_heap(4096);
///     let mut v: Vec<u64, _> = Vec::new_in(heap);
///     v.extend(0..100);
///     assert!(v.try_reserve(1 << 20).is_err()); // too big for the heap: v is intact
///     assert_eq!(v.len(), 100);
///     drop(v);
///     assert_eq!((heap.used(), heap.live()), (0, 0));
///     assert_eq!(heap.high_water(), 100 * 8); // `extend` reserved 100 u64s at once
/// });
/// ```
pub struct Heap {
    lock: SpinLock,
    /// `crate::sync`'s cell: loom's under `--cfg loom` (see `tests/loom/loom_heap.rs`).
    state: UnsafeCell<State>,
    /// The region the TLSF runs on (scope memory, aligned to `GRANULARITY`).
    pool: NonNull<u8>,
    /// Its length in bytes, as the TLSF took it.
    capacity: usize,
    /// The heap's pool in the profiler, `"<scope's path>/Heap"` (feature `tracy`; `None`
    /// while hidden). Its events go out under the lock, in the order the TLSF made
    /// them, so a block freed on one thread and taken again on another is shown freed
    /// first.
    #[cfg(feature = "tracy")]
    profiler: Option<&'static crate::profiler::Name>,
}

/// Ends the heap's pool in the profiler when its scope ends or its slot unloads: one
/// discard of whatever it still shows (feature `tracy` only; without it a `Heap`
/// needs no drop and its scope keeps no finalizer record for it).
#[cfg(feature = "tracy")]
impl Drop for Heap {
    fn drop(&mut self) {
        crate::profiler::discard(self.profiler);
    }
}

// SAFETY: `state` is touched only with the lock held (so by one thread at a time, each
// seeing what the previous holder wrote: the lock's acquire/release pair), and the TLSF
// in it owns the block headers it points at (rlsf's `Tlsf` is `Send + Sync` for that
// reason). `pool` and `capacity` are never written after carving. A `Heap` holds no
// value of the caller's, so it may be shared with or dropped on any thread.
unsafe impl Sync for Heap {}
// SAFETY: as for `Sync`.
unsafe impl Send for Heap {}

impl Heap {
    /// Runs `f` with the state, under the lock.
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let _guard = self.lock.lock();
        // SAFETY: the lock is held until `_guard` drops, after `f` returns, so this is
        // the only reference to the state (the module's invariant). Under loom the cell
        // is loom's, so a model sees two threads in here at once as a race.
        self.state.with_mut(|state| f(unsafe { &mut *state }))
    }

    /// The bytes the heap runs on (its region, rounded to the TLSF's granule). Some of
    /// them hold block headers, so [`used`](Self::used) never reaches it.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert_eq!(level.new_heap(4096).capacity(), 4096);
    /// # });
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes in use: the sum of the sizes of the live allocations, as their layouts
    /// asked (exact; block headers, padding and rounding are not counted).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let b = allocator_api2::boxed::Box::new_in([0u8; 100], heap);
    /// assert_eq!(heap.used(), 100);
    /// drop(b);
    /// assert_eq!(heap.used(), 0);
    /// # });
    /// ```
    pub fn used(&self) -> usize {
        self.with(|s| s.used)
    }

    /// Live allocations: allocated and not yet freed (zero-sized ones take nothing and
    /// are not counted). Exact.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let a = allocator_api2::boxed::Box::new_in(1u32, heap);
    /// let _b = allocator_api2::boxed::Box::new_in(2u32, heap);
    /// drop(a);
    /// assert_eq!(heap.live(), 1);
    /// # });
    /// ```
    pub fn live(&self) -> usize {
        self.with(|s| s.live)
    }

    /// The most bytes ever in use at once ([`used`](Self::used)'s peak). Exact.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// drop(allocator_api2::boxed::Box::new_in([0u8; 300], heap));
    /// assert_eq!((heap.used(), heap.high_water()), (0, 300));
    /// # });
    /// ```
    pub fn high_water(&self) -> usize {
        self.with(|s| s.high_water)
    }

    /// Bytes in free blocks, headers included: [`capacity`](Self::capacity) less what
    /// live allocations take with their headers, padding and rounding, and less the
    /// end marker of the region. Exact; it walks the heap's blocks under the lock
    /// (time linear in their number), so call it for statistics, not per frame.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let empty = heap.free();
    /// assert!(empty < heap.capacity() && empty >= heap.capacity() - 64);
    /// let b = allocator_api2::boxed::Box::new_in([0u8; 100], heap);
    /// assert!(heap.free() <= empty - 100);
    /// drop(b);
    /// assert_eq!(heap.free(), empty); // freed blocks merge again
    /// # });
    /// ```
    pub fn free(&self) -> usize {
        self.walk().free
    }

    /// The payload of the largest free block: no allocation larger than this can
    /// succeed until something is freed. It is a bound, not a promise: TLSF looks a
    /// request up by its size class (rounded up by at most 1/16), so a request this
    /// large may still fail. It walks the blocks, as [`free`](Self::free) does.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let before = heap.largest_free();
    /// let b = allocator_api2::boxed::Box::new_in([0u8; 1000], heap);
    /// assert!(heap.largest_free() <= before - 1000);
    /// # drop(b);
    /// # });
    /// ```
    pub fn largest_free(&self) -> usize {
        self.walk().largest
    }

    /// Walks the region's blocks under the lock.
    fn walk(&self) -> Walk {
        self.with(|s| self.walk_locked(s))
    }

    /// Every figure of the heap, read under one hold of the lock: the counters and a
    /// walk of the blocks describe the same moment (a block freed between two holds
    /// would be counted as used and as free).
    fn figures(&self) -> Figures {
        self.with(|s| Figures {
            used: s.used,
            live: s.live,
            high_water: s.high_water,
            walk: self.walk_locked(s),
        })
    }

    /// Counts the free blocks; `s` is the state, borrowed from under the lock.
    fn walk_locked(&self, s: &State) -> Walk {
        let mut w = Walk {
            free: 0,
            largest: 0,
            free_blocks: 0,
        };
        let pool = NonNull::slice_from_raw_parts(self.pool, self.capacity);
        // SAFETY: `pool` is the region the TLSF was given, with the length its
        // insertion reported (see `carve`), and the caller holds the lock (it lent
        // `s`, which only `with` hands out), which keeps every block header still
        // while the walk reads them.
        for block in unsafe { s.tlsf.iter_blocks(pool) } {
            if !block.is_occupied() {
                w.free += block.size();
                w.largest = w.largest.max(block.max_payload_size());
                w.free_blocks += 1;
            }
        }
        w
    }
}

/// The heap's figures at one moment (see `Heap::figures`).
struct Figures {
    used: usize,
    live: usize,
    high_water: usize,
    walk: Walk,
}

/// What a walk of the blocks counts.
struct Walk {
    free: usize,
    largest: usize,
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    free_blocks: usize,
}

impl core::fmt::Debug for Heap {
    /// The heap's statistics (it walks the blocks for `free`).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// assert!(format!("{heap:?}").starts_with("Heap { capacity: 4096, used: 0"));
    /// # });
    /// ```
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // One hold of the lock, so the figures agree with one another.
        let fig = self.figures();
        f.debug_struct("Heap")
            .field("capacity", &self.capacity)
            .field("used", &fig.used)
            .field("live", &fig.live)
            .field("high_water", &fig.high_water)
            .field("free", &fig.walk.free)
            .field("largest_free", &fig.walk.largest)
            .finish()
    }
}
