//! The ID table: object index → packed entry word, in two levels.
//!
//! The top level is a fixed array of block pointers, all null at first. A block holds
//! [`BLOCK_LEN`] entry words (the object's generation and its current version) and as
//! many free-list links. Every block's memory is carved from the scope up front, so
//! the memory map is fixed, but a block is only written (its pages only touched) when
//! the first object in it is created: that creator wins a compare-exchange of the
//! block's pointer from null to a "being filled" mark, fills the block, and publishes
//! the real pointer. Memory in use therefore follows the IDs in use.
//!
//! Object indices come from two sources: a bump counter of never-used indices, and a
//! stack of recycled ones (destroyed objects, put back by `end_frame`).
//!
//! Invariants:
//! - A top-level pointer is null (block untouched), the *filling* mark (one
//!   creator is writing it) or the block's address, and never changes again once it is an
//!   address. Only an address is ever dereferenced, and it is read with Acquire, after
//!   the Release that published it, so the block's contents are visible.
//! - An entry with no version (`version == NONE`) is never written by anyone except
//!   the creator that claimed its index (commit and destroy fail on such an entry).
//! - The recycled stack is pushed only under `&mut` (in `end_frame`) and popped only
//!   under `&` (in `create`). Pops alone cannot suffer ABA: a head index can only come
//!   back to the top through a push.

use core::ptr::{self, NonNull};

#[cfg(not(loom))]
use core::sync::atomic::AtomicPtr;
#[cfg(loom)]
use loom::sync::atomic::AtomicPtr;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// Objects per block (small under loom, whose atomics are large and slow to model).
pub(crate) const BLOCK_LEN: usize = if cfg!(loom) { 4 } else { 1024 };

/// "No index" / "no version".
pub(crate) const NONE: u32 = u32::MAX;

/// One block of the table.
pub(crate) struct Block {
    /// Packed entry words; see [`pack`].
    entries: [AtomicU64; BLOCK_LEN],
    /// Free-list and retired-list links of the object indices in this block.
    links: [AtomicU32; BLOCK_LEN],
}

/// Packs a generation and a version slot (or [`NONE`]) into an entry word. The low
/// half holds `version + 1`, so a zero low half means "no version".
#[inline(always)]
pub(crate) fn pack(generation: u32, version: u32) -> u64 {
    (u64::from(generation) << 32) | u64::from(version.wrapping_add(1))
}

/// The generation in an entry word.
#[inline(always)]
pub(crate) fn generation(word: u64) -> u32 {
    (word >> 32) as u32
}

/// The version slot in an entry word, or [`NONE`].
#[inline(always)]
pub(crate) fn version(word: u64) -> u32 {
    (word as u32).wrapping_sub(1)
}

/// The mark a block pointer holds while its block is being filled. It is never
/// dereferenced, and no real block lives at this (tiny, provenance-free) address.
#[inline(always)]
fn filling() -> *mut Block {
    NonNull::<Block>::dangling().as_ptr()
}

pub(crate) struct Table {
    /// `blocks` pointers, null until filled.
    top: NonNull<AtomicPtr<Block>>,
    /// `blocks` blocks of uninitialised scope memory.
    storage: NonNull<Block>,
    blocks: u32,
    max_objects: u32,
    /// The generation every entry starts at: different for every store, so that an id
    /// of another store (or of an earlier store in the same memory) rarely matches.
    seed: u32,
    /// The next never-used index.
    fresh: CachePadded<AtomicU32>,
    /// A copy of `fresh` in scope memory, for memory map reports (which must not read
    /// the store object): the most object indices ever in use at once. Written only
    /// when a never-used index is handed out.
    high_water: NonNull<AtomicU32>,
    /// Top of the recycled-index stack (linked through the blocks' `links`).
    recycled: CachePadded<AtomicU32>,
}

// SAFETY: the table's pointers name scope memory that the table alone uses, and every
// shared access to it goes through atomics.
unsafe impl Send for Table {}
// SAFETY: as above.
unsafe impl Sync for Table {}

impl Table {
    /// The number of blocks for `max_objects`.
    pub(crate) fn blocks_for(max_objects: usize) -> usize {
        max_objects.div_ceil(BLOCK_LEN)
    }

