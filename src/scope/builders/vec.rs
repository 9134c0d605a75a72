//! [`ScopeVec`]: a vector that grows in place at the top of a scope's region and
//! freezes into `&'s mut [T]`.
//!
//! Invariant: `first..first + len` holds initialised elements, `len <= cap`, and for a
//! sized `T` with `cap != 0` the room `[first, first + cap)` ends at `claimed`, the end
//! of what this builder claimed (a record's head room lies before `first` when `T`
//! needs drop). The builder grows in place only while `claimed` is the region's top.
use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, needs_drop, size_of, ManuallyDrop};
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};

use crate::error::{AllocError, AllocErrorWith};
use crate::scope::finalizer::{self, SliceLayout};
use crate::scope::place::core::{
    bump_checked as bump_room, or_fail, overflow as overflow_error, Core, Handle,
};
use crate::scope::ScopeStack;

/// The surfaces whose finalizer chain may drop a `T`: a scope's handle
/// (`&ScopeStack`) for any `'static` `T`, a [`LocalScope`](crate::LocalScope) (and so
/// `&ConcurrentScope`) for `Send + 'static` ones, since the thread that closes the scope
/// drops them (rule 8). [`ScopeVec::into_slice`] asks for it; name it as a bound in a
/// helper generic over [`Place`](crate::Place).
///
/// Sealed: only this crate implements it, for exactly those pairs.
///
/// ```
/// use scope_stack::{Finalizes, LinearAllocator, Place};
///
/// fn names<'s, P: Place<'s>>(into: P) -> &'s [String]
/// where
///     P::Handle: Finalizes<String>,
/// {
///     let mut v = into.new_vec();
///     v.push(String::from("frog"));
///     v.into_slice()
/// }
/// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
/// memory.scope("level", |level| assert_eq!(names(&**level), ["frog"]));
/// ```
///
/// # Safety
/// An implementation admits only types whose destructor may run when the surface's
/// scope ends, on the thread that ends it, with no borrow left to check (see
/// [`crate::rules`]).
pub unsafe trait Finalizes<T>: sealed::Admits<T> {}

/// The seal of [`Finalizes`]: public in name only (its module is private to the crate).
pub(crate) mod sealed {
    /// Implemented by this crate for the pairs it admits.
    pub trait Admits<T> {}
}

impl<'a, 's, T: 'static> sealed::Admits<T> for &'a ScopeStack<'s> {}
// SAFETY: a plain scope's chain runs on its own thread; `'static` values hold no borrow
// that could end before the chain runs.
unsafe impl<'a, 's, T: 'static> Finalizes<T> for &'a ScopeStack<'s> {}

