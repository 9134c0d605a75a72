//! This thread's staging blocks (feature `std`): where the elements of a sequence of
//! unknown length wait while their own data is placed in the scope, until the sequence
//! ends and they move into the scope in one piece.
//!
//! A thread has up to [`LEVELS`] blocks, block `k` of `STAGING_BYTES << k` bytes, each
//! reserved from the global heap the first time a sequence needs it and kept for the
//! thread's life. Sequences stack on the *current* block like scopes (a nested one
//! opens above the one that reads it, and ends first). A sequence that outgrows the
//! room left there moves its staged elements to a larger block, which becomes current
//! while it (and what nests in it) is read, and the one below it again when it ends.
//!
//! Invariants: the block that a sequence moves to is above the current one, and every
//! block above the current one is idle (a sequence that made a higher block current has
//! ended and closed its scopes there before the current level went back down), so a
//! moving sequence always starts at the bottom of its new block; each staged sequence
//! is a scope on its block, so its room is given back when it ends, whatever the
//! outcome; nothing outside this module reaches the blocks, so no scope a user
//! deserializes into lives on one.
use core::cell::Cell;

use crate::block::linear::LinearAllocator;
use crate::scope::ScopeStack;

/// Bytes of each thread's first serde staging block (feature `std`; see
/// [`warm_staging`]): the elements of the sequences being read at once (the outer ones,
/// while an inner one is read), not their data. 1 MiB; under Miri, 4 KiB, so that the
/// tests move sequences to larger blocks at Miri's sizes.
///
/// ```
/// assert!(scope_stack::serde::STAGING_BYTES >= 4096);
/// ```
pub const STAGING_BYTES: usize = if cfg!(miri) { 4 << 10 } else { 1 << 20 };

/// How many sizes of block a thread may reserve (the largest is `STAGING_BYTES << 23`,
/// 8 TiB, far beyond what a reservation succeeds at).
const LEVELS: usize = 24;

/// A thread's staging blocks and which one sequences stack on now.
struct Staging {
    /// Block `k`, each in an allocation of its own (so that reserving one never writes
    /// near another that scopes are open on); null until it is first needed.
    blocks: [Cell<*mut LinearAllocator>; LEVELS],
    /// The level new sequences open on.
    current: Cell<usize>,
}

impl Staging {
    /// Block `level`, reserved on first use; `None` if it cannot be.
    fn block(&self, level: usize) -> Option<&LinearAllocator> {
        let slot = &self.blocks[level];
        if slot.get().is_null() {
            let block = LinearAllocator::with_capacity(STAGING_BYTES << level).ok()?;
            slot.set(std::boxed::Box::into_raw(std::boxed::Box::new(block)));
        }
        // SAFETY: a non-null slot holds a pointer from `Box::into_raw`, freed only when
        // the thread's `Staging` drops, which outlives `&self`; only shared references
        // to the block are ever made.
        Some(unsafe { &*slot.get() })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        for slot in &self.blocks {
            let block = slot.replace(core::ptr::null_mut());
            if !block.is_null() {
                // SAFETY: the pointer came from `Box::into_raw` and is freed once here;
                // no scope is open on it, since the thread is exiting.
                drop(unsafe { std::boxed::Box::from_raw(block) });
            }
        }
    }
}

std::thread_local! {
    static STAGING: Staging = const {
        Staging {
            blocks: [const { Cell::new(core::ptr::null_mut()) }; LEVELS],
            current: Cell::new(0),
        }
    };
}

/// Runs `f` with a fresh scope on this thread's current staging block, or with `None`
/// when the thread has none (it could not be reserved, or the thread is exiting).
pub(crate) fn with_staging<R>(f: impl FnOnce(Option<&ScopeStack<'_>>) -> R) -> R {
    let mut f = Some(f);
    let done = STAGING.try_with(|staging| {
        staging.block(staging.current.get()).map(|block| {
            let f = f.take().expect("called once");
            block.scope_shared("serde staging", |s| f(Some(&**s)))
        })
    });
    match done {
        Ok(Some(r)) => r,
        _ => (f.take().expect("called once"))(None),
    }
}

/// Runs `f` with a fresh scope on the smallest of this thread's blocks above the
/// current one that has at least `bytes`, which is current while `f` runs (so what
/// nests in `f` stacks there too); `None` when there is no such block or it cannot be
/// reserved. Called by a sequence that outgrew the current block, to move there.
pub(crate) fn with_larger_staging<R>(
    bytes: usize,
    f: impl FnOnce(Option<&ScopeStack<'_>>) -> R,
) -> R {
    /// Puts the current level back when `f` ends, by return or by unwinding.
    struct Restore<'a>(&'a Cell<usize>, usize);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.0.set(self.1);
        }
    }
    let mut f = Some(f);
    let done = STAGING.try_with(|staging| {
        let below = staging.current.get();
        let level = (below + 1..LEVELS).find(|&k| (STAGING_BYTES << k) >= bytes)?;
        let block = staging.block(level)?;
        let _restore = Restore(&staging.current, below);
        staging.current.set(level);
        let f = f.take().expect("called once");
        Some(block.scope_shared("serde staging", |s| f(Some(&**s))))
    });
    match done {
        Ok(Some(r)) => r,
        _ => (f.take().expect("called once"))(None),
    }
}

/// Reserves this thread's first serde staging block now, if it has none yet, and returns
/// the bytes this call reserved: the block's size, or 0 when the thread had it already
/// (or it could not be reserved, or the thread is exiting; a later load then tries
/// again and, if it still cannot, falls back as it would without the block).
///
/// A sequence of unknown length (a JSON list) waits in its thread's staging block while
/// its elements place their data; the block (1 MiB) is reserved from the global heap at
/// the thread's first such load. A loader thread, or each thread of a pool that loads
/// levels, calls this at start-up so that no load reserves it mid-game. Larger blocks,
/// for sequences that outgrow the first, are still reserved when first needed.
///
/// ```
/// let first = std::thread::spawn(|| {
///     let reserved = scope_stack::serde::warm_staging();
///     (reserved, scope_stack::serde::warm_staging())
/// })
/// .join()
/// .unwrap();
/// assert_eq!(first, (scope_stack::serde::STAGING_BYTES, 0));
/// ```
pub fn warm_staging() -> usize {
    STAGING
        .try_with(|staging| {
            let level = 0;
            if !staging.blocks[level].get().is_null() {
                return 0;
            }
            staging.block(level).map_or(0, |_| STAGING_BYTES)
        })
        .unwrap_or(0)
}
