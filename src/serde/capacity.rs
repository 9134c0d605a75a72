//! Containers whose capacity a level file's reader may choose: the trait
//! [`DeserializeInCapacity`] and its seed [`CapacitySeed`], which
//! `#[derive(DeserializeIn)]` passes for a field marked `#[scope(capacity = N)]`.
//!
//! Invariant: a capacity given here is the container's whole capacity, fixed when it
//! is carved; a file with more elements than that is an error, never a second carve.
use core::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer};

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
/// Implemented for [`PoolIn`](super::PoolIn) and [`DensePoolIn`](super::DensePoolIn).
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
}

/// A [`Seed`](super::Seed) with a capacity: deserializes a `T` with
/// [`DeserializeInCapacity::deserialize_in_capacity`]. Pass one wherever serde takes a
/// seed, as `#[scope(capacity = N)]` does for a derived field.
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
    capacity: usize,
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
            capacity,
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
        T::deserialize_in_capacity(self.scope, self.capacity, deserializer)
    }
}