/// A vector at the top of a scope: grows in place, derefs to `[T]`, and freezes into
/// `&'s mut [T]` with [`into_slice`](Self::into_slice) (no copy, and no slack beyond
/// alignment). Made by [`ScopeStack::new_vec`], [`ScopeStack::vec_with_capacity`] and
/// the same methods of [`LocalScope`](crate::LocalScope) and
/// [`ConcurrentScope`](crate::ConcurrentScope).
///
/// On a [`ScopeStack`] the vector borrows the scope mutably: nothing else is placed in
/// the scope while it lives, so it always grows in place. Out of room, [`push`](Self::push)
/// panics naming the scope and [`try_push`](Self::try_push) hands the value back.
/// Dropped without freezing, it drops its elements and gives the room back.
///
/// A type with a destructor gets a finalizer when frozen, so [`into_slice`](Self::into_slice)
/// asks what `alloc_iter` asks (`'static`, and `Send` on a concurrent scope);
/// [`into_slice_pod`](Self::into_slice_pod) freezes types that need no drop and may
/// borrow.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let mut ids = level.new_vec::<u32>();
///     ids.extend(0..10);
///     ids.retain(|id| id % 3 == 0);
///     ids.push(99);
///     let ids: &mut [u32] = ids.into_slice();
///     assert_eq!(ids, &[0, 3, 6, 9, 99]);
///     level.new_pod(1u8); // the scope is free again
/// });
/// ```
///
/// While the vector lives, the scope cannot place anything else (E0502):
///
/// ```compile_fail,E0502
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let mut ids = level.new_vec::<u32>();
///     level.new_pod(1u8); // error: `level` is borrowed by `ids`
///     ids.push(1);
/// });
/// ```
///
/// nor open a child scope, so a vector of an outer scope cannot grow while a child is
/// open (E0499):
///
/// ```compile_fail,E0499
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let mut ids = level.new_vec::<u32>();
///     level.scope("frame", |_frame| ids.push(1)); // error: `level` borrowed twice
///     ids.push(2);
/// });
/// ```
///
/// and a frozen slice cannot outlive its scope:
///
/// ```compile_fail
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// let ids = memory.scope("level", |level| {
///     let mut ids = level.new_vec::<u32>();
///     ids.push(1);
///     ids.into_slice() // error: the slice would escape the scope
/// });
/// ```
pub struct ScopeVec<'a, 's, T, H: Handle<'s> = &'a ScopeStack<'s>> {
    handle: H,
    /// The first element (aligned and dangling while no room is claimed).
    first: NonNull<T>,
    len: usize,
    /// Elements the room holds (`usize::MAX` for a zero-sized `T`).
    cap: usize,
    /// Address one past the room claimed (0 while none is).
    claimed: usize,
    /// Where the room (with a record's head and the padding before it) began.
    from: usize,
    /// The room as the profiler was last told (address and size; size 0 for none).
    #[cfg(feature = "tracy")]
    shown: (usize, usize),
    _marker: PhantomData<(&'a mut (), &'s (), T)>,
}

