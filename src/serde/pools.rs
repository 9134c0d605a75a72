//! Pools filled from a level file: [`PoolIn`] and [`DensePoolIn`], a [`Pool`] or a
//! [`DensePool`] carved from the scope being loaded, filled from a sequence, with the
//! handles of its values in the order of the file.
//!
//! How a sequence is read, and what it costs, is in [`PoolIn`]'s docs.
//!
//! Invariants: the pool is carved by the one body that `new_pool` and `new_dense_pool`
//! share (so it registers with the scope's reports as they do), from the scope passed
//! in; a value that needs drop goes into a pool only when its [`DropRule`] allows a
//! finalizer (`Send + 'static`: the pool's finalizer drops it, perhaps on the thread
//! that closes a concurrent scope), checked when the program is built; every element
//! read is owned by exactly one place at a time (the stack while it is read, the stash,
//! the pool), so a failed load drops each exactly once: at once if it never reached the
//! pool, by the pool's finalizer when the scope ends otherwise; the handles are those
//! the inserts returned, in the order of the file.
//!
//! [`DropRule`]: super::DropRule
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};

use serde::de::{Deserializer, Error as _, Expected, SeqAccess, Visitor};
use serde::ser::{Error as _, Serialize, SerializeSeq, Serializer};

use crate::dense::carve::try_new_dense_pool_in;
use crate::dense::{DenseHandle, DensePool};
use crate::error::AllocError;
use crate::pool::carve::try_new_pool_in;
use crate::pool::{Handle, Pool};
use crate::scope::place::{Core as Surface, Handle as _, Place};

use super::capacity::DeserializeInCapacity;
use super::stash::with_stash;
use super::trait_in::{alloc_error, assert_placeable, DeserializeIn, Ghost, Seed};

/// A pool kind that a file can fill.
trait Fill<'s, T>: Sized {
    /// The handle an exclusive insert returns.
    type Key: Copy + 's;

    /// Carves a pool of `capacity` slots through `c`.
    ///
    /// # Safety
    /// As the pool's carve body: a `T` that needs drop is `Send + 'static`.
    unsafe fn carve<C: Surface<'s>>(c: C, capacity: usize) -> Result<&'s mut Self, AllocError>;

    /// Inserts `value`, or gives it back when the pool is full.
    fn put(&mut self, value: T) -> Result<Self::Key, T>;
}

impl<'s, T: 's> Fill<'s, T> for Pool<'s, T> {
    type Key = Handle<T>;
    unsafe fn carve<C: Surface<'s>>(c: C, capacity: usize) -> Result<&'s mut Self, AllocError> {
        // SAFETY: forwarded from the caller.
        unsafe { try_new_pool_in(c, capacity, Pool::<T>::default_shards(capacity)) }
    }
    #[inline]
    fn put(&mut self, value: T) -> Result<Handle<T>, T> {
        self.insert_mut(value)
    }
}

impl<'s, T: 's> Fill<'s, T> for DensePool<'s, T> {
    type Key = DenseHandle<T>;
    unsafe fn carve<C: Surface<'s>>(c: C, capacity: usize) -> Result<&'s mut Self, AllocError> {
        // SAFETY: forwarded from the caller.
        unsafe { try_new_dense_pool_in(c, capacity) }
    }
    #[inline]
    fn put(&mut self, value: T) -> Result<DenseHandle<T>, T> {
        self.insert(value)
    }
}

/// Carves a pool of `capacity` slots for `T`s from `scope`.
fn carve<'s, P, T, K>(scope: P, capacity: usize) -> Result<&'s mut K, AllocError>
where
    P: Place<'s>,
    T: DeserializeIn<'s>,
    K: Fill<'s, T>,
{
    // Fails the build for a `T` that needs drop without a rule that allows it.
    assert_placeable::<T>();
    let handle = scope.handle();
    // SAFETY: a `T` that needs drop has a `DropRule` that allows a finalizer, which only
    // `Send + 'static` types have (see `DropRule`), so the pool's finalizer may drop it
    // on any surface; a `T` that needs none is never dropped by the pool (the contract
    // of `new_pool_pod`).
    unsafe { K::carve(handle.as_core(), capacity) }
}

/// The error of a file with more elements than the capacity.
struct AtMost(usize);

