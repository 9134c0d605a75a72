//! Containers whose capacity a level file's reader may choose: the trait
//! [`DeserializeInCapacity`] and its seed [`CapacitySeed`], which
//! `#[derive(DeserializeIn)]` passes for a field marked `#[scope(capacity = N)]` (an
//! exact capacity) or `#[scope(extra = N)]` (the file's count and `N` more).
//!
//! Invariant: a capacity given here is the container's whole capacity, fixed when it
//! is carved; a file with more elements than that is an error, never a second carve.
//! A capacity relative to the file is worked out once the file's count is known (the
//! format's length, or the staged elements counted) and before the one carve; a sum
//! past `usize::MAX` saturates, so it is the carve's "too many slots" error, never an
//! overflow.
use core::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer, Error as _};

use crate::scope::place::Place;

use super::trait_in::DeserializeIn;

/// A container (a pool, a dense pool) that can be deserialized with a capacity chosen
/// by the reader instead of the number of elements in the file.
///
/// `T::deserialize_in` (from [`DeserializeIn`]) gives the container as many slots as
/// the file has elements; `T::deserialize_in_capacity(scope, n, de)` gives it `n`, so
/// that the game can insert more at run time. A file with more than `n` elements is an
/// error (`invalid_length`), and so is a capacity the container cannot have (0, or more
/// than its slot index can address: the text of its `try_new_` carve).
///
/// One constant `n` for every level makes the smallest level pay for the largest.
/// `T::deserialize_in_extra(scope, extra, de)` (`#[scope(extra = N)]` on a derived
/// field, [`CapacitySeed::extra`]) gives the container the file's count plus `extra`
/// instead: a level of 3 enemies read with `extra = 8` gets 11 slots, one of 50 gets
/// 58. The count is the length the format gives up front (postcard, bincode) or, where
/// it gives none (JSON), the elements counted while they wait in the staging block; a
/// sum the container cannot have (more slots than its slot index can address) is the
/// text of its `try_new_` carve, and a file of no elements with `extra = 0` asks for
/// capacity 0, which is that carve's error for capacity 0.
///
/// Implemented for [`PoolIn`](super::PoolIn) and [`DensePoolIn`](super::DensePoolIn),
/// both rules. The heap collections ([`DeserializeInHeap`](super::DeserializeInHeap))
/// take their capacity in bytes of heap, which no element count gives, so they have
/// only the exact rule: `deserialize_in_extra` is the default's error for them.
/// A hand-written [`DeserializeIn`] passes a [`CapacitySeed`] where
/// `#[scope(capacity = N)]` would:
///
/// ```
/// use scope_stack::serde::{CapacitySeed, DeserializeIn, PoolIn, Seed};
/// use scope_stack::{LinearAllocator, Place};
/// use serde::de::{Deserializer, Error, SeqAccess, Visitor};
///
/// /// `["forest", [hp, ...]]`, with room for 64 enemies.
/// struct Level<'s> { name: &'s str, enemies: PoolIn<'s, u32> }
///
/// impl<'s> DeserializeIn<'s> for Level<'s> {
///     fn deserialize_in<'de, P, D>(scope: P, de: D) -> Result<Self, D::Error>
///     where
///         P: Place<'s> + Copy,
///         D: Deserializer<'de>,
///     {
///         struct V<'s, P>(P, core::marker::PhantomData<&'s ()>);
///         impl<'de, 's, P: Place<'s> + Copy> Visitor<'de> for V<'s, P> {
///             type Value = Level<'s>;
///             fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
///                 f.write_str("a level")
///             }
///             fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Level<'s>, A::Error> {
///                 let name = seq.next_element_seed(Seed::new(self.0))?
///                     .ok_or_else(|| A::Error::invalid_length(0, &self))?;
///                 let enemies = seq.next_element_seed(CapacitySeed::new(self.0, 64))?
///                     .ok_or_else(|| A::Error::invalid_length(1, &self))?;
///                 Ok(Level { name, enemies })
///             }
///         }
///         de.deserialize_tuple(2, V(scope, core::marker::PhantomData))
///     }
/// }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"["forest", [30, 80]]"#);
///     let mut forest: Level = level.deserialize(&mut de).unwrap();
///     assert_eq!((forest.name, forest.enemies.len(), forest.enemies.capacity()), ("forest", 2, 64));
///     forest.enemies.insert_mut(5).unwrap(); // room for 62 more
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub trait DeserializeInCapacity<'s>: DeserializeIn<'s> {
    /// Deserializes one `Self` with room for `capacity` elements, placing it and what
    /// its elements reference in `scope`.
    ///
    /// # Errors
    /// As [`DeserializeIn::deserialize_in`], `invalid_length` when the file holds more
    /// than `capacity` elements, and the carve's error for a capacity the container
    /// cannot have.
    ///
    /// ```
    /// use scope_stack::serde::{DeserializeInCapacity, PoolIn};
    /// use scope_stack::LinearAllocator;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("level", |level| {
    ///     let mut de = serde_json::Deserializer::from_str("[1, 2, 3]");
    ///     let pool = PoolIn::<u8>::deserialize_in_capacity(&**level, 8, &mut de).unwrap();
    ///     assert_eq!((pool.len(), pool.capacity()), (3, 8));
    ///     let mut de = serde_json::Deserializer::from_str("[1, 2, 3]");
    ///     let e = PoolIn::<u8>::deserialize_in_capacity(&**level, 2, &mut de).unwrap_err();
    ///     assert!(e.to_string().starts_with("invalid length 3, expected at most 2 elements"));
    ///     let mut de = serde_json::Deserializer::from_str("[1]");
    ///     let e = PoolIn::<u8>::deserialize_in_capacity(&**level, 0, &mut de).unwrap_err();
    ///     assert!(e.to_string().contains("a pool needs at least one slot (capacity 0)"));
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    fn deserialize_in_capacity<'de, P, D>(
        scope: P,
        capacity: usize,
        deserializer: D,
    ) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>;

    /// Deserializes one `Self` with room for the file's elements and `extra` more,
    /// placing it and what its elements reference in `scope`.
    ///
    /// The default is for a type with no count to add to (a heap collection, sized in
    /// bytes): it reads nothing and returns an error (`custom`) that names the type and
    /// asks for an exact capacity. [`PoolIn`](super::PoolIn) and
    /// [`DensePoolIn`](super::DensePoolIn) carve `count + extra` slots.
    ///
    /// # Errors
    /// As [`DeserializeIn::deserialize_in`], and the carve's error for a sum the
    /// container cannot have: capacity 0 (no elements and `extra = 0`), or more slots
    /// than it can address (a sum past `usize::MAX` counts as more).
    ///
    /// ```
    /// use scope_stack::serde::{DeserializeInCapacity, PoolIn};
    /// use scope_stack::{LinearAllocator, MAX_POOL_CAPACITY};
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("level", |level| {
    ///     // JSON gives no length: the three elements are counted, then 3 + 8 slots carved.
    ///     let mut de = serde_json::Deserializer::from_str("[1, 2, 3]");
    ///     let mut pool = PoolIn::<u8>::deserialize_in_extra(&**level, 8, &mut de).unwrap();
    ///     assert_eq!((pool.len(), pool.capacity()), (3, 11));
    ///     for i in 0..8 {
    ///         pool.insert_mut(i).unwrap();
    ///     }
    ///     assert_eq!(pool.insert_mut(9), Err(9)); // full at 11
    ///     // postcard gives the length up front: carved at once with 2 + 8 slots.
    ///     let bytes = postcard::to_allocvec(&vec![4u8, 5]).unwrap();
    ///     let mut de = postcard::Deserializer::from_bytes(&bytes);
    ///     let pool = PoolIn::<u8>::deserialize_in_extra(&**level, 8, &mut de).unwrap();
    ///     assert_eq!((pool.len(), pool.capacity()), (2, 10));
    ///     // No elements and nothing extra: capacity 0, the carve's error.
    ///     let mut de = serde_json::Deserializer::from_str("[]");
    ///     let e = PoolIn::<u8>::deserialize_in_extra(&**level, 0, &mut de).unwrap_err();
    ///     assert!(e.to_string().contains("a pool needs at least one slot (capacity 0)"));
    ///     // More than a pool can address: the carve's error, not a panic.
    ///     let mut de = serde_json::Deserializer::from_str("[1]");
    ///     let e = PoolIn::<u8>::deserialize_in_extra(&**level, MAX_POOL_CAPACITY, &mut de)
    ///         .unwrap_err();
    ///     assert!(e.to_string().contains("too many slots"), "{e}");
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    fn deserialize_in_extra<'de, P, D>(
        scope: P,
        extra: usize,
        deserializer: D,
    ) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        let _ = (scope, deserializer);
        Err(D::Error::custom(format_args!(
            "{} takes an exact capacity (`#[scope(capacity = N)]`, `CapacitySeed::new`), \
             not one relative to the file's count (`extra = {extra}`)",
            core::any::type_name::<Self>()
        )))
    }
}

