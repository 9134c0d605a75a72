//! Scope stacks: a rewind point plus a finalizer chain, nested over one block.
//!
//! Invariants this module keeps (the soundness rules of the crate's docs, see
//! [`crate::rules`]):
//! - **No reference outlives its scope.** A scope is only ever lent to a closure as
//!   `&mut Scope<'c, 'env>` (a `ScopeStack<'c>` handle) with a higher-ranked `'c`; everything it hands out is
//!   `&'c mut T`, so nothing can leave the closure, and the scope unwinds (in `Drop`)
//!   right after the closure returns or panics.
//! - **Only the innermost live scope allocates.** Opening a child takes `&mut self`, so
//!   the parent can hand out nothing while the child lives; values the parent already
//!   handed out carry `'p`, not the borrow of the handle, and stay usable in the child.
//!   While a child lives the parent's bump pointer is therefore exactly the child's
//!   start, so rewinding to the start restores the parent.
//! - **Reverse-order destruction.** Each finalized value links a record onto this
//!   scope's chain; unwinding runs the chain newest-first, then rewinds the block. Values
//!   that need no drop get no record, so a scope of plain data unwinds in O(1).
//! - **No destructor sees a destroyed value.** The chain hides drop order from the drop
//!   checker, so values that get a finalizer must be `'static` (they can hold no
//!   borrow of scope memory); non-`'static` values may only be placed when they need no
//!   drop (`new_pod`). [`ScopeStack::new_object_unchecked`] is the `unsafe` way out.
//! - `ScopeStack<'s>` is invariant in `'s`, and nothing can move a `ScopeStack` out of
//!   the `&mut` it is lent as.

use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, needs_drop, size_of, MaybeUninit};
use core::ptr::{self, NonNull};

use crate::cursor::Cursor;
use crate::error::{AllocError, AllocErrorKind, AllocErrorWith};
use crate::finalizer::{self, ObjectLayout, RunLayout, SliceLayout};
use crate::linear::{LinearAllocator, MAX_ALIGN};
use crate::scope_info::{Extras, ScopeInfo};

/// One scope: everything allocated through it lives until it unwinds.
///
/// You never own a `ScopeStack`; a closure passed to [`LinearAllocator::scope`] or
/// [`ScopeStack::scope`] receives a [`Scope`] handle that derefs to one. Everything
/// it hands out is `&'s mut T`, tied to the scope's lifetime rather than to the borrow of
/// the handle, so values stay usable inside child scopes.
///
/// - [`new_pod`](Self::new_pod) places a value that needs no drop, with zero overhead.
/// - [`new_object`](Self::new_object) places any `'static` value; if it needs drop, a
///   finalizer record goes in front of it and its destructor runs on unwind. Objects of
///   one type placed back to back share one record (a *run*), so the later ones carry
///   no overhead and unwind with no extra call.
/// - [`alloc_layout`](Self::alloc_layout), the `alloc_slice_*` family,
///   [`alloc_str`](Self::alloc_str) and [`alloc_fmt`](Self::alloc_fmt) cover raw memory,
///   slices and text.
/// - [`new_pod_with`](Self::new_pod_with), [`new_object_with`](Self::new_object_with),
///   [`alloc_uninit`](Self::alloc_uninit) and
///   [`alloc_uninit_slice`](Self::alloc_uninit_slice) build values in place (below).
/// - [`remaining`](Self::remaining) and [`budget`](Self::budget) say how much more the
///   scope may take.
/// - Each has a `try_` form returning an error (with the value handed back, where one was
///   passed in) instead of panicking.
///
/// # Dropping a value before its scope ends
///
/// Values placed with `new_object` live until their scope unwinds. For one that
/// should go earlier (a loader's buffers, a handle to a file), put it in an
/// `allocator_api2::boxed::Box` allocated from the scope: `&ScopeStack` (and `&Scope`)
/// implement allocator-api2's `Allocator`. The box owns its value, drops it exactly once
/// when the box is dropped, and is no finalizer's business, so the scope does not drop
/// it again when it unwinds. The box borrows the scope, so it cannot outlive it. If the
/// box was the scope's most recent allocation, its memory is given back at once;
/// otherwise the bytes stay taken until the scope unwinds.
///
/// ```
/// use allocator_api2::boxed::Box;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("level", |level| {
///     let used = level.used();
///     let buffer = Box::new_in(vec![0u8; 64], &**level); // the Vec header lives in the scope
///     assert_eq!(buffer.len(), 64);
///     drop(buffer); // the Vec is dropped now, not at the end of "level"
///     assert_eq!(level.used(), used); // it was the newest allocation: its bytes came back
/// });
/// ```
///
/// # In-place construction
///
/// `new_pod(value)` receives the value as an argument, so a large value is built on the
/// stack first and then copied; an 8 MiB array would overflow a small thread stack. The
/// `_with` forms reserve the room first and then call the closure, writing its result
/// straight into place:
///
/// - In optimised builds (`--release`), the closure is inlined into an
///   `#[inline(always)]` path that ends in one write to the reserved slot, and the
///   optimiser builds the value there: tests build 8 MiB arrays this way on a thread
///   with a 256 KiB stack. This is what the optimiser does, not a language guarantee;
///   a closure too complex to inline (or one that builds its value in a local first and
///   returns it through calls the optimiser cannot see through) may still go through
///   the stack.
/// - In debug builds nothing is inlined, so the closure's result goes through the
///   stack (more than once). Do not rely on `_with` to avoid large temporaries there.
/// - [`alloc_uninit`](Self::alloc_uninit) and
///   [`alloc_uninit_slice`](Self::alloc_uninit_slice) hand out the uninitialised room
///   itself: nothing passes through the stack in any build, and you write the value
///   piece by piece.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
/// memory.scope("systems", |systems| {
///     let log = systems.new_object(Vec::<String>::new()); // finalized: freed on unwind
///     for level in 1..=2 {
///         systems.scope("level", |lvl| {
///             let name = lvl.alloc_fmt(format_args!("level {level}"));
///             log.push(name.to_string()); // the parent's value is usable in the child
///         });
///     }
///     assert_eq!(log.len(), 2);
/// });
/// ```
pub struct ScopeStack<'s> {
    /// The bump cursor this scope allocates through (shared with its borrow-children).
    /// It also knows the block ([`Cursor::owner`]), so the handle is two words.
    cursor: &'s Cursor,
    /// This scope's record in the block's list of live scopes (name, start, finalizer
    /// chain, budget, pools). It lives in the frame of the call that opened the scope.
    info: &'s ScopeInfo,
    /// Invariant in `'s`.
    _invariant: PhantomData<fn(&'s ()) -> &'s ()>,
}

