//! The profiler seam (feature `tracy`): every event the crate shows a profiler passes
//! through [`emit`], and nowhere else.
//!
//! Invariants this module keeps:
//! - A profiler pool is named by a [`Name`] that lives for the rest of the program
//!   (interned once per distinct text, see [`names`]), never by text in scope memory: the
//!   profiler keeps the name's pointer.
//! - While a pool is live (a scope open, a slot loaded, a container not yet dropped), no
//!   other live pool has its name: [`names::acquire`] hands out `text`, `text#2`, ... so a
//!   discard of one never frees another's allocations in the profiler's view.
//! - Nothing here touches the heap per event: an event is a few words handed to the
//!   Tracy client (or, in this crate's unit tests, to the recorder instead).
//! - Each pool acquired is discarded exactly once ([`discard`]), which releases its name.
//!
//! The lower layers call the small functions below under `#[cfg(feature = "tracy")]`, so
//! without the feature no code and no field exists for any of this.

mod event;
pub(crate) mod names;
#[cfg(test)]
pub(crate) mod record;
#[cfg(not(test))]
mod tracy_client_backend;

pub(crate) use event::{Event, Plot};
pub(crate) use names::Name;

/// Hands `event` to the profiler (or, in unit tests, to the recorder).
#[inline]
pub(crate) fn emit(event: Event<'_>) {
    #[cfg(test)]
    record::push(event);
    #[cfg(not(test))]
    tracy_client_backend::send(event);
}

/// `size` bytes at `addr` were placed in `pool` (nothing for zero bytes or no pool).
#[inline]
pub(crate) fn alloc(pool: Option<&'static Name>, addr: usize, size: usize) {
    if let Some(pool) = pool {
        if size != 0 {
            emit(Event::Alloc { pool, addr, size });
        }
    }
}

/// The allocation at `addr` in `pool` ended.
#[inline]
pub(crate) fn free(pool: Option<&'static Name>, addr: usize) {
    if let Some(pool) = pool {
        emit(Event::Free { pool, addr });
    }
}

/// A grown or shrunk allocation: a free of the old one and an alloc of the new.
#[inline]
pub(crate) fn realloc(pool: Option<&'static Name>, old: usize, new: usize, size: usize) {
    free(pool, old);
    alloc(pool, new, size);
}

/// Ends `pool`: one discard, then its name is free for the next pool of that text.
#[inline]
pub(crate) fn discard(pool: Option<&'static Name>) {
    if let Some(pool) = pool {
        emit(Event::Discard { pool });
        names::release(pool);
    }
}

/// Plots `value`.
#[inline]
pub(crate) fn plot(plot: Plot, value: usize) {
    emit(Event::Plot {
        plot,
        value: value as f64,
    });
}

/// Sends an out-of-memory (or budget) error and the memory map at that moment as one
/// message. (The text is formatted on the heap: this is the failure path, not an event
/// of the running program.)
#[cold]
pub(crate) fn out_of_memory(err: &crate::error::AllocError, map: &dyn core::fmt::Display) {
    use crate::error::AllocErrorKind::{BudgetExceeded, OutOfMemory};
    if matches!(err.kind(), OutOfMemory | BudgetExceeded) {
        let text = std::format!("{err}\n{map}");
        emit(Event::Message { text: &text });
    }
}

/// A container's pool in the profiler (a `Pool` or `DensePool`): its name, its objects'
/// size, and how many objects it shows as live, for the `len` plot.
pub(crate) struct Counted {
    name: &'static Name,
    size: usize,
    live: core::sync::atomic::AtomicUsize,
}

impl Counted {
    /// The pool `"<scope's pool>/<kind><<item type>>"` of a container of `size`-byte
    /// objects carved from the scope whose pool is `scope`, e.g. `level/Pool<Enemy>`
    /// (the item's type without module paths, as the memory map writes it).
    pub(crate) fn new(scope: &'static Name, kind: &str, item_type: &str, size: usize) -> Counted {
        use core::fmt::Write;
        let mut buf = [0; names::MAX_NAME];
        let short = names::short_type(&mut buf, item_type);
        let mut text = names::Text::new();
        let _ = write!(text, "{kind}<{short}>");
        Counted {
            name: names::acquire(&[scope.text(), text.as_str()]),
            size,
            live: core::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// An object now lives at `addr` (zero-sized objects are counted, not shown).
    #[inline]
    pub(crate) fn alloc(&self, addr: usize) {
        use core::sync::atomic::Ordering::Relaxed;
        alloc(Some(self.name), addr, self.size);
        plot(Plot::Len(self.name), self.live.fetch_add(1, Relaxed) + 1);
    }

    /// The object at `addr` is gone.
    #[inline]
    pub(crate) fn free(&self, addr: usize) {
        use core::sync::atomic::Ordering::Relaxed;
        if self.size != 0 {
            free(Some(self.name), addr);
        }
        plot(
            Plot::Len(self.name),
            self.live.fetch_sub(1, Relaxed).saturating_sub(1),
        );
    }

    /// The end of this container in the profiler, to run when it is dropped.
    pub(crate) fn ending(&self) -> Ending {
        Ending(self.name)
    }
}

/// Ends a container's pool when dropped (after its objects, even if one panics):
/// every object it still shows goes at once, and its `len` plot goes to 0.
pub(crate) struct Ending(&'static Name);

impl Drop for Ending {
    fn drop(&mut self) {
        plot(Plot::Len(self.0), 0);
        discard(Some(self.0));
    }
}
