//! The name table: one leaked, NUL-terminated copy of each distinct profiler name.
//!
//! Invariants:
//! - A [`Name`] is never freed, so the pointers Tracy keeps stay valid; the table grows
//!   only when a text is seen for the first time (one heap allocation per distinct
//!   name, none per event).
//! - `live` is set by [`acquire`] (under the table's lock) and cleared by [`release`]; at
//!   most one live pool holds a given `Name` at a time. A text already live gets the
//!   next free variant, `text#2`, `text#3`, ...
use std::boxed::Box;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::string::String;
use std::sync::atomic::{AtomicBool, Ordering};
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
}

/// Longest name text kept (longer paths are cut at a character boundary).
pub(crate) const MAX_NAME: usize = 200;

/// A short text built on the stack (cut at [`MAX_NAME`] bytes), for names made of
/// numbers and parts.
pub(crate) struct Text {
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

/// Every name made so far, by the text it was asked for, with its variants in order.
static TABLE: Mutex<Option<HashMap<Box<str>, Vec<&'static Name>>>> = Mutex::new(None);

fn leak_c(text: &str) -> &'static CStr {
    // Interior NULs would cut the name short in Tracy: shown as '?'.
    let bytes: Vec<u8> = text
        .bytes()
        .map(|b| if b == 0 { b'?' } else { b })
        .collect();
    let c = CString::new(bytes).unwrap_or_default();
    Box::leak(c.into_boxed_c_str())
}

fn make(text: String) -> &'static Name {
    let text: &'static str = Box::leak(text.into_boxed_str());
    Box::leak(Box::new(Name {
        text,
        pool: leak_c(text),
        used: leak_c(&std::format!("{text} used")),
        high_water: leak_c(&std::format!("{text} high-water")),
        len: leak_c(&std::format!("{text} len")),
        live: AtomicBool::new(true),
    }))
}

/// A live pool name for `parts` joined by `/` (at most [`MAX_NAME`] bytes): the first
/// variant of that text no live pool holds, made on first use.
pub(crate) fn acquire(parts: &[&str]) -> &'static Name {
    use core::fmt::Write;
    let mut joined = Text::new();
    for (i, part) in parts.iter().enumerate() {
        let _ = write!(joined, "{}{part}", if i == 0 { "" } else { "/" });
    }
    let text = joined.as_str();
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(variants) = table.get_mut(text) {
        for &name in variants.iter() {
            if name
                .live
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return name;
            }
        }
        let name = make(std::format!("{text}#{}", variants.len() + 1));
        variants.push(name);
        return name;
    }
    let name = make(String::from(text));
    table.insert(Box::from(text), std::vec![name]);
    name
}

/// Frees `name` for the next pool of its text.
pub(crate) fn release(name: &'static Name) {
    name.live.store(false, Ordering::Release);
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
        let a = acquire(&["names_test", "frame"]);
        let b = acquire(&["names_test", "frame"]);
        assert_eq!(a.text(), "names_test/frame");
        assert_eq!(b.text(), "names_test/frame#2");
        release(a);
        let c = acquire(&["names_test", "frame"]);
        assert!(core::ptr::eq(a, c), "the released name is reused");
        assert_eq!(c.used_c().to_str().unwrap(), "names_test/frame used");
        release(b);
        release(c);
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let long = "é".repeat(150);
        let n = acquire(&[&long]);
        assert!(n.text().len() <= MAX_NAME);
        assert!(n.text().chars().all(|c| c == 'é'));
        release(n);
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
