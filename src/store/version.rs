//! One version of a store's object: the value, its pin count and its garbage link.
//!
//! This module owns [`Version`]. Invariant: a version's value never changes once it is
//! published; it is freed only by `end_frame`, and only when no `Pinned` holds it.

use super::table::NONE;
use crate::sync::AtomicU32;

/// Pins on one version beyond which [`Store::pin`] panics (a leak of pins, like an
/// `Arc` count overflow).
pub(super) const MAX_PINS: u32 = 1 << 31;

/// One version of an object: the value and the bookkeeping `end_frame` needs.
pub(crate) struct Version<T> {
    pub(super) value: T,
    /// Live [`Pinned`]s of this version.
    pub(super) pins: AtomicU32,
    /// Garbage-list link, written once when the version is retired.
    pub(super) next: AtomicU32,
}

impl<T> Version<T> {
    pub(super) fn new(value: T) -> Version<T> {
        Version {
            value,
            pins: AtomicU32::new(0),
            next: AtomicU32::new(NONE),
        }
    }
}
