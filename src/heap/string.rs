//! [`HeapString`]: a growable UTF-8 string whose bytes live in a [`Heap`], so text made
//! while a level plays (the names of entities spawned at run time) grows, shrinks and
//! goes back to the heap when it is dropped, instead of staying in the scope or slot
//! until it ends.
//!
//! It is an `allocator_api2::vec::Vec<u8, &'h Heap>` with a UTF-8 face. Every path that
//! can allocate reserves first (`try_reserve`, amortized, then exact), so a full heap is
//! an [`AllocError`] (the `try_` forms) or a panic with that error's message (the
//! others), never the allocator-api2 `handle_alloc_error` abort, and a failed call
//! leaves the string as it was (but `write!`, which keeps the pieces written before
//! the failure; `try_push_fmt` takes them back). `shrink_to_fit` is the one call left
//! to the vector: a heap block shrinks in place or is freed, which cannot fail.
//!
//! Invariants:
//! - the bytes are always valid UTF-8: every method appends whole `str`s or `char`s,
//!   cuts only at char boundaries (checked), or lends `&mut str`, whose safe API keeps
//!   them UTF-8; the byte vector is never lent mutably;
//! - the buffer belongs to one heap, the `&'h Heap` the vector holds: it is grown,
//!   shrunk and freed only through it, and `'h` (the heap's scope) bounds the string,
//!   so it cannot outlive the heap's region (rule 12).
use core::borrow::{Borrow, BorrowMut};
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::{Deref, DerefMut};

use allocator_api2::collections::TryReserveErrorKind;
use allocator_api2::vec::Vec;

use crate::error::{AllocError, AllocErrorKind};

use super::Heap;

/// A growable UTF-8 string in a [`Heap`]: `push`, `push_str`, `write!`, `truncate`,
/// `pop`, `clear`, `shrink_to_fit`, derefs to `str`, and gives its bytes back to the
/// heap when dropped (feature `alloc`).
///
/// It borrows the heap (`&'h Heap`), not the scope handle, so frames open and close
/// while it lives, and it cannot outlive the heap's scope. It is `Send` and `Sync`
/// (`Heap` is `Sync`), hashes and compares as its `str`, and is `Borrow<str>`, so a
/// `hashbrown::HashMap` keyed by `HeapString` is looked up with a `&str`.
///
/// # Where to keep one
///
/// A `HeapString<'h>` borrows the heap, so it is not `'static`, and it needs a drop
/// (to give its bytes back). The scope's finalizers take only `'static` values
/// ([`new_object`](crate::ScopeStack::new_object), pools, dense pools and stores: see
/// [rule 4](crate::rules#4-a-destructor-never-sees-a-destroyed-value)), and `new_pod`
/// takes only values without drop, so a scope will not hold one. Keep it in a value you
/// own and drop: a local, a collection in the same heap (`allocator_api2::vec::Vec<_,
/// &Heap>`, `hashbrown::HashMap<_, _, _, &Heap>`), or a slot's root, which is dropped
/// when the slot unloads, before the slot's scope (and the heap in it) goes:
///
/// ```
/// use core::fmt::Write;
/// use hashbrown::{DefaultHashBuilder, HashMap};
/// use scope_stack::{slot_root, Heap, HeapString, LinearAllocator};
///
/// /// A level in a slot: entities spawned while it plays are named in its heap.
/// struct Level<'s> {
///     heap: &'s Heap,
///     by_name: HashMap<HeapString<'s>, u32, DefaultHashBuilder, &'s Heap>,
/// }
/// slot_root!(struct LevelRoot => Level);
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 1, 64 << 10);
///     let mut forest = levels
///         .load::<LevelRoot>("forest", |s| {
///             let heap = s.new_heap(16 << 10);
///             Level { heap, by_name: HashMap::with_hasher_in(DefaultHashBuilder::default(), heap) }
///         })
///         .unwrap();
///     forest.with_mut(|level, _| {
///         for id in 0..3 {
///             let mut name = HeapString::new_in(level.heap);
///             write!(name, "wolf #{id}").unwrap();
///             level.by_name.insert(name, id);
///         }
///         assert_eq!(level.by_name.get("wolf #1"), Some(&1)); // looked up by `&str`
///         let before = level.heap.used();
///         level.by_name.remove("wolf #0"); // its name goes back to the heap
///         assert!(level.heap.used() < before);
///     });
///     drop(forest); // the root (map and names) drops, then the slot and its heap go
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
///
/// The scope's finalizers refuse it (it borrows the heap):
///
/// ```compile_fail,E0521
/// # use scope_stack::{HeapString, LinearAllocator};
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let heap = level.new_heap(4096);
///     level.new_object(HeapString::from_str_in("frog", heap)); // error: must be 'static (E0521)
/// });
/// ```
///
/// And it cannot leave the heap's scope:
///
/// ```compile_fail
/// # use scope_stack::{HeapString, LinearAllocator};
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// let name = memory.scope("level", |level| {
///     HeapString::from_str_in("frog", level.new_heap(4096)) // error: escapes the scope
/// });
/// ```
pub struct HeapString<'h> {
    /// UTF-8, always (module invariant).
    bytes: Vec<u8, &'h Heap>,
}

