//! A value read once and replayed (hidden, for `#[derive(DeserializeIn)]`): internally
//! tagged and untagged enums must see a whole value before they know its variant, so
//! the value is first captured as a [`Content`] tree, then deserialized again from it
//! ([`ContentRef`] is a serde `Deserializer` over the tree), once per variant tried.
//!
//! The tree lives in this thread's staging block (feature `std`; see `staging.rs`):
//! its strings, sequences and maps are carved there while the value is read, and given
//! back when the enum is done. So the buffered path takes no global-heap allocation
//! after a thread's first load, like the rest of the module. Its limits:
//!
//! - the tree must fit in what is left of the staging block (1 MiB per thread, shared
//!   with the sequences being staged around it); a bigger value is an error that says
//!   so, never a heap allocation;
//! - without `std` there is no staging block, and such enums are an error at load time;
//! - strings are copied into the tree even when the input lends them (the crate's own
//!   `&'s str` copies them into the scope anyway);
//! - values placed in the scope while trying an untagged variant that then failed stay
//!   taken until the scope ends (a bump scope cannot take back room below newer data).
//!
//! Invariant: a [`Content`] tree never outlives the staging scope it was carved from
//! (the functions here hand it out only to a closure that is higher-ranked over its
//! lifetime), and holds nothing that needs drop, so leaving it in the staging block to
//! be rewound is its whole cleanup.
use core::fmt;
use core::marker::PhantomData;

use crate::scope::ScopeStack;
#[cfg(feature = "std")]
use allocator_api2::{alloc::Allocator, vec::Vec};
use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, EnumAccess, Error, Expected, IntoDeserializer,
    MapAccess, SeqAccess, Unexpected, VariantAccess, Visitor,
};

/// One value of serde's data model, captured for replay. Copy: it only points into the
/// staging block (`'c`); strings the input lends are copied too, so the tree does not
/// borrow the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Content<'c> {
    /// `bool`.
    Bool(bool),
    /// `u8`.
    U8(u8),
    /// `u16`.
    U16(u16),
    /// `u32`.
    U32(u32),
    /// `u64`.
    U64(u64),
    /// `u128`.
    U128(u128),
    /// `i8`.
    I8(i8),
    /// `i16`.
    I16(i16),
    /// `i32`.
    I32(i32),
    /// `i64`.
    I64(i64),
    /// `i128`.
    I128(i128),
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
    /// `char`.
    Char(char),
    /// A string, copied into the staging block.
    Str(&'c str),
    /// Bytes, copied into the staging block.
    Bytes(&'c [u8]),
    /// `None`.
    None,
    /// `Some(value)`.
    Some(&'c Content<'c>),
    /// `()` (JSON's `null`).
    Unit,
    /// A newtype struct around a value.
    Newtype(&'c Content<'c>),
    /// A sequence.
    Seq(&'c [Content<'c>]),
    /// A map, its entries in input order.
    Map(&'c [(Content<'c>, Content<'c>)]),
}

impl Content<'_> {
    /// What the value is, for an error message.
    fn unexpected(&self) -> Unexpected<'_> {
        match *self {
            Content::Bool(b) => Unexpected::Bool(b),
            Content::U8(n) => Unexpected::Unsigned(n.into()),
            Content::U16(n) => Unexpected::Unsigned(n.into()),
            Content::U32(n) => Unexpected::Unsigned(n.into()),
            Content::U64(n) => Unexpected::Unsigned(n),
            Content::U128(_) | Content::I128(_) => Unexpected::Other("a 128-bit integer"),
            Content::I8(n) => Unexpected::Signed(n.into()),
            Content::I16(n) => Unexpected::Signed(n.into()),
            Content::I32(n) => Unexpected::Signed(n.into()),
            Content::I64(n) => Unexpected::Signed(n),
            Content::F32(f) => Unexpected::Float(f.into()),
            Content::F64(f) => Unexpected::Float(f),
            Content::Char(c) => Unexpected::Char(c),
            Content::Str(s) => Unexpected::Str(s),
            Content::Bytes(b) => Unexpected::Bytes(b),
            Content::None | Content::Some(_) => Unexpected::Option,
            Content::Unit => Unexpected::Unit,
            Content::Newtype(_) => Unexpected::NewtypeStruct,
            Content::Seq(_) => Unexpected::Seq,
            Content::Map(_) => Unexpected::Map,
        }
    }

    /// The text of a string value.
    #[cfg(feature = "std")]
    fn as_str(&self) -> Option<&str> {
        match *self {
            Content::Str(s) => Some(s),
            Content::Bytes(b) => core::str::from_utf8(b).ok(),
            _ => None,
        }
    }
}

