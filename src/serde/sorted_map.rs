//! [`SortedMap`]: a map of the file whose entries are sorted by key when it is read,
//! for look-ups by binary search.
//!
//! Invariant: the entries are those of the file, sorted by key with no two keys equal
//! (a file that repeats a key is refused), so a binary search finds a key's one entry.
use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::ops::Deref;

use serde::de::{Deserializer, Error};
use serde::ser::{SerializeMap, Serializer};

use crate::scope::place::Place;

use super::map::entries_in;
use super::trait_in::DeserializeIn;

/// A map read from a file into a scope, its entries sorted by key: [`get`](Self::get)
/// is a binary search, for maps with many keys (a table of names to ids). Reading it
/// costs the entries' slice and a sort in place (no allocation); a key that appears
/// twice in the file is an error. It derefs to the sorted entries and serializes back
/// as a map, in key order. For the file's own order, use
/// [`ScopeMap`](super::ScopeMap).
///
/// ```
/// use scope_stack::serde::SortedMap;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"{"wolf": 7, "bear": 3, "frog": 1}"#);
///     let ids: SortedMap<&str, u32> = level.deserialize(&mut de).unwrap();
///     assert_eq!(ids.get("frog"), Some(&1));
///     assert_eq!(ids.get("toad"), None);
///     assert_eq!(ids[0], ("bear", 3)); // key order
///
///     let mut twice = serde_json::Deserializer::from_str(r#"{"wolf": 7, "wolf": 8}"#);
///     let err = level.deserialize::<SortedMap<&str, u32>, _>(&mut twice).err().unwrap();
///     assert!(err.to_string().contains("duplicate key"), "{err}");
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct SortedMap<'s, K, V> {
    entries: &'s [(K, V)],
}

impl<'s, K: Ord, V> SortedMap<'s, K, V> {
    /// A map of these entries, sorted in place by key, or `None` if two keys are equal.
    ///
    /// ```
    /// # use scope_stack::serde::SortedMap;
    /// let mut entries = [(3, 'c'), (1, 'a')];
    /// let map = SortedMap::new(&mut entries).unwrap();
    /// assert_eq!(map.get(&1), Some(&'a'));
    /// assert!(SortedMap::new(&mut [(1, 'a'), (1, 'b')]).is_none());
    /// ```
    pub fn new(entries: &'s mut [(K, V)]) -> Option<Self> {
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if entries.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some(SortedMap { entries })
    }

    /// The entries, sorted by key.
    ///
    /// ```
    /// # use scope_stack::serde::SortedMap;
    /// let mut entries = [(2, 'b'), (1, 'a')];
    /// let map = SortedMap::new(&mut entries).unwrap();
    /// assert_eq!(map.entries(), &[(1, 'a'), (2, 'b')]);
    /// ```
    pub const fn entries(&self) -> &'s [(K, V)] {
        self.entries
    }

    /// The value of the entry whose key is `key`, by binary search.
    ///
    /// ```
    /// # use scope_stack::serde::SortedMap;
    /// let mut entries = [("mp", 4), ("hp", 3)];
    /// let map = SortedMap::new(&mut entries).unwrap();
    /// assert_eq!(map.get("mp"), Some(&4));
    /// assert_eq!(map.get("xp"), None);
    /// ```
    pub fn get<Q>(&self, key: &Q) -> Option<&'s V>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        let entries = self.entries;
        entries
            .binary_search_by(|(k, _)| k.borrow().cmp(key))
            .ok()
            .map(|i| &entries[i].1)
    }
}

impl<K, V> Clone for SortedMap<'_, K, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K, V> Copy for SortedMap<'_, K, V> {}

impl<K, V> Deref for SortedMap<'_, K, V> {
    type Target = [(K, V)];
    fn deref(&self) -> &[(K, V)] {
        self.entries
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SortedMap<'_, K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: PartialEq, V: PartialEq> PartialEq for SortedMap<'_, K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for SortedMap<'_, K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'s, K, V> DeserializeIn<'s> for SortedMap<'s, K, V>
where
    K: DeserializeIn<'s> + Ord + 's,
    V: DeserializeIn<'s> + 's,
{
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        let entries: &'s mut [(K, V)] = entries_in(scope, deserializer)?;
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if entries
            .windows(2)
            .any(|w| w[0].0.cmp(&w[1].0) == Ordering::Equal)
        {
            return Err(D::Error::custom(
                "duplicate key in a map read as a SortedMap (each key must appear once)",
            ));
        }
        Ok(SortedMap { entries })
    }
}
