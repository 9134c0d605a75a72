//! [`Serde`]: a value of a type that has only serde's `Deserialize` (a `String`, a type
//! from another crate), deserialized by serde as usual and kept by value.
//!
//! Invariant: it places nothing in the scope itself; whatever heap memory its `T` uses
//! comes from the global allocator and is freed when the value is dropped.
use core::ops::{Deref, DerefMut};

use serde::de::{DeserializeOwned, Deserializer};

use crate::scope::place::Place;

use super::trait_in::{DeserializeIn, DropRule};

/// A value read with serde's own `Deserialize`, for types that have no
/// [`DeserializeIn`]: `Serde<String>`, `Serde<Vec<u8>>`, a type from a crate you do not
/// control. **Such a value uses the global heap** like any `String` does; it is placed
/// like any other value (by value in a struct, or behind `&'s` with a finalizer, since
/// it is `Send + 'static`). In a derived struct, `#[scope(with_serde)]` on a field does
/// the same without the wrapper.
///
/// ```
/// use scope_stack::serde::Serde;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"["a", "b"]"#);
///     let notes: &[Serde<String>] = level.deserialize(&mut de).unwrap();
///     assert_eq!(notes[1].as_str(), "b"); // the Strings are dropped when `level` ends
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// Its value must be `Send`, because a scope may drop it on another thread:
///
/// ```compile_fail,E0277
/// use scope_stack::serde::Serde;
/// use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     level.scope_concurrent("jobs", |jobs| {
///         let mut de = serde_json::Deserializer::from_str("[1]");
///         // error: `*const u8` is not `Send` (`PhantomData` of it is `Deserialize`)
///         let _: &[Serde<std::marker::PhantomData<*const u8>>] = jobs.deserialize(&mut de).unwrap();
///     });
/// });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Serde<T>(pub T);

impl<T> Deref for Serde<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Serde<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<'s, T: DeserializeOwned + Send + 'static> DeserializeIn<'s> for Serde<T> {
    const PLACES: bool = false;
    const DROP: DropRule<Self> = DropRule::finalize();
    #[inline]
    fn deserialize_in<'de, P, D>(_scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        T::deserialize(deserializer).map(Serde)
    }
}

impl<T: serde::Serialize> serde::Serialize for Serde<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}
