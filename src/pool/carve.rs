//! Carving a pool out of a scope: `new_pool`, `new_pool_with_shards` and their `try_`
//! forms.
//!
//! This module owns pool construction. Invariant: a pool's slots, stamps and free-list
//! heads are all carved from the scope (nothing on the global heap), every slot starts
//! free with a fresh stamp, and the pool registers a report record that points only at
//! that memory, never at the pool object.
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

use crossbeam_utils::CachePadded;

use crate::error::AllocError;
use crate::scope::place::{self, check_capacity, try_alloc_array_uninit, Core as Surface};
use crate::scope::ScopeStack;
use crate::sync::{AtomicU32, UnsafeCell};

use super::free_list::{FreeLists, Gate, Head, ShardLayout, Stock, Transit, HEADS_PER_SHARD};
use super::report::pool_snapshot;
use super::slots::{Core, Quiet, Slot, FREE, POOL_IDS, STATE_MASK};
use super::Pool;
use crate::limits::{MAX_POOL_CAPACITY, MAX_POOL_SHARDS};
impl<'s> ScopeStack<'s> {
    /// Carves a [`Pool`] of `capacity` slots out of this scope.
    ///
    /// The slot storage, free-list links and stamps are allocated first, then the pool
    /// object with a finalizer: when the scope unwinds, objects still in the pool are
    /// dropped, then the memory rewinds.
    ///
    /// Items must be `'static`, because the pool's finalizer drops them (rule 4 of
    /// [`rules`](crate::rules)). An item that borrows the level (an
    /// `Enemy<'s> { name: &'s str }`) gets a lifetime error that points at the returned
    /// pool ("borrowed value does not live long enough"): carve such a pool with
    /// [`new_pool_pod`](Self::new_pool_pod), which takes any item that needs no drop.
    ///
    /// # Panics
    /// Where [`try_new_pool`](Self::try_new_pool) returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let enemies = level.new_pool::<[f32; 4]>(100);
    ///     assert_eq!(enemies.capacity(), 100);
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool<T: 'static>(&self, capacity: usize) -> &'s mut Pool<'s, T> {
        match self.try_new_pool(capacity) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`Pool`] out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`](crate::AllocErrorKind::InvalidCapacity) for a capacity of 0;
    /// - [`AllocErrorKind::TooManySlots`](crate::AllocErrorKind::TooManySlots) above [`MAX_POOL_CAPACITY`];
    /// - [`AllocErrorKind::CapacityOverflow`](crate::AllocErrorKind::CapacityOverflow) when the arrays' size overflows;
    /// - [`AllocErrorKind::OutOfMemory`](crate::AllocErrorKind::OutOfMemory) when the scope has no room (memory already
    ///   taken for the arrays stays taken until the scope unwinds).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator, MAX_POOL_CAPACITY};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_pool::<u64>(0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     assert!(e.to_string().ends_with("a pool needs at least one slot (capacity 0)"));
    ///     let e = level.try_new_pool::<u8>(MAX_POOL_CAPACITY + 1).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::TooManySlots);
    ///     let e = level.try_new_pool::<u64>(1 << 20).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(level.try_new_pool::<u64>(64).is_ok());
    /// });
    /// ```
    pub fn try_new_pool<T: 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut Pool<'s, T>, AllocError> {
        self.try_new_pool_with_shards(capacity, Pool::<T>::default_shards(capacity))
    }

    /// Carves a [`Pool`] of `capacity` slots split into `shards` shards (see the
    /// [module docs](crate::pool#shards)).
    ///
    /// One shard is the right choice for a pool that only one thread uses at a time;
    /// about one shard per thread that inserts into the pool is the right choice for a
    /// pool shared by a job system. Each shard costs two 128-byte lines of scope memory.
    /// The slots are split into shards of equal length (the last may be shorter), so
    /// the pool can end up with fewer shards than asked: 10 slots in 6 shards become
    /// 5 shards of 2 ([`Pool::shard_count`] says how many).
    ///
    /// # Panics
    /// Where [`try_new_pool_with_shards`](Self::try_new_pool_with_shards) returns an
    /// error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    ///     let bullets = level.new_pool_with_shards::<[f32; 4]>(1024, workers);
    ///     assert!(bullets.shard_count() <= workers);
    ///     let lonely = level.new_pool_with_shards::<u64>(64, 1);
    ///     assert_eq!(lonely.shard_count(), 1);
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool_with_shards<T: 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> &'s mut Pool<'s, T> {
        match self.try_new_pool_with_shards(capacity, shards) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`Pool`] with `shards` shards out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// As [`try_new_pool`](Self::try_new_pool), and
    /// [`AllocErrorKind::InvalidShardCount`](crate::AllocErrorKind::InvalidShardCount)
    /// for 0 shards or more than [`MAX_POOL_SHARDS`].
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_pool_with_shards::<u64>(64, 0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidShardCount);
    ///     let pool = level.try_new_pool_with_shards::<u64>(10, 6).unwrap();
    ///     assert_eq!(pool.shard_count(), 5);
    /// });
    /// ```
    pub fn try_new_pool_with_shards<T: 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> Result<&'s mut Pool<'s, T>, AllocError> {
        // SAFETY: `T: 'static` on a plain scope (its finalizer runs on this thread).
        unsafe { try_new_pool_in(self, capacity, shards) }
    }

    /// Carves a [`Pool`] for items that need no drop, with no `'static` bound: they may
    /// borrow this scope (an `Enemy<'s> { name: &'s str }`). The pool's finalizer drops
    /// nothing, so it reads no borrow. Types that need drop use [`new_pool`](Self::new_pool)
    /// (a build-time error here).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// struct Enemy<'s> { name: &'s str, hp: u32 }
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let enemies = level.new_pool_pod::<Enemy<'_>>(16);
    ///     let wolf = enemies.insert(Enemy { name: level.alloc_str("wolf"), hp: 3 }).ok().unwrap();
    ///     assert_eq!((wolf.name, wolf.hp), ("wolf", 3));
    /// });
    /// ```
    ///
    /// ```compile_fail,E0080
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// level.new_pool_pod::<String>(4); // error: this type needs drop; use new_pool
    /// # });
    /// ```
    #[track_caller]
    pub fn new_pool_pod<T>(&self, capacity: usize) -> &'s mut Pool<'s, T> {
        crate::scope::place::or_fail(self, self.try_new_pool_pod(capacity))
    }

    /// The `try_` form of [`new_pool_pod`](Self::new_pool_pod), with
    /// [`try_new_pool`](Self::try_new_pool)'s errors.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_pool_pod::<&str>(0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// });
    /// ```
    pub fn try_new_pool_pod<T>(&self, capacity: usize) -> Result<&'s mut Pool<'s, T>, AllocError> {
        try_new_pool_pod_in(self, capacity)
    }
}

