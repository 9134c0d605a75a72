//! The trait [`DeserializeIn`], the seed that carries a scope down a value ([`Seed`]),
//! and the proof a type gives that its values may get a finalizer ([`DropRule`]).
//!
//! Invariant: a [`DropRule`] that allows a finalizer exists only for `Send + 'static`
//! types (its one constructor that allows it says so in its bounds), so placing a value
//! with drop glue under such a rule keeps the drop rule of [`crate::rules`].
use core::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer};

use crate::scope::place::Place;

/// A value deserialized into a scope: its references point into the scope `'s`.
///
/// `T::deserialize_in(scope, deserializer)` reads one `T`, placing what it references
/// (strings, slices, boxed values) in `scope`, which may be any kind of scope: a
/// `&ScopeStack`, a `&Scope`, a [`LocalScope`](crate::LocalScope), a
/// `&`[`ConcurrentScope`](crate::ConcurrentScope) or the scope of a slot being loaded.
/// Each scope kind also has a `deserialize` method that reads better at the call site
/// (`level.deserialize::<Level>(&mut de)`).
///
/// Implemented for serde's data model (integers, floats, `bool`, `char`, `()`,
/// `Option`, tuples, arrays), `&'s str`, `&'s [T]`, `&'s T` (and their `mut` forms),
/// [`ScopeMap`](crate::serde::ScopeMap) and [`Serde`](crate::serde::Serde); for your own
/// structs and enums, `#[derive(DeserializeIn)]` (feature `derive`) or an impl by hand
/// that passes a [`Seed`] for each nested value:
///
/// ```
/// use scope_stack::serde::{DeserializeIn, Seed};
/// use scope_stack::{LinearAllocator, Place};
/// use serde::de::{Deserializer, SeqAccess, Visitor, Error};
///
/// /// A name and a position, written `["frog", [1.0, 2.0]]` in the file.
/// struct Spawn<'s> { name: &'s str, at: [f32; 2] }
///
/// impl<'s> DeserializeIn<'s> for Spawn<'s> {
///     fn deserialize_in<'de, P, D>(scope: P, de: D) -> Result<Self, D::Error>
///     where
///         P: Place<'s> + Copy,
///         D: Deserializer<'de>,
///     {
///         struct V<'s, P>(P, core::marker::PhantomData<&'s ()>);
///         impl<'de, 's, P: Place<'s> + Copy> Visitor<'de> for V<'s, P> {
///             type Value = Spawn<'s>;
///             fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
///                 f.write_str("a spawn")
///             }
///             fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Spawn<'s>, A::Error> {
///                 let name = seq.next_element_seed(Seed::new(self.0))?
///                     .ok_or_else(|| A::Error::invalid_length(0, &self))?;
///                 let at = seq.next_element_seed(Seed::new(self.0))?
///                     .ok_or_else(|| A::Error::invalid_length(1, &self))?;
///                 Ok(Spawn { name, at })
///             }
///         }
///         de.deserialize_tuple(2, V(scope, core::marker::PhantomData))
///     }
/// }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#"[["frog", [1, 2]], ["toad", [3, 4]]]"#);
///     let spawns: &[Spawn] = level.deserialize(&mut de).unwrap();
///     assert_eq!((spawns[1].name, spawns[1].at), ("toad", [3.0, 4.0]));
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// A deserialized reference lives as long as its scope, and no longer:
///
/// ```compile_fail,E0597
/// use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// let mut kept: &str = "";
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#""frog""#);
///     kept = level.deserialize::<&str>(&mut de).unwrap(); // error: `level` dies here
/// });
/// println!("{kept}");
/// ```
pub trait DeserializeIn<'s>: Sized {
    /// Whether deserializing a `Self` may place anything in the scope (strings, slices,
    /// boxed values). A sequence of values that place nothing grows in place at the top
    /// of the scope, with no staging. Left at its default (`true`) it is always right;
    /// it only picks a faster path.
    #[doc(hidden)]
    const PLACES: bool = true;

    /// Whether a `Self` that needs drop may get a finalizer (see [`DropRule`]). The
    /// default allows none: such a `Self` is deserialized by value only (a slot's root,
    /// or what `deserialize` returns), not behind `&'s T` or in a slice.
    #[doc(hidden)]
    const DROP: DropRule<Self> = DropRule::none();

    /// Deserializes one `Self`, placing what it references in `scope`.
    ///
    /// # Errors
    /// The deserializer's error: bad input, a type mismatch, a missing field, or a
    /// scope without room (`D::Error::custom` with the [`AllocError`](crate::AllocError)'s
    /// text, which names the scope and the bytes asked for, if the format keeps
    /// messages: postcard drops them; a slot's file load keeps the `AllocError` beside
    /// the format's error, see [`LoadError`](crate::serde::LoadError)).
    ///
    /// ```
    /// use scope_stack::serde::DeserializeIn;
    /// use scope_stack::LinearAllocator;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
    /// memory.scope("level", |level| {
    ///     let mut de = serde_json::Deserializer::from_str(r#"["oak", "elm"]"#);
    ///     let trees = <&[&str]>::deserialize_in(&**level, &mut de).unwrap();
    ///     assert_eq!(trees, ["oak", "elm"]);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    fn deserialize_in<'de, P, D>(scope: P, deserializer: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>;
}

