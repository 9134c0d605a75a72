//! Garbage lists: versions replaced or destroyed during a frame, and destroyed object
//! indices, kept until `end_frame` frees or recycles them.
//!
//! There is no single list (and no lock) that every writer fights over. The store has
//! [`SHARDS`] lists, each on its own cache line; with `std` a thread picks one on its
//! first retirement (round robin) and always uses it, so up to [`SHARDS`] writer
//! threads each have a list of their own. More threads than that share lists, which is
//! still correct and lock-free, only with more compare-exchange retries. Without `std`
//! (no thread-local storage) the object's index picks the list instead.
//!
//! The lists are intrusive, so they cost no memory beyond the shard heads: a retired
//! version is linked through a word inside its own pool slot, and a destroyed object
//! index through its link in the ID table. Nothing is allocated when a list grows.
//!
//! Invariants and orderings:
//! - During a frame (`&Store`) lists are only pushed; under `&mut Store`
//!   (`end_frame`) they are only taken. So a push never competes with a pop, and a
//!   list can never show ABA.
//! - Pushes are `Relaxed`, on purpose. The compare-exchange is there to make
//!   concurrent pushes to one list atomic; it is not there to publish anything. The
//!   only reader of a list, `end_frame`, holds `&mut Store`, and Rust grants that only
//!   after every `&Store` borrow has ended; whatever ended them (joining a thread, the
//!   end of `std::thread::scope`, a channel) is a synchronisation that makes every push
//!   (and every link written before it) happen-before `end_frame`.

use crossbeam_utils::CachePadded;

use super::table::NONE;
use crate::sync::{AtomicU32, Ordering};

/// The number of garbage lists: how many writer threads get a list to themselves.
pub(crate) const SHARDS: usize = if cfg!(loom) { 2 } else { 16 };

/// The heads of one garbage list pair.
pub(crate) struct Shard {
    /// Retired version slots, linked through their `next` words.
    pub(crate) versions: AtomicU32,
    /// Destroyed object indices, linked through the table's links.
    pub(crate) objects: AtomicU32,
}

pub(crate) struct Garbage {
    shards: [CachePadded<Shard>; SHARDS],
    /// Retired versions that were still pinned at the last `end_frame`, linked
    /// through their `next` words. Touched only under `&mut`.
    pub(crate) pinned: u32,
}

impl Garbage {
    pub(crate) fn new() -> Garbage {
        Garbage {
            shards: core::array::from_fn(|_| {
                CachePadded::new(Shard {
                    versions: AtomicU32::new(NONE),
                    objects: AtomicU32::new(NONE),
                })
            }),
            pinned: NONE,
        }
    }

    /// The list the calling thread retires to. `hint` (the object index) picks it
    /// when there is no thread-local storage.
    #[inline]
    pub(crate) fn shard(&self, hint: u32) -> &Shard {
        &self.shards[shard_index(hint)]
    }

    /// Takes every list (leaving them empty): `(versions, objects)` heads.
    pub(crate) fn take(&mut self, shard: usize) -> (u32, u32) {
        let s = &self.shards[shard];
        // Relaxed: `&mut self` excludes every other access (see the module docs).
        (
            s.versions.swap(NONE, Ordering::Relaxed),
            s.objects.swap(NONE, Ordering::Relaxed),
        )
    }
}

/// Pushes `index` onto the list at `head`, linking it through `link`.
#[inline]
pub(crate) fn push(head: &AtomicU32, index: u32, link: &AtomicU32) {
    // Relaxed: see the module docs. `link` belongs to `index`, which only this thread
    // is retiring (it won the compare-exchange that unlinked it from the table), so no
    // one else writes it.
    let mut top = head.load(Ordering::Relaxed);
    loop {
        link.store(top, Ordering::Relaxed);
        match head.compare_exchange_weak(top, index, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(t) => top = t,
        }
    }
}

#[cfg(feature = "std")]
fn shard_index(_hint: u32) -> usize {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicUsize, Ordering as O};
    /// Hands out shards round robin. A plain `core` atomic even under loom: it only
    /// spreads threads over lists; any answer is correct.
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    MINE.with(|mine| {
        if mine.get() == usize::MAX {
            mine.set(NEXT.fetch_add(1, O::Relaxed) % SHARDS);
        }
        mine.get()
    })
}

#[cfg(not(feature = "std"))]
fn shard_index(hint: u32) -> usize {
    hint as usize % SHARDS
}
