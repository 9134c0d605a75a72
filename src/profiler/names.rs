//! The name table: one leaked, NUL-terminated copy of each distinct profiler name,
//! made only while a profiler is connected, and bounded.
//!
//! Invariants:
//! - A [`Name`] is never freed, so the pointers Tracy keeps stay valid. The table grows
//!   only when a pool opens while a profiler is connected and its text has no free
//!   name yet (two heap allocations per new name, one more per new text; none per
//!   event, none while no profiler is connected).
//! - The table holds at most [`HARD_LIMIT`] names. Once it holds [`NAME_LIMIT`], a text
//!   it has never seen is shown under its *base name* (each run of digits written
//!   `*`: `frames/frame 1234` becomes `frames/frame *`), so names that count frames
//!   share one name; past [`HARD_LIMIT`] a pool that finds no free name is not shown.
//! - `live` is set by [`acquire`] (under the table's lock) and cleared by [`release`]; at
//!   most one live pool holds a given `Name` at a time. A text already live gets the
//!   next free variant, `text#2`, `text#3`, ...
//! - `connection` and `shown` describe the pool holding the name: the profiler
//!   connection it was named in (events go out only while that connection lasts) and
//!   whether the profiler has been shown an allocation in it (a discard goes out only
//!   then: Tracy mis-times events after a discard of a pool it has not seen).
use std::boxed::Box;
use std::collections::HashMap;
use std::ffi::CStr;
use std::string::String;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::vec::Vec;

/// One profiler name and the plot names derived from it, for the rest of the program.
/// (Public in name only: its module is private.)
#[derive(Debug)]
pub struct Name {
    text: &'static str,
    #[cfg_attr(test, allow(dead_code))]
    pool: &'static CStr,
    used: &'static CStr,
    high_water: &'static CStr,
    len: &'static CStr,
    live: AtomicBool,
    /// The profiler connection the pool holding this name was named in (never 0).
    connection: AtomicUsize,
    /// Whether an allocation of the pool holding this name has been shown.
    shown: AtomicBool,
}

impl Name {
    /// The name as shown (`"level/forest"`).
    pub(crate) fn text(&self) -> &'static str {
        self.text
    }
    /// The pool name Tracy keeps.
    #[cfg_attr(test, allow(dead_code))]
    pub(crate) fn pool_c(&self) -> &'static CStr {
        self.pool
    }
    /// `"<name> used"`.
    pub(crate) fn used_c(&self) -> &'static CStr {
        self.used
    }
    /// `"<name> high-water"`.
    pub(crate) fn high_water_c(&self) -> &'static CStr {
        self.high_water
    }
    /// `"<name> len"`.
    pub(crate) fn len_c(&self) -> &'static CStr {
        self.len
    }
    /// Whether the profiler connection this pool was named in still lasts (`now` is
    /// the current one, 0 for none): one relaxed load of the name.
    #[inline(always)]
    pub(crate) fn is_current(&self, now: usize) -> bool {
        self.connection.load(Ordering::Relaxed) == now
    }
    /// Notes that an allocation of this pool was shown (a load, and a store only the
    /// first time).
    #[inline(always)]
    pub(crate) fn mark_shown(&self) {
        if !self.shown.load(Ordering::Relaxed) {
            self.shown.store(true, Ordering::Relaxed);
        }
    }
    /// Whether an allocation of this pool was shown since it was named.
    pub(crate) fn was_shown(&self) -> bool {
        self.shown.load(Ordering::Relaxed)
    }
}

/// Longest name text kept (longer paths are cut at a character boundary).
pub(crate) const MAX_NAME: usize = 200;

/// A short text built on the stack (cut at [`MAX_NAME`] bytes), for names made of
/// numbers and parts. (Public in name only, like [`Name`]: the `Core` trait's
/// profiler method takes one.)
pub struct Text {
    buf: [u8; MAX_NAME],
    len: usize,
}