/// The error of a tree that does not fit in the staging block.
#[cfg(feature = "std")]
#[cold]
fn full<E: Error>() -> E {
    E::custom(
        "the value of an untagged or internally tagged enum does not fit in this thread's \
         staging block (1 MiB)",
    )
}

/// Moves a vector into its allocator for the rest of the staging scope.
#[cfg(feature = "std")]
fn leak<'c, T, A: Allocator + 'c>(v: Vec<T, A>) -> &'c [T] {
    v.leak()
}

/// Pushes `value`, or fails with [`full`] when the staging block has no room.
#[cfg(feature = "std")]
fn push<T, A: Allocator, E: Error>(v: &mut Vec<T, A>, value: T) -> Result<(), E> {
    if v.len() == v.capacity() {
        let more = v.len().max(4);
        if v.try_reserve(more).is_err() && v.try_reserve(1).is_err() {
            return Err(full());
        }
    }
    v.push(value);
    Ok(())
}

/// Captures one value as a [`Content`] tree carved with `A` (a seed and a visitor).
#[cfg(feature = "std")]
struct Capture<'c, A> {
    alloc: A,
    _c: PhantomData<&'c ()>,
}

#[cfg(feature = "std")]
impl<A: Copy> Clone for Capture<'_, A> {
    fn clone(&self) -> Self {
        *self
    }
}
#[cfg(feature = "std")]
impl<A: Copy> Copy for Capture<'_, A> {}

#[cfg(feature = "std")]
impl<'c, A: Allocator + Copy + 'c> Capture<'c, A> {
    fn new(alloc: A) -> Self {
        Capture {
            alloc,
            _c: PhantomData,
        }
    }

    fn one<E: Error>(self, value: Content<'c>) -> Result<&'c Content<'c>, E> {
        let mut v = Vec::new_in(self.alloc);
        push(&mut v, value)?;
        Ok(&leak(v)[0])
    }

    fn bytes<E: Error>(self, b: &[u8]) -> Result<&'c [u8], E> {
        let mut v = Vec::new_in(self.alloc);
        v.try_reserve_exact(b.len()).map_err(|_| full())?;
        v.extend_from_slice(b);
        Ok(leak(v))
    }
}

#[cfg(feature = "std")]
impl<'de, 'c, A: Allocator + Copy + 'c> DeserializeSeed<'de> for Capture<'c, A> {
    type Value = Content<'c>;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

#[cfg(feature = "std")]
macro_rules! capture_scalars {
    ($($method:ident($t:ty) => $variant:ident,)*) => {$(
        fn $method<E: Error>(self, v: $t) -> Result<Self::Value, E> {
            Ok(Content::$variant(v))
        }
    )*};
}

