//! The profiler seam (feature `tracy`): every event the crate shows a profiler passes
//! through [`emit`], and nowhere else.
//!
//! Invariants this module keeps:
//! - Nothing is named and nothing is sent while no profiler is connected: a pool
//!   (a scope, a slot, a container) that opens then has no [`Name`] and stays hidden
//!   until it ends, at the cost of one relaxed load of [`connection`] when it opens;
//!   its events cost a check of that `None`.
//! - A pool that opens while a profiler is connected is named then, for that
//!   connection (connections are numbered, and a number never comes back): its events
//!   go out while [`connection`] still gives that number (one relaxed load each), so
//!   the profiler sees every allocation of the pool from its first, never a free of an
//!   allocation it was not shown, and a discard only of a pool it was shown an
//!   allocation of (Tracy's server mis-times every later memory event after a discard
//!   of a pool it does not know).
//! - A profiler pool is named by a [`Name`] that lives for the rest of the program
//!   (interned once per distinct text, see [`names`]), never by text in scope memory: the
//!   profiler keeps the name's pointer. The table of names is bounded ([`names`]).
//! - While a pool is live (a scope open, a slot loaded, a container not yet dropped), no
//!   other live pool has its name: [`names::acquire`] hands out `text`, `text#2`, ... so a
//!   discard of one never frees another's allocations in the profiler's view.
//! - Nothing here touches the heap per event: an event is a few words handed to the
//!   Tracy client (or, in this crate's unit tests, to the recorder instead).
//! - Each pool named is ended exactly once ([`discard`]), which releases its name.
//!
//! Who says a profiler is connected: outside this crate's unit tests, a thread started
//! with the first block ([`watch`]) asks the Tracy client every
//! [`POLL_MS`](connection::POLL_MS) ms and
//! numbers each new connection; in unit tests, the recorder switches it.
//!
//! The lower layers call the small functions below under `#[cfg(feature = "tracy")]`, so
//! without the feature no code and no field exists for any of this.

use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

mod connection;
mod event;
pub(crate) mod names;
#[cfg(test)]
pub(crate) mod record;
#[cfg(not(test))]
mod tracy_client_backend;

pub(crate) use event::{Event, Plot};
pub(crate) use names::Name;

pub(crate) use connection::connection;

/// Starts watching for a profiler (once per program; a no-op in unit tests, where the
/// recorder says what is connected).
#[inline]
pub(crate) fn watch() {
    #[cfg(not(test))]
    tracy_client_backend::watch();
}

/// `pool` if it was named during the connection that lasts now.
#[inline(always)]
fn current(pool: Option<&'static Name>) -> Option<&'static Name> {
    match pool {
        Some(p) if p.is_current(connection()) => Some(p),
        _ => None,
    }
}

/// A pool name for the text `text` writes, for a pool opening now: `None` (hidden)
/// while no profiler is connected, or when the name table is full.
#[inline]
pub(crate) fn name_for(text: impl FnOnce(&mut names::Text)) -> Option<&'static Name> {
    let now = connection();
    if now == 0 {
        return None;
    }
    name_now(text, now)
}

#[cold]
#[inline(never)]
fn name_now(text: impl FnOnce(&mut names::Text), now: usize) -> Option<&'static Name> {
    let mut t = names::Text::new();
    text(&mut t);
    match names::acquire(t.as_str(), now) {
        Ok(name) => Some(name),
        Err(full) => {
            if full.first {
                table_full(names::HARD_LIMIT);
            }
            None
        }
    }
}

/// Hands `event` to the profiler (or, in unit tests, to the recorder).
#[inline]
pub(crate) fn emit(event: Event<'_>) {
    #[cfg(test)]
    record::push(event);
    #[cfg(not(test))]
    tracy_client_backend::send(event);
}

/// `size` bytes at `addr` were placed in `pool` (nothing for zero bytes or a pool not
/// shown).
#[inline]
pub(crate) fn alloc(pool: Option<&'static Name>, addr: usize, size: usize) {
    if size != 0 {
        if let Some(pool) = current(pool) {
            pool.mark_shown();
            emit(Event::Alloc { pool, addr, size });
        }
    }
}

