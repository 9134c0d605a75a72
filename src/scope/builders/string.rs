//! [`ScopeString`]: a string that grows in place at the top of a scope's region and
//! freezes into `&'s mut str`.
//!
//! Invariant: the bytes of the inner [`ScopeVec`] are always valid UTF-8 (every method
//! appends whole `str`s or `char`s and cuts only at char boundaries).
use core::fmt;
use core::ops::{Deref, DerefMut};

use crate::error::AllocError;
use crate::scope::place::core::Handle;
use crate::scope::ScopeStack;

use super::vec::ScopeVec;

/// A string at the top of a scope: grows in place (`push`, `push_str`, `write!`),
/// derefs to `str`, and freezes into `&'s mut str` with [`into_str`](Self::into_str),
/// with no copy and no slack. Made by [`ScopeStack::new_string`] and
/// [`ScopeStack::string_with_capacity`] (and the same methods of
/// [`LocalScope`](crate::LocalScope) and [`ConcurrentScope`](crate::ConcurrentScope)); on
/// a `ScopeStack` it borrows the scope mutably, as [`ScopeVec`] does.
///
/// ```
/// use core::fmt::Write;
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
/// memory.scope("level", |level| {
///     let mut path = level.new_string();
///     path.push_str("maps/");
///     write!(path, "{}-{}", "forest", 2).unwrap();
///     path.push('!');
///     let path: &str = path.into_str();
///     assert_eq!(path, "maps/forest-2!");
/// });
/// ```
///
/// The string cannot outlive its scope once frozen:
///
/// ```compile_fail
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
/// let s = memory.scope("a", |a| {
///     let mut s = a.new_string();
///     s.push_str("frog");
///     s.into_str() // error: escapes the scope
/// });
/// ```
pub struct ScopeString<'a, 's, H: Handle<'s> = &'a ScopeStack<'s>> {
    bytes: ScopeVec<'a, 's, u8, H>,
}

