//! Collections that live in a [`Heap`], filled from a level file: the trait
//! [`DeserializeInHeap`] and its seed [`HeapSeed`], for
//! `allocator_api2::vec::Vec<T, &'s Heap>` and (feature `hashbrown`)
//! `hashbrown::HashMap<K, V, S, &'s Heap>`.
//!
//! The heap comes first: either the caller carves it and passes it in a [`HeapSeed`]
//! (several collections may share it), or the collection's
//! [`DeserializeInCapacity`](super::DeserializeInCapacity) carves one of the given size from the scope being loaded,
//! which is what `#[scope(capacity = BYTES)]` on a derived field does. Then the
//! collection is made empty in the heap and fills from the file, one element at a
//! time; what the elements themselves place (strings, slices) goes to the scope, as
//! for any [`DeserializeIn`](super::DeserializeIn) value.
//!
//! A heap collection has no size of its own to read from a file, so reading one
//! through plain [`DeserializeIn`](super::DeserializeIn) (a [`Seed`](super::Seed), a derived field without
//! `#[scope(capacity = ..)]`) is refused when the program is built (E0080), as placing
//! a value that may not get a finalizer is.
//!
//! Invariants: the collection owns every element it holds, and an element read is
//! owned by the stack until it is in the collection, so a failed load drops each
//! element read exactly once (the collection's own drop, on the error path) and gives
//! its blocks back to the heap; the heap's room is reserved before each insert
//! (`try_reserve`), so a full heap is the deserializer's error, never an abort. The
//! collection is returned by value and is never placed behind a finalizer (a
//! `Vec<T, &'s Heap>` borrows the scope, so its `DropRule` is `none`): it drops when
//! its owner drops it, and a collection never dropped leaves its blocks to the heap,
//! which goes with its scope (rule 12).
use core::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer};

use crate::heap::Heap;
use crate::scope::place::Place;

use super::trait_in::Ghost;

/// A collection that a level file can fill in a [`Heap`] carved beforehand.
///
/// `T::deserialize_in_heap(scope, heap, de)` makes an empty `T` in `heap` and fills
/// it from `de`; what its elements reference (`&'s str`, slices) is placed in `scope`.
/// Implemented for `allocator_api2::vec::Vec<T, &'s Heap>` and, with the feature
/// `hashbrown`, `hashbrown::HashMap<K, V, S, &'s Heap>` (keys and values read with
/// [`DeserializeIn`](super::DeserializeIn); a key seen twice keeps its last value, as serde's maps do).
///
/// A heap collection is also [`DeserializeInCapacity`](super::DeserializeInCapacity): the capacity is the bytes of a
/// heap carved for it alone from the scope, which is what `#[scope(capacity = BYTES)]`
/// on a derived field asks for (see the [derive's docs](crate::serde::DeserializeIn)
/// for one in a slot's level):
///
/// ```
/// use allocator_api2::vec::Vec;
/// use scope_stack::serde::CapacitySeed;
/// use scope_stack::{Heap, LinearAllocator};
/// use serde::de::DeserializeSeed;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str("[[1, 2], [3, 4]]");
///     let mut spawns = CapacitySeed::<_, Vec<[f32; 2], &Heap>>::new(&**level, 4096)
///         .deserialize(&mut de)
///         .unwrap();
///     spawns.push([5.0, 6.0]); // the game adds and removes spawns in the heap
///     spawns.remove(0);
///     assert_eq!(spawns[..], [[3.0, 4.0], [5.0, 6.0]]);
///     assert_eq!(spawns.allocator().capacity(), 4096);
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub trait DeserializeInHeap<'s>: Sized {
    /// Makes an empty `Self` in `heap` and fills it from `deserializer`, placing what
    /// its elements reference in `scope`.
    ///
    /// # Errors
    /// The deserializer's error: bad input, a type mismatch, a scope without room for
    /// what an element places, or a heap without room for the next element (`custom`,
    /// naming the heap's bytes). The elements read so far are dropped once and their
    /// blocks go back to the heap.
    ///
    /// ```
    /// use allocator_api2::vec::Vec;
    /// use scope_stack::serde::DeserializeInHeap;
    /// use scope_stack::{Heap, LinearAllocator};
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
    /// memory.scope("level", |level| {
    ///     let heap = level.new_heap(1024);
    ///     let mut de = serde_json::Deserializer::from_str(r#"["oak", "elm"]"#);
    ///     let trees = Vec::<&str, &Heap>::deserialize_in_heap(&**level, heap, &mut de).unwrap();
    ///     assert_eq!(trees, ["oak", "elm"]);
    ///     assert_eq!(heap.live(), 1); // the vector's buffer; the names are in the scope
    ///     let many = format!("{:?}", [0u64; 200]);
    ///     let mut de = serde_json::Deserializer::from_str(&many);
    ///     let e = Vec::<u64, &Heap>::deserialize_in_heap(&**level, heap, &mut de).unwrap_err();
    ///     assert!(e.to_string().starts_with("the heap (1024 bytes) has no room"), "{e}");
    ///     assert_eq!(heap.live(), 1); // nothing of the failed load is left in the heap
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    fn deserialize_in_heap<'de, P, D>(
        scope: P,
        heap: &'s Heap,
        deserializer: D,
    ) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>;
}

