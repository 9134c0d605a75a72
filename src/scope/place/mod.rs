//! One placement API: every placement method, written once over a small core.
//!
//! Three surfaces place values: a [`ScopeStack`](crate::ScopeStack), one thread's
//! [`LocalScope`](crate::LocalScope), and a shared `&`[`ConcurrentScope`](crate::ConcurrentScope).
//! They differ in three things only, and those make up the private trait [`Core`]:
//!
//! - **the raw bump**: a fast path for small constant layouts, the full path for any
//!   layout, and the room at the top of this surface's own region (the scope's cursor,
//!   or the calling thread's chunk), where a slice being collected or text being
//!   formatted can grow in place;
//! - **the finalizer record**: where a finished value's record is linked (the scope's
//!   chain, the thread's chain, or the concurrent scope's shared overflow chain), and
//!   whether runs of one type may share a record;
//! - **the error context**: which scope an error names, and what a panic prints.
//!
//! Every method (`new_pod`, `new_object`, the `alloc_slice_*` family, `alloc_iter` with
//! its grow-in-place, text, raw and uninitialised memory, the allocator-api2 calls) is a
//! generic function in this folder over [`Core`]. The public inherent methods of each
//! surface and the public [`Place`] trait are one-line wrappers around them, with the
//! docs. Generic functions are `#[inline]`, so each surface compiles to the code it had
//! when it kept a copy of its own.
//!
//! Invariants this module keeps:
//! - A value is fully written before a finalizer record makes it visible to a chain,
//!   and a record is linked at most once.
//! - The drop rule (see [`crate::rules`]) rides on the wrappers, not on the core: the
//!   generic functions that link a finalizer are `unsafe`, and each wrapper states why
//!   its bounds (`'static`, plus `Send` on concurrent surfaces) make the call sound.
//! - Room at the top of a region is moved only by the surface that owns it, and only
//!   over bytes nothing else has been handed (see [`Core::set_top`]).

pub(crate) mod alloc_api;
mod api;
mod arrays;
mod collect;
pub(crate) mod core;
mod raw;
mod slices;
mod text;
mod values;

pub(crate) use self::core::or_fail;
#[cfg(feature = "tracy")]
pub(crate) use self::core::placed;
pub use self::core::{Core, Handle};
pub(crate) use alloc_api::allocator_through_core;
pub use api::{Place, Sealed};
pub(crate) use arrays::{check_capacity, try_alloc_array_uninit};
pub(crate) use collect::{try_alloc_iter, try_alloc_iter_exact, try_alloc_iter_pod};
pub(crate) use raw::{try_alloc_layout, try_alloc_raw, try_alloc_uninit_slice};
pub(crate) use slices::{
    try_alloc_slice_clone, try_alloc_slice_copy, try_alloc_slice_fill_clone,
    try_alloc_slice_fill_copy, try_alloc_slice_fill_default, try_alloc_slice_fill_with,
};
pub(crate) use text::{try_alloc_fmt, try_alloc_str};
pub(crate) use values::{
    new_pod, try_alloc_uninit, try_new_object, try_new_object_unchecked, try_new_object_with,
    try_new_pod, try_new_pod_with,
};
