//! Errors: what failed, how big it was, and which scope it happened in.
//!
//! Invariant: an [`AllocError`] is a plain `Copy` value with no borrowed data and no
//! heap use, so building one on the failure path can never fail or allocate, and it
//! can travel with `?` into any error type. The scope's name is copied into a small
//! inline buffer (truncated at a character boundary) for that reason.

use core::fmt;

pub use crate::limits::MAX_ERROR_NAME_LEN;
use crate::limits::{MAX_POOL_CAPACITY, MAX_POOL_SHARDS, MAX_STORE_OBJECTS};

/// What kind of failure an [`AllocError`] reports.
///
/// ```
/// use scope_stack::{AllocErrorKind, LinearAllocator};
///
/// let err = LinearAllocator::with_capacity(0).unwrap_err();
/// assert_eq!(err.kind(), AllocErrorKind::InvalidCapacity);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AllocErrorKind {
    /// The block (or the scope's budget) has fewer bytes left than the request needs.
    OutOfMemory,
    /// A capacity of zero was asked for: a block's bytes, a pool's or dense pool's
    /// slots, or a store's objects or versions. The message says which.
    InvalidCapacity,
    /// A size or capacity does not fit in `isize`, or a size computation overflowed.
    CapacityOverflow,
    /// An alignment that is not a power of two was asked for.
    InvalidAlignment,
    /// An alignment larger than [`MAX_ALIGN`](crate::MAX_ALIGN) was asked for.
    AlignmentTooLarge,
    /// The global allocator could not reserve the block.
    HeapExhausted,
    /// A `Display`/`Debug` implementation returned an error while formatting into a scope.
    Format,
    /// The request fits in the block but not in the byte budget of the named scope
    /// (see `ScopeStack::scope_with_budget`).
    BudgetExceeded,
    /// The scope is not the innermost live scope on its block: a scope opened later on
    /// the same block (a nested scratch scope) is still live, so allocating here would
    /// overlap it.
    NotInnermost,
    /// A pool was asked for more slots than its index can name
    /// ([`MAX_POOL_CAPACITY`](crate::MAX_POOL_CAPACITY)), or a store for more objects
    /// than [`MAX_STORE_OBJECTS`](crate::store::MAX_STORE_OBJECTS).
    TooManySlots,
    /// A pool was asked for zero shards, or more than
    /// [`MAX_POOL_SHARDS`](crate::pool::MAX_POOL_SHARDS).
    InvalidShardCount,
}

impl AllocErrorKind {
    fn describe(self) -> &'static str {
        match self {
            AllocErrorKind::OutOfMemory => "out of memory",
            AllocErrorKind::InvalidCapacity => "invalid capacity (must be greater than zero)",
            AllocErrorKind::CapacityOverflow => "size overflows isize",
            AllocErrorKind::InvalidAlignment => "alignment is not a power of two",
            AllocErrorKind::AlignmentTooLarge => "alignment is larger than MAX_ALIGN",
            AllocErrorKind::HeapExhausted => "the global allocator could not reserve the block",
            AllocErrorKind::Format => "a formatting implementation returned an error",
            AllocErrorKind::BudgetExceeded => "budget exceeded",
            AllocErrorKind::NotInnermost => {
                "scope is not the innermost live scope on its block (a nested scope opened later on the same block is still live)"
            }
            AllocErrorKind::TooManySlots => {
                "too many slots (a pool or dense pool has a 24-bit slot index: at most 16777216 slots; a store holds at most 4294967295 objects)"
            }
            AllocErrorKind::InvalidShardCount => {
                "invalid pool shard count (must be 1 to MAX_POOL_SHARDS = 256)"
            }
        }
    }
}

// The limits that the messages above spell out.
const _: () = assert!(
    MAX_POOL_CAPACITY == 16_777_216 && MAX_STORE_OBJECTS == 4_294_967_295 && MAX_POOL_SHARDS == 256
);

/// What a pool, dense pool or store error is about: which container, of which element
/// type, and the count that was asked for. Errors raised by a scope's carving methods
/// carry one, so their message names the container instead of a byte count.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Subject {
    what: What,
    /// `core::any::type_name` of the element type (shortened when displayed).
    type_name: &'static str,
    /// The slot, object or version count that was asked for.
    count: usize,
}

