//! Carving slots out of a scope: [`ScopeStack::new_slots`] and its `try_` form, and the
//! [`Slots`] object itself.
//!
//! This module owns the `Slots` layout. Invariant: the table, the sub-blocks and the
//! `Slots` object all live in the carving scope's memory (nothing on the global heap);
//! sub-block `i` is `[region + i * stride, region + i * stride + bytes_each)`, each
//! slot starts free, and each sub-block's root cursor names that sub-block as its
//! owner (a block of its own, so nothing a slot does touches the parent block).

use core::alloc::Layout;
use core::ptr::NonNull;

use crate::block::linear::LinearAllocator;
use crate::error::{AllocError, AllocErrorKind};
use crate::scope::info::ScopeInfo;
use crate::scope::place::{self, try_alloc_array_uninit, Core as Surface};
use crate::scope::ScopeStack;
use crate::sync::{AtomicUsize, Ordering};

use super::table::Record;

/// The `kind` of a `Slots`' record in its scope's list of pools (reports tell it apart
/// by this).
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) const SLOTS_KIND: &str = "Slots";

/// Sub-blocks start on their own cache line.
pub(crate) const SLOT_ALIGN: usize = 64;

/// A scope's memory cut into equal sub-blocks (slots), each loaded and unloaded on its
/// own, in any order, from any thread.
///
/// Carve one with [`ScopeStack::new_slots`] (it lives as long as that scope), or make
/// one that lives as long as the program with [`Slots::leak`] or
/// [`Slots::from_static`]; load a slot with [`load`](Self::load)
/// (or [`load_concurrent`](Self::load_concurrent) for a root built by many threads),
/// and free it by dropping the [`Loaded`](crate::Loaded) you got. See
/// [`crate::slots`] for both patterns (streaming levels, a frame ring).
///
/// ```
/// use scope_stack::{slot_root, LinearAllocator};
/// slot_root!(struct Text = for<'s> &'s str);
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("game", |game| {
///     let slots = game.new_slots("levels", 2, 4096);
///     assert_eq!((slots.count(), slots.bytes_each(), slots.loaded()), (2, 4096, 0));
///     let a = slots.load::<Text>("a", |s| &*s.alloc_str("first")).unwrap();
///     assert_eq!(slots.loaded(), 1);
///     drop(a);
///     assert_eq!(slots.loaded(), 0);
/// });
/// ```
pub struct Slots {
    /// `count` records (in the carving scope's memory).
    pub(crate) records: NonNull<Record>,
    pub(crate) count: usize,
    pub(crate) bytes_each: usize,
    /// Distance between sub-blocks.
    pub(crate) stride: usize,
    /// Address of sub-block 0.
    pub(crate) region: usize,
    /// The name given to `new_slots` (in the carving scope's memory).
    name: NonNull<str>,
    /// Where the next claim starts looking (round robin; always below `count`).
    next: AtomicUsize,
    /// Slots held now, and the most ever held at once.
    pub(crate) held: AtomicUsize,
    pub(crate) most_held: AtomicUsize,
    /// Threads waiting for a slot, and the word they sleep on (see `super::wait`).
    #[cfg(feature = "std")]
    pub(crate) waiters: crate::sync::AtomicU32,
    #[cfg(feature = "std")]
    pub(crate) futex: crate::sync::Futex,
    /// The wakers of tasks waiting for a slot (see `super::tasks`, `super::wakers`).
    #[cfg(feature = "std")]
    pub(crate) tasks: super::wakers::TaskWakers,
    /// For a set that lives as long as the program ([`Slots::leak`],
    /// [`Slots::from_static`]): the record of the root scope it was carved in, which
    /// never closes, and that scope's block (see `super::forever`). `None` for a set
    /// carved from a scope of the caller's. Read only by reports (feature `alloc`).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) home: Option<(NonNull<ScopeInfo>, NonNull<LinearAllocator>)>,
}

// SAFETY: a `Slots` is shared by every thread that loads or drops a slot. Its own fields
// are read-only after carving or atomic. A record's non-atomic part (`Holder`: the
// sub-block with its `Cell`s, the scope record, the root) is touched only by the
// thread that holds that slot, which it won with a compare-exchange and gives up with
// a release store (see `super::table`), so no two threads touch it at once and each
// holder sees its predecessor's writes. What a `Loaded` exposes across threads is
// governed by its own `Send`/`Sync` rules (see `super::loaded`). The `home` pointers
// of a set that lives as long as the program lead to a scope record and a block that
// nothing writes after the set is carved; reports only read them (see
// `super::forever`).
unsafe impl Sync for Slots {}
// SAFETY: as above; nothing in a `Slots` is tied to the thread that carved it (it is
// only ever reached through `&Slots`, but a finalizer may drop it on the thread that
// closes the carving scope).
unsafe impl Send for Slots {}

impl Slots {
    /// The name given to [`ScopeStack::new_slots`].
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| assert_eq!(game.new_slots("frames", 3, 1024).name(), "frames"));
    /// ```
    pub fn name(&self) -> &str {
        // SAFETY: the name was copied into the carving scope's memory, which outlives
        // every `&Slots`.
        unsafe { self.name.as_ref() }
    }

    /// Number of slots.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| assert_eq!(game.new_slots("frames", 3, 1024).count(), 3));
    /// ```
    pub fn count(&self) -> usize {
        self.count
    }

    /// Bytes each slot's scope may use (its root and the root's record included).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| assert_eq!(game.new_slots("frames", 3, 1000).bytes_each(), 1000));
    /// ```
    pub fn bytes_each(&self) -> usize {
        self.bytes_each
    }

    /// Slots held now (being built or loaded). Other threads may change it at any time.
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 3, 1024);
    ///     let _a = slots.load::<Unit>("a", |_| ()).unwrap();
    ///     assert_eq!(slots.loaded(), 1);
    /// });
    /// ```
    pub fn loaded(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Slot `i`'s record.
    #[inline]
    pub(crate) fn record(&self, i: usize) -> &Record {
        debug_assert!(i < self.count);
        // SAFETY: `i < count`; the records were initialised when the slots were carved
        // and live in the carving scope's memory, as long as `self`.
        unsafe { &*self.records.as_ptr().add(i) }
    }

    /// Claims a free slot, looking from where the last claim left off (so a ring of
    /// frames goes round), and returns its index; `None` only if every slot was held
    /// at one moment during the call.
    ///
    /// One pass over the ring can miss a free slot: one freed behind the pass while
    /// another claimer takes the free slot ahead of it leaves every slot the pass
    /// looked at busy. So a pass that finds none asks the count of held slots, which
    /// goes up after a claim and down before a free (both `SeqCst`): if it reads
    /// `count`, every slot was held at that point of the count's order, and the load
    /// is full; otherwise some slot is free or about to be, and the pass runs again.
    #[inline]
    pub(crate) fn claim(&self) -> Option<usize> {
        match self.claim_pass() {
            Some(i) => Some(i),
            None => self.claim_again(),
        }
    }

    /// The passes after a first one that found no free slot (out of line: the first
    /// pass is the hot path).
    #[cold]
    #[inline(never)]
    fn claim_again(&self) -> Option<usize> {
        let n = self.count;
        let mut passes = 0u32;
        loop {
            if self.held.load(Ordering::SeqCst) >= n {
                return None;
            }
            // A slot was freed behind the pass, or a claimer or an unload is between
            // its state change and its count: a few instructions, unless it is
            // preempted there.
            passes = passes.wrapping_add(1);
            crate::sync::spin_hint();
            #[cfg(all(feature = "std", not(loom)))]
            if passes % 64 == 0 {
                std::thread::yield_now();
            }
            // Loom explores every switch inside this wait and runs out of branches; its
            // models are about waking waiters, which a `None` here sends to the futex
            // (no wake-up is lost: a free bumps it after its `FREE`). The stress test
            // `a_load_is_never_full_while_a_slot_is_free` checks the exact `Full`.
            #[cfg(loom)]
            if passes > 2 {
                return None;
            }
            if let Some(i) = self.claim_pass() {
                return Some(i);
            }
        }
    }

    /// One pass over the ring from where the last claim left off.
    #[inline]
    fn claim_pass(&self) -> Option<usize> {
        let n = self.count;
        // `next` is always below `count` (it is stored wrapped), and `count > 0`.
        let first = self.next.load(Ordering::Relaxed);
        debug_assert!(first < n);
        let mut i = first;
        loop {
            let after = if i + 1 == n { 0 } else { i + 1 };
            if self.record(i).try_claim() {
                self.next.store(after, Ordering::Relaxed);
                // After the claim, so the count never says more slots are held than
                // are (see `claim`).
                let held = self.held.fetch_add(1, Ordering::SeqCst) + 1;
                if held > self.most_held.load(Ordering::Relaxed) {
                    self.most_held.fetch_max(held, Ordering::Relaxed);
                }
                return Some(i);
            }
            if after == first {
                return None;
            }
            i = after;
        }
    }
}

impl core::fmt::Debug for Slots {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Slots")
            .field("name", &self.name())
            .field("count", &self.count)
            .field("bytes_each", &self.bytes_each)
            .field("loaded", &self.loaded())
            .finish()
    }
}