impl Text {
    pub(crate) fn new() -> Text {
        Text {
            buf: [0; MAX_NAME],
            len: 0,
        }
    }
    pub(crate) fn as_str(&self) -> &str {
        // Only whole characters are written (see `write_str`).
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl core::fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let mut take = s.len().min(MAX_NAME - self.len);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

/// How many names the table makes before texts it has never seen share their base
/// name (see the module docs).
pub(crate) const NAME_LIMIT: usize = 1024;
/// How many names the table makes at most: room past [`NAME_LIMIT`] for base names
/// and for variants of names already made. Each costs about 150 bytes plus five
/// copies of its text (at most [`MAX_NAME`] bytes), so the table stays under about
/// 1.5 MiB.
pub(crate) const HARD_LIMIT: usize = NAME_LIMIT + 256;

/// The table: every name made so far, by the text it was asked for, with its
/// variants in order, and how many names that is.
struct Table {
    by_text: HashMap<&'static str, Vec<&'static Name>>,
    names: usize,
    /// Whether the profiler has been told that the table is full.
    full_told: bool,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// One leaked buffer holding `text`, then the NUL-terminated pool and plot names
/// (interior NULs, which would cut a name short in Tracy, shown as `?`).
fn make(text: &str, connection: usize) -> &'static Name {
    const SUFFIXES: [&str; 4] = ["", " used", " high-water", " len"];
    let clean: String = text
        .chars()
        .map(|c| if c == '\0' { '?' } else { c })
        .collect();
    let mut all = String::with_capacity(5 * clean.len() + 32);
    all.push_str(&clean);
    for suffix in SUFFIXES {
        all.push_str(&clean);
        all.push_str(suffix);
        all.push('\0');
    }
    let all: &'static str = Box::leak(all.into_boxed_str());
    let (text, mut rest) = all.split_at(clean.len());
    let mut c: [&CStr; 4] = [c""; 4];
    for slot in &mut c {
        let end = rest.find('\0').map_or(rest.len(), |i| i + 1);
        *slot = CStr::from_bytes_with_nul(&rest.as_bytes()[..end]).unwrap_or_default();
        rest = &rest[end..];
    }
    Box::leak(Box::new(Name {
        text,
        pool: c[0],
        used: c[1],
        high_water: c[2],
        len: c[3],
        live: AtomicBool::new(true),
        connection: AtomicUsize::new(connection),
        shown: AtomicBool::new(false),
    }))
}

/// `text` with each run of ASCII digits written `*` (into `out`).
fn base_name(text: &str, out: &mut Text) {
    use core::fmt::Write;
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                let _ = out.write_str("*");
            }
            in_digits = true;
        } else {
            in_digits = false;
            let _ = out.write_char(c);
        }
    }
}

/// Outcome of looking a text up.
enum Found {
    Name(&'static Name),
    /// The text is in the table but every variant is live, and the table is full.
    Full,
    /// The text is not in the table.
    Absent,
}

/// A free variant of `text`, or a new one if the table has room.
fn variant_of(table: &mut Table, text: &str, connection: usize) -> Found {
    let Some(variants) = table.by_text.get_mut(text) else {
        return Found::Absent;
    };
    for &name in variants.iter() {
        if name
            .live
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            name.connection.store(connection, Ordering::Relaxed);
            name.shown.store(false, Ordering::Relaxed);
            return Found::Name(name);
        }
    }
    if table.names >= HARD_LIMIT {
        return Found::Full;
    }
    let name = make(&std::format!("{text}#{}", variants.len() + 1), connection);
    variants.push(name);
    table.names += 1;
    Found::Name(name)
}

/// Makes the first name of `text` (the table has room).
fn first_of(table: &mut Table, text: &str, connection: usize) -> &'static Name {
    let name = make(text, connection);
    table.by_text.insert(name.text(), std::vec![name]);
    table.names += 1;
    name
}

/// A live pool name for `text` (at most [`MAX_NAME`] bytes), for a pool opened during
/// profiler connection `connection` (not 0): the first variant of that text no live
/// pool holds, made on first use; past [`NAME_LIMIT`] a new text's base name; past
/// [`HARD_LIMIT`] none ([`Full`]).
pub(crate) fn acquire(text: &str, connection: usize) -> Result<&'static Name, Full> {
    let mut guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let table = guard.get_or_insert_with(|| Table {
        by_text: HashMap::new(),
        names: 0,
        full_told: false,
    });
    let found = match variant_of(table, text, connection) {
        Found::Absent if table.names < NAME_LIMIT => Found::Name(first_of(table, text, connection)),
        Found::Absent => {
            let mut base = Text::new();
            base_name(text, &mut base);
            match variant_of(table, base.as_str(), connection) {
                Found::Absent if table.names < HARD_LIMIT => {
                    Found::Name(first_of(table, base.as_str(), connection))
                }
                Found::Absent => Found::Full,
                found => found,
            }
        }
        found => found,
    };
    match found {
        Found::Name(name) => Ok(name),
        _ => Err(Full {
            first: !core::mem::replace(&mut table.full_told, true),
        }),
    }
}