impl Expected for AtMost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at most {} elements (the pool's capacity)", self.0)
    }
}

/// How many slots a pool read from a file gets.
#[derive(Clone, Copy)]
enum Room {
    /// As many as the file has elements.
    File,
    /// Exactly this many (`DeserializeInCapacity::deserialize_in_capacity`).
    Exactly(usize),
    /// As many as the file has elements, and this many more
    /// (`DeserializeInCapacity::deserialize_in_extra`).
    Extra(usize),
}

impl Room {
    /// The capacity for a file of `count` elements: a sum past `usize::MAX` saturates,
    /// which the carve refuses as too many slots.
    fn for_count(self, count: usize) -> usize {
        match self {
            Room::File => count,
            Room::Exactly(capacity) => capacity,
            Room::Extra(extra) => count.saturating_add(extra),
        }
    }
}

/// The visitor of a pool's sequence: its [`Room`].
struct FillSeq<'s, P, T, K> {
    scope: P,
    room: Room,
    _t: Ghost<'s, (T, K)>,
}

/// A filled pool and its handles in file order.
type Filled<'s, K, Key> = (&'s mut K, &'s [Key]);

impl<'de, 's, P, T, K> Visitor<'de> for FillSeq<'s, P, T, K>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s> + 's,
    K: Fill<'s, T> + 's,
{
    type Value = Filled<'s, K, K::Key>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of the pool's values")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let scope = self.scope;
        let hint = seq.size_hint();
        let capacity = match (self.room, hint) {
            (Room::Exactly(capacity), Some(n)) if n > capacity => {
                return Err(A::Error::invalid_length(n, &AtMost(capacity)));
            }
            (Room::Exactly(capacity), _) => capacity,
            (room, Some(n)) => room.for_count(n),
            (room, None) => return fill_staged::<P, T, K, A>(scope, room, seq),
        };
        // Carve first, insert as the elements come.
        let pool: &'s mut K = carve::<P, T, K>(scope, capacity).map_err(alloc_error)?;
        with_stash(scope, hint.unwrap_or(0), |handles| {
            let mut read = 0usize;
            while let Some(value) = seq.next_element_seed(Seed::<P, T>::new(scope))? {
                read += 1;
                match pool.put(value) {
                    Ok(key) => handles.push(key).map_err(alloc_error)?,
                    // The extra value is dropped here; those inserted stay in the pool,
                    // which drops them when the scope ends.
                    Err(_extra) => return Err(A::Error::invalid_length(read, &AtMost(capacity))),
                }
            }
            let handles = handles.take_slice().map_err(alloc_error)?;
            Ok((pool, handles))
        })
    }
}

/// Reads every element first (the capacity is their count, or their count and the
/// extra, as `room` says), then carves the pool and moves them in.
fn fill_staged<'de, 's, P, T, K, A>(
    scope: P,
    room: Room,
    mut seq: A,
) -> Result<Filled<'s, K, K::Key>, A::Error>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s> + 's,
    K: Fill<'s, T> + 's,
    A: SeqAccess<'de>,
{
    with_stash(scope, 0, |values| {
        while let Some(value) = seq.next_element_seed(Seed::<P, T>::new(scope))? {
            values.push(value).map_err(alloc_error)?;
        }
        let n = values.len();
        // `Room::Exactly` never stages (its capacity is known before the first element).
        debug_assert!(!matches!(room, Room::Exactly(_)));
        let capacity = room.for_count(n);
        let pool: &'s mut K = carve::<P, T, K>(scope, capacity).map_err(alloc_error)?;
        let handles = scope
            .try_alloc_uninit_slice::<K::Key>(n)
            .map_err(alloc_error)?;
        let mut filled = 0;
        values.drain(|value| {
            // A fresh pool of `capacity >= n` slots takes `n` values.
            let key = pool
                .put(value)
                .unwrap_or_else(|_| unreachable!("the pool is full"));
            handles[filled].write(key);
            filled += 1;
        });
        debug_assert_eq!(filled, n);
        // SAFETY: the `n` handles were all written above (the stash held `n` values and
        // handed each over), and `MaybeUninit<K::Key>` has the layout of `K::Key`.
        let handles: &'s [K::Key] = unsafe { &*(core::ptr::from_mut(handles) as *const [K::Key]) };
        Ok((pool, handles))
    })
}

