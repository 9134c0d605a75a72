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

/// What had a capacity of zero, for an [`AllocErrorKind::InvalidCapacity`] raised by a
/// scope (a block's own zero capacity has no scope and says "a block of 0 bytes").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum ZeroCapacity {
    /// Not recorded: the message falls back to the sizes.
    Unknown,
    /// `new_pool(0)` and friends.
    Pool,
    /// `new_dense_pool(0)`.
    DensePool,
    /// `new_store(0, _)`.
    StoreObjects,
    /// `new_store(_, 0)`.
    StoreVersions,
}

impl ZeroCapacity {
    /// The plain sentence that follows `invalid capacity in scope "…": `.
    fn explain(self) -> Option<&'static str> {
        match self {
            ZeroCapacity::Unknown => None,
            ZeroCapacity::Pool => Some("a pool needs at least one slot (capacity 0)"),
            ZeroCapacity::DensePool => Some("a dense pool needs at least one slot (capacity 0)"),
            ZeroCapacity::StoreObjects => {
                Some("a store needs room for at least one object (max_objects 0)")
            }
            ZeroCapacity::StoreVersions => {
                Some("a store needs room for at least one version (max_versions 0)")
            }
        }
    }
}

/// A scope name copied into the error, so the error owns no borrowed data.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct InlineName {
    bytes: [u8; MAX_ERROR_NAME_LEN],
    len: u8,
}

impl InlineName {
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
    /// The budget of `scope`, for `BudgetExceeded` (`usize::MAX`: none).
    budget: usize,
    /// The live scope that held the most bytes of its own when the error happened
    /// (an empty name: none recorded).
    holder: InlineName,
    holder_bytes: usize,
    /// For `InvalidCapacity` raised by a scope: what had the zero capacity.
    zero: ZeroCapacity,
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
            budget: usize::MAX,
            holder: InlineName::EMPTY,
            holder_bytes: 0,
            zero: ZeroCapacity::Unknown,
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
            budget: usize::MAX,
            holder: InlineName::EMPTY,
            holder_bytes: 0,
            zero: ZeroCapacity::Unknown,
        }
    }

    /// Records the budget that was exceeded.
    pub(crate) fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget;
        self
    }

    /// Records what had the zero capacity of an `InvalidCapacity` error.
    pub(crate) fn with_zero_capacity(mut self, zero: ZeroCapacity) -> Self {
        self.zero = zero;
        self
    }

    /// Records which live scope held the most memory.
    pub(crate) fn with_holder(mut self, name: &str, bytes: usize) -> Self {
        self.holder = InlineName::new(name);
        self.holder_bytes = bytes;
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
        (self.budget != usize::MAX).then_some(self.budget)
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
        (self.holder.len > 0).then(|| (self.holder.as_str(), self.holder_bytes))
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
        let zero = match self.kind {
            AllocErrorKind::InvalidCapacity => self.zero.explain(),
            _ => None,
        };
        // A zero-capacity pool or store says so in words after the scope's name.
        f.write_str(if zero.is_some() {
            "invalid capacity"
        } else {
            self.kind.describe()
        })?;
        if self.scope.len > 0 {
            write!(f, " in scope \"{}\"", self.scope.as_str())?;
        }
        if let Some(zero) = zero {
            return write!(f, ": {zero}");
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
