//! allocator-api2's `Allocator` for `&ConcurrentScope` and `&LocalScope`, so each
//! thread can grow its own `allocator_api2::vec::Vec` or `hashbrown::HashMap` in a
//! concurrent scope.
//!
//! Invariant: memory is moved back (freed, or shrunk or grown in place) only when it is
//! the newest allocation in the calling thread's own chunk; anything else, including
//! every call from a thread that did not make the allocation, leaves the bytes where
//! they are until the scope closes. The borrow of the scope keeps every collection
//! inside the closure, so its memory stays valid as long as it can be reached.

use crate::scope::place::allocator_through_core;

use super::local::LocalScope;
use super::ConcurrentScope;

// SAFETY: memory from `allocate` is fresh and exclusive to the caller, and stays valid
// until the scope closes, which cannot happen while a `&LocalScope` (or any copy of this
// allocator) lives. Bytes move back only when they are the newest of this thread's own
// chunk and the caller gave them up.
allocator_through_core!(&LocalScope<'_>, |this| *this);

// SAFETY: as for `&LocalScope`: each call acts through the calling thread's own
// `LocalScope`, so memory another thread allocated is never moved back here (it is not
// the newest allocation of this thread's chunk).
allocator_through_core!(&ConcurrentScope<'_>, |this| &this.local());
