//! Per-thread scratch scopes that follow the call stack.
//!
//! Each thread owns two scratch blocks ("arenas"), created on its first use. A call to
//! [`scratch`] opens a scope on the first one, runs the closure, and unwinds the scope
//! (finalizers, then rewind). Nested calls stack on top of each other, exactly like the
//! call stack they follow. [`scratch_for`] picks the arena that the caller's scope does
//! *not* live on, so a function can build its result in the caller's scope and its
//! temporaries in scratch without the two colliding (the "scratch conflict" rule).
//!
//! Invariants this module keeps:
//! - Scratch scopes on one arena are strictly nested (they are closures), and only the
//!   innermost live one can allocate: opening a scope on an arena suspends the cursor of
//!   the scope it interrupts (see `crate::block::cursor`), so any allocation through an outer
//!   scratch scope while an inner one lives panics with a clear message (or returns
//!   [`AllocErrorKind::NotInnermost`](crate::AllocErrorKind::NotInnermost) from the
//!   `try_` forms). Memory never overlaps.
//! - After a thread's first use nothing here touches the global heap: the arenas are
//!   built once and reused; [`set_capacity`] rebuilds them only when asked to.
//! - Arenas belong to their thread while it runs; scopes on them are neither `Send`
//!   nor `Sync`. When the thread exits, its pair goes to a spare list (see `spare`)
//!   that the next thread takes it from. The list counts the pairs still on their way
//!   back from exiting threads, and a new thread waits for one of those rather than
//!   reserve a pair, so threads spawned every frame reserve no new scratch memory once
//!   the program has reached its peak of threads using scratch at once, even when a
//!   thread hands its pair back after the frame's join has returned.
//! - Scratch works in a thread-local destructor too: once this thread's arenas are
//!   gone, a call borrows a pair for its own duration.
//!
//! # Capacity
//!
//! Each arena holds [`DEFAULT_CAPACITY`] bytes (1 MiB) unless configured. Call
//! [`set_default_capacity`] at start-up to change it for every thread that has not used
//! scratch yet, or [`set_capacity`] on a thread to rebuild that thread's arenas (allowed
//! whenever no scratch scope is live on it).
//!
//! # Job systems
//!
//! [`ScratchPads`] owns one scratch block per thread that uses it, for worker pools that
//! want per-frame reporting and a frame-boundary reset.

use core::cell::RefCell;
use core::fmt;

use crate::block::linear::LinearAllocator;
use crate::error::AllocError;
use crate::scope::{Scope, ScopeStack};

std::thread_local! {
    /// This thread's two arenas, taken from the spare list or built on first use, and
    /// handed back to the spare list when the thread exits (see `spare`).
    static ARENAS: RefCell<Option<Arenas>> = const { RefCell::new(None) };
}

/// Scope names, one per arena, for reports and errors.
const NAMES: [&str; 2] = ["scratch", "scratch (second arena)"];

/// Why [`set_capacity`] refused; the thread keeps its old arenas.
///
/// ```
/// use scope_stack::scratch::{self, SetCapacityError};
///
/// scope_stack::scratch(|_| {
///     assert_eq!(scratch::set_capacity(4096), Err(SetCapacityError::Busy));
/// });
/// assert!(matches!(scratch::set_capacity(0), Err(SetCapacityError::Alloc(_))));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetCapacityError {
    /// A scratch scope is live on this thread.
    Busy,
    /// The new blocks could not be reserved.
    Alloc(AllocError),
}