impl<'s> ScopeStack<'s> {
    /// Carves `count` slots of `bytes_each` bytes from this scope: see [`Slots`].
    ///
    /// # Panics
    /// Where [`try_new_slots`](Self::try_new_slots) returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 2, 256 << 10);
    ///     assert_eq!(levels.count(), 2);
    /// });
    /// ```
    #[track_caller]
    pub fn new_slots(&self, name: &str, count: usize, bytes_each: usize) -> &'s Slots {
        match self.try_new_slots(name, count, bytes_each) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Carves `count` slots of `bytes_each` bytes from this scope, or says why it
    /// cannot. The scope gives `count * bytes_each` bytes (each slot rounded up to 64)
    /// plus a table of about 420 bytes per slot (on 64-bit targets).
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`] for a `count` or `bytes_each` of 0;
    /// - [`AllocErrorKind::CapacityOverflow`] when `count * bytes_each` overflows;
    /// - [`AllocErrorKind::OutOfMemory`] (or a budget's error) when the scope has no
    ///   room; memory taken before the failing part stays taken until the scope ends.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let err = game.try_new_slots("levels", 0, 1024).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::InvalidCapacity);
    ///     let err = game.try_new_slots("levels", usize::MAX / 2, 1024).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::CapacityOverflow);
    ///     let err = game.try_new_slots("levels", 2, 1 << 20).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    /// });
    /// ```
    pub fn try_new_slots(
        &self,
        name: &str,
        count: usize,
        bytes_each: usize,
    ) -> Result<&'s Slots, AllocError> {
        try_new_slots_in(self, name, count, bytes_each)
    }
}

