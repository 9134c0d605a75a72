//! `Pinned`: a version kept alive across frames for a long-running reader.
//!
//! This module owns the pin. Invariant: while a `Pinned` lives, its version's pin count
//! is above zero, so `end_frame` does not free it; dropping the pin gives the count
//! back exactly once.

use core::fmt;

use crate::pool::Pool;
use crate::sync::Ordering;

use super::version::{Version, MAX_PINS};

/// A version kept alive across frames, from [`Store::pin`](crate::store::Store::pin).
///
/// Derefs to the value. It does not borrow the store, so [`Store::end_frame`](crate::store::Store::end_frame) can run
/// while it lives; the version is freed at the first `end_frame` after it is retired
/// and its last pin is dropped. It carries the scope's lifetime, so it cannot outlive
/// the store. `Clone` adds a pin; any thread may drop it.
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let store = level.new_store::<u32>(16, 32);
///     let id = store.create(1).unwrap();
///     let a = store.pin(id).unwrap();
///     let b = a.clone();
///     store.destroy(id);
///     assert_eq!(store.end_frame(), 0); // pinned twice
///     drop(a);
///     assert_eq!(store.end_frame(), 0); // still pinned by `b`
///     assert_eq!(*b, 1);
///     drop(b);
///     assert_eq!(store.end_frame(), 1);
/// });
/// ```
pub struct Pinned<'s, T> {
    pub(super) versions: &'s Pool<'s, Version<T>>,
    pub(super) slot: u32,
}

impl<T> Pinned<'_, T> {
    #[inline(always)]
    fn version(&self) -> &Version<T> {
        // SAFETY: our pin keeps the version from being freed (`end_frame` frees only
        // unpinned versions), and the pool outlives `'s`, which we carry. The version
        // was published to the thread that pinned it; a pin sent to another thread
        // carries that edge with it (sending is a synchronisation).
        unsafe { self.versions.slot_ref(self.slot) }
    }
}

impl<T> core::ops::Deref for Pinned<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.version().value
    }
}

impl<T> Clone for Pinned<'_, T> {
    fn clone(&self) -> Self {
        let pins = &self.version().pins;
        // Relaxed: we hold a pin already, so the count cannot reach zero meanwhile
        // (as in `Arc::clone`).
        if pins.fetch_add(1, Ordering::Relaxed) >= MAX_PINS {
            pins.fetch_sub(1, Ordering::Relaxed);
            panic!("scope-stack: too many pins on one version");
        }
        Pinned {
            versions: self.versions,
            slot: self.slot,
        }
    }
}

impl<T> Drop for Pinned<'_, T> {
    fn drop(&mut self) {
        // Release: pairs with the Acquire load in `end_frame`, so every read made
        // through this pin happens-before the version is dropped.
        self.version().pins.fetch_sub(1, Ordering::Release);
    }
}

impl<T: fmt::Debug> fmt::Debug for Pinned<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pinned").field(&**self).finish()
    }
}
