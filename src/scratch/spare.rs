//! Scratch arenas that no thread owns: those of threads that have exited, kept for the
//! next thread that needs a pair, so that a program spawning workers every frame
//! reserves their scratch memory once, not once per thread.
//!
//! # Pairs in flight
//!
//! A thread hands its pair back from its thread-local destructor, which may run after
//! `std::thread::scope` (or a join) has already returned: the scope waits for the
//! workers' closures, not for their thread-locals. So when a frame spawns its next
//! workers at once, some of the last frame's pairs may still be on their way back.
//! Counting only the spares on the shelf, a new worker would find it empty and reserve
//! a fresh pair, and on a loaded machine that happened every few dozen frames for good.
//!
//! So the shelf counts the pairs in flight instead: `held` is every pair a thread holds
//! now, live or exiting, and `settled` is how many pairs the program holds at once when
//! no thread is on its way out (the most it has ever needed). A new thread that finds
//! the shelf empty while `held >= settled` knows a pair is coming back: every pair beyond
//! the settled count belongs to a thread that is exiting. It waits on a condition
//! variable (woken by each return, at most [`STRAGGLER_WAIT`] in all) and takes the
//! returned pair. Only if the wait runs out with no pair returned meanwhile does the
//! program really hold more pairs at once than before: then it reserves a new pair and
//! the settled count rises. Before any pair has ever come back (the first frame, or a
//! pool of long-lived workers starting up) nothing can be in flight, and nobody waits.
//!
//! The invariant this gives: after the settled count has reached the program's peak of
//! threads using scratch at once, a late return never makes a new reservation; it
//! delays the new thread until the exiting one has run its destructor (microseconds to
//! a few milliseconds on a loaded machine; `tests/scratch_oversubscribed.rs` measures
//! it). A program whose demand grows pays [`STRAGGLER_WAIT`] once per new thread at the
//! new peak (in parallel), then reserves.
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
//!   the time they are returned; others are freed. `held` counts every live [`Arenas`]
//!   and each pair between `take` and the reservation that follows it, and changes only
//!   under the shelf's lock together with the shelf, so a thread never sees a pair that
//!   is neither on the shelf nor held.
//!   Taking or returning a pair locks a mutex, once per thread start and exit: no hot
//!   path goes through here.

use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
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

/// How long, in all, a new thread waits for a pair on its way back (see the module
/// docs): far longer than an exiting thread takes to run its destructors even on an
/// oversubscribed machine, and paid in full only when the program's demand grows.
pub(super) const STRAGGLER_WAIT: Duration = Duration::from_millis(200);

/// The spare pairs and the count of pairs in flight.
struct Shelf {
    /// The spare pairs (last returned, first taken).
    pairs: Vec<[LinearAllocator; 2]>,
    /// Pairs held now by threads, live or exiting, and by borrowing calls.
    held: usize,
    /// How many pairs the program holds at once when no thread is on its way out.
    settled: usize,
    /// Pairs put on the shelf so far.
    returned: u64,
}

static SHELF: Mutex<Shelf> = Mutex::new(Shelf {
    pairs: Vec::new(),
    held: 0,
    settled: 0,
    returned: 0,
});

/// Signalled each time a pair goes on the shelf.
static RETURNED: Condvar = Condvar::new();

fn shelf() -> MutexGuard<'static, Shelf> {
    SHELF.lock().unwrap_or_else(|e| e.into_inner())
}

/// A pair of arenas held by a thread (or by one call that borrowed it); dropping it
/// hands the pair to the spare list.
pub(super) struct Arenas {
    pair: Option<[LinearAllocator; 2]>,
}

impl Arenas {
    /// Holds `pair`, a pair that [`take`] counted as held (taken from the shelf, or
    /// built after `take` said to).
    pub(super) fn taken(pair: [LinearAllocator; 2]) -> Arenas {
        Arenas { pair: Some(pair) }
    }

    /// Holds `pair`, a pair built without [`take`] (`set_capacity`), counting it.
    pub(super) fn new(pair: [LinearAllocator; 2]) -> Arenas {
        shelf().held += 1;
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

/// A spare pair of `capacity`-byte arenas: one from the shelf, or one that a thread on
/// its way out hands back while this call waits (see the module docs). `None`: the
/// caller reserves a new pair, and the settled count has been raised for it if the
/// program really holds more pairs at once than before. Either way the pair counts as
/// held from here on, under the same lock (so a thread that looks next never sees a
/// pair taken off the shelf and not yet held); a caller whose reservation fails calls
/// [`not_built`].
pub(super) fn take(capacity: usize) -> Option<[LinearAllocator; 2]> {
    let mut shelf = shelf();
    let returned_before = shelf.returned;
    let mut deadline = None;
    loop {
        if let Some(at) = shelf
            .pairs
            .iter()
            .rposition(|p| p[0].capacity() == capacity)
        {
            shelf.held += 1;
            return Some(shelf.pairs.swap_remove(at));
        }
        // Every pair beyond the settled count is held by a thread on its way out, and
        // nothing is in flight before the first pair has come back.
        let in_flight = shelf.returned > 0 && shelf.held >= shelf.settled;
        let now = Instant::now();
        let until = *deadline.get_or_insert(now + STRAGGLER_WAIT);
        if !in_flight || now >= until {
            break;
        }
        shelf = RETURNED
            .wait_timeout(shelf, until - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    shelf.held += 1;
    if shelf.returned == returned_before {
        // No pair came back meanwhile: the program holds one more pair at once.
        shelf.settled = shelf.settled.max(shelf.held);
    }
    None
}

/// The pair that [`take`] counted for a reservation that then failed is not held.
pub(super) fn not_built() {
    shelf().held -= 1;
}

/// Keeps `pair` for a later thread, if it is empty, of the `capacity` new threads get,
/// and the list has room; frees it otherwise. Either way it is no longer held.
fn give_back(mut pair: [LinearAllocator; 2], capacity: usize) {
    let reusable = pair
        .iter()
        .all(|a| a.used() == 0 && a.capacity() == capacity);
    if reusable {
        for arena in &mut pair {
            arena.reset_high_water_mark();
        }
    }
    let mut shelf = shelf();
    shelf.held -= 1;
    if reusable && shelf.pairs.len() < MAX_SPARE {
        shelf.pairs.push(pair);
        shelf.returned += 1;
        drop(shelf);
        RETURNED.notify_all();
    }
    // Otherwise `pair` is freed here, after the lock is released.
}
