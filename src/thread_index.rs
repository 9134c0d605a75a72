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

    /// The calling thread's index; returns it to the bitmap when the thread exits.
    struct Registration(Cell<u32>);

    impl Drop for Registration {
        fn drop(&mut self) {
            let id = self.0.get();
            if id < DENSE {
                // Relaxed: the bit orders nothing; it only keeps indices apart, and the
                // read-modify-write chain on the word does that by itself.
                IN_USE[(id / 64) as usize].fetch_and(!(1 << (id % 64)), Ordering::Relaxed);
            }
        }
    }

    std::thread_local! {
        static INDEX: Registration = const { Registration(Cell::new(UNASSIGNED)) };
    }

    #[cold]
    #[inline(never)]
    fn assign(slot: &Cell<u32>) -> u32 {
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
                    Ok(_) => {
                        let id = w as u32 * 64 + bit;
                        slot.set(id);
                        return id;
                    }
                    Err(now) => bits = now,
                }
            }
        }
        let id = OVERFLOW.fetch_add(1, Ordering::Relaxed) % DENSE;
        // Not below `DENSE` in the registration, so the drop returns nothing.
        slot.set(DENSE + id);
        id
    }

    /// The calling thread's index (see the module docs).
    #[inline]
    pub(crate) fn current() -> u32 {
        INDEX
            .try_with(|r| match r.0.get() {
                UNASSIGNED => assign(&r.0),
                id if id < DENSE => id,
                id => id - DENSE,
            })
            // The thread-local is gone: the thread is exiting. Any index is correct.
            .unwrap_or(0)
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
