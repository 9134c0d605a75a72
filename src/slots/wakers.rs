//! The wakers of the tasks that wait for a slot of one [`Slots`](super::Slots): a list
//! the slot set keeps, filled by the futures of `super::tasks` and woken by an unload.
//!
//! Its own file, below both the slot set (`super::carve`, which holds one) and the
//! futures (`super::tasks`, which fill it), so neither imports the other through it.
//! Invariant: entry `i` belongs to the task holding ticket `i`, and `free` lists the
//! tickets no task holds; every change is one assignment under the lock.

use core::ops::DerefMut;
use core::task::Waker;
use std::sync::PoisonError;
use std::vec::Vec;

use crate::sync::Mutex;

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
        // A panic while the lock is held (a waker's `clone` or `drop` may run user
        // code) leaves the list whole: every change is a single assignment.
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes every task that waits (called by `Slots::wake`, after a slot is freed,
    /// when `waiters` is not 0). Each waker is taken under the lock and woken after it
    /// is released, so an executor that polls at once, on this thread, may register
    /// again.
    #[cold]
    pub(crate) fn wake_all(&self) {
        let len = self.lock().wakers.len();
        for i in 0..len {
            let waker = self.lock().wakers.get_mut(i).and_then(Option::take);
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}
