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
//! The registry is a fixed bitmap in a `static`: taking and returning an index never
//! touches the global heap. Without `std` (no thread-locals) and under loom (whose
//! models must be deterministic across runs) every thread gets index 0; callers that
//! know their worker number pass it to [`Pool::insert_in_shard`](crate::Pool::insert_in_shard).

/// Indices below this are unique among live threads.
#[cfg(all(feature = "std", not(loom)))]
pub(crate) const DENSE: u32 = 64 * WORDS as u32;
#[cfg(all(feature = "std", not(loom)))]
const WORDS: usize = 16;

#[cfg(all(feature = "std", not(loom)))]
mod imp {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

    use super::{DENSE, WORDS};

    /// Bit `i` is set while a live thread holds index `i`.
    static IN_USE: [AtomicU64; WORDS] = [const { AtomicU64::new(0) }; WORDS];
    /// Hands out indices once the bitmap is full.
    static OVERFLOW: AtomicU32 = AtomicU32::new(0);

    const UNASSIGNED: u32 = u32::MAX;

    /// Gives the thread's bitmap index back when the thread exits.
    struct Registration(Cell<u32>);

    impl Drop for Registration {
        fn drop(&mut self) {
            let id = self.0.get();
            if id < DENSE {
                // Anything this thread still does while it exits shares shard 0.
                let _ = INDEX.try_with(|i| i.set(0));
                // Relaxed: the bit orders nothing; it only keeps indices apart, and the
                // read-modify-write chain on the word does that by itself.
                IN_USE[(id / 64) as usize].fetch_and(!(1 << (id % 64)), Ordering::Relaxed);
            }
        }
    }

    std::thread_local! {
        /// The index itself: a type without `Drop`, so reading it is one load from
        /// thread-local storage, with no lazy-registration check.
        static INDEX: Cell<u32> = const { Cell::new(UNASSIGNED) };
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
                let id = take_bit();
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
        id
    }

    /// The lowest free bitmap index, or `DENSE` when every bit is taken.
    fn take_bit() -> u32 {
        for (w, word) in IN_USE.iter().enumerate() {
            let mut bits = word.load(Ordering::Relaxed);
            while bits != u64::MAX {
                let bit = (!bits).trailing_zeros();
                // Relaxed: see `Registration::drop`.
                match word.compare_exchange_weak(
                    bits,
                    bits | 1 << bit,
                    Ordering::Relaxed,
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
}

#[cfg(not(all(feature = "std", not(loom))))]
mod imp {
    /// Without thread-locals every thread is index 0 (see the module docs).
    #[inline(always)]
    pub(crate) fn current() -> u32 {
        0
    }
}

pub(crate) use imp::current;

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
}
