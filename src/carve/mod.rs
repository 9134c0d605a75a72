//! [`Carve`]: the containers of a level, carved through any kind of scope.
//!
//! [`Place`] writes a helper's values once for every scope kind; `Carve` does the same
//! for containers: [`Pool`], [`DensePool`], [`Store`], [`Slots`] and [`Heap`]. It is implemented
//! for every type that implements `Place` (`&ScopeStack`, `&Scope`, [`LocalScope`] and
//! `&`[`ConcurrentScope`]), so a level loader written against `impl Carve<'s>` runs on
//! the game thread or, through a concurrent slot, on a loader thread.
//!
//! Invariant: each method calls the one body that every surface shares (in the
//! container's `carve` module), with the stricter of the surfaces' bounds: items with
//! a destructor must be `Send + 'static`, because on a concurrent scope the thread that
//! closes it drops what is left in the container.
//!
//! ```compile_fail,E0277
//! use scope_stack::{Carve, Pool};
//! fn lights<'s>(into: impl Carve<'s>) -> &'s mut Pool<'s, std::rc::Rc<u32>> {
//!     into.new_pool(8) // error: `Rc<u32>` cannot be sent between threads
//! }
//! ```
//!
//! [`LocalScope`]: crate::LocalScope
//! [`ConcurrentScope`]: crate::ConcurrentScope
mod concurrent;
mod heap;

use crate::dense::carve::{try_new_dense_pool_in, try_new_dense_pool_pod_in};
use crate::dense::DensePool;
use crate::error::AllocError;
use crate::heap::carve::try_new_heap_in;
use crate::heap::Heap;
use crate::pool::carve::{try_new_pool_in, try_new_pool_pod_in};
use crate::pool::Pool;
use crate::scope::place::{or_fail, Handle, Place};
use crate::slots::carve::try_new_slots_in;
use crate::slots::Slots;
use crate::store::carve::try_new_store_in;
use crate::store::Store;

