//! The public face of the placement core: [`Place`], one trait for every kind of scope.
//!
//! Invariant: every method is a default method that calls the one generic implementation
//! in this folder; an implementation of `Place` supplies only the hidden core, and only
//! this crate can supply one (`Place` is sealed by a supertrait no user can name). The `Send` bound on values with a
//! destructor is the stricter of the surfaces' bounds, so a helper written against
//! `Place` is sound on a concurrent scope too.
use core::alloc::Layout;
use core::fmt;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorWith};
use crate::scope::builders::string::ScopeString;
use crate::scope::builders::vec::ScopeVec;
use crate::scope::{Scope, ScopeStack};

use super::core::{or_fail, Handle};

/// The sealing supertrait of [`Place`]: public in name only (its module is private).
pub trait Sealed {}
impl Sealed for &ScopeStack<'_> {}
impl Sealed for &Scope<'_, '_> {}
use super::{collect, raw, slices, text, values};

/// Places values in any kind of scope: a [`ScopeStack`] (through `&ScopeStack` or
/// `&Scope`), one thread's [`LocalScope`](crate::LocalScope), or a shared
/// `&`[`ConcurrentScope`](crate::ConcurrentScope).
///
/// Write a helper once against `impl Place<'s>` and call it from a level loader, a
/// rayon job and a concurrent frame alike. Everything it places lives for `'s`, the
/// scope's lifetime, like the references the inherent methods return (as
/// allocator-api2's `Allocator` is implemented for `&A`, `Place` is implemented for
/// the handles, which are cheap to copy).
///
/// The methods have the inherent methods' names, signatures and errors; each has a
/// `try_` form. One bound is stricter than on a plain scope: a value that gets a
/// finalizer must be `Send + 'static`, because on a concurrent scope its destructor may
/// run on another thread (see [`crate::rules`]). Inherent methods stay, so ordinary
/// calls need no import; bring `Place` into scope to write generic helpers.
///
/// The trait is sealed (a hidden supertrait in a private module): only this crate's
/// scope types implement it, so new methods can be added without breaking anyone.
///
/// ```compile_fail,E0277
/// use scope_stack::{Place, ScopeStack};
/// struct Mine<'a, 's>(&'a ScopeStack<'s>);
/// impl<'a, 's> Place<'s> for Mine<'a, 's> { // error: `Sealed` is not implemented
///     type Handle = &'a ScopeStack<'s>;
///     fn handle(&self) -> &'a ScopeStack<'s> { self.0 }
/// }
/// ```
///
/// # What the bounds rule out
///
/// A value with a destructor must not borrow anything that may be gone when the scope
/// ends: the finalizer chain runs after every borrow checked by the compiler has ended.
/// So `alloc_iter` of destructor-carrying items that borrow a local is refused (E0597),
/// and `alloc_iter_pod`, which takes borrowed items, refuses types that need drop
/// (E0080, at build time):
///
/// ```compile_fail,E0597
/// use scope_stack::{LinearAllocator, Place};
/// struct Reader<'a>(&'a str);
/// impl Drop for Reader<'_> {
///     fn drop(&mut self) { println!("{}", self.0) } // would read `name` after it died
/// }
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let name = String::from("frog");
///     (&**level).alloc_iter([Reader(&name)]);
/// });
/// ```
///
/// A value with a destructor placed through `Place` must be `Send`, since on a
/// concurrent scope it is dropped by the thread that closes the scope:
///
/// ```compile_fail,E0277
/// use scope_stack::Place;
/// fn counter<'s>(into: impl Place<'s>) -> &'s std::rc::Rc<u32> {
///     into.new_object(std::rc::Rc::new(0)) // `Rc` is not `Send`
/// }
/// ```
///
/// ```
/// use scope_stack::{LinearAllocator, Place};
///
/// /// Builds `n` labels and collects references to them, in whatever scope it is given.
/// fn labels<'s>(into: impl Place<'s>, n: u32) -> &'s [&'s str] {
///     let names: &'s [&'s str] =
///         into.alloc_iter_pod((0..n).map(|i| &*into.alloc_fmt(format_args!("label {i}"))));
///     names
/// }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("level", |level| {
///     // A level loader: a plain scope.
///     let table = labels(&**level, 3);
///     assert_eq!(table[2], "label 2");
///
///     // A concurrent frame: jobs on other threads fill it through the same helper
///     // (rayon jobs do the same; see the crate docs).
///     level.scope_concurrent("frame", |frame| {
///         let mut out = [&[][..]; 4];
///         std::thread::scope(|jobs| {
///             for (i, slot) in out.iter_mut().enumerate() {
///                 jobs.spawn(move || {
///                     // A job's own thread handle (`frame.local()`), or `frame` itself.
///                     *slot = labels(frame.local(), i as u32 + 1);
///                 });
///             }
///         });
///         assert_eq!(out[3].len(), 4);
///         assert_eq!(labels(frame, 2)[1], "label 1");
///     });
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
#[allow(private_bounds)]
pub trait Place<'s>: Sized + Sealed {
    /// The surface this handle places through (crate-private).
    #[doc(hidden)]
    type Handle: Handle<'s>;

    /// The surface this handle places through (crate-private).
    #[doc(hidden)]
    fn handle(&self) -> Self::Handle;

    /// Places a value that needs no drop ([`ScopeStack::new_pod`]).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(*into.new_pod(41u32) + 1, 42);
    /// # });
    /// ```
    #[track_caller]
    fn new_pod<T>(&self, value: T) -> &'s mut T {
        values::new_pod(self.handle().as_core(), value)
    }

    /// Places a value that needs no drop, or hands it back with the error ([`ScopeStack::try_new_pod`]).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.try_new_pod([0u8; 1 << 17]).unwrap_err().value.len(), 1 << 17);
    /// # });
    /// ```
    fn try_new_pod<T>(&self, value: T) -> Result<&'s mut T, AllocErrorWith<T>> {
        values::try_new_pod(self.handle().as_core(), value)
    }

    /// Places a value; if it needs drop, its destructor runs when the scope ends
    /// ([`ScopeStack::new_object`]). `Send`: on a concurrent scope it may run on another thread.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// into.new_object(String::from("frog")).push('s');
    /// # });
    /// ```
    #[track_caller]
    fn new_object<T: Send + 'static>(&self, value: T) -> &'s mut T {
        or_fail(
            self.handle().as_core(),
            self.try_new_object(value).map_err(|e| e.error),
        )
    }

    /// Places a value with a finalizer if it needs drop, or hands it back with the error.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.try_new_object(vec![0u8; 4]).unwrap().len(), 4);
    /// # });
    /// ```
    fn try_new_object<T: Send + 'static>(&self, value: T) -> Result<&'s mut T, AllocErrorWith<T>> {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { values::try_new_object(self.handle().as_core(), value) }
    }

    /// Reserves room for a value that needs no drop, then builds it in place with `f`
    /// ([`ScopeStack::new_pod_with`]).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.new_pod_with(|| [7u64; 64])[63], 7);
    /// # });
    /// ```
    #[track_caller]
    fn new_pod_with<T>(&self, f: impl FnOnce() -> T) -> &'s mut T {
        or_fail(self.handle().as_core(), self.try_new_pod_with(f))
    }

    /// The `try_` form of [`new_pod_with`](Self::new_pod_with); `f` is not called on an error.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_new_pod_with(|| [0u8; 1 << 17]).is_err());
    /// # });
    /// ```
    fn try_new_pod_with<T>(&self, f: impl FnOnce() -> T) -> Result<&'s mut T, AllocError> {
        values::try_new_pod_with(self.handle().as_core(), f)
    }

    /// As [`new_object`](Self::new_object), built in place by `f`.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.new_object_with(|| vec![1, 2]).len(), 2);
    /// # });
    /// ```
    #[track_caller]
    fn new_object_with<T: Send + 'static>(&self, f: impl FnOnce() -> T) -> &'s mut T {
        or_fail(self.handle().as_core(), self.try_new_object_with(f))
    }

    /// The `try_` form of [`new_object_with`](Self::new_object_with).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_new_object_with(|| String::from("x")).is_ok());
    /// # });
    /// ```
    fn try_new_object_with<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T,
    ) -> Result<&'s mut T, AllocError> {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { values::try_new_object_with(self.handle().as_core(), f) }
    }

    /// Uninitialised room for one `T`, never dropped by the scope.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// let x = into.alloc_uninit::<u64>().write(5);
    /// assert_eq!(*x, 5);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_uninit<T>(&self) -> &'s mut MaybeUninit<T> {
        or_fail(self.handle().as_core(), self.try_alloc_uninit())
    }

    /// The `try_` form of [`alloc_uninit`](Self::alloc_uninit).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_uninit::<[u8; 1 << 20]>().is_err());
    /// # });
    /// ```
    fn try_alloc_uninit<T>(&self) -> Result<&'s mut MaybeUninit<T>, AllocError> {
        values::try_alloc_uninit(self.handle().as_core())
    }

    /// Uninitialised room for `len` `T`s, never dropped by the scope.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_uninit_slice::<u32>(8).len(), 8);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_uninit_slice<T>(&self, len: usize) -> &'s mut [MaybeUninit<T>] {
        or_fail(self.handle().as_core(), self.try_alloc_uninit_slice(len))
    }

    /// The `try_` form of [`alloc_uninit_slice`](Self::alloc_uninit_slice).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_uninit_slice::<u32>(usize::MAX).is_err());
    /// # });
    /// ```
    fn try_alloc_uninit_slice<T>(
        &self,
        len: usize,
    ) -> Result<&'s mut [MaybeUninit<T>], AllocError> {
        raw::try_alloc_uninit_slice(self.handle().as_core(), len)
    }

    /// Raw memory for `layout` (any power-of-two alignment up to [`MAX_ALIGN`](crate::MAX_ALIGN)).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// let p = into.alloc_layout(core::alloc::Layout::new::<[u64; 4]>());
    /// assert_eq!(p.as_ptr() as usize % 8, 0);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        or_fail(self.handle().as_core(), self.try_alloc_layout(layout))
    }

    /// The `try_` form of [`alloc_layout`](Self::alloc_layout).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_layout(core::alloc::Layout::new::<[u8; 1 << 20]>()).is_err());
    /// # });
    /// ```
    fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        raw::try_alloc_layout(self.handle().as_core(), layout)
    }

    /// Raw memory of `size` bytes at `align`.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_raw(24, 64).as_ptr() as usize % 64, 0);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_raw(&self, size: usize, align: usize) -> NonNull<u8> {
        or_fail(self.handle().as_core(), self.try_alloc_raw(size, align))
    }

    /// The `try_` form of [`alloc_raw`](Self::alloc_raw): a bad alignment is an error too.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_raw(8, 3).is_err());
    /// # });
    /// ```
    fn try_alloc_raw(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        raw::try_alloc_raw(self.handle().as_core(), size, align)
    }

    /// Copies a slice into the scope.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_slice_copy(&[1, 2, 3]), &[1, 2, 3]);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &'s mut [T] {
        or_fail(self.handle().as_core(), self.try_alloc_slice_copy(src))
    }

    /// The `try_` form of [`alloc_slice_copy`](Self::alloc_slice_copy).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_slice_copy(&[0u8; 1 << 20][..]).is_err());
    /// # });
    /// ```
    fn try_alloc_slice_copy<T: Copy>(&self, src: &[T]) -> Result<&'s mut [T], AllocError> {
        slices::try_alloc_slice_copy(self.handle().as_core(), src)
    }

    /// Clones a slice into the scope (one finalizer record when `T` needs drop).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// let words = into.alloc_slice_clone(&[String::from("a"), String::from("b")]);
    /// assert_eq!(words[1], "b");
    /// # });
    /// ```
    #[track_caller]
    fn alloc_slice_clone<T: Clone + Send + 'static>(&self, src: &[T]) -> &'s mut [T] {
        or_fail(self.handle().as_core(), self.try_alloc_slice_clone(src))
    }

    /// The `try_` form of [`alloc_slice_clone`](Self::alloc_slice_clone).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_slice_clone(&[String::new()]).is_ok());
    /// # });
    /// ```
    fn try_alloc_slice_clone<T: Clone + Send + 'static>(
        &self,
        src: &[T],
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { slices::try_alloc_slice_clone(self.handle().as_core(), src) }
    }

    /// Builds a slice of `len` elements from `f(index)`.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_slice_fill_with(4, |i| i * i), &[0, 1, 4, 9]);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_slice_fill_with<T: Send + 'static>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> &'s mut [T] {
        or_fail(
            self.handle().as_core(),
            self.try_alloc_slice_fill_with(len, f),
        )
    }

    /// The `try_` form of [`alloc_slice_fill_with`](Self::alloc_slice_fill_with); `f` is not called on an error.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_slice_fill_with(1 << 20, |i| i).is_err());
    /// # });
    /// ```
    fn try_alloc_slice_fill_with<T: Send + 'static>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { slices::try_alloc_slice_fill_with(self.handle().as_core(), len, f) }
    }

    /// A slice of `len` copies of `value`.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_slice_fill_copy(3, 7u8), &[7, 7, 7]);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_slice_fill_copy<T: Copy>(&self, len: usize, value: T) -> &'s mut [T] {
        let h = self.handle();
        or_fail(
            h.as_core(),
            self.try_alloc_slice_fill_copy(len, value)
                .map_err(|e| e.error),
        )
    }

    /// The `try_` form of [`alloc_slice_fill_copy`](Self::alloc_slice_fill_copy); the value comes back with the error.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.try_alloc_slice_fill_copy(1 << 20, 9u64).unwrap_err().value, 9);
    /// # });
    /// ```
    fn try_alloc_slice_fill_copy<T: Copy>(
        &self,
        len: usize,
        value: T,
    ) -> Result<&'s mut [T], AllocErrorWith<T>> {
        slices::try_alloc_slice_fill_copy(self.handle().as_core(), len, value)
    }

    /// A slice of `len` clones of `value`.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_slice_fill_clone(2, &String::from("x"))[1], "x");
    /// # });
    /// ```
    #[track_caller]
    fn alloc_slice_fill_clone<T: Clone + Send + 'static>(
        &self,
        len: usize,
        value: &T,
    ) -> &'s mut [T] {
        or_fail(
            self.handle().as_core(),
            self.try_alloc_slice_fill_clone(len, value),
        )
    }

    /// The `try_` form of [`alloc_slice_fill_clone`](Self::alloc_slice_fill_clone).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_slice_fill_clone(1 << 20, &0u64).is_err());
    /// # });
    /// ```
    fn try_alloc_slice_fill_clone<T: Clone + Send + 'static>(
        &self,
        len: usize,
        value: &T,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { slices::try_alloc_slice_fill_clone(self.handle().as_core(), len, value) }
    }

    /// A slice of `len` default values.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_slice_fill_default::<u16>(3), &[0, 0, 0]);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_slice_fill_default<T: Default + Send + 'static>(&self, len: usize) -> &'s mut [T] {
        or_fail(
            self.handle().as_core(),
            self.try_alloc_slice_fill_default(len),
        )
    }

    /// The `try_` form of [`alloc_slice_fill_default`](Self::alloc_slice_fill_default).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_slice_fill_default::<u64>(1 << 20).is_err());
    /// # });
    /// ```
    fn try_alloc_slice_fill_default<T: Default + Send + 'static>(
        &self,
        len: usize,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { slices::try_alloc_slice_fill_default(self.handle().as_core(), len) }
    }

    /// Collects an iterator of any length into a slice, grown in place at the top of the
    /// scope's region. For items that borrow (say `&'s str`s), use
    /// [`alloc_iter_pod`](Self::alloc_iter_pod).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_iter((0..10).filter(|n| n % 3 == 0)), &[0, 3, 6, 9]);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_iter<T: Send + 'static>(&self, iter: impl IntoIterator<Item = T>) -> &'s mut [T] {
        or_fail(self.handle().as_core(), self.try_alloc_iter(iter))
    }

    /// The `try_` form of [`alloc_iter`](Self::alloc_iter): the items taken so far are dropped on an error.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_iter(0..1_000_000u64).is_err());
    /// # });
    /// ```
    fn try_alloc_iter<T: Send + 'static>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { collect::try_alloc_iter(self.handle().as_core(), iter) }
    }

    /// Collects items that need no drop into a slice, with no `'static` bound: items may
    /// borrow, for example from the same scope ([`ScopeStack::alloc_iter_pod`]). A type that
    /// needs drop is a compile-time error, as for [`new_pod`](Self::new_pod).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// let names: [&str; 2] = [into.alloc_str("frog"), into.alloc_str("toad")];
    /// let refs: &[&str] = into.alloc_iter_pod(names.iter().copied());
    /// assert_eq!(refs, &["frog", "toad"]);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_iter_pod<T>(&self, iter: impl IntoIterator<Item = T>) -> &'s mut [T] {
        or_fail(self.handle().as_core(), self.try_alloc_iter_pod(iter))
    }

    /// The `try_` form of [`alloc_iter_pod`](Self::alloc_iter_pod).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_iter_pod(0..1_000_000u64).is_err());
    /// # });
    /// ```
    fn try_alloc_iter_pod<T>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'s mut [T], AllocError> {
        collect::try_alloc_iter_pod(self.handle().as_core(), iter)
    }

    /// Collects an iterator of known length; the room is reserved once.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_iter_exact([1, 2].map(|x| x * 10)), &[10, 20]);
    /// # });
    /// ```
    #[track_caller]
    fn alloc_iter_exact<T: Send + 'static, I>(&self, iter: I) -> &'s mut [T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        or_fail(self.handle().as_core(), self.try_alloc_iter_exact(iter))
    }

    /// The `try_` form of [`alloc_iter_exact`](Self::alloc_iter_exact).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_iter_exact(vec![0u64; 1 << 20]).is_err());
    /// # });
    /// ```
    fn try_alloc_iter_exact<T: Send + 'static, I>(&self, iter: I) -> Result<&'s mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        // SAFETY: `T: Send + 'static` satisfies the drop rule on every surface.
        unsafe { collect::try_alloc_iter_exact(self.handle().as_core(), iter) }
    }

    /// Copies a string into the scope.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_str("frog"), "frog");
    /// # });
    /// ```
    #[track_caller]
    fn alloc_str(&self, src: &str) -> &'s mut str {
        or_fail(self.handle().as_core(), self.try_alloc_str(src))
    }

    /// The `try_` form of [`alloc_str`](Self::alloc_str).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_str(&"x".repeat(1 << 20)).is_err());
    /// # });
    /// ```
    fn try_alloc_str(&self, src: &str) -> Result<&'s mut str, AllocError> {
        text::try_alloc_str(self.handle().as_core(), src)
    }

    /// Formats straight into the scope.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert_eq!(into.alloc_fmt(format_args!("level {}", 2)), "level 2");
    /// # });
    /// ```
    #[track_caller]
    fn alloc_fmt(&self, args: fmt::Arguments<'_>) -> &'s mut str {
        or_fail(self.handle().as_core(), self.try_alloc_fmt(args))
    }

    /// The `try_` form of [`alloc_fmt`](Self::alloc_fmt).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(into.try_alloc_fmt(format_args!("{}", "x".repeat(1 << 20))).is_err());
    /// # });
    /// ```
    fn try_alloc_fmt(&self, args: fmt::Arguments<'_>) -> Result<&'s mut str, AllocError> {
        text::try_alloc_fmt(self.handle().as_core(), args)
    }

    /// An empty [`ScopeVec`] at the top of the scope. Through `Place` the handle is
    /// shared, so the vector does not borrow the scope mutably: where something else is
    /// placed meanwhile, the vector notices at its next growth (a run-time check) and
    /// moves to fresh room instead of growing in place, leaving its old room unused.
    /// [`ScopeStack::new_vec`] borrows mutably and always grows in place. A slot's
    /// `build` closure, which gets `&ScopeStack`, builds through this one.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// let mut v = Place::new_vec(&into);
    /// v.push(1u32);
    /// let other = into.new_pod(2u32); // allowed through a shared handle
    /// v.extend(2..100);
    /// assert_eq!(v.into_slice().len(), 99);
    /// assert_eq!(*other, 2);
    /// # });
    /// ```
    fn new_vec<T>(&self) -> ScopeVec<'s, 's, T, Self::Handle> {
        ScopeVec::new_in(self.handle())
    }

    /// A [`ScopeVec`] with room for at least `n` elements (see [`new_vec`](Self::new_vec)).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(Place::vec_with_capacity::<u8>(&into, 8).capacity() >= 8);
    /// # });
    /// ```
    #[track_caller]
    fn vec_with_capacity<T>(&self, n: usize) -> ScopeVec<'s, 's, T, Self::Handle> {
        let h = self.handle();
        or_fail(h.as_core(), self.try_vec_with_capacity(n))
    }

    /// The `try_` form of [`vec_with_capacity`](Self::vec_with_capacity).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(Place::try_vec_with_capacity::<u64>(&into, 1 << 20).is_err());
    /// # });
    /// ```
    fn try_vec_with_capacity<T>(
        &self,
        n: usize,
    ) -> Result<ScopeVec<'s, 's, T, Self::Handle>, AllocError> {
        ScopeVec::with_capacity_in(self.handle(), n)
    }

    /// An empty [`ScopeString`] at the top of the scope (shared, as
    /// [`new_vec`](Self::new_vec)).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// use core::fmt::Write;
    /// let mut s = Place::new_string(&into);
    /// write!(s, "{}-{}", "forest", 2).unwrap();
    /// assert_eq!(s.into_str(), "forest-2");
    /// # });
    /// ```
    fn new_string(&self) -> ScopeString<'s, 's, Self::Handle> {
        ScopeString::new_in(self.handle())
    }

    /// A [`ScopeString`] with room for at least `n` bytes.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(Place::string_with_capacity(&into, 8).capacity() >= 8);
    /// # });
    /// ```
    #[track_caller]
    fn string_with_capacity(&self, n: usize) -> ScopeString<'s, 's, Self::Handle> {
        let h = self.handle();
        or_fail(h.as_core(), self.try_string_with_capacity(n))
    }

    /// The `try_` form of [`string_with_capacity`](Self::string_with_capacity).
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// # let into = &**level;
    /// assert!(Place::try_string_with_capacity(&into, 1 << 20).is_err());
    /// # });
    /// ```
    fn try_string_with_capacity(
        &self,
        n: usize,
    ) -> Result<ScopeString<'s, 's, Self::Handle>, AllocError> {
        ScopeString::with_capacity_in(self.handle(), n)
    }
}

impl<'a, 's> Handle<'s> for &'a ScopeStack<'s> {
    type Core<'h>
        = &'a ScopeStack<'s>
    where
        Self: 'h;
    #[inline(always)]
    fn as_core(&self) -> &'a ScopeStack<'s> {
        self
    }
}

impl<'a, 's> Place<'s> for &'a ScopeStack<'s> {
    type Handle = &'a ScopeStack<'s>;
    #[inline(always)]
    fn handle(&self) -> Self::Handle {
        self
    }
}

impl<'a, 's> Place<'s> for &'a Scope<'s, '_> {
    type Handle = &'a ScopeStack<'s>;
    #[inline(always)]
    fn handle(&self) -> Self::Handle {
        self
    }
}