impl fmt::Display for SetCapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetCapacityError::Busy => f.write_str(
                "scope-stack: this thread's scratch arenas are in use; \
                 set the capacity outside any scratch scope",
            ),
            SetCapacityError::Alloc(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for SetCapacityError {}

/// Sets the capacity (bytes per arena) for threads that have not used scratch yet.
///
/// # Panics
/// When `bytes` is 0.
///
/// ```
/// scope_stack::scratch::set_default_capacity(256 * 1024);
/// std::thread::spawn(|| {
///     scope_stack::scratch(|s| assert_eq!(s.allocator().capacity(), 256 * 1024));
/// })
/// .join()
/// .unwrap();
/// # scope_stack::scratch::set_default_capacity(scope_stack::scratch::DEFAULT_CAPACITY);
/// ```
pub fn set_default_capacity(bytes: usize) {
    assert!(bytes > 0, "scratch capacity must be greater than zero");
    spare::set_default_capacity(bytes);
}

/// Rebuilds this thread's scratch arenas with `bytes` bytes each. Call it before the
/// thread's first use to avoid building them twice.
///
/// # Errors
/// [`SetCapacityError::Busy`] when a scratch scope is live on this thread, and
/// [`SetCapacityError::Alloc`] when the blocks cannot be reserved (a capacity of 0, or
/// too large); the old arenas are kept in both cases.
///
/// ```
/// scope_stack::scratch::set_capacity(64 * 1024).unwrap();
/// scope_stack::scratch(|s| assert_eq!(s.allocator().capacity(), 64 * 1024));
/// assert!(scope_stack::scratch::set_capacity(0).is_err());
/// ```
pub fn set_capacity(bytes: usize) -> Result<(), SetCapacityError> {
    ARENAS.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| SetCapacityError::Busy)?;
        let arenas = build(bytes).map_err(SetCapacityError::Alloc)?;
        *slot = Some(Arenas::new(arenas));
        Ok(())
    })
}

fn build(bytes: usize) -> Result<[LinearAllocator; 2], AllocError> {
    Ok([
        LinearAllocator::with_capacity(bytes)?,
        LinearAllocator::with_capacity(bytes)?,
    ])
}

/// Runs `g` with this thread's arenas, taking or building them on first use.
///
/// A call made while the thread's locals are being destroyed (from another
/// thread-local's destructor, after this thread's arenas went back to the spare list)
/// borrows a pair for its own duration instead.
#[inline]
fn with_arenas<R>(g: impl FnOnce(&[LinearAllocator; 2]) -> R) -> R {
    let mut g = Some(g);
    let ran = ARENAS.try_with(|cell| {
        let g = g.take().expect("called once");
        let arenas = cell.borrow();
        if let Some(a) = arenas.as_ref() {
            return g(a.get());
        }
        drop(arenas);
        init(cell);
        match cell.borrow().as_ref() {
            Some(a) => g(a.get()),
            None => unreachable!("the arenas were just built"),
        }
    });
    match ran {
        Ok(r) => r,
        Err(_) => borrowed(g.take().expect("not run while the locals were alive")),
    }
}

/// Takes a pair from the spare list (waiting for one on its way back, see `spare`), or
/// builds one.
fn take_or_build() -> Arenas {
    let capacity = spare::default_capacity();
    let pair = spare::take(capacity).unwrap_or_else(|| {
        build(capacity).unwrap_or_else(|e| {
            spare::not_built();
            panic!("{e}")
        })
    });
    Arenas::taken(pair)
}

/// Gives this thread its arenas (first use only).
#[cold]
#[inline(never)]
fn init(cell: &RefCell<Option<Arenas>>) {
    *cell.borrow_mut() = Some(take_or_build());
}

/// Runs `g` on a pair borrowed for this call alone: the thread's own arenas are gone.
#[cold]
#[inline(never)]
fn borrowed<R>(g: impl FnOnce(&[LinearAllocator; 2]) -> R) -> R {
    // Dropped after `g`, even if it panics: the pair goes back to the spare list.
    let arenas = take_or_build();
    g(arenas.get())
}

