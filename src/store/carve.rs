//! Carving a store out of a scope, and what it tells a memory map.
//!
//! This module owns construction and the report hook. Invariants: the ID table's first
//! level and the versions' pool are carved from the scope (no global heap); the report
//! reads only the table's published entry words, never the store object.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

#[cfg(not(loom))]
use core::sync::atomic::AtomicPtr;
#[cfg(loom)]
use loom::sync::atomic::AtomicPtr;

use crate::error::{AllocError, AllocErrorKind, Subject};
use crate::pool::carve::try_new_pool_in;
use crate::pool::Pool;
use crate::scope::info::{PoolLink, PoolSnapshot};
use crate::scope::place::{self, check_capacity, try_alloc_array_uninit, Core as Surface};
use crate::scope::ScopeStack;
use crate::sync::AtomicU32;

use super::garbage::Garbage;
use super::table::{Block, Table};
use super::version::Version;
use super::{Store, STORE_IDS};
use crate::limits::MAX_STORE_OBJECTS;

impl<'s> ScopeStack<'s> {
    /// Carves a [`Store`] for up to `max_objects` objects and `max_versions` versions
    /// out of this scope.
    ///
    /// # Panics
    /// Where [`try_new_store`](Self::try_new_store) returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<[f32; 3]>(100, 200);
    ///     assert_eq!((store.max_objects(), store.max_versions()), (100, 200));
    /// });
    /// ```
    #[track_caller]
    pub fn new_store<T: Clone + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> &'s mut Store<'s, T> {
        match self.try_new_store(max_objects, max_versions) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`Store`] out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`] if either maximum is 0;
    /// - [`AllocErrorKind::TooManySlots`] if `max_versions` is above
    ///   [`MAX_POOL_CAPACITY`](crate::MAX_POOL_CAPACITY), or `max_objects` above
    ///   [`MAX_STORE_OBJECTS`];
    /// - [`AllocErrorKind::OutOfMemory`] when the scope has no room (see
    ///   [`Store::memory_needed`]).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_store::<u32>(0, 8).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     let e = level.try_new_store::<u32>(1 << 20, 8).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(level.try_new_store::<u32>(8, 8).is_ok());
    /// });
    /// ```
    pub fn try_new_store<T: Clone + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> Result<&'s mut Store<'s, T>, AllocError> {
        // SAFETY: `T: 'static` on a plain scope (its finalizer runs on this thread).
        unsafe { try_new_store_in(self, max_objects, max_versions) }
    }
}

/// The one body of `try_new_store`, for every surface.
///
/// # Safety
/// As `place::try_new_object` for `Store<'s, T>` (whose finalizer drops the versions
/// still in it): `T: 'static`, and `Send` where the surface is concurrent.
pub(crate) unsafe fn try_new_store_in<'s, C: Surface<'s>, T: Clone>(
    c: C,
    max_objects: usize,
    max_versions: usize,
) -> Result<&'s mut Store<'s, T>, AllocError> {
    let error = |kind, size| c.error(kind, size, align_of::<Block>());
    if max_objects == 0 || max_objects > MAX_STORE_OBJECTS {
        let kind = if max_objects == 0 {
            AllocErrorKind::InvalidCapacity
        } else {
            AllocErrorKind::TooManySlots
        };
        return Err(error(kind, 0).with_subject(Subject::store_objects::<T>(max_objects)));
    }
    // The versions pool checks its capacity; its errors name the store.
    let versions_subject = Subject::store_versions::<T>(max_versions);
    check_capacity::<C, Version<T>>(
        c,
        max_versions,
        crate::limits::MAX_POOL_CAPACITY,
        size_of::<Version<T>>() + 8,
        versions_subject,
    )?;
    let blocks = Table::blocks_for(max_objects);
    let overflow = || {
        error(AllocErrorKind::CapacityOverflow, usize::MAX)
            .with_subject(Subject::store_objects::<T>(max_objects))
    };
    let top_layout = Layout::array::<AtomicPtr<Block>>(blocks).map_err(|_| overflow())?;
    let block_layout = Layout::array::<Block>(blocks).map_err(|_| overflow())?;

    let versions: &'s Pool<'s, Version<T>> = {
        // SAFETY: forwarded from the caller (a version holds a `T`).
        unsafe {
            try_new_pool_in(
                c,
                max_versions,
                Pool::<Version<T>>::default_shards(max_versions),
            )?
        }
    };
    let top = place::try_alloc_layout(c, top_layout)?.cast();
    let storage = place::try_alloc_layout(c, block_layout)?.cast();
    let high_water = try_alloc_array_uninit::<C, AtomicU32>(c, 1)?;
    // A per-store starting generation, unrelated to those of the stores made
    // before and after, so their ids do not match here (see `Id`).
    let seed = store_seed(STORE_IDS.fetch_add(1, core::sync::atomic::Ordering::Relaxed));
    // SAFETY: `top` and `storage` are fresh, aligned arrays of `blocks` elements in
    // this scope, used by this table alone, valid until the scope rewinds, which is
    // after the store is gone; `max_objects <= u32::MAX` was checked.
    // `high_water` is a fresh, aligned word in this scope for this table alone.
    let table = unsafe { Table::new(top, storage, high_water, max_objects, seed) };
    let store = Store {
        versions,
        table,
        garbage: Garbage::new(),
        _scope: PhantomData,
    };
    // SAFETY: the drop contract of `new_object_unchecked`: a store's drop glue only
    // drops its own atomics (and only loom's atomics have drop glue); it follows no
    // borrow. The pool it names was made earlier in this scope, so it is finalized
    // after the store.
    let store = unsafe { place::try_new_object_unchecked(c, store) }.map_err(|e| e.error)?;
    // Register with the scope for reports (the versions pool registered itself
    // above, as a `Pool` row; `owns` names it, so reports nest it under the store).
    // The link names the table's memory, which the store
    // reaches through raw pointers, never the store object the caller holds `&mut`
    // to. With no room for the link the store works all the same, unreported.
    let start = top.as_ptr().addr();
    let link = PoolLink {
        ptr: top.cast(),
        // The table's bytes end after the high-water word, so they need no word
        // of their own; the last word names the versions pool's link (`owns`).
        words: [
            start,
            max_objects,
            blocks,
            high_water.as_ptr().addr(),
            versions.report_key(),
        ],
        kind: "Store",
        type_name: core::any::type_name::<T>(),
        snapshot: store_snapshot,
        next: None,
    };
    // SAFETY: `store_snapshot` reads the table's top array, published blocks and
    // high-water word (see `super::table::report_counts`), all carved above in this scope
    // and valid until it ends.
    unsafe { c.register_pool(link) };
    Ok(store)
}

