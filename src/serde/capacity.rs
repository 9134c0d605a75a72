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
/// error (`invalid_length`).
pub trait DeserializeInCapacity<'s>: DeserializeIn<'s> {
    /// Deserializes one `Self` with room for `capacity` elements, placing it and what
    /// its elements reference in `scope`.
    ///
    /// # Errors
    /// As [`DeserializeIn::deserialize_in`], and `invalid_length` when the file holds
    /// more than `capacity` elements.
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
/// [`DeserializeInCapacity::deserialize_in_capacity`].
pub struct CapacitySeed<'s, P, T> {
    scope: P,
    capacity: usize,
    _t: PhantomData<fn() -> (&'s (), T)>,
}

impl<'s, P: Place<'s> + Copy, T> CapacitySeed<'s, P, T> {
    /// A seed that deserializes a `T` with room for `capacity` elements into `scope`.
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
