//! The owner's list: each shard's private list of free slots, which the thread that owns
//! the shard pushes and pops with plain loads and stores.
//!
//! A shard's *owner* is the thread that holds the dense thread index equal to the shard's
//! number alone (`thread_index::current_exclusive_fast`). It keeps the slots it frees
//! into its home on this list (the *cache*: its top in `HeadLine::cache`, its links in
//! the same `next` array as the stacks), and takes its inserts from it. No other thread
//! touches the cache while the owner may be using it, so neither side needs a
//! read-modify-write: an insert or a free is a load of the top, a load or store of one
//! link and a store of the top, all `Relaxed` (plain `mov`s).
//!
//! # The handshake
//!
//! Other threads reach a cache only to steal from it when every other place is empty,
//! to prove that the pool is full, or to make the owner's frees visible to a waiter
//! (`steal.rs`, `waiters.rs`). They first close the *gate* (one word for the whole
//! pool: a request bit, or a waiter count; every such thread needs every cache
//! frozen), then wait until each owner is not inside an operation. Each owner
//! operation is bracketed:
//!
//! 1. store `busy = 1` (`Relaxed`);
//! 2. [`light`] fence;
//! 3. load the gate (`Acquire`); if it is closed, store `busy = 0` and take the slow
//!    path, which uses the shared stacks with compare-exchanges as any other thread;
//! 4. the plain operation on the cache;
//! 5. store `busy = 0` (`Release`).
//!
//! The other side: close the gate (a read-modify-write), [`heavy`] fence, then load
//! `busy` (`Acquire`) until it reads 0. The two fences make a store-buffering pair
//! (`crate::sync::asymmetric`): either the owner's gate load (step 3) sees the gate
//! closed, and it stays out, or the other side's load of `busy` sees step 1's store or
//! a later one, and it waits for step 5, whose `Release` hands it everything the
//! operation wrote. Once the gate is open again (a `Release` read-modify-write), the
//! owner's `Acquire` load of it at step 3 hands the owner whatever the other side
//! changed in the cache.
//!
//! An insert closes the bracket at a request only (a waiter does not mind a slot taken
//! from a cache); a free closes it at a request or a waiter (a waiter must see every
//! free, so frees go to the shared stacks, whose pushes wake it).
//!
//! Invariant: the cache holds only slots of its own shard, each once, never also on a
//! stack. Only the owner inside a bracket, or a thread that closed the gate with a
//! request (holding the steal lock) and saw `busy == 0` since, writes the cache or
//! reads the links of its slots. Any thread may read the top word alone, as a snapshot
//! (`cache_empty`); under a waiter's count the owner may still pop, so the cache can
//! only shrink then.

use super::lists::{FreeLists, NIL, NIL_WAITING};
use crate::sync::asymmetric::light;
use crate::sync::{AtomicU32, Ordering};

/// Every owner's gate, one word for the pool: [`REQUEST`] while a thief or a full check
/// works on the caches, plus [`WAITER`] per waiting thread (module docs). Owners read it
/// on every operation and only the slow paths write it, so the pool keeps it on a line
/// that is read far more than written (`Quiet`). It is not a field of `FreeLists`: a
/// word other threads write would make `&FreeLists` a reference to mutable memory, and
/// the compiler would then reload the lists' read-only fields after every store of the
/// owner's path (11 instructions more per insert + free pair, callgrind).
pub(crate) struct Gate(pub(super) AtomicU32);

impl Gate {
    /// An open gate.
    pub(crate) fn new() -> Gate {
        Gate(AtomicU32::new(0))
    }
}

/// The gate bit a thief or a full check sets: the owner stays off its cache.
pub(crate) const REQUEST: u32 = 1;
/// What each waiter adds to a gate: the owner's frees go to the shared stacks. The
/// waiters are counted in the bits above [`REQUEST`].
pub(crate) const WAITER: u32 = 2;
/// The gate bits that keep an owner's insert off its cache: a request only.
const CLOSED_TO_INSERTS: u32 = REQUEST;
/// The gate bits that keep an owner's free off its cache: a request or any waiter.
const CLOSED_TO_FREES: u32 = u32::MAX;

impl FreeLists {
    /// Opens the owner's bracket on shard `shard` (steps 1 to 3 of the module docs):
    /// `true` when the owner may use its cache, `false` (bracket closed again) when the
    /// gate has any of the bits in `closed_by`.
    #[inline(always)]
    fn enter(&self, shard: u32, gate: &Gate, closed_by: u32) -> bool {
        let line = self.line(shard);
        // Relaxed: ordered against the gate load by the fence below.
        line.busy.store(1, Ordering::Relaxed);
        light();
        // Acquire: pairs with the Release that opened the gate last, so whatever the
        // thread that closed it changed in the cache is seen here.
        if gate.0.load(Ordering::Acquire) & closed_by != 0 {
            self.leave(shard);
            return false;
        }
        true
    }

