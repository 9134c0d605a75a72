//! `ScratchPads`: one scratch block per thread that uses it, owned by one object.
//!
//! Built on the `thread_local` crate's `ThreadLocal`, so a job system can share one
//! `&ScratchPads` among its workers: each thread lazily gets its own block on first use
//! and keeps it for the object's life.
//!
//! Invariants this module keeps:
//! - A block is only ever used by the thread that created it (through `with`), and only
//!   through scopes that nest strictly on that thread; the run-time rule of
//!   `crate::block::cursor` makes an outer scope's allocations fail while an inner one lives.
//! - Statistics and the frame reset take `&mut self`, so no scope is live while they run.
//! - A call made while the thread is exiting, after `thread_local`'s own per-thread
//!   state is gone (from another thread-local's destructor), gets a block for that call
//!   alone instead of the thread's pad; see [`ScratchPads::try_with`].

use core::cell::Cell;
use std::thread::ThreadId;

use thread_local::ThreadLocal;

use crate::block::linear::LinearAllocator;
use crate::error::AllocError;
use crate::scope::Scope;

/// Whether this thread's `thread_local` state may still be used: 0 before the thread's
/// first pad, 1 once [`EXIT_MARK`] is registered, 2 once it is destroyed.
///
/// `thread_local` registers its per-thread destructor at a thread's first insert; the
/// mark is registered right after that, and thread-locals are destroyed in the reverse
/// order of registration, so the mark goes first. After it, asking `thread_local` for
/// a new slot would touch its destroyed state (a panic in a destructor: an abort).
mod exit {
    use core::cell::Cell;

    std::thread_local! {
        pub(super) static STATE: Cell<u8> = const { Cell::new(0) };
        pub(super) static EXIT_MARK: Mark = const { Mark };
    }

    /// Sets [`STATE`] to 2 when destroyed.
    pub(super) struct Mark;

    impl Drop for Mark {
        fn drop(&mut self) {
            STATE.with(|s| s.set(2));
        }
    }
}
use exit::{EXIT_MARK, STATE};

/// One thread's pad.
struct Pad {
    block: LinearAllocator,
    thread: ThreadId,
    /// The largest high-water mark seen at any frame reset.
    peak: usize,
}

/// One scratch block per thread that uses it, for job systems.
///
/// ```
/// use scope_stack::ScratchPads;
///
/// let mut pads = ScratchPads::new(64 * 1024);
/// std::thread::scope(|t| {
///     for job in 0..4 {
///         let pads = &pads;
///         t.spawn(move || {
///             pads.with(|s| {
///                 let name = s.alloc_fmt(format_args!("job {job}"));
///                 assert!(name.starts_with("job"));
///             })
///         });
///     }
/// });
/// let threads = pads.stats().count();
/// assert!(threads >= 1 && threads <= 4);
/// pads.reset_all(); // frame boundary
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct ScratchPads {
    pads: ThreadLocal<Pad>,
    capacity: usize,
}

/// Usage of one thread's pad, from [`ScratchPads::stats`].
///
/// ```
/// let mut pads = scope_stack::ScratchPads::new(4096);
/// pads.with(|s| { s.alloc_raw(100, 1); });
/// let stats = pads.stats().next().unwrap();
/// assert_eq!(stats.thread, std::thread::current().id());
/// assert_eq!((stats.capacity, stats.used, stats.high_water_mark), (4096, 0, 100));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PadStats {
    /// The thread that created the pad. (`thread_local` hands a finished thread's pad
    /// to the next new thread, which then keeps using it.)
    pub thread: ThreadId,
    /// Bytes in the pad's block.
    pub capacity: usize,
    /// Bytes in use now (0 between jobs).
    pub used: usize,
    /// Most bytes in use at once since the last [`ScratchPads::reset_all`].
    pub high_water_mark: usize,
    /// Most bytes in use at once over the pads' whole life.
    pub peak: usize,
}

impl ScratchPads {
    /// Creates the pads; each thread's block (`capacity` bytes) is reserved on that
    /// thread's first [`with`](Self::with).
    ///
    /// ```
    /// let pads = scope_stack::ScratchPads::new(1 << 16);
    /// assert_eq!(pads.capacity(), 1 << 16);
    /// ```
    pub fn new(capacity: usize) -> ScratchPads {
        ScratchPads {
            pads: ThreadLocal::new(),
            capacity,
        }
    }

