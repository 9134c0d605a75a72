//! Builders that grow in place: [`ScopeVec`] and [`ScopeString`], a vector and a string
//! that take the top of a scope's region while they live and freeze into a slice or a
//! `str` of the scope's lifetime, with no copy.
//!
//! A builder claims room at the top of its surface's region (the scope's cursor, or the
//! calling thread's chunk of a concurrent scope) and grows there by moving the top up.
//! On a [`ScopeStack`](crate::ScopeStack) it borrows the scope mutably, so nothing else
//! can allocate in that scope (nor open a child) while it lives and it always grows in
//! place. A [`LocalScope`](crate::LocalScope) is a `Copy` handle and a concurrent scope is
//! shared, so there a mutable borrow would exclude nothing: their builders borrow
//! shared and check at run time instead.
//!
//! Invariants this module keeps:
//! - A builder grows in place only while the end of its room is still the region's top
//!   (checked on every growth, on every surface); otherwise it moves its elements to
//!   fresh room and leaves the old bytes as a hole, never reused while the scope lives.
//!   So no safe path lets room be grown, shrunk or given back except by the surface
//!   that handed it out, and only while it is the newest allocation there.
//! - The first `len` elements are initialised, the rest of the room is not; the
//!   builder owns them until it is frozen or dropped. Dropping drops each element once
//!   (even when one destructor panics) and gives the room back if it is still the top.
//! - Freezing keeps the elements where they are and gives back the room past them when
//!   it is still the top (no slack beyond alignment). A frozen slice of a type that
//!   needs drop gets one slice record, linked only after every element is in place,
//!   and only for types the surface's drop rule admits (`'static`, plus `Send` on a
//!   concurrent scope: see [`crate::rules`]); the `_pod` twin takes types that need no
//!   drop and may borrow.
//! - While a builder lives, statistics read from outside (reports of a slot set, the
//!   profiler) count its claimed room as in use: a bound, exact again once it is frozen
//!   or dropped. (A builder saves no reservation gap, unlike `alloc_iter`: builders on
//!   different slots of one block may live at once and end in any order, which the
//!   block's one innermost gap cannot describe.) With the `tracy` feature the profiler
//!   sees a builder's first claim only, not its growth in place nor its early return;
//!   the scope's close discards it all the same.

pub(crate) mod string;
mod surface;
pub(crate) mod vec;

pub use string::ScopeString;
pub(crate) use vec::sealed;
pub use vec::{Finalizes, ScopeVec};
