//! One container's row in a memory map: [`PoolReport`].
//!
//! Invariant: a row holds copies of what the container's report record published
//! (counted when the report was taken), never a reference into the block.
use alloc::string::String;

/// A pool or store carved from a scope, in a [`ScopeReport`](crate::ScopeReport): a [`Pool`](crate::Pool),
/// a [`DensePool`](crate::DensePool) or a [`Store`](crate::store::Store).
///
/// Every kind links a small record into its scope when it is made, naming only memory
/// that the pool reaches through raw pointers, so a report never reads the pool object
/// (the caller may hold `&mut` to it, or `&mut` to one of its objects, while the
/// report is taken). If the scope has no room left for that record, the pool is made
/// all the same and is only missing from reports. The numbers are counted from that
/// memory when the report is taken; see each kind's module docs for how.
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let enemies = level.new_pool::<[f32; 4]>(100);
///     let _a = enemies.insert([0.0; 4]).unwrap();
///     let sparks = level.new_dense_pool::<u64>(16);
///     let s = sparks.insert(1).unwrap();
///     sparks.insert(2).unwrap();
///     sparks.remove(s);
///     let config = level.new_store::<u32>(8, 16);
///     config.create(60).unwrap();
///
///     let map = level.report();
///     let pools = &map.scopes[0].pools; // in the order they were made
///     let kinds: Vec<_> = pools.iter().map(|p| (p.kind, p.type_name.as_str())).collect();
///     assert_eq!(kinds[0], ("Pool", "[f32; 4]"));
///     assert_eq!(kinds[1], ("DensePool", "u64"));
///     // The store's versions live in a pool of its own, made just before it.
///     assert_eq!(kinds[2], ("Pool", "Version<u32>"));
///     assert_eq!(pools[2].owner, Some(3));
///     assert_eq!(kinds[3], ("Store", "u32"));
///     let rows: Vec<_> = pools.iter().map(|p| (p.len, p.capacity, p.high_water_len)).collect();
///     assert_eq!(rows, [(1, 100, 1), (1, 16, 2), (1, 16, 1), (1, 8, 1)]);
///     // The text lists the versions pool under its store.
///     let text = map.to_string();
///     let store = text.find("- Store<u32>").unwrap();
///     assert!(text[store..].contains("  - Pool<Version<u32>>"));
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub struct PoolReport {
    /// `"Pool"` (the concurrent [`Pool`](crate::Pool)), `"DensePool"` or `"Store"`. A
    /// store's versions live in a `Pool` of its own, listed just before it, whose
    /// [`owner`](Self::owner) is the store's row.
    ///
    /// A [`Slots`](crate::Slots) shows as a `"Slots"` row (its name as the type, `len`
    /// slots held of `capacity`), after the pools, owning one `"Slot"` row per slot
    /// (the holder's name as the type, or `free`, `building` or `loaded` when it has
    /// none; `len` bytes used of `capacity`, the slot's high-water mark in bytes);
    /// [`ScopeReport::slots`](crate::ScopeReport::slots) has the same as data, with
    /// each slot's state and contents, which the text and the picture show under the
    /// slot.
    ///
    /// A level read in place (feature `rkyv`, [`Slots::load_archived`](crate::Slots::load_archived)
    /// and its forms) shows as an `"Archive"` row in its slot's contents: the level's
    /// type as the type, `len`, `capacity` and [`bytes`](Self::bytes) its archived
    /// bytes, listed before what the level's build step carved after them.
    pub kind: &'static str,
    /// The element type without module paths, at every depth:
    /// `Version<[f32; 4]>`, not `scope_stack::store::Version<[f32; 4]>`.
    pub type_name: String,
    /// The element type as [`core::any::type_name`] gives it, paths and all.
    pub full_type_name: &'static str,
    /// For a pool that belongs to another row of the same scope (a store's versions
    /// pool), the index of that row in [`ScopeReport::pools`](crate::ScopeReport::pools). Text and picture show
    /// such a pool nested under its owner.
    pub owner: Option<usize>,
    /// Live objects (for a store: objects that hold a version). A pool's figure is one
    /// counter, exact at the moment it was read. A store's is counted entry by entry:
    /// exact when no thread creates or destroys objects meanwhile, and otherwise a
    /// sample that may count an object destroyed during the count together with one
    /// created after it (never more than the object indices the store has used).
    pub len: usize,
    /// Slots (for a store: `max_objects`).
    pub capacity: usize,
    /// The most objects ever live at once. For a store: the most object indices ever
    /// in use at once; a destroyed object keeps its index until the next
    /// [`end_frame`](crate::store::Store::end_frame), so this can exceed the most live
    /// objects when a frame both destroys and creates.
    pub high_water_len: usize,
    /// Whether [`high_water_len`](Self::high_water_len) is exact. A [`Pool`](crate::Pool)
    /// with several shards gives an upper bound (the slots it ever used), which the
    /// text and the picture print as `≤ N`; see
    /// [`Pool::high_water_len`](crate::Pool::high_water_len).
    pub high_water_exact: bool,
    /// Offset of the pool's storage from the start of the block. Slots of a zero-sized
    /// type take no memory; such a pool is shown where its side tables begin.
    pub offset: usize,
    /// Bytes of storage (slots and side tables; for a store, its ID table, without the
    /// versions pool, which has a row of its own; for a heap, its region and the
    /// `Heap` beside it, or its region alone where the `Heap` was placed elsewhere, as
    /// in a thread's chunk of a concurrent scope, whose row counts it).
    pub bytes: usize,
    /// A [`Heap`](crate::Heap)'s own figures (`None` for every other kind). A heap's
    /// row has `kind` `"Heap"`, and its `len`, `capacity` and `high_water_len` are
    /// bytes: in use, in all, and the most ever in use.
    pub heap: Option<super::heap_row::HeapReport>,
}

impl PoolReport {
    /// A heap row's figures, or zeros for a row without them (a map edited by hand).
    pub(super) fn heap_figures(&self) -> super::heap_row::HeapReport {
        self.heap.unwrap_or(super::heap_row::HeapReport {
            live: 0,
            free: 0,
            free_blocks: 0,
            largest_free: 0,
        })
    }
}