impl<'a, 's, T, H: Handle<'s>> ScopeVec<'a, 's, T, H> {
    /// Bytes kept before the first element for the slice record, and the alignment of
    /// the room.
    const HEAD: usize = if needs_drop::<T>() {
        SliceLayout::<T>::VALUE_OFFSET
    } else {
        0
    };
    const ALIGN: usize = if needs_drop::<T>() {
        SliceLayout::<T>::ALIGN
    } else {
        align_of::<T>()
    };

    /// An empty vector on `handle`; claims nothing.
    #[inline]
    pub(crate) fn new_in(handle: H) -> Self {
        ScopeVec {
            handle,
            first: NonNull::dangling(),
            len: 0,
            cap: if size_of::<T>() == 0 { usize::MAX } else { 0 },
            claimed: 0,
            from: 0,
            #[cfg(feature = "tracy")]
            shown: (0, 0),
            _marker: PhantomData,
        }
    }

    /// An empty vector with room for `n` elements, or the error that says why not.
    #[inline]
    pub(crate) fn with_capacity_in(handle: H, n: usize) -> Result<Self, AllocError> {
        let mut v = Self::new_in(handle);
        v.try_reserve(n)?;
        Ok(v)
    }

    /// Number of elements.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.push('x');
    /// assert_eq!(v.len(), 1);
    /// # });
    /// ```
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| assert!(a.new_vec::<u8>().is_empty()));
    /// ```
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements the claimed room holds (`usize::MAX` for zero-sized types).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| assert!(a.vec_with_capacity::<u64>(10).capacity() >= 10));
    /// ```
    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The elements.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.push(1);
    /// assert_eq!(v.as_slice(), &[1]);
    /// # });
    /// ```
    #[inline(always)]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the first `len` elements are initialised (module invariant).
        unsafe { core::slice::from_raw_parts(self.first.as_ptr(), self.len) }
    }

    /// The elements, mutably.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.push(1);
    /// v.as_mut_slice()[0] = 2;
    /// assert_eq!(v[0], 2);
    /// # });
    /// ```
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.first.as_ptr(), self.len) }
    }

    /// Appends a value.
    ///
    /// # Panics
    /// When the scope has no room for it (the message names the scope).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.push(String::from("frog"));
    /// assert_eq!(v[0], "frog");
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn push(&mut self, value: T) {
        if self.len == self.cap {
            if let Err(e) = self.grow(1) {
                drop(value);
                self.handle.as_core().fail(e)
            }
        }
        // SAFETY: `len < cap`: the slot is in the claimed room and holds nothing.
        unsafe { self.first.as_ptr().add(self.len).write(value) };
        self.len += 1;
    }

    /// Appends a value, or hands it back with the error when the scope has no room.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let mut v = a.new_vec::<u64>();
    ///     let err = (0..100).find_map(|i| v.try_push(i).err()).unwrap();
    ///     assert_eq!(err.value, 8); // 64 bytes hold 8 `u64`s, no slack
    /// });
    /// ```
    #[inline]
    pub fn try_push(&mut self, value: T) -> Result<(), AllocErrorWith<T>> {
        if self.len == self.cap {
            if let Err(error) = self.grow(1) {
                return Err(AllocErrorWith { error, value });
            }
        }
        // SAFETY: as in `push`.
        unsafe { self.first.as_ptr().add(self.len).write(value) };
        self.len += 1;
        Ok(())
    }

    /// Makes room for at least `additional` more elements.
    ///
    /// # Panics
    /// When the scope has no room for them.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec::<u16>();
    /// v.reserve(100);
    /// assert!(v.capacity() >= 100);
    /// # });
    /// ```
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        if let Err(e) = self.try_reserve(additional) {
            or_fail(self.handle.as_core(), Err(e))
        }
    }

    /// Makes room for at least `additional` more elements, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| assert!(a.new_vec::<u64>().try_reserve(1 << 20).is_err()));
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), AllocError> {
        if self.cap - self.len >= additional {
            return Ok(());
        }
        self.grow(additional)
    }

    /// Panics with `e` through the surface (naming the scope).
    #[cold]
    #[track_caller]
    pub(crate) fn fail(&self, e: AllocError) -> ! {
        self.handle.as_core().fail(e)
    }

    /// Tells the profiler the room at `at` now has `size` bytes (feature `tracy`).
    #[cfg(feature = "tracy")]
    fn show(&mut self, at: usize, size: usize) {
        if self.shown.1 != 0 && self.shown != (at, size) {
            let pool = self.handle.as_core().profiler_pool();
            if size == 0 {
                crate::profiler::free(pool, self.shown.0);
            } else {
                crate::profiler::realloc(pool, self.shown.0, at, size);
            }
            self.shown = (at, size);
        }
    }

    /// Claims room for at least `additional` more elements: in place while this room is
    /// the region's top, otherwise fresh room (the elements move there).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) -> Result<(), AllocError> {
        let c = self.handle.as_core();
        let size = size_of::<T>();
        let need = self
            .len
            .checked_add(additional)
            .ok_or_else(|| overflow_error(c, Self::ALIGN))?;
        if size == 0 {
            // Zero-sized elements take no room (a record's room is claimed at freezing).
            return Ok(());
        }
        // Double, as a `Vec` does, and start at 64 bytes or 4 elements.
        let want = self.cap.saturating_mul(2).max(need).max(4).max(64 / size);
        let first = self.first.as_ptr().addr();
        // In place only while the room ends at the region's top and begins inside the
        // current region (a thread's older chunk never grows into its newer one).
        if self.cap != 0 && c.top() == self.claimed && self.from >= c.region_start() {
            let room = c.limit().saturating_sub(first) / size;
            if room >= need {
                let cap = want.min(room);
                let to = first + cap * size;
                // SAFETY: `[claimed, to)` lies above the region's top and below its
                // limit: free room, now this builder's.
                unsafe { c.set_top(to) };
                self.claimed = to;
                self.cap = cap;
                #[cfg(feature = "tracy")]
                self.show(self.shown.0, to - self.shown.0);
                return Ok(());
            }
        }
        let bytes = |n: usize| {
            n.checked_mul(size)
                .and_then(|b| b.checked_add(Self::HEAD))
                .filter(|&b| b <= isize::MAX as usize)
        };
        let before = c.top();
        let (start, cap) = match bytes(want).and_then(|b| bump_room(c, b, Self::ALIGN).ok()) {
            Some(start) => (start, want),
            None => {
                let b = bytes(need).ok_or_else(|| overflow_error(c, Self::ALIGN))?;
                (bump_room(c, b, Self::ALIGN)?, need)
            }
        };
        let start_addr = start.as_ptr().addr();
        // SAFETY: `start` is fresh room for the head and `cap >= len` elements, aligned
        // for the record and for `T`; it does not overlap the old room. The elements are
        // moved bitwise and their old copies are never read again.
        let new_first = unsafe {
            let new_first = start.add(Self::HEAD).cast::<T>();
            ptr::copy_nonoverlapping(self.first.as_ptr(), new_first.as_ptr(), self.len);
            new_first
        };
        self.first = new_first;
        self.cap = cap;
        self.claimed = start_addr + Self::HEAD + cap * size;
        // The bump showed the new room to the profiler; the old one stays a hole.
        #[cfg(feature = "tracy")]
        {
            self.shown = (start_addr, self.claimed - start_addr);
        }
        // Padding bumped before the room goes back with it.
        self.from = if before <= start_addr && start_addr - before < Self::ALIGN {
            before
        } else {
            start_addr
        };
        Ok(())
    }

    /// Removes the last element and returns it.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.push(1);
    /// assert_eq!(v.pop(), Some(1));
    /// assert_eq!(v.pop(), None);
    /// # });
    /// ```
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: the element at `len` was initialised and is no longer counted.
        Some(unsafe { self.first.as_ptr().add(self.len).read() })
    }

    /// Inserts `value` at `index`, shifting the later elements up.
    ///
    /// # Panics
    /// When `index > len`, or the scope has no room.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.extend([1, 3]);
    /// v.insert(1, 2);
    /// assert_eq!(*v, [1, 2, 3]);
    /// # });
    /// ```
    #[track_caller]
    pub fn insert(&mut self, index: usize, value: T) {
        assert!(
            index <= self.len,
            "insert: index {index} is past the length {}",
            self.len
        );
        if self.len == self.cap {
            if let Err(e) = self.grow(1) {
                drop(value);
                self.handle.as_core().fail(e)
            }
        }
        // SAFETY: `len < cap`, so the shifted elements stay in the room; `index <= len`.
        unsafe {
            let at = self.first.as_ptr().add(index);
            ptr::copy(at, at.add(1), self.len - index);
            at.write(value);
        }
        self.len += 1;
    }

    /// Removes and returns the element at `index`, shifting the later elements down.
    ///
    /// # Panics
    /// When `index >= len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.extend([1, 2, 3]);
    /// assert_eq!(v.remove(0), 1);
    /// assert_eq!(*v, [2, 3]);
    /// # });
    /// ```
    #[track_caller]
    pub fn remove(&mut self, index: usize) -> T {
        assert!(
            index < self.len,
            "remove: index {index} is out of the length {}",
            self.len
        );
        // SAFETY: `index < len`: the element is read out once, and the later ones
        // shift down over it.
        unsafe {
            let at = self.first.as_ptr().add(index);
            let value = at.read();
            ptr::copy(at.add(1), at, self.len - index - 1);
            self.len -= 1;
            value
        }
    }

    /// Removes and returns the element at `index`, moving the last element into its
    /// place.
    ///
    /// # Panics
    /// When `index >= len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.extend([1, 2, 3]);
    /// assert_eq!(v.swap_remove(0), 1);
    /// assert_eq!(*v, [3, 2]);
    /// # });
    /// ```
    #[track_caller]
    pub fn swap_remove(&mut self, index: usize) -> T {
        assert!(
            index < self.len,
            "swap_remove: index {index} is out of the length {}",
            self.len
        );
        // SAFETY: `index < len`; the last element moves into the hole.
        unsafe {
            let base = self.first.as_ptr();
            let value = base.add(index).read();
            self.len -= 1;
            if index != self.len {
                ptr::copy_nonoverlapping(base.add(self.len), base.add(index), 1);
            }
            value
        }
    }

    /// Keeps the first `len` elements and drops the rest (nothing when `len` is not
    /// smaller). The room stays claimed.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.extend([1, 2, 3]);
    /// v.truncate(1);
    /// assert_eq!(*v, [1]);
    /// # });
    /// ```
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let tail = self.len - len;
        // The length goes first, so a panicking destructor cannot lead to a second drop.
        self.len = len;
        // SAFETY: `[len, len + tail)` were initialised and are no longer counted.
        unsafe {
            ptr::drop_in_place(ptr::slice_from_raw_parts_mut(
                self.first.as_ptr().add(len),
                tail,
            ))
        };
    }

    /// Drops every element. The room stays claimed.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.push(1);
    /// v.clear();
    /// assert!(v.is_empty());
    /// # });
    /// ```
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Keeps the elements for which `keep` returns `true`, in order.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.extend(1..=6);
    /// v.retain(|n| n % 2 == 0);
    /// assert_eq!(*v, [2, 4, 6]);
    /// # });
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.retain_mut(|x| keep(x));
    }

    /// Keeps the elements for which `keep` returns `true`, in order; `keep` may change
    /// them. If `keep` (or a destructor) panics, every element is still dropped once:
    /// the ones not yet looked at stay in the vector.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.extend(1..=4);
    /// v.retain_mut(|n| { *n *= 10; *n > 15 });
    /// assert_eq!(*v, [20, 30, 40]);
    /// # });
    /// ```
    pub fn retain_mut(&mut self, mut keep: impl FnMut(&mut T) -> bool) {
        /// Closes the holes left by removed elements, even on a panic.
        struct Compact<'g, T> {
            base: *mut T,
            processed: usize,
            deleted: usize,
            original: usize,
            len: &'g mut usize,
        }
        impl<T> Drop for Compact<'_, T> {
            fn drop(&mut self) {
                if self.deleted > 0 {
                    // SAFETY: `[processed, original)` are initialised elements not yet
                    // looked at; they move down over the holes (`deleted` slots).
                    unsafe {
                        ptr::copy(
                            self.base.add(self.processed),
                            self.base.add(self.processed - self.deleted),
                            self.original - self.processed,
                        )
                    };
                }
                *self.len = self.original - self.deleted;
            }
        }
        let original = self.len;
        let base = self.first.as_ptr();
        // While `keep` runs, the vector counts nothing: the guard owns the elements.
        self.len = 0;
        let mut g = Compact {
            base,
            processed: 0,
            deleted: 0,
            original,
            len: &mut self.len,
        };
        while g.processed < original {
            // SAFETY: `processed < original`: an initialised element not yet looked at.
            let cur = unsafe { &mut *base.add(g.processed) };
            if !keep(cur) {
                // Counted as removed before its destructor runs, so it is never
                // dropped twice.
                g.processed += 1;
                g.deleted += 1;
                // SAFETY: the element is dropped once and its slot becomes a hole.
                unsafe { ptr::drop_in_place(cur) };
                continue;
            }
            if g.deleted > 0 {
                // SAFETY: the hole `deleted` slots down is free; the element moves there.
                unsafe { ptr::copy_nonoverlapping(cur, base.add(g.processed - g.deleted), 1) };
            }
            g.processed += 1;
        }
    }

    /// Appends clones of the elements of `items`.
    ///
    /// # Panics
    /// When the scope has no room for them.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut v = a.new_vec();
    /// v.extend_from_slice(&[1, 2]);
    /// assert_eq!(*v, [1, 2]);
    /// # });
    /// ```
    #[track_caller]
    pub fn extend_from_slice(&mut self, items: &[T])
    where
        T: Clone,
    {
        self.reserve(items.len());
        for x in items {
            self.push(x.clone());
        }
    }

    /// Appends copies of `items` with one copy, or says why the scope has no room
    /// (nothing is appended then).
    #[inline]
    pub(crate) fn try_extend_copied(&mut self, items: &[T]) -> Result<(), AllocError>
    where
        T: Copy,
    {
        self.try_reserve(items.len())?;
        // SAFETY: room for `items.len()` more elements is reserved past `len`; `items`
        // is borrowed apart from the builder's room (the builder is borrowed mutably).
        unsafe {
            ptr::copy_nonoverlapping(
                items.as_ptr(),
                self.first.as_ptr().add(self.len),
                items.len(),
            )
        };
        self.len += items.len();
        Ok(())
    }

    /// Freezes the elements into a slice that lives as long as the scope, where they
    /// are (no copy); the room past them goes back to the scope. A type that needs drop
    /// gets one finalizer record, run when the scope ends; it must be `'static` (and
    /// `Send` on a concurrent scope), as for `alloc_iter`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// memory.scope("a", |a| {
    ///     let mut v = a.new_vec();
    ///     v.push(String::from("frog"));
    ///     let names: &mut [String] = v.into_slice(); // dropped when "a" ends
    ///     assert_eq!(names[0], "frog");
    /// });
    /// ```
    #[inline]
    pub fn into_slice(self) -> &'s mut [T]
    where
        T: 'static,
        H: Finalizes<T>,
    {
        // SAFETY: `Finalizes<T>` says the surface's chain may drop a `T`.
        unsafe { self.freeze() }
    }

    /// Freezes elements that need no drop, with no `'static` bound: they may borrow,
    /// for example from the same scope. A type that needs drop is a build-time error, as
    /// for `alloc_iter_pod`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// memory.scope("a", |a| {
    ///     let frog: &str = a.alloc_str("frog");
    ///     let mut v = a.new_vec();
    ///     v.push(frog);
    ///     let names: &[&str] = v.into_slice_pod();
    ///     assert_eq!(names, ["frog"]);
    /// });
    /// ```
    #[inline]
    pub fn into_slice_pod(self) -> &'s mut [T] {
        const {
            assert!(
                !needs_drop::<T>(),
                "into_slice_pod: this type needs drop; use into_slice"
            )
        };
        // SAFETY: `T` needs no drop, so no record is linked.
        unsafe { self.freeze() }
    }

    /// Freezes the elements in place.
    ///
    /// # Safety
    /// When `T` needs drop, the surface's chain may drop it (the drop rule).
    unsafe fn freeze(self) -> &'s mut [T] {
        #[cfg_attr(not(feature = "tracy"), allow(unused_mut))]
        let mut me = ManuallyDrop::new(self);
        if size_of::<T>() != 0 && me.claimed != 0 {
            // What stays is the room up to the last element (all of it goes when empty).
            #[cfg(feature = "tracy")]
            {
                let end = me.first.as_ptr().addr() + me.len * size_of::<T>();
                let keep = if me.len == 0 { 0 } else { end - me.shown.0 };
                let at = me.shown.0;
                me.show(at, keep);
            }
        }
        let c = me.handle.as_core();
        let len = me.len;
        let mut first = me.first;
        if size_of::<T>() == 0 {
            if needs_drop::<T>() && len != 0 {
                // The record alone takes room.
                let record = match bump_room(c, Self::HEAD, Self::ALIGN) {
                    Ok(r) => r,
                    Err(e) => {
                        // SAFETY: the builder is not used again; its elements are
                        // dropped once here, before the panic.
                        unsafe {
                            ptr::drop_in_place(ptr::slice_from_raw_parts_mut(first.as_ptr(), len))
                        };
                        or_fail(c, Err(e))
                    }
                };
                // SAFETY: `record` is fresh room of `HEAD` bytes at the record's
                // alignment; the (zero-sized) elements are complete; the caller vouches
                // for the drop rule.
                unsafe {
                    first = finalizer::write_slice_record::<T>(record, len);
                    c.link(record);
                }
            }
            // SAFETY: zero-sized elements at an aligned pointer.
            return unsafe { core::slice::from_raw_parts_mut(first.as_ptr(), len) };
        }
        if me.claimed == 0 {
            return &mut [];
        }
        let end = first.as_ptr().addr() + len * size_of::<T>();
        // SAFETY: `[end, claimed)` holds nothing; it goes back if it is still the top.
        unsafe { c.end_reservation(me.claimed, end, c.gaps_save()) };
        if len == 0 {
            // SAFETY: nothing in `[from, end)` is in use (no elements, no record).
            unsafe { c.give_back(me.from, end) };
            return &mut [];
        }
        if needs_drop::<T>() {
            // SAFETY: the record's `HEAD` bytes lie right before the first element
            // (carved with the room); every element is built; the caller vouches for
            // the drop rule.
            unsafe {
                let record = first.cast::<u8>().sub(Self::HEAD);
                let slot = finalizer::write_slice_record::<T>(record, len);
                debug_assert_eq!(slot, first);
                c.link(record);
            }
        }
        // SAFETY: `len` initialised elements that stay put until the scope ends.
        unsafe { core::slice::from_raw_parts_mut(first.as_ptr(), len) }
    }
}