/// The one body of `try_new_slots`, for every surface.
pub(crate) fn try_new_slots_in<'s, C: Surface<'s>>(
    c: C,
    name: &str,
    count: usize,
    bytes_each: usize,
) -> Result<&'s Slots, AllocError> {
    carve_slots(c, name, count, bytes_each, None)
}

/// The sizes `try_new_slots` carves: the distance between sub-blocks, and the layout
/// of the whole region; or the error (of kind `InvalidCapacity` or
/// `CapacityOverflow`), made by `error`.
pub(crate) fn slot_sizes(
    count: usize,
    bytes_each: usize,
    error: impl Fn(AllocErrorKind, usize, usize) -> AllocError,
) -> Result<(usize, Layout), AllocError> {
    if count == 0 || bytes_each == 0 {
        return Err(error(AllocErrorKind::InvalidCapacity, 0, SLOT_ALIGN));
    }
    let overflow = || error(AllocErrorKind::CapacityOverflow, usize::MAX, SLOT_ALIGN);
    let stride = bytes_each
        .checked_add(SLOT_ALIGN - 1)
        .ok_or_else(overflow)?
        & !(SLOT_ALIGN - 1);
    let region_bytes = stride.checked_mul(count).ok_or_else(overflow)?;
    let region_layout =
        Layout::from_size_align(region_bytes, SLOT_ALIGN).map_err(|_| overflow())?;
    Layout::array::<Record>(count).map_err(|_| overflow())?;
    Ok((stride, region_layout))
}

