//! Containers carved from a concurrent scope: `new_pool`, `new_pool_with_shards`,
//! `new_dense_pool`, `new_store`, `new_slots`, `new_pool_pod` and `new_dense_pool_pod`,
//! each with its `try_` form, on
//! [`LocalScope`] and `&`[`ConcurrentScope`], with the names, signatures and errors they
//! have on [`ScopeStack`](crate::ScopeStack).
//!
//! They live here, above the concurrent layer, because they reach every container
//! (slots among them, which build on concurrent scopes): the concurrent layer itself
//! imports no container.
//!
//! Invariant: each wrapper calls the one body that every surface shares (in the
//! container's own `carve` module) and adds the bound that makes it sound here: items
//! with a destructor must be `Send`, because the thread that closes (or unloads) the
//! scope drops whatever is still in the container. A level loaded on a loader thread
//! can therefore hold its pools and be handed to the game thread.
//!
//! ```compile_fail,E0277
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("level", |level| {
//!     level.scope_concurrent("load", |load| {
//!         load.new_pool::<std::rc::Rc<u32>>(8); // error: `Rc<u32>` cannot be sent
//!     });
//! });
//! ```
use crate::dense::carve::{try_new_dense_pool_in, try_new_dense_pool_pod_in};
use crate::dense::DensePool;
use crate::error::AllocError;
use crate::pool::carve::{try_new_pool_in, try_new_pool_pod_in};
use crate::pool::Pool;
use crate::scope::place::or_fail;
use crate::slots::carve::try_new_slots_in;
use crate::slots::Slots;
use crate::store::carve::try_new_store_in;
use crate::store::Store;

use crate::concurrent::{ConcurrentScope, LocalScope};

impl<'a> LocalScope<'a> {
    /// Carves a [`Pool`] of `capacity` slots, as [`ScopeStack::new_pool`](crate::ScopeStack::new_pool). Items must be `Send`: whichever thread closes the scope drops what remains.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let enemies = local.new_pool::<[f32; 4]>(64);
    ///         assert_eq!(enemies.capacity(), 64);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool<T: Send + 'static>(&self, capacity: usize) -> &'a mut Pool<'a, T> {
        or_fail(self, self.try_new_pool(capacity))
    }

    /// The `try_` form of [`new_pool`](Self::new_pool): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let e = local.try_new_pool::<u64>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_pool<T: Send + 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'a mut Pool<'a, T>, AllocError> {
        // SAFETY: `T: Send + 'static`: the closing thread may drop the items.
        unsafe { try_new_pool_in(self, capacity, Pool::<T>::default_shards(capacity)) }
    }

    /// Carves a [`Pool`] with `shards` shards, as [`ScopeStack::new_pool_with_shards`](crate::ScopeStack::new_pool_with_shards).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let bullets = local.new_pool_with_shards::<u64>(64, 2);
    ///         assert_eq!(bullets.shard_count(), 2);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool_with_shards<T: Send + 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> &'a mut Pool<'a, T> {
        or_fail(self, self.try_new_pool_with_shards(capacity, shards))
    }

    /// The `try_` form of [`new_pool_with_shards`](Self::new_pool_with_shards): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let e = local.try_new_pool_with_shards::<u64>(8, 0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidShardCount);
    ///     });
    /// });
    /// ```
    pub fn try_new_pool_with_shards<T: Send + 'static>(
        &self,
        capacity: usize,
        shards: usize,
    ) -> Result<&'a mut Pool<'a, T>, AllocError> {
        // SAFETY: `T: Send + 'static`: the closing thread may drop the items.
        unsafe { try_new_pool_in(self, capacity, shards) }
    }

    /// Carves a [`DensePool`] of `capacity` slots, as [`ScopeStack::new_dense_pool`](crate::ScopeStack::new_dense_pool).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let shots = local.new_dense_pool::<[f32; 2]>(32);
    ///         assert_eq!(shots.capacity(), 32);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_dense_pool<T: Send + 'static>(&self, capacity: usize) -> &'a mut DensePool<'a, T> {
        or_fail(self, self.try_new_dense_pool(capacity))
    }

    /// The `try_` form of [`new_dense_pool`](Self::new_dense_pool): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let e = local.try_new_dense_pool::<u64>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_dense_pool<T: Send + 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'a mut DensePool<'a, T>, AllocError> {
        // SAFETY: `T: Send + 'static`: the closing thread may drop the items.
        unsafe { try_new_dense_pool_in(self, capacity) }
    }

    /// Carves a [`Store`], as [`ScopeStack::new_store`](crate::ScopeStack::new_store).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let doors = local.new_store::<u32>(16, 32);
    ///         assert_eq!(doors.max_objects(), 16);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_store<T: Clone + Send + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> &'a mut Store<'a, T> {
        or_fail(self, self.try_new_store(max_objects, max_versions))
    }

    /// The `try_` form of [`new_store`](Self::new_store): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let e = local.try_new_store::<u64>(0, 8).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_store<T: Clone + Send + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> Result<&'a mut Store<'a, T>, AllocError> {
        // SAFETY: `T: Send + 'static`: the closing thread may drop the items.
        unsafe { try_new_store_in(self, max_objects, max_versions) }
    }

    /// Carves [`Slots`], as [`ScopeStack::new_slots`](crate::ScopeStack::new_slots).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let frames = local.new_slots("frames", 2, 4096);
    ///         assert_eq!(frames.count(), 2);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_slots(&self, name: &str, count: usize, bytes_each: usize) -> &'a Slots {
        or_fail(self, self.try_new_slots(name, count, bytes_each))
    }

    /// The `try_` form of [`new_slots`](Self::new_slots): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let e = local.try_new_slots("frames", 0, 4096).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_slots(
        &self,
        name: &str,
        count: usize,
        bytes_each: usize,
    ) -> Result<&'a Slots, AllocError> {
        try_new_slots_in(self, name, count, bytes_each)
    }

    /// Carves a [`Pool`] for items that need no drop, with no `'static` bound, as
    /// [`ScopeStack::new_pool_pod`](crate::ScopeStack::new_pool_pod) (no `Send` bound
    /// either: no item is ever dropped).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let names = local.new_pool_pod::<&str>(8);
    ///         assert_eq!(*names.insert(local.alloc_str("wolf")).ok().unwrap(), "wolf");
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool_pod<T>(&self, capacity: usize) -> &'a mut Pool<'a, T> {
        or_fail(self, self.try_new_pool_pod(capacity))
    }

    /// The `try_` form of [`new_pool_pod`](Self::new_pool_pod).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.local().try_new_pool_pod::<u8>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_pool_pod<T>(&self, capacity: usize) -> Result<&'a mut Pool<'a, T>, AllocError> {
        try_new_pool_pod_in(self, capacity)
    }

    /// Carves a [`DensePool`] for items that need no drop, with no `'static` bound, as
    /// [`ScopeStack::new_dense_pool_pod`](crate::ScopeStack::new_dense_pool_pod)(crate::ScopeStack::new_dense_pool_pod).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let local = load.local();
    ///         let tags = local.new_dense_pool_pod::<&str>(8);
    ///         let h = tags.insert(local.alloc_str("boss")).unwrap();
    ///         assert_eq!(tags[h], "boss");
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_dense_pool_pod<T>(&self, capacity: usize) -> &'a mut DensePool<'a, T> {
        or_fail(self, self.try_new_dense_pool_pod(capacity))
    }

    /// The `try_` form of [`new_dense_pool_pod`](Self::new_dense_pool_pod).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.local().try_new_dense_pool_pod::<u8>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_dense_pool_pod<T>(
        &self,
        capacity: usize,
    ) -> Result<&'a mut DensePool<'a, T>, AllocError> {
        try_new_dense_pool_pod_in(self, capacity)
    }
}