/// The allocation at `addr` in `pool` ended.
#[inline]
pub(crate) fn free(pool: Option<&'static Name>, addr: usize) {
    if let Some(pool) = current(pool) {
        emit(Event::Free { pool, addr });
    }
}

/// A grown or shrunk allocation: a free of the old one and an alloc of the new.
#[inline]
pub(crate) fn realloc(pool: Option<&'static Name>, old: usize, new: usize, size: usize) {
    free(pool, old);
    alloc(pool, new, size);
}

/// Ends `pool`: one discard (if the profiler was shown an allocation of it), then its
/// name is free for the next pool of that text.
#[inline]
pub(crate) fn discard(pool: Option<&'static Name>) {
    if let Some(pool) = pool {
        if pool.is_current(connection()) && pool.was_shown() {
            emit(Event::Discard { pool });
        }
        names::release(pool);
    }
}

/// Plots `value` (if the plot's pool is shown).
#[inline]
pub(crate) fn plot(plot: Plot, value: usize) {
    if current(Some(plot.name())).is_some() {
        emit(Event::Plot {
            plot,
            value: value as f64,
        });
    }
}

/// Sends an out-of-memory (or budget) error and the memory map at that moment as one
/// message, if a profiler is connected. (The text is formatted on the heap: this is
/// the failure path, not an event of the running program.)
#[cold]
pub(crate) fn out_of_memory(err: &crate::error::AllocError, map: &dyn core::fmt::Display) {
    use crate::error::AllocErrorKind::{BudgetExceeded, OutOfMemory};
    if matches!(err.kind(), OutOfMemory | BudgetExceeded) && connection() != 0 {
        let text = std::format!("{err}\n{map}");
        emit(Event::Message { text: &text });
    }
}

/// Tells the profiler, once, that the name table is full.
#[cold]
fn table_full(names: usize) {
    let text = std::format!(
        "scope-stack: the profiler name table is full ({names} names); pools opened from \
         now on under names it has never seen are not shown"
    );
    emit(Event::Message { text: &text });
}

/// A container's pool in the profiler (a `Pool` or `DensePool`): its name (none while
/// hidden), its objects' size, and how many objects it shows as live, for the `len`
/// plot.
pub(crate) struct Counted {
    name: Option<&'static Name>,
    size: usize,
    live: AtomicUsize,
}

impl Counted {
    /// The pool `"<scope's path>/<kind><<item type>>"` of a container of `size`-byte
    /// objects carved from the scope whose path `scope` writes, e.g.
    /// `level/Pool<Enemy>` (the item's type without module paths, as the memory map
    /// writes it); hidden while no profiler is connected.
    #[inline]
    pub(crate) fn new(
        scope: impl FnOnce(&mut names::Text),
        kind: &str,
        item_type: &str,
        size: usize,
    ) -> Counted {
        Counted {
            name: name_for(|text| {
                use core::fmt::Write;
                scope(text);
                let mut buf = [0; names::MAX_NAME];
                let short = names::short_type(&mut buf, item_type);
                let _ = write!(text, "/{kind}<{short}>");
            }),
            size,
            live: AtomicUsize::new(0),
        }
    }

    /// An object now lives at `addr` (zero-sized objects are counted, not shown).
    #[inline]
    pub(crate) fn alloc(&self, addr: usize) {
        if let Some(name) = current(self.name) {
            alloc(Some(name), addr, self.size);
            plot(Plot::Len(name), self.live.fetch_add(1, Relaxed) + 1);
        }
    }

    /// The object at `addr` is gone.
    #[inline]
    pub(crate) fn free(&self, addr: usize) {
        if let Some(name) = current(self.name) {
            if self.size != 0 {
                free(Some(name), addr);
            }
            plot(
                Plot::Len(name),
                self.live.fetch_sub(1, Relaxed).saturating_sub(1),
            );
        }
    }

    /// The end of this container in the profiler, to run when it is dropped.
    pub(crate) fn ending(&self) -> Ending {
        Ending(self.name)
    }
}

/// Ends a container's pool when dropped (after its objects, even if one panics):
/// every object it still shows goes at once, and its `len` plot goes to 0.
pub(crate) struct Ending(Option<&'static Name>);

impl Drop for Ending {
    fn drop(&mut self) {
        if let Some(name) = self.0 {
            plot(Plot::Len(name), 0);
        }
        discard(self.0);
    }
}