/// A [`Pool`] read from a level file: the pool, carved from the scope being loaded, and
/// the handles of its values in the order of the file.
///
/// As a [`DeserializeIn`] field, its capacity is the number of elements in the file;
/// through [`DeserializeInCapacity`] (a [`CapacitySeed`](super::CapacitySeed), or
/// `#[scope(capacity = N)]` on a derived field) it is `N`, so that the game can insert
/// more at run time, and a file with more than `N` elements is an error; with
/// `#[scope(extra = N)]` ([`CapacitySeed::extra`](super::CapacitySeed::extra)) it is
/// the number of elements in the file plus `N`, so each level has room for `N` more
/// whatever its size. A pool cannot be empty: a file with no elements and no capacity
/// given (or `extra = 0`) is an error, as is a capacity of 0 (the text of
/// [`try_new_pool`](crate::ScopeStack::try_new_pool)'s), and so is a capacity past
/// [`MAX_POOL_CAPACITY`](crate::MAX_POOL_CAPACITY) ("too many slots").
///
/// Values that need drop must be `Send + 'static` (the pool's finalizer drops them, as
/// with [`new_pool`](crate::ScopeStack::new_pool)); values that need none may borrow
/// the scope (as with [`new_pool_pod`](crate::ScopeStack::new_pool_pod)) and pay
/// nothing. It derefs to the pool, `&mut` included, for every pool method.
///
/// # How a sequence is read, and what it costs
///
/// By where the capacity comes from:
///
/// - **Given** ([`DeserializeInCapacity`], `#[scope(capacity = N)]`): the pool is carved
///   first and each element goes in as it is read (an exclusive insert, as
///   [`insert_mut`](Pool::insert_mut)); the handles wait in this thread's staging block
///   and are copied into the scope at the end.
/// - **The file's length, said up front** (binary formats such as postcard): as above,
///   with the capacity the format announced (plus the extra, for `extra = N`).
/// - **The file's length, not said** (JSON): the elements wait in the staging block while
///   what they place (strings, slices) goes to the scope; then the pool is carved with
///   room for exactly them (and the extra, for `extra = N`), and they move in, one
///   `memcpy` each. A sequence that does
///   not fit in what is left of the staging block (1 MiB per thread; or any sequence,
///   without `std`) carries on in a buffer at the top of the scope that doubles as it
///   fills: correct, but its old buffers (up to twice the elements' bytes) stay taken
///   until the scope ends.
///
/// The scope then holds the pool (as [`new_pool`](crate::ScopeStack::new_pool) carves
/// it, one finalizer record included, and listed in reports), one handle per element
/// read (8 bytes each), and what the elements placed. No global-heap allocation after
/// the thread's first staged sequence.
///
/// ```
/// use scope_stack::serde::PoolIn;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"[["wolf", 30], ["bear", 80]]"#);
///     let mut enemies: PoolIn<(&str, u32)> = level.deserialize(&mut de).unwrap();
///     assert_eq!(enemies.capacity(), 2); // as many as the file has
///     let [wolf, bear] = *enemies.file_handles() else { unreachable!() };
///     assert_eq!(enemies.get(bear), Some(&("bear", 80)));
///     assert_eq!(enemies.remove(wolf), Some(("wolf", 30)));
///     assert_eq!(serde_json::to_string(&enemies).unwrap(), r#"[["bear",80]]"#);
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// Values that need drop and borrow the scope cannot be pooled (the pool's finalizer
/// could not drop them soundly); the build says so:
///
/// ```compile_fail,E0080
/// use scope_stack::serde::{PoolIn, Serde};
/// use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"[["wolf", "grey"]]"#);
///     // error: needs drop but may not get a finalizer
///     let _p: PoolIn<(&str, Serde<String>)> = level.deserialize(&mut de).unwrap();
/// });
/// ```
pub struct PoolIn<'s, T> {
    pool: &'s mut Pool<'s, T>,
    handles: &'s [Handle<T>],
}