/// A [`Seed`](super::Seed) with a heap: deserializes a `T` with
/// [`DeserializeInHeap::deserialize_in_heap`] into `heap`, placing what its elements
/// reference in `scope`. Pass one wherever serde takes a seed, so that collections of
/// one level share a heap:
///
/// ```
/// use allocator_api2::vec::Vec;
/// use scope_stack::serde::{HeapSeed, Seed};
/// use scope_stack::{Heap, LinearAllocator, Place};
/// use serde::de::{DeserializeSeed, Deserializer, Error, SeqAccess, Visitor};
///
/// /// `[[enemy, ...], [pickup, ...]]`: two lists that grow and shrink in one heap.
/// struct Lists<'s> { enemies: Vec<u32, &'s Heap>, pickups: Vec<&'s str, &'s Heap> }
///
/// struct V<'s, P> { scope: P, heap: &'s Heap }
/// impl<'de, 's, P: Place<'s> + Copy> Visitor<'de> for V<'s, P> {
///     type Value = Lists<'s>;
///     fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
///         f.write_str("two lists")
///     }
///     fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lists<'s>, A::Error> {
///         let enemies = seq.next_element_seed(HeapSeed::new(self.scope, self.heap))?
///             .ok_or_else(|| A::Error::invalid_length(0, &self))?;
///         let pickups = seq.next_element_seed(HeapSeed::new(self.scope, self.heap))?
///             .ok_or_else(|| A::Error::invalid_length(1, &self))?;
///         Ok(Lists { enemies, pickups })
///     }
/// }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let heap = level.new_heap(4096); // first the heap, then the file fills it
///     let mut de = serde_json::Deserializer::from_str(r#"[[30, 80], ["key", "gem"]]"#);
///     let mut lists = (&mut de).deserialize_tuple(2, V { scope: &**level, heap }).unwrap();
///     lists.enemies.retain(|&hp| hp > 50);
///     assert_eq!((&lists.enemies[..], &lists.pickups[..]), (&[80][..], &["key", "gem"][..]));
///     assert_eq!(heap.live(), 2);
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct HeapSeed<'s, P, T> {
    scope: P,
    heap: &'s Heap,
    _t: Ghost<'s, T>,
}

impl<'s, P: Place<'s> + Copy, T> HeapSeed<'s, P, T> {
    /// A seed that deserializes a `T` into `heap`, and what its elements reference
    /// into `scope`.
    ///
    /// ```
    /// # use scope_stack::{serde::HeapSeed, Heap, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let _seed: HeapSeed<_, allocator_api2::vec::Vec<u32, &Heap>> =
    ///     HeapSeed::new(&**level, heap);
    /// # });
    /// ```
    #[inline]
    pub fn new(scope: P, heap: &'s Heap) -> Self {
        HeapSeed {
            scope,
            heap,
            _t: PhantomData,
        }
    }
}

impl<P: Copy, T> Clone for HeapSeed<'_, P, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Copy, T> Copy for HeapSeed<'_, P, T> {}

impl<'de, 's, P, T> DeserializeSeed<'de> for HeapSeed<'s, P, T>
where
    P: Place<'s> + Copy,
    T: DeserializeInHeap<'s>,
{
    type Value = T;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_in_heap(self.scope, self.heap, deserializer)
    }
}

