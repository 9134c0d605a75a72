//! Synchronisation primitives, switched between the real ones and loom's models.
//!
//! Lock-free code in this crate names its atomics, cells and futex through this module
//! only. A normal build gets `core`'s atomics, `core::cell::UnsafeCell` and the
//! `atomic-wait` futex; a `--cfg loom` build gets loom's instrumented versions, so the
//! model checker sees every access (sharded-slab uses the same arrangement).
//!
//! Invariant: the two halves offer the same API with the same meaning. The one place
//! the loom half must differ in shape is [`Futex`], which loom cannot model as a real
//! futex; it is built from loom's `Mutex` and `Condvar` with the same contract (sleep
//! only while the word still holds the expected value; a wake after the word changed
//! is never lost).

pub(crate) mod asymmetric;

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{
    fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
/// A lock for the few places that wait on one (the wakers of tasks waiting for a slot):
/// loom's under `--cfg loom`, so a model may switch threads while it is held.
#[cfg(all(feature = "std", not(loom)))]
pub(crate) use std::sync::Mutex;

/// Tells the processor (or loom's scheduler) that this thread is waiting for another
/// one to make progress.
#[inline(always)]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// An `UnsafeCell` that loom can watch: every access goes through a closure, so loom
/// sees when two threads touch the same value without a happens-before edge.
#[repr(transparent)]
pub(crate) struct UnsafeCell<T> {
    #[cfg(not(loom))]
    inner: core::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<U> UnsafeCell<core::mem::MaybeUninit<U>> {
    /// Makes the memory at `this` a cell holding `MaybeUninit::uninit()`.
    ///
    /// Without loom a cell is only its contents, and uninitialised contents need no
    /// write at all (nor a stack temporary, which for a huge `T` would overflow).
    ///
    /// # Safety
    /// `this` is valid for writes and aligned.
    #[inline(always)]
    pub(crate) unsafe fn init_uninit(this: *mut Self) {
        #[cfg(not(loom))]
        let _ = this;
        // SAFETY: per the caller.
        #[cfg(loom)]
        unsafe {
            this.write(UnsafeCell::new(core::mem::MaybeUninit::uninit()))
        };
    }
}

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        UnsafeCell {
            #[cfg(not(loom))]
            inner: core::cell::UnsafeCell::new(value),
            #[cfg(loom)]
            inner: loom::cell::UnsafeCell::new(value),
        }
    }

    /// Runs `f` with a pointer that may be used for writes (loom records a write).
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(loom))]
        {
            f(self.inner.get())
        }
        #[cfg(loom)]
        {
            self.inner.with_mut(f)
        }
    }

    /// Runs `f` with a pointer that is only read through (loom records a read).
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(not(loom))]
        {
            f(self.inner.get())
        }
        #[cfg(loom)]
        {
            self.inner.with(f)
        }
    }
}

/// A 32-bit word that threads can sleep on until it changes: a futex.
///
/// [`wait`](Futex::wait) sleeps only while the word equals the value the caller last
/// saw; [`bump_and_wake_all`](Futex::bump_and_wake_all) changes the word and then wakes
/// every sleeper. A waiter that reads the word before a bump either sees the new value
/// when it goes to sleep (and returns at once) or is asleep when the wake comes.
///
/// [`wait_timeout`](Futex::wait_timeout) does the same with a time limit. `atomic-wait`
/// has no timed wait, so timed sleepers use a side structure: std's `Mutex` and
/// `Condvar` (futex-based on Linux, no heap). The word is checked under the mutex, and
/// the waker takes the mutex after its bump before it notifies, so a timed waiter either
/// sees the bump or is already waiting on the condvar when the notification comes. Under
/// loom both waits use loom's `Mutex` and `Condvar` (whose `wait_timeout` never times
/// out, so a lost wake-up still shows as a deadlock).
#[cfg(feature = "std")]
pub(crate) struct Futex {
    word: AtomicU32,
    #[cfg(not(loom))]
    lock: std::sync::Mutex<()>,
    #[cfg(not(loom))]
    sleepers: std::sync::Condvar,
    #[cfg(loom)]
    lock: loom::sync::Mutex<()>,
    #[cfg(loom)]
    sleepers: loom::sync::Condvar,
}