/// A [`DensePool`] read from a level file: the pool, carved from the scope being
/// loaded, and the handles of its values in the order of the file. The same rules and
/// costs as [`PoolIn`] (capacity from the file, given, or the file's and an extra, values that need drop
/// `Send + 'static`, each value put in with [`insert`](DensePool::insert)); it derefs
/// to the dense pool.
///
/// ```
/// use scope_stack::serde::{CapacitySeed, DensePoolIn};
/// use scope_stack::LinearAllocator;
/// use serde::de::DeserializeSeed;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str("[[1, 2], [3, 4]]");
///     let seed = CapacitySeed::<_, DensePoolIn<[f32; 2]>>::new(&**level, 64);
///     let mut shots = seed.deserialize(&mut de).unwrap();
///     assert_eq!((shots.len(), shots.capacity()), (2, 64));
///     assert_eq!(shots[shots.file_handles()[1]], [3.0, 4.0]);
///     shots.insert([5.0, 6.0]).unwrap(); // room for more at run time
///     assert_eq!(serde_json::to_string(&shots).unwrap(), "[[1.0,2.0],[3.0,4.0],[5.0,6.0]]");
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct DensePoolIn<'s, T> {
    pool: &'s mut DensePool<'s, T>,
    handles: &'s [DenseHandle<T>],
}

/// The methods and impls that [`PoolIn`] and [`DensePoolIn`] share.
macro_rules! pool_in {
    ($name:ident, $pool:ident, $key:ident, $kind:literal) => {
        impl<'s, T> $name<'s, T> {
            #[doc = concat!("The ", $kind, ", shared (as through `Deref`).")]
            ///
            /// ```
            #[doc = concat!("use scope_stack::serde::", stringify!($name), ";")]
            /// # use scope_stack::LinearAllocator;
            /// # let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
            /// # memory.scope("level", |level| {
            /// let mut de = serde_json::Deserializer::from_str("[7, 8, 9]");
            #[doc = concat!("let loaded: ", stringify!($name), "<u32> = level.deserialize(&mut de).unwrap();")]
            /// assert_eq!(loaded.pool().len(), 3);
            /// # });
            /// ```
            #[inline]
            pub fn pool(&self) -> &$pool<'s, T> {
                self.pool
            }

            #[doc = concat!("The ", $kind, ", to change (as through `DerefMut`).")]
            ///
            /// ```
            #[doc = concat!("use scope_stack::serde::", stringify!($name), ";")]
            /// # use scope_stack::LinearAllocator;
            /// # let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
            /// # memory.scope("level", |level| {
            /// let mut de = serde_json::Deserializer::from_str("[7, 8, 9]");
            #[doc = concat!("let mut loaded: ", stringify!($name), "<u32> = level.deserialize(&mut de).unwrap();")]
            /// let first = loaded.file_handles()[0];
            /// assert_eq!(loaded.pool_mut().remove(first), Some(7));
            /// # });
            /// ```
            #[inline]
            pub fn pool_mut(&mut self) -> &mut $pool<'s, T> {
                self.pool
            }

            /// The handles of the values read, in the order of the file: the first
            /// element's first. A handle whose value was removed since finds nothing;
            /// values inserted since have handles of their own, not listed here.
            ///
            /// ```
            #[doc = concat!("use scope_stack::serde::", stringify!($name), ";")]
            /// # use scope_stack::LinearAllocator;
            /// # let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
            /// # memory.scope("level", |level| {
            /// let mut de = serde_json::Deserializer::from_str(r#"["oak", "elm", "fir"]"#);
            #[doc = concat!("let trees: ", stringify!($name), "<&str> = level.deserialize(&mut de).unwrap();")]
            /// let names: Vec<&str> = trees.file_handles().iter().map(|&h| *trees.get(h).unwrap()).collect();
            /// assert_eq!(names, ["oak", "elm", "fir"]);
            /// # });
            /// ```
            #[inline]
            pub fn file_handles(&self) -> &'s [$key<T>] {
                self.handles
            }

            #[doc = concat!("The ", $kind, " and the handles in file order, apart.")]
            ///
            /// ```
            #[doc = concat!("use scope_stack::serde::", stringify!($name), ";")]
            /// # use scope_stack::LinearAllocator;
            /// # let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
            /// # memory.scope("level", |level| {
            /// let mut de = serde_json::Deserializer::from_str("[7, 8]");
            #[doc = concat!("let loaded: ", stringify!($name), "<u8> = level.deserialize(&mut de).unwrap();")]
            /// let (pool, handles) = loaded.into_parts();
            /// assert_eq!(pool.get(handles[1]), Some(&8));
            /// # });
            /// ```
            #[inline]
            pub fn into_parts(self) -> (&'s mut $pool<'s, T>, &'s [$key<T>]) {
                (self.pool, self.handles)
            }
        }

        impl<'s, T> Deref for $name<'s, T> {
            type Target = $pool<'s, T>;
            #[inline]
            fn deref(&self) -> &$pool<'s, T> {
                self.pool
            }
        }

        impl<'s, T> DerefMut for $name<'s, T> {
            #[inline]
            fn deref_mut(&mut self) -> &mut $pool<'s, T> {
                self.pool
            }
        }

        impl<T> fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("pool", &self.pool)
                    .field("file_handles", &self.handles.len())
                    .finish()
            }
        }

        impl<'s, T: DeserializeIn<'s>> DeserializeIn<'s> for $name<'s, T> {
            fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
            where
                P: Place<'s> + Copy,
                D: Deserializer<'de>,
            {
                let (pool, handles) =
                    deserializer.deserialize_seq(FillSeq::<P, T, $pool<'s, T>> {
                        scope,
                        room: Room::File,
                        _t: PhantomData,
                    })?;
                Ok($name { pool, handles })
            }
        }

        impl<'s, T: DeserializeIn<'s>> DeserializeInCapacity<'s> for $name<'s, T> {
            fn deserialize_in_capacity<'de, P, D>(
                scope: P,
                capacity: usize,
                deserializer: D,
            ) -> Result<Self, D::Error>
            where
                P: Place<'s> + Copy,
                D: Deserializer<'de>,
            {
                let (pool, handles) =
                    deserializer.deserialize_seq(FillSeq::<P, T, $pool<'s, T>> {
                        scope,
                        room: Room::Exactly(capacity),
                        _t: PhantomData,
                    })?;
                Ok($name { pool, handles })
            }

            fn deserialize_in_extra<'de, P, D>(
                scope: P,
                extra: usize,
                deserializer: D,
            ) -> Result<Self, D::Error>
            where
                P: Place<'s> + Copy,
                D: Deserializer<'de>,
            {
                let (pool, handles) =
                    deserializer.deserialize_seq(FillSeq::<P, T, $pool<'s, T>> {
                        scope,
                        room: Room::Extra(extra),
                        _t: PhantomData,
                    })?;
                Ok($name { pool, handles })
            }
        }
    };
}

