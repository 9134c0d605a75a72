//! The block: one fixed region of memory and its bump cursor. Nothing here knows about
//! scopes.
//!
//! This layer owns the memory. Invariants: after construction nothing here calls the
//! global allocator; every pointer handed out is derived from the block's base (one
//! provenance); the active cursor keeps `cur <= limit <= end`. The scope layer above
//! decides who may move the cursor; the block only records where it is, the high-water
//! mark and the innermost live scope's record (as an opaque address).

pub(crate) mod cursor;
pub mod debug_fill;
pub(crate) mod linear;
pub(crate) mod reservation;
