//! [`DeserializeIn`] for slices of the scope, `&'s [T]` and `&'s mut [T]`: a serde
//! sequence collected by [`collect`](super::collect).
//!
//! Invariant: the elements are read with a [`Seed`] of the same scope, so nested
//! slices and strings land in the scope too, and the slice is returned only once its
//! last element is in place.
use core::fmt;
use core::marker::PhantomData;

use serde::de::{Deserializer, SeqAccess, Visitor};

use crate::scope::place::Place;

use super::collect::{collect, Source};
use super::trait_in::{DeserializeIn, Ghost, Seed};

/// A serde sequence as a [`Source`] of `T`s read into the scope.
struct SeqSource<'s, 'de, P, T, A> {
    scope: P,
    seq: A,
    _t: Ghost<'s, (&'de (), T)>,
}

impl<'de, 's, P, T, A> Source<T> for SeqSource<'s, 'de, P, T, A>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    A: SeqAccess<'de>,
{
    type Error = A::Error;
    #[inline]
    fn next(&mut self) -> Result<Option<T>, A::Error> {
        self.seq.next_element_seed(Seed::<P, T>::new(self.scope))
    }
    fn hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// The visitor of a slice.
struct SliceIn<'s, P, T>(P, PhantomData<fn() -> (&'s (), T)>);

impl<'de, 's, P: Place<'s> + Copy, T: DeserializeIn<'s> + 's> Visitor<'de> for SliceIn<'s, P, T> {
    type Value = &'s mut [T];
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<&'s mut [T], A::Error> {
        collect(
            self.0,
            SeqSource {
                scope: self.0,
                seq,
                _t: PhantomData,
            },
        )
    }
}

impl<'s, T: DeserializeIn<'s>> DeserializeIn<'s> for &'s mut [T] {
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        deserializer.deserialize_seq(SliceIn::<P, T>(scope, PhantomData))
    }
}

impl<'s, T: DeserializeIn<'s>> DeserializeIn<'s> for &'s [T] {
    #[inline]
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        <&'s mut [T]>::deserialize_in(scope, deserializer).map(|s| &*s)
    }
}
