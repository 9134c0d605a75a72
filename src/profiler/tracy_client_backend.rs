//! The Tracy side of the seam: each [`Event`] becomes one call into the Tracy client.
//!
//! Invariant: every name handed to Tracy is a `'static` NUL-terminated string from the
//! name table (Tracy keeps the pointer), and no call is made while the client is not
//! running (a program built with tracy-client's `manual-lifetime` may not have started
//! it yet).
use super::event::{Event, Plot};
use tracy_client::sys;

/// Sends `event` to the Tracy client, if it runs.
#[inline]
pub(super) fn send(event: Event<'_>) {
    if !tracy_client::Client::is_running() {
        return;
    }
    // SAFETY (all calls below): the client runs (checked above); every name is a
    // NUL-terminated string that lives for the rest of the program (`Name`'s fields are
    // leaked `CStr`s); `Free` and `Discard` name a pool that earlier events allocated
    // in; the message's pointer and length describe a live `str` for the call.
    match event {
        Event::Alloc { pool, addr, size } => unsafe {
            sys::___tracy_emit_memory_alloc_named(
                core::ptr::without_provenance::<core::ffi::c_void>(addr),
                size,
                pool.pool_c().as_ptr(),
            )
        },
        Event::Free { pool, addr } => unsafe {
            sys::___tracy_emit_memory_free_named(
                core::ptr::without_provenance::<core::ffi::c_void>(addr),
                pool.pool_c().as_ptr(),
            )
        },
        Event::Discard { pool } => unsafe {
            sys::___tracy_emit_memory_discard(pool.pool_c().as_ptr())
        },
        Event::Plot { plot, value } => {
            let name = match plot {
                Plot::Used(n) => n.used_c(),
                Plot::HighWater(n) => n.high_water_c(),
                Plot::Len(n) => n.len_c(),
            };
            // SAFETY: as above.
            unsafe { sys::___tracy_emit_plot(name.as_ptr(), value) }
        }
        Event::Message { text } => {
            if let Some(client) = tracy_client::Client::running() {
                client.message(text, 0);
            }
        }
    }
}