/// Whether values of `T` that need drop may be placed with a finalizer: only when `T`
/// is `Send + 'static`, which [`finalize`](Self::finalize) requires (the drop rule of
/// [`crate::rules`]). A type states it through the hidden `DROP` item of
/// [`DeserializeIn`]; the default is [`none`](Self::none).
///
/// ```
/// use scope_stack::serde::DropRule;
/// const OWNED: DropRule<String> = DropRule::finalize();
/// const BORROWED: DropRule<&str> = DropRule::none();
/// assert!(OWNED.allows_finalizer() && !BORROWED.allows_finalizer());
/// ```
///
/// A type that borrows cannot claim it, not even through the rule of its `'static`
/// form (the rule is invariant in `T`):
///
/// ```compile_fail
/// use scope_stack::serde::DropRule;
/// fn rule<'a>() -> DropRule<Vec<&'a str>> {
///     DropRule::<Vec<&'static str>>::finalize() // error: lifetime may not live long enough
/// }
/// ```
///
/// ```compile_fail,E0597
/// use scope_stack::serde::DropRule;
/// fn rule<'a>(_: &'a str) -> DropRule<Vec<&'a str>> {
///     DropRule::finalize() // error: `Vec<&'a str>` is not `'static`
/// }
/// let text = String::from("frog");
/// let _ = rule(&text);
/// ```
pub struct DropRule<T> {
    finalize: bool,
    /// Invariant in `T`: a rule for `Foo<'static>` must not pass for `Foo<'s>`.
    _t: PhantomData<fn(T) -> T>,
}

impl<T> Clone for DropRule<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DropRule<T> {}

impl<T> DropRule<T> {
    /// No finalizer: a `T` that needs drop is placed by value only.
    ///
    /// ```
    /// # use scope_stack::serde::DropRule;
    /// assert!(!DropRule::<&str>::none().allows_finalizer());
    /// ```
    pub const fn none() -> Self {
        DropRule {
            finalize: false,
            _t: PhantomData,
        }
    }

    /// Whether a `T` that needs drop may get a finalizer.
    ///
    /// ```
    /// # use scope_stack::serde::DropRule;
    /// assert!(DropRule::<u32>::finalize().allows_finalizer());
    /// ```
    pub const fn allows_finalizer(self) -> bool {
        self.finalize
    }

    /// The rule of a type whose `Send` and `'static` follow from its parts (a tuple,
    /// an array, an `Option`): allowed when `allowed` is (each part allowed).
    pub(crate) const fn structural(allowed: bool) -> Self {
        DropRule {
            finalize: allowed,
            _t: PhantomData,
        }
    }
}

impl<T: Send + 'static> DropRule<T> {
    /// A finalizer is allowed: `T` is `Send + 'static`.
    ///
    /// ```
    /// # use scope_stack::serde::DropRule;
    /// const RULE: DropRule<Vec<u8>> = DropRule::finalize();
    /// assert!(RULE.allows_finalizer());
    /// ```
    pub const fn finalize() -> Self {
        DropRule {
            finalize: true,
            _t: PhantomData,
        }
    }
}

/// Fails the build when a `T` that needs drop would be placed without a rule that
/// allows its finalizer.
#[inline(always)]
pub(crate) fn assert_placeable<'s, T: DeserializeIn<'s>>() {
    const {
        assert!(
            !core::mem::needs_drop::<T>() || T::DROP.allows_finalizer(),
            "DeserializeIn: this type needs drop but may not get a finalizer (it is not \
             Send + 'static, or does not say so through `DROP`); deserialize it by value"
        )
    }
}