/// How a [`CapacitySeed`] sizes its container.
#[derive(Clone, Copy, Debug)]
enum Rule {
    /// Exactly this many elements.
    Exactly(usize),
    /// The file's count and this many more.
    Extra(usize),
}

/// A [`Seed`](super::Seed) with a capacity: deserializes a `T` with
/// [`DeserializeInCapacity::deserialize_in_capacity`] ([`new`](Self::new): exactly `n`)
/// or [`DeserializeInCapacity::deserialize_in_extra`] ([`extra`](Self::extra): the
/// file's count and `n` more). Pass one wherever serde takes a seed, as
/// `#[scope(capacity = N)]` and `#[scope(extra = N)]` do for a derived field.
///
/// ```
/// use scope_stack::serde::{CapacitySeed, DensePoolIn};
/// use scope_stack::LinearAllocator;
/// use serde::de::DeserializeSeed;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"["swish", "boom"]"#);
///     let sounds = CapacitySeed::<_, DensePoolIn<&str>>::new(&**level, 16)
///         .deserialize(&mut de)
///         .unwrap();
///     assert_eq!(sounds.as_slice(), ["swish", "boom"]);
///     assert_eq!(sounds.capacity(), 16);
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct CapacitySeed<'s, P, T> {
    scope: P,
    rule: Rule,
    _t: PhantomData<fn() -> (&'s (), T)>,
}