/// The handle a scope's closure receives: a [`ScopeStack`] plus a marker lifetime.
///
/// It derefs to [`ScopeStack<'s>`](ScopeStack), which has all the methods; pass it to
/// functions that take `&ScopeStack<'s>` or `&mut ScopeStack<'s>` and it coerces.
///
/// `'env` stands for everything that outlives the closure (the parent's values, the
/// caller's locals). The type states `'env: 's`, which lets values in this scope hold
/// references to that data (std's `thread::scope` uses the same device). Without it, a
/// child scope could not even store a reference to a value of its parent.
///
/// ```
/// use scope_stack::{LinearAllocator, ScopeStack};
///
/// fn spawn_names<'s>(scope: &ScopeStack<'s>, n: usize) -> &'s mut [u32] {
///     scope.alloc_slice_fill_with(n, |i| i as u32)
/// }
///
/// let caller_data = String::from("level-1.dat");
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("level", |level| {
///     let ids = spawn_names(level, 4);
///     let path = level.new_pod(caller_data.as_str()); // borrows the caller's String
///     level.scope("frame", |frame| {
///         let picked = frame.alloc_slice_copy(&[&ids[1], &ids[3]]); // borrows the parent
///         assert_eq!(*picked[1], 3);
///         assert_eq!(*path, "level-1.dat");
///     });
/// });
/// ```
pub struct Scope<'s, 'env: 's> {
    stack: ScopeStack<'s>,
    _env: PhantomData<&'s mut &'env ()>,
}

impl<'s> Scope<'s, '_> {
    pub(crate) fn new(stack: ScopeStack<'s>) -> Self {
        Scope {
            stack,
            _env: PhantomData,
        }
    }
}

impl<'s> core::ops::Deref for Scope<'s, '_> {
    type Target = ScopeStack<'s>;
    #[inline(always)]
    fn deref(&self) -> &ScopeStack<'s> {
        &self.stack
    }
}

impl<'s> core::ops::DerefMut for Scope<'s, '_> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut ScopeStack<'s> {
        &mut self.stack
    }
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.stack, f)
    }
}

/// Closes a scope when dropped, even while the closure (or a finalizer) panics: runs the
/// finalizer chain, then rewinds the block, restores the limit a budget lowered and
/// unlinks the record.
///
/// It lives in the frame of [`run_scope`], not in the handle the closure borrows, and
/// keeps its own copies of the start, the parent record and the saved limit. The close
/// path then reads nothing back from the record except the chain head, so opening and
/// closing a scope passes each value through memory at most once per scope (the
/// record's copies exist for reports and diagnostics).
struct CloseScope<'a> {
    alloc: &'a LinearAllocator,
    cursor: &'a Cursor,
    info: &'a ScopeInfo,
    /// Where the scope began (its rewind point).
    start: usize,
    /// The record that was innermost when the scope opened.
    parent: Option<NonNull<ScopeInfo>>,
    /// The cursor limit to restore, when a budget lowered it.
    saved_limit: Option<usize>,
}

impl Drop for CloseScope<'_> {
    #[inline]
    fn drop(&mut self) {
        /// The rewind half, so it also runs when a finalizer panics.
        struct Rewind<'b>(&'b CloseScope<'b>);
        impl Drop for Rewind<'_> {
            #[inline]
            fn drop(&mut self) {
                let close = self.0;
                #[cfg(feature = "debug-fill")]
                crate::debug_fill::released(close.cursor, close.start);
                close.alloc.rewind(close.cursor, close.start);
                if let Some(limit) = close.saved_limit {
                    close.cursor.set_limit(limit);
                }
                close.alloc.set_innermost(close.parent);
            }
        }
        let _rewind = Rewind(self);
        // SAFETY: the scope is ending; every reference it handed out carried `'s`, which
        // ends here, so nothing uses the finalized values again. Child scopes are gone
        // (they borrowed the handle mutably), and so is the handle itself (declared
        // after this guard in `run_scope`).
        unsafe { self.info.chain.run_all() };
    }
}

/// Opens a scope on `cursor` (applying `budget`), runs `f`, and unwinds the scope.
///
/// The scope's record ([`ScopeInfo`]) lives in this frame and is linked as the block's
/// innermost scope for as long as `f` runs.
#[inline]
pub(crate) fn run_scope<'env, R>(
    alloc: &LinearAllocator,
    cursor: &Cursor,
    name: &str,
    budget: Option<usize>,
    f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
) -> R {
    let start = cursor.cur();
    let parent = alloc.innermost();
    // A budgeted scope keeps its extras here; the others write no word for them.
    let mut extras = MaybeUninit::<Extras>::uninit();
    let extras_ptr = budget.map(|b| NonNull::from(&*extras.write(Extras::new(Some(b)))));
    let info = ScopeInfo::new(name, start, parent, extras_ptr);
    let mut saved_limit = None;
    if let Some(budget) = budget {
        let cap = start.saturating_add(budget);
        let limit = cursor.limit();
        if cap < limit {
            saved_limit = Some(limit);
            cursor.set_limit(cap);
        }
    }
    alloc.set_innermost(Some(NonNull::from(&info)));
    let _close = CloseScope {
        alloc,
        cursor,
        info: &info,
        start,
        parent,
        saved_limit,
    };
    let mut scope = Scope::new(ScopeStack {
        cursor,
        info: &info,
        _invariant: PhantomData,
    });
    f(&mut scope)
}