/// The container (and which of its counts) a [`Subject`] names.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum What {
    /// Not recorded: the message falls back to the sizes.
    Unknown,
    /// `new_pool(capacity)` and friends.
    Pool,
    /// `new_dense_pool(capacity)`.
    DensePool,
    /// `new_store(max_objects, _)`.
    StoreObjects,
    /// `new_store(_, max_versions)`.
    StoreVersions,
    /// `new_heap(bytes)`.
    Heap,
}

impl Subject {
    const NONE: Subject = Subject {
        what: What::Unknown,
        type_name: "",
        count: 0,
    };

    /// A `Pool<T>` of `capacity` slots.
    pub(crate) fn pool<T>(capacity: usize) -> Subject {
        Subject::new::<T>(What::Pool, capacity)
    }

    /// A `DensePool<T>` of `capacity` slots.
    pub(crate) fn dense_pool<T>(capacity: usize) -> Subject {
        Subject::new::<T>(What::DensePool, capacity)
    }

    /// A `Store<T>` of `max_objects` objects.
    pub(crate) fn store_objects<T>(max_objects: usize) -> Subject {
        Subject::new::<T>(What::StoreObjects, max_objects)
    }

    /// A `Store<T>` of `max_versions` versions.
    pub(crate) fn store_versions<T>(max_versions: usize) -> Subject {
        Subject::new::<T>(What::StoreVersions, max_versions)
    }

    /// A `Heap` of `bytes` bytes.
    pub(crate) fn heap(bytes: usize) -> Subject {
        Subject {
            what: What::Heap,
            type_name: "",
            count: bytes,
        }
    }

    fn new<T>(what: What, count: usize) -> Subject {
        Subject {
            what,
            type_name: core::any::type_name::<T>(),
            count,
        }
    }

    /// `Pool<u64>`, `Store<Asset>`, ...
    fn write_container(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.what {
            What::Unknown => return Ok(()),
            What::Pool => "Pool",
            What::DensePool => "DensePool",
            What::StoreObjects | What::StoreVersions => "Store",
            What::Heap => return f.write_str("Heap"),
        };
        write!(f, "{kind}<")?;
        write_short_type_name(f, self.type_name)?;
        f.write_str(">")
    }

    /// The count's name as the carving method spells its argument.
    fn count_name(&self) -> &'static str {
        match self.what {
            What::Unknown | What::Pool | What::DensePool => "capacity",
            What::StoreObjects => "max_objects",
            What::StoreVersions => "max_versions",
            What::Heap => "bytes",
        }
    }

    /// The sentence after `… in scope "…": ` for `kind`, or `None` to fall back to the
    /// sizes.
    fn explain(&self, kind: AllocErrorKind, f: &mut fmt::Formatter<'_>) -> Option<fmt::Result> {
        if self.what == What::Unknown {
            return None;
        }
        if !matches!(
            kind,
            AllocErrorKind::InvalidCapacity
                | AllocErrorKind::TooManySlots
                | AllocErrorKind::CapacityOverflow
        ) {
            return None;
        }
        if let Err(e) = f.write_str(": ") {
            return Some(Err(e));
        }
        Some(match kind {
            AllocErrorKind::InvalidCapacity => f.write_str(match self.what {
                What::Unknown => unreachable!("checked above"),
                What::Pool => "a pool needs at least one slot (capacity 0)",
                What::DensePool => "a dense pool needs at least one slot (capacity 0)",
                What::StoreObjects => "a store needs room for at least one object (max_objects 0)",
                What::StoreVersions => {
                    "a store needs room for at least one version (max_versions 0)"
                }
                What::Heap => "a heap needs at least one byte (bytes 0)",
            }),
            AllocErrorKind::TooManySlots => {
                let limit = match self.what {
                    What::StoreObjects => "its 32-bit object index (at most 4294967295 objects)",
                    What::StoreVersions => {
                        "its versions pool's 24-bit slot index (at most 16777216 versions)"
                    }
                    _ => "its 24-bit slot index (at most 16777216 slots)",
                };
                self.write_container(f).and_then(|()| {
                    write!(f, " {} {} overflows {limit}", self.count_name(), self.count)
                })
            }
            AllocErrorKind::CapacityOverflow if self.what == What::Heap => write!(
                f,
                "Heap bytes {} is more than MAX_HEAP_BYTES ({})",
                self.count,
                crate::limits::MAX_HEAP_BYTES
            ),
            AllocErrorKind::CapacityOverflow => self.write_container(f).and_then(|()| {
                write!(
                    f,
                    " {} {} needs more than isize::MAX bytes",
                    self.count_name(),
                    self.count
                )
            }),
            _ => return None,
        })
    }
}