/// The starting generation of the store created `number`th.
///
/// A bare multiple of `number` (a Weyl sequence) keeps the stores made one after
/// another far apart, but not all pairs: with the golden-ratio step, stores 732,539
/// apart started only 227 generations apart. This avalanche mixes every bit of `number`
/// into every bit of the seed, so stores any distance apart get seeds that look
/// unrelated, and the odds of a false match are those of two random 32-bit numbers
/// (see [`Id`](super::Id)). Each step (an add, an xor with a right shift, a multiply by
/// an odd constant) is invertible, so the whole is a bijection of `u32`: no two of the
/// first 2^32 stores share a seed.
fn store_seed(number: u32) -> u32 {
    // The offset keeps store #0 off generation 0, the generation of an all-zero id.
    let mut x = number.wrapping_add(0x9E37_79B9);
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^= x >> 16;
    x
}

/// Reads a registered store's statistics for a memory map report: live objects out of
/// `max_objects`, and the most object indices ever in use at once. Reads only atomics
/// in the table's scope memory (see `super::table::report_counts`), never the store object
/// or a version.
///
/// # Safety
/// `link` was filled in by `try_new_store`, and its store's scope is live.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
unsafe fn store_snapshot(link: &PoolLink) -> PoolSnapshot {
    let [addr, max_objects, blocks, high_water, versions] = link.words;
    // Counted by size: on a concurrent scope the arrays may lie in different chunks.
    let bytes =
        blocks * (size_of::<AtomicPtr<Block>>() + size_of::<Block>()) + size_of::<AtomicU32>();
    let top = link.ptr.cast::<AtomicPtr<Block>>();
    // The high-water word was carved from the same block as `top`: the block's
    // provenance (carried by `link.ptr`) reaches it.
    let high_water = link.ptr.as_ptr().with_addr(high_water).cast::<AtomicU32>();
    // SAFETY: the words are those `try_new_store` recorded for a table whose scope is
    // live (the caller).
    let (len, high) = unsafe { super::table::report_counts(top, blocks, max_objects, high_water) };
    PoolSnapshot {
        len,
        capacity: max_objects,
        high_water_len: high.max(len),
        high_water_exact: true,
        addr,
        bytes,
        owns: Some(versions),
        heap: None,
    }
}

#[cfg(test)]
mod tests {
    use super::store_seed;

    /// How far apart two generations are, the shorter way round the `u32` circle: an
    /// index reused that many times in one store reaches the other's generation.
    fn distance(a: u32, b: u32) -> u32 {
        a.wrapping_sub(b).min(b.wrapping_sub(a))
    }

    #[test]
    fn store_0_and_store_732539_start_far_apart() {
        // The pair that the old golden-ratio step put 227 generations apart.
        assert_eq!(distance(0, 732_539u32.wrapping_mul(0x9E37_79B9)), 227);
        assert!(distance(store_seed(0), store_seed(732_539)) > 1 << 24);
        assert_ne!(store_seed(0), 0);
    }

    #[test]
    fn stores_at_any_fixed_distance_get_unrelated_seeds() {
        // For each gap `d` between creation numbers, 10,000 pairs of stores `d` apart.
        // Random 32-bit seeds land within 2^16 of each other with odds 2^-15, so about
        // 0.3 pairs in 10,000; a linear seed puts all 10,000 pairs at one distance, and
        // for some `d` that distance is small (227 for d = 732,539).
        // Fewer pairs under Miri, which interprets every mix.
        let pairs = if cfg!(miri) { 100 } else { 10_000u32 };
        let gaps = (1..=64).chain([227, 4096, 65_536, 732_539, 1 << 20, 1 << 24]);
        for d in gaps {
            let close = (0..pairs)
                .filter(|&k| distance(store_seed(k), store_seed(k + d)) < 1 << 16)
                .count();
            assert!(
                close <= 4,
                "{close} of {pairs} store pairs {d} apart start close"
            );
        }
    }

    #[test]
    fn consecutive_stores_never_share_a_seed() {
        // The first 16,384 stores: sorted, no two neighbours are equal.
        let count = if cfg!(miri) { 1 << 9 } else { 1 << 14 };
        let mut seeds: [u32; 1 << 14] = core::array::from_fn(|n| store_seed(n as u32));
        let seeds = &mut seeds[..count];
        seeds.sort_unstable();
        assert!(seeds.windows(2).all(|w| w[0] != w[1]));
    }
}
