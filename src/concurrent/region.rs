//! The memory of a concurrent scope: one region of the block, the per-thread slots
//! carved at its start, and the chunks that threads claim from it.
//!
//! Invariants this module keeps:
//! - The region `[start, end)` is the concurrent scope's alone while it is open: the
//!   parent's cursor stands at `end`, so nothing else on the block allocates inside it.
//! - `next` only grows, and only by a successful compare-exchange, so every claim (a
//!   chunk, or one large or slot-less allocation) gets bytes no other claim gets, and
//!   `next <= end` always.
//! - A slot is touched by one thread at a time: the thread that holds its index
//!   exclusively (see `crate::thread_index`), or the closing thread once every worker
//!   is joined. Its `cur` and `chunks` are atomics only so that reports on other
//!   threads may read them; the owner writes them with plain (`Relaxed`) stores.
//! - A chunk's header is written before the chunk is published in its slot's `chunks`
//!   (`Release`); a retired chunk's `used_end` is written before its successor is
//!   published. A report that loads `chunks` (`Acquire`) so reads complete headers.

use core::cell::Cell;
use core::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::scope::finalizer::{Chain, SharedChain};
use crate::sync::{AtomicPtr, AtomicUsize, Ordering};

/// Bytes of one slot: two cache lines, so neighbouring threads never share one.
pub(crate) const SLOT_BYTES: usize = 128;

/// What a thread's bump pointer needs, on cache lines of its own.
#[repr(C, align(128))]
pub(crate) struct Slot {
    /// Next free byte of the current chunk (0 before the first chunk).
    cur: AtomicUsize,
    /// End of the current chunk (0 before the first chunk). Owner only.
    end: Cell<usize>,
    /// First byte after the current chunk's header. Owner only.
    data_start: Cell<usize>,
    /// The newest chunk; each header links the one before it.
    chunks: AtomicPtr<ChunkHeader>,
    /// Finalizers of the values this slot's threads placed. Owner only.
    pub(crate) chain: Chain,
}

#[cfg(not(loom))]
static_assertions::const_assert!(core::mem::size_of::<Slot>() == SLOT_BYTES);

/// The start of every chunk: who claimed it and how far it was used.
#[repr(C)]
pub(crate) struct ChunkHeader {
    /// The chunk claimed before this one by the same slot.
    older: *mut ChunkHeader,
    /// End of the chunk.
    end: usize,
    /// How far the chunk was used when its slot moved on (set before the next chunk is
    /// published; meaningless for the newest chunk, whose use is the slot's `cur`).
    used_end: AtomicUsize,
    /// The slot (thread index) that claimed it.
    thread: u32,
}

/// One chunk as a report sees it.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) struct ChunkView {
    /// The thread index of the slot that claimed it.
    pub(crate) thread: u32,
    /// Address of its first byte (its header).
    pub(crate) start: usize,
    /// Address one past its last byte.
    pub(crate) end: usize,
    /// Address one past the last byte used (`end` minus the wasted tail).
    pub(crate) used_end: usize,
}

impl Slot {
    /// An empty slot: the first allocation claims a chunk.
    pub(crate) fn new() -> Slot {
        Slot {
            cur: AtomicUsize::new(0),
            end: Cell::new(0),
            data_start: Cell::new(0),
            chunks: AtomicPtr::new(ptr::null_mut()),
            chain: Chain::new(),
        }
    }

    /// Bumps `size` bytes at `align` inside the current chunk, or `None` if they do not
    /// fit. `size, align <= MAX_ALIGN` (so nothing overflows: see `crate::block::cursor`).
    #[inline(always)]
    pub(crate) fn bump(&self, size: usize, align: usize) -> Option<usize> {
        let cur = self.cur.load(Ordering::Relaxed);
        let aligned = (cur + (align - 1)) & !(align - 1);
        let new = aligned + size;
        if new > self.end.get() {
            return None;
        }
        self.cur.store(new, Ordering::Relaxed);
        Some(aligned)
    }

    /// As [`bump`](Self::bump) for any size (checked arithmetic).
    #[inline]
    pub(crate) fn bump_any(&self, size: usize, align: usize) -> Option<usize> {
        let cur = self.cur.load(Ordering::Relaxed);
        let aligned = cur.checked_add(align - 1)? & !(align - 1);
        let end = self.end.get();
        if aligned > end || size > end - aligned {
            return None;
        }
        self.cur.store(aligned + size, Ordering::Relaxed);
        Some(aligned)
    }

    /// The bump pointer (owner, or a report).
    #[inline]
    pub(crate) fn cur(&self) -> usize {
        self.cur.load(Ordering::Relaxed)
    }

    /// The end of the current chunk (0 before the first).
    #[inline(always)]
    pub(crate) fn end(&self) -> usize {
        self.end.get()
    }

    /// Where the current chunk's data begins (0 before the first).
    #[inline(always)]
    pub(crate) fn data_start(&self) -> usize {
        self.data_start.get()
    }

    /// Room left in the current chunk.
    pub(crate) fn room(&self) -> usize {
        self.end.get() - self.cur().min(self.end.get())
    }

    /// Moves the bump pointer within the current chunk (give back or grow the newest
    /// allocation); callers check [`is_last`](Self::is_last) and `to <= end`.
    #[inline]
    pub(crate) fn set_cur(&self, to: usize) {
        debug_assert!(to >= self.data_start.get() && to <= self.end.get());
        self.cur.store(to, Ordering::Relaxed);
    }