impl<'s, P: Place<'s> + Copy, T> CapacitySeed<'s, P, T> {
    /// A seed that deserializes a `T` with room for `capacity` elements into `scope`.
    ///
    /// ```
    /// # use scope_stack::{serde::{CapacitySeed, PoolIn}, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let _seed: CapacitySeed<_, PoolIn<u32>> = CapacitySeed::new(&**level, 4096);
    /// # });
    /// ```
    #[inline]
    pub fn new(scope: P, capacity: usize) -> Self {
        CapacitySeed {
            scope,
            rule: Rule::Exactly(capacity),
            _t: PhantomData,
        }
    }

    /// A seed that deserializes a `T` with room for the file's elements and `extra`
    /// more into `scope` (see [`DeserializeInCapacity::deserialize_in_extra`]), as
    /// `#[scope(extra = N)]` does for a derived field: each level pays for its own
    /// count, not the largest level's.
    ///
    /// ```
    /// use scope_stack::serde::{CapacitySeed, DensePoolIn};
    /// use scope_stack::LinearAllocator;
    /// use serde::de::DeserializeSeed;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("level", |level| {
    ///     let seed = CapacitySeed::<_, DensePoolIn<&str>>::extra(&**level, 16);
    ///     let mut de = serde_json::Deserializer::from_str(r#"["swish", "boom"]"#);
    ///     assert_eq!(seed.deserialize(&mut de).unwrap().capacity(), 2 + 16);
    ///     let mut de = serde_json::Deserializer::from_str(r#"["a", "b", "c", "d"]"#);
    ///     assert_eq!(seed.deserialize(&mut de).unwrap().capacity(), 4 + 16);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    #[inline]
    pub fn extra(scope: P, extra: usize) -> Self {
        CapacitySeed {
            scope,
            rule: Rule::Extra(extra),
            _t: PhantomData,
        }
    }
}

impl<P: Copy, T> Clone for CapacitySeed<'_, P, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Copy, T> Copy for CapacitySeed<'_, P, T> {}

impl<'de, 's, P, T> DeserializeSeed<'de> for CapacitySeed<'s, P, T>
where
    P: Place<'s> + Copy,
    T: DeserializeInCapacity<'s>,
{
    type Value = T;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        match self.rule {
            Rule::Exactly(capacity) => {
                T::deserialize_in_capacity(self.scope, capacity, deserializer)
            }
            Rule::Extra(extra) => T::deserialize_in_extra(self.scope, extra, deserializer),
        }
    }
}
