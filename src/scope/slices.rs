//! Slices in a scope: copies, clones, fills, and slices collected from iterators of
//! known or unknown length.
//!
//! This module owns the placement of many values at once. Invariants: a slice's
//! elements are all written before its one finalizer record is linked; if the code that
//! makes them panics, the ones made so far are dropped and, when the slice is still the
//! newest allocation, its room is given back; while `alloc_iter` claims room ahead of
//! the elements it has built, statistics leave the claimed tail out.
use core::mem::{align_of, needs_drop, size_of};
use core::ptr::{self, NonNull};

use crate::block::cursor::Cursor;
use crate::block::linear::LinearAllocator;
use crate::block::reservation::SavedGaps;
use crate::error::{AllocError, AllocErrorKind, AllocErrorWith};
use crate::limits::MAX_ALIGN;

use super::finalizer::{self, SliceLayout};
use super::{dangling, fill, ScopeStack};

impl<'s> ScopeStack<'s> {
    /// Copies a slice into the scope.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let xs = a.alloc_slice_copy(&[1, 2, 3]);
    ///     xs[0] = 9;
    ///     assert_eq!(xs, &[9, 2, 3]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &'s mut [T] {
        match self.try_alloc_slice_copy(src) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Copies a slice into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_copy(&[0u32; 3]).is_err()));
    /// ```
    pub fn try_alloc_slice_copy<T: Copy>(&self, src: &[T]) -> Result<&'s mut [T], AllocError> {
        let dst = self.try_alloc_array_uninit::<T>(src.len())?;
        // SAFETY: `dst` has room for `src.len()` `T`s and does not overlap `src` (it is
        // fresh memory). `T: Copy`, so a bitwise copy is a valid value.
        unsafe {
            ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr(), src.len());
            Ok(core::slice::from_raw_parts_mut(dst.as_ptr(), src.len()))
        }
    }

    /// Clones every element of a slice into the scope. If `T` needs drop, one finalizer
    /// record covers the whole slice. If a `clone` panics, the clones made so far are
    /// dropped and the slice's memory is given back, as in
    /// [`alloc_slice_fill_with`](Self::alloc_slice_fill_with).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let names = a.alloc_slice_clone(&[String::from("frog"), String::from("toad")]);
    ///     assert_eq!(names[1], "toad");
    ///     assert_eq!(a.finalizer_count(), 1);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_clone<T: Clone + 'static>(&self, src: &[T]) -> &'s mut [T] {
        match self.try_alloc_slice_clone(src) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Clones a slice into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_clone(&[String::new()]).is_err()));
    /// ```
    pub fn try_alloc_slice_clone<T: Clone + 'static>(
        &self,
        src: &[T],
    ) -> Result<&'s mut [T], AllocError> {
        self.try_alloc_slice_fill_with(src.len(), |i| src[i].clone())
    }

    /// Builds a slice of `len` elements from `f(0), f(1), ...`. If `T` needs drop, one
    /// finalizer record covers the whole slice. If `f` panics, the elements built so far
    /// are dropped and the panic goes on; the slice's memory is given back too, unless
    /// `f` allocated from this scope meanwhile.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let squares = a.alloc_slice_fill_with(5, |i| i * i);
    ///     assert_eq!(squares, &[0, 1, 4, 9, 16]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_with<T: 'static>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> &'s mut [T] {
        match self.try_alloc_slice_fill_with(len, f) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Builds a slice from `f`, or says why the memory cannot be had (`f` is then not
    /// called).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_fill_with(5, |i| i as u64).is_err()));
    /// ```
    pub fn try_alloc_slice_fill_with<T: 'static>(
        &self,
        len: usize,
        mut f: impl FnMut(usize) -> T,
    ) -> Result<&'s mut [T], AllocError> {
        let from = self.cursor.cur();
        if !needs_drop::<T>() || len == 0 {
            let dst = if size_of::<T>() == 0 {
                dangling(align_of::<T>()).cast::<T>()
            } else {
                self.try_alloc_array_uninit::<T>(len)?
            };
            let give_back = self.give_back_on_panic(from);
            // SAFETY: `dst` has room for `len` elements (or `T` is zero-sized); `fill`
            // initialises all of them or drops what it built and panics.
            unsafe {
                fill(dst, len, &mut f);
                core::mem::forget(give_back);
                return Ok(core::slice::from_raw_parts_mut(dst.as_ptr(), len));
            }
        }
        let size = SliceLayout::<T>::size(len).ok_or_else(|| {
            self.error(
                AllocErrorKind::CapacityOverflow,
                usize::MAX,
                align_of::<T>(),
            )
        })?;
        let align = SliceLayout::<T>::ALIGN;
        if align > MAX_ALIGN {
            return Err(self.too_aligned(size, align));
        }
        let record = self
            .cursor
            .bump_any(size, align)
            .ok_or_else(|| self.oom(size, align))?;
        let give_back = self.give_back_on_panic(from);
        // SAFETY: `record` has room for the slice record and `len` elements at the right
        // alignment. The record is linked only once every element is built, so a panic
        // in `f` leaves it unlinked and the guard may release its bytes.
        unsafe {
            let first = finalizer::write_slice_record::<T>(record, len);
            fill(first, len, &mut f);
            core::mem::forget(give_back);
            self.info.chain.link(record);
            Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
        }
    }

    /// Collects an iterator into a slice in the scope, for any iterator: its length need
    /// not be known up front. If `T` needs drop, one finalizer record covers the whole
    /// slice, as in [`alloc_slice_fill_with`](Self::alloc_slice_fill_with).
    ///
    /// The allocating scope is the innermost one, so the slice is at the top of the block
    /// and grows in place there: no copying, no size guess, no temporary `Vec`. Room is
    /// claimed ahead in growing steps (so the per-element cost is one compare and one
    /// write) and the unused tail is given back at the end. Like
    /// [`alloc_fmt`](Self::alloc_fmt)'s reservation, the room claimed ahead is never
    /// counted as use or as a high-water mark: statistics read while the iterator runs
    /// may leave out the newest elements, and are exact once the slice is done.
    ///
    /// The iterator may allocate from this scope while it is collected (for example a
    /// `map` that calls [`alloc_str`](Self::alloc_str)): the elements built so far are
    /// then moved above the new allocation and collection goes on. The bytes they left
    /// (and the room claimed ahead of them) stay taken until the scope ends, so such an
    /// iterator costs more memory; nothing is corrupted.
    ///
    /// If the iterator (or a value's construction) panics, the elements built so far are
    /// dropped, each exactly once, the memory is given back (unless the iterator
    /// allocated from this scope meanwhile) and the panic goes on.
    ///
    /// # Panics
    /// When the scope runs out of memory; see [`try_alloc_iter`](Self::try_alloc_iter).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("a", |a| {
    ///     let evens = a.alloc_iter((0..20u32).filter(|n| n % 2 == 0));
    ///     assert_eq!(evens.len(), 10);
    ///     let words = a.alloc_iter("frog toad newt".split(' ').map(String::from));
    ///     assert_eq!(words[2], "newt");
    ///     assert_eq!(a.finalizer_count(), 1); // one record for the three Strings
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_iter<T: 'static>(&self, iter: impl IntoIterator<Item = T>) -> &'s mut [T] {
        match self.try_alloc_iter(iter) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Collects an iterator into a slice in the scope, or says why it cannot. On error
    /// the elements built so far are dropped and their memory is given back; the
    /// iterator is dropped too.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| {
    ///     let err = a.try_alloc_iter((0..5u64).map(|n| n * n)).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    ///     assert_eq!(a.used(), 0);
    ///     assert_eq!(a.try_alloc_iter(0..2u64).unwrap(), &[0, 1]);
    /// });
    /// ```
    pub fn try_alloc_iter<T: 'static>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'s mut [T], AllocError> {
        let mut iter = iter.into_iter();
        // Room before the first element: a slice record when `T` needs drop.
        let (head, align) = if needs_drop::<T>() {
            (SliceLayout::<T>::VALUE_OFFSET, SliceLayout::<T>::ALIGN)
        } else {
            (0, align_of::<T>())
        };
        if align > MAX_ALIGN {
            return Err(self.too_aligned(size_of::<T>(), align));
        }
        // Nothing is claimed until the first element comes: an empty iterator takes no
        // memory and links no record. Until then `end == claimed == usize::MAX`, which
        // sends the first element to `claim_more`.
        let mut grow = Growing::<T> {
            alloc: self.alloc(),
            cursor: self.cursor,
            from: 0,
            first: dangling(align_of::<T>()).cast::<T>(),
            len: 0,
            end: usize::MAX,
            claimed: usize::MAX,
            outer: self.alloc().save_gaps(),
        };
        for value in iter.by_ref() {
            if size_of::<T>() == 0 {
                // Zero-sized elements take no room; a slice record does.
                if needs_drop::<T>() && grow.len == 0 {
                    if let Err(e) = self.claim_more(&mut grow, head, align) {
                        drop(value);
                        return Err(e);
                    }
                }
                // SAFETY: any aligned pointer is valid for a zero-sized write; `first` is
                // aligned. The value is forgotten into the slice and counted.
                unsafe { grow.first.as_ptr().write(value) };
                grow.len += 1;
                continue;
            }
            if grow.claimed - grow.end < size_of::<T>() {
                if let Err(e) = self.claim_more(&mut grow, head, align) {
                    drop(value);
                    return Err(e);
                }
            }
            // SAFETY: `[end, end + size)` lies in the room this call claimed
            // (`end + size <= claimed`, and nothing else is handed out below `claimed`);
            // `end` is aligned for `T` (elements are contiguous from the aligned
            // `first`).
            unsafe { grow.first.as_ptr().add(grow.len).write(value) };
            grow.len += 1;
            grow.end += size_of::<T>();
            // The element is in use now: the gap statistics leave out starts after it,
            // so memory the iterator takes above the claim is counted on top of it.
            self.alloc().raise_gap_start(grow.end);
        }
        // The iterator's own drop may run user code; the elements stay guarded until then.
        drop(iter);
        let len = grow.len;
        let first = grow.first;
        if len != 0 && size_of::<T>() != 0 {
            // Give back the room claimed ahead (if it is still the newest allocation)
            // and count only what was kept.
            self.alloc()
                .end_reservation(self.cursor, grow.claimed, grow.end, grow.outer);
        } else {
            self.alloc().restore_gaps(&grow.outer);
        }
        core::mem::forget(grow);
        // SAFETY: `len` initialised elements from `first`; when `T` needs drop and `len`
        // is not 0, a slice record's room lies right before them (`head` bytes at
        // `align`, carved by `claim_more`). The record is linked now that every element
        // is built (records the iterator linked meanwhile were finished first, so they
        // are destroyed after the slice). `T: 'static` (drop rule).
        unsafe {
            if needs_drop::<T>() && len != 0 {
                let record = first.cast::<u8>().sub(head);
                let slot = finalizer::write_slice_record::<T>(record, len);
                debug_assert_eq!(slot, first);
                self.info.chain.link(record);
            }
            Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
        }
    }

    /// Claims room for at least one more element of a slice being collected. If the
    /// claimed room is still the newest allocation, it grows in place (doubling, within
    /// the limit). Otherwise (the first element, or the iterator allocated from this
    /// scope since the last claim) it carves room at the top of the block and moves the
    /// elements built so far there, leaving their old bytes as a hole.
    #[cold]
    #[inline(never)]
    fn claim_more<T>(
        &self,
        grow: &mut Growing<'_, T>,
        head: usize,
        align: usize,
    ) -> Result<(), AllocError> {
        // Claim ahead as much as is built so far (at least 256 bytes), like a `Vec`
        // doubling, so collecting `n` elements takes O(log n) claims.
        let size = size_of::<T>();
        let built = grow.len * size;
        // Zero-sized elements need room for the record alone.
        let ahead = if size == 0 {
            0
        } else {
            built.max(256).max(size)
        };
        let cur = self.cursor.cur();
        let limit = self.cursor.limit();
        if cur == grow.claimed {
            // Grow in place: the elements stay where they are.
            let need = grow.end + size - grow.claimed;
            let room = limit.saturating_sub(cur);
            if room < need {
                return Err(self.oom(size, align_of::<T>()));
            }
            grow.claimed = cur + ahead.max(need).min(room);
            self.cursor.set_cur(grow.claimed);
        } else {
            let from = cur;
            let bytes = head + built + size;
            let start = self
                .cursor
                .bump_any(bytes, align)
                .ok_or_else(|| self.oom(bytes, align))?;
            // SAFETY: `start` has room for `head` bytes and `len + 1` elements, is fresh
            // (above everything, so it does not overlap the old elements) and aligned.
            // The elements are moved bitwise; their old copies are never used again.
            unsafe {
                let first = start.add(head).cast::<T>();
                ptr::copy_nonoverlapping(grow.first.as_ptr(), first.as_ptr(), grow.len);
                grow.first = first;
            }
            grow.end = start.as_ptr().addr() + head + built;
            // Claim some more ahead if there is room; the bump above is the minimum.
            let cur = self.cursor.cur();
            let extra = limit.saturating_sub(cur).min(ahead);
            self.cursor.set_cur(cur + extra);
            grow.claimed = cur + extra;
            // If collection fails now, the new place (and its padding) is what goes back.
            grow.from = from;
        }
        // Statistics leave out the room claimed ahead (never counted as use or as a
        // high-water mark), and count what the iterator allocates above it.
        self.alloc().set_gap(&grow.outer, grow.end, grow.claimed);
        Ok(())
    }

    /// Collects an iterator of known length into a slice in the scope. The memory is
    /// reserved once, up front, from [`len`](ExactSizeIterator::len); otherwise like
    /// [`alloc_iter`](Self::alloc_iter) (one finalizer record if `T` needs drop; a panic
    /// drops what was built).
    ///
    /// # Panics
    /// When the scope is out of memory, or when the iterator yields fewer items than its
    /// `len` said (the items built are dropped first). Items past `len` are not taken.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let squares = a.alloc_iter_exact((1..5u32).map(|n| n * n));
    ///     assert_eq!(squares, &[1, 4, 9, 16]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_iter_exact<T: 'static, I>(&self, iter: I) -> &'s mut [T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        match self.try_alloc_iter_exact(iter) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Collects an iterator of known length into a slice in the scope, or says why the
    /// memory cannot be had (no item is taken from the iterator then).
    ///
    /// # Panics
    /// When the iterator yields fewer items than its `len` said.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_iter_exact([1u32, 2, 3]).is_err()));
    /// ```
    #[track_caller]
    pub fn try_alloc_iter_exact<T: 'static, I>(&self, iter: I) -> Result<&'s mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut iter = iter.into_iter();
        let len = iter.len();
        self.try_alloc_slice_fill_with(len, |i| match iter.next() {
            Some(v) => v,
            None => short_iterator(len, i),
        })
    }

    /// Fills a new slice of `len` elements with copies of `value`. Any `Copy` type
    /// (such a type never needs drop, so no `'static` is asked).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| assert_eq!(a.alloc_slice_fill_copy(3, 7u8), &[7, 7, 7]));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_copy<T: Copy>(&self, len: usize, value: T) -> &'s mut [T] {
        match self.try_alloc_slice_fill_copy(len, value) {
            Ok(s) => s,
            Err(e) => self.fail(e.error),
        }
    }

    /// Fills a new slice with copies of `value`, or hands `value` back with the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| {
    ///     assert_eq!(a.try_alloc_slice_fill_copy(3, 9u32).unwrap_err().into_value(), 9);
    /// });
    /// ```
    pub fn try_alloc_slice_fill_copy<T: Copy>(
        &self,
        len: usize,
        value: T,
    ) -> Result<&'s mut [T], AllocErrorWith<T>> {
        let first = match self.try_alloc_array_uninit::<T>(len) {
            Ok(p) => p,
            Err(error) => return Err(AllocErrorWith { error, value }),
        };
        // SAFETY: room for `len` `T`s (or `T` is zero-sized and `first` is aligned);
        // copying a `Copy` value cannot panic.
        unsafe {
            for i in 0..len {
                first.as_ptr().add(i).write(value);
            }
            Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
        }
    }

    /// Fills a new slice of `len` elements with clones of `value`. If `T` needs drop,
    /// one finalizer record covers the slice; if a `clone` panics, the clones made so far
    /// are dropped and the memory is given back.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let rows = a.alloc_slice_fill_clone(2, &vec![0u8; 3]);
    ///     rows[1][2] = 5;
    ///     assert_eq!(rows, &[vec![0, 0, 0], vec![0, 0, 5]]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_clone<T: Clone + 'static>(&self, len: usize, value: &T) -> &'s mut [T] {
        match self.try_alloc_slice_fill_clone(len, value) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Fills a new slice with clones of `value`, or says why it cannot (no clone is made
    /// then).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_fill_clone(4, &String::new()).is_err()));
    /// ```
    pub fn try_alloc_slice_fill_clone<T: Clone + 'static>(
        &self,
        len: usize,
        value: &T,
    ) -> Result<&'s mut [T], AllocError> {
        self.try_alloc_slice_fill_with(len, |_| value.clone())
    }

    /// Fills a new slice of `len` elements with `T::default()`. If `T` needs drop, one
    /// finalizer record covers the slice.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let names = a.alloc_slice_fill_default::<String>(3);
    ///     names[0].push_str("frog");
    ///     assert_eq!(names, &["frog", "", ""]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_default<T: Default + 'static>(&self, len: usize) -> &'s mut [T] {
        match self.try_alloc_slice_fill_default(len) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Fills a new slice with `T::default()`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_fill_default::<u64>(2).is_err()));
    /// ```
    pub fn try_alloc_slice_fill_default<T: Default + 'static>(
        &self,
        len: usize,
    ) -> Result<&'s mut [T], AllocError> {
        self.try_alloc_slice_fill_with(len, |_| T::default())
    }
}

