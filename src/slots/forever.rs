//! Slot sets that live as long as the program: [`Slots::leak`] (one block from the
//! global heap, never given back) and [`Slots::from_static`] (a caller's
//! `&'static mut` buffer, no heap at all).
//!
//! An engine keeps its level slots and its frame ring in a long-lived struct (a Bevy
//! resource, a field of the engine, a value moved into `tokio::spawn`), which must not
//! borrow anything shorter than the program. A set carved from one of the caller's
//! scopes borrows that scope; a set made here borrows nothing, so it is
//! `&'static Slots`, and the [`Loaded`](crate::Loaded) values it hands out are
//! `Loaded<'static, R, K>`. Everything else is as for any set: each slot is still a
//! scope of its own that rewinds when it unloads.
//!
//! This module owns the layout of such a set's memory. Invariants:
//! - The memory is never given back: a leaked block is never freed, and a static
//!   buffer is lent for `'static`. At its (aligned) start lies the *home*: a block over
//!   the rest of the memory and the record of a root scope on that block, followed by
//!   a copy of the set's name (the record's name). The root scope is opened once,
//!   without a closure, and never closes; the set is carved in it by the code every
//!   scope uses (`super::carve`), so the table, the region and the `Slots` object live
//!   in the block, for `'static`.
//! - After the carve nothing writes the home: the root scope's handle is dropped (it
//!   has no destructor; no `CloseScope` exists for it), the slots are blocks of their
//!   own (nothing a slot does touches the home's block), and the `Slots` finalizer on
//!   the root chain never runs. Reports read the home's record, its container list
//!   (atomics), the bump pointer and the high-water mark (relaxed atomics), exactly
//!   what a [`MapHandle`](crate::MapHandle) may read of a live scope, so
//!   [`Slots::map_handle`] hands out a `MapHandle<'static>`.
//! - Only what lives for `'static` gets into a root: a root is built by a closure that
//!   is higher-ranked over the slot scope's lifetime (rule 10), so it holds values
//!   placed in its slot, or data that lives as long as the program, and nothing
//!   borrowed from a local or from an outer, shorter scope (the `Rule10Static*` cases
//!   in `src/rules/cases.rs` prove it).

use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::{self, NonNull};

use crate::block::linear::LinearAllocator;
use crate::error::{AllocError, AllocErrorKind};
use crate::scope::info::ScopeInfo;
use crate::scope::ScopeStack;

use super::carve::{carve_slots, slot_sizes, Slots};

/// The root scope of a set that lives as long as the program: its block (the memory
/// after the home and the name) and its record. It lives at the start of the set's
/// memory and is never dropped.
struct Home {
    block: LinearAllocator,
    info: ScopeInfo,
}

impl Slots {
    /// Makes a slot set that lives as long as the program, in one block taken from the
    /// global heap now and never given back: `count` slots of `bytes_each` bytes, as
    /// [`ScopeStack::new_slots`](crate::ScopeStack::new_slots) carves them, plus the
    /// table and a few hundred bytes of bookkeeping. This is the set's only call to the
    /// global allocator; loads and unloads never make one.
    ///
    /// The set borrows nothing, so the [`Loaded`](crate::Loaded) values it hands out
    /// are `Loaded<'static, R, K>`: they can be fields of an engine struct without a
    /// lifetime parameter, live in a `static`, or move into `std::thread::spawn`.
    /// [`map_handle`](Self::map_handle) gives its memory map.
    ///
    /// # Errors
    /// Each names the set (as [`AllocError::scope_name`]):
    /// - [`AllocErrorKind::InvalidCapacity`] for a `count` or `bytes_each` of 0;
    /// - [`AllocErrorKind::CapacityOverflow`] when the set's size overflows (or does
    ///   not fit in `isize`);
    /// - [`AllocErrorKind::HeapExhausted`] when the global allocator says no (the kind
    ///   [`LinearAllocator::with_capacity`] gives for the same failure).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// struct Level<'s> {
    ///     name: &'s str,
    /// }
    /// slot_root!(struct LevelRoot => Level);
    ///
    /// let levels: &'static Slots = Slots::leak("levels", 2, 16 << 10)?;
    /// let forest = levels
    ///     .load::<LevelRoot>("forest", |s| Level { name: s.alloc_str("forest") })
    ///     .unwrap(); // a Loaded<'static, LevelRoot>
    /// assert_eq!(forest.with(|l| l.name.len()), 6);
    /// assert_eq!(levels.loaded(), 1);
    /// drop(forest); // the slot rewinds and is free again
    /// assert_eq!(levels.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    pub fn leak(name: &str, count: usize, bytes_each: usize) -> Result<&'static Slots, AllocError> {
        use core::alloc::Layout;