    /// Closes the owner's bracket (step 5).
    #[inline(always)]
    fn leave(&self, shard: u32) {
        // Release: a thread that reads 0 here sees the operation's writes to the cache.
        self.line(shard).busy.store(0, Ordering::Release);
    }

    /// The owner of shard `shard` takes the top slot of its cache, with what
    /// `read(slot)` said about it, or `None` when the cache is empty or the gate is
    /// closed to inserts.
    ///
    /// The caller is the shard's owner (module docs).
    #[inline(always)]
    pub(crate) fn owner_pop_read<S>(
        &self,
        shard: u32,
        gate: &Gate,
        read: impl Fn(u32) -> S,
    ) -> Option<(u32, S)> {
        if !self.enter(shard, gate, CLOSED_TO_INSERTS) {
            return None;
        }
        let line = self.line(shard);
        // Relaxed: inside the bracket only this thread writes the cache (module docs).
        let top = line.cache.load(Ordering::Relaxed);
        if top == NIL {
            self.leave(shard);
            return None;
        }
        let seen = read(top);
        // Relaxed: the link was written by this thread, or by a thread whose writes the
        // bracket's Acquire (or the refill's) made visible.
        let below = self.link(top).load(Ordering::Relaxed);
        line.cache.store(below, Ordering::Relaxed);
        self.leave(shard);
        Some((top, seen))
    }

    /// The owner of shard `shard` puts its slot `index` (of that shard) on its cache.
    /// `false` when the gate is closed to frees: the caller pushes to the shared stack.
    ///
    /// The caller is the shard's owner, and owns `index`.
    #[inline(always)]
    pub(crate) fn owner_push(&self, shard: u32, gate: &Gate, index: u32) -> bool {
        debug_assert_eq!(self.shard_of(index), shard);
        if !self.enter(shard, gate, CLOSED_TO_FREES) {
            return false;
        }
        let line = self.line(shard);
        // Relaxed: inside the bracket (module docs).
        self.link(index)
            .store(line.cache.load(Ordering::Relaxed), Ordering::Relaxed);
        line.cache.store(index, Ordering::Relaxed);
        self.leave(shard);
        true
    }

    /// The owner of shard `shard`, its cache empty, takes the whole remote stack: keeps
    /// its oldest slot for the caller and puts the rest on the cache. `None` when the
    /// remote stack is empty or the gate is closed (the caller then takes the shared
    /// path, which moves remote chains onto the shared stack and wakes waiters).
    ///
    /// The move happens inside the bracket, so no chain is in transit for a full check
    /// (which waits for `busy == 0` before it looks): a thread that reads the remote
    /// stack empty and then the cache after the bracket sees the chain in the cache.
    #[cold]
    #[inline(never)]
    pub(crate) fn owner_refill(&self, shard: u32, gate: &Gate) -> Option<u32> {
        if !self.remote_has_slots(shard) || !self.enter(shard, gate, CLOSED_TO_FREES) {
            return None;
        }
        let Some(first) = self.swap_remote(shard) else {
            self.leave(shard);
            return None;
        };
        let (oldest, rest, newest) = self.reverse(first);
        if rest != NIL {
            let line = self.line(shard);
            // Relaxed: inside the bracket; the chain is ours (taken with Acquire).
            self.link(newest)
                .store(line.cache.load(Ordering::Relaxed), Ordering::Relaxed);
            line.cache.store(rest, Ordering::Relaxed);
        }
        self.leave(shard);
        Some(oldest)
    }

    /// `true` when shard `shard`'s cache holds no slot (a snapshot).
    #[inline]
    pub(crate) fn cache_empty(&self, shard: u32) -> bool {
        // Relaxed: a snapshot; callers that need it exact close the gate first.
        self.line(shard).cache.load(Ordering::Relaxed) >= NIL_WAITING
    }
}

impl FreeLists {
    /// Takes the top slot of shard `shard`'s cache under `&mut` (nothing else runs, so
    /// no bracket), or `None` when it is empty.
    #[inline]
    pub(super) fn pop_cache_mut(&mut self, shard: u32) -> Option<u32> {
        let line = self.line(shard);
        // Relaxed: `&mut` orders us after every thread's last bracket.
        let top = line.cache.load(Ordering::Relaxed);
        if top == NIL {
            return None;
        }
        line.cache
            .store(self.link(top).load(Ordering::Relaxed), Ordering::Relaxed);
        Some(top)
    }
}