impl<'c> ConcurrentScope<'_> {
    /// Carves a [`Pool`] of `capacity` slots, as [`ScopeStack::new_pool`](crate::ScopeStack::new_pool). Items must be `Send`: whichever thread closes the scope drops what remains.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let enemies = load.new_pool::<[f32; 4]>(64);
    ///         assert_eq!(enemies.capacity(), 64);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool<T: Send + 'static>(&'c self, capacity: usize) -> &'c mut Pool<'c, T> {
        self.local().new_pool(capacity)
    }

    /// The `try_` form of [`new_pool`](Self::new_pool): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_pool::<u64>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_pool<T: Send + 'static>(
        &'c self,
        capacity: usize,
    ) -> Result<&'c mut Pool<'c, T>, AllocError> {
        self.local().try_new_pool(capacity)
    }

    /// Carves a [`Pool`] with `shards` shards, as [`ScopeStack::new_pool_with_shards`](crate::ScopeStack::new_pool_with_shards).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let bullets = load.new_pool_with_shards::<u64>(64, 2);
    ///         assert_eq!(bullets.shard_count(), 2);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool_with_shards<T: Send + 'static>(
        &'c self,
        capacity: usize,
        shards: usize,
    ) -> &'c mut Pool<'c, T> {
        self.local().new_pool_with_shards(capacity, shards)
    }

    /// The `try_` form of [`new_pool_with_shards`](Self::new_pool_with_shards): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_pool_with_shards::<u64>(8, 0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidShardCount);
    ///     });
    /// });
    /// ```
    pub fn try_new_pool_with_shards<T: Send + 'static>(
        &'c self,
        capacity: usize,
        shards: usize,
    ) -> Result<&'c mut Pool<'c, T>, AllocError> {
        self.local().try_new_pool_with_shards(capacity, shards)
    }

    /// Carves a [`DensePool`] of `capacity` slots, as [`ScopeStack::new_dense_pool`](crate::ScopeStack::new_dense_pool).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let shots = load.new_dense_pool::<[f32; 2]>(32);
    ///         assert_eq!(shots.capacity(), 32);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_dense_pool<T: Send + 'static>(
        &'c self,
        capacity: usize,
    ) -> &'c mut DensePool<'c, T> {
        self.local().new_dense_pool(capacity)
    }

    /// The `try_` form of [`new_dense_pool`](Self::new_dense_pool): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_dense_pool::<u64>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_dense_pool<T: Send + 'static>(
        &'c self,
        capacity: usize,
    ) -> Result<&'c mut DensePool<'c, T>, AllocError> {
        self.local().try_new_dense_pool(capacity)
    }

    /// Carves a [`Store`], as [`ScopeStack::new_store`](crate::ScopeStack::new_store).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let doors = load.new_store::<u32>(16, 32);
    ///         assert_eq!(doors.max_objects(), 16);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_store<T: Clone + Send + 'static>(
        &'c self,
        max_objects: usize,
        max_versions: usize,
    ) -> &'c mut Store<'c, T> {
        self.local().new_store(max_objects, max_versions)
    }

    /// The `try_` form of [`new_store`](Self::new_store): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_store::<u64>(0, 8).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_store<T: Clone + Send + 'static>(
        &'c self,
        max_objects: usize,
        max_versions: usize,
    ) -> Result<&'c mut Store<'c, T>, AllocError> {
        self.local().try_new_store(max_objects, max_versions)
    }

    /// Carves [`Slots`], as [`ScopeStack::new_slots`](crate::ScopeStack::new_slots).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let frames = load.new_slots("frames", 2, 4096);
    ///         assert_eq!(frames.count(), 2);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_slots(&'c self, name: &str, count: usize, bytes_each: usize) -> &'c Slots {
        self.local().new_slots(name, count, bytes_each)
    }

    /// The `try_` form of [`new_slots`](Self::new_slots): errors instead of panicking (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_slots("frames", 0, 4096).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_slots(
        &'c self,
        name: &str,
        count: usize,
        bytes_each: usize,
    ) -> Result<&'c Slots, AllocError> {
        self.local().try_new_slots(name, count, bytes_each)
    }

    /// Carves a [`Pool`] for items that need no drop, with no `'static` bound
    /// ([`LocalScope::new_pool_pod`] on this thread's view).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let names = load.new_pool_pod::<&str>(8);
    ///         assert_eq!(*names.insert(load.alloc_str("wolf")).ok().unwrap(), "wolf");
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_pool_pod<T>(&'c self, capacity: usize) -> &'c mut Pool<'c, T> {
        self.local().new_pool_pod(capacity)
    }

    /// The `try_` form of [`new_pool_pod`](Self::new_pool_pod).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_pool_pod::<u8>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_pool_pod<T>(
        &'c self,
        capacity: usize,
    ) -> Result<&'c mut Pool<'c, T>, AllocError> {
        self.local().try_new_pool_pod(capacity)
    }

    /// Carves a [`DensePool`] for items that need no drop, with no `'static` bound
    /// ([`LocalScope::new_dense_pool_pod`] on this thread's view).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let tags = load.new_dense_pool_pod::<&str>(8);
    ///         let h = tags.insert(load.alloc_str("boss")).unwrap();
    ///         assert_eq!(tags[h], "boss");
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_dense_pool_pod<T>(&'c self, capacity: usize) -> &'c mut DensePool<'c, T> {
        self.local().new_dense_pool_pod(capacity)
    }

    /// The `try_` form of [`new_dense_pool_pod`](Self::new_dense_pool_pod).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_dense_pool_pod::<u8>(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_dense_pool_pod<T>(
        &'c self,
        capacity: usize,
    ) -> Result<&'c mut DensePool<'c, T>, AllocError> {
        self.local().try_new_dense_pool_pod(capacity)
    }
}
