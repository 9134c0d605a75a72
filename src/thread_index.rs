//! A small, dense number for each live thread, used to give a thread its home shard in a
//! [`Pool`](crate::Pool).
//!
//! Invariant: two threads that are alive at the same time never hold the same index
//! below [`DENSE`], and a thread keeps its index for its whole life. An exiting thread
//! gives its index back, and a new thread takes the lowest free one, so a program that
//! runs 16 workers (even workers spawned afresh each frame) uses the indices `0..17` or
//! so, and a pool with that many shards gives each its own. Past [`DENSE`] live threads,
//! further threads share indices from a wrapping counter: correct, only slower.
//!
//! A thread often finishes its work before it gives its index back: `std::thread::scope`
//! returns once the workers' closures have returned, and their thread-locals (and so
//! their indices) go a little later. Workers spawned again at once would find the low
//! indices taken and climb past the pool's shard count, where `index % shards` puts two
//! live threads on one home shard. So a new thread whose lowest free index is at or
//! above the count the program has settled at (one more than the highest index a thread
//! has kept) yields, then sleeps in short steps, up to 5 ms in all, until an exiting
//! thread gives a lower index back, and takes that one. If the time runs out with no
//! thread exiting meanwhile, the program really holds more indices at once than before:
//! the thread keeps its index and the settled count rises to include it. If threads did
//! exit, the count stays, so one slow exit on a loaded machine does not raise it for
//! good. Only a thread's first look-up can wait, and only when it would set a new high:
//! a program that starts 16 workers waits up to 5 ms once per worker, in parallel; one
//! that respawns them every frame finds the settled indices free within microseconds.
//! With 16 workers respawned for 2,000 frames beside the main thread, two live threads
//! shared one of 17 home shards in 0 frames on an idle 2-core machine and in 8 with
//! three busy loops beside it (584 without the wait; `tests/thread_index_frames.rs`).
//!
//! [`current_exclusive`] says whether the index is one of those unique ones: it returns
//! the index only while the thread holds its bitmap bit, and [`SHARED`] otherwise (past
//! [`DENSE`] live threads, once the thread's registration has been given back during
//! its exit, without `std`, and under loom). A bit is given back with `Release` and
//! taken with `Acquire`, so a thread that takes an index over from an exited one sees
//! everything the exited thread wrote under that index (a concurrent scope's per-thread
//! slot relies on this).
//!
//! For the memory map, which lists a concurrent scope's chunks by thread, the registry
//! also keeps each index's holder (`std` only): a thread's first look-up stores a
//! handle of it ([`std::thread::current`], whose name `std::thread::Builder::name` and
//! rayon's `thread_name` set) beside its bitmap bit, and its exit clears it before the
//! bit is given back, so [`name_of`] gives the name of the thread that holds an index
//! now (a thread that took over an exited one's index shows its own name, or none).
//! This costs the first look-up one lock of a `static` table (a `Mutex` over one
//! `Option<Thread>` per bitmap index, 8 KiB) and an `Arc` clone, and the exit one lock;
//! the look-ups after it are untouched. `std::thread::current` allocates the handle
//! of a thread that std did not start and that has not asked for it before (the main
//! thread, threads made outside std): once in that thread's life, at its first
//! look-up. Indices past [`DENSE`] are shared and record no name.
//!
//! The registry is a fixed bitmap in a `static`: taking and returning an index never
//! touches the global heap (but for that handle, as said above). Without `std` (no thread-locals) and under loom (whose
//! models must be deterministic across runs) every thread gets index 0; callers that
//! know their worker number pass it to [`Pool::insert_in_shard`](crate::Pool::insert_in_shard).

/// Indices below this are unique among live threads.
#[cfg(all(feature = "std", not(loom)))]
pub(crate) const DENSE: u32 = 64 * WORDS as u32;
#[cfg(all(feature = "std", not(loom)))]
const WORDS: usize = 16;

/// What [`current_exclusive`] returns for a thread whose index is shared.
pub(crate) const SHARED: u32 = u32::MAX - 1;

#[cfg(all(feature = "std", not(loom)))]
mod imp {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use super::{DENSE, SHARED, WORDS};

