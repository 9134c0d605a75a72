//! Scratch arenas that no thread owns: those of threads that have exited, kept for the
//! next thread that needs a pair, so that a program spawning workers every frame
//! reserves their scratch memory once, not once per thread.
//!
//! Invariants this module keeps:
//! - A pair on the list belongs to no thread and no scope lives on it. A thread's pair
//!   comes here only from its thread-local destructor (after every closure that could
//!   hold a scratch scope has returned), or when a call that had to borrow a pair (see
//!   `with_arenas`) has finished with it.
//! - A pair comes here empty (`used() == 0`) with its high-water mark reset, so the
//!   thread that takes it next reports its own use only. A pair that is not empty (a
//!   leaked scope cannot leave one so, but the check is cheap) is freed instead.
//! - The list holds at most [`MAX_SPARE`] pairs, all of the capacity new threads get at
//!   the time they are returned; others are freed. Taking or returning a pair locks a
//!   mutex, once per thread start and exit: no hot path goes through here.

use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::vec::Vec;

use crate::block::linear::LinearAllocator;

/// The capacity of each of a thread's two scratch arenas, in bytes, unless configured.
///
/// ```
/// assert_eq!(scope_stack::scratch::DEFAULT_CAPACITY, 1 << 20);
/// ```
pub const DEFAULT_CAPACITY: usize = 1 << 20;

/// Capacity for threads that have not taken their arenas yet (0: [`DEFAULT_CAPACITY`]).
static DEFAULT: AtomicUsize = AtomicUsize::new(0);

/// Sets the capacity new threads' arenas get (see `scratch::set_default_capacity`).
pub(super) fn set_default_capacity(bytes: usize) {
    DEFAULT.store(bytes, Ordering::Relaxed);
}

/// The capacity new threads' arenas get.
pub(super) fn default_capacity() -> usize {
    match DEFAULT.load(Ordering::Relaxed) {
        0 => DEFAULT_CAPACITY,
        n => n,
    }
}

/// Most pairs kept: enough for a frame's worth of short-lived workers on a large
/// machine; beyond it, an exiting thread frees its pair.
pub(super) const MAX_SPARE: usize = 64;

/// The spare pairs (last returned, first taken).
static SPARE: Mutex<Vec<[LinearAllocator; 2]>> = Mutex::new(Vec::new());

/// A pair of arenas held by a thread (or by one call that borrowed it); dropping it
/// hands the pair to the spare list.
pub(super) struct Arenas {
    pair: Option<[LinearAllocator; 2]>,
}

impl Arenas {
    /// Holds `pair`.
    pub(super) fn new(pair: [LinearAllocator; 2]) -> Arenas {
        Arenas { pair: Some(pair) }
    }

    /// The two arenas.
    #[inline(always)]
    pub(super) fn get(&self) -> &[LinearAllocator; 2] {
        match &self.pair {
            Some(pair) => pair,
            None => unreachable!("a pair is taken only by drop"),
        }
    }
}

impl Drop for Arenas {
    fn drop(&mut self) {
        if let Some(pair) = self.pair.take() {
            give_back(pair, default_capacity());
        }
    }
}

/// A spare pair of `capacity`-byte arenas, if one is kept.
pub(super) fn take(capacity: usize) -> Option<[LinearAllocator; 2]> {
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    let at = spare.iter().rposition(|p| p[0].capacity() == capacity)?;
    Some(spare.swap_remove(at))
}

/// Keeps `pair` for a later thread, if it is empty, of the `capacity` new threads get,
/// and the list has room; frees it otherwise.
fn give_back(mut pair: [LinearAllocator; 2], capacity: usize) {
    let reusable = pair
        .iter()
        .all(|a| a.used() == 0 && a.capacity() == capacity);
    if !reusable {
        return;
    }
    for arena in &mut pair {
        arena.reset_high_water_mark();
    }
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    if spare.len() < MAX_SPARE {
        spare.push(pair);
    }
}
