//! What `#[derive(DeserializeIn)]`'s code names (hidden): serde itself, so a user's
//! crate needs no `serde` dependency of its own, the value of a field missing from
//! the file, the capacity seed, and the buffered content of tagged and untagged enums
//! (`content.rs`).
//!
//! Invariant: nothing here is public API; the derive of the same version is its only
//! user.
use core::marker::PhantomData as Marker;

use serde::de::{DeserializeOwned, Deserializer, Error, Visitor};

use crate::scope::place::Place;

use super::trait_in::DeserializeIn;

pub use super::capacity::{CapacitySeed, DeserializeInCapacity};
pub use super::content::{
    adjacent_map, adjacent_seq, buffered, replay, tagged, Content, ContentRef, Mismatch, UnitOnly,
};
pub use super::trait_in::Seed;
pub use crate::scope::place::Place as PlaceTrait;
pub use core::fmt;
pub use core::marker::PhantomData;
pub use serde::de;

pub use super::trait_in::DeserializeIn as DeserializeInTrait;

/// A deserializer for a field the file left out: `None` for an `Option`, a
/// missing-field error for anything else (as serde's own derive does).
struct Missing<E> {
    name: &'static str,
    _e: Marker<fn() -> E>,
}

impl<'de, E: Error> Deserializer<'de> for Missing<E> {
    type Error = E;
    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.name))
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// The value of a field missing from the file.
pub fn missing_field<'s, P, T, E>(scope: P, name: &'static str) -> Result<T, E>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    E: Error,
{
    T::deserialize_in(scope, Missing { name, _e: Marker })
}

/// The value of a `#[scope(capacity = N)]` field missing from the file.
pub fn missing_field_capacity<'s, P, T, E>(
    scope: P,
    capacity: usize,
    name: &'static str,
) -> Result<T, E>
where
    P: Place<'s> + Copy,
    T: DeserializeInCapacity<'s>,
    E: Error,
{
    T::deserialize_in_capacity(scope, capacity, Missing { name, _e: Marker })
}

/// The value of a `with_serde` field missing from the file.
pub fn missing_field_serde<T: DeserializeOwned, E: Error>(name: &'static str) -> Result<T, E> {
    T::deserialize(Missing { name, _e: Marker })
}
