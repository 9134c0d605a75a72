//! [`DeserializeIn`] for serde's data model: numbers, `bool`, `char`, `()`,
//! `PhantomData`, `Option`, tuples and arrays.
//!
//! Invariant: a type here places something in the scope only through its parts
//! (`PLACES` is the OR of theirs), and allows a finalizer only when each part does.
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};

use crate::scope::place::Place;

use super::trait_in::{DeserializeIn, DropRule, Seed};

/// Types that place nothing and are `Send + 'static`: serde's own `Deserialize`.
macro_rules! plain {
    ($($t:ty),* $(,)?) => {$(
        impl<'s> DeserializeIn<'s> for $t {
            const PLACES: bool = false;
            const DROP: DropRule<Self> = DropRule::finalize();
            #[inline]
            fn deserialize_in<'de, P, D>(_scope: P, deserializer: D) -> Result<Self, D::Error>
            where
                P: Place<'s> + Copy,
                D: Deserializer<'de>,
            {
                <$t as Deserialize<'de>>::deserialize(deserializer)
            }
        }
    )*};
}

plain!(
    bool,
    char,
    (),
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    core::num::NonZeroU8,
    core::num::NonZeroU16,
    core::num::NonZeroU32,
    core::num::NonZeroU64,
    core::num::NonZeroUsize,
    core::num::NonZeroI32,
    core::num::NonZeroI64,
);

impl<'s, T: ?Sized + 'static> DeserializeIn<'s> for PhantomData<T> {
    const PLACES: bool = false;
    #[inline]
    fn deserialize_in<'de, P, D>(_scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        PhantomData::<T>::deserialize(deserializer)
    }
}

impl<'s, T: DeserializeIn<'s>> DeserializeIn<'s> for Option<T> {
    const PLACES: bool = T::PLACES;
    const DROP: DropRule<Self> = DropRule::structural(T::DROP.allows_finalizer());
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        struct OptionIn<'s, P, T>(P, PhantomData<fn() -> (&'s (), T)>);
        impl<'de, 's, P: Place<'s> + Copy, T: DeserializeIn<'s>> Visitor<'de> for OptionIn<'s, P, T> {
            type Value = Option<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an option")
            }
            fn visit_none<E: Error>(self) -> Result<Option<T>, E> {
                Ok(None)
            }
            fn visit_unit<E: Error>(self) -> Result<Option<T>, E> {
                Ok(None)
            }
            fn visit_some<D2: Deserializer<'de>>(self, de: D2) -> Result<Option<T>, D2::Error> {
                T::deserialize_in(self.0, de).map(Some)
            }
        }
        deserializer.deserialize_option(OptionIn::<P, T>(scope, PhantomData))
    }
}

/// Tuples: a sequence of exactly their length.
macro_rules! tuple {
    ($len:expr => $($name:ident $idx:tt)+) => {
        impl<'s, $($name: DeserializeIn<'s>),+> DeserializeIn<'s> for ($($name,)+) {
            const PLACES: bool = false $(|| $name::PLACES)+;
            const DROP: DropRule<Self> =
                DropRule::structural(true $(&& $name::DROP.allows_finalizer())+);
            fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
            where
                P: Place<'s> + Copy,
                D: Deserializer<'de>,
            {
                struct TupleIn<'s, P, T>(P, PhantomData<fn() -> (&'s (), T)>);
                impl<'de, 's, P: Place<'s> + Copy, $($name: DeserializeIn<'s>),+> Visitor<'de>
                    for TupleIn<'s, P, ($($name,)+)>
                {
                    type Value = ($($name,)+);
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "a tuple of {}", $len)
                    }
                    #[allow(non_snake_case)]
                    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                        $(
                            let $name = match seq.next_element_seed(Seed::<P, $name>::new(self.0))? {
                                Some(v) => v,
                                None => return Err(A::Error::invalid_length($idx, &self)),
                            };
                        )+
                        Ok(($($name,)+))
                    }
                }
                deserializer.deserialize_tuple($len, TupleIn::<P, ($($name,)+)>(scope, PhantomData))
            }
        }
    };
}

tuple!(1 => T0 0);
tuple!(2 => T0 0 T1 1);
tuple!(3 => T0 0 T1 1 T2 2);
tuple!(4 => T0 0 T1 1 T2 2 T3 3);
tuple!(5 => T0 0 T1 1 T2 2 T3 3 T4 4);
tuple!(6 => T0 0 T1 1 T2 2 T3 3 T4 4 T5 5);
tuple!(7 => T0 0 T1 1 T2 2 T3 3 T4 4 T5 5 T6 6);
tuple!(8 => T0 0 T1 1 T2 2 T3 3 T4 4 T5 5 T6 6 T7 7);
tuple!(9 => T0 0 T1 1 T2 2 T3 3 T4 4 T5 5 T6 6 T7 7 T8 8);
tuple!(10 => T0 0 T1 1 T2 2 T3 3 T4 4 T5 5 T6 6 T7 7 T8 8 T9 9);
tuple!(11 => T0 0 T1 1 T2 2 T3 3 T4 4 T5 5 T6 6 T7 7 T8 8 T9 9 T10 10);
tuple!(12 => T0 0 T1 1 T2 2 T3 3 T4 4 T5 5 T6 6 T7 7 T8 8 T9 9 T10 10 T11 11);

/// The elements of an array built so far: dropped if the array is not finished.
struct Partial<T, const N: usize> {
    items: [MaybeUninit<T>; N],
    len: usize,
}

impl<T, const N: usize> Drop for Partial<T, N> {
    fn drop(&mut self) {
        // SAFETY: the first `len` items were written and not moved out.
        unsafe {
            core::ptr::drop_in_place(core::ptr::slice_from_raw_parts_mut(
                self.items.as_mut_ptr().cast::<T>(),
                self.len,
            ))
        };
    }
}

impl<'s, T: DeserializeIn<'s>, const N: usize> DeserializeIn<'s> for [T; N] {
    const PLACES: bool = N != 0 && T::PLACES;
    const DROP: DropRule<Self> = DropRule::structural(T::DROP.allows_finalizer());
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        struct ArrayIn<'s, P, T, const N: usize>(P, PhantomData<fn() -> (&'s (), T)>);
        impl<'de, 's, P: Place<'s> + Copy, T: DeserializeIn<'s>, const N: usize> Visitor<'de>
            for ArrayIn<'s, P, T, N>
        {
            type Value = [T; N];
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of {N}")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[T; N], A::Error> {
                let mut out = Partial::<T, N> {
                    items: [const { MaybeUninit::uninit() }; N],
                    len: 0,
                };
                while out.len < N {
                    match seq.next_element_seed(Seed::<P, T>::new(self.0))? {
                        Some(v) => {
                            out.items[out.len].write(v);
                            out.len += 1;
                        }
                        None => return Err(A::Error::invalid_length(out.len, &self)),
                    }
                }
                out.len = 0;
                // SAFETY: all `N` items are written; `len` is 0, so the guard drops none
                // of them, and `[MaybeUninit<T>; N]` has the layout of `[T; N]`.
                Ok(unsafe { core::ptr::read(out.items.as_ptr().cast::<[T; N]>()) })
            }
        }
        deserializer.deserialize_tuple(N, ArrayIn::<P, T, N>(scope, PhantomData))
    }
}
