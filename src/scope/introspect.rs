//! What a scope says about itself: its name, depth, start, bytes used, finalizer
//! count, room left and budget.
//!
//! This module owns the read-only face of a scope. Invariant: nothing here changes the
//! scope or the block; every figure is read from the scope's record and the cursor at
//! the moment of the call.

use crate::block::linear::LinearAllocator;

use super::ScopeStack;

impl<'s> ScopeStack<'s> {
    /// The name this scope was opened with.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("systems", |s| assert_eq!(s.name(), "systems"));
    /// ```
    #[inline]
    pub fn name(&self) -> &'s str {
        // SAFETY: the record lives as long as the scope (`'s`), and so does its name.
        unsafe { &*core::ptr::from_ref(self.info.name()) }
    }

    /// Nesting depth: 0 for the outermost scope, 1 for its children, and so on.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| a.scope("b", |b| assert_eq!(b.depth(), 1)));
    /// ```
    pub fn depth(&self) -> u32 {
        self.info.depth()
    }

    /// The block this scope allocates from (for its statistics).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| assert_eq!(a.allocator().capacity(), 64));
    /// ```
    #[inline]
    pub fn allocator(&self) -> &'s LinearAllocator {
        self.alloc()
    }

    /// Offset of this scope's start from the start of the block.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_pod([0u8; 10]);
    ///     a.scope("b", |b| assert_eq!(b.start_offset(), 10));
    /// });
    /// ```
    pub fn start_offset(&self) -> usize {
        self.alloc().offset_of(self.info.start)
    }

    /// Bytes this scope has taken so far (including alignment padding and finalizer
    /// records).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_pod(1u64);
    ///     assert_eq!(a.used(), 8);
    /// });
    /// ```
    #[inline]
    pub fn used(&self) -> usize {
        self.alloc()
            .counted_between(self.info.start, self.cursor.cur())
    }

    /// How many finalizer records this scope holds (values whose destructor will run
    /// when it unwinds).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     a.new_object(String::from("needs drop"));
    ///     a.new_object(5u32); // no drop, no record
    ///     assert_eq!(a.finalizer_count(), 1);
    /// });
    /// ```
    pub fn finalizer_count(&self) -> usize {
        self.info.chain.len()
    }

    /// Bytes this scope may still allocate: the room left in the block, or less when a
    /// budget applies (this scope's own, or that of a budgeted scope it is nested in).
    ///
    /// A request of exactly `remaining()` bytes at alignment 1 succeeds; one byte more
    /// fails. Requests with a larger alignment may need padding, and values that need
    /// drop need a finalizer record too, so they fit in less. While a scratch scope
    /// interrupts this one (see [`crate::scratch()`]), nothing may be allocated here and
    /// this is 0.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1000).unwrap();
    /// memory.scope("systems", |systems| {
    ///     systems.alloc_raw(100, 1);
    ///     assert_eq!(systems.remaining(), 900);
    ///     systems.scope_with_budget("audio", 64, |audio| {
    ///         audio.alloc_raw(14, 1);
    ///         assert_eq!(audio.remaining(), 50); // the budget binds, not the block
    ///         audio.alloc_raw(audio.remaining(), 1);
    ///         assert!(audio.try_alloc_raw(1, 1).is_err());
    ///     });
    /// });
    /// ```
    #[inline]
    pub fn remaining(&self) -> usize {
        self.cursor.remaining()
    }

    /// The byte budget this scope was opened with
    /// ([`scope_with_budget`](Self::scope_with_budget)), clamped to the room its parent
    /// had left, or `None` for a scope opened without one. A scope nested inside a budgeted one reports `None` here but is still
    /// held to the outer budget; [`remaining`](Self::remaining) shows the room that
    /// actually applies.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1000).unwrap();
    /// memory.scope("systems", |systems| {
    ///     assert_eq!(systems.budget(), None);
    ///     systems.scope_with_budget("audio", 64, |audio| {
    ///         assert_eq!(audio.budget(), Some(64));
    ///         audio.scope("voice", |voice| {
    ///             assert_eq!(voice.budget(), None);
    ///             assert_eq!(voice.remaining(), 64); // but the outer budget applies
    ///         });
    ///     });
    /// });
    /// ```
    #[inline]
    pub fn budget(&self) -> Option<usize> {
        self.info.budget()
    }
}