    /// Starts a new chunk `[start, end)` for this slot (index `thread`), retiring the
    /// current one.
    ///
    /// # Safety
    /// The caller owns the slot, and `[start, end)` was just claimed from the region,
    /// is aligned for a header and holds more than one.
    pub(crate) unsafe fn start_chunk(
        &self,
        base: NonNull<u8>,
        start: usize,
        end: usize,
        thread: u32,
    ) {
        let old = self.chunks.load(Ordering::Relaxed);
        if let Some(old) = NonNull::new(old) {
            // SAFETY: our own newest chunk's header, valid while the scope is open.
            unsafe {
                (*old.as_ptr())
                    .used_end
                    .store(self.cur(), Ordering::Relaxed)
            };
        }
        let header = base.as_ptr().with_addr(start).cast::<ChunkHeader>();
        // SAFETY: per the caller, the header fits at `start`, which nobody else uses.
        unsafe {
            header.write(ChunkHeader {
                older: old,
                end,
                used_end: AtomicUsize::new(end),
                thread,
            })
        };
        let data = start + core::mem::size_of::<ChunkHeader>();
        self.data_start.set(data);
        self.end.set(end);
        self.cur.store(data, Ordering::Relaxed);
        // Release: a report that sees the new chunk sees its header and the old
        // chunk's `used_end`.
        self.chunks.store(header, Ordering::Release);
    }

    /// Calls `f` for each chunk of this slot, newest first.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn for_each_chunk(&self, mut f: impl FnMut(ChunkView)) {
        let newest = self.chunks.load(Ordering::Acquire);
        let mut at = newest;
        while let Some(h) = NonNull::new(at) {
            // SAFETY: published headers stay valid while the scope is open (the report
            // borrows it), and were complete when published (module invariant).
            let h = unsafe { &*h.as_ptr() };
            let start = at.addr();
            let used_end = if at == newest {
                // The owner may have moved on since: clamp to this chunk.
                self.cur().clamp(start, h.end)
            } else {
                h.used_end.load(Ordering::Relaxed)
            };
            f(ChunkView {
                thread: h.thread,
                start,
                end: h.end,
                used_end,
            });
            at = h.older;
        }
    }
}

/// The shared part of a concurrent scope's memory.
pub(crate) struct Region {
    /// End of the region (the block's limit, or the budget's).
    pub(crate) end: usize,
    /// Next unclaimed byte; only grows, except that the owner of the newest direct
    /// claim may take back its unused tail (module invariant).
    next: CachePadded<AtomicUsize>,
    /// Bytes claimed straight from the region (large or slot-less allocations); for
    /// reports.
    direct: CachePadded<AtomicUsize>,
    /// Finalizers of values placed by threads without a slot.
    pub(crate) overflow: SharedChain,
}

impl Region {
    pub(crate) fn new(start: usize, end: usize) -> Region {
        Region {
            end,
            next: CachePadded::new(AtomicUsize::new(start)),
            direct: CachePadded::new(AtomicUsize::new(0)),
            overflow: SharedChain::new(),
        }
    }

    /// Claims `size` bytes at `align` (a power of two at most `MAX_ALIGN`), or `None`
    /// when the region has no room for them.
    pub(crate) fn claim(&self, size: usize, align: usize) -> Option<usize> {
        // Relaxed: the compare-exchange alone keeps claims apart; nothing is published
        // through `next`.
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            // `cur <= end`, which is far below `usize::MAX` (see `crate::block::cursor`).
            let aligned = (cur + (align - 1)) & !(align - 1);
            if aligned > self.end || size > self.end - aligned {
                return None;
            }
            match self.next.compare_exchange_weak(
                cur,
                aligned + size,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(aligned),
                Err(now) => cur = now,
            }
        }
    }

    /// Claims `size` bytes for one allocation (not a chunk), counting them as direct.
    pub(crate) fn claim_direct(&self, size: usize, align: usize) -> Option<usize> {
        let at = self.claim(size, align)?;
        self.direct.fetch_add(size, Ordering::Relaxed);
        Some(at)
    }

    /// Takes back `[keep, claimed)`, the unused tail of a direct claim, if no claim
    /// followed it (the region's next byte is still `claimed`). Returns whether it did.
    ///
    /// # Safety
    /// `[keep, claimed)` is the tail of room this caller claimed straight from the
    /// region (not a chunk) with `claim_direct`, and nothing in it is in use.
    pub(crate) unsafe fn give_back_direct(&self, keep: usize, claimed: usize) -> bool {
        // Relaxed, as in `claim`: the compare-exchange alone keeps claims apart. If it
        // succeeds, nothing was claimed above `claimed`, so the tail is nobody's; a
        // later claim may take it again.
        let taken_back = keep < claimed
            && self
                .next
                .compare_exchange(claimed, keep, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        if taken_back {
            self.direct.fetch_sub(claimed - keep, Ordering::Relaxed);
        }
        taken_back
    }

    /// The highest address claimed so far.
    pub(crate) fn top(&self) -> usize {
        self.next.load(Ordering::Relaxed)
    }

    /// Bytes not claimed yet.
    pub(crate) fn unclaimed(&self) -> usize {
        self.end - self.top().min(self.end)
    }

    /// Bytes claimed by single allocations (not chunks).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn direct_bytes(&self) -> usize {
        self.direct.load(Ordering::Relaxed)
    }
}