/// The error of a heap without room for the next element.
#[cold]
#[inline(never)]
#[cfg(any(feature = "alloc", feature = "hashbrown"))]
fn heap_full<E: serde::de::Error>(heap: &Heap, read: usize) -> E {
    E::custom(format_args!(
        "the heap ({} bytes) has no room for the collection's next element ({read} read; \
         {} bytes in use); the elements read so far are dropped",
        heap.capacity(),
        heap.used()
    ))
}

/// Refuses, when the program is built, to read a heap collection with no heap size.
#[cfg(any(feature = "alloc", feature = "hashbrown"))]
struct NoHeapSize<T>(PhantomData<T>);

#[cfg(any(feature = "alloc", feature = "hashbrown"))]
impl<T> NoHeapSize<T> {
    const REFUSE: () = panic!(
        "DeserializeIn: a heap collection needs its heap's size; read it with \
         #[scope(capacity = BYTES)], a CapacitySeed, or into a heap of yours with HeapSeed"
    );
}

/// Carves a heap of `bytes` from `scope` for one collection, then fills it.
#[cfg(any(feature = "alloc", feature = "hashbrown"))]
fn in_new_heap<'de, 's, P, D, T>(scope: P, bytes: usize, deserializer: D) -> Result<T, D::Error>
where
    P: Place<'s> + Copy,
    D: Deserializer<'de>,
    T: DeserializeInHeap<'s>,
{
    use super::trait_in::alloc_error;
    use crate::heap::carve::try_new_heap_in;
    use crate::scope::place::Handle as _;

    let heap = try_new_heap_in(scope.handle().as_core(), bytes).map_err(alloc_error)?;
    T::deserialize_in_heap(scope, heap, deserializer)
}

/// allocator-api2's `Vec` in a heap (it needs `alloc`).
#[cfg(feature = "alloc")]
mod vec {
    use core::fmt;
    use core::marker::PhantomData;

    use allocator_api2::vec::Vec as HeapVec;
    use serde::de::{Deserializer, SeqAccess, Visitor};

    use crate::heap::Heap;
    use crate::scope::place::Place;
    use crate::serde::capacity::DeserializeInCapacity;
    use crate::serde::trait_in::{DeserializeIn, Ghost, Seed};

    use crate::serde::heap::{heap_full, in_new_heap, DeserializeInHeap, NoHeapSize};

    /// Reads a sequence into a `Vec` in a heap.
    struct VecVisitor<'s, P, T> {
        scope: P,
        heap: &'s Heap,
        _t: Ghost<'s, T>,
    }

    impl<'de, 's, P, T> Visitor<'de> for VecVisitor<'s, P, T>
    where
        P: Place<'s> + Copy,
        T: DeserializeIn<'s>,
    {
        type Value = HeapVec<T, &'s Heap>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut v = HeapVec::new_in(self.heap);
            // A length the format gives is reserved at once (a wrong one only costs room:
            // `try_reserve` fails for more than the heap has, which the file then is).
            if let Some(n) = seq.size_hint() {
                v.try_reserve_exact(n)
                    .map_err(|_| heap_full(self.heap, 0))?;
            }
            while let Some(value) = seq.next_element_seed(Seed::<P, T>::new(self.scope))? {
                if v.try_reserve(1).is_err() {
                    return Err(heap_full(self.heap, v.len() + 1));
                }
                v.push(value);
            }
            Ok(v)
        }
    }

    impl<'s, T: DeserializeIn<'s>> DeserializeInHeap<'s> for HeapVec<T, &'s Heap> {
        fn deserialize_in_heap<'de, P, D>(
            scope: P,
            heap: &'s Heap,
            deserializer: D,
        ) -> Result<Self, D::Error>
        where
            P: Place<'s> + Copy,
            D: Deserializer<'de>,
        {
            deserializer.deserialize_seq(VecVisitor {
                scope,
                heap,
                _t: PhantomData,
            })
        }
    }

    /// Refused when the program is built: see [`DeserializeInHeap`].
    impl<'s, T: DeserializeIn<'s>> DeserializeIn<'s> for HeapVec<T, &'s Heap> {
        fn deserialize_in<'de, P, D>(_: P, _: D) -> Result<Self, D::Error>
        where
            P: Place<'s> + Copy,
            D: Deserializer<'de>,
        {
            #[allow(clippy::let_unit_value)]
            let () = NoHeapSize::<Self>::REFUSE;
            unreachable!()
        }
    }

    /// The capacity is the bytes of a heap carved for this vector alone.
    impl<'s, T: DeserializeIn<'s>> DeserializeInCapacity<'s> for HeapVec<T, &'s Heap> {
        fn deserialize_in_capacity<'de, P, D>(
            scope: P,
            capacity: usize,
            deserializer: D,
        ) -> Result<Self, D::Error>
        where
            P: Place<'s> + Copy,
            D: Deserializer<'de>,
        {
            in_new_heap(scope, capacity, deserializer)
        }
    }
}