/// No name: the table is full.
#[derive(Debug)]
pub(crate) struct Full {
    /// Whether this is the first time (the profiler is told once).
    pub(crate) first: bool,
}

/// Frees `name` for the next pool of its text.
pub(crate) fn release(name: &'static Name) {
    name.live.store(false, Ordering::Release);
}

/// Keeps tests that fill the table (and reset it) apart from tests that read names.
#[cfg(test)]
pub(crate) fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Empties the table (for tests that count names; names already handed out stay
/// valid, as every name does).
#[cfg(test)]
pub(crate) fn reset() {
    *TABLE.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// How many names the table holds whose text starts with `prefix` (for tests).
#[cfg(test)]
pub(crate) fn count_with_prefix(prefix: &str) -> usize {
    TABLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or(0, |t| {
            t.by_text
                .values()
                .flatten()
                .filter(|n| n.text().starts_with(prefix))
                .count()
        })
}

/// How many names the table holds (for tests).
#[cfg(test)]
pub(crate) fn count() -> usize {
    TABLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or(0, |t| t.names)
}

/// `core::any::type_name::<T>()` without module paths: `Pool<level::Enemy>` reads
/// `Pool<Enemy>`, as the memory map writes it. Written into `buf`.
pub(crate) fn short_type<'b>(buf: &'b mut [u8; MAX_NAME], full: &str) -> &'b str {
    let mut len = 0;
    let bytes = full.as_bytes();
    let mut i = 0;
    while i < bytes.len() && len < MAX_NAME {
        if bytes[i] == b':' && bytes.get(i + 1) == Some(&b':') {
            // Drop the path segment just written.
            while len > 0 && (buf[len - 1].is_ascii_alphanumeric() || buf[len - 1] == b'_') {
                len -= 1;
            }
            i += 2;
            continue;
        }
        buf[len] = bytes[i];
        len += 1;
        i += 1;
    }
    let mut end = len;
    while core::str::from_utf8(&buf[..end]).is_err() {
        end -= 1;
    }
    core::str::from_utf8(&buf[..end]).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_name_is_never_handed_out_twice() {
        let _one = exclusive();
        let a = acquire("names_test/frame", 1).unwrap();
        let b = acquire("names_test/frame", 1).unwrap();
        assert_eq!(a.text(), "names_test/frame");
        assert_eq!(b.text(), "names_test/frame#2");
        release(a);
        let c = acquire("names_test/frame", 2).unwrap();
        assert!(core::ptr::eq(a, c), "the released name is reused");
        assert!(
            c.is_current(2) && !c.is_current(1),
            "for the new connection"
        );
        assert_eq!(c.used_c().to_str().unwrap(), "names_test/frame used");
        assert_eq!(c.pool_c().to_str().unwrap(), "names_test/frame");
        assert_eq!(c.len_c().to_str().unwrap(), "names_test/frame len");
        assert_eq!(
            b.high_water_c().to_str().unwrap(),
            "names_test/frame#2 high-water"
        );
        release(b);
        release(c);
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let _one = exclusive();
        let long = "é".repeat(150);
        let mut text = Text::new();
        core::fmt::Write::write_str(&mut text, &long).unwrap();
        let n = acquire(text.as_str(), 1).unwrap();
        assert!(n.text().len() <= MAX_NAME);
        assert!(n.text().chars().all(|c| c == 'é'));
        release(n);
    }

    #[test]
    fn interior_nuls_are_shown_as_question_marks() {
        let _one = exclusive();
        let n = acquire("names_test/a\0b", 1).unwrap();
        assert_eq!(n.pool_c().to_str().unwrap(), "names_test/a?b");
        release(n);
    }

    #[test]
    fn base_names_write_digit_runs_as_stars() {
        let mut out = Text::new();
        base_name("frames/frame 1234/job7x", &mut out);
        assert_eq!(out.as_str(), "frames/frame */job*x");
    }

    #[test]
    fn type_names_lose_their_module_paths() {
        let mut buf = [0; MAX_NAME];
        assert_eq!(
            short_type(&mut buf, "Pool<level::Enemy<alloc::string::String>>"),
            "Pool<Enemy<String>>"
        );
    }
}