impl<'a, 's, H: Handle<'s>> ScopeString<'a, 's, H> {
    /// An empty string on `handle`.
    #[inline]
    pub(crate) fn new_in(handle: H) -> Self {
        ScopeString {
            bytes: ScopeVec::new_in(handle),
        }
    }

    /// An empty string with room for `n` bytes.
    #[inline]
    pub(crate) fn with_capacity_in(handle: H, n: usize) -> Result<Self, AllocError> {
        Ok(ScopeString {
            bytes: ScopeVec::with_capacity_in(handle, n)?,
        })
    }

    /// The text.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push_str("ab");
    /// assert_eq!(s.as_str(), "ab");
    /// # });
    /// ```
    #[inline(always)]
    pub fn as_str(&self) -> &str {
        // SAFETY: the bytes are UTF-8 (module invariant).
        unsafe { core::str::from_utf8_unchecked(&self.bytes) }
    }

    /// The text, mutably.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push_str("ab");
    /// s.as_mut_str().make_ascii_uppercase();
    /// assert_eq!(s.as_str(), "AB");
    /// # });
    /// ```
    #[inline(always)]
    pub fn as_mut_str(&mut self) -> &mut str {
        // SAFETY: the bytes are UTF-8; `str` methods keep them so.
        unsafe { core::str::from_utf8_unchecked_mut(&mut self.bytes) }
    }

    /// Length in bytes.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push('é');
    /// assert_eq!(s.len(), 2);
    /// # });
    /// ```
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the string is empty.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| assert!(a.new_string().is_empty()));
    /// ```
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes the claimed room holds.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| assert_eq!(a.new_string().capacity(), 0));
    /// ```
    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Appends a string.
    ///
    /// # Panics
    /// When the scope has no room for it (the message names the scope).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push_str("frog");
    /// assert_eq!(&*s, "frog");
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn push_str(&mut self, s: &str) {
        if let Err(e) = self.bytes.try_extend_copied(s.as_bytes()) {
            self.bytes.fail(e)
        }
    }

    /// Appends a string, or says why the scope has no room (nothing is appended then).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| {
    ///     let mut s = a.new_string();
    ///     assert!(s.try_push_str(&"x".repeat(100)).is_err());
    ///     assert!(s.is_empty());
    /// });
    /// ```
    #[inline]
    pub fn try_push_str(&mut self, s: &str) -> Result<(), AllocError> {
        self.bytes.try_extend_copied(s.as_bytes())
    }

    /// Appends a character.
    ///
    /// # Panics
    /// When the scope has no room for it.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push('ß');
    /// assert_eq!(&*s, "ß");
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn push(&mut self, ch: char) {
        self.push_str(ch.encode_utf8(&mut [0; 4]));
    }

    /// Appends a character, or says why the scope has no room.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| assert!(a.new_string().try_push('x').is_ok()));
    /// ```
    #[inline]
    pub fn try_push(&mut self, ch: char) -> Result<(), AllocError> {
        self.try_push_str(ch.encode_utf8(&mut [0; 4]))
    }

    /// Removes the last character and returns it.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push_str("añ");
    /// assert_eq!(s.pop(), Some('ñ'));
    /// assert_eq!(&*s, "a");
    /// # });
    /// ```
    pub fn pop(&mut self) -> Option<char> {
        let ch = self.as_str().chars().next_back()?;
        self.bytes.truncate(self.len() - ch.len_utf8());
        Some(ch)
    }

    /// Shortens the string to `len` bytes (nothing when it is not shorter).
    ///
    /// # Panics
    /// When `len` is not on a char boundary.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push_str("frog");
    /// s.truncate(2);
    /// assert_eq!(&*s, "fr");
    /// # });
    /// ```
    #[track_caller]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            assert!(
                self.as_str().is_char_boundary(len),
                "truncate: {len} is not a char boundary"
            );
            self.bytes.truncate(len);
        }
    }

    /// Empties the string; the room stays claimed.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push_str("frog");
    /// s.clear();
    /// assert!(s.is_empty());
    /// # });
    /// ```
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Makes room for at least `additional` more bytes.
    ///
    /// # Panics
    /// When the scope has no room for them.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.reserve(100);
    /// assert!(s.capacity() >= 100);
    /// # });
    /// ```
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.bytes.reserve(additional);
    }

    /// Makes room for at least `additional` more bytes, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| assert!(a.new_string().try_reserve(1 << 20).is_err()));
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), AllocError> {
        self.bytes.try_reserve(additional)
    }

    /// Freezes the text where it is into a string that lives as long as the scope; the
    /// room past it goes back to the scope.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// # memory.scope("a", |a| {
    /// let mut s = a.new_string();
    /// s.push_str("frog");
    /// let s: &mut str = s.into_str();
    /// s.make_ascii_uppercase();
    /// assert_eq!(s, "FROG");
    /// # });
    /// ```
    #[inline]
    pub fn into_str(self) -> &'s mut str {
        let bytes = self.bytes.into_slice_pod();
        // SAFETY: the bytes are UTF-8 (module invariant).
        unsafe { core::str::from_utf8_unchecked_mut(bytes) }
    }
}

/// `write!` appends; when the scope runs out of room it returns `fmt::Error` (use
/// [`try_push_str`](ScopeString::try_push_str) to see the [`AllocError`]).
impl<'s, H: Handle<'s>> fmt::Write for ScopeString<'_, 's, H> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.try_push_str(s).map_err(|_| fmt::Error)
    }
}

impl<'s, H: Handle<'s>> Deref for ScopeString<'_, 's, H> {
    type Target = str;
    #[inline(always)]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<'s, H: Handle<'s>> DerefMut for ScopeString<'_, 's, H> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl<'s, H: Handle<'s>> fmt::Debug for ScopeString<'_, 's, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<'s, H: Handle<'s>> fmt::Display for ScopeString<'_, 's, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}
