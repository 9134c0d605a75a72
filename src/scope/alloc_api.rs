//! `allocator_api2::alloc::Allocator` for `&ScopeStack`, so `allocator_api2::vec::Vec`,
//! `hashbrown::HashMap` and friends can live in scope memory.
//!
//! Invariants this module keeps:
//! - The impl is for `&'a ScopeStack<'s>` only, never for an owned type: a collection
//!   can hold a shared borrow of the scope, which cannot rewind it (the scope rewinds
//!   only when its closure ends, and the borrow cannot outlive that), so memory handed
//!   to a collection stays valid as long as the collection can reach it. This is the
//!   lesson of bump-scope issue #137: an allocator whose reset is safe must not be the
//!   `Allocator` itself.
//! - While a collection holds `&ScopeStack`, the scope cannot open a child (that needs
//!   `&mut`), so "the block's last allocation" is always this scope's own.
//! - `deallocate`, `grow` and `shrink` act in place only on the most recent allocation
//!   (the one ending at the bump pointer); anything else is left where it is until the
//!   scope unwinds. Collections never get finalizer records: they drop themselves.

use crate::scope::place::allocator_through_core;
use crate::scope::{Scope, ScopeStack};

// SAFETY (both): memory returned by `allocate` comes from the scope's bump region, is
// exclusive to the caller, and stays valid until the scope unwinds, which cannot happen
// while a `&ScopeStack` or `&Scope` (and so any copy of this allocator) is alive. Moving
// the bump pointer back only releases bytes the caller has just given up, and only when
// they are the last bytes handed out (nothing live lies above them).
allocator_through_core!(&ScopeStack<'_>, |this| *this);
allocator_through_core!(&Scope<'_, '_>, |this| &***this);