    /// Makes a table over carved memory.
    ///
    /// # Safety
    /// `top` has room for `blocks_for(max_objects)` pointers and `storage` for as many
    /// blocks, both aligned, unused by anything else and valid for as long as the table
    /// is used. `max_objects` is at most `u32::MAX` (so no index equals [`NONE`]).
    /// Every entry starts at generation `seed`. `high_water` is valid for writes, used
    /// by nothing else but reports, and valid as long as the table.
    pub(crate) unsafe fn new(
        top: NonNull<AtomicPtr<Block>>,
        storage: NonNull<Block>,
        high_water: NonNull<AtomicU32>,
        max_objects: usize,
        seed: u32,
    ) -> Table {
        let blocks = Self::blocks_for(max_objects);
        for b in 0..blocks {
            // SAFETY: `b < blocks`, within the caller's array.
            unsafe { top.add(b).write(AtomicPtr::new(ptr::null_mut())) };
        }
        // SAFETY: valid for writes (the caller).
        unsafe { high_water.write(AtomicU32::new(0)) };
        Table {
            top,
            storage,
            blocks: blocks as u32,
            max_objects: max_objects as u32,
            seed,
            fresh: CachePadded::new(AtomicU32::new(0)),
            recycled: CachePadded::new(AtomicU32::new(NONE)),
            high_water,
        }
    }

    /// The capacity in objects.
    pub(crate) fn max_objects(&self) -> u32 {
        self.max_objects
    }

    /// Block `b`'s pointer slot.
    #[inline(always)]
    fn top(&self, b: u32) -> &AtomicPtr<Block> {
        debug_assert!(b < self.blocks);
        // SAFETY: `b < blocks`; the array was initialised in `new` and lives as long as
        // the table.
        unsafe { self.top.add(b as usize).as_ref() }
    }

    /// The block holding `index`, if it has been published.
    #[inline(always)]
    fn block(&self, index: u32) -> Option<&Block> {
        if index >= self.max_objects {
            return None;
        }
        // Acquire: pairs with the Release that published the pointer, so the block's
        // initialised contents are visible before we read them.
        let p = self.top(index / BLOCK_LEN as u32).load(Ordering::Acquire);
        if p.is_null() || p == filling() {
            return None;
        }
        // SAFETY: a published pointer names a fully initialised block that lives as
        // long as the table (see the module invariants).
        Some(unsafe { &*p })
    }

    /// The entry word of `index`, if its block exists.
    #[inline(always)]
    pub(crate) fn entry(&self, index: u32) -> Option<&AtomicU64> {
        let block = self.block(index)?;
        Some(&block.entries[index as usize % BLOCK_LEN])
    }

    /// The link of `index`. Panics if its block does not exist (callers only pass
    /// indices of objects that were created).
    #[inline]
    pub(crate) fn link(&self, index: u32) -> &AtomicU32 {
        let block = self.block(index).expect("index of a created object");
        &block.links[index as usize % BLOCK_LEN]
    }

    /// Claims an object index for a new object: a recycled one if any, else a fresh
    /// one (filling its block if it is the block's first). `None` when every index is
    /// in use. Returns the index and its entry, which only the caller may write until
    /// it stores a version in it.
    pub(crate) fn claim(&self) -> Option<(u32, &AtomicU64)> {
        let index = match self.pop_recycled() {
            Some(i) => i,
            None => self.bump_fresh()?,
        };
        let block = self.ensure_block(index / BLOCK_LEN as u32);
        Some((index, &block.entries[index as usize % BLOCK_LEN]))
    }

    fn pop_recycled(&self) -> Option<u32> {
        // Relaxed throughout: the stack and its links were written by `end_frame`
        // under `&mut`, which happens-before every `&` access of this frame; the
        // compare-exchange only has to make each pop unique, and without concurrent
        // pushes a popped head can never reappear (no ABA).
        let mut head = self.recycled.load(Ordering::Relaxed);
        while head != NONE {
            let next = self.link(head).load(Ordering::Relaxed);
            match self.recycled.compare_exchange_weak(
                head,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(head),
                Err(h) => head = h,
            }
        }
        None
    }