/// Writes `name` (from `core::any::type_name`) with the module path stripped from every
/// path inside it (`alloc::string::String` -> `String`), without allocating: errors are
/// built and shown where the heap may be unavailable.
fn write_short_type_name(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    let in_path = |c: char| c.is_alphanumeric() || matches!(c, '_' | ':' | '#');
    let mut rest = name;
    while !rest.is_empty() {
        let end = rest.find(|c| !in_path(c)).unwrap_or(rest.len());
        if end == 0 {
            let c = rest.chars().next().unwrap_or_default();
            write!(f, "{c}")?;
            rest = &rest[c.len_utf8()..];
        } else {
            let path = &rest[..end];
            // A leading `::` belongs to a qualified path (`<T as Trait>::Out`).
            let lead = if path.starts_with("::") { "::" } else { "" };
            let last = path.rsplit("::").next().unwrap_or(path);
            write!(f, "{lead}{last}")?;
            rest = &rest[end..];
        }
    }
    Ok(())
}

/// A scope name copied into the error, so the error owns no borrowed data.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct InlineName {
    bytes: [u8; MAX_ERROR_NAME_LEN],
    len: u8,
}

impl InlineName {
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    const EMPTY: InlineName = InlineName {
        bytes: [0; MAX_ERROR_NAME_LEN],
        len: 0,
    };

    fn new(name: &str) -> InlineName {
        let mut len = name.len().min(MAX_ERROR_NAME_LEN);
        while !name.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0; MAX_ERROR_NAME_LEN];
        bytes[..len].copy_from_slice(&name.as_bytes()[..len]);
        InlineName {
            bytes,
            len: len as u8,
        }
    }

    fn as_str(&self) -> &str {
        // The bytes were copied from a `&str` and cut at a char boundary.
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

/// An allocation or construction failed.
///
/// It records what was asked for (size and alignment), what was left (bytes remaining
/// and the block's capacity) and the name of the scope that was asked. Its `Display`
/// is one sentence that reads well inside a panic message.
///
/// ```
/// use scope_stack::{AllocErrorKind, LinearAllocator};
///
/// let mut block = LinearAllocator::with_capacity(64).unwrap();
/// block.scope("level", |level| {
///     let err = level.try_alloc_raw(100, 8).unwrap_err();
///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
///     assert_eq!(err.size(), 100);
///     assert_eq!(err.scope_name(), "level");
///     assert_eq!(err.capacity(), 64);
///     println!("{err}");
/// });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AllocError {
    kind: AllocErrorKind,
    size: usize,
    align: usize,
    remaining: usize,
    capacity: usize,
    scope: InlineName,
    /// What else the error knows, depending on its kind.
    detail: Detail,
}

/// The part of an [`AllocError`] that only some kinds have; one at a time, so the
/// error stays small enough to return by value from the `try_` forms.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Detail {
    None,
    /// For `BudgetExceeded`: the budget of the scope named by the error.
    Budget(usize),
    /// For out-of-memory errors: the live scope that held the most bytes of its own
    /// when the error happened, and how many.
    Holder(InlineName, usize),
    /// For errors raised while carving a pool, dense pool or store: which one.
    Subject(Subject),
}

impl AllocError {
    /// An error that no scope is involved in (for example while building a block).
    #[cfg(feature = "alloc")]
    pub(crate) fn new(kind: AllocErrorKind, size: usize, align: usize, capacity: usize) -> Self {
        AllocError {
            kind,
            size,
            align,
            remaining: 0,
            capacity,
            scope: InlineName::EMPTY,
            detail: Detail::None,
        }
    }

    /// An error raised by the scope `scope`, with `remaining` bytes left in the block.
    pub(crate) fn in_scope(
        kind: AllocErrorKind,
        size: usize,
        align: usize,
        remaining: usize,
        capacity: usize,
        scope: &str,
    ) -> Self {
        AllocError {
            kind,
            size,
            align,
            remaining,
            capacity,
            scope: InlineName::new(scope),
            detail: Detail::None,
        }
    }

    /// Records the budget that was exceeded.
    pub(crate) fn with_budget(mut self, budget: usize) -> Self {
        self.detail = Detail::Budget(budget);
        self
    }

    /// Records which pool, dense pool or store the error is about, so the message
    /// names it (zero, too many or too large a count) instead of a byte count.
    pub(crate) fn with_subject(mut self, subject: Subject) -> Self {
        self.detail = Detail::Subject(subject);
        self
    }