impl<'s> ScopeStack<'s> {
    /// Opens a child scope with a byte budget: it (and its own children) may allocate at
    /// most `bytes` bytes, counted from where it begins. Going over is an
    /// [`AllocErrorKind::BudgetExceeded`] error naming the scope and its budget, even
    /// when the block still has room. Otherwise like [`scope`](Self::scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("systems", |systems| {
    ///     systems.scope_with_budget("audio", 1024, |audio| {
    ///         audio.alloc_raw(1000, 1);
    ///         let err = audio.try_alloc_raw(100, 1).unwrap_err();
    ///         assert_eq!(err.kind(), AllocErrorKind::BudgetExceeded);
    ///         assert!(err.to_string().contains("\"audio\" (budget 1024 bytes)"));
    ///     });
    ///     systems.alloc_raw(10_000, 1); // the parent is not limited
    /// });
    /// ```
    pub fn scope_with_budget<'env, R>(
        &mut self,
        name: &str,
        bytes: usize,
        f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
    ) -> R {
        run_scope(self.alloc(), self.cursor, name, Some(bytes), f)
    }

    /// Opens a child scope, runs `f` with it, and unwinds it: the child's finalizers run
    /// in reverse order and the block rewinds to where the child began. The closure's
    /// result comes back.
    ///
    /// While the child lives this scope is mutably borrowed, so it cannot allocate; the
    /// values it handed out earlier remain usable inside `f`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("systems", |systems| {
    ///     let settings = systems.new_pod([1u32; 4]);
    ///     let before = systems.allocator().used();
    ///     let sum = systems.scope("frame", |frame| {
    ///         let scratch = frame.alloc_slice_copy(&settings[..]);
    ///         scratch.iter().sum::<u32>()
    ///     });
    ///     assert_eq!(sum, 4);
    ///     assert_eq!(systems.allocator().used(), before); // the frame rewound
    /// });
    /// ```
    #[inline]
    pub fn scope<'env, R>(
        &mut self,
        name: &str,
        f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
    ) -> R {
        run_scope(self.alloc(), self.cursor, name, None, f)
    }

    // ----- introspection -----

    /// The name this scope was opened with.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("systems", |s| assert_eq!(s.name(), "systems"));
    /// ```
    #[inline]
    pub fn name(&self) -> &'s str {
        // SAFETY: the record lives as long as the scope (`'s`), and so does its name.
        unsafe { &*core::ptr::from_ref(self.info.name()) }
    }

    /// Nesting depth: 0 for the outermost scope, 1 for its children, and so on.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| a.scope("b", |b| assert_eq!(b.depth(), 1)));
    /// ```
    pub fn depth(&self) -> u32 {
        self.info.depth()
    }

    /// The block this scope allocates from (for its statistics).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| assert_eq!(a.allocator().capacity(), 64));
    /// ```
    #[inline]
    pub fn allocator(&self) -> &'s LinearAllocator {
        self.alloc()
    }

    /// The block, through the cursor (the handle keeps no pointer of its own to it).
    #[inline]
    fn alloc(&self) -> &'s LinearAllocator {
        // SAFETY: the cursor's owner was set from a shared borrow of the block when the
        // outermost scope on this cursor opened (`LinearAllocator::scope`, or the cursor
        // was made by `scope_shared`), and that borrow lasts at least as long as `'s`.
        unsafe { self.cursor.owner().as_ref() }
    }

    /// Offset of this scope's start from the start of the block.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_pod([0u8; 10]);
    ///     a.scope("b", |b| assert_eq!(b.start_offset(), 10));
    /// });
    /// ```
    pub fn start_offset(&self) -> usize {
        self.alloc().offset_of(self.info.start)
    }

    /// Bytes this scope has taken so far (including alignment padding and finalizer
    /// records).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_pod(1u64);
    ///     assert_eq!(a.used(), 8);
    /// });
    /// ```
    #[inline]
    pub fn used(&self) -> usize {
        self.alloc()
            .allocated_to(self.cursor.cur())
            .saturating_sub(self.info.start)
    }

    /// How many finalizer records this scope holds (values whose destructor will run
    /// when it unwinds).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_object(String::from("needs drop"));
    ///     a.new_object(5u32); // no drop, no record
    ///     assert_eq!(a.finalizer_count(), 1);
    /// });
    /// ```
    pub fn finalizer_count(&self) -> usize {
        self.info.chain.len()
    }

    /// Bytes this scope may still allocate: the room left in the block, or less when a
    /// budget applies (this scope's own, or that of a budgeted scope it is nested in).
    ///
    /// A request of exactly `remaining()` bytes at alignment 1 succeeds; one byte more
    /// fails. Requests with a larger alignment may need padding, and values that need
    /// drop need a finalizer record too, so they fit in less. While a scratch scope
    /// interrupts this one (see [`crate::scratch()`]), nothing may be allocated here and
    /// this is 0.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1000).unwrap();
    /// memory.scope("systems", |systems| {
    ///     systems.alloc_raw(100, 1);
    ///     assert_eq!(systems.remaining(), 900);
    ///     systems.scope_with_budget("audio", 64, |audio| {
    ///         audio.alloc_raw(14, 1);
    ///         assert_eq!(audio.remaining(), 50); // the budget binds, not the block
    ///         audio.alloc_raw(audio.remaining(), 1);
    ///         assert!(audio.try_alloc_raw(1, 1).is_err());
    ///     });
    /// });
    /// ```
    #[inline]
    pub fn remaining(&self) -> usize {
        self.cursor.remaining()
    }

    /// The byte budget this scope was opened with
    /// ([`scope_with_budget`](Self::scope_with_budget)), or `None` for a scope opened
    /// without one. A scope nested inside a budgeted one reports `None` here but is still
    /// held to the outer budget; [`remaining`](Self::remaining) shows the room that
    /// actually applies.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1000).unwrap();
    /// memory.scope("systems", |systems| {
    ///     assert_eq!(systems.budget(), None);
    ///     systems.scope_with_budget("audio", 64, |audio| {
    ///         assert_eq!(audio.budget(), Some(64));
    ///         audio.scope("voice", |voice| {
    ///             assert_eq!(voice.budget(), None);
    ///             assert_eq!(voice.remaining(), 64); // but the outer budget applies
    ///         });
    ///     });
    /// });
    /// ```
    #[inline]
    pub fn budget(&self) -> Option<usize> {
        self.info.budget()
    }

    /// Checks a pool's slot count: not 0 and at most `max` (the index width). `per_slot`
    /// is the pool's bytes per slot, for the error's size.
    pub(crate) fn check_pool_capacity<T>(
        &self,
        capacity: usize,
        max: usize,
        per_slot: usize,
    ) -> Result<(), AllocError> {
        if capacity == 0 {
            return Err(self.error(AllocErrorKind::InvalidCapacity, 0, align_of::<T>()));
        }
        if capacity > max {
            let bytes = capacity.saturating_mul(per_slot);
            return Err(self.error(AllocErrorKind::TooManySlots, bytes, align_of::<T>()));
        }
        Ok(())
    }

    /// Carves uninitialised room for `len` `E`s (a pool's side table or slot array).
    pub(crate) fn try_alloc_array_uninit<E>(&self, len: usize) -> Result<NonNull<E>, AllocError> {
        let layout = Layout::array::<E>(len).map_err(|_| {
            self.error(
                AllocErrorKind::CapacityOverflow,
                usize::MAX,
                align_of::<E>(),
            )
        })?;
        Ok(self.try_alloc_layout(layout)?.cast::<E>())
    }

    /// Registers a pool carved from this scope, for reports. Allocates the link record
    /// in the scope; if that fails, the pool simply goes unreported.
    ///
    /// # Safety
    /// `link.snapshot` may read `link.ptr` until the scope ends.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) unsafe fn register_pool(&self, link: crate::scope_info::PoolLink) {
        if !self.info.has_extras() {
            // Most scopes have no extras; this one gets them from its own memory.
            match self.try_new_pod(crate::scope_info::Extras::new(None)) {
                // SAFETY: the extras live in this scope's memory, until it ends.
                Ok(e) => unsafe { self.info.set_extras(NonNull::from(&*e)) },
                Err(_) => return,
            }
        }
        if let Ok(l) = self.try_new_pod(link) {
            // SAFETY: the link lives in this scope's memory; the caller vouches for it.
            unsafe { self.info.add_pool(NonNull::from(l)) };
        }
    }

    /// The bump cursor this scope allocates through.
    pub(crate) fn cursor(&self) -> &'s Cursor {
        self.cursor
    }

    // ----- errors -----

    pub(crate) fn error(&self, kind: AllocErrorKind, size: usize, align: usize) -> AllocError {
        AllocError::in_scope(
            kind,
            size,
            align,
            self.cursor.remaining(),
            self.alloc().capacity(),
            self.info.name(),
        )
    }

    /// The error for a request of `size` bytes at `align` that did not fit under the
    /// cursor's limit: misuse (a suspended scope), a budget, or the block itself.
    #[cold]
    #[inline(never)]
    fn oom(&self, size: usize, align: usize) -> AllocError {
        if self.cursor.is_suspended() {
            return self.error(AllocErrorKind::NotInnermost, size, align);
        }
        let limit = self.cursor.limit();
        let cur = self.cursor.cur();
        let aligned = (cur + (align - 1)) & !(align - 1);
        let end = self.alloc().end_addr();
        let fits_block = aligned <= end && size <= end - aligned;
        if fits_block {
            // A budget binds: name the budgeted scope that set the limit.
            let mut at = Some(self.info);
            while let Some(info) = at {
                if let Some(budget) = info.budget() {
                    if info.start.saturating_add(budget) == limit {
                        return AllocError::in_scope(
                            AllocErrorKind::BudgetExceeded,
                            size,
                            align,
                            limit.saturating_sub(cur),
                            self.alloc().capacity(),
                            info.name(),
                        )
                        .with_budget(budget);
                    }
                }
                // SAFETY: parents of a live scope are live (scope_info invariant).
                at = info.parent.map(|p| unsafe { &*p.as_ptr() });
            }
        }
        let err = self.error(AllocErrorKind::OutOfMemory, size, align);
        match self.alloc().largest_scope() {
            Some((name, bytes)) if bytes > 0 => err.with_holder(name, bytes),
            _ => err,
        }
    }

    // ----- raw memory -----

    /// Checks a runtime (size, align) request and bump-allocates it.
    #[inline]
    fn bump_checked(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        if !align.is_power_of_two() {
            return Err(self.error(AllocErrorKind::InvalidAlignment, size, align));
        }
        if align > MAX_ALIGN {
            return Err(self.error(AllocErrorKind::AlignmentTooLarge, size, align));
        }
        if size > isize::MAX as usize {
            return Err(self.error(AllocErrorKind::CapacityOverflow, size, align));
        }
        if size == 0 {
            return Ok(dangling(align));
        }
        self.cursor
            .bump_any(size, align)
            .ok_or_else(|| self.oom(size, align))
    }

    /// Bump-allocates room for one `T`-shaped block of `SIZE` bytes at `ALIGN`, where both
    /// are compile-time constants. The branches on them fold away.
    #[inline(always)]
    fn bump_const(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        if align > MAX_ALIGN {
            return Err(self.too_aligned(size, align));
        }
        let got = if size <= MAX_ALIGN {
            self.cursor.bump_small(size, align)
        } else {
            self.cursor.bump_any(size, align)
        };
        match got {
            Some(p) => Ok(p),
            None => Err(self.oom(size, align)),
        }
    }

    #[cold]
    #[inline(never)]
    fn too_aligned(&self, size: usize, align: usize) -> AllocError {
        self.error(AllocErrorKind::AlignmentTooLarge, size, align)
    }

    /// Allocates uninitialised memory for `layout` (zero-sized layouts get an aligned
    /// dangling pointer and use no memory).
    ///
    /// # Panics
    /// When the scope is out of memory or the alignment is above [`MAX_ALIGN`]; see
    /// [`try_alloc_layout`](Self::try_alloc_layout).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use core::alloc::Layout;
    /// let mut memory = LinearAllocator::with_capacity(8192).unwrap();
    /// memory.scope("a", |a| {
    ///     let p = a.alloc_layout(Layout::from_size_align(100, 64).unwrap());
    ///     assert_eq!(p.as_ptr() as usize % 64, 0);
    /// });
    /// ```
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        match self.try_alloc_layout(layout) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Allocates uninitialised memory for `layout`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// use core::alloc::Layout;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let err = a.try_alloc_layout(Layout::from_size_align(65, 1).unwrap()).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    /// });
    /// ```
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        self.try_alloc_raw(layout.size(), layout.align())
    }

    /// Allocates `size` uninitialised bytes aligned to `align`.
    ///
    /// # Panics
    /// When `align` is not a power of two or is above [`MAX_ALIGN`], when `size` exceeds
    /// `isize::MAX`, or when the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8192).unwrap();
    /// memory.scope("a", |a| {
    ///     let page = a.alloc_raw(4096, 4096);
    ///     assert_eq!(page.as_ptr() as usize % 4096, 0);
    /// });
    /// ```
    pub fn alloc_raw(&self, size: usize, align: usize) -> NonNull<u8> {
        match self.try_alloc_raw(size, align) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Allocates `size` uninitialised bytes aligned to `align`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     assert_eq!(a.try_alloc_raw(8, 3).unwrap_err().kind(), AllocErrorKind::InvalidAlignment);
    ///     assert_eq!(a.try_alloc_raw(8, 8192).unwrap_err().kind(), AllocErrorKind::AlignmentTooLarge);
    ///     assert!(a.try_alloc_raw(64, 1).is_ok());
    /// });
    /// ```
    pub fn try_alloc_raw(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        let p = self.bump_checked(size, align)?;
        #[cfg(feature = "debug-fill")]
        crate::debug_fill::fresh(p, size);
        Ok(p)
    }

    // ----- single values -----

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
    pub fn new_pod<T>(&self, value: T) -> &'s mut T {
        const {
            assert!(
                !needs_drop::<T>(),
                "new_pod: this type needs drop; use new_object"
            )
        };
        /// The out-of-memory panic, out of line. It never returns, so the fast path
        /// keeps nothing alive across it: no stack frame, no saved registers.
        #[cold]
        #[inline(never)]
        #[track_caller]
        fn out_of_memory(scope: &ScopeStack<'_>, size: usize, align: usize) -> ! {
            scope.fail(scope.oom(size, align))
        }

        if size_of::<T>() == 0 {
            return self.place_zst(value);
        }
        // Both conditions are constants, so this folds to one arm. Small types (the usual
        // case) take the hot path: one bump, one branch.
        if size_of::<T>() <= MAX_ALIGN && align_of::<T>() <= MAX_ALIGN {
            return match self.cursor.bump_small(size_of::<T>(), align_of::<T>()) {
                // SAFETY: fresh, exclusive memory of the right size and alignment for a
                // `T` that lives until the scope unwinds (`'s`).
                Some(p) => unsafe { place(p.cast::<T>(), value) },
                None => out_of_memory(self, size_of::<T>(), align_of::<T>()),
            };
        }
        match self.bump_const(size_of::<T>(), align_of::<T>()) {
            // SAFETY: as above.
            Ok(p) => unsafe { place(p.cast::<T>(), value) },
            Err(e) => self.fail(e),
        }
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
        const {
            assert!(
                !needs_drop::<T>(),
                "try_new_pod: this type needs drop; use try_new_object"
            )
        };
        if size_of::<T>() == 0 {
            return Ok(self.place_zst(value));
        }
        match self.bump_const(size_of::<T>(), align_of::<T>()) {
            // SAFETY: as in `new_pod`.
            Ok(p) => Ok(unsafe { place(p.cast::<T>(), value) }),
            Err(error) => Err(AllocErrorWith { error, value }),
        }
    }

    /// Places a zero-sized value at an aligned dangling address.
    #[inline(always)]
    fn place_zst<T>(&self, value: T) -> &'s mut T {
        // SAFETY: any non-null, aligned pointer is valid for a zero-sized `T`. The value
        // is forgotten into that address; if it needs drop, the caller links a record.
        unsafe { place(dangling(align_of::<T>()).cast::<T>(), value) }
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
    pub fn new_object<T: 'static>(&self, value: T) -> &'s mut T {
        match self.try_new_object(value) {
            Ok(r) => r,
            Err(e) => self.fail(e.error),
        }
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
        if !needs_drop::<T>()
            || align_of::<T>() > MAX_ALIGN
            || size_of::<T>() > MAX_ALIGN
            || size_of::<T>() == 0
        {
            // SAFETY: `T: 'static`, so the value holds no borrow that could dangle when
            // its finalizer runs.
            return unsafe { self.try_new_object_unchecked(value) };
        }
        // Same type as the newest finalized value, placed right behind it: extend its run.
        let cursor = self.cursor;
        let cur = cursor.cur();
        if let Some(end) = self.info.chain.run_end::<T>(cur) {
            if let Some(slot) = cursor.bump_small(size_of::<T>(), align_of::<T>()) {
                debug_assert_eq!(slot.as_ptr().addr(), end);
                // SAFETY: `slot` is the fresh memory right after the run; the value is
                // written before the run counts it. `T: 'static` (drop rule).
                unsafe {
                    slot.cast::<T>().as_ptr().write(value);
                    self.info.chain.grow_run::<T>();
                    return Ok(&mut *slot.cast::<T>().as_ptr());
                }
            }
        }
        let record = match self.bump_const(RunLayout::<T>::FIRST_SIZE, RunLayout::<T>::ALIGN) {
            Ok(p) => p,
            Err(error) => return Err(AllocErrorWith { error, value }),
        };
        // SAFETY: `record` has room for a run record and one `T`, aligned; the value is
        // written before the record is linked. `T: 'static` (drop rule).
        unsafe {
            let slot = finalizer::write_run_record::<T>(record);
            slot.as_ptr().write(value);
            self.info.chain.link_run::<T>(record);
            Ok(&mut *slot.as_ptr())
        }
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
        if !needs_drop::<T>() {
            if size_of::<T>() == 0 {
                return Ok(self.place_zst(value));
            }
            return match self.bump_const(size_of::<T>(), align_of::<T>()) {
                // SAFETY: fresh memory for a `T`; it needs no drop, so no record.
                Ok(p) => Ok(unsafe { place(p.cast::<T>(), value) }),
                Err(error) => Err(AllocErrorWith { error, value }),
            };
        }
        let record = match self.bump_const(ObjectLayout::<T>::SIZE, ObjectLayout::<T>::ALIGN) {
            Ok(p) => p,
            Err(error) => return Err(AllocErrorWith { error, value }),
        };
        // SAFETY: `record` has `ObjectLayout::<T>::SIZE` bytes at `ALIGN`. The value is
        // written before the record is linked; the caller vouches for the drop contract.
        unsafe {
            let slot = finalizer::write_object_record::<T>(record);
            slot.as_ptr().write(value);
            self.info.chain.link(record);
            Ok(&mut *slot.as_ptr())
        }
    }

    // ----- in-place construction -----

    /// Reserves room for one `T` (no finalizer: a `MaybeUninit` is never dropped).
    #[inline(always)]
    fn bump_value<T>(&self) -> Result<NonNull<T>, AllocError> {
        if size_of::<T>() == 0 {
            return Ok(dangling(align_of::<T>()).cast::<T>());
        }
        Ok(self
            .bump_const(size_of::<T>(), align_of::<T>())?
            .cast::<T>())
    }

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
    pub fn new_pod_with<T>(&self, f: impl FnOnce() -> T) -> &'s mut T {
        const {
            assert!(
                !needs_drop::<T>(),
                "new_pod_with: this type needs drop; use new_object_with"
            )
        };
        match self.bump_value::<T>() {
            // SAFETY: fresh, exclusive memory of the right size and alignment for a `T`
            // that lives until the scope unwinds (`'s`); it needs no drop.
            Ok(slot) => unsafe { self.place_with(slot, f) },
            Err(e) => self.fail(e),
        }
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
        const {
            assert!(
                !needs_drop::<T>(),
                "try_new_pod_with: this type needs drop; use try_new_object_with"
            )
        };
        let slot = self.bump_value::<T>()?;
        // SAFETY: as in `new_pod_with`.
        Ok(unsafe { self.place_with(slot, f) })
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
    pub fn new_object_with<T: 'static>(&self, f: impl FnOnce() -> T) -> &'s mut T {
        match self.try_new_object_with(f) {
            Ok(r) => r,
            Err(e) => self.fail(e),
        }
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
        if !needs_drop::<T>() {
            let slot = self.bump_value::<T>()?;
            // SAFETY: fresh memory for a `T` that needs no drop, so no record.
            return Ok(unsafe { self.place_with(slot, f) });
        }
        let from = self.cursor.cur();
        let record = self.bump_const(RunLayout::<T>::FIRST_SIZE, RunLayout::<T>::ALIGN)?;
        let give_back = self.give_back_on_panic(from);
        // SAFETY: `record` has room for a run record and one `T`, aligned. The record is
        // linked only once the value is written, so a panic in `f` leaves it unlinked
        // and the guard may release its bytes. If `f` linked records of its own
        // meanwhile, ours goes on top of them: its value was finished last, so it is
        // destroyed first. Its run ends below the bump pointer then, so no later value
        // is appended to it. `T: 'static` (drop rule).
        unsafe {
            let slot = finalizer::write_run_record::<T>(record);
            write_with(slot, f);
            core::mem::forget(give_back);
            self.info.chain.link_run::<T>(record);
            Ok(&mut *slot.as_ptr())
        }
    }

    /// Calls `f` and writes its result to `slot`, giving the room back if `f` panics.
    ///
    /// # Safety
    /// `slot` was just reserved from this scope (the bump pointer is right after it, or
    /// it is a zero-sized `T`'s dangling address) and is valid, aligned and exclusive
    /// for a `T` for `'s`; nothing drops the value (it needs no drop, or the caller
    /// links a record).
    #[inline(always)]
    unsafe fn place_with<T>(&self, slot: NonNull<T>, f: impl FnOnce() -> T) -> &'s mut T {
        let to = self.cursor.cur();
        let give_back = GiveBack {
            alloc: self.alloc(),
            cursor: self.cursor,
            // A zero-sized `T` took nothing (`from == to`: nothing to give back).
            from: if size_of::<T>() == 0 {
                to
            } else {
                slot.as_ptr().addr()
            },
            to,
        };
        // SAFETY: per the caller.
        unsafe {
            write_with(slot, f);
            core::mem::forget(give_back);
            &mut *slot.as_ptr()
        }
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
    pub fn alloc_uninit<T>(&self) -> &'s mut MaybeUninit<T> {
        match self.try_alloc_uninit::<T>() {
            Ok(r) => r,
            Err(e) => self.fail(e),
        }
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
        let slot = self.bump_value::<T>()?;
        #[cfg(feature = "debug-fill")]
        crate::debug_fill::fresh(slot.cast::<u8>(), size_of::<T>());
        // SAFETY: fresh, exclusive, aligned room for a `T` until the scope unwinds; a
        // `MaybeUninit` needs no initialisation.
        Ok(unsafe { &mut *slot.as_ptr().cast::<MaybeUninit<T>>() })
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
    pub fn alloc_uninit_slice<T>(&self, len: usize) -> &'s mut [MaybeUninit<T>] {
        match self.try_alloc_uninit_slice::<T>(len) {
            Ok(r) => r,
            Err(e) => self.fail(e),
        }
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
        let first = self.try_alloc_array_uninit::<T>(len)?;
        // SAFETY: room for `len` `T`s (or `T` is zero-sized and `first` is aligned),
        // exclusive until the scope unwinds; `MaybeUninit` needs no initialisation.
        Ok(
            unsafe {
                core::slice::from_raw_parts_mut(first.as_ptr().cast::<MaybeUninit<T>>(), len)
            },
        )
    }

    // ----- slices and strings -----

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

    /// A guard for a slice that was just bump-allocated from `from` up to the bump
    /// pointer and is about to be filled by user code. If that code panics (the guard is
    /// dropped rather than forgotten) and the slice is still the newest allocation, the
    /// bump pointer goes back to `from`: the elements built so far have already been
    /// dropped by `fill`, and no finalizer record was linked.
    ///
    /// If the user code allocated from this scope meanwhile, the slice is no longer at
    /// the top and its bytes stay taken until the scope ends, like any hole.
    fn give_back_on_panic(&self, from: usize) -> GiveBack<'s> {
        GiveBack {
            alloc: self.alloc(),
            cursor: self.cursor,
            from,
            to: self.cursor.cur(),
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
            outer: self.alloc().reserved_from(),
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
            self.alloc().set_reserved_from(grow.outer);
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
        // high-water mark); they may lag behind the newest elements until the end.
        self.alloc().set_reserved_from(grow.outer.min(grow.end));
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

    /// Copies a string into the scope.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let s = a.alloc_str("frog");
    ///     s.make_ascii_uppercase();
    ///     assert_eq!(s, "FROG");
    /// });
    /// ```
    pub fn alloc_str(&self, src: &str) -> &'s mut str {
        match self.try_alloc_str(src) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Copies a string into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(2).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_str("frog").is_err()));
    /// ```
    pub fn try_alloc_str(&self, src: &str) -> Result<&'s mut str, AllocError> {
        let bytes = self.try_alloc_slice_copy(src.as_bytes())?;
        // SAFETY: the bytes were copied from a `str`.
        Ok(unsafe { core::str::from_utf8_unchecked_mut(bytes) })
    }

    /// Formats into the scope: the talk's `formatString`. Use it with `format_args!`.
    ///
    /// The text is written straight into free memory, so formatting needs no temporary
    /// buffer. While it runs, the rest of the block is reserved: a `Display` impl that
    /// tries to allocate from the same block meanwhile gets an out-of-memory error. The
    /// reservation is not counted as use: `used`, the high-water mark and reports read
    /// meanwhile show only what was allocated before.
    ///
    /// # Panics
    /// When the text does not fit, or a formatting implementation returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let path = a.alloc_fmt(format_args!("foo/bar/{}.txt", 7));
    ///     assert_eq!(path, "foo/bar/7.txt");
    /// });
    /// ```
    pub fn alloc_fmt(&self, args: fmt::Arguments<'_>) -> &'s mut str {
        match self.try_alloc_fmt(args) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Formats into the scope, or says why it cannot. Nothing stays allocated on error.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4).unwrap();
    /// memory.scope("a", |a| {
    ///     let err = a.try_alloc_fmt(format_args!("{}", 123456)).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    ///     assert_eq!(a.used(), 0);
    /// });
    /// ```
    pub fn try_alloc_fmt(&self, args: fmt::Arguments<'_>) -> Result<&'s mut str, AllocError> {
        if let Some(s) = args.as_str() {
            return self.try_alloc_str(s);
        }
        let cursor = self.cursor;
        if cursor.is_suspended() {
            return Err(self.oom(0, 1));
        }
        let start = cursor.cur();
        let limit = cursor.limit();

        /// Ends the reservation: keeps `[start, keep_to)` and gives back the rest. If a
        /// formatting impl moved the bump pointer (possible only when nothing could be
        /// written, `start == limit`), it is left alone.
        struct Reservation<'a> {
            alloc: &'a LinearAllocator,
            cursor: &'a Cursor,
            reserved_to: usize,
            keep_to: usize,
            outer: usize,
        }
        impl Drop for Reservation<'_> {
            fn drop(&mut self) {
                self.alloc
                    .end_reservation(self.cursor, self.reserved_to, self.keep_to, self.outer);
            }
        }

        struct Writer<'a> {
            cursor: &'a Cursor,
            at: usize,
            limit: usize,
            out_of_memory: bool,
        }
        impl fmt::Write for Writer<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                if s.len() > self.limit - self.at {
                    self.out_of_memory = true;
                    return Err(fmt::Error);
                }
                // SAFETY: `[at, at + len)` lies in the reserved region `[start, limit)`,
                // which nobody else can allocate while the reservation lasts.
                unsafe {
                    ptr::copy_nonoverlapping(
                        s.as_ptr(),
                        self.cursor.ptr_at(self.at).as_ptr(),
                        s.len(),
                    )
                };
                self.at += s.len();
                Ok(())
            }
        }

        // Reserve everything up to the limit while user formatting code runs; on a panic
        // the reservation's drop gives it all back. Statistics read meanwhile (`used`,
        // high-water marks, reports) leave the reservation out.
        let outer = self.alloc().begin_reservation(cursor);
        let mut reservation = Reservation {
            alloc: self.alloc(),
            cursor,
            reserved_to: limit,
            keep_to: start,
            outer,
        };
        let mut w = Writer {
            cursor,
            at: start,
            limit,
            out_of_memory: false,
        };
        match fmt::write(&mut w, args) {
            Ok(()) => {
                reservation.keep_to = w.at;
                drop(reservation);
                let len = w.at - start;
                // SAFETY: `[start, start + len)` holds the UTF-8 text just written and
                // stays below the bump pointer until this scope unwinds.
                unsafe {
                    let bytes = core::slice::from_raw_parts_mut(cursor.ptr_at(start).as_ptr(), len);
                    Ok(core::str::from_utf8_unchecked_mut(bytes))
                }
            }
            Err(fmt::Error) => {
                drop(reservation);
                if w.out_of_memory {
                    Err(self.oom(w.at - start + 1, 1))
                } else {
                    Err(self.error(AllocErrorKind::Format, w.at - start + 1, 1))
                }
            }
        }
    }
}

