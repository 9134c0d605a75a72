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

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};

mod alloc_api;
pub(crate) mod builders;
pub(crate) mod finalizer;
pub(crate) mod info;
mod introspect;
mod not_thread_safe;
pub(crate) mod place;
mod raw;
mod slices;
mod surface;
mod text;
mod values;
pub use not_thread_safe::NotThreadSafe;

use crate::block::cursor::Cursor;
use crate::block::linear::LinearAllocator;
use crate::error::{AllocError, AllocErrorKind};
use info::{Extras, ScopeInfo};

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
/// # A collection in a scope borrows the scope
///
/// A collection allocated in a scope (an `allocator_api2::vec::Vec` or a
/// `hashbrown::HashMap` built with `new_in(&**scope)`) holds `&ScopeStack`, so it
/// borrows the scope for as long as it lives. Opening a child with
/// [`scope`](Self::scope) needs `&mut` (only the innermost live scope allocates), so
/// **a scope cannot open a child while a collection allocated in it is alive**. A
/// level-long map followed by a `frame` scope per frame fails with E0502:
///
/// ```compile_fail,E0502
/// use hashbrown::HashMap;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let mut names = HashMap::new_in(&**level); // borrows `level`...
///     names.insert(7u32, "frog");
///     level.scope("frame", |frame| {             // ...so this `&mut` borrow fails
///         frame.new_pod(names.len());
///     });
/// });
/// ```
///
/// What works: build the collection at load and freeze it into a slice with
/// [`alloc_slice_copy`](Self::alloc_slice_copy) or [`alloc_iter`](Self::alloc_iter),
/// then drop the collection (the slice is `&'s mut [T]`, owned by the scope, not a
/// borrow of the handle); or keep the collection in the frame scope, built each frame.
/// Pools, dense pools and stores are carved as `&'s mut` and never block a child.
///
/// ```
/// use allocator_api2::vec::Vec;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let spawns: &[[f32; 2]] = {
///         let mut load = Vec::new_in(&**level); // grows while the level loads
///         load.extend((0..100).map(|i| [i as f32, 0.0]));
///         level.alloc_slice_copy(&load) // frozen; `load` is dropped here
///     };
///     for _ in 0..3 {
///         level.scope("frame", |frame| {
///             let mut visible: Vec<[f32; 2], _> = Vec::new_in(&**frame); // one frame
///             visible.extend(spawns.iter().filter(|p| p[0] < 10.0));
///             assert_eq!(visible.len(), 10);
///         });
///     }
/// });
/// ```
///
/// # `new_pod`'s drop check runs at build time
///
/// [`new_pod`](Self::new_pod) rejects a type that needs drop with a constant assertion
/// that the compiler evaluates only when it generates code for the call (after
/// monomorphization). `cargo build` and `cargo test` report it as error E0080
/// ("new_pod: this type needs drop; use new_object"); `cargo check`, and editors that
/// run it, do not.
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

// SAFETY: this impl never applies: `*mut T` is never `Send` (the standard library
// implements `!Send` for every raw pointer, and no other crate may implement `Send`
// for one), so `ScopeStack` is not `Send`, as its fields would make it without the
// impl. It exists so that the compiler reports the unmet bound, which names
// `NotThreadSafe`, instead of each private field.
unsafe impl<'s> Send for ScopeStack<'s> where *mut NotThreadSafe<'s>: Send {}
// SAFETY: as above, for `Sync`: `*mut T` is never `Sync`, so this impl never applies.
unsafe impl<'s> Sync for ScopeStack<'s> where *mut NotThreadSafe<'s>: Sync {}

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

/// What closing a scope needs: run the finalizer chain, then rewind the block, restore
/// the limit a budget lowered and unlink the record.
///
/// It keeps its own copies of the start, the parent record and the saved limit, so the
/// close reads nothing back from the record except the chain head: opening and closing
/// a scope passes each value through memory at most once per scope (the record's
/// copies exist for reports and diagnostics). It is `Copy`: [`run_scope`] closes from
/// the copy it holds in registers, and only the guard that closes the scope while the
/// closure panics ([`CloseScope`]) keeps one in memory. Closing from the guard's copy
/// made the compiler load its fields back from the stack after the closure, since it
/// does not forward stored values across the relaxed store of the rewound bump pointer
/// (an empty scope took 48 instructions that way, 39 this way).
#[derive(Clone, Copy)]
struct Unwind<'a> {
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