pool_in!(PoolIn, Pool, Handle, "pool");
pool_in!(DensePoolIn, DensePool, DenseHandle, "dense pool");

/// The most runs [`Lookup`] keeps: the handles of a pool filled from a file fall into
/// one run per shard the load filled (at most
/// [`DEFAULT_MAX_SHARDS`](crate::pool::DEFAULT_MAX_SHARDS)), those of a dense pool into
/// one.
const MAX_RUNS: usize = 64;

/// Finds a handle among the file's: the handles split into runs of ascending slot
/// index (each shard of a fresh pool hands out its slots in order), each searched by
/// halves; handles in more than [`MAX_RUNS`] runs are searched from end to end.
struct Lookup<'h, K> {
    handles: &'h [K],
    /// Where each run ends; unused when `linear`.
    ends: [usize; MAX_RUNS],
    runs: usize,
    linear: bool,
}

impl<'h, K: Copy + PartialEq> Lookup<'h, K> {
    fn new(handles: &'h [K], slot: impl Fn(K) -> usize) -> Self {
        let mut lookup = Lookup {
            handles,
            ends: [0; MAX_RUNS],
            runs: 0,
            linear: false,
        };
        let mut start = 0;
        while start < handles.len() {
            let mut end = start + 1;
            while end < handles.len() && slot(handles[end - 1]) < slot(handles[end]) {
                end += 1;
            }
            if lookup.runs == MAX_RUNS {
                lookup.linear = true;
                break;
            }
            lookup.ends[lookup.runs] = end;
            lookup.runs += 1;
            start = end;
        }
        lookup
    }