static_assertions::assert_impl_all!(HeapString<'static>: Send, Sync);

/// The crate's error for a failed reservation of `additional` more bytes after `len`.
#[cold]
#[inline(never)]
fn reserve_error(
    heap: &Heap,
    kind: TryReserveErrorKind,
    len: usize,
    additional: usize,
) -> AllocError {
    match kind {
        TryReserveErrorKind::CapacityOverflow => AllocError::in_scope(
            AllocErrorKind::CapacityOverflow,
            len.saturating_add(additional),
            1,
            0,
            heap.capacity(),
            "",
        ),
        TryReserveErrorKind::AllocError { layout, .. } => AllocError::in_scope(
            AllocErrorKind::OutOfMemory,
            layout.size(),
            layout.align(),
            heap.largest_free(),
            heap.capacity(),
            "",
        ),
    }
}

/// Panics with `e`'s message (the non-`try_` forms).
#[cold]
#[inline(never)]
#[track_caller]
fn fail(e: AllocError) -> ! {
    panic!("{e}")
}

impl<'h> HeapString<'h> {
    /// An empty string in `heap`; it takes nothing from the heap until it grows.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let s = HeapString::new_in(heap);
    /// assert_eq!((s.len(), s.capacity(), heap.live()), (0, 0, 0));
    /// # });
    /// ```
    #[inline]
    pub fn new_in(heap: &'h Heap) -> Self {
        HeapString {
            bytes: Vec::new_in(heap),
        }
    }

    /// An empty string with room for exactly `n` bytes.
    ///
    /// # Panics
    /// Where [`try_with_capacity_in`](Self::try_with_capacity_in) returns an error.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let s = HeapString::with_capacity_in(100, heap);
    /// assert_eq!((s.capacity(), heap.used()), (100, 100));
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn with_capacity_in(n: usize, heap: &'h Heap) -> Self {
        Self::try_with_capacity_in(n, heap).unwrap_or_else(|e| fail(e))
    }

    /// An empty string with room for exactly `n` bytes, or why the heap has none.
    ///
    /// # Errors
    /// [`AllocErrorKind::OutOfMemory`] when the heap has no free block of `n` bytes
    /// (the error's [`remaining`](AllocError::remaining) is the heap's
    /// [`largest_free`](Heap::largest_free) block, its
    /// [`capacity`](AllocError::capacity) the heap's, and its scope name is empty);
    /// [`AllocErrorKind::CapacityOverflow`] when `n` exceeds `isize::MAX`.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let e = HeapString::try_with_capacity_in(10_000, heap).unwrap_err();
    /// assert_eq!((e.kind(), e.size(), e.capacity()), (AllocErrorKind::OutOfMemory, 10_000, 4096));
    /// assert!(HeapString::try_with_capacity_in(1000, heap).is_ok());
    /// # });
    /// ```
    pub fn try_with_capacity_in(n: usize, heap: &'h Heap) -> Result<Self, AllocError> {
        let mut bytes = Vec::new_in(heap);
        bytes
            .try_reserve_exact(n)
            .map_err(|e| reserve_error(heap, e.kind(), 0, n))?;
        Ok(HeapString { bytes })
    }

    /// A copy of `s` in `heap` (its capacity is `s.len()`).
    ///
    /// # Panics
    /// Where [`try_from_str_in`](Self::try_from_str_in) returns an error.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let s = HeapString::from_str_in("frog", heap);
    /// assert_eq!((s.as_str(), heap.used()), ("frog", 4));
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn from_str_in(s: &str, heap: &'h Heap) -> Self {
        Self::try_from_str_in(s, heap).unwrap_or_else(|e| fail(e))
    }

    /// A copy of `s` in `heap`, or why the heap has no room for it (errors as
    /// [`try_with_capacity_in`](Self::try_with_capacity_in)).
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// assert!(HeapString::try_from_str_in(&"x".repeat(5000), heap).is_err());
    /// assert_eq!(HeapString::try_from_str_in("toad", heap).unwrap(), "toad");
    /// # });
    /// ```
    pub fn try_from_str_in(s: &str, heap: &'h Heap) -> Result<Self, AllocError> {
        let mut string = Self::try_with_capacity_in(s.len(), heap)?;
        string.bytes.extend_from_slice(s.as_bytes()); // room reserved: no allocation
        Ok(string)
    }

    /// The heap the string lives in.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let s = HeapString::from_str_in("frog", heap);
    /// assert!(core::ptr::eq(s.heap(), heap));
    /// # });
    /// ```
    #[inline]
    pub fn heap(&self) -> &'h Heap {
        self.bytes.allocator()
    }

    /// The text.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// assert_eq!(s.as_str(), "frog");
    /// # });
    /// ```
    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: the bytes are UTF-8 (module invariant).
        unsafe { core::str::from_utf8_unchecked(&self.bytes) }
    }

    /// The text, mutably (`str`'s safe methods keep it UTF-8).
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// s.as_mut_str().make_ascii_uppercase();
    /// assert_eq!(s, "FROG");
    /// # });
    /// ```
    #[inline]
    pub fn as_mut_str(&mut self) -> &mut str {
        // SAFETY: the bytes are UTF-8 (module invariant), and what the caller can do
        // with `&mut str` in safe code keeps them so.
        unsafe { core::str::from_utf8_unchecked_mut(&mut self.bytes) }
    }

    /// The text's bytes.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let s = HeapString::from_str_in("é", level.new_heap(4096));
    /// assert_eq!(s.as_bytes(), [0xc3, 0xa9]);
    /// # });
    /// ```
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes as a vector in the same heap (no copy).
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// let bytes: allocator_api2::vec::Vec<u8, _> = s.into_bytes();
    /// assert_eq!(bytes, b"frog");
    /// # });
    /// ```
    #[inline]
    pub fn into_bytes(self) -> Vec<u8, &'h Heap> {
        self.bytes
    }

    /// Length in bytes.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert_eq!(HeapString::from_str_in("ñu", level.new_heap(4096)).len(), 3);
    /// # });
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the string is empty.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// assert!(HeapString::new_in(level.new_heap(4096)).is_empty());
    /// # });
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes the string's block holds (what it takes from the heap's
    /// [`used`](Heap::used)).
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let mut s = HeapString::new_in(heap);
    /// s.push_str("frog");
    /// assert!(s.capacity() >= 4);
    /// assert_eq!(heap.used(), s.capacity());
    /// # });
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Makes room for at least `additional` more bytes (amortized: it may take more,
    /// so that pushes one by one take constant time on average).
    ///
    /// # Panics
    /// Where [`try_reserve`](Self::try_reserve) returns an error.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::new_in(level.new_heap(4096));
    /// s.reserve(100);
    /// assert!(s.capacity() >= 100);
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        if let Err(e) = self.try_reserve(additional) {
            fail(e)
        }
    }

    /// Makes room for at least `additional` more bytes, or says why the heap has none;
    /// on an error the string is unchanged. When the amortized request (up to twice the
    /// capacity) does not fit, it asks for exactly what is needed before it gives up.
    ///
    /// # Errors
    /// [`AllocErrorKind::OutOfMemory`] when the heap has no free block for the new
    /// length (its [`size`](AllocError::size) is the block asked for,
    /// [`remaining`](AllocError::remaining) the heap's
    /// [`largest_free`](Heap::largest_free) block, [`capacity`](AllocError::capacity) the
    /// heap's; the scope name is empty); [`AllocErrorKind::CapacityOverflow`] when the
    /// length would exceed `isize::MAX`.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// let e = s.try_reserve(10_000).unwrap_err();
    /// assert_eq!((e.kind(), e.size()), (AllocErrorKind::OutOfMemory, 10_004));
    /// assert_eq!(s.try_reserve(usize::MAX).unwrap_err().kind(), AllocErrorKind::CapacityOverflow);
    /// assert_eq!(s, "frog");
    /// # });
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), AllocError> {
        if self.bytes.try_reserve(additional).is_ok() {
            return Ok(());
        }
        self.try_reserve_exact(additional)
    }

    /// Makes room for exactly `additional` more bytes (when the capacity is short of
    /// them), or says why the heap has none (errors as [`try_reserve`](Self::try_reserve));
    /// on an error the string is unchanged.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// s.try_reserve_exact(6).unwrap();
    /// assert_eq!(s.capacity(), 10);
    /// # });
    /// ```
    pub fn try_reserve_exact(&mut self, additional: usize) -> Result<(), AllocError> {
        self.bytes
            .try_reserve_exact(additional)
            .map_err(|e| reserve_error(self.heap(), e.kind(), self.bytes.len(), additional))
    }

    /// Gives the room past the text back to the heap (a heap block shrinks in place,
    /// so this cannot fail); an empty string frees its block.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let mut s = HeapString::with_capacity_in(1000, heap);
    /// s.push_str("frog");
    /// s.shrink_to_fit();
    /// assert_eq!((s.capacity(), heap.used()), (4, 4));
    /// # });
    /// ```
    pub fn shrink_to_fit(&mut self) {
        // `&Heap`'s `shrink` never fails: a smaller size frees the block or shrinks it
        // in place (see `alloc_api.rs`), so allocator-api2's abort is never reached.
        self.bytes.shrink_to_fit();
    }

    /// Appends `s`.
    ///
    /// # Panics
    /// Where [`try_push_str`](Self::try_push_str) returns an error (the message is the
    /// error's).
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::new_in(level.new_heap(4096));
    /// s.push_str("frog");
    /// s.push_str(" king");
    /// assert_eq!(s, "frog king");
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn push_str(&mut self, s: &str) {
        if let Err(e) = self.try_push_str(s) {
            fail(e)
        }
    }

    /// Appends `s`, or says why the heap has no room for it (errors as
    /// [`try_reserve`](Self::try_reserve)); on an error the string is unchanged.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// assert!(s.try_push_str(&"x".repeat(5000)).is_err());
    /// assert_eq!(s, "frog");
    /// # });
    /// ```
    #[inline]
    pub fn try_push_str(&mut self, s: &str) -> Result<(), AllocError> {
        self.try_reserve(s.len())?;
        self.bytes.extend_from_slice(s.as_bytes()); // room reserved: no allocation
        Ok(())
    }

    /// Appends a character.
    ///
    /// # Panics
    /// Where [`try_push`](Self::try_push) returns an error.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::new_in(level.new_heap(4096));
    /// s.push('ß');
    /// assert_eq!((s.as_str(), s.len()), ("ß", 2));
    /// # });
    /// ```
    #[inline]
    #[track_caller]
    pub fn push(&mut self, ch: char) {
        self.push_str(ch.encode_utf8(&mut [0; 4]));
    }

    /// Appends a character, or says why the heap has no room for it; on an error the
    /// string is unchanged.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::new_in(level.new_heap(4096));
    /// assert!(s.try_push('x').is_ok());
    /// # });
    /// ```
    #[inline]
    pub fn try_push(&mut self, ch: char) -> Result<(), AllocError> {
        self.try_push_str(ch.encode_utf8(&mut [0; 4]))
    }

    /// Appends formatted text (`format_args!`), or says why it could not: the heap had
    /// no room ([`AllocErrorKind::OutOfMemory`]) or a `Display`/`Debug` implementation
    /// failed ([`AllocErrorKind::Format`]). On an error the string is as it was before
    /// the call, unlike `write!`, which may leave the pieces written before the failure.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::new_in(level.new_heap(4096));
    /// s.try_push_fmt(format_args!("wolf #{}", 7)).unwrap();
    /// let e = s.try_push_fmt(format_args!(" {}{}", "ok", "x".repeat(5000))).unwrap_err();
    /// assert_eq!((e.kind(), s.as_str()), (AllocErrorKind::OutOfMemory, "wolf #7"));
    /// # });
    /// ```
    pub fn try_push_fmt(&mut self, args: fmt::Arguments<'_>) -> Result<(), AllocError> {
        /// Keeps the first allocation error, which `fmt::Write` cannot carry.
        struct Writer<'a, 'h> {
            string: &'a mut HeapString<'h>,
            error: Option<AllocError>,
        }
        impl fmt::Write for Writer<'_, '_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.string.try_push_str(s).map_err(|e| {
                    self.error = Some(e);
                    fmt::Error
                })
            }
        }
        let before = self.len();
        let mut w = Writer {
            string: self,
            error: None,
        };
        if fmt::Write::write_fmt(&mut w, args).is_ok() {
            return Ok(());
        }
        let error = w
            .error
            .unwrap_or_else(|| AllocError::in_scope(AllocErrorKind::Format, 0, 1, 0, 0, ""));
        // `before` was the length of the whole text, so it is a char boundary.
        self.bytes.truncate(before);
        Err(error)
    }

    /// Removes the last character and returns it (`None` when empty); the room stays.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::from_str_in("añ", level.new_heap(4096));
    /// assert_eq!(s.pop(), Some('ñ'));
    /// assert_eq!(s.pop(), Some('a'));
    /// assert_eq!(s.pop(), None);
    /// # });
    /// ```
    pub fn pop(&mut self) -> Option<char> {
        let ch = self.as_str().chars().next_back()?;
        // The last char starts at a char boundary.
        self.bytes.truncate(self.bytes.len() - ch.len_utf8());
        Some(ch)
    }

    /// Shortens the string to `len` bytes (nothing when it is not longer); the room
    /// stays (see [`shrink_to_fit`](Self::shrink_to_fit)).
    ///
    /// # Panics
    /// When `len` is not on a char boundary, as `String::truncate` does.
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// s.truncate(2);
    /// assert_eq!(s, "fr");
    /// # });
    /// ```
    #[track_caller]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            assert!(
                self.as_str().is_char_boundary(len),
                "HeapString::truncate: {len} is not a char boundary"
            );
            self.bytes.truncate(len);
        }
    }

    /// Empties the string; the room stays (see [`shrink_to_fit`](Self::shrink_to_fit)).
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let mut s = HeapString::from_str_in("frog", level.new_heap(4096));
    /// s.clear();
    /// assert!(s.is_empty() && s.capacity() == 4);
    /// # });
    /// ```
    #[inline]
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// A copy in the same heap (capacity `len()`), or why the heap has no room for
    /// it (errors as [`try_with_capacity_in`](Self::try_with_capacity_in)).
    ///
    /// ```
    /// # use scope_stack::{HeapString, LinearAllocator};
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// let heap = level.new_heap(4096);
    /// let mut s = HeapString::from_str_in(&"x".repeat(2500), heap);
    /// assert!(s.try_clone().is_err()); // two copies do not fit in 4096 bytes
    /// s.truncate(4);
    /// s.shrink_to_fit();
    /// assert_eq!(s.try_clone().unwrap(), "xxxx");
    /// # });
    /// ```
    pub fn try_clone(&self) -> Result<Self, AllocError> {
        Self::try_from_str_in(self.as_str(), self.heap())
    }
}