impl Unwind<'_> {
    /// Runs the finalizer chain, then rewinds (the rewind also runs if a finalizer
    /// panics). Called exactly once per scope: by [`run_scope`] on the normal path
    /// (inlined there, so an empty scope's open and close cost no call), or by
    /// [`CloseScope`]'s `Drop` while the closure unwinds.
    ///
    /// # Safety
    /// The scope is ending: every reference it handed out carried `'s`, which ends
    /// here, so nothing uses the finalized values again; its child scopes are gone
    /// (they borrowed the handle mutably) and the handle is not used again.
    #[inline(always)]
    unsafe fn close(self, cursor_stays: bool) {
        /// Rewinds when a finalizer panics (the rest of the chain has run by then:
        /// see `finalizer::run_from`).
        struct OnPanic<'b>(Unwind<'b>);
        impl Drop for OnPanic<'_> {
            fn drop(&mut self) {
                self.0.rewind(true);
            }
        }
        if !self.info.chain.is_empty() {
            let guard = OnPanic(self);
            // SAFETY: per this function's contract.
            unsafe { self.info.chain.run_all() };
            core::mem::forget(guard);
        }
        self.rewind(cursor_stays);
    }

    /// The rewind half of [`close`](Self::close). `cursor_stays` is false for a
    /// scratch scope's own cursor, which goes away with the scope: its bump pointer is
    /// read for the high-water mark but not rewound (a store nobody would read).
    #[inline(always)]
    fn rewind(self, cursor_stays: bool) {
        #[cfg(feature = "debug-fill")]
        crate::block::debug_fill::released(self.cursor, self.start);
        // `LinearAllocator::rewind`'s test, with the closing thread's plain read of its
        // own bump pointer (see `Cursor::own_cur`), which the compiler folds into the
        // comparison; a new peak, rare once a program is warm, goes through `rewind`,
        // which raises the mark exactly (rule 9) and moves the pointer.
        if self.cursor.own_cur() > self.alloc.high_water_addr() {
            self.alloc.rewind(self.cursor, self.start);
        } else if cursor_stays {
            self.cursor.set_cur(self.start);
        }
        if let Some(limit) = self.saved_limit {
            self.cursor.set_limit(limit);
        }
        self.alloc.set_innermost(self.parent);
        #[cfg(feature = "tracy")]
        self.info.profiler.close(self.alloc);
    }
}

/// Closes a scope when dropped, which happens only while its closure panics: it lives
/// in the frame of [`run_scope`], not in the handle the closure borrows, and the normal
/// path forgets it and closes from its own copy of the [`Unwind`].
struct CloseScope<'a>(Unwind<'a>);

impl Drop for CloseScope<'_> {
    fn drop(&mut self) {
        // SAFETY: the closure is unwinding out of `run_scope`, so the scope ends here,
        // and nothing it lent can be used again (the lifetime `'c` is higher-ranked).
        unsafe { self.0.close(true) }
    }
}

/// Opens a scope on `cursor` (applying `budget`), runs `f`, and unwinds the scope.
///
/// The scope's record ([`ScopeInfo`]) lives in this frame and is linked as the block's
/// innermost scope for as long as `f` runs. The calling thread holds `cursor` (see
/// `Cursor::own_cur`); `cursor_stays` is false only for a cursor that goes away with
/// the scope (see `Unwind::rewind`).
#[inline]
pub(crate) fn run_scope<'env, R>(
    alloc: &LinearAllocator,
    cursor: &Cursor,
    name: &str,
    budget: Option<usize>,
    cursor_stays: bool,
    f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
) -> R {
    let start = cursor.own_cur();
    let parent = alloc.innermost();
    // A budgeted scope keeps its extras here; the others write no word for them.
    let mut extras = MaybeUninit::<Extras>::uninit();
    let mut saved_limit = None;
    let extras_ptr = budget.map(|asked| {
        // A budget over the parent's room is clamped to it (see `scope_with_budget`).
        let limit = cursor.limit();
        let room = limit.saturating_sub(start);
        if asked < room {
            saved_limit = Some(limit);
            cursor.set_limit(start + asked);
        }
        let e = Extras::new(Some(asked.min(room))).clamped(asked > room);
        NonNull::from(&*extras.write(e))
    });
    let info = ScopeInfo::new(name, start, parent, extras_ptr);
    alloc.set_innermost(Some(NonNull::from(&info)));
    let unwind = Unwind {
        alloc,
        cursor,
        info: &info,
        start,
        parent,
        saved_limit,
    };
    let on_panic = CloseScope(unwind);
    let mut scope = Scope::new(ScopeStack {
        cursor,
        info: &info,
        _invariant: PhantomData,
    });
    let result = f(&mut scope);
    core::mem::forget(on_panic);
    // SAFETY: the closure has returned, so nothing reaches the scope's values any more
    // (the handle is not used again, and the result cannot borrow it: `'c` is
    // higher-ranked): the scope closes.
    unsafe { unwind.close(cursor_stays) };
    result
}