#[cfg(feature = "std")]
impl Futex {
    pub(crate) fn new() -> Futex {
        Futex {
            word: AtomicU32::new(0),
            #[cfg(not(loom))]
            lock: std::sync::Mutex::new(()),
            #[cfg(not(loom))]
            sleepers: std::sync::Condvar::new(),
            #[cfg(loom)]
            lock: loom::sync::Mutex::new(()),
            #[cfg(loom)]
            sleepers: loom::sync::Condvar::new(),
        }
    }

    /// The current value. Acquire: a waiter that reads a bumped value also sees
    /// everything the bumping thread did before the bump (see `bump_and_wake_all`).
    #[inline]
    pub(crate) fn load(&self) -> u32 {
        self.word.load(Ordering::Acquire)
    }

    /// Sleeps while the word equals `seen`. May return spuriously; callers loop.
    pub(crate) fn wait(&self, seen: u32) {
        #[cfg(not(loom))]
        atomic_wait::wait(&self.word, seen);
        #[cfg(loom)]
        {
            let guard = self.lock.lock().unwrap();
            // Checked under the lock: the waker bumps before it takes the lock, so
            // either we see the bump here or we are already waiting when it notifies.
            if self.word.load(Ordering::Acquire) == seen {
                drop(self.sleepers.wait(guard).unwrap());
            }
        }
    }

    /// Sleeps while the word equals `seen`, for at most about `limit`. May return
    /// early or spuriously; callers loop and check their deadline.
    pub(crate) fn wait_timeout(&self, seen: u32, limit: core::time::Duration) {
        #[cfg(not(loom))]
        let guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        #[cfg(loom)]
        let guard = self.lock.lock().unwrap();
        // Checked under the lock, as in the loom half of `wait`.
        if self.word.load(Ordering::Acquire) == seen {
            #[cfg(not(loom))]
            drop(self.sleepers.wait_timeout(guard, limit));
            #[cfg(loom)]
            drop(self.sleepers.wait_timeout(guard, limit).unwrap());
        }
    }

    /// Changes the word, then wakes every thread sleeping on it.
    pub(crate) fn bump_and_wake_all(&self) {
        // Release: a waiter that reads the new value (Acquire, in `load`) sees every
        // write this thread made before the bump. Acquire: not needed for data, but
        // harmless and keeps the RMW a full edge in loom's model.
        self.word.fetch_add(1, Ordering::AcqRel);
        #[cfg(not(loom))]
        {
            atomic_wait::wake_all(&self.word);
            // Timed sleepers: taking the lock after the bump orders it with their check
            // (see the type's docs).
            drop(
                self.lock
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
            self.sleepers.notify_all();
        }
        #[cfg(loom)]
        {
            drop(self.lock.lock().unwrap());
            self.sleepers.notify_all();
        }
    }
}

/// The end of a timed wait.
///
/// Under loom time does not pass: a zero timeout has run out from the start, and any
/// other keeps its full length forever (loom's `Condvar::wait_timeout` never times out
/// either), so the models stay deterministic and still take the timed path.
#[cfg(feature = "std")]
pub(crate) struct Deadline {
    #[cfg(not(loom))]
    at: Option<std::time::Instant>,
    #[cfg(loom)]
    timeout: core::time::Duration,
}

#[cfg(feature = "std")]
impl Deadline {
    /// `timeout` from now. A timeout too long to represent never runs out.
    pub(crate) fn after(timeout: core::time::Duration) -> Deadline {
        Deadline {
            #[cfg(not(loom))]
            at: std::time::Instant::now().checked_add(timeout),
            #[cfg(loom)]
            timeout,
        }
    }

    /// Time left: `Some(ZERO)` once the deadline has passed, `None` for a deadline that
    /// never comes.
    pub(crate) fn left(&self) -> Option<core::time::Duration> {
        #[cfg(not(loom))]
        {
            self.at
                .map(|at| at.saturating_duration_since(std::time::Instant::now()))
        }
        #[cfg(loom)]
        {
            Some(self.timeout)
        }
    }
}
