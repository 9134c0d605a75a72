//! Single values in a scope: `new_pod`, `new_object` (with its finalizer runs), and
//! in-place construction (`new_pod_with`, `new_object_with`, `alloc_uninit`).
//!
//! This module owns the placement of one value at a time. Invariants: a value that needs
//! drop is fully written before its finalizer record (or its run's count) makes it
//! visible to the chain, so an unwind never drops uninitialised memory; values that
//! need no drop get no record; a value that gets a finalizer is `'static` (rule 4).
use core::mem::MaybeUninit;

use crate::error::{AllocError, AllocErrorWith};

use super::{place, ScopeStack};

impl<'s> ScopeStack<'s> {
    /// Places a value that needs no drop and returns a reference to it. No finalizer
    /// record is written: the value costs its size plus alignment padding, nothing more.
    ///
    /// Giving it a type that needs drop is a compile-time error; use
    /// [`new_object`](Self::new_object) for those.
    ///
    /// # Panics
    /// When the scope is out of memory; see [`try_new_pod`](Self::try_new_pod).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let x = a.new_pod(41u32);
    ///     *x += 1;
    ///     assert_eq!(*x, 42);
    ///     assert_eq!(a.used(), 4);
    /// });
    /// ```
    ///
    /// ```compile_fail,E0080
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_pod(String::new()); // String needs drop: rejected at compile time
    /// });
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn new_pod<T>(&self, value: T) -> &'s mut T {
        place::new_pod(self, value)
    }

    /// Places a value that needs no drop, or hands it back with the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4).unwrap();
    /// memory.scope("a", |a| {
    ///     assert!(a.try_new_pod(1u32).is_ok());
    ///     let err = a.try_new_pod(2u32).unwrap_err();
    ///     assert_eq!(err.value, 2);
    /// });
    /// ```
    #[inline(always)]
    pub fn try_new_pod<T>(&self, value: T) -> Result<&'s mut T, AllocErrorWith<T>> {
        place::try_new_pod(self, value)
    }

    /// Places a value, and if it needs drop, links a finalizer so that its destructor
    /// runs when the scope unwinds (in reverse order of construction).
    ///
    /// `T: 'static` keeps destructors from seeing destroyed data: a `'static` value can
    /// hold no borrow of scope memory (see [`crate::rules`]). For values that need no
    /// drop this is the same as [`new_pod`](Self::new_pod).
    ///
    /// # Panics
    /// When the scope is out of memory; see [`try_new_object`](Self::try_new_object).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use std::sync::Mutex;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("systems", |systems| {
    ///     let lock = systems.new_object(Mutex::new(Vec::<u32>::new()));
    ///     lock.lock().unwrap().push(1);
    /// }); // the Mutex and its Vec are dropped here
    /// ```
    ///
    /// A value that needs drop and borrows something is rejected:
    ///
    /// ```compile_fail,E0597
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let local = String::from("x");
    ///     a.new_object(vec![&local]); // Vec<&String> is not 'static
    /// });
    /// ```
    #[inline]
    #[track_caller]
    pub fn new_object<T: 'static>(&self, value: T) -> &'s mut T {
        place::or_fail(self, self.try_new_object(value).map_err(|e| e.error))
    }

    /// Places a value with a finalizer if it needs drop, or hands it back with the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| {
    ///     // A finalizer record + a 24-byte String do not fit in 16 bytes.
    ///     let back = a.try_new_object(String::from("hi")).unwrap_err().into_value();
    ///     assert_eq!(back, "hi");
    /// });
    /// ```
    #[inline]
    pub fn try_new_object<T: 'static>(&self, value: T) -> Result<&'s mut T, AllocErrorWith<T>> {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_new_object(self, value) }
    }

    /// Places a value with a finalizer without requiring `T: 'static`.
    ///
    /// # Safety
    /// When this scope unwinds, `value`'s destructor must not use any data that has
    /// already been destroyed. Concretely: every borrow the destructor may follow must
    /// point to data that outlives this scope (data outside this block, or in an outer
    /// scope), or to finalized data of this same scope created *before* `value` (it is
    /// destroyed after `value`). A borrow of anything created later in this scope, or in
    /// a child scope, breaks this: that data is destroyed first.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// struct Printer<'a>(&'a str);
    /// impl Drop for Printer<'_> {
    ///     fn drop(&mut self) { assert_eq!(self.0, "outer"); }
    /// }
    /// let outer = String::from("outer"); // lives longer than the whole block
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     // SAFETY: `outer` outlives the scope, so the destructor reads live data.
    ///     unsafe { a.new_object_unchecked(Printer(&outer)) };
    /// });
    /// ```
    #[inline]
    #[track_caller]
    pub unsafe fn new_object_unchecked<T>(&self, value: T) -> &'s mut T {
        // SAFETY: forwarded from the caller.
        match unsafe { self.try_new_object_unchecked(value) } {
            Ok(r) => r,
            Err(e) => self.fail(e.error),
        }
    }

    /// The `try_` form of [`new_object_unchecked`](Self::new_object_unchecked).
    ///
    /// # Safety
    /// As for [`new_object_unchecked`](Self::new_object_unchecked).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     // SAFETY: a `String` borrows nothing.
    ///     let s = unsafe { a.try_new_object_unchecked(String::from("ok")) }.unwrap();
    ///     assert_eq!(s, "ok");
    /// });
    /// ```
    #[inline]
    pub unsafe fn try_new_object_unchecked<T>(
        &self,
        value: T,
    ) -> Result<&'s mut T, AllocErrorWith<T>> {
        // SAFETY: forwarded from the caller.
        unsafe { place::try_new_object_unchecked(self, value) }
    }

    // ----- in-place construction -----

    /// Places the value `f` returns, which needs no drop. The room is reserved first
    /// and `f` is called after, so the optimiser can build the value straight in scope
    /// memory: a large value need never pass through the stack (see
    /// [in-place construction](Self#in-place-construction) for what is guaranteed).
    ///
    /// Giving it a type that needs drop is a compile-time error, as for
    /// [`new_pod`](Self::new_pod). If `f` panics, the reserved room is given back (unless
    /// `f` allocated from this scope meanwhile) and the panic goes on.
    ///
    /// # Panics
    /// When the scope is out of memory (`f` is then not called); see
    /// [`try_new_pod_with`](Self::try_new_pod_with).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     let grid = level.new_pod_with(|| [[0u16; 256]; 256]); // 128 KiB, built in place
    ///     grid[3][4] = 7;
    ///     assert_eq!(grid[3][4], 7);
    /// });
    /// ```
    ///
    /// ```compile_fail,E0080
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_pod_with(String::new); // String needs drop: rejected at compile time
    /// });
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn new_pod_with<T>(&self, f: impl FnOnce() -> T) -> &'s mut T {
        place::or_fail(self, place::try_new_pod_with(self, f))
    }

    /// Places the value `f` returns, which needs no drop, or says why the room cannot be
    /// had (`f` is then not called, so there is no value to hand back).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| {
    ///     assert_eq!(*a.try_new_pod_with(|| 5u64).unwrap(), 5);
    ///     let err = a.try_new_pod_with(|| -> [u64; 2] { unreachable!() }).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    /// });
    /// ```
    #[inline(always)]
    pub fn try_new_pod_with<T>(&self, f: impl FnOnce() -> T) -> Result<&'s mut T, AllocError> {
        place::try_new_pod_with(self, f)
    }

    /// Places the value `f` returns, and if it needs drop, links a finalizer so that its
    /// destructor runs when the scope unwinds. Like [`new_object`](Self::new_object)
    /// (`T: 'static` for the same reason), but the room is reserved before `f` runs, so
    /// the value can be built in place as in [`new_pod_with`](Self::new_pod_with).
    ///
    /// If `f` panics, nothing is linked, the reserved room is given back (unless `f`
    /// allocated from this scope meanwhile) and the panic goes on. If `f` places other
    /// finalized values in this scope, they are destroyed after this one, since they
    /// were finished before it.
    ///
    /// # Panics
    /// When the scope is out of memory (`f` is then not called); see
    /// [`try_new_object_with`](Self::try_new_object_with).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let names = level.new_object_with(|| vec![String::from("frog"); 3]);
    ///     assert_eq!(names.len(), 3);
    /// }); // the Vec is dropped here
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn new_object_with<T: 'static>(&self, f: impl FnOnce() -> T) -> &'s mut T {
        place::or_fail(self, self.try_new_object_with(f))
    }

    /// Places the value `f` returns with a finalizer if it needs drop, or says why the
    /// room cannot be had (`f` is then not called).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| {
    ///     // A finalizer record and a 24-byte String do not fit in 16 bytes.
    ///     let err = a.try_new_object_with(|| -> String { unreachable!() }).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    /// });
    /// ```
    #[inline(always)]
    pub fn try_new_object_with<T: 'static>(
        &self,
        f: impl FnOnce() -> T,
    ) -> Result<&'s mut T, AllocError> {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_new_object_with(self, f) }
    }

    /// Reserves uninitialised room for one `T`, for callers who initialise it in place
    /// (field by field, or through a raw pointer). The memory never passes through the
    /// stack, in debug builds too.
    ///
    /// The scope never drops what is written there: a `MaybeUninit` has no destructor.
    /// Any `T` is allowed for that reason; if `T` needs drop, drop it yourself (for
    /// example with [`MaybeUninit::assume_init_drop`]) or use
    /// [`new_object_with`](Self::new_object_with).
    ///
    /// # Panics
    /// When the scope is out of memory; see [`try_alloc_uninit`](Self::try_alloc_uninit).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     let slot = level.alloc_uninit::<[u32; 65536]>();
    ///     // Initialise element by element through a raw pointer: no 256 KiB temporary.
    ///     let first = slot.as_mut_ptr().cast::<u32>();
    ///     for i in 0..65536 {
    ///         // SAFETY: `i` is inside the array.
    ///         unsafe { first.add(i).write(i as u32) };
    ///     }
    ///     // SAFETY: every element was written above.
    ///     let table = unsafe { slot.assume_init_mut() };
    ///     assert_eq!(table[65535], 65535);
    /// });
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_uninit<T>(&self) -> &'s mut MaybeUninit<T> {
        place::or_fail(self, place::try_alloc_uninit(self))
    }

    /// Reserves uninitialised room for one `T`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| {
    ///     assert!(a.try_alloc_uninit::<u64>().is_ok());
    ///     let err = a.try_alloc_uninit::<u8>().unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    /// });
    /// ```
    #[inline]
    pub fn try_alloc_uninit<T>(&self) -> Result<&'s mut MaybeUninit<T>, AllocError> {
        place::try_alloc_uninit(self)
    }

    /// Reserves uninitialised room for `len` `T`s, for callers who initialise them in
    /// place. As with [`alloc_uninit`](Self::alloc_uninit), nothing is ever dropped by
    /// the scope.
    ///
    /// # Panics
    /// When the scope is out of memory or the size overflows; see
    /// [`try_alloc_uninit_slice`](Self::try_alloc_uninit_slice).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let room = a.alloc_uninit_slice::<u32>(4);
    ///     for (i, x) in room.iter_mut().enumerate() {
    ///         x.write(i as u32 * 10);
    ///     }
    ///     // SAFETY: every element was written above.
    ///     let xs: &mut [u32] = unsafe { &mut *(room as *mut [_] as *mut [u32]) };
    ///     assert_eq!(xs, &[0, 10, 20, 30]);
    /// });
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_uninit_slice<T>(&self, len: usize) -> &'s mut [MaybeUninit<T>] {
        place::or_fail(self, place::try_alloc_uninit_slice(self, len))
    }

    /// Reserves uninitialised room for `len` `T`s, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     assert_eq!(a.try_alloc_uninit_slice::<u32>(16).unwrap().len(), 16);
    ///     let err = a.try_alloc_uninit_slice::<u32>(1).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    ///     let err = a.try_alloc_uninit_slice::<u32>(usize::MAX).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::CapacityOverflow);
    /// });
    /// ```
    #[inline]
    pub fn try_alloc_uninit_slice<T>(
        &self,
        len: usize,
    ) -> Result<&'s mut [MaybeUninit<T>], AllocError> {
        place::try_alloc_uninit_slice(self, len)
    }
}