/// The one body of `try_new_pool_pod`, for every surface: a pool of items that need
/// no drop, with no `'static` bound.
pub(crate) fn try_new_pool_pod_in<'s, C: Surface<'s>, T>(
    c: C,
    capacity: usize,
) -> Result<&'s mut Pool<'s, T>, AllocError> {
    const {
        assert!(
            !core::mem::needs_drop::<T>(),
            "new_pool_pod: this type needs drop; use new_pool"
        )
    };
    // SAFETY: `T` needs no drop, so the pool's finalizer drops no item and reads no
    // borrow an item holds; on a concurrent scope no item is dropped on another thread.
    unsafe { try_new_pool_in(c, capacity, Pool::<T>::default_shards(capacity)) }
}

/// The one body of `try_new_pool_with_shards`, for every surface.
///
/// # Safety
/// As `place::try_new_object` for `Pool<'s, T>` (whose finalizer drops the `T`s still
/// in it): `T: 'static`, and `Send` where the surface is concurrent.
pub(crate) unsafe fn try_new_pool_in<'s, C: Surface<'s>, T>(
    c: C,
    capacity: usize,
    shards: usize,
) -> Result<&'s mut Pool<'s, T>, AllocError> {
    check_capacity::<C, T>(
        c,
        capacity,
        MAX_POOL_CAPACITY,
        size_of::<T>() + 8,
        crate::error::Subject::pool::<T>(capacity),
    )?;
    if shards == 0 || shards > MAX_POOL_SHARDS {
        return Err(c.error(
            crate::AllocErrorKind::InvalidShardCount,
            shards.saturating_mul(size_of::<Head>()),
            align_of::<Head>(),
        ));
    }
    let layout = ShardLayout::new(capacity as u32, shards as u32);
    let values = try_alloc_array_uninit::<C, Slot<T>>(c, capacity)?;
    let stamps = try_alloc_array_uninit::<C, AtomicU32>(c, capacity)?;
    let links = try_alloc_array_uninit::<C, AtomicU32>(c, capacity)?;
    let heads = try_alloc_array_uninit::<C, Head>(c, HEADS_PER_SHARD * layout.shards as usize)?;

    let id = POOL_IDS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    // A per-pool starting generation, so handles of pools that share a tag rarely
    // collide (see `Handle`).
    let seed = id.wrapping_mul(0x9E37_79B9) & !STATE_MASK;
    let cap = capacity as u32;
    for i in 0..capacity {
        // SAFETY: `i < capacity`, and the arrays have `capacity` elements of fresh,
        // aligned memory that lives until this scope rewinds.
        unsafe {
            UnsafeCell::init_uninit(values.add(i).as_ptr());
            stamps.add(i).as_ptr().write(AtomicU32::new(seed | FREE));
        }
    }
    // SAFETY: `links` has `capacity` and `heads` has `2 * layout.shards` fresh elements
    // that only these lists will use, valid until the scope rewinds, which is after
    // the pool's finalizer has run; `layout` is for `cap <= MAX_POOL_CAPACITY`.
    let free = unsafe { FreeLists::new(heads, links, cap, layout) };
    let pool = Pool {
        core: Core {
            values,
            stamps,
            capacity: cap,
            tag: id & 0xFF,
            free,
            transit: CachePadded::new(Transit::new()),
            quiet: CachePadded::new(Quiet {
                #[cfg(feature = "std")]
                futex: crate::sync::Futex::new(),
                stock: Stock::new(),
                gate: Gate::new(),
            }),
            _owns: PhantomData,
            #[cfg(feature = "tracy")]
            profiler: crate::profiler::Counted::new(
                |text| c.profiler_path(text),
                "Pool",
                core::any::type_name::<T>(),
                size_of::<T>(),
            ),
        },
        _scope: PhantomData,
    };
    // SAFETY: `new_object_unchecked`'s drop contract: the destructor drops `'static`
    // `T`s and reads the pool's own arrays, carved in this scope before its record and
    // valid until the rewind, which follows all finalizers. `'s` is only a marker.
    match unsafe { place::try_new_object_unchecked(c, pool) } {
        Ok(p) => {
            // Register with the scope for reports. The link copies what a report needs
            // (the shards' heads, whose lines hold the counts, live in scope memory, apart
            // from the pool object), so a report never reads the pool object the caller
            // holds `&mut` to.
            let core = &p.core;
            let link = crate::scope::info::PoolLink {
                ptr: core.free.heads().cast(),
                words: [
                    core.values.as_ptr().addr(),
                    capacity * (size_of::<Slot<T>>() + 2 * size_of::<AtomicU32>())
                        + HEADS_PER_SHARD * layout.shards as usize * size_of::<Head>(),
                    core.capacity as usize,
                    layout.shards as usize,
                    layout.len as usize,
                ],
                kind: "Pool",
                type_name: core::any::type_name::<T>(),
                snapshot: pool_snapshot,
                next: None,
            };
            // SAFETY: `pool_snapshot` reads only the heads, which stay valid until this
            // scope ends.
            unsafe { c.register_pool(link) };
            Ok(p)
        }
        Err(e) => Err(e.error),
    }
}