/// Runs `f` with a fresh scope on this thread's scratch arena, then unwinds it.
///
/// Nested calls stack on top of each other. While an inner scratch scope lives, the
/// outer one cannot allocate (it panics with a clear message, or its `try_` forms return
/// [`AllocErrorKind::NotInnermost`](crate::AllocErrorKind::NotInnermost)); values it
/// allocated earlier stay usable.
///
/// # Panics
/// On the thread's first use, if its arenas cannot be reserved.
///
/// ```
/// use scope_stack::scratch;
///
/// fn file_name_len(n: u32) -> usize {
///     scratch(|s| s.alloc_fmt(format_args!("foo/bar/{n}.dat")).len())
/// }
/// assert_eq!(file_name_len(42), 14);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn scratch<'env, R>(f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R) -> R {
    with_arenas(|arenas| arenas[0].scope_shared(NAMES[0], f))
}

/// Runs `f` with a scratch scope on the arena that `caller` does *not* live on, so
/// `caller` can still take the function's result while the temporaries go to scratch.
///
/// If `caller` is not a scratch scope of this thread, the first arena is used.
///
/// ```
/// use scope_stack::{scratch, scratch_for, ScopeStack};
///
/// /// Builds the result in `out`, the temporaries in scratch.
/// fn joined<'s>(out: &ScopeStack<'s>, parts: &[&str]) -> &'s str {
///     scratch_for(out, |tmp| {
///         let upper = tmp.alloc_slice_fill_with(parts.len(), |i| parts[i].to_uppercase());
///         let total: usize = upper.iter().map(String::len).sum();
///         let text = out.alloc_fmt(format_args!("{}", upper.join("/")));
///         assert_eq!(text.len(), total + parts.len() - 1);
///         &*text
///     })
/// }
///
/// scratch(|caller| {
///     // `caller` is a scratch scope too: the temporaries go to the other arena.
///     let path = joined(caller, &["foo", "bar"]);
///     assert_eq!(path, "FOO/BAR");
/// });
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn scratch_for<'env, R>(
    caller: &ScopeStack<'_>,
    f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
) -> R {
    with_arenas(|arenas| {
        let i = usize::from(core::ptr::eq(caller.allocator(), &arenas[0]));
        arenas[i].scope_shared(NAMES[i], f)
    })
}

/// Gives the calling thread its scratch arenas now, if it has none yet: its first
/// [`scratch`] call then touches no global heap. A thread's first use reserves two
/// arenas (or takes a spare pair a finished thread left), which allocates; call this
/// where each worker starts, before the frames that must not allocate.
///
/// Rayon's workers are started by rayon, and a job runs on whichever worker steals it,
/// so a worker may first use scratch in any frame. Warm every worker of a pool once,
/// before the loop, with the one call that reaches each of them:
///
/// ```
/// # #[cfg(not(miri))] { // rayon's epoch collector is not strict-provenance clean
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// pool.broadcast(|_| scope_stack::scratch::warm());
/// // From here on, `scratch` on any of the pool's workers reserves nothing.
/// pool.install(|| rayon::join(|| scope_stack::scratch(|s| s.alloc_str("a").len()), || 1));
/// # }
/// ```
///
/// # Panics
/// If the arenas cannot be reserved, as [`scratch`] would on first use.
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn warm() {
    with_arenas(|_| ());
}

/// Usage of this thread's two scratch arenas: `(used, high-water mark)` in bytes for
/// each, or `None` if the thread has not used scratch yet (or its arenas are gone: it is
/// exiting).
///
/// ```
/// scope_stack::scratch(|s| { s.alloc_raw(100, 1); });
/// let [(used, high), _] = scope_stack::scratch::usage().unwrap();
/// assert_eq!(used, 0);
/// assert!(high >= 100);
/// ```
pub fn usage() -> Option<[(usize, usize); 2]> {
    ARENAS
        .try_with(|cell| {
            let arenas = cell.borrow();
            arenas
                .as_ref()
                .map(|a| a.get())
                .map(|a| [0, 1].map(|i| (a[i].used(), a[i].high_water_mark())))
        })
        .ok()
        .flatten()
}

mod pads;
mod spare;

use spare::Arenas;

pub use spare::DEFAULT_CAPACITY;

pub use pads::{PadStats, ScratchPads};