/// Carves containers from any kind of scope: the inherent `new_pool`, `new_dense_pool`,
/// `new_store`, `new_slots` and `new_heap` (and their `try_` forms), once for every surface.
///
/// Bring it into scope to write a helper that builds a level's containers, and call it
/// from a level loader on a plain scope or from a loader thread's concurrent slot:
///
/// ```
/// use scope_stack::{slot_root, Carve, DensePool, LinearAllocator, Pool, Place};
///
/// struct Level<'s> {
///     name: &'s str,
///     enemies: &'s mut Pool<'s, [f32; 2]>,
///     shots: &'s mut DensePool<'s, [f32; 4]>,
/// }
/// slot_root!(struct LevelRoot => Level);
///
/// fn build<'s>(into: impl Carve<'s> + Copy, name: &str) -> Level<'s> {
///     Level {
///         name: into.alloc_str(name),
///         enemies: into.new_pool(64),
///         shots: into.new_dense_pool(256),
///     }
/// }
///
/// let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 2, 1 << 20);
///     // Built on a loader thread, played on this one.
///     let mut forest = std::thread::scope(|t| {
///         t.spawn(|| levels.load_concurrent::<LevelRoot>("forest", |s| build(s, "forest")))
///             .join()
///             .unwrap()
///             .unwrap()
///     });
///     forest.with_mut(|level, _| {
///         let wolf = level.enemies.insert([1.0, 2.0]).unwrap().into_handle();
///         level.enemies.get_mut(wolf).unwrap()[0] = 3.0;
///         level.shots.insert([0.0; 4]).unwrap();
///     });
///     assert_eq!(forest.with(|l| (l.name.len(), l.enemies.len(), l.shots.len())), (6, 1, 1));
///     // The same helper on the game thread's own scope.
///     let town = build(&**game, "town");
///     assert_eq!(town.enemies.capacity(), 64);
/// });
/// ```
pub trait Carve<'s>: Place<'s> {
    /// Carves a [`Pool`] of `capacity` slots ([`ScopeStack::new_pool`](crate::ScopeStack::new_pool)).
    ///
    /// ```
    /// # use scope_stack::{Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert_eq!((&**level).new_pool::<u64>(8).capacity(), 8);
    /// # });
    /// ```
    #[track_caller]
    fn new_pool<T: Send + 'static>(&self, capacity: usize) -> &'s mut Pool<'s, T> {
        or_fail(self.handle().as_core(), self.try_new_pool(capacity))
    }

    /// The `try_` form of [`new_pool`](Self::new_pool).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_pool::<u64>(0).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// # });
    /// ```
    fn try_new_pool<T: Send + 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut Pool<'s, T>, AllocError> {
        self.try_new_pool_with_shards(capacity, Pool::<T>::default_shards(capacity))
    }

    /// Carves a [`Pool`] with `shards` shards
    /// ([`ScopeStack::new_pool_with_shards`](crate::ScopeStack::new_pool_with_shards)).
    ///
    /// ```
    /// # use scope_stack::{Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert_eq!((&**level).new_pool_with_shards::<u64>(8, 2).shard_count(), 2);
    /// # });
    /// ```
    #[track_caller]
    fn new_pool_with_shards<T: Send + 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> &'s mut Pool<'s, T> {
        or_fail(
            self.handle().as_core(),
            self.try_new_pool_with_shards(capacity, shards),
        )
    }

    /// The `try_` form of [`new_pool_with_shards`](Self::new_pool_with_shards).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_pool_with_shards::<u64>(8, 0).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidShardCount);
    /// # });
    /// ```
    fn try_new_pool_with_shards<T: Send + 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> Result<&'s mut Pool<'s, T>, AllocError> {
        // SAFETY: `T: Send + 'static`, sound on every surface (the closing thread may
        // drop the items).
        unsafe { try_new_pool_in(self.handle().as_core(), capacity, shards) }
    }

    /// Carves a [`DensePool`] ([`ScopeStack::new_dense_pool`](crate::ScopeStack::new_dense_pool)).
    ///
    /// ```
    /// # use scope_stack::{Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert_eq!((&**level).new_dense_pool::<u64>(8).capacity(), 8);
    /// # });
    /// ```
    #[track_caller]
    fn new_dense_pool<T: Send + 'static>(&self, capacity: usize) -> &'s mut DensePool<'s, T> {
        or_fail(self.handle().as_core(), self.try_new_dense_pool(capacity))
    }

    /// The `try_` form of [`new_dense_pool`](Self::new_dense_pool).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_dense_pool::<u64>(0).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// # });
    /// ```
    fn try_new_dense_pool<T: Send + 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut DensePool<'s, T>, AllocError> {
        // SAFETY: as in `try_new_pool_with_shards`.
        unsafe { try_new_dense_pool_in(self.handle().as_core(), capacity) }
    }

    /// Carves a [`Store`] ([`ScopeStack::new_store`](crate::ScopeStack::new_store)).
    ///
    /// ```
    /// # use scope_stack::{Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert_eq!((&**level).new_store::<u32>(16, 32).max_objects(), 16);
    /// # });
    /// ```
    #[track_caller]
    fn new_store<T: Clone + Send + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> &'s mut Store<'s, T> {
        or_fail(
            self.handle().as_core(),
            self.try_new_store(max_objects, max_versions),
        )
    }

    /// The `try_` form of [`new_store`](Self::new_store).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_store::<u32>(0, 8).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// # });
    /// ```
    fn try_new_store<T: Clone + Send + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> Result<&'s mut Store<'s, T>, AllocError> {
        // SAFETY: as in `try_new_pool_with_shards`.
        unsafe { try_new_store_in(self.handle().as_core(), max_objects, max_versions) }
    }

    /// Carves [`Slots`] ([`ScopeStack::new_slots`](crate::ScopeStack::new_slots)).
    ///
    /// ```
    /// # use scope_stack::{Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert_eq!((&**level).new_slots("frames", 2, 1024).count(), 2);
    /// # });
    /// ```
    #[track_caller]
    fn new_slots(&self, name: &str, count: usize, bytes_each: usize) -> &'s Slots {
        or_fail(
            self.handle().as_core(),
            self.try_new_slots(name, count, bytes_each),
        )
    }

    /// The `try_` form of [`new_slots`](Self::new_slots).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_slots("frames", 0, 1024).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// # });
    /// ```
    fn try_new_slots(
        &self,
        name: &str,
        count: usize,
        bytes_each: usize,
    ) -> Result<&'s Slots, AllocError> {
        try_new_slots_in(self.handle().as_core(), name, count, bytes_each)
    }

    /// Carves a [`Pool`] for items that need no drop, with no `'static` or `Send`
    /// bound: they may borrow the scope ([`ScopeStack::new_pool_pod`](crate::ScopeStack::new_pool_pod)).
    ///
    /// ```
    /// # use scope_stack::{Carve, LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let into = &**level;
    /// let names = into.new_pool_pod::<&str>(8);
    /// assert_eq!(*names.insert(into.alloc_str("wolf")).ok().unwrap(), "wolf");
    /// # });
    /// ```
    #[track_caller]
    fn new_pool_pod<T>(&self, capacity: usize) -> &'s mut Pool<'s, T> {
        or_fail(self.handle().as_core(), self.try_new_pool_pod(capacity))
    }

    /// The `try_` form of [`new_pool_pod`](Self::new_pool_pod).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_pool_pod::<u8>(0).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// # });
    /// ```
    fn try_new_pool_pod<T>(&self, capacity: usize) -> Result<&'s mut Pool<'s, T>, AllocError> {
        try_new_pool_pod_in(self.handle().as_core(), capacity)
    }

    /// Carves a [`DensePool`] for items that need no drop, with no `'static` or `Send`
    /// bound ([`ScopeStack::new_dense_pool_pod`](crate::ScopeStack::new_dense_pool_pod)).
    ///
    /// ```
    /// # use scope_stack::{Carve, LinearAllocator, Place};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let into = &**level;
    /// let tags = into.new_dense_pool_pod::<&str>(8);
    /// let h = tags.insert(into.alloc_str("boss")).unwrap();
    /// assert_eq!(tags[h], "boss");
    /// # });
    /// ```
    #[track_caller]
    fn new_dense_pool_pod<T>(&self, capacity: usize) -> &'s mut DensePool<'s, T> {
        or_fail(
            self.handle().as_core(),
            self.try_new_dense_pool_pod(capacity),
        )
    }

    /// The `try_` form of [`new_dense_pool_pod`](Self::new_dense_pool_pod).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_dense_pool_pod::<u8>(0).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// # });
    /// ```
    fn try_new_dense_pool_pod<T>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut DensePool<'s, T>, AllocError> {
        try_new_dense_pool_pod_in(self.handle().as_core(), capacity)
    }

    /// Carves a [`Heap`] of `bytes` bytes ([`ScopeStack::new_heap`](crate::ScopeStack::new_heap)).
    /// No bound: a heap holds nothing of the caller's, and is `Send + Sync`.
    ///
    /// ```
    /// use allocator_api2::vec::Vec;
    /// use scope_stack::{Carve, Heap, LinearAllocator};
    ///
    /// /// A level's growable list of names, wherever the level is built.
    /// fn names<'s>(into: impl Carve<'s>) -> Vec<&'static str, &'s Heap> {
    ///     let mut v = Vec::new_in(into.new_heap(1024));
    ///     v.push("wolf");
    ///     v
    /// }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     assert_eq!(names(&**level), ["wolf"]);
    ///     level.scope_concurrent("load", |load| assert_eq!(names(load)[0], "wolf"));
    /// });
    /// ```
    #[track_caller]
    fn new_heap(&self, bytes: usize) -> &'s Heap {
        or_fail(self.handle().as_core(), self.try_new_heap(bytes))
    }

    /// The `try_` form of [`new_heap`](Self::new_heap).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, Carve, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let e = (&**level).try_new_heap(0).unwrap_err();
    /// assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// # });
    /// ```
    fn try_new_heap(&self, bytes: usize) -> Result<&'s Heap, AllocError> {
        try_new_heap_in(self.handle().as_core(), bytes)
    }
}

impl<'s, P: Place<'s>> Carve<'s> for P {}
