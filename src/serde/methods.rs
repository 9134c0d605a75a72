//! The `deserialize` method of every scope kind: `ScopeStack` (and so `Scope` and a
//! slot's scope), `LocalScope` and `ConcurrentScope`, each a one-line call of
//! [`DeserializeIn::deserialize_in`] with the same name (one placement API).
//!
//! Invariant: each method passes the scope's own [`Place`](crate::Place) handle, so the
//! bounds of that kind (the `Send` of concurrent scopes) hold as for every placement.
use serde::de::Deserializer;

use crate::concurrent::{ConcurrentScope, LocalScope};
use crate::scope::ScopeStack;

use super::trait_in::DeserializeIn;

impl<'s> ScopeStack<'s> {
    /// Deserializes a `T` into this scope: its strings, slices and boxed values are
    /// placed here (feature `serde`; see [`DeserializeIn`]). On an error, what the
    /// load placed stays taken until the scope ends (see the [`serde`](crate::serde)
    /// module docs): load into a child scope or a slot for a clean slate.
    ///
    /// # Errors
    /// The deserializer's error, also when the scope runs out of room (the text names
    /// the scope and the bytes asked for, in a format that keeps messages: postcard
    /// drops them; a slot's file load keeps the allocation error beside the format's,
    /// see [`LoadError`](crate::serde::LoadError)).
    ///
    /// ```
    /// use scope_stack::LinearAllocator;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
    /// memory.scope("level", |level| {
    ///     let mut de = serde_json::Deserializer::from_str(r#"[["oak", "elm"], ["fir"]]"#);
    ///     let rows = level.deserialize::<&[&[&str]], _>(&mut de).unwrap();
    ///     assert_eq!(rows[0][1], "elm");
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    #[inline]
    pub fn deserialize<'de, T: DeserializeIn<'s>, D: Deserializer<'de>>(
        &self,
        deserializer: D,
    ) -> Result<T, D::Error> {
        T::deserialize_in(self, deserializer)
    }
}

impl<'a> LocalScope<'a> {
    /// Deserializes a `T` into this thread's part of the concurrent scope (see
    /// [`ScopeStack::deserialize`]).
    ///
    /// # Errors
    /// As [`ScopeStack::deserialize`].
    ///
    /// ```
    /// use scope_stack::LinearAllocator;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("frame", |frame| {
    ///     frame.scope_concurrent("jobs", |jobs| {
    ///         let mut de = serde_json::Deserializer::from_str("[1, 2, 3]");
    ///         let v: &[u16] = jobs.local().deserialize(&mut de).unwrap();
    ///         assert_eq!(v, [1, 2, 3]);
    ///     });
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    #[inline]
    pub fn deserialize<'de, T: DeserializeIn<'a>, D: Deserializer<'de>>(
        &self,
        deserializer: D,
    ) -> Result<T, D::Error> {
        T::deserialize_in(*self, deserializer)
    }
}

impl ConcurrentScope<'_> {
    /// Deserializes a `T` into the concurrent scope, from any thread (see
    /// [`ScopeStack::deserialize`]). Values that need drop must be `Send`.
    ///
    /// # Errors
    /// As [`ScopeStack::deserialize`].
    ///
    /// ```
    /// use scope_stack::LinearAllocator;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("frame", |frame| {
    ///     frame.scope_concurrent("jobs", |jobs| {
    ///         let names = std::thread::scope(|t| {
    ///             t.spawn(|| {
    ///                 let mut de = serde_json::Deserializer::from_str(r#"["a", "b"]"#);
    ///                 jobs.deserialize::<&[&str], _>(&mut de).unwrap()
    ///             })
    ///             .join()
    ///             .unwrap()
    ///         });
    ///         assert_eq!(names, ["a", "b"]);
    ///     });
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    #[inline]
    pub fn deserialize<'c, 'de, T: DeserializeIn<'c>, D: Deserializer<'de>>(
        &'c self,
        deserializer: D,
    ) -> Result<T, D::Error> {
        T::deserialize_in(self, deserializer)
    }
}
