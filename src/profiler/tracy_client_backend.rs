//! The Tracy side of the seam: each [`Event`] becomes one call into the Tracy client,
//! and a watcher thread says when a profiler connects.
//!
//! Invariant: every name handed to Tracy is a `'static` NUL-terminated string from the
//! name table (Tracy keeps the pointer), and no call is made while the client is not
//! running (a program built with tracy-client's `manual-lifetime` may not have started
//! it yet).
use super::event::Event;
use tracy_client::sys;

/// Starts, once per program, the thread that asks the Tracy client every
/// [`POLL_MS`](super::connection::POLL_MS) ms whether a profiler is connected and tells the seam
/// when that changes. (Asking on each event would be a call into the C++ client per
/// event; the watcher makes it one relaxed load. A profiler that disconnects and
/// connects again within one poll is taken for the same connection.)
pub(super) fn watch() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static STARTED: std::sync::Once = std::sync::Once::new();
    /// Set by the watcher once it has asked the client the first time.
    static RUNNING: AtomicBool = AtomicBool::new(false);
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name(std::string::String::from("scope-stack tracy watch"))
            .spawn(|| {
                let mut connected = false;
                loop {
                    let now = tracy_client::Client::is_connected();
                    if now != connected {
                        connected = now;
                        super::connection::set_connected(now);
                    }
                    // Release: pairs with the spawner's Acquire (orders nothing else;
                    // only that the thread is past its start).
                    RUNNING.store(true, Ordering::Release);
                    std::thread::sleep(std::time::Duration::from_millis(
                        super::connection::POLL_MS,
                    ));
                }
            });
        // Wait until the watcher has started and asked once, so that whatever a new
        // thread allocates as it starts is allocated here, at the first event, and not
        // later while the program runs a loop it wants free of the global heap (on a
        // loaded machine the thread may first run seconds later). Without the thread
        // nothing is ever shown; the program runs on.
        if spawned.is_ok() {
            while !RUNNING.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
        }
        drop(spawned);
    });
}

/// Sends `event` to the Tracy client, if it runs.
#[inline]
pub(super) fn send(event: Event<'_>) {
    if !tracy_client::Client::is_running() {
        return;
    }
    // Every name below is a NUL-terminated string that lives for the rest of the
    // program (`Name`'s fields are leaked `CStr`s), and the client runs (checked above).
    match event {
        Event::Alloc { pool, addr, size } => {
            // SAFETY: see above; Tracy reads the address as a number only.
            unsafe {
                sys::___tracy_emit_memory_alloc_named(
                    core::ptr::without_provenance::<core::ffi::c_void>(addr),
                    size,
                    pool.pool_c().as_ptr(),
                )
            }
        }
        Event::Free { pool, addr } => {
            // SAFETY: see above; the address was allocated in this pool earlier.
            unsafe {
                sys::___tracy_emit_memory_free_named(
                    core::ptr::without_provenance::<core::ffi::c_void>(addr),
                    pool.pool_c().as_ptr(),
                )
            }
        }
        Event::Discard { pool } => {
            // SAFETY: see above.
            unsafe { sys::___tracy_emit_memory_discard(pool.pool_c().as_ptr()) }
        }
        Event::Plot { plot, value } => {
            // SAFETY: see above.
            unsafe { sys::___tracy_emit_plot(plot.name_c().as_ptr(), value) }
        }
        Event::Message { text } => {
            if let Some(client) = tracy_client::Client::running() {
                client.message(text, 0);
            }
        }
    }
}