/// Drops the elements (each once, even if one destructor panics), then gives the room
/// back when it is still the region's top.
impl<'a, 's, T, H: Handle<'s>> Drop for ScopeVec<'a, 's, T, H> {
    fn drop(&mut self) {
        /// Gives the room back after the drops, even if one panics.
        struct Release<'r, 's, H: Handle<'s>> {
            handle: &'r H,
            from: usize,
            end: usize,
            claimed: usize,
            _s: PhantomData<&'s ()>,
        }
        impl<'s, H: Handle<'s>> Drop for Release<'_, 's, H> {
            fn drop(&mut self) {
                if self.claimed == 0 {
                    return;
                }
                let c = self.handle.as_core();
                // SAFETY: the elements in `[from, claimed)` were dropped; no record
                // points into the room. Each call acts only where the room is still
                // the newest allocation.
                unsafe {
                    c.end_reservation(self.claimed, self.end, c.gaps_save());
                    c.give_back(self.from, self.end);
                }
            }
        }
        #[cfg(feature = "tracy")]
        if size_of::<T>() != 0 && self.handle.as_core().top() == self.claimed {
            let at = self.shown.0;
            self.show(at, 0);
        }
        let _release = Release {
            handle: &self.handle,
            from: self.from,
            end: self.first.as_ptr().addr() + self.len * size_of::<T>(),
            claimed: if size_of::<T>() == 0 { 0 } else { self.claimed },
            _s: PhantomData,
        };
        // SAFETY: the first `len` elements are initialised and owned by the builder;
        // each is dropped once (`drop_in_place` on a slice goes on past a panic).
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.len)) };
    }
}

impl<'s, T, H: Handle<'s>> Deref for ScopeVec<'_, 's, T, H> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'s, T, H: Handle<'s>> DerefMut for ScopeVec<'_, 's, T, H> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

/// Appends every item; the iterator's lower bound is reserved first (when it fits).
///
/// # Panics
/// When the scope runs out of room (the items taken so far stay in the vector).
impl<'s, T, H: Handle<'s>> Extend<T> for ScopeVec<'_, 's, T, H> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        // The lower bound is a hint: if it does not fit, the pushes find out.
        let _ = self.try_reserve(iter.size_hint().0);
        for x in iter {
            self.push(x);
        }
    }
}

impl<'s, T: fmt::Debug, H: Handle<'s>> fmt::Debug for ScopeVec<'_, 's, T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}