#[cfg(feature = "hashbrown")]
mod map {
    use core::fmt;
    use core::hash::{BuildHasher, Hash};
    use core::marker::PhantomData;

    use hashbrown::HashMap;
    use serde::de::{Deserializer, MapAccess, Visitor};

    use crate::heap::Heap;
    use crate::scope::place::Place;
    use crate::serde::capacity::DeserializeInCapacity;
    use crate::serde::trait_in::{DeserializeIn, Ghost, Seed};

    use crate::serde::heap::{heap_full, in_new_heap, DeserializeInHeap, NoHeapSize};

    /// Reads a map into a `HashMap` in a heap.
    struct MapVisitor<'s, P, K, V, S> {
        scope: P,
        heap: &'s Heap,
        _t: Ghost<'s, (K, V, S)>,
    }

    impl<'de, 's, P, K, V, S> Visitor<'de> for MapVisitor<'s, P, K, V, S>
    where
        P: Place<'s> + Copy,
        K: DeserializeIn<'s> + Eq + Hash,
        V: DeserializeIn<'s>,
        S: BuildHasher + Default,
    {
        type Value = HashMap<K, V, S, &'s Heap>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
            let mut map = HashMap::with_hasher_in(S::default(), self.heap);
            if let Some(n) = access.size_hint() {
                map.try_reserve(n).map_err(|_| heap_full(self.heap, 0))?;
            }
            while let Some((k, v)) = access
                .next_entry_seed(Seed::<P, K>::new(self.scope), Seed::<P, V>::new(self.scope))?
            {
                // Room first, so the insert never allocates (and never aborts).
                if map.try_reserve(1).is_err() {
                    return Err(heap_full(self.heap, map.len() + 1));
                }
                map.insert(k, v);
            }
            Ok(map)
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "hashbrown")))]
    impl<'s, K, V, S> DeserializeInHeap<'s> for HashMap<K, V, S, &'s Heap>
    where
        K: DeserializeIn<'s> + Eq + Hash,
        V: DeserializeIn<'s>,
        S: BuildHasher + Default,
    {
        fn deserialize_in_heap<'de, P, D>(
            scope: P,
            heap: &'s Heap,
            deserializer: D,
        ) -> Result<Self, D::Error>
        where
            P: Place<'s> + Copy,
            D: Deserializer<'de>,
        {
            deserializer.deserialize_map(MapVisitor {
                scope,
                heap,
                _t: PhantomData,
            })
        }
    }

    /// Refused when the program is built: see [`DeserializeInHeap`].
    #[cfg_attr(docsrs, doc(cfg(feature = "hashbrown")))]
    impl<'s, K, V, S> DeserializeIn<'s> for HashMap<K, V, S, &'s Heap>
    where
        K: DeserializeIn<'s> + Eq + Hash,
        V: DeserializeIn<'s>,
        S: BuildHasher + Default,
    {
        fn deserialize_in<'de, P, D>(_: P, _: D) -> Result<Self, D::Error>
        where
            P: Place<'s> + Copy,
            D: Deserializer<'de>,
        {
            #[allow(clippy::let_unit_value)]
            let () = NoHeapSize::<Self>::REFUSE;
            unreachable!()
        }
    }

    /// The capacity is the bytes of a heap carved for this map alone.
    #[cfg_attr(docsrs, doc(cfg(feature = "hashbrown")))]
    impl<'s, K, V, S> DeserializeInCapacity<'s> for HashMap<K, V, S, &'s Heap>
    where
        K: DeserializeIn<'s> + Eq + Hash,
        V: DeserializeIn<'s>,
        S: BuildHasher + Default,
    {
        fn deserialize_in_capacity<'de, P, D>(
            scope: P,
            capacity: usize,
            deserializer: D,
        ) -> Result<Self, D::Error>
        where
            P: Place<'s> + Copy,
            D: Deserializer<'de>,
        {
            in_new_heap(scope, capacity, deserializer)
        }
    }
}
