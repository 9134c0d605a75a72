//! Slices and text in a concurrent scope, through one thread's [`LocalScope`]: copies,
//! clones, fills, collected iterators, strings and formatted text.
//!
//! This module owns the placement of many values at once. Invariants: every element is
//! written before the slice's finalizer record is linked (if the code that makes them
//! panics, the ones made so far are dropped and nothing is linked); a collected slice
//! that moves while it grows leaves its old room unused, never reused while live.

use core::fmt;
use core::mem::{align_of, needs_drop, size_of, MaybeUninit};
use core::ptr::{self, NonNull};

use crate::error::{AllocError, AllocErrorKind};
use crate::limits::MAX_ALIGN;
use crate::scope::finalizer::{self, SliceLayout};

use super::local::{fail, fill, Growing, LocalScope};

impl<'a> LocalScope<'a> {
    // ----- slices -----

    /// Copies a slice into the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_slice_copy(&[1, 2, 3]), &[1, 2, 3]);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &'a mut [T] {
        // Fast path: a short slice bumps straight in this thread's chunk (the bytes
        // cannot overflow: at most `MAX_ALIGN` elements of at most `MAX_ALIGN` bytes).
        if align_of::<T>() <= MAX_ALIGN && size_of::<T>() <= MAX_ALIGN && src.len() <= MAX_ALIGN {
            let bytes = core::mem::size_of_val(src);
            if bytes != 0 && bytes <= MAX_ALIGN {
                if let Some(at) = self.any_slot().bump(bytes, align_of::<T>()) {
                    let dst = self.ptr(at).cast::<T>();
                    // SAFETY: fresh room for `src.len()` `T`s, not overlapping `src`;
                    // `T: Copy`.
                    unsafe {
                        ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr(), src.len());
                        return core::slice::from_raw_parts_mut(dst.as_ptr(), src.len());
                    }
                }
            }
        }
        self.alloc_slice_copy_slow(src)
    }

    /// `alloc_slice_copy` past the fast path: a new chunk, a long slice, or a panic.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn alloc_slice_copy_slow<T: Copy>(&self, src: &[T]) -> &'a mut [T] {
        match self.try_alloc_slice_copy(src) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Copies a slice into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_slice_copy(&[0u8; 1 << 20]).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_copy<T: Copy>(&self, src: &[T]) -> Result<&'a mut [T], AllocError> {
        let first = self.bump_array::<T>(src.len())?;
        // SAFETY: room for `src.len()` `T`s that nothing else uses; `T: Copy`.
        unsafe {
            ptr::copy_nonoverlapping(src.as_ptr(), first.as_ptr(), src.len());
            Ok(core::slice::from_raw_parts_mut(first.as_ptr(), src.len()))
        }
    }

    /// Clones a slice into the scope; the clones are dropped when it closes.
    ///
    /// # Panics
    /// When the scope is out of memory, or a clone panics.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let names = jobs.local().alloc_slice_clone(&[String::from("a"), String::from("b")]);
    ///     assert_eq!(names.concat(), "ab");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_clone<T: Clone + Send + 'static>(&self, src: &[T]) -> &'a mut [T] {
        match self.try_alloc_slice_clone(src) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Clones a slice into the scope, or says why the memory cannot be had.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().try_alloc_slice_clone(&[vec![1u8]]).unwrap()[0], [1]);
    /// }));
    /// ```
    pub fn try_alloc_slice_clone<T: Clone + Send + 'static>(
        &self,
        src: &[T],
    ) -> Result<&'a mut [T], AllocError> {
        self.try_alloc_slice_fill_with(src.len(), |i| src[i].clone())
    }

    /// A slice of `len` values made by `f(index)`; values that need drop are dropped
    /// when the scope closes.
    ///
    /// # Panics
    /// When the scope is out of memory, or `f` panics (the values made so far are
    /// dropped then).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_slice_fill_with(3, |i| i * 10), &[0, 10, 20]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_with<T: Send + 'static>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> &'a mut [T] {
        match self.try_alloc_slice_fill_with(len, f) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// A slice of `len` values made by `f(index)`, or why the memory cannot be had
    /// (then `f` is not called).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_slice_fill_with(1 << 20, |i| i).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_with<T: Send + 'static>(
        &self,
        len: usize,
        mut f: impl FnMut(usize) -> T,
    ) -> Result<&'a mut [T], AllocError> {
        if !needs_drop::<T>() {
            let first = self.bump_array::<T>(len)?;
            // SAFETY: room for `len` `T`s; values that need no drop need no record.
            unsafe {
                fill(first, len, &mut f);
                return Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len));
            }
        }
        let record = self.bump_slice_record::<T>(len)?;
        // SAFETY: room for a slice record and `len` `T`s; every element is written
        // before the record is linked (on a panic `fill` drops what it wrote and
        // nothing is linked).
        unsafe {
            let first = finalizer::write_slice_record::<T>(record, len);
            fill(first, len, &mut f);
            self.link(record);
            Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
        }
    }

    /// Room for a slice record and `len` `T`s.
    fn bump_slice_record<T>(&self, len: usize) -> Result<NonNull<u8>, AllocError> {
        let Some(size) = SliceLayout::<T>::size(len) else {
            return Err(self.error(
                AllocErrorKind::CapacityOverflow,
                usize::MAX,
                align_of::<T>(),
            ));
        };
        self.bump_checked(size, SliceLayout::<T>::ALIGN)
    }

    /// Collects an iterator into a slice. The slice grows by doubling: when it cannot
    /// grow in place (another allocation of this thread came after it, perhaps made by
    /// the iterator itself), it moves, and the room it leaves stays unused until the
    /// scope closes.
    ///
    /// # Panics
    /// When the scope is out of memory (the items taken so far are dropped), or the
    /// iterator panics.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let odd = jobs.local().alloc_iter((0..10).filter(|i| i % 2 == 1));
    ///     assert_eq!(odd, &[1, 3, 5, 7, 9]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_iter<T: Send + 'static>(&self, iter: impl IntoIterator<Item = T>) -> &'a mut [T] {
        match self.try_alloc_iter(iter) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Collects an iterator into a slice, or says why the memory ran out (the items
    /// taken so far are dropped then).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_iter(0..1_000_000u64).is_err());
    /// }));
    /// ```
    pub fn try_alloc_iter<T: Send + 'static>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'a mut [T], AllocError> {
        let mut iter = iter.into_iter();
        let mut buf = Growing::<T> {
            first: NonNull::dangling(),
            len: 0,
            cap: if size_of::<T>() == 0 { usize::MAX } else { 0 },
        };
        let want = iter.size_hint().0.max(4);
        for item in iter.by_ref() {
            if buf.len == buf.cap {
                let want = if buf.cap == 0 {
                    want
                } else {
                    buf.cap.saturating_mul(2)
                };
                if let Err(e) = self.grow(&mut buf, want) {
                    drop(item);
                    return Err(e);
                }
            }
            // SAFETY: `len < cap`: room for one more element (zero-sized: dangling).
            unsafe { buf.first.as_ptr().add(buf.len).write(item) };
            buf.len += 1;
        }
        let (first, len) = (buf.first, buf.len);
        if size_of::<T>() != 0 && buf.cap > len {
            // Give the unused tail back when it is at the top of this thread's chunk.
            if let Some(slot) = self.slot() {
                let (at, bytes) = (first.as_ptr().addr(), buf.cap * size_of::<T>());
                if slot.is_last(at, bytes) {
                    slot.set_cur(at + len * size_of::<T>());
                }
            }
        }
        if needs_drop::<T>() && len > 0 {
            // A record of its own, since the elements may have moved since they began.
            // On an error `buf` drops the elements.
            let record =
                self.bump_checked(core::mem::size_of::<SliceRef>(), align_of::<SliceRef>())?;
            core::mem::forget(buf);
            // SAFETY: room for a slice-reference record; the elements are complete.
            unsafe {
                write_slice_ref::<T>(record, first, len);
                self.link(record);
            }
        } else {
            core::mem::forget(buf);
        }
        // SAFETY: `len` initialised elements, valid until the scope closes.
        Ok(unsafe { core::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }

    /// Makes room for `want` elements, in place when the buffer is this thread's newest
    /// allocation, else by moving it.
    fn grow<T>(&self, buf: &mut Growing<T>, want: usize) -> Result<(), AllocError> {
        let too_big = || {
            self.error(
                AllocErrorKind::CapacityOverflow,
                usize::MAX,
                align_of::<T>(),
            )
        };
        let bytes = want.checked_mul(size_of::<T>()).ok_or_else(too_big)?;
        if let Some(slot) = self.slot() {
            let at = buf.first.as_ptr().addr();
            let old = buf.cap * size_of::<T>();
            if buf.cap > 0 && slot.is_last(at, old) && bytes - old <= slot.room() {
                slot.set_cur(at + bytes);
                buf.cap = want;
                return Ok(());
            }
        }
        let new = self.bump_array::<T>(want)?;
        // SAFETY: the old buffer's `len` elements move to fresh, larger room; the old
        // room is not used again.
        unsafe { ptr::copy_nonoverlapping(buf.first.as_ptr(), new.as_ptr(), buf.len) };
        buf.first = new;
        buf.cap = want;
        Ok(())
    }

    /// Collects an iterator of known length into a slice, or panics when out of memory.
    ///
    /// # Panics
    /// When the scope is out of memory, or the iterator ends before its `len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_iter_exact([1, 2].map(|x| x * 2)), &[2, 4]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_iter_exact<T: Send + 'static, I>(&self, iter: I) -> &'a mut [T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        match self.try_alloc_iter_exact(iter) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Collects an iterator of known length, or says why the memory cannot be had (no
    /// item is taken then).
    ///
    /// # Panics
    /// When the iterator ends before its `len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_iter_exact(0..1_000_000u32).is_err());
    /// }));
    /// ```
    #[track_caller]
    pub fn try_alloc_iter_exact<T: Send + 'static, I>(
        &self,
        iter: I,
    ) -> Result<&'a mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut iter = iter.into_iter();
        let len = iter.len();
        self.try_alloc_slice_fill_with(len, |i| match iter.next() {
            Some(v) => v,
            None => {
                panic!("alloc_iter_exact: the iterator said it had {len} items but ended after {i}")
            }
        })
    }

    // ----- text -----

    /// Copies a string into the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_str("frog"), "frog");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_str(&self, src: &str) -> &'a mut str {
        let bytes = self.alloc_slice_copy(src.as_bytes());
        // SAFETY: a copy of valid UTF-8.
        unsafe { core::str::from_utf8_unchecked_mut(bytes) }
    }

    /// Copies a string into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_str("ok").is_ok());
    /// }));
    /// ```
    pub fn try_alloc_str(&self, src: &str) -> Result<&'a mut str, AllocError> {
        let bytes = self.try_alloc_slice_copy(src.as_bytes())?;
        // SAFETY: a copy of valid UTF-8.
        Ok(unsafe { core::str::from_utf8_unchecked_mut(bytes) })
    }

    /// Formats text straight into the scope (`format_args!`). The text is measured
    /// first and then written, so it is formatted twice unless it is a plain literal.
    ///
    /// # Panics
    /// When the scope is out of memory, or a `Display` impl fails.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_fmt(format_args!("job {}", 7)), "job 7");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_fmt(&self, args: fmt::Arguments<'_>) -> &'a mut str {
        match self.try_alloc_fmt(args) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Formats text straight into the scope, or says why the memory cannot be had.
    ///
    /// # Panics
    /// When a `Display` impl returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().try_alloc_fmt(format_args!("{}-{}", 1, 2)).unwrap(), "1-2");
    /// }));
    /// ```
    #[track_caller]
    pub fn try_alloc_fmt(&self, args: fmt::Arguments<'_>) -> Result<&'a mut str, AllocError> {
        if let Some(s) = args.as_str() {
            return self.try_alloc_str(s);
        }
        /// Counts bytes.
        struct Count(usize);
        impl fmt::Write for Count {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0 += s.len();
                Ok(())
            }
        }
        /// Writes into room of a fixed size; fails when it is full.
        struct Fill<'b>(&'b mut [MaybeUninit<u8>], usize);
        impl fmt::Write for Fill<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let room = self.0.len() - self.1;
                if s.len() > room {
                    return Err(fmt::Error);
                }
                for (dst, b) in self.0[self.1..].iter_mut().zip(s.bytes()) {
                    dst.write(b);
                }
                self.1 += s.len();
                Ok(())
            }
        }
        let mut count = Count(0);
        fmt::write(&mut count, args).expect("a Display implementation returned an error");
        let mut cap = count.0;
        loop {
            let room = self.bump_array::<MaybeUninit<u8>>(cap)?;
            // SAFETY: fresh room for `cap` bytes, this call's alone.
            let room = unsafe { core::slice::from_raw_parts_mut(room.as_ptr(), cap) };
            let mut fill = Fill(room, 0);
            if fmt::write(&mut fill, args).is_ok() {
                let len = fill.1;
                // SAFETY: the first `len` bytes were written, as UTF-8 from `str`s.
                return Ok(unsafe {
                    core::str::from_utf8_unchecked_mut(core::slice::from_raw_parts_mut(
                        fill.0.as_mut_ptr().cast::<u8>(),
                        len,
                    ))
                });
            }
            // The text came out longer the second time: try again with more room.
            cap = cap.saturating_mul(2).max(16);
        }
    }
}

/// A finalizer record for a slice that lies elsewhere (a collected slice moves while it
/// grows, so its record cannot sit in front of it).
type SliceRef = finalizer::SliceRefRecord;

/// Writes a record that drops `[first, first + len)`.
///
/// # Safety
/// `record` is room for a `SliceRef`, aligned; the elements stay alive until it runs.
unsafe fn write_slice_ref<T>(record: NonNull<u8>, first: NonNull<T>, len: usize) {
    // SAFETY: forwarded.
    unsafe { finalizer::write_slice_ref_record::<T>(record, first, len) }
}