impl<'s> ScopeStack<'s> {
    /// Opens a child scope with a byte budget: it (and its own children) may allocate at
    /// most `bytes` bytes, counted from where it begins. Going over is an
    /// [`AllocErrorKind::BudgetExceeded`] error naming the scope and its budget, even
    /// when the block still has room. Otherwise like [`scope`](Self::scope).
    ///
    /// A budget larger than the room this scope has left (the block's, or an outer
    /// budget's) is clamped to that room when the child opens, for every kind of scope
    /// (this one, [`scope_concurrent_with_budget`](Self::scope_concurrent_with_budget),
    /// a child of a scratch scope): [`budget`](Self::budget) reports the clamped
    /// figure, and a request past it is refused by what really ends the room, an
    /// out-of-memory error or the outer budget's [`AllocErrorKind::BudgetExceeded`]
    /// naming the outer scope. `usize::MAX` therefore means "all the room there is".
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
    ///     let room = systems.remaining();
    ///     systems.scope_with_budget("all", usize::MAX, |all| {
    ///         assert_eq!(all.budget(), Some(room)); // clamped to the parent's room
    ///     });
    /// });
    /// ```
    pub fn scope_with_budget<'env, R>(
        &mut self,
        name: &str,
        bytes: usize,
        f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
    ) -> R {
        run_scope(self.alloc(), self.cursor, name, Some(bytes), true, f)
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
        run_scope(self.alloc(), self.cursor, name, None, true, f)
    }

    /// Registers a pool carved from this scope, for reports. Allocates the link record
    /// in the scope; if that fails, the pool simply goes unreported.
    ///
    /// # Safety
    /// `link.snapshot` may read `link.ptr` until the scope ends.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) unsafe fn register_pool(&self, link: crate::scope::info::PoolLink) {
        if !self.info.has_extras() {
            // Most scopes have no extras; this one gets them from its own memory.
            match self.try_new_pod(crate::scope::info::Extras::new(None)) {
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

    /// A handle on a scope whose cursor and record live outside any scope call (a
    /// slot's, see `crate::slots`), so the handle may be lent for as long as they live.
    ///
    /// # Safety
    /// `info` is the innermost live record on `cursor`'s block for as long as the
    /// handle is used to allocate, and both outlive `'s`.
    pub(crate) unsafe fn from_parts(cursor: &'s Cursor, info: &'s ScopeInfo) -> ScopeStack<'s> {
        ScopeStack {
            cursor,
            info,
            _invariant: PhantomData,
        }
    }

    /// The bump cursor this scope allocates through.
    pub(crate) fn cursor(&self) -> &'s Cursor {
        self.cursor
    }

    /// This scope's record in the block's list of live scopes.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn info(&self) -> &'s ScopeInfo {
        self.info
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
        let err = self.oom_error(size, align);
        #[cfg(feature = "tracy")]
        crate::profiler::out_of_memory(&err, &self.report());
        err
    }

    /// The error for [`oom`](Self::oom).
    #[cold]
    fn oom_error(&self, size: usize, align: usize) -> AllocError {
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
            if let Some((info, budget)) = self.binding_budget(limit) {
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
        let err = self.error(AllocErrorKind::OutOfMemory, size, align);
        match self.largest_holder() {
            Some((name, bytes)) if bytes > 0 => err.with_holder(name, bytes),
            _ => err,
        }
    }

    /// The live scope on this block that holds the most bytes, for out-of-memory
    /// errors. Statistics leave a live concurrent scope's unclaimed region out (rule
    /// 9), but nothing else can use it while the scope is open, so here it counts as
    /// held by that scope: an arena taken by a concurrent scope names it.
    fn largest_holder(&self) -> Option<(&str, usize)> {
        let mut best = self.alloc().largest_scope();
        let mut upper = self.cursor.cur();
        let mut at = Some(self.info);
        while let Some(info) = at {
            let held = upper.saturating_sub(info.start);
            if info.detail().is_some() && best.is_none_or(|(_, b)| held > b) {
                best = Some((info.name(), held));
            }
            upper = info.start;
            // SAFETY: parents of a live scope are live (`crate::scope::info` invariant).
            at = info.parent.map(|p| unsafe { &*p.as_ptr() });
        }
        best
    }

    /// The innermost budgeted scope, this one or a parent, whose own budget set the
    /// limit `limit` (a clamped budget never does), and that budget.
    pub(crate) fn binding_budget(&self, limit: usize) -> Option<(&'s ScopeInfo, usize)> {
        let mut at = Some(self.info);
        while let Some(info) = at {
            if let Some(budget) = info.own_budget_binding() {
                if info.start.saturating_add(budget) == limit {
                    return Some((info, budget));
                }
            }
            // SAFETY: parents of a live scope are live (`crate::scope::info` invariant).
            at = info.parent.map(|p| unsafe { &*p.as_ptr() });
        }
        None
    }

    /// The block, through the cursor (the handle keeps no pointer of its own to it).
    #[inline]
    fn alloc(&self) -> &'s LinearAllocator {
        // SAFETY: the cursor's owner was set from a shared borrow of the block when the
        // outermost scope on this cursor opened (`LinearAllocator::scope`, or the cursor
        // was made by `scope_shared`), and that borrow lasts at least as long as `'s`.
        unsafe { self.cursor.block().as_ref() }
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

/// Opening scopes on the block: the outermost one (`&mut self`), and one on a block
/// reached through a shared reference (the scratch pads).
impl LinearAllocator {
    /// Opens the outermost scope, runs `f` with it, then unwinds it: finalizers run in
    /// reverse order of construction and the block rewinds to where the scope began.
    /// The closure's result comes back.
    ///
    /// The scope's lifetime is higher-ranked, so nothing it hands out can leave the
    /// closure. This also runs when `f` panics.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// let len = block.scope("systems", |systems| systems.alloc_str("renderer").len());
    /// assert_eq!(len, 8);
    /// ```
    pub fn scope<'env, R>(
        &mut self,
        name: &str,
        f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
    ) -> R {
        let this: &LinearAllocator = self;
        this.root().set_owner(NonNull::from(this).cast());
        run_scope(this, this.root(), name, None, true, f)
    }

    /// Opens a scope on a block reached through a shared reference (the scratch pads),
    /// suspending the cursor of the scope it interrupts until it ends. The interrupted
    /// scope's allocations then fail with [`AllocErrorKind::NotInnermost`] instead of
    /// overlapping this one.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    #[inline]
    pub(crate) fn scope_shared<'env, R>(
        &self,
        name: &str,
        f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
    ) -> R {
        /// Resumes the interrupted cursor, even on a panic.
        struct Resume<'a> {
            alloc: &'a LinearAllocator,
            outer: &'a Cursor,
            limit: usize,
            prev_active: Option<NonNull<Cursor>>,
        }
        impl Drop for Resume<'_> {
            fn drop(&mut self) {
                self.outer.resume(self.limit);
                self.alloc.set_active(self.prev_active);
            }
        }

        // The interrupted cursor (`active_cursor`), from the one read of `active` that
        // is also what the close restores.
        let prev_active = self.active();
        let outer = match prev_active {
            // SAFETY: as in `active_cursor`: `active` points at the cursor of a live
            // `scope_shared` call further up this thread's stack, which resets it
            // before that cursor goes away.
            Some(c) => unsafe { c.as_ref() },
            None => self.root(),
        };
        // This thread holds the block's cursors (the block is not `Sync`), so it reads
        // the bump pointer as their holder. The new cursor lives in this frame and
        // goes away with the scope, which therefore does not rewind it.
        let cursor = Cursor::new(
            self.base(),
            NonNull::from(self).cast(),
            outer.own_cur(),
            outer.limit(),
        );
        let _resume = Resume {
            alloc: self,
            outer,
            limit: outer.suspend(),
            prev_active,
        };
        self.set_active(Some(NonNull::from(&cursor)));
        // Declared after `_resume`, so it unwinds (finalizers, rewind) before the outer
        // cursor resumes.
        run_scope(self, &cursor, name, None, false, f)
    }
}
