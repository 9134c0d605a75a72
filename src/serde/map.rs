//! [`ScopeMap`]: a map of the file as its entries in file order, `&'s [(K, V)]`.
//!
//! Invariant: the entries are those of the file, in its order, duplicates included;
//! look-ups return the first entry with the key.
use core::borrow::Borrow;
use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};

use crate::scope::place::Place;

use super::collect::{collect, Source};
use super::trait_in::{DeserializeIn, Ghost, Seed};

/// A map read from a file into a scope: its entries in file order, as `&'s [(K, V)]`.
/// It derefs to the entries; [`get`](Self::get) finds a key by a linear search (maps
/// in level files are short; for many keys, sort the entries of a `&'s mut [(K, V)]`
/// and search them). It serializes back as a map.
///
/// ```
/// use scope_stack::serde::ScopeMap;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"{"gravity": 9.8, "wind": 0.5}"#);
///     let props: ScopeMap<&str, f32> = level.deserialize(&mut de).unwrap();
///     assert_eq!(props.get("wind"), Some(&0.5));
///     assert_eq!(props[0].0, "gravity"); // file order
///     assert_eq!(serde_json::to_string(&props).unwrap(), r#"{"gravity":9.8,"wind":0.5}"#);
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct ScopeMap<'s, K, V> {
    entries: &'s [(K, V)],
}

impl<'s, K, V> ScopeMap<'s, K, V> {
    /// A map of these entries.
    ///
    /// ```
    /// # use scope_stack::serde::ScopeMap;
    /// let map = ScopeMap::new(&[("a", 1)]);
    /// assert_eq!(map.get("a"), Some(&1));
    /// ```
    pub const fn new(entries: &'s [(K, V)]) -> Self {
        ScopeMap { entries }
    }

    /// The entries, in file order.
    ///
    /// ```
    /// # use scope_stack::serde::ScopeMap;
    /// assert_eq!(ScopeMap::new(&[(1, 'x')]).entries(), &[(1, 'x')]);
    /// ```
    pub const fn entries(&self) -> &'s [(K, V)] {
        self.entries
    }

    /// The value of the first entry whose key is `key`.
    ///
    /// ```
    /// # use scope_stack::serde::ScopeMap;
    /// let map = ScopeMap::new(&[("hp", 3), ("hp", 4)]);
    /// assert_eq!(map.get("hp"), Some(&3));
    /// assert_eq!(map.get("mp"), None);
    /// ```
    pub fn get<Q>(&self, key: &Q) -> Option<&'s V>
    where
        K: Borrow<Q>,
        Q: ?Sized + PartialEq,
    {
        self.entries
            .iter()
            .find(|(k, _)| k.borrow() == key)
            .map(|(_, v)| v)
    }
}

impl<K, V> Clone for ScopeMap<'_, K, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K, V> Copy for ScopeMap<'_, K, V> {}

impl<'s, K, V> Deref for ScopeMap<'s, K, V> {
    type Target = [(K, V)];
    fn deref(&self) -> &[(K, V)] {
        self.entries
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for ScopeMap<'_, K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: PartialEq, V: PartialEq> PartialEq for ScopeMap<'_, K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for ScopeMap<'_, K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A serde map as a [`Source`] of entries read into the scope.
struct MapSource<'s, 'de, P, K, V, A> {
    scope: P,
    map: A,
    _t: Ghost<'s, (&'de (), K, V)>,
}

impl<'de, 's, P, K, V, A> Source<(K, V)> for MapSource<'s, 'de, P, K, V, A>
where
    P: Place<'s> + Copy,
    K: DeserializeIn<'s>,
    V: DeserializeIn<'s>,
    A: MapAccess<'de>,
{
    type Error = A::Error;
    #[inline]
    fn next(&mut self) -> Result<Option<(K, V)>, A::Error> {
        let Some(k) = self.map.next_key_seed(Seed::<P, K>::new(self.scope))? else {
            return Ok(None);
        };
        let v = self.map.next_value_seed(Seed::<P, V>::new(self.scope))?;
        Ok(Some((k, v)))
    }
    fn hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// The visitor of a map: its entries, in file order, in one slice of the scope.
struct MapIn<'s, P, K, V>(P, Ghost<'s, (K, V)>);

impl<'de, 's, P, K, V> Visitor<'de> for MapIn<'s, P, K, V>
where
    P: Place<'s> + Copy,
    K: DeserializeIn<'s> + 's,
    V: DeserializeIn<'s> + 's,
{
    type Value = &'s mut [(K, V)];
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        collect(
            self.0,
            MapSource {
                scope: self.0,
                map,
                _t: PhantomData,
            },
        )
    }
}

/// Reads a serde map into one slice of `scope`: its entries, in file order.
pub(super) fn entries_in<'de, 's, P, K, V, D>(
    scope: P,
    deserializer: D,
) -> Result<&'s mut [(K, V)], D::Error>
where
    P: Place<'s> + Copy,
    K: DeserializeIn<'s> + 's,
    V: DeserializeIn<'s> + 's,
    D: Deserializer<'de>,
{
    deserializer.deserialize_map(MapIn::<P, K, V>(scope, PhantomData))
}

impl<'s, K: DeserializeIn<'s>, V: DeserializeIn<'s>> DeserializeIn<'s> for ScopeMap<'s, K, V> {
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        entries_in(scope, deserializer).map(|entries| ScopeMap { entries })
    }
}