/// A slice being collected by `ScopeStack::try_alloc_iter`: `len` elements built from
/// `first`, ending at `end`, in room claimed up to `claimed`. If dropped (an error or a
/// panic), it drops those elements and, if the claimed room is still the newest
/// allocation, gives it back down to `from`; either way it restores the statistics
/// bound `outer`.
struct Growing<'a, T> {
    alloc: &'a LinearAllocator,
    cursor: &'a Cursor,
    /// The bump pointer before the slice's room (at its latest place) was carved.
    from: usize,
    first: NonNull<T>,
    len: usize,
    /// Address one past the last built element (for a zero-sized `T`, past the head).
    end: usize,
    /// Address one past the room claimed (the bump pointer, unless the iterator has
    /// allocated since).
    claimed: usize,
    /// The block's reservations when collection began (see
    /// `crate::block::reservation`), restored when it ends.
    outer: SavedGaps,
}

impl<T> Drop for Growing<'_, T> {
    #[cold]
    fn drop(&mut self) {
        /// Gives the bytes back after the drops, even if one of them panics.
        struct Rewind<'b> {
            alloc: &'b LinearAllocator,
            cursor: &'b Cursor,
            from: usize,
            end: usize,
            claimed: usize,
            outer: SavedGaps,
        }
        impl Drop for Rewind<'_> {
            fn drop(&mut self) {
                // As in `GiveBack`: only if nothing was allocated above the room. The
                // claimed tail is dropped first, uncounted; the built elements were real
                // use, so the high-water mark sees them.
                let at_top = self.cursor.cur() == self.claimed && self.claimed != self.from;
                if at_top {
                    self.cursor.set_cur(self.end);
                }
                self.alloc.restore_gaps(&self.outer);
                if at_top {
                    #[cfg(feature = "debug-fill")]
                    crate::block::debug_fill::released(self.cursor, self.from);
                    self.alloc.rewind(self.cursor, self.from);
                }
            }
        }
        let _rewind = Rewind {
            alloc: self.alloc,
            cursor: self.cursor,
            from: self.from,
            end: self.end,
            claimed: self.claimed,
            outer: self.outer,
        };
        // SAFETY: the first `len` elements were initialised and never handed out; this
        // drops each once (`drop_in_place` on a slice goes on past a panicking one).
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.len)) };
    }
}

/// The panic for an `ExactSizeIterator` that ended before its `len`.
#[cold]
#[inline(never)]
#[track_caller]
fn short_iterator(len: usize, got: usize) -> ! {
    panic!("alloc_iter_exact: the iterator said it had {len} items but ended after {got}")
}