        use super::carve::SLOT_ALIGN;
        use crate::limits::MAX_ALIGN;

        let error = |kind, size, align| AllocError::in_scope(kind, size, align, 0, 0, name);
        let (_, region) = slot_sizes(count, bytes_each, error)?;
        let overflow = || error(AllocErrorKind::CapacityOverflow, usize::MAX, SLOT_ALIGN);
        let bytes = leak_bytes(name.len(), count, region.size()).ok_or_else(overflow)?;
        // Aligned as `LinearAllocator::with_capacity` aligns its block, so every
        // alignment a slot's scope may ask for is known to hold (Miri's symbolic
        // alignment check sees the block's own alignment).
        let layout = Layout::from_size_align(bytes, MAX_ALIGN).map_err(|_| overflow())?;
        // SAFETY: `layout` has a non-zero size (it holds at least the home).
        let ptr = unsafe { alloc::alloc::alloc(layout) };
        let Some(base) = NonNull::new(ptr) else {
            return Err(error(AllocErrorKind::HeapExhausted, bytes, MAX_ALIGN));
        };
        #[cfg(miri)]
        // SAFETY: `base` is the start of a live heap block. The block is leaked on
        // purpose (it lives as long as the program, like a static), which is what
        // marking it a root tells Miri's leak check.
        unsafe {
            miri_static_root(base.as_ptr())
        };
        // SAFETY: a fresh block of `bytes` bytes that nothing else points at and that is
        // never freed, so it may be lent exclusively for `'static`; `MaybeUninit<u8>`
        // needs no initialisation.
        let memory: &'static mut [MaybeUninit<u8>] =
            unsafe { core::slice::from_raw_parts_mut(base.as_ptr().cast(), bytes) };
        let slots = Slots::from_static(name, memory, count, bytes_each);
        debug_assert!(slots.is_ok(), "leak_bytes undercounts: {slots:?}");
        slots
    }

    /// Makes a slot set that lives as long as the program over a buffer you give it
    /// for good (`no_std`: no heap involved): `count` slots of `bytes_each` bytes, as
    /// [`ScopeStack::new_slots`](crate::ScopeStack::new_slots) carves them, with the
    /// set's bookkeeping (a few hundred bytes, plus about 420 bytes a slot on 64-bit
    /// targets) at the start of the buffer.
    ///
    /// Like [`Slots::leak`], the set borrows nothing: its [`Loaded`](crate::Loaded)
    /// values are `Loaded<'static, R, K>`. The buffer is used up even when the call
    /// fails. The buffer may have any alignment (the slots are padded to start on
    /// cache lines); under Miri's `-Zmiri-symbolic-alignment-check`, give it the
    /// largest alignment its slots' scopes will ask for: 64 for the slots, 128 for a
    /// [`load_concurrent`](Self::load_concurrent), as below.
    ///
    /// # Errors
    /// Each names the set (as [`AllocError::scope_name`]):
    /// - [`AllocErrorKind::InvalidCapacity`] for a `count` or `bytes_each` of 0;
    /// - [`AllocErrorKind::CapacityOverflow`] when the set's size overflows;
    /// - [`AllocErrorKind::OutOfMemory`] when the buffer is too small.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use scope_stack::{slot_root, AllocErrorKind, Slots};
    ///
    /// #[repr(align(128))]
    /// struct Buffer([MaybeUninit<u8>; 8192]);
    /// static mut BUFFER: Buffer = Buffer([MaybeUninit::uninit(); 8192]);
    /// static mut TINY: Buffer = Buffer([MaybeUninit::uninit(); 8192]);
    ///
    /// slot_root!(struct Numbers = for<'s> &'s [u32]);
    ///
    /// // SAFETY: this is the only place that uses `BUFFER`, and it runs once.
    /// let buffer = unsafe { &mut (*core::ptr::addr_of_mut!(BUFFER)).0 };
    /// let frames: &'static Slots = Slots::from_static("frames", buffer, 2, 2048)?;
    /// let frame = frames.load::<Numbers>("frame 1", |s| &*s.alloc_slice_copy(&[1, 2, 3])).unwrap();
    /// assert_eq!(frame.with(|n| n.iter().sum::<u32>()), 6);
    ///
    /// // SAFETY: as above, for `TINY`.
    /// let tiny = unsafe { &mut (*core::ptr::addr_of_mut!(TINY)).0 };
    /// let err = Slots::from_static("too big", tiny, 4, 4096).unwrap_err();
    /// assert_eq!((err.kind(), err.scope_name()), (AllocErrorKind::OutOfMemory, "too big"));
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn from_static(
        name: &str,
        memory: &'static mut [MaybeUninit<u8>],
        count: usize,
        bytes_each: usize,
    ) -> Result<&'static Slots, AllocError> {
        let len = memory.len();
        let error = |kind, size, align| AllocError::in_scope(kind, size, align, len, len, name);
        slot_sizes(count, bytes_each, error)?;
        // A pointer with the provenance of the whole buffer, which this set owns from
        // now on.
        let base = NonNull::from(memory).cast::<u8>();
        let start = base.as_ptr().addr();
        let end = start.saturating_add(len);
        let home_align = align_of::<Home>();
        let laid_out = start
            .checked_next_multiple_of(home_align)
            .and_then(|home_at| {
                let name_at = home_at.checked_add(size_of::<Home>())?;
                let block_at = name_at.checked_add(name.len())?;
                Some((home_at, name_at, block_at))
            })
            .filter(|&(_, _, block_at)| block_at <= end);
        let Some((home_at, name_at, block_at)) = laid_out else {
            let needed = size_of::<Home>()
                .saturating_add(name.len())
                .saturating_add(home_align - 1);
            return Err(error(AllocErrorKind::OutOfMemory, needed, home_align));
        };
        #[cfg(feature = "tracy")]
        crate::profiler::watch();
        // SAFETY: `home_at..block_at` lies inside the buffer (checked above), which this
        // call owns exclusively for `'static` and never gives back; every pointer is
        // derived from `base`, so it carries the buffer's provenance. The home is
        // aligned, written before it is borrowed, and never written again (module
        // invariant), so the shared `&'static Home` stays valid: what changes in it
        // later changes through its `Cell`s and atomics. The name copy and the home do
        // not overlap the block, which begins at `block_at`.
        unsafe {
            let home_ptr = base.as_ptr().with_addr(home_at).cast::<Home>();
            let name_ptr = base.as_ptr().with_addr(name_at);
            ptr::copy_nonoverlapping(name.as_ptr(), name_ptr, name.len());
            let name: &'static str =
                core::str::from_utf8_unchecked(core::slice::from_raw_parts(name_ptr, name.len()));
            let block = LinearAllocator::sub_block(
                NonNull::new_unchecked(base.as_ptr().with_addr(block_at)),
                end - block_at,
            );
            let info = ScopeInfo::new(name, block.start_addr(), None, None);
            home_ptr.write(Home { block, info });
            let home: &'static Home = &*home_ptr;
            // The root scope opens, as `LinearAllocator::scope` opens one, but with no
            // closure: it never closes (module invariant).
            home.block
                .root()
                .set_owner(NonNull::from(&home.block).cast());
            home.block.set_innermost(Some(NonNull::from(&home.info)));
            // The record is the innermost (and only) scope of its block for good, and
            // both it and the cursor live for `'static`.
            let handle = ScopeStack::from_parts(home.block.root(), &home.info);
            let at_home = (NonNull::from(&home.info), NonNull::from(&home.block));
            carve_slots(&handle, name, count, bytes_each, Some(at_home))
        }
    }
}