#[cfg(feature = "std")]
impl<'de, 'c, A: Allocator + Copy + 'c> Visitor<'de> for Capture<'c, A> {
    type Value = Content<'c>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    capture_scalars! {
        visit_bool(bool) => Bool,
        visit_u8(u8) => U8,
        visit_u16(u16) => U16,
        visit_u32(u32) => U32,
        visit_u64(u64) => U64,
        visit_u128(u128) => U128,
        visit_i8(i8) => I8,
        visit_i16(i16) => I16,
        visit_i32(i32) => I32,
        visit_i64(i64) => I64,
        visit_i128(i128) => I128,
        visit_f32(f32) => F32,
        visit_f64(f64) => F64,
        visit_char(char) => Char,
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
        let bytes = self.bytes(v.as_bytes())?;
        // A copy of a `str` is UTF-8; the check cannot fail, and keeps this module free
        // of `unsafe`.
        let s = core::str::from_utf8(bytes).map_err(|_| E::custom("invalid UTF-8"))?;
        Ok(Content::Str(s))
    }

    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        Ok(Content::Bytes(self.bytes(v)?))
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(Content::None)
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        let inner = de.deserialize_any(self)?;
        Ok(Content::Some(self.one(inner)?))
    }

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(Content::Unit)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        let inner = de.deserialize_any(self)?;
        Ok(Content::Newtype(self.one(inner)?))
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut v = Vec::new_in(self.alloc);
        if let Some(n) = seq.size_hint() {
            // A hint is only a hint: a bad one must not fail the load.
            let _ = v.try_reserve_exact(n.min(4096));
        }
        while let Some(x) = seq.next_element_seed(self)? {
            push(&mut v, x)?;
        }
        Ok(Content::Seq(leak(v)))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut v = Vec::new_in(self.alloc);
        if let Some(n) = map.size_hint() {
            let _ = v.try_reserve_exact(n.min(4096));
        }
        while let Some(k) = map.next_key_seed(self)? {
            let x = map.next_value_seed(self)?;
            push(&mut v, (k, x))?;
        }
        Ok(Content::Map(leak(v)))
    }
}

/// Captures a map (or a sequence) holding a tag: the tag's value, and the rest of the
/// value without it (a map without the tag's entry, or the sequence after its first
/// element).
#[cfg(feature = "std")]
struct TaggedCapture<'c, A> {
    capture: Capture<'c, A>,
    tag: &'static str,
    expecting: &'static str,
}

#[cfg(feature = "std")]
impl<'de, 'c, A: Allocator + Copy + 'c> Visitor<'de> for TaggedCapture<'c, A> {
    type Value = (Content<'c>, Content<'c>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let c = self.capture;
        let mut rest = Vec::new_in(c.alloc);
        let mut tag = None;
        while let Some(k) = map.next_key_seed(c)? {
            if k.as_str() == Some(self.tag) {
                if tag.is_some() {
                    return Err(Error::duplicate_field(self.tag));
                }
                tag = Some(map.next_value_seed(c)?);
            } else {
                let x = map.next_value_seed(c)?;
                push(&mut rest, (k, x))?;
            }
        }
        let tag = tag.ok_or_else(|| Error::missing_field(self.tag))?;
        Ok((tag, Content::Map(leak(rest))))
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let c = self.capture;
        let tag = seq
            .next_element_seed(c)?
            .ok_or_else(|| Error::missing_field(self.tag))?;
        let mut rest = Vec::new_in(c.alloc);
        while let Some(x) = seq.next_element_seed(c)? {
            push(&mut rest, x)?;
        }
        Ok((tag, Content::Seq(leak(rest))))
    }
}

/// The error of a build or a thread without a staging block.
#[cfg_attr(feature = "std", allow(dead_code))]
#[cold]
fn no_staging<E: Error>() -> E {
    E::custom(
        "untagged and internally tagged enums need this thread's staging block (feature \
         `std`) to buffer their value",
    )
}

/// Runs `f` with this thread's staging scope as the allocator of a [`Content`] tree.
#[cfg(feature = "std")]
fn with_arena<R, E: Error>(f: impl FnOnce(&ScopeStack<'_>) -> Result<R, E>) -> Result<R, E> {
    super::staging::with_staging(|s| match s {
        Some(s) => f(s),
        None => Err(no_staging()),
    })
}

/// Without `std` there is no staging block to buffer in.
#[cfg(not(feature = "std"))]
fn with_arena<R, E: Error>(_f: impl FnOnce(&ScopeStack<'_>) -> Result<R, E>) -> Result<R, E> {
    Err(no_staging())
}

/// Captures the value `de` holds in `arena`.
#[cfg(feature = "std")]
fn capture_any<'c, 'de, D: Deserializer<'de>>(
    arena: &'c ScopeStack<'_>,
    de: D,
) -> Result<Content<'c>, D::Error> {
    de.deserialize_any(Capture::new(arena))
}

