//! [`DeserializeIn`] for references into the scope: `&'s str`, `&'s mut str`, `&'s T`
//! and `&'s mut T`.
//!
//! Invariant: text is always copied into the scope (never borrowed from the input), so
//! the input may be dropped after the load; a value behind a reference that needs drop
//! is placed with a finalizer only under a [`DropRule`](super::DropRule) that allows it.
use core::fmt;
use core::marker::PhantomData;

use serde::de::{Deserializer, Error, Unexpected, Visitor};

use crate::scope::place::{Handle, Place};

use super::trait_in::{alloc_error, assert_placeable, DeserializeIn};

/// The visitor of a string: copies whatever text the format hands over into the scope.
struct StrIn<'s, P>(P, PhantomData<&'s ()>);

impl<'de, 's, P: Place<'s> + Copy> Visitor<'de> for StrIn<'s, P> {
    type Value = &'s mut str;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    #[inline]
    fn visit_str<E: Error>(self, v: &str) -> Result<&'s mut str, E> {
        self.0.try_alloc_str(v).map_err(alloc_error)
    }
    fn visit_char<E: Error>(self, v: char) -> Result<&'s mut str, E> {
        self.visit_str(v.encode_utf8(&mut [0; 4]))
    }
    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<&'s mut str, E> {
        match core::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Err(E::invalid_value(Unexpected::Bytes(v), &self)),
        }
    }
}

impl<'s> DeserializeIn<'s> for &'s mut str {
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        deserializer.deserialize_str(StrIn(scope, PhantomData))
    }
}

impl<'s> DeserializeIn<'s> for &'s str {
    #[inline]
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        <&'s mut str>::deserialize_in(scope, deserializer).map(|s| &*s)
    }
}

impl<'s, T: DeserializeIn<'s>> DeserializeIn<'s> for &'s mut T {
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        assert_placeable::<T>();
        let value = T::deserialize_in(scope, deserializer)?;
        place(scope, value).map_err(alloc_error)
    }
}

impl<'s, T: DeserializeIn<'s>> DeserializeIn<'s> for &'s T {
    #[inline]
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        <&'s mut T>::deserialize_in(scope, deserializer).map(|v| &*v)
    }
}

/// Places one value: with a finalizer when it needs drop (its rule allows one, which
/// [`assert_placeable`] checked at build time), with none otherwise.
#[inline]
pub(crate) fn place<'s, P: Place<'s>, T: DeserializeIn<'s>>(
    scope: P,
    value: T,
) -> Result<&'s mut T, crate::error::AllocError> {
    assert_placeable::<T>();
    debug_assert!(!core::mem::needs_drop::<T>() || T::DROP.allows_finalizer());
    let handle = scope.handle();
    // SAFETY: a `T` that needs drop has a rule that allows a finalizer, and such a rule
    // is only made for `Send + 'static` types (`DropRule::finalize`, or structurally from
    // parts that are), which keeps the drop rule on every surface.
    unsafe { crate::scope::place::try_new_object_unchecked(handle.as_core(), value) }
        .map_err(|e| e.error)
}