/// An upper bound on what [`Slots::leak`] needs for a set whose name is `name_len`
/// bytes long and whose region is `region_bytes`: the home and its copy of the name,
/// then what `carve_slots` takes from the home's block (the table, the region, the
/// set's own copy of the name, the `Slots` with its finalizer record, the report link
/// and its extras), each with room to align it. `None` on overflow.
#[cfg(feature = "alloc")]
fn leak_bytes(name_len: usize, count: usize, region_bytes: usize) -> Option<usize> {
    use super::carve::SLOT_ALIGN;
    use super::table::Record;
    use crate::scope::info::{Extras, PoolLink};

    /// A finalizer record and what aligning the values around it may cost.
    const RECORDS: usize = 256;
    let table = size_of::<Record>().checked_mul(count)?;
    [
        size_of::<Home>(),
        name_len,
        table,
        align_of::<Record>(),
        region_bytes,
        SLOT_ALIGN,
        name_len,
        size_of::<Slots>() + align_of::<Slots>(),
        size_of::<Extras>() + align_of::<Extras>(),
        size_of::<PoolLink>() + align_of::<PoolLink>(),
        RECORDS,
    ]
    .into_iter()
    .try_fold(0usize, usize::checked_add)
}

#[cfg(miri)]
unsafe extern "Rust" {
    /// Miri's hook that marks a heap block as reachable from a static: the block and
    /// what it points at are not reported as leaked when the program ends.
    fn miri_static_root(ptr: *const u8);
}