impl fmt::Debug for ScopeStack<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeStack")
            .field("name", &self.name())
            .field("depth", &self.depth())
            .field("start_offset", &self.start_offset())
            .field("used", &self.used())
            .field("finalizers", &self.finalizer_count())
            .finish()
    }
}

/// Releases a slice whose initialiser panicked; see `ScopeStack::give_back_on_panic`.
struct GiveBack<'a> {
    alloc: &'a LinearAllocator,
    cursor: &'a Cursor,
    /// The bump pointer before the slice was carved.
    from: usize,
    /// The bump pointer right after it.
    to: usize,
}

impl Drop for GiveBack<'_> {
    #[cold]
    fn drop(&mut self) {
        // The bump pointer is where the slice left it, so nothing handed out since lies
        // above `from`: code that allocated meanwhile either moved it higher or gave
        // everything back in place. (A scratch scope opened meanwhile used a cursor of
        // its own and has ended.) The finalizer chain is untouched: its newest record
        // ends at or below `from`, so a run of objects can go on growing from there.
        if self.cursor.cur() == self.to && self.to != self.from {
            #[cfg(feature = "debug-fill")]
            crate::debug_fill::released(self.cursor, self.from);
            self.alloc.rewind(self.cursor, self.from);
        }
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
    /// The live reservation bound of the block when collection began (see
    /// `LinearAllocator::reserved_from`), restored when it ends.
    outer: usize,
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
            outer: usize,
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
                self.alloc.set_reserved_from(self.outer);
                if at_top {
                    #[cfg(feature = "debug-fill")]
                    crate::debug_fill::released(self.cursor, self.from);
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

/// Writes `value` at `slot` and returns it with the scope's lifetime.
///
/// # Safety
/// `slot` is valid, aligned and exclusive for a `T` for `'a`.
#[inline(always)]
unsafe fn place<'a, T>(slot: NonNull<T>, value: T) -> &'a mut T {
    // SAFETY: per the caller.
    unsafe {
        slot.as_ptr().write(value);
        &mut *slot.as_ptr()
    }
}

/// Calls `f` and writes its result straight to `slot`. Inlined into every caller, with
/// `f` inlined into it where the optimiser can, so a large result is built in place
/// rather than in a stack temporary that is then copied.
///
/// # Safety
/// `slot` is valid for writes and aligned for a `T`.
#[inline(always)]
unsafe fn write_with<T>(slot: NonNull<T>, f: impl FnOnce() -> T) {
    // SAFETY: per the caller.
    unsafe { slot.as_ptr().write(f()) }
}

/// Initialises `len` elements at `first` from `f`; on a panic in `f`, drops the elements
/// already built and lets the panic go on.
///
/// # Safety
/// `first` has room for `len` `T`s (or `T` is zero-sized and `first` is aligned).
unsafe fn fill<T>(first: NonNull<T>, len: usize, f: &mut impl FnMut(usize) -> T) {
    struct Built<T> {
        first: NonNull<T>,
        done: usize,
    }
    impl<T> Drop for Built<T> {
        fn drop(&mut self) {
            // SAFETY: the first `done` elements were initialised and not yet handed out.
            unsafe {
                ptr::drop_in_place(ptr::slice_from_raw_parts_mut(
                    self.first.as_ptr(),
                    self.done,
                ))
            };
        }
    }
    let mut built = Built { first, done: 0 };
    while built.done < len {
        let v = f(built.done);
        // SAFETY: `done < len`, so the slot is inside the room the caller gave us.
        unsafe { first.as_ptr().add(built.done).write(v) };
        built.done += 1;
    }
    core::mem::forget(built);
}

/// A non-null pointer aligned to `align`, with no provenance: valid for zero-sized use.
#[inline(always)]
pub(crate) fn dangling(align: usize) -> NonNull<u8> {
    // SAFETY: `align` is a power of two, hence non-zero.
    unsafe { NonNull::new_unchecked(ptr::without_provenance_mut(align)) }
}

/// Panics with the error's message. Kept out of line so the fast paths stay small.
#[cold]
#[inline(never)]
#[track_caller]
fn fail_plain(e: AllocError) -> ! {
    panic!("{e}")
}

impl ScopeStack<'_> {
    /// Panics with the error's message and, for out-of-memory and budget errors (with
    /// the `alloc` feature), the memory map at that moment, so the panic shows which
    /// scope holds the memory.
    #[cold]
    #[inline(never)]
    #[track_caller]
    pub(crate) fn fail(&self, e: AllocError) -> ! {
        #[cfg(feature = "alloc")]
        if matches!(
            e.kind(),
            AllocErrorKind::OutOfMemory | AllocErrorKind::BudgetExceeded
        ) {
            panic!("{e}\n{}", self.report());
        }
        fail_plain(e)
    }
}
