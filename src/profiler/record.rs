//! The recorder the seam writes to in this crate's unit tests (instead of Tracy), so a
//! test can check the exact events a scripted program makes.
//!
//! Invariant: while a [`Recording`] lives, every event whose pool or plot name starts
//! with its prefix (or whose message contains it) is appended, in the order the
//! recorder's lock was taken; at most one recording runs at a time. The recording also
//! says whether a profiler is connected (it stands in for the Tracy client's watcher):
//! connected from [`Recording::start`], or from [`Recording::connect`] after
//! [`Recording::start_disconnected`]; disconnected once it ends.
use std::string::{String, ToString};
use std::sync::{Mutex, MutexGuard};
use std::vec::Vec;

use super::event::Event;

/// An event as recorded: names as text, messages copied.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Recorded {
    Alloc {
        pool: &'static str,
        addr: usize,
        size: usize,
    },
    Free {
        pool: &'static str,
        addr: usize,
    },
    Discard {
        pool: &'static str,
    },
    Plot {
        name: String,
        value: f64,
    },
    Message {
        text: String,
    },
    /// A profiler connected ([`Recording::connect`]): what follows is a new capture.
    Connected,
}

struct State {
    prefix: String,
    events: Vec<Recorded>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Records the events of names starting with a prefix until [`Recording::finish`].
pub(crate) struct Recording {
    _one: MutexGuard<'static, ()>,
}

impl Recording {
    /// Starts recording events whose names start with `prefix`, with a profiler
    /// connected.
    pub(crate) fn start(prefix: &str) -> Recording {
        let rec = Recording::start_disconnected(prefix);
        super::connection::set_connected(true);
        rec
    }

    /// Starts recording events whose names start with `prefix`, with no profiler
    /// connected yet.
    pub(crate) fn start_disconnected(prefix: &str) -> Recording {
        let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        super::connection::set_connected(false);
        *STATE.lock().unwrap_or_else(|e| e.into_inner()) = Some(State {
            prefix: prefix.to_string(),
            events: Vec::new(),
        });
        Recording { _one: one }
    }

    /// A profiler connects (a new connection), marked in the recording.
    pub(crate) fn connect(&self) {
        if let Some(state) = STATE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            state.events.push(Recorded::Connected);
        }
        super::connection::set_connected(true);
    }

    /// The profiler goes away.
    pub(crate) fn disconnect(&self) {
        super::connection::set_connected(false);
    }

    /// Stops and returns what was recorded.
    pub(crate) fn finish(self) -> Vec<Recorded> {
        super::connection::set_connected(false);
        STATE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map(|s| s.events)
            .unwrap_or_default()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        super::connection::set_connected(false);
        STATE.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// Appends `event` if a recording wants it.
pub(super) fn push(event: Event<'_>) {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(state) = state.as_mut() else { return };
    let recorded = match event {
        Event::Alloc { pool, addr, size } => Recorded::Alloc {
            pool: pool.text(),
            addr,
            size,
        },
        Event::Free { pool, addr } => Recorded::Free {
            pool: pool.text(),
            addr,
        },
        Event::Discard { pool } => Recorded::Discard { pool: pool.text() },
        Event::Plot { plot, value } => Recorded::Plot {
            name: plot.name_c().to_string_lossy().into_owned(),
            value,
        },
        Event::Message { text } => {
            if !text.contains(state.prefix.as_str()) {
                return;
            }
            Recorded::Message {
                text: text.to_string(),
            }
        }
    };
    let name: &str = match &recorded {
        Recorded::Alloc { pool, .. } | Recorded::Free { pool, .. } | Recorded::Discard { pool } => {
            pool
        }
        Recorded::Plot { name, .. } => name,
        Recorded::Message { .. } | Recorded::Connected => "",
    };
    if name.is_empty() || name.starts_with(state.prefix.as_str()) {
        state.events.push(recorded);
    }
}