    /// Whether `h` is one of the handles.
    fn contains(&self, h: K, slot: impl Fn(K) -> usize) -> bool {
        if self.linear {
            return self.handles.contains(&h);
        }
        let mut start = 0;
        for &end in &self.ends[..self.runs] {
            let run = &self.handles[start..end];
            // Slots ascend strictly within a run, so at most one handle has `h`'s slot.
            if let Ok(i) = run.binary_search_by_key(&slot(h), |&k| slot(k)) {
                if run[i] == h {
                    return true;
                }
            }
            start = end;
        }
        false
    }
}

/// The values in the order of the file (those still in the pool), then the values
/// pooled since, in the pool's order ([`Pool::values`]), as a sequence; so a loaded
/// level saves back as it was read. Side by side: [`Pool::values`] walks slot order
/// (a freed slot is reused wherever it lies), while a saved `PoolIn` writes file order
/// first, so a file read and written again without changes is the same file. Values a [`PoolBox`](crate::PoolBox) holds are not
/// written, nor are handles.
///
/// Cost: a walk of the pool to count, and one to write the file's values; when values
/// were pooled after the load, a walk of the pool that looks each value up among the
/// file's handles, by halves (O(len × log(file length)) for a pool as the load left it;
/// the file's handles fall into one ascending run per shard the load filled).
/// Serializing fails with an error if another thread pools a value meanwhile (through
/// `&Pool`).
///
/// ```
/// use scope_stack::serde::PoolIn;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"["c", "a", "b"]"#);
///     let letters: PoolIn<&str> = level.deserialize(&mut de).unwrap();
///     assert_eq!(serde_json::to_string(&letters).unwrap(), r#"["c","a","b"]"#);
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
impl<T: Serialize> Serialize for PoolIn<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pool: &Pool<'_, T> = self.pool;
        let len = pool.values().count();
        let mut seq = serializer.serialize_seq(Some(len))?;
        let mut written = 0;
        let write = |seq: &mut S::SerializeSeq, written: &mut usize, v: &T| {
            if *written == len {
                return Err(S::Error::custom(CHANGED));
            }
            *written += 1;
            seq.serialize_element(v)
        };
        for &h in self.handles {
            if let Some(v) = pool.get(h) {
                write(&mut seq, &mut written, v)?;
            }
        }
        if written < len {
            let file = Lookup::new(self.handles, Handle::index);
            for (h, v) in pool.iter() {
                if !file.contains(h, Handle::index) {
                    write(&mut seq, &mut written, v)?;
                }
            }
        }
        if written != len {
            return Err(S::Error::custom(CHANGED));
        }
        seq.end()
    }
}

/// The error text of a pool that changed while it was written.
const CHANGED: &str =
    "the pool changed while it was serialized (another thread inserted or pooled values)";

/// The values in the order of the file (those still in the pool), then the values
/// inserted since, in the dense pool's order ([`DensePool::values`]), as a sequence; so
/// a loaded level saves back as it was read. Handles are not written.
///
/// Cost: O(file length) when nothing was inserted after the load; otherwise each value
/// is also looked up among the file's handles, by halves (O(len × log(file length))).
///
/// ```
/// use scope_stack::serde::DensePoolIn;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str("[1, 2, 3]");
///     let mut n: DensePoolIn<u8> = level.deserialize(&mut de).unwrap();
///     let first = n.file_handles()[0];
///     assert_eq!(n.remove(first), Some(1)); // the dense pool moves its last value into the gap
///     assert_eq!(serde_json::to_string(&*n.pool()).unwrap(), "[3,2]");
///     assert_eq!(serde_json::to_string(&n).unwrap(), "[2,3]"); // file order
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
impl<T: Serialize> Serialize for DensePoolIn<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pool: &DensePool<'_, T> = self.pool;
        let mut seq = serializer.serialize_seq(Some(pool.len()))?;
        let mut written = 0;
        for &h in self.handles {
            if let Some(v) = pool.get(h) {
                seq.serialize_element(v)?;
                written += 1;
            }
        }
        if written < pool.len() {
            let file = Lookup::new(self.handles, DenseHandle::index);
            for (h, v) in pool.iter() {
                if !file.contains(h, DenseHandle::index) {
                    seq.serialize_element(v)?;
                }
            }
        }
        seq.end()
    }
}
