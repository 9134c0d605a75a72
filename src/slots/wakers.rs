//! The wakers of the tasks that wait for a slot of one [`Slots`](super::Slots): a list
//! the slot set keeps, filled by the futures of `super::tasks` and woken by an unload.
//!
//! Its own file, below both the slot set (`super::carve`, which holds one) and the
//! futures (`super::tasks`, which fill it), so neither imports the other through it.
//! Invariant: entry `i` belongs to the task holding ticket `i`, and `free` lists the
//! tickets no task holds; every change is one assignment under the lock, and each
//! change between `None` and `Some` moves the set's `waiters` by one in the same
//! critical section, so the tasks' share of `waiters` is the number of stored wakers.
//! No waker is cloned, dropped or woken under the lock (see `super::tasks`).

use core::ops::DerefMut;
use core::task::Waker;
use std::sync::PoisonError;
use std::vec::Vec;

use crate::sync::{AtomicU32, Mutex, Ordering};

/// The wakers of the tasks waiting for a slot of one `Slots`.
#[derive(Default)]
pub(crate) struct TaskWakers {
    list: Mutex<WakerList>,
}

/// Entry `i` belongs to the task holding ticket `i`; `None` once woken (or before it
/// stored a waker). `free` lists the tickets no task holds.
#[derive(Default)]
pub(crate) struct WakerList {
    pub(crate) wakers: Vec<Option<Waker>>,
    pub(crate) free: Vec<usize>,
}

impl TaskWakers {
    /// The list, under its lock.
    pub(crate) fn lock(&self) -> impl DerefMut<Target = WakerList> + '_ {
        // No user code runs under the lock (a waker's `clone`, `drop` and `wake` run
        // outside it); should anything else panic there, the list is still whole:
        // every change is a single assignment.
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes every task that waits (called by `Slots::wake`, after a slot is freed,
    /// when `waiters` is not 0), and uncounts each task whose waker it takes from
    /// `waiters`: a woken task counts itself again if it stores a waker again. Each
    /// waker is taken under the lock and woken after it is released, so an executor
    /// that polls at once, on this thread, may register again, and a `wake` that drops
    /// the last reference to a task (and that task's futures) may take the lock.
    #[cold]
    pub(crate) fn wake_all(&self, waiters: &AtomicU32) {
        let len = self.lock().wakers.len();
        for i in 0..len {
            let waker = {
                let mut list = self.lock();
                let waker = list.wakers.get_mut(i).and_then(Option::take);
                if waker.is_some() {
                    // Under the lock, as every change of a task's count is.
                    waiters.fetch_sub(1, Ordering::Relaxed);
                }
                waker
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}