/// `try_new_slots_in`, recording the root scope of a set that lives as long as the
/// program (`home`, see `super::forever`).
pub(crate) fn carve_slots<'s, C: Surface<'s>>(
    c: C,
    name: &str,
    count: usize,
    bytes_each: usize,
    home: Option<(NonNull<ScopeInfo>, NonNull<LinearAllocator>)>,
) -> Result<&'s Slots, AllocError> {
    let (stride, region_layout) = slot_sizes(count, bytes_each, |kind, size, align| {
        c.error(kind, size, align)
    })?;
    let records = try_alloc_array_uninit::<C, Record>(c, count)?;
    let region = place::try_alloc_layout(c, region_layout)?;
    let name = NonNull::from(&*place::try_alloc_str(c, name)?);
    for i in 0..count {
        let start = region.as_ptr().addr() + i * stride;
        let block = LinearAllocator::sub_block(c.ptr_at(start), bytes_each);
        // SAFETY: `records` has room for `count` records (just carved), and the
        // new record is not yet shared.
        unsafe {
            let rec = records.as_ptr().add(i);
            rec.write(Record::new(block));
            // A shared borrow of the one field, through the cell's raw pointer (as
            // every later access is), so no access to another field invalidates it.
            let block = &*core::ptr::addr_of!((*(*rec).holder_ptr()).block);
            // The sub-block's scopes find their block through its root cursor.
            block.root().set_owner(NonNull::from(block).cast());
        }
    }
    let slots = Slots {
        records,
        count,
        bytes_each,
        stride,
        region: region.as_ptr().addr(),
        name,
        next: AtomicUsize::new(0),
        held: AtomicUsize::new(0),
        most_held: AtomicUsize::new(0),
        #[cfg(feature = "std")]
        waiters: crate::sync::AtomicU32::new(0),
        #[cfg(feature = "std")]
        futex: crate::sync::Futex::new(),
        #[cfg(feature = "std")]
        tasks: Default::default(),
        home,
    };
    // A finalizer drops it with the scope (its futex may own OS resources); the
    // records need none: a slot still held then was leaked on purpose
    // (`mem::forget` of its `Loaded`), and leaking is what it asked for.
    let slots: &'s Slots = // SAFETY: a `Slots` is `'static` and `Send`, so any surface's finalizer
    // thread may drop it.
    unsafe { place::try_new_object(c, slots) }.map_err(|e| e.error)?;
    #[cfg(feature = "alloc")]
    // SAFETY: the link names the `Slots`, which lives in this scope's memory until
    // the scope ends; `slots_snapshot` reads only its atomics.
    unsafe {
        c.register_pool(crate::scope::info::PoolLink {
            ptr: NonNull::from(slots).cast(),
            words: [0; 5],
            kind: SLOTS_KIND,
            type_name: "",
            snapshot: slots_snapshot,
            next: None,
        })
    };
    Ok(slots)
}

/// The pool-style summary of a `Slots` (held slots out of `count`).
///
/// # Safety
/// `link.ptr` points at a live `Slots`.
#[cfg(feature = "alloc")]
unsafe fn slots_snapshot(link: &crate::scope::info::PoolLink) -> crate::scope::info::PoolSnapshot {
    // SAFETY: per the caller.
    let slots = unsafe { link.ptr.cast::<Slots>().as_ref() };
    crate::scope::info::PoolSnapshot {
        len: slots.loaded(),
        capacity: slots.count,
        high_water_len: slots.most_held.load(Ordering::Relaxed),
        high_water_exact: true,
        addr: slots.region,
        bytes: slots.stride * slots.count,
        owns: None,
        heap: None,
    }
}