    /// Bit `i` is set while a live thread holds index `i`.
    static IN_USE: [AtomicU64; WORDS] = [const { AtomicU64::new(0) }; WORDS];
    /// Hands out indices once the bitmap is full.
    static OVERFLOW: AtomicU32 = AtomicU32::new(0);
    /// One more than the highest index a thread has kept: how many indices the program
    /// holds at once when no thread is on its way out. Starts at 1, so the first thread
    /// never waits.
    static SETTLED: AtomicU32 = AtomicU32::new(1);
    /// How many threads have given their index back: a waiting thread compares it before
    /// and after its wait to learn whether any thread exited meanwhile.
    static RETURNED: AtomicU64 = AtomicU64::new(0);

    /// How long a new thread waits for an exiting thread's index (see the module docs).
    const STRAGGLER_WAIT: Duration = Duration::from_millis(5);
    /// How long of that it yields before it sleeps.
    const YIELD_FIRST: Duration = Duration::from_micros(200);

    const UNASSIGNED: u32 = u32::MAX;

    /// Gives the thread's bitmap index back when the thread exits.
    struct Registration(Cell<u32>);

    impl Drop for Registration {
        fn drop(&mut self) {
            let id = self.0.get();
            if id < DENSE {
                // Anything this thread still does while it exits shares shard 0, and owns
                // no index exclusively any more.
                let _ = INDEX.try_with(|i| i.set(0));
                let _ = EXCLUSIVE.try_with(|i| i.set(SHARED));
                // Before the bit goes back: the next holder's name is the only one a
                // map may show for the index once it is taken again.
                names::forget(id);
                give_back(id);
                RETURNED.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    std::thread_local! {
        /// The index itself: a type without `Drop`, so reading it is one load from
        /// thread-local storage, with no lazy-registration check.
        static INDEX: Cell<u32> = const { Cell::new(UNASSIGNED) };
        /// The index while the thread holds its bitmap bit, else `SHARED` (or
        /// `UNASSIGNED` before the first look-up).
        static EXCLUSIVE: Cell<u32> = const { Cell::new(UNASSIGNED) };
        /// Holds the bitmap index until the thread exits.
        static GUARD: Registration = const { Registration(Cell::new(UNASSIGNED)) };
    }

    #[cold]
    #[inline(never)]
    fn assign() -> u32 {
        // A thread that is already past its thread-local destructors cannot register
        // a guard: it shares index 0 rather than take a bit it would never give back.
        let id = GUARD
            .try_with(|guard| {
                let id = take_settled_bit();
                guard.0.set(id);
                id
            })
            .unwrap_or(UNASSIGNED);
        let id = if id < DENSE {
            id
        } else if id == UNASSIGNED {
            0
        } else {
            OVERFLOW.fetch_add(1, Ordering::Relaxed) % DENSE
        };
        let _ = INDEX.try_with(|i| i.set(id));
        let exclusive = if id < DENSE && GUARD.try_with(|g| g.0.get() == id).unwrap_or(false) {
            id
        } else {
            SHARED
        };
        let _ = EXCLUSIVE.try_with(|i| i.set(exclusive));
        // After the index is set, so that an allocation `std::thread::current` makes
        // (a global allocator that uses a pool, say) finds it and does not come back.
        if exclusive == id {
            names::record(id);
        }
        id
    }

    /// Each bitmap index's holder, for the memory map's thread names (see the module
    /// docs).
    mod names {
        use std::string::String;
        use std::sync::{Mutex, MutexGuard, PoisonError};
        use std::thread::Thread;

        use super::DENSE;

        /// The thread that holds each bitmap index, or `None` while it is free.
        static HOLDERS: Mutex<[Option<Thread>; DENSE as usize]> =
            Mutex::new([const { None }; DENSE as usize]);

        fn holders() -> MutexGuard<'static, [Option<Thread>; DENSE as usize]> {
            // A panic while it was held leaves no table half-written (each change is
            // one store of an `Option`).
            HOLDERS.lock().unwrap_or_else(PoisonError::into_inner)
        }

        /// Records the calling thread as the holder of `id`, which it has just taken.
        pub(super) fn record(id: u32) {
            let me = std::thread::current();
            let old = holders()[id as usize].replace(me);
            // Dropped outside the lock (an `Arc`'s last reference frees it).
            drop(old);
        }

        /// Clears `id`'s holder (its thread is exiting).
        pub(super) fn forget(id: u32) {
            let old = holders()[id as usize].take();
            drop(old);
        }

        /// The name of the thread that holds `id` now.
        pub(crate) fn name_of(id: u32) -> Option<String> {
            let holder = holders().get(id as usize)?.clone();
            holder.and_then(|t| t.name().map(String::from))
        }
    }
    pub(crate) use names::name_of;

    /// The lowest free bitmap index, waiting a little for a lower one when the lowest
    /// free one is above what the program settled at (see the module docs); `DENSE`
    /// when every bit is taken.
    fn take_settled_bit() -> u32 {
        let id = take_bit_below(DENSE);
        if id < DENSE && id >= SETTLED.load(Ordering::Relaxed) {
            wait_for_straggler(id)
        } else {
            id
        }
    }

    /// Holding index `held`, waits up to [`STRAGGLER_WAIT`] for an index below the
    /// settled count to come free, moves to it if one does, and returns the index held.
    #[cold]
    fn wait_for_straggler(held: u32) -> u32 {
        let start = Instant::now();
        let deadline = start + STRAGGLER_WAIT;
        let returned = RETURNED.load(Ordering::Relaxed);
        loop {
            let settled = SETTLED.load(Ordering::Relaxed);
            if held < settled {
                // Another thread kept an index above ours: ours is within the settled
                // count now.
                return held;
            }
            let lower = take_bit_below(settled);
            if lower < settled {
                // Nothing was written under `held`.
                give_back(held);
                return lower;
            }
            let now = Instant::now();
            if now >= deadline {
                if RETURNED.load(Ordering::Relaxed) == returned {
                    // No thread exited while we waited: the program really holds more
                    // indices at once than before.
                    SETTLED.fetch_max(held + 1, Ordering::Relaxed);
                }
                return held;
            }
            if now - start < YIELD_FIRST {
                // An exiting thread on another core is usually gone within microseconds.
                std::thread::yield_now();
            } else {
                // On a loaded machine it needs the core: get out of its way.
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }

    /// Clears bitmap index `id`.
    fn give_back(id: u32) {
        // Release: the next thread to take this bit (Acquire, in `take_bit_below`) sees
        // everything written under the index before (see the module docs).
        IN_USE[(id / 64) as usize].fetch_and(!(1 << (id % 64)), Ordering::Release);
    }

    /// The lowest free bitmap index below `limit`, or `DENSE` when there is none.
    fn take_bit_below(limit: u32) -> u32 {
        for (w, word) in IN_USE.iter().enumerate() {
            let base = w as u32 * 64;
            if base >= limit {
                break;
            }
            let mut bits = word.load(Ordering::Relaxed);
            // Bits at or above `limit` count as taken.
            let closed = if limit - base >= 64 {
                0
            } else {
                u64::MAX << (limit - base)
            };
            while bits | closed != u64::MAX {
                let bit = (!(bits | closed)).trailing_zeros();
                // Acquire: see `give_back`.
                match word.compare_exchange_weak(
                    bits,
                    bits | 1 << bit,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return w as u32 * 64 + bit,
                    Err(now) => bits = now,
                }
            }
        }
        DENSE
    }

    /// The calling thread's index (see the module docs).
    #[inline(always)]
    pub(crate) fn current() -> u32 {
        match INDEX.with(Cell::get) {
            UNASSIGNED => assign(),
            id => id,
        }
    }

    /// The calling thread's index if no other live thread holds it, else `SHARED`.
    #[inline(always)]
    pub(crate) fn current_exclusive() -> u32 {
        // `try_with`: a thread whose thread-locals are gone shares.
        match EXCLUSIVE.try_with(Cell::get) {
            Ok(UNASSIGNED) => exclusive_slow(),
            Ok(id) => id,
            Err(_) => SHARED,
        }
    }

    /// The raw per-thread word behind [`current_exclusive`]: the index, `SHARED`, or
    /// `u32::MAX` before the first look-up (callers that bound-check it against a
    /// table smaller than `SHARED` send both of the latter to their slow path, which
    /// calls `current_exclusive`).
    #[inline(always)]
    pub(crate) fn current_exclusive_fast() -> u32 {
        EXCLUSIVE.with(Cell::get)
    }

    /// Whether a live thread holds index `index` right now (a snapshot; `false` for
    /// indices past [`DENSE`], which are shared).
    #[inline]
    pub(crate) fn held(index: u32) -> bool {
        if index >= DENSE {
            return false;
        }
        // Relaxed: a hint for picking where to look for free slots; it orders nothing.
        IN_USE[(index / 64) as usize].load(Ordering::Relaxed) & (1 << (index % 64)) != 0
    }

    #[cold]
    #[inline(never)]
    fn exclusive_slow() -> u32 {
        assign();
        EXCLUSIVE.try_with(Cell::get).unwrap_or(SHARED)
    }
}

#[cfg(all(not(loom), not(feature = "std")))]
mod imp {
    /// Without thread-locals every thread is index 0 (see the module docs).
    #[inline(always)]
    pub(crate) fn current() -> u32 {
        0
    }

    /// No index is exclusive without thread-locals (see the module docs).
    #[inline(always)]
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn current_exclusive() -> u32 {
        super::SHARED
    }

    /// As `current_exclusive`.
    #[inline(always)]
    pub(crate) fn current_exclusive_fast() -> u32 {
        super::SHARED
    }

    /// No index is held: every thread shares index 0.
    #[inline(always)]
    pub(crate) fn held(_index: u32) -> bool {
        false
    }

    /// No thread names without `std`.
    #[cfg(feature = "alloc")]
    pub(crate) fn name_of(_index: u32) -> Option<alloc::string::String> {
        None
    }
}

/// Under loom the models say which index each of their threads holds (see
/// [`crate::loom_hold_thread_index`]); a thread that says nothing shares.
#[cfg(loom)]
mod imp {
    use core::cell::Cell;

    loom::thread_local! {
        static EXCLUSIVE: Cell<u32> = Cell::new(super::SHARED);
    }

    #[inline(always)]
    pub(crate) fn current() -> u32 {
        0
    }

    pub(crate) fn current_exclusive() -> u32 {
        EXCLUSIVE.with(Cell::get)
    }

    pub(crate) fn current_exclusive_fast() -> u32 {
        EXCLUSIVE.with(Cell::get)
    }

    pub(crate) fn hold(index: u32) {
        EXCLUSIVE.with(|e| e.set(index));
    }

    /// Every thread's `current` is 0, which none holds alone.
    pub(crate) fn held(_index: u32) -> bool {
        false
    }

    /// Models name no threads.
    #[cfg(feature = "alloc")]
    pub(crate) fn name_of(_index: u32) -> Option<alloc::string::String> {
        None
    }
}

#[cfg(loom)]
pub(crate) use imp::hold;
/// The name of the thread that holds dense index `index` now, if it has one (`std`
/// only; see the module docs).
#[cfg(feature = "alloc")]
pub(crate) use imp::name_of;
pub(crate) use imp::{current, current_exclusive, current_exclusive_fast, held};

#[cfg(all(test, feature = "std", not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn live_threads_get_distinct_indices_and_exited_ones_are_reused() {
        let here = current();
        assert_eq!(current(), here, "an index is stable for the thread's life");
        let barrier = std::sync::Barrier::new(2);
        let (a, b) = std::thread::scope(|s| {
            let (a, b) = (
                s.spawn(|| {
                    let i = current();
                    barrier.wait();
                    i
                }),
                s.spawn(|| {
                    let i = current();
                    barrier.wait();
                    i
                }),
            );
            (a.join().unwrap(), b.join().unwrap())
        });
        assert!(a != b && a != here && b != here, "{a} {b} {here}");
        assert!(a < DENSE && b < DENSE);
    }

    #[test]
    fn a_bitmap_index_is_exclusive() {
        std::thread::spawn(|| {
            let id = current();
            assert_eq!(current_exclusive(), id);
        })
        .join()
        .unwrap();
    }
}