    /// The size of each thread's block.
    ///
    /// ```
    /// assert_eq!(scope_stack::ScratchPads::new(4096).capacity(), 4096);
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The calling thread's pad, reserved on its first use.
    ///
    /// Every reference to a pad comes from `ThreadLocal::get`, never from the reference
    /// that inserting returns. `thread_local` derives that one from the `&mut` it wrote
    /// the new value through, while `get` derives a shared one from the slot itself: if
    /// the outer `with` of a thread's first use kept the former, a nested `with` (which
    /// gets the latter) would invalidate it under the aliasing model as soon as it
    /// wrote to the pad, and the outer scope's next use of its pad would be undefined
    /// behaviour. Shared references made from the same slot may all be used in turn.
    fn pad(&self) -> Result<Option<&Pad>, AllocError> {
        if let Some(pad) = self.pads.get() {
            return Ok(Some(pad));
        }
        let state = STATE.with(Cell::get);
        if state == 2 {
            // The thread is exiting and `thread_local`'s state may be gone.
            return Ok(None);
        }
        // The returned reference is dropped at once; see above.
        let _ = self.pads.get_or_try(|| {
            Ok::<Pad, AllocError>(Pad {
                block: LinearAllocator::with_capacity(self.capacity)?,
                thread: std::thread::current().id(),
                peak: 0,
            })
        })?;
        if state == 0 {
            // Registered after `thread_local`'s destructor, so destroyed before it.
            EXIT_MARK.with(|_| ());
            STATE.with(|s| s.set(1));
        }
        Ok(Some(
            self.pads
                .get()
                .expect("this thread's pad was inserted just above"),
        ))
    }

    /// Reserves the calling thread's pad now, if it has none yet, so that its first
    /// [`with`](Self::with) allocates nothing. For a rayon pool, warm every worker once,
    /// before the frames: `pool.broadcast(|_| pads.warm())`.
    ///
    /// # Errors
    /// If the thread's block cannot be reserved (see [`try_with`](Self::try_with)).
    ///
    /// ```
    /// # #[cfg(not(miri))] { // rayon's epoch collector is not strict-provenance clean
    /// let pads = scope_stack::ScratchPads::new(4096);
    /// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let warmed = pool.broadcast(|_| pads.warm().is_ok());
    /// assert!(warmed.iter().all(|&ok| ok));
    /// # }
    /// ```
    pub fn warm(&self) -> Result<(), AllocError> {
        self.pad().map(|_| ())
    }

    /// Runs `f` with a scope on the calling thread's pad, then unwinds it. Works on any
    /// thread; nested calls on one thread stack like [`scratch`](crate::scratch()).
    ///
    /// # Panics
    /// If the thread's block cannot be reserved; see [`try_with`](Self::try_with).
    ///
    /// ```
    /// let pads = scope_stack::ScratchPads::new(4096);
    /// let n = pads.with(|s| s.alloc_slice_copy(&[1, 2, 3]).len());
    /// assert_eq!(n, 3);
    /// ```
    #[track_caller]
    pub fn with<'env, R>(&self, f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`with`](Self::with), but reports a failure to reserve the thread's block.
    ///
    /// ```
    /// let pads = scope_stack::ScratchPads::new(0);
    /// assert!(pads.try_with(|_| ()).is_err());
    /// ```
    pub fn try_with<'env, R>(
        &self,
        f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> R,
    ) -> Result<R, AllocError> {
        match self.pad()? {
            Some(pad) => Ok(pad.block.scope_shared("scratch pad", f)),
            // Called from a thread-local's destructor on an exiting thread: a block for
            // this call alone (not in `stats`).
            None => {
                let block = LinearAllocator::with_capacity(self.capacity)?;
                Ok(block.scope_shared("scratch pad (thread exiting)", f))
            }
        }
    }

    /// Per-thread usage, one entry per thread that has used the pads.
    ///
    /// ```
    /// let mut pads = scope_stack::ScratchPads::new(4096);
    /// assert_eq!(pads.stats().count(), 0);
    /// pads.with(|_| ());
    /// assert_eq!(pads.stats().count(), 1);
    /// ```
    pub fn stats(&mut self) -> impl Iterator<Item = PadStats> + '_ {
        self.pads.iter_mut().map(|pad| {
            let high = pad.block.high_water_mark();
            PadStats {
                thread: pad.thread,
                capacity: pad.block.capacity(),
                used: pad.block.used(),
                high_water_mark: high,
                peak: pad.peak.max(high),
            }
        })
    }

    /// The frame boundary: folds each pad's high-water mark into its peak and starts a
    /// new high-water period. No scope can be live (this takes `&mut self`).
    ///
    /// ```
    /// let mut pads = scope_stack::ScratchPads::new(4096);
    /// pads.with(|s| { s.alloc_raw(100, 1); });
    /// pads.reset_all();
    /// pads.with(|s| { s.alloc_raw(10, 1); });
    /// let stats = pads.stats().next().unwrap();
    /// assert_eq!((stats.high_water_mark, stats.peak), (10, 100));
    /// ```
    pub fn reset_all(&mut self) {
        for pad in self.pads.iter_mut() {
            pad.peak = pad.peak.max(pad.block.high_water_mark());
            pad.block.reset_high_water_mark();
        }
    }
}

impl core::fmt::Debug for ScratchPads {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ScratchPads")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}