    /// Records which live scope held the most memory.
    pub(crate) fn with_holder(mut self, name: &str, bytes: usize) -> Self {
        self.detail = Detail::Holder(InlineName::new(name), bytes);
        self
    }

    /// For [`AllocErrorKind::BudgetExceeded`]: the budget, in bytes, of the scope named
    /// by [`scope_name`](Self::scope_name).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut block = LinearAllocator::with_capacity(4096).unwrap();
    /// block.scope("systems", |systems| {
    ///     systems.scope_with_budget("audio", 100, |audio| {
    ///         let err = audio.try_alloc_raw(200, 1).unwrap_err();
    ///         assert_eq!(err.kind(), AllocErrorKind::BudgetExceeded);
    ///         assert_eq!((err.scope_name(), err.budget()), ("audio", Some(100)));
    ///     });
    /// });
    /// ```
    pub fn budget(&self) -> Option<usize> {
        match self.detail {
            Detail::Budget(b) => Some(b),
            _ => None,
        }
    }

    /// For out-of-memory errors: the live scope that held the most bytes of its own
    /// (not counting its children) when the request failed, and how many. This is
    /// usually the scope to shrink.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(1024).unwrap();
    /// block.scope("systems", |systems| {
    ///     systems.alloc_raw(100, 1);
    ///     systems.scope("level", |level| {
    ///         level.alloc_raw(900, 1);
    ///         level.scope("frame", |frame| {
    ///             let err = frame.try_alloc_raw(64, 1).unwrap_err();
    ///             assert_eq!(err.largest_scope(), Some(("level", 900)));
    ///         });
    ///     });
    /// });
    /// ```
    pub fn largest_scope(&self) -> Option<(&str, usize)> {
        match &self.detail {
            Detail::Holder(name, bytes) if name.len > 0 => Some((name.as_str(), *bytes)),
            _ => None,
        }
    }

    /// What went wrong.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let err = LinearAllocator::with_capacity(usize::MAX).unwrap_err();
    /// assert_eq!(err.kind(), AllocErrorKind::CapacityOverflow);
    /// ```
    pub fn kind(&self) -> AllocErrorKind {
        self.kind
    }

    /// The size in bytes that was requested (for a block: the capacity asked for).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(16).unwrap();
    /// block.scope("s", |s| assert_eq!(s.try_alloc_raw(17, 1).unwrap_err().size(), 17));
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    /// The alignment that was requested.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(16).unwrap();
    /// block.scope("s", |s| assert_eq!(s.try_alloc_raw(64, 32).unwrap_err().align(), 32));
    /// ```
    pub fn align(&self) -> usize {
        self.align
    }

    /// Bytes that were still free in the block (or the scope's budget) when it failed.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(16).unwrap();
    /// block.scope("s", |s| {
    ///     s.new_pod([0u8; 10]);
    ///     assert_eq!(s.try_alloc_raw(7, 1).unwrap_err().remaining(), 6);
    /// });
    /// ```
    pub fn remaining(&self) -> usize {
        self.remaining
    }

    /// The capacity of the block in bytes.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(16).unwrap();
    /// block.scope("s", |s| assert_eq!(s.try_alloc_raw(17, 1).unwrap_err().capacity(), 16));
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The name of the scope that was asked, or `""` when no scope was involved.
    /// Names longer than [`MAX_ERROR_NAME_LEN`] bytes are truncated.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(16).unwrap();
    /// block.scope("audio", |s| assert_eq!(s.try_alloc_raw(17, 1).unwrap_err().scope_name(), "audio"));
    /// ```
    pub fn scope_name(&self) -> &str {
        self.scope.as_str()
    }
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("scope-stack: ")?;
        let subject = match self.detail {
            Detail::Subject(s) => s,
            _ => Subject::NONE,
        };
        f.write_str(match (self.kind, subject.what) {
            // A container's message says in words what was wrong with it.
            (AllocErrorKind::InvalidCapacity, w) if w != What::Unknown => "invalid capacity",
            (AllocErrorKind::TooManySlots, w) if w != What::Unknown => "too many slots",
            (kind, _) => kind.describe(),
        })?;
        if self.scope.len > 0 {
            write!(f, " in scope \"{}\"", self.scope.as_str())?;
        }
        if let Some(done) = subject.explain(self.kind, f) {
            return done;
        }
        match self.kind {
            AllocErrorKind::InvalidCapacity
            | AllocErrorKind::HeapExhausted
            | AllocErrorKind::CapacityOverflow
                if self.scope.len == 0 =>
            {
                write!(f, ": asked for a block of {} bytes", self.size)
            }
            AllocErrorKind::Format => Ok(()),
            AllocErrorKind::BudgetExceeded => write!(
                f,
                " (budget {} bytes): requested {} bytes (align {}), {} budget bytes remaining",
                self.budget().unwrap_or(0),
                self.size,
                self.align,
                self.remaining
            ),
            _ => {
                write!(
                    f,
                    ": requested {} bytes (align {}), {} of {} bytes remaining",
                    self.size, self.align, self.remaining, self.capacity
                )?;
                match self.largest_scope() {
                    Some((name, bytes)) if self.kind == AllocErrorKind::OutOfMemory => {
                        write!(f, "; largest live scope: \"{name}\" holds {bytes} bytes")
                    }
                    _ => Ok(()),
                }
            }
        }
    }
}