    fn bump_fresh(&self) -> Option<u32> {
        // Relaxed: the counter only hands out distinct numbers; it orders no data.
        let mut next = self.fresh.load(Ordering::Relaxed);
        loop {
            if next >= self.max_objects {
                return None;
            }
            match self.fresh.compare_exchange_weak(
                next,
                next + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    // For reports. Relaxed: a count, it orders nothing. `fetch_max`:
                    // racing creators may get here out of order.
                    // SAFETY: initialised in `new`, valid as long as the table.
                    unsafe { self.high_water.as_ref() }.fetch_max(next + 1, Ordering::Relaxed);
                    return Some(next);
                }
                Err(n) => next = n,
            }
        }
    }

    /// Block `b`, filling and publishing it first if nobody has.
    fn ensure_block(&self, b: u32) -> &Block {
        let slot = self.top(b);
        // Acquire: see `block`.
        let mut p = slot.load(Ordering::Acquire);
        if p.is_null() {
            // Acquire on failure: we may read the winner's published block below.
            match slot.compare_exchange(
                ptr::null_mut(),
                filling(),
                Ordering::Relaxed,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: `b < blocks`, so the block lies in `storage`.
                    let block = unsafe { self.storage.add(b as usize) };
                    // SAFETY: winning the exchange makes us the block's only writer;
                    // nobody reads it before the pointer is published below.
                    unsafe { Self::fill(block, self.seed) };
                    // Release: readers that load this pointer see the filled block.
                    slot.store(block.as_ptr(), Ordering::Release);
                    // SAFETY: filled just now; lives as long as the table.
                    return unsafe { block.as_ref() };
                }
                Err(q) => p = q,
            }
        }
        // Another creator is filling it: wait (only creators ever wait, and only for
        // one block of stores).
        while p == filling() {
            spin();
            p = slot.load(Ordering::Acquire);
        }
        // SAFETY: a published pointer (see `block`).
        unsafe { &*p }
    }

    /// Writes a block's initial contents: every entry "generation `seed`, no version",
    /// every link [`NONE`].
    ///
    /// # Safety
    /// `block` is valid for writes and nobody else accesses it.
    unsafe fn fill(block: NonNull<Block>, seed: u32) {
        let block = block.as_ptr();
        let fresh = pack(seed, NONE);
        for i in 0..BLOCK_LEN {
            // SAFETY: in bounds of the block, exclusively ours (per the caller).
            unsafe {
                ptr::addr_of_mut!((*block).entries[i]).write(AtomicU64::new(fresh));
                ptr::addr_of_mut!((*block).links[i]).write(AtomicU32::new(NONE));
            }
        }
    }

    /// Puts a chain of destroyed object indices (linked through `link`, ending in
    /// [`NONE`]) on the recycled stack. `&mut`: no pop can run meanwhile.
    pub(crate) fn recycle_chain(&mut self, head: u32) {
        if head == NONE {
            return;
        }
        // Relaxed: `&mut self` excludes every other access.
        let mut tail = head;
        loop {
            let next = self.link(tail).load(Ordering::Relaxed);
            if next == NONE {
                break;
            }
            tail = next;
        }
        let old = self.recycled.load(Ordering::Relaxed);
        self.link(tail).store(old, Ordering::Relaxed);
        self.recycled.store(head, Ordering::Relaxed);
    }
}

/// One round of waiting for another thread.
#[inline]
pub(crate) fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

/// What a memory map report shows of a table: `(live objects, high-water mark)`.
///
/// Counts the entries that hold a version, O(`max_objects`), in published blocks only
/// (an unpublished block is uninitialised memory). Reads only the top-level pointers,
/// the blocks' entry words and the high-water word, all atomics in scope memory that
/// the table reaches through raw pointers and never borrows mutably; so it may run
/// while the caller holds `&mut Store`, or while other threads use the store (it then
/// sees each word before or after a change).
///
/// # Safety
/// `top`, `blocks`, `max_objects` and `high_water` are those of a live table (its
/// scope has not ended).
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) unsafe fn report_counts(
    top: NonNull<AtomicPtr<Block>>,
    blocks: usize,
    max_objects: usize,
    high_water: *const AtomicU32,
) -> (usize, usize) {
    let mut live = 0;
    for b in 0..blocks {
        // SAFETY: `b < blocks`; the top array is initialised in `Table::new`.
        let slot = unsafe { top.add(b).as_ref() };
        // Acquire: as in `Table::block`, so a published block's contents are visible.
        let p = slot.load(Ordering::Acquire);
        if p.is_null() || p == filling() {
            continue;
        }
        // SAFETY: a published pointer names a filled block that lives as long as the
        // table (module invariants); it is only ever shared.
        let block = unsafe { &*p };
        let n = (max_objects - b * BLOCK_LEN).min(BLOCK_LEN);
        live += block.entries[..n]
            .iter()
            .filter(|e| version(e.load(Ordering::Relaxed)) != NONE)
            .count();
    }
    // SAFETY: initialised in `Table::new`, valid as long as the table.
    let high = unsafe { &*high_water }.load(Ordering::Relaxed) as usize;
    (live, high)
}
