//! This thread's staging block (feature `std`): where the elements of a sequence of
//! unknown length wait while their own data is placed in the scope, until the sequence
//! ends and they move into the scope in one piece.
//!
//! Invariants: the block is reserved from the global heap once per thread (on its first
//! staged sequence) and never grows; each staged sequence is a scope on it, opened and
//! closed like a call (nested sequences stack above it, and end first), so the room of
//! a sequence is given back when it ends; nothing outside this module can reach the
//! block, so no scope a user deserializes into lives on it.
use crate::block::linear::LinearAllocator;
use crate::scope::ScopeStack;

/// Bytes of each thread's staging block: the elements of the sequences being read at
/// once (the outer ones, while an inner one is read), not their data.
pub(crate) const STAGING_BYTES: usize = 1 << 20;

std::thread_local! {
    /// This thread's staging block, or `None` if it could not be reserved.
    static STAGING: Option<LinearAllocator> = LinearAllocator::with_capacity(STAGING_BYTES).ok();
}

/// Runs `f` with a fresh scope on this thread's staging block, or with `None` when the
/// thread has none (it could not be reserved, or the thread is exiting).
pub(crate) fn with_staging<R>(f: impl FnOnce(Option<&ScopeStack<'_>>) -> R) -> R {
    let mut f = Some(f);
    let done = STAGING.try_with(|block| {
        block.as_ref().map(|block| {
            let f = f.take().expect("called once");
            block.scope_shared("serde staging", |s| f(Some(&**s)))
        })
    });
    match done {
        Ok(Some(r)) => r,
        _ => (f.take().expect("called once"))(None),
    }
}
