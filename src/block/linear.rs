//! The linear allocator: one fixed block and a bump offset.
//!
//! Invariants this module keeps:
//! - The active cursor (see `crate::block::cursor`) has `start <= cur <= limit <= end`, all
//!   addresses inside (or one past) the block, and `end <= usize::MAX - 2 * MAX_ALIGN`,
//!   so the fast path's `cur + (align - 1) + size` cannot overflow for
//!   `align, size <= MAX_ALIGN`.
//! - `active` is `None` unless a scope opened on a shared reference is live, and then
//!   points at that scope's cursor, which outlives the pointer.
//! - Every pointer handed out is derived from `base`, which carries the provenance of
//!   the whole block; addresses are turned back into pointers with `with_addr`.
//! - After construction nothing here calls the global allocator; `Drop` frees the block
//!   once (heap-backed blocks only).
//! - `high_water` is the largest `cur` ever seen. It is brought up to date whenever
//!   `cur` moves down (a rewind or an in-place free), so `max(high_water, cur)` is exact
//!   without touching the allocation fast path.
//! - While a reservation is live (`alloc_fmt` formatting, `alloc_iter` collecting, a
//!   concurrent scope open), the room it claimed but has not used is a gap that every
//!   statistic leaves out: they read addresses through `counted_to`, which subtracts
//!   the gaps beneath (see `crate::block::reservation`). Memory allocated above a gap
//!   while it lives (by the iterator or the formatting code) is counted, in `used()`
//!   and in the high-water mark.
//!
//! The allocator itself never hands out memory: scopes do (see [`ScopeStack`]). Opening
//! the outermost scope takes `&mut self`, so no two outermost scopes can be live at once.

use core::cell::Cell;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use super::cursor::Cursor;
use super::reservation::{Gaps, SavedGaps};
#[cfg(feature = "alloc")]
use crate::error::{AllocError, AllocErrorKind};

pub use crate::limits::MAX_ALIGN;

/// One fixed block of memory, reserved once, that scopes bump-allocate from.
///
/// Build one with [`with_capacity`](Self::with_capacity) (one global-heap reservation)
/// or [`from_static`](Self::from_static) (a buffer you own, no heap at all), then open
/// the outermost scope with [`scope`](Self::scope). The block never grows: running out
/// is an [`AllocError`] that says which scope ran out.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// let total = memory.scope("systems", |systems| {
///     let frogs = systems.alloc_slice_fill_with(64, |i| i as u32);
///     systems.scope("level", |level| {
///         let name = level.alloc_fmt(format_args!("level-{}", 3));
///         assert_eq!(&*name, "level-3");
///         frogs.iter().sum::<u32>()
///     })
/// });
/// assert_eq!(total, 2016);
/// assert_eq!(memory.used(), 0); // every scope has rewound
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct LinearAllocator {
    /// Pointer to the first byte, with the provenance of the whole block.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    base: NonNull<u8>,
    /// Address of the first byte.
    start: usize,
    /// Address one past the last usable byte.
    end: usize,
    /// The cursor of scopes opened with `&mut self` (see `crate::block::cursor`).
    root: Cursor,
    /// The cursor of the innermost live scope, when it is not `root` (a scope opened on a
    /// shared block). `None` whenever no such scope is live, so moving the allocator
    /// never leaves it dangling.
    active: Cell<Option<NonNull<Cursor>>>,
    /// The innermost live scope's record, or `None`. The scope layer owns the record
    /// and its type; the block only keeps the pointer (see `crate::scope::info`).
    innermost: Cell<Option<NonNull<()>>>,
    /// Largest `cur` seen so far (see the module docs). Atomic, relaxed, for the same
    /// reason as the cursor's `cur`: a [`MapHandle`](crate::MapHandle) on another thread
    /// reads it; only the owning thread writes it.
    high_water: core::sync::atomic::AtomicUsize,
    /// The live reservations, which statistics leave out (see
    /// `crate::block::reservation`).
    gaps: Gaps,
    /// The layout the block was reserved with, when it came from the global heap.
    #[cfg(feature = "alloc")]
    heap: Option<core::alloc::Layout>,
}

// SAFETY: the allocator owns its block (or an exclusive `&'static mut` buffer); nothing
// in it is tied to the creating thread. It is not `Sync` (the `Cell`s), so moving it to
// another thread moves all access with it.
unsafe impl Send for LinearAllocator {}