/// Captures a map holding `tag` in `arena`: the tag's value, and the rest.
#[cfg(feature = "std")]
fn capture_tagged<'c, 'de, D: Deserializer<'de>>(
    arena: &'c ScopeStack<'_>,
    de: D,
    tag: &'static str,
    expecting: &'static str,
) -> Result<(Content<'c>, Content<'c>), D::Error> {
    de.deserialize_any(TaggedCapture {
        capture: Capture::new(arena),
        tag,
        expecting,
    })
}

/// Captures the next value of `map` in `arena`.
#[cfg(feature = "std")]
fn capture_value<'c, 'de, M: MapAccess<'de>>(
    arena: &'c ScopeStack<'_>,
    map: &mut M,
) -> Result<Content<'c>, M::Error> {
    map.next_value_seed(Capture::new(arena))
}

/// Without `std` nothing is captured (`with_arena` never calls its closure).
#[cfg(not(feature = "std"))]
fn capture_any<'c, 'de, D: Deserializer<'de>>(
    _arena: &'c ScopeStack<'_>,
    _de: D,
) -> Result<Content<'c>, D::Error> {
    Err(no_staging())
}

/// Without `std` nothing is captured (`with_arena` never calls its closure).
#[cfg(not(feature = "std"))]
fn capture_tagged<'c, 'de, D: Deserializer<'de>>(
    _arena: &'c ScopeStack<'_>,
    _de: D,
    _tag: &'static str,
    _expecting: &'static str,
) -> Result<(Content<'c>, Content<'c>), D::Error> {
    Err(no_staging())
}

/// Without `std` nothing is captured (`with_arena` never calls its closure).
#[cfg(not(feature = "std"))]
fn capture_value<'c, 'de, M: MapAccess<'de>>(
    _arena: &'c ScopeStack<'_>,
    _map: &mut M,
) -> Result<Content<'c>, M::Error> {
    Err(no_staging())
}

/// Reads one whole value from `de` into a [`Content`] tree and runs `f` on it (an
/// untagged enum tries its variants there, one after another).
pub fn buffered<'de, D, R, F>(de: D, f: F) -> Result<R, D::Error>
where
    D: Deserializer<'de>,
    F: for<'c> FnOnce(&'c Content<'c>) -> Result<R, D::Error>,
{
    with_arena(|arena| {
        let content = capture_any(arena, de)?;
        f(&content)
    })
}

/// Reads a map holding the entry `tag` (an internally tagged enum) and runs `f` on the
/// tag's value and the map without that entry.
pub fn tagged<'de, D, R, F>(
    de: D,
    tag: &'static str,
    expecting: &'static str,
    f: F,
) -> Result<R, D::Error>
where
    D: Deserializer<'de>,
    F: for<'c> FnOnce(&'c Content<'c>, &'c Content<'c>) -> Result<R, D::Error>,
{
    with_arena(|arena| {
        let (t, rest) = capture_tagged(arena, de, tag, expecting)?;
        f(&t, &rest)
    })
}

/// A key of an adjacently tagged enum's map.
enum AdjacentKey {
    Tag,
    Content,
    Other,
}

/// Reads a key of an adjacently tagged enum's map: `fields` is `[tag, content]`.
#[derive(Clone, Copy)]
struct AdjacentKeySeed {
    fields: &'static [&'static str; 2],
    deny_unknown_fields: bool,
}

