//! Whether a profiler is connected, as the seam sees it: one word, read with one
//! relaxed load per event.
//!
//! Invariant: [`connection`] is 0 while no profiler is connected, and otherwise the
//! number of the connection that lasts; each connection gets a new number, so a
//! number seen once never comes back (a pool named during one connection never
//! sends events into a later one).

use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// How often the watcher asks the Tracy client whether a profiler is connected.
#[cfg_attr(test, allow(dead_code))]
pub(crate) const POLL_MS: u64 = 10;

/// The profiler connection now: 0 while none is, else its number.
static CONNECTION: AtomicUsize = AtomicUsize::new(0);
/// Connections so far (the number of the latest).
static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// The profiler connection now: 0 while none is, else its number (one relaxed load).
#[inline(always)]
pub(crate) fn connection() -> usize {
    CONNECTION.load(Relaxed)
}

/// Records that a profiler connected (a new number) or went away.
pub(crate) fn set_connected(connected: bool) {
    let now = if connected {
        CONNECTIONS.fetch_add(1, Relaxed) + 1
    } else {
        0
    };
    CONNECTION.store(now, Relaxed);
}