/// Carries a scope down a value: a serde [`DeserializeSeed`] that deserializes a `T`
/// with [`DeserializeIn::deserialize_in`] into `scope`. Pass one wherever serde takes a
/// seed (`next_element_seed`, `next_value_seed`, `newtype_variant_seed`).
///
/// ```
/// use scope_stack::serde::Seed;
/// use scope_stack::LinearAllocator;
/// use serde::de::DeserializeSeed;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let mut de = serde_json::Deserializer::from_str(r#""castle""#);
///     let name: &str = Seed::new(&**level).deserialize(&mut de).unwrap();
///     assert_eq!(name, "castle");
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct Seed<'s, P, T> {
    scope: P,
    _t: PhantomData<fn() -> (&'s (), T)>,
}

impl<'s, P: Place<'s> + Copy, T> Seed<'s, P, T> {
    /// A seed that deserializes a `T` into `scope`.
    ///
    /// ```
    /// # use scope_stack::{serde::Seed, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let _seed: Seed<_, &[u8]> = Seed::new(&**level);
    /// # });
    /// ```
    #[inline]
    pub fn new(scope: P) -> Self {
        Seed {
            scope,
            _t: PhantomData,
        }
    }
}

impl<P: Copy, T> Clone for Seed<'_, P, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Copy, T> Copy for Seed<'_, P, T> {}

impl<'de, 's, P: Place<'s> + Copy, T: DeserializeIn<'s>> DeserializeSeed<'de> for Seed<'s, P, T> {
    type Value = T;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_in(self.scope, deserializer)
    }
}

/// A marker for a helper that reads `T`s into a scope of lifetime `'s`.
pub(crate) type Ghost<'s, T> = PhantomData<fn() -> (&'s (), T)>;

/// An allocation error as the deserializer's error: its text names the scope and the
/// bytes asked for, and says where the bytes the load placed so far go (a plain scope
/// keeps them until it ends, see the module docs; a slot is freed).
///
/// A format may drop the text (postcard's error for every message is "Serde
/// Deserialization Error"), so the error itself is also kept aside for this thread
/// (feature `std`), with whether the format wrote its text down: a slot's file load
/// ([`Slots::load_from`](crate::Slots::load_from)) takes it back and returns it beside
/// the format's error ([`LoadError`](crate::serde::LoadError)).
#[cold]
#[inline(never)]
pub(crate) fn alloc_error<E: serde::de::Error>(e: crate::error::AllocError) -> E {
    /// The allocation error, then the note; `shown` turns true once the whole text was
    /// written, which a format that keeps the message does inside `custom`.
    struct Text<'a> {
        error: crate::error::AllocError,
        shown: &'a core::cell::Cell<bool>,
    }
    impl core::fmt::Display for Text<'_> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(
                f,
                "{}; the load stopped, and what it placed stays taken until its scope \
                 ends (a slot being loaded is freed instead)",
                self.error
            )?;
            self.shown.set(true);
            Ok(())
        }
    }
    let shown = core::cell::Cell::new(false);
    let err = E::custom(Text {
        error: e,
        shown: &shown,
    });
    record(Recorded {
        error: e,
        shown: shown.get(),
    });
    err
}

/// An allocation error that [`alloc_error`] turned into a format's error, and whether
/// the format wrote its text (if it did, the format's own message already says it).
#[derive(Clone, Copy)]
pub(crate) struct Recorded {
    /// The error the scope returned.
    pub(crate) error: crate::error::AllocError,
    /// The format formatted the whole text in `custom` (serde_json does; postcard
    /// does not).
    pub(crate) shown: bool,
}

#[cfg(feature = "std")]
std::thread_local! {
    /// The last allocation error of a load on this thread. A slot's file load clears
    /// it when it starts and takes it when it fails, so it never reports an error that
    /// an earlier load (a slot's or a plain scope's) left here; a load on a loader
    /// thread finds its own.
    static LAST_ALLOC_ERROR: core::cell::Cell<Option<Recorded>> =
        const { core::cell::Cell::new(None) };
}

/// Keeps `r` as this thread's last allocation error (feature `std`; without it, the
/// format's error is all there is).
#[inline]
fn record(r: Recorded) {
    #[cfg(feature = "std")]
    {
        // A thread that is exiting has no thread-locals left: the format's error
        // still goes back, without the record.
        let _ = LAST_ALLOC_ERROR.try_with(|last| last.set(Some(r)));
    }
    #[cfg(not(feature = "std"))]
    let _ = r;
}

/// Takes this thread's last allocation error, leaving none: a file load calls it when
/// it starts (to forget one that an earlier load left) and when it fails.
#[inline]
pub(crate) fn take_recorded() -> Option<Recorded> {
    #[cfg(feature = "std")]
    {
        LAST_ALLOC_ERROR.try_with(|last| last.take()).ok().flatten()
    }
    #[cfg(not(feature = "std"))]
    None
}