impl<'de> DeserializeSeed<'de> for AdjacentKeySeed {
    type Value = AdjacentKey;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<AdjacentKey, D::Error> {
        de.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for AdjacentKeySeed {
    type Value = AdjacentKey;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` or `{}`", self.fields[0], self.fields[1])
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<AdjacentKey, E> {
        if v == self.fields[0] {
            Ok(AdjacentKey::Tag)
        } else if v == self.fields[1] {
            Ok(AdjacentKey::Content)
        } else if self.deny_unknown_fields {
            Err(E::unknown_field(v, self.fields))
        } else {
            Ok(AdjacentKey::Other)
        }
    }
    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<AdjacentKey, E> {
        match core::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Err(E::invalid_value(Unexpected::Bytes(v), &self)),
        }
    }
    fn visit_u64<E: Error>(self, v: u64) -> Result<AdjacentKey, E> {
        match v {
            0 => Ok(AdjacentKey::Tag),
            1 => Ok(AdjacentKey::Content),
            _ if self.deny_unknown_fields => Err(E::invalid_value(
                Unexpected::Unsigned(v),
                &"a field index, 0 or 1",
            )),
            _ => Ok(AdjacentKey::Other),
        }
    }
}

/// A deserializer for the content an adjacently tagged enum's map left out: fine for a
/// unit variant, a missing-field error for any other.
struct MissingContent<E> {
    name: &'static str,
    _e: PhantomData<fn() -> E>,
}

impl<'de, E: Error> Deserializer<'de> for MissingContent<E> {
    type Error = E;
    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.name))
    }
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_unit()
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// Reads the map of an adjacently tagged enum, `{tag: variant, content: value}` in
/// either order (`fields` is `[tag, content]`): `seed(variant)` reads the value. When
/// the value comes first it is buffered (as for untagged enums) until the tag is known.
pub fn adjacent_map<'de, M, I, S, F>(
    mut map: M,
    fields: &'static [&'static str; 2],
    deny_unknown_fields: bool,
    seed: F,
) -> Result<S::Value, M::Error>
where
    M: MapAccess<'de>,
    I: Deserialize<'de>,
    S: DeserializeSeed<'de>,
    F: FnOnce(I) -> S,
{
    let [tag, content] = *fields;
    let keys = AdjacentKeySeed {
        fields,
        deny_unknown_fields,
    };
    let mut id: Option<I> = None;
    let mut tag_seen = false;
    let mut value: Option<S::Value> = None;
    let mut seed = Some(seed);
    while let Some(key) = map.next_key_seed(keys)? {
        match key {
            AdjacentKey::Tag => {
                if tag_seen {
                    return Err(Error::duplicate_field(tag));
                }
                tag_seen = true;
                id = Some(map.next_value()?);
            }
            AdjacentKey::Content => {
                if value.is_some() {
                    return Err(Error::duplicate_field(content));
                }
                let seed = seed.take().expect("the content is read once");
                match id.take() {
                    Some(i) => value = Some(map.next_value_seed(seed(i))?),
                    // The value comes before the tag: buffer it, and read the rest of
                    // the map with the buffer alive.
                    None => {
                        return with_arena(|arena| {
                            let c = capture_value(arena, &mut map)?;
                            while let Some(key) = map.next_key_seed(keys)? {
                                match key {
                                    AdjacentKey::Tag if id.is_some() => {
                                        return Err(Error::duplicate_field(tag));
                                    }
                                    AdjacentKey::Tag => id = Some(map.next_value()?),
                                    AdjacentKey::Content => {
                                        return Err(Error::duplicate_field(content));
                                    }
                                    AdjacentKey::Other => {
                                        map.next_value::<serde::de::IgnoredAny>()?;
                                    }
                                }
                            }
                            let id = id.ok_or_else(|| Error::missing_field(tag))?;
                            seed(id).deserialize(ContentRef::new(&c))
                        });
                    }
                }
            }
            AdjacentKey::Other => {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
    }
    if let Some(v) = value {
        return Ok(v);
    }
    let id = id.ok_or_else(|| Error::missing_field(tag))?;
    // No content: a unit variant, or a missing field.
    let seed = seed.take().expect("no content was read");
    seed(id).deserialize(MissingContent {
        name: content,
        _e: PhantomData,
    })
}

/// Reads the sequence form of an adjacently tagged enum, `[variant, value]`.
pub fn adjacent_seq<'de, A, I, S, F>(
    mut seq: A,
    expecting: &dyn Expected,
    seed: F,
) -> Result<S::Value, A::Error>
where
    A: SeqAccess<'de>,
    I: Deserialize<'de>,
    S: DeserializeSeed<'de>,
    F: FnOnce(I) -> S,
{
    let id: I = seq
        .next_element()?
        .ok_or_else(|| Error::invalid_length(0, expecting))?;
    seq.next_element_seed(seed(id))?
        .ok_or_else(|| Error::invalid_length(1, expecting))
}

/// A visitor that takes `()` (or `None`) and nothing else: a unit variant's value.
pub struct UnitOnly {
    /// What the error names as expected.
    pub expecting: &'static str,
    /// Whether a map is taken too (its entries ignored): the rest of an internally
    /// tagged unit variant, `{"type": "Unit"}` less its tag.
    pub map: bool,
}

impl<'de> Visitor<'de> for UnitOnly {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_unit<E: Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        if !self.map {
            return Err(Error::invalid_type(Unexpected::Map, &self));
        }
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(())
    }
}

/// The error of one untagged attempt: it keeps nothing, so a failed attempt costs no
/// allocation (a format's own error type may allocate for its message, as
/// `serde_json::Error` does); the enum reports its own message when every attempt
/// failed.
#[derive(Debug)]
pub struct Mismatch;

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the value does not match this variant")
    }
}

impl serde::de::StdError for Mismatch {}

impl Error for Mismatch {
    #[cold]
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Mismatch
    }
}

/// A serde `Deserializer` that replays a [`Content`] tree; copy it to replay the same
/// tree again.
pub struct ContentRef<'a, E> {
    content: &'a Content<'a>,
    _e: PhantomData<fn() -> E>,
}

impl<E> Clone for ContentRef<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E> Copy for ContentRef<'_, E> {}

impl<'a, E> ContentRef<'a, E> {
    /// A deserializer over `content`.
    pub fn new(content: &'a Content<'a>) -> Self {
        ContentRef {
            content,
            _e: PhantomData,
        }
    }
}

/// A deserializer over `content` whose error type is `E` (the derive's way to name it).
pub fn replay<'a, E>(content: &'a Content<'a>) -> ContentRef<'a, E> {
    ContentRef::new(content)
}

impl<'a, 'de, E: Error> IntoDeserializer<'de, E> for &'a Content<'a> {
    type Deserializer = ContentRef<'a, E>;
    fn into_deserializer(self) -> ContentRef<'a, E> {
        ContentRef::new(self)
    }
}

impl<'a, 'de, E: Error> Deserializer<'de> for ContentRef<'a, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match *self.content {
            Content::Bool(v) => visitor.visit_bool(v),
            Content::U8(v) => visitor.visit_u8(v),
            Content::U16(v) => visitor.visit_u16(v),
            Content::U32(v) => visitor.visit_u32(v),
            Content::U64(v) => visitor.visit_u64(v),
            Content::U128(v) => visitor.visit_u128(v),
            Content::I8(v) => visitor.visit_i8(v),
            Content::I16(v) => visitor.visit_i16(v),
            Content::I32(v) => visitor.visit_i32(v),
            Content::I64(v) => visitor.visit_i64(v),
            Content::I128(v) => visitor.visit_i128(v),
            Content::F32(v) => visitor.visit_f32(v),
            Content::F64(v) => visitor.visit_f64(v),
            Content::Char(v) => visitor.visit_char(v),
            Content::Str(v) => visitor.visit_str(v),
            Content::Bytes(v) => visitor.visit_bytes(v),
            Content::None => visitor.visit_none(),
            Content::Some(v) => visitor.visit_some(ContentRef::new(v)),
            Content::Unit => visitor.visit_unit(),
            Content::Newtype(v) => visitor.visit_newtype_struct(ContentRef::new(v)),
            Content::Seq(v) => {
                let mut seq = SeqRef::<E> {
                    iter: v.iter(),
                    _e: PhantomData,
                };
                let value = visitor.visit_seq(&mut seq)?;
                seq.end(v.len())?;
                Ok(value)
            }
            Content::Map(v) => {
                let mut map = MapRef::<E> {
                    iter: v.iter(),
                    value: None,
                    _e: PhantomData,
                };
                let value = visitor.visit_map(&mut map)?;
                map.end(v.len())?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match *self.content {
            Content::None | Content::Unit => visitor.visit_none(),
            Content::Some(v) => visitor.visit_some(ContentRef::new(v)),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, E> {
        match *self.content {
            Content::Newtype(v) => visitor.visit_newtype_struct(ContentRef::new(v)),
            _ => visitor.visit_newtype_struct(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match *self.content {
            Content::Str(_) => visitor.visit_enum(EnumRef {
                variant: self.content,
                value: None,
                _e: PhantomData::<fn() -> E>,
            }),
            Content::Map([(k, v)]) => visitor.visit_enum(EnumRef {
                variant: k,
                value: Some(v),
                _e: PhantomData::<fn() -> E>,
            }),
            ref other => Err(E::invalid_type(
                other.unexpected(),
                &"a string or a map with one entry",
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// The elements of a replayed sequence.
struct SeqRef<'a, E> {
    iter: core::slice::Iter<'a, Content<'a>>,
    _e: PhantomData<fn() -> E>,
}

impl<E: Error> SeqRef<'_, E> {
    /// Fails if the visitor left elements unread.
    fn end(&self, len: usize) -> Result<(), E> {
        match self.iter.len() {
            0 => Ok(()),
            left => Err(E::invalid_length(len, &ReadOf(len - left))),
        }
    }
}

/// "`n` elements", for a sequence or map with more than its visitor read.
struct ReadOf(usize);

impl Expected for ReadOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} elements", self.0)
    }
}

impl<'de, E: Error> SeqAccess<'de> for SeqRef<'_, E> {
    type Error = E;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, E> {
        match self.iter.next() {
            Some(c) => seed.deserialize(ContentRef::new(c)).map(Some),
            None => Ok(None),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// The entries of a replayed map.
struct MapRef<'a, E> {
    iter: core::slice::Iter<'a, (Content<'a>, Content<'a>)>,
    value: Option<&'a Content<'a>>,
    _e: PhantomData<fn() -> E>,
}

impl<E: Error> MapRef<'_, E> {
    /// Fails if the visitor left entries unread.
    fn end(&self, len: usize) -> Result<(), E> {
        match self.iter.len() {
            0 => Ok(()),
            left => Err(E::invalid_length(len, &ReadOf(len - left))),
        }
    }
}

impl<'de, E: Error> MapAccess<'de> for MapRef<'_, E> {
    type Error = E;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, E> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(ContentRef::new(k)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, E> {
        match self.value.take() {
            Some(v) => seed.deserialize(ContentRef::new(v)),
            None => Err(E::custom("a map value was read before its key")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// The variant of a replayed enum, and its value if it has one.
struct EnumRef<'a, E> {
    variant: &'a Content<'a>,
    value: Option<&'a Content<'a>>,
    _e: PhantomData<fn() -> E>,
}

impl<'a, 'de, E: Error> EnumAccess<'de> for EnumRef<'a, E> {
    type Error = E;
    type Variant = VariantRef<'a, E>;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), E> {
        let v = seed.deserialize(ContentRef::<E>::new(self.variant))?;
        Ok((
            v,
            VariantRef {
                value: self.value,
                _e: PhantomData,
            },
        ))
    }
}

/// The value of a replayed enum variant.
struct VariantRef<'a, E> {
    value: Option<&'a Content<'a>>,
    _e: PhantomData<fn() -> E>,
}

impl<'de, E: Error> VariantAccess<'de> for VariantRef<'_, E> {
    type Error = E;
    fn unit_variant(self) -> Result<(), E> {
        match self.value {
            None | Some(Content::Unit) => Ok(()),
            Some(other) => Err(E::invalid_type(other.unexpected(), &"a unit variant")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, E> {
        match self.value {
            Some(v) => seed.deserialize(ContentRef::new(v)),
            None => Err(E::invalid_type(
                Unexpected::UnitVariant,
                &"a newtype variant",
            )),
        }
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Some(v @ Content::Seq(_)) => ContentRef::new(v).deserialize_any(visitor),
            Some(other) => Err(E::invalid_type(other.unexpected(), &"a tuple variant")),
            None => Err(E::invalid_type(Unexpected::UnitVariant, &"a tuple variant")),
        }
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.value {
            Some(v @ (Content::Map(_) | Content::Seq(_))) => {
                ContentRef::new(v).deserialize_any(visitor)
            }
            Some(other) => Err(E::invalid_type(other.unexpected(), &"a struct variant")),
            None => Err(E::invalid_type(
                Unexpected::UnitVariant,
                &"a struct variant",
            )),
        }
    }
}