impl fmt::Debug for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AllocError")
            .field("kind", &self.kind)
            .field("size", &self.size)
            .field("align", &self.align)
            .field("remaining", &self.remaining)
            .field("capacity", &self.capacity)
            .field("scope", &self.scope.as_str())
            .field("budget", &self.budget())
            .field("largest_scope", &self.largest_scope())
            .finish()
    }
}

impl core::error::Error for AllocError {}

/// An [`AllocError`] that hands back the value that could not be placed.
///
/// The `try_` forms that take a value by move return this, so a failed allocation
/// loses nothing.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut block = LinearAllocator::with_capacity(8).unwrap();
/// block.scope("tiny", |s| {
///     let err = s.try_new_object(String::from("too big?")).unwrap_err();
///     // The record plus the String do not fit in 8 bytes: the String comes back.
///     assert_eq!(err.value, "too big?");
///     assert_eq!(err.error.scope_name(), "tiny");
/// });
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct AllocErrorWith<T> {
    /// Why the value could not be placed.
    pub error: AllocError,
    /// The value, untouched.
    pub value: T,
}

impl<T> AllocErrorWith<T> {
    /// What went wrong: the kind of the inner [`error`](Self::error).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut block = LinearAllocator::with_capacity(4).unwrap();
    /// block.scope("s", |s| {
    ///     let err = s.try_new_pod(7u64).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    ///     assert_eq!(err.kind(), err.error.kind());
    /// });
    /// ```
    pub fn kind(&self) -> AllocErrorKind {
        self.error.kind()
    }

    /// Gives back the value and drops the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut block = LinearAllocator::with_capacity(4).unwrap();
    /// block.scope("s", |s| assert_eq!(s.try_new_pod(7u64).unwrap_err().into_value(), 7));
    /// ```
    pub fn into_value(self) -> T {
        self.value
    }
}

/// Keeps the error and drops the value, so `?` on a `try_` form that hands the value
/// back works in a function that returns [`AllocError`].
///
/// ```
/// use scope_stack::{AllocError, AllocErrorKind, LinearAllocator, ScopeStack};
///
/// fn spawn_wave<'s>(level: &ScopeStack<'s>, wave: u32) -> Result<&'s mut [u32; 64], AllocError> {
///     // `try_new_pod` fails with `AllocErrorWith<[u32; 64]>`; `?` turns it into an
///     // `AllocError` and drops the array.
///     let enemies = level.try_new_pod([wave; 64])?;
///     enemies[0] += 1;
///     Ok(enemies)
/// }
///
/// let mut block = LinearAllocator::with_capacity(300).unwrap();
/// block.scope("level", |level| {
///     assert_eq!(spawn_wave(level, 1).unwrap()[0], 2);
///     let err: AllocError = spawn_wave(level, 2).unwrap_err();
///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
///
///     // `From` works outside `?` too.
///     let with = level.try_new_pod([0u64; 8]).unwrap_err();
///     let plain = AllocError::from(with);
///     assert_eq!(plain.scope_name(), "level");
/// });
/// ```
impl<T> From<AllocErrorWith<T>> for AllocError {
    fn from(with: AllocErrorWith<T>) -> AllocError {
        with.error
    }
}

impl<T> fmt::Debug for AllocErrorWith<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AllocErrorWith")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for AllocErrorWith<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl<T> core::error::Error for AllocErrorWith<T> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}