impl LinearAllocator {
    /// Reserves a block of `bytes` bytes from the global allocator, aligned to
    /// [`MAX_ALIGN`]. This is the only global-heap call the allocator ever makes.
    ///
    /// # Errors
    /// [`AllocErrorKind::InvalidCapacity`] for 0, [`AllocErrorKind::CapacityOverflow`]
    /// when `bytes` rounded up to [`MAX_ALIGN`] does not fit in `isize`, and
    /// [`AllocErrorKind::HeapExhausted`] when the global allocator says no.
    ///
    /// ```
    /// use scope_stack::{AllocErrorKind, LinearAllocator};
    ///
    /// let block = LinearAllocator::with_capacity(4096).unwrap();
    /// assert_eq!(block.capacity(), 4096);
    /// assert_eq!(
    ///     LinearAllocator::with_capacity(0).unwrap_err().kind(),
    ///     AllocErrorKind::InvalidCapacity
    /// );
    /// ```
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    pub fn with_capacity(bytes: usize) -> Result<LinearAllocator, AllocError> {
        use core::alloc::Layout;
        if bytes == 0 {
            return Err(AllocError::new(
                AllocErrorKind::InvalidCapacity,
                bytes,
                MAX_ALIGN,
                0,
            ));
        }
        let layout = Layout::from_size_align(bytes, MAX_ALIGN)
            .map_err(|_| AllocError::new(AllocErrorKind::CapacityOverflow, bytes, MAX_ALIGN, 0))?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc::alloc::alloc(layout) };
        let Some(base) = NonNull::new(ptr) else {
            return Err(AllocError::new(
                AllocErrorKind::HeapExhausted,
                bytes,
                MAX_ALIGN,
                0,
            ));
        };
        // With `tracy`, the first block starts the thread that watches for a profiler
        // (heap used here, at construction, never later).
        #[cfg(feature = "tracy")]
        crate::profiler::watch();
        let mut block = LinearAllocator::from_raw(base, bytes);
        block.heap = Some(layout);
        Ok(block)
    }

    /// Uses a caller-provided buffer as the block. No heap is involved, so this works
    /// without the `alloc` feature (`no_std`).
    ///
    /// The buffer may have any alignment; allocations are padded as needed. Under Miri's
    /// `-Zmiri-symbolic-alignment-check`, give the buffer the largest alignment you will
    /// request (for example by placing it inside a `#[repr(align(4096))]` struct). An
    /// empty buffer is allowed: every non-empty allocation from it then fails cleanly.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use scope_stack::LinearAllocator;
    ///
    /// static mut BUFFER: [MaybeUninit<u8>; 256] = [MaybeUninit::uninit(); 256];
    /// // SAFETY: this is the only place that uses `BUFFER`, and it runs once.
    /// let buffer: &'static mut [MaybeUninit<u8>] = unsafe { &mut *core::ptr::addr_of_mut!(BUFFER) };
    /// let mut block = LinearAllocator::from_static(buffer);
    /// assert_eq!(block.capacity(), 256);
    /// block.scope("boot", |boot| assert_eq!(*boot.new_pod(5u8), 5));
    /// ```
    pub fn from_static(buffer: &'static mut [MaybeUninit<u8>]) -> LinearAllocator {
        let len = buffer.len();
        let base = NonNull::from(buffer).cast::<u8>();
        #[cfg(feature = "tracy")]
        crate::profiler::watch();
        LinearAllocator::from_raw(base, len)
    }

    /// A block over `len` bytes at `base`, which another block owns (a slot of
    /// `crate::slots`): it is never freed by this value, and its root cursor's owner
    /// must be set (`root().set_owner`) once the value sits where it will stay.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn sub_block(base: NonNull<u8>, len: usize) -> LinearAllocator {
        LinearAllocator::from_raw(base, len)
    }

    fn from_raw(base: NonNull<u8>, len: usize) -> LinearAllocator {
        let start = base.as_ptr().addr();
        // Keep a guard band below `usize::MAX` so the fast path cannot overflow (see the
        // module docs). Real blocks never come this close; if one does, its tail is unused.
        let end = start
            .saturating_add(len)
            .min(usize::MAX - 2 * MAX_ALIGN)
            .max(start);
        LinearAllocator {
            base,
            start,
            end,
            root: Cursor::new(
                base,
                NonNull::<LinearAllocator>::dangling().cast(),
                start,
                end,
            ),
            active: Cell::new(None),
            innermost: Cell::new(None),
            high_water: core::sync::atomic::AtomicUsize::new(start),
            gaps: Gaps::new(),
            #[cfg(feature = "alloc")]
            heap: None,
        }
    }

    /// The size of the block in bytes.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// assert_eq!(LinearAllocator::with_capacity(1000).unwrap().capacity(), 1000);
    /// ```
    pub fn capacity(&self) -> usize {
        self.end - self.start
    }

    /// Bytes in use now, across all live scopes.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(1000).unwrap();
    /// block.scope("s", |s| {
    ///     s.new_pod([0u8; 100]);
    ///     assert_eq!(s.allocator().used(), 100);
    /// });
    /// assert_eq!(block.used(), 0);
    /// ```
    pub fn used(&self) -> usize {
        self.counted_to(self.active_cursor().cur()) - self.start
    }

    /// Bytes still free in the block.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(1000).unwrap();
    /// block.scope("s", |s| {
    ///     s.new_pod([0u8; 100]);
    ///     assert_eq!(s.allocator().remaining(), 900);
    /// });
    /// ```
    pub fn remaining(&self) -> usize {
        self.end - self.active_cursor().cur()
    }

    /// The most bytes ever in use at once since the block was built. Use it to size
    /// blocks for shipping. Memory that
    /// [`ScopeStack::alloc_fmt`](crate::ScopeStack::alloc_fmt) only reserved while it
    /// formatted does not count; the text it kept does.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(1000).unwrap();
    /// block.scope("s", |s| { s.new_pod([0u8; 300]); });
    /// block.scope("s", |s| { s.new_pod([0u8; 100]); });
    /// assert_eq!(block.high_water_mark(), 300);
    /// ```
    pub fn high_water_mark(&self) -> usize {
        let cur = self.counted_to(self.active_cursor().cur());
        self.high_water
            .load(core::sync::atomic::Ordering::Relaxed)
            .max(cur)
            - self.start
    }

    /// Address of the block's first byte.
    #[inline]
    pub(crate) fn start_addr(&self) -> usize {
        self.start
    }

    /// The largest bump-pointer address seen, as of the last rewind (what
    /// [`high_water_mark`](Self::high_water_mark) counts from, without the live
    /// cursor): the mark itself once everything is rewound and no reservation is live.
    #[inline]
    pub(crate) fn high_water_addr(&self) -> usize {
        self.high_water.load(core::sync::atomic::Ordering::Relaxed)
    }

    /// Starts a new high-water period: the mark drops to the bytes in use now (0, since
    /// no scope can be live while `&mut self` is held). Use it at a frame boundary.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(1000).unwrap();
    /// block.scope("s", |s| { s.new_pod([0u8; 300]); });
    /// block.reset_high_water_mark();
    /// assert_eq!(block.high_water_mark(), 0);
    /// ```
    pub fn reset_high_water_mark(&mut self) {
        let cur = self.counted_to(self.active_cursor().cur());
        self.high_water
            .store(cur, core::sync::atomic::Ordering::Relaxed);
    }

    // ----- crate-internal bump machinery (used by the scope layer) -----

    /// A pointer with the provenance of the whole block.
    #[inline]
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    /// The root cursor: the one scopes opened with `&mut self` share.
    #[inline]
    pub(crate) fn root(&self) -> &Cursor {
        &self.root
    }

    /// The cursor of a scope opened on a shared block, while one is live.
    #[inline]
    pub(crate) fn active(&self) -> Option<NonNull<Cursor>> {
        self.active.get()
    }

    /// Makes `cursor` the active one (`None`: the root), on a shared-block scope's open
    /// and close. The caller keeps it valid while it is set.
    #[inline]
    pub(crate) fn set_active(&self, cursor: Option<NonNull<Cursor>>) {
        self.active.set(cursor);
    }

    /// The innermost live scope's record, as the scope layer stored it.
    #[inline]
    pub(crate) fn innermost_raw(&self) -> Option<NonNull<()>> {
        self.innermost.get()
    }

    /// Stores the innermost live scope's record (scope layer only).
    #[inline]
    pub(crate) fn set_innermost_raw(&self, info: Option<NonNull<()>>) {
        self.innermost.set(info);
    }

    /// The cursor of the innermost live scope (the root cursor when none is nested).
    #[inline]
    pub(crate) fn active_cursor(&self) -> &Cursor {
        match self.active.get() {
            // SAFETY: `active` points at a cursor on the stack of a live `scope_shared`
            // call, which resets it before that cursor goes away.
            Some(c) => unsafe { c.as_ref() },
            None => &self.root,
        }
    }

    /// Address one past the block's last byte.
    pub(crate) fn end_addr(&self) -> usize {
        self.end
    }

    /// Moves `cursor` back to `to`, recording the high-water mark first (never above a
    /// live reservation's start).
    #[inline]
    pub(crate) fn rewind(&self, cursor: &Cursor, to: usize) {
        let cur = cursor.cur();
        debug_assert!(to >= self.start && to <= cur);
        // A new peak is rare once a program has warmed up: test, and store only then.
        // What counts is never above the bump pointer (`counted_to(cur) <= cur`), so
        // the live reservations are looked at, out of line, only when `cur` itself is
        // above the mark.
        if cur > self.high_water.load(core::sync::atomic::Ordering::Relaxed) {
            self.raise_high_water(cur);
        }
        cursor.set_cur(to);
    }

    /// Raises the high-water mark to what the bump pointer `cur` counts for.
    #[cold]
    #[inline(never)]
    fn raise_high_water(&self, cur: usize) {
        let used_to = self.counted_to(cur);
        if used_to > self.high_water.load(core::sync::atomic::Ordering::Relaxed) {
            self.high_water
                .store(used_to, core::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The bump pointer `cur` with the live reservations beneath it taken out: the
    /// address use would reach if their unused room were closed up (see
    /// `crate::block::reservation`). Statistics read every address through it.
    #[inline]
    pub(crate) fn counted_to(&self, cur: usize) -> usize {
        self.gaps.counted(cur)
    }

    /// The bytes that count between `from` and the bump pointer `cur` (a scope's start
    /// and its cursor): one compare when no reservation lies beneath `cur`.
    #[inline(always)]
    pub(crate) fn counted_between(&self, from: usize, cur: usize) -> usize {
        if cur <= self.gaps.lowest() {
            cur.saturating_sub(from)
        } else {
            self.counted_to(cur).saturating_sub(self.counted_to(from))
        }
    }

    /// Starts a temporary reservation (see `ScopeStack::try_alloc_fmt`): moves the bump
    /// pointer of `cursor` up to its limit, so nothing else can be allocated from the
    /// block, and marks the claimed room as a gap that statistics leave out. Returns
    /// what [`end_reservation`](Self::end_reservation) needs to undo it.
    #[inline]
    pub(crate) fn begin_reservation(&self, cursor: &Cursor) -> SavedGaps {
        let from = cursor.cur();
        cursor.set_cur(cursor.limit());
        let outer = self.gaps.save();
        self.gaps.set(&outer, from, cursor.limit());
        outer
    }

    /// The reservations live now, for a reservation that begins to restore when it
    /// ends (`ScopeStack::try_alloc_iter`).
    #[inline]
    pub(crate) fn save_gaps(&self) -> SavedGaps {
        self.gaps.save()
    }

    /// Marks `[from, to)` as the unused room of the reservation that saved `outer`
    /// (`ScopeStack::try_alloc_iter` calls it whenever its claim or its elements move).
    #[inline]
    pub(crate) fn set_gap(&self, outer: &SavedGaps, from: usize, to: usize) {
        self.gaps.set(outer, from, to);
    }

    /// The reservation in progress used its room up to `from`: statistics count it.
    #[inline(always)]
    pub(crate) fn raise_gap_start(&self, from: usize) {
        self.gaps.raise_from(from);
    }

    /// Ends a reservation that claimed nothing on the cursor (or whose room is gone):
    /// statistics count as they did before it began.
    #[inline]
    pub(crate) fn restore_gaps(&self, outer: &SavedGaps) {
        self.gaps.restore(outer);
    }

    /// Ends a temporary reservation that ran up to `reserved_to`: moves the bump pointer
    /// back to `keep_to` and counts only `keep_to` towards the high-water mark, since the
    /// reserved tail was never really used. `outer` is what
    /// [`begin_reservation`](Self::begin_reservation) returned. If the formatting code
    /// moved the bump pointer (possible only when nothing could be reserved), it is
    /// left where it is.
    #[inline]
    pub(crate) fn end_reservation(
        &self,
        cursor: &Cursor,
        reserved_to: usize,
        keep_to: usize,
        outer: SavedGaps,
    ) {
        self.gaps.restore(&outer);
        if cursor.cur() == reserved_to {
            debug_assert!(keep_to <= reserved_to);
            cursor.set_cur(keep_to);
            self.rewind(cursor, keep_to);
        }
    }

    /// Offset of an address inside the block (or one past it) from the block's start.
    /// An address outside gives the nearest offset that is inside, so a report never
    /// subtracts blindly (zero-sized arrays have dangling addresses; see
    /// [`offset_in_block`](Self::offset_in_block) to tell them apart).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn offset_of(&self, addr: usize) -> usize {
        addr.clamp(self.start, self.end) - self.start
    }
}

impl Drop for LinearAllocator {
    fn drop(&mut self) {
        #[cfg(feature = "alloc")]
        if let Some(layout) = self.heap {
            // SAFETY: the block was allocated in `with_capacity` with exactly this layout
            // and is freed only here. No scope is live (they borrow `self`).
            unsafe { alloc::alloc::dealloc(self.base.as_ptr(), layout) };
        }
    }
}

impl core::fmt::Debug for LinearAllocator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LinearAllocator")
            .field("capacity", &self.capacity())
            .field("used", &self.used())
            .field("high_water_mark", &self.high_water_mark())
            .finish()
    }
}

impl Cursor {
    /// The block this cursor belongs to (see `Cursor::owner`).
    #[inline]
    pub(crate) fn block(&self) -> NonNull<LinearAllocator> {
        self.owner().cast()
    }
}