/// A copy in the same heap.
///
/// # Panics
/// Where [`try_clone`](HeapString::try_clone) returns an error.
impl Clone for HeapString<'_> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.try_clone().unwrap_or_else(|e| fail(e))
    }
}

/// `write!` appends. When the heap runs out of room it returns `fmt::Error`, and the
/// pieces written before stay; [`try_push_fmt`](HeapString::try_push_fmt) gives the
/// [`AllocError`] and leaves the string as it was.
impl fmt::Write for HeapString<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.try_push_str(s).map_err(|_| fmt::Error)
    }

    #[inline]
    fn write_char(&mut self, c: char) -> fmt::Result {
        self.try_push(c).map_err(|_| fmt::Error)
    }
}

impl Deref for HeapString<'_> {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl DerefMut for HeapString<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl AsRef<str> for HeapString<'_> {
    #[inline]
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl AsMut<str> for HeapString<'_> {
    #[inline]
    fn as_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl AsRef<[u8]> for HeapString<'_> {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Hash maps keyed by `HeapString` are looked up with a `&str` (`Hash`, `Eq` and `Ord`
/// are `str`'s).
impl Borrow<str> for HeapString<'_> {
    #[inline]
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl BorrowMut<str> for HeapString<'_> {
    #[inline]
    fn borrow_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl fmt::Debug for HeapString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for HeapString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

/// As `str`'s hash, so that `Borrow<str>` look-ups find the key.
impl Hash for HeapString<'_> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

/// Compares the text, whichever heaps the two strings are in.
impl<'b> PartialEq<HeapString<'b>> for HeapString<'_> {
    #[inline]
    fn eq(&self, other: &HeapString<'b>) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for HeapString<'_> {}

impl PartialEq<str> for HeapString<'_> {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for HeapString<'_> {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<HeapString<'_>> for str {
    #[inline]
    fn eq(&self, other: &HeapString<'_>) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<HeapString<'_>> for &str {
    #[inline]
    fn eq(&self, other: &HeapString<'_>) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<alloc::string::String> for HeapString<'_> {
    #[inline]
    fn eq(&self, other: &alloc::string::String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<HeapString<'_>> for alloc::string::String {
    #[inline]
    fn eq(&self, other: &HeapString<'_>) -> bool {
        self.as_str() == other.as_str()
    }
}

/// Orders by the text, as `str` does, whichever heaps the two strings are in.
impl<'b> PartialOrd<HeapString<'b>> for HeapString<'_> {
    #[inline]
    fn partial_cmp(&self, other: &HeapString<'b>) -> Option<core::cmp::Ordering> {
        Some(self.as_str().cmp(other.as_str()))
    }
}

impl Ord for HeapString<'_> {
    #[inline]
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// Appends each string.
///
/// # Panics
/// When the heap has no room (the message is the [`AllocError`]'s).
impl<'a> Extend<&'a str> for HeapString<'_> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = &'a str>>(&mut self, iter: I) {
        iter.into_iter().for_each(|s| self.push_str(s));
    }
}

/// Appends each character (reserving for the iterator's lower size bound first).
///
/// # Panics
/// When the heap has no room (the message is the [`AllocError`]'s).
impl Extend<char> for HeapString<'_> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = char>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        iter.for_each(|c| self.push(c));
    }
}
