//! The slot table: one record per slot, in the carving scope's memory, with the slot's
//! state, its sub-block and the record of the scope loaded on it.
//!
//! This module owns the slot state machine and what a report may read. Invariants:
//! - One atomic word, `state`, holds the slot's phase (its low two bits: `FREE`,
//!   `BUILDING`, `LOADED`, `CLOSING`), the `OPEN` bit (the holder's fields are
//!   published), and, above them, how many reports have pinned the slot to read its
//!   contents. Keeping both in one word is what makes the read
//!   pin sound: every change to either is a read-modify-write or a store of that one
//!   location, so all of them fall in the location's single modification order, and no
//!   thread can pair a new phase with an old count or the other way round.
//! - The phase goes `FREE -> BUILDING` only by a compare-exchange (acquire), then
//!   `BUILDING -> BUILDING | OPEN -> LOADED | OPEN -> CLOSING | OPEN -> FREE` (or
//!   `BUILDING [| OPEN] -> CLOSING [| OPEN] -> FREE` for a build that fails) only by
//!   the thread that won it, so at most one thread holds a slot, and a new holder sees
//!   everything the previous one did (`FREE` is stored with release).
//! - The read pin (issue 37): a report adds one reader with a compare-exchange that
//!   succeeds only from `BUILDING | OPEN` or `LOADED | OPEN` (acquire, so it sees what
//!   the holder published with `OPEN`, and with `LOADED` the whole build), and takes it
//!   away with a release subtraction. `OPEN` is stored (release) once the holder has
//!   written the scope record and, for a concurrent load, the concurrent scope, before
//!   `build` runs: with no `OPEN` there is no pin, so that store is a plain one, and
//!   the move to `LOADED` that may follow pins taken during the build is a
//!   read-modify-write that adds to the phase bits and keeps the count (issue 47: a
//!   map shows what a slot being built has placed and carved so far). The holder's unload begins by moving the
//!   phase to `CLOSING` with one read-modify-write, which returns the count at that
//!   point of the modification order: every pin that succeeded came before it and is
//!   counted, and no pin can succeed after it. The holder then waits (acquire loads)
//!   until the count is 0, which orders every pinned read before anything the unload
//!   drops or rewinds, and only then stores `FREE`. So a report reads a slot's memory
//!   only while one holder holds it for the whole read, with that holder's build
//!   visible; the next holder's claim happens after the release store of `FREE`, after
//!   every pinned read.
//!   The earlier design kept the count and a `closing` flag in words of their own and
//!   relied on `SeqCst` between them; its `free` cleared the flag before it stored
//!   `FREE`, so a pin could pair the cleared flag with the old `LOADED` and read the
//!   slot while the next load rewrote it (a segfault from safe code).
//! - A record's [`Holder`] (the sub-block, the scope record, the handle, the root) is
//!   touched only by the slot's holder, by the carving code before the `Slots` is
//!   shared, or read by a report under a read pin (the fields the holder published
//!   before `OPEN`, and the atomics behind them), or, without a pin, the atomic bump
//!   pointer of the sub-block's root cursor (the `block` field is never rewritten
//!   after carving, and the cursor's `cur` is an atomic).
//! - What other threads read for reports without a pin (the name copy, `used`,
//!   `high_water`) is
//!   atomic. The name copy is a sequence lock: `name_seq` is odd while its holder
//!   rewrites the length and words, and even once they are whole. The writer makes it
//!   odd, then a release fence, then the words, then the even value with release; a
//!   reader loads it (acquire), the words, an acquire fence, and the sequence again.
//!   Equal and even means the words are one holder's whole name; anything else is
//!   retried or reported as no name. A freed slot's copy is empty: its holder stores
//!   length 0 (relaxed) before the release store of `FREE`. That store needs no
//!   sequence step, because it leaves the words as they are: a reader takes either
//!   the whole old name or none. A reader that sees a later holder's state has
//!   synchronised with that `FREE` store (the claim's compare-exchange continues its
//!   release sequence), so it reads length 0 or the later holder's own, sequence-locked
//!   name, never the freed slot's name under the new holder.
//! - The sub-block's cursor and scope list never reach into the parent block's list of
//!   live scopes, so nothing the parent's close or reports read points into a slot.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};

use crate::block::linear::LinearAllocator;
use crate::scope::info::ScopeInfo;
use crate::scope::ScopeStack;
use crate::sync::{fence, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Phase: nobody holds the slot (and no report reads it).
pub(crate) const FREE: u32 = 0;
/// Phase: a `load` is building the slot's root.
pub(crate) const BUILDING: u32 = 1;
/// Phase: a `Loaded` holds the slot; reports may pin it.
pub(crate) const LOADED: u32 = 2;
/// Phase: the holder has begun to unload; no new pin, and the unload waits for the
/// pins taken before.
pub(crate) const CLOSING: u32 = 3;
/// The bits of `state` that hold the phase.
const PHASE: u32 = 3;
/// Set beside `BUILDING` once the holder has written the fields a report reads under
/// a pin (the scope record, and the concurrent scope of a concurrent load), and kept
/// through `LOADED` and `CLOSING` until `FREE`: a pin succeeds only with it.
const OPEN: u32 = 4;
/// One report's pin, in the bits of `state` above the phase and `OPEN`.
const READER: u32 = (PHASE | OPEN) + 1;
/// The most pins at once (the count's bits); a report that would pass it reads the
/// slot as not loaded instead.
const MAX_READERS: u32 = u32::MAX / READER;

/// Bytes of a loaded scope's name that the table keeps (longer names are cut at a
/// character boundary).
pub(crate) const NAME_BYTES: usize = 48;
const NAME_WORDS: usize = NAME_BYTES / 8;

/// Drops a root in place (the function is made for the root's type when it is placed).
pub(crate) type DropRoot = unsafe fn(NonNull<u8>);

/// One slot.
pub(crate) struct Record {
    /// The phase (`FREE`, `BUILDING`, `LOADED` or `CLOSING`) in the low bits, and the
    /// read pins above it, in `READER` steps (module invariant).
    state: AtomicU32,
    /// The name copy's sequence lock: odd while the holder rewrites it (module
    /// invariant).
    name_seq: AtomicU32,
    /// The holder's name, for reports: its length and bytes in words (0 when free).
    name_len: AtomicUsize,
    name_words: [AtomicU64; NAME_WORDS],
    /// Bytes in use in the slot, as of the last build or `with_mut`.
    pub(crate) used: AtomicUsize,
    /// The most bytes ever in use in the slot (its sub-block's high-water mark, as of
    /// the last publish).
    pub(crate) high_water: AtomicUsize,
    /// Loads so far.
    pub(crate) loads: AtomicUsize,
    /// Holder-only state (module invariant).
    holder: UnsafeCell<Holder>,
}

/// What only the slot's holder touches.
pub(crate) struct Holder {
    /// The slot's sub-block: its own cursor, high-water mark and list of live scopes.
    pub(crate) block: LinearAllocator,
    /// The loaded scope's record (initialised while the slot is held).
    pub(crate) info: MaybeUninit<ScopeInfo>,
    /// The handle lent to `build` and `with_mut` (initialised while the slot is held).
    pub(crate) handle: MaybeUninit<ScopeStack<'static>>,
    /// The loaded scope's name (the record's name points here).
    pub(crate) name: [u8; NAME_BYTES],
    pub(crate) name_len: usize,
    /// The root, once built, and how to drop it; `None` also for a root without drop
    /// glue (nothing to call when the slot unloads).
    pub(crate) root: Option<(NonNull<u8>, DropRoot)>,
    /// The concurrent scope of a `load_concurrent`, in the slot's memory.
    pub(crate) concurrent: Option<NonNull<crate::concurrent::Detached<'static>>>,
}

impl Record {
    /// A free slot over `block`.
    pub(crate) fn new(block: LinearAllocator) -> Record {
        Record {
            state: AtomicU32::new(FREE),
            name_seq: AtomicU32::new(0),
            name_len: AtomicUsize::new(0),
            name_words: core::array::from_fn(|_| AtomicU64::new(0)),
            used: AtomicUsize::new(0),
            high_water: AtomicUsize::new(0),
            loads: AtomicUsize::new(0),
            holder: UnsafeCell::new(Holder {
                block,
                info: MaybeUninit::uninit(),
                handle: MaybeUninit::uninit(),
                name: [0; NAME_BYTES],
                name_len: 0,
                root: None,
                concurrent: None,
            }),
        }
    }

    /// Takes the slot if it is free.
    #[inline]
    pub(crate) fn try_claim(&self) -> bool {
        // Relaxed first look: a busy slot costs no read-modify-write. Acquire on
        // success: the previous holder's writes (its release in `free`) are visible.
        self.state.load(Ordering::Relaxed) == FREE
            && self
                .state
                .compare_exchange(FREE, BUILDING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// The holder's name, as written by the open.
    ///
    /// # Safety
    /// The caller holds the slot (it is open), and uses the name only while it is.
    #[inline]
    pub(crate) unsafe fn holder_name<'x>(&self) -> &'x str {
        let h = self.holder.get();
        // SAFETY: per the caller; a shared borrow of the name field only, which the
        // open filled with `name_len` bytes of a `str` cut at a character boundary.
        unsafe {
            let len = *ptr::addr_of!((*h).name_len);
            let bytes: &[u8; NAME_BYTES] = &*ptr::addr_of!((*h).name);
            core::str::from_utf8_unchecked(&bytes[..len])
        }
    }

    /// A raw pointer to the holder. Callers reach its fields one at a time through it
    /// (never a `&mut Holder`), so the references lent out of one field stay valid
    /// while another is written.
    #[inline]
    pub(crate) fn holder_ptr(&self) -> *mut Holder {
        self.holder.get()
    }

    /// Copies the holder's name (`name` cut to [`NAME_BYTES`] at a character boundary)
    /// into the holder's buffer, which the open scope's record points at, and into the
    /// copy reports read: one pass of whole words, each stored in both places.
    ///
    /// # Safety
    /// The caller has just claimed the slot: it holds it, and nothing borrows the
    /// holder's name (the previous holder's scope is closed).
    #[inline]
    pub(crate) unsafe fn set_name(&self, name: &str) {
        let len = cut_len(name);
        let bytes = &name.as_bytes()[..len];
        let h = self.holder.get();
        // SAFETY: per the caller we hold the slot, so nobody else touches the holder,
        // and no reference to its name field is live; one field through the pointer.
        let buf: &mut [u8; NAME_BYTES] = unsafe { &mut *ptr::addr_of_mut!((*h).name) };
        self.write_name(|words, name_len| {
            if len <= 8 {
                // One word (most names): no loop.
                if len > 0 {
                    let w = tail_word(bytes);
                    buf[..8].copy_from_slice(&w.to_le_bytes());
                    words[0].store(w, Ordering::Relaxed);
                }
                name_len.store(len, Ordering::Relaxed);
                return;
            }
            let mut whole = bytes.chunks_exact(8);
            let mut slots = words.iter().zip(buf.chunks_exact_mut(8));
            for (chunk, (word, dst)) in whole.by_ref().zip(slots.by_ref()) {
                let mut w = [0u8; 8];
                w.copy_from_slice(chunk);
                dst.copy_from_slice(&w);
                word.store(u64::from_le_bytes(w), Ordering::Relaxed);
            }
            let rest = whole.remainder();
            if !rest.is_empty() {
                if let Some((word, dst)) = slots.next() {
                    let w = tail_word(rest);
                    dst.copy_from_slice(&w.to_le_bytes());
                    word.store(w, Ordering::Relaxed);
                }
            }
            name_len.store(len, Ordering::Relaxed);
        });
        // SAFETY: as above.
        unsafe { ptr::addr_of_mut!((*h).name_len).write(len) };
    }

    /// Rewrites the name copy inside the sequence lock (holder only, so plain loads
    /// and stores of `name_seq` suffice: there is one writer).
    #[inline]
    fn write_name(&self, write: impl FnOnce(&[AtomicU64; NAME_WORDS], &AtomicUsize)) {
        let seq = self.name_seq.load(Ordering::Relaxed);
        let writing = seq | 1;
        self.name_seq.store(writing, Ordering::Relaxed);
        // Release fence: a reader whose acquire fence follows a load of any word
        // written below also sees `writing` (or later) in its second load of the
        // sequence, so it cannot take half-written words for whole ones.
        fence(Ordering::Release);
        write(&self.name_words, &self.name_len);
        // Release: a reader that sees the even value (acquire) sees all the words.
        self.name_seq
            .store(writing.wrapping_add(1), Ordering::Release);
    }

    /// Reads one whole name from the copy, or `None` while it is being rewritten.
    /// Bytes past the returned length are unspecified.
    pub(crate) fn read_name(&self, out: &mut [u8; NAME_BYTES]) -> Option<usize> {
        let before = self.name_seq.load(Ordering::Acquire);
        if before & 1 == 1 {
            return None;
        }
        let len = self.name_len.load(Ordering::Relaxed).min(NAME_BYTES);
        for (i, word) in self.name_words.iter().enumerate().take(len.div_ceil(8)) {
            out[i * 8..i * 8 + 8].copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        // Acquire fence: if any load above saw a later writer's word, the load of the
        // sequence below sees that writer's odd value (see `write_name`).
        fence(Ordering::Acquire);
        (self.name_seq.load(Ordering::Relaxed) == before).then_some(len)
    }

    /// Publishes the slot's use and high-water mark for reports (holder only, so plain
    /// loads and stores suffice).
    #[inline]
    pub(crate) fn publish_use(&self, used: usize, high_water: usize) {
        self.used.store(used, Ordering::Relaxed);
        if high_water > self.high_water.load(Ordering::Relaxed) {
            self.high_water.store(high_water, Ordering::Relaxed);
        }
    }

    /// Raises the published use and high-water mark to `used` (any thread that
    /// shares a loaded shared slot; see `Slots::publish_shared`).
    pub(crate) fn publish_use_max(&self, used: usize) {
        self.used.fetch_max(used, Ordering::Relaxed);
        self.high_water.fetch_max(used, Ordering::Relaxed);
    }

    /// Lets reports pin the slot while it is being built (holder only, once the scope
    /// record and, for a concurrent load, the concurrent scope are written, before
    /// `build` runs). Release: a report whose pin sees `OPEN` sees those fields. No
    /// pin can be in the word yet (a pin needs `OPEN`), so a plain store loses none.
    #[inline]
    pub(crate) fn publish_open(&self) {
        debug_assert_eq!(self.state.load(Ordering::Relaxed), BUILDING);
        self.state.store(BUILDING | OPEN, Ordering::Release);
    }

    /// Publishes the built slot as loaded (holder only, at the end of a successful
    /// build, after [`publish_open`](Self::publish_open)). Release: a report whose pin
    /// sees `LOADED` sees the root, the scope record and everything the build placed.
    /// Reports may hold pins of the slot being built, so the phase moves by one
    /// read-modify-write that keeps their count (`BUILDING + 1 == LOADED`, no carry
    /// out of the phase bits).
    #[inline]
    pub(crate) fn mark_loaded(&self) {
        debug_assert_eq!(
            self.state.load(Ordering::Relaxed) & (PHASE | OPEN),
            BUILDING | OPEN
        );
        self.state.fetch_add(LOADED - BUILDING, Ordering::Release);
    }

    /// Lets a report read what the slot holds (its scope's container list and
    /// concurrent scope, which the holder publishes with release stores): `None` unless
    /// the slot is loaded, or being built with its fields published (`OPEN`), and its
    /// holder has not begun to unload. While the returned guard lives, the holder's
    /// unload waits before it drops anything (a build that fails or panics unloads the
    /// same way). A pin taken during the build stays valid when the slot is loaded.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn pin_for_read(&self) -> Option<ReadPin<'_>> {
        let mut word = self.state.load(Ordering::Relaxed);
        loop {
            let phase = word & PHASE;
            if word & OPEN == 0
                || (phase != LOADED && phase != BUILDING)
                || word / READER == MAX_READERS
            {
                return None;
            }
            // Acquire: the pin sees what the holder published before `OPEN` or
            // `LOADED` (the compare-exchange reads a value in that store's release
            // sequence). It can succeed only from `BUILDING | OPEN` or `LOADED | OPEN`,
            // so it comes before the holder's move to `CLOSING` in the word's
            // modification order, and that move counts it (as does the move from
            // building to loaded, which adds to the phase and leaves the count).
            match self.state.compare_exchange_weak(
                word,
                word + READER,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(ReadPin(self)),
                Err(now) => word = now,
            }
        }
    }

    /// Begins the unload: no new report may pin the slot, and the ones reading it now
    /// finish first (they are short: a report copies a few numbers). Holder only, on a
    /// slot it is building (a failed build) or has loaded.
    #[inline]
    pub(crate) fn close_for_readers(&self) {
        // Only the holder changes the phase, so its own relaxed load reads it right.
        let phase = self.state.load(Ordering::Relaxed) & PHASE;
        debug_assert!(phase == BUILDING || phase == LOADED);
        // One read-modify-write moves the phase to `CLOSING` and leaves `OPEN` and the
        // count as they are (the phase bits only grow, no carry): the count it returns
        // is every pin that succeeded before it. Acquire: if that count is 0, the pins' release
        // subtractions are ordered before what the unload does next.
        let before = self.state.fetch_add(CLOSING - phase, Ordering::Acquire);
        if before / READER != 0 {
            self.wait_for_readers();
        }
    }

    #[cold]
    #[inline(never)]
    fn wait_for_readers(&self) {
        let mut spins = 0u32;
        // Acquire: the load that sees 0 synchronises with every pin's release
        // subtraction (each one continues the release sequence of the ones before).
        while self.state.load(Ordering::Acquire) / READER != 0 {
            crate::sync::spin_hint();
            spins = spins.wrapping_add(1);
            // A report preempted while pinned would keep us spinning for its whole time
            // slice: after a while, let it run.
            #[cfg(all(feature = "std", not(loom)))]
            if spins % 64 == 0 {
                std::thread::yield_now();
            }
        }
    }

    /// Marks the slot free (the holder's last act on it, after `close_for_readers`).
    /// Release: the next holder sees the rewound sub-block.
    #[inline]
    pub(crate) fn free(&self) {
        debug_assert_eq!(self.state.load(Ordering::Relaxed) & !OPEN, CLOSING);
        // The copy is emptied first, so a report never gives a freed slot's name to
        // the next holder: a reader that sees the next holder's state (acquire, through
        // the release below) sees this 0 or the next holder's own length. No sequence
        // step is needed: the words stay as they are, so a reader takes either this
        // holder's whole name or none (see the module docs).
        self.name_len.store(0, Ordering::Relaxed);
        // The phase is `CLOSING` and the count 0 (`close_for_readers` waited, and no pin
        // succeeds while closing), so a plain store loses nothing; it clears `OPEN`.
        self.state.store(FREE, Ordering::Release);
    }

    /// Bytes between the sub-block's start and its root cursor's bump pointer: what
    /// a plain slot's scope has placed so far (scopes nested in it included), read
    /// from any thread without a pin. A sample: if the slot changes holders meanwhile,
    /// it may be another load's figure.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn bump_now(&self) -> usize {
        let h = self.holder.get();
        // SAFETY: the `block` field is written only when the record is made, before
        // the `Slots` is shared, and never replaced; a shared borrow of that one field
        // (its `Cell`s are interior-mutable, and only the relaxed atomic `cur` of its
        // root cursor is read, which its holder stores atomically; see
        // `crate::block::cursor`).
        let block = unsafe { &*ptr::addr_of!((*h).block) };
        block.root().cur().saturating_sub(block.start_addr())
    }

    /// The slot as a report sees it.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn view(&self) -> SlotView {
        let mut view = SlotView {
            state: FREE,
            name: [0; NAME_BYTES],
            name_len: 0,
            used: self.used.load(Ordering::Relaxed),
            high_water: self.high_water.load(Ordering::Relaxed),
            loads: self.loads.load(Ordering::Relaxed),
        };
        let state = self.state.load(Ordering::Acquire) & PHASE;
        if state == FREE {
            view.used = 0;
            return view;
        }
        view.state = state;
        // A few tries to read one holder's whole name; a slot whose name is rewritten
        // faster than that shows without one.
        for _ in 0..4 {
            if let Some(len) = self.read_name(&mut view.name) {
                view.name_len = len;
                return view;
            }
            crate::sync::spin_hint();
        }
        view
    }
}

/// A report's hold on a loaded slot, or one being built (see
/// [`Record::pin_for_read`]); dropping it lets the holder unload.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) struct ReadPin<'a>(&'a Record);

impl ReadPin<'_> {
    /// The slot's holder state, for reading its published fields.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn holder_ptr(&self) -> *mut Holder {
        self.0.holder_ptr()
    }
}

impl Drop for ReadPin<'_> {
    fn drop(&mut self) {
        // Release: the report's reads come before the holder's acquire load that sees
        // the count reach 0, so before anything the unload drops or rewinds.
        self.0.state.fetch_sub(READER, Ordering::Release);
    }
}

/// One slot in a report.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) struct SlotView {
    /// `FREE`, `BUILDING`, `LOADED` or `CLOSING` (held, unloading).
    pub(crate) state: u32,
    /// The holder's name: one holder's whole name, or empty.
    pub(crate) name: [u8; NAME_BYTES],
    pub(crate) name_len: usize,
    /// Bytes in use as of the last publish.
    pub(crate) used: usize,
    /// The slot's high-water mark.
    pub(crate) high_water: usize,
    /// Loads so far.
    pub(crate) loads: usize,
}

impl SlotView {
    /// The holder's name, or `""`.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn name(&self) -> &str {
        let bytes = &self.name[..self.name_len];
        match core::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => core::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
        }
    }
}

/// How many bytes of `name` the table keeps: at most [`NAME_BYTES`], cut at a
/// character boundary.
#[inline]
fn cut_len(name: &str) -> usize {
    if name.len() <= NAME_BYTES {
        name.len()
    } else {
        cut_long(name)
    }
}

/// [`cut_len`] of a name longer than [`NAME_BYTES`] (rare, so out of line).
#[cold]
#[inline(never)]
fn cut_long(name: &str) -> usize {
    let mut len = NAME_BYTES;
    while !name.is_char_boundary(len) {
        len -= 1;
    }
    len
}

/// Copies `name` into `buf`, cut at a character boundary; returns the length kept.
pub(crate) fn copy_name(buf: &mut [u8; NAME_BYTES], name: &str) -> usize {
    let len = cut_len(name);
    buf[..len].copy_from_slice(&name.as_bytes()[..len]);
    len
}

/// The word of 1 to 8 bytes `b`, little-endian, zero above them: two overlapping
/// loads (of 4 bytes, or of single bytes under 4) instead of a copy of variable length.
#[inline]
fn tail_word(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!((1..=8).contains(&n));
    if n >= 4 {
        let low = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let high = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]);
        // The two loads overlap when `n < 8`; the overlapping bytes are equal.
        u64::from(low) | (u64::from(high) << (8 * (n - 4)))
    } else {
        let (first, middle, last) = (b[0], b[n / 2], b[n - 1]);
        u64::from(first) | (u64::from(middle) << (8 * (n / 2))) | (u64::from(last) << (8 * (n - 1)))
    }
}

/// Loom models only: one slot record, driven through the steps its holder and a report
/// take, so a model can check the read-pin protocol against memory that loom watches
/// (`tests/loom/loom_slots.rs`). Not part of the API.
#[cfg(loom)]
#[doc(hidden)]
pub struct LoomSlotRecord {
    record: Record,
}

#[cfg(loom)]
impl LoomSlotRecord {
    /// A free record over a small block of its own.
    pub fn new() -> LoomSlotRecord {
        LoomSlotRecord {
            record: Record::new(LinearAllocator::with_capacity(64).unwrap()),
        }
    }

    /// [`Record::try_claim`].
    pub fn try_claim(&self) -> bool {
        self.record.try_claim()
    }

    /// [`Record::publish_open`].
    pub fn publish_open(&self) {
        self.record.publish_open();
    }

    /// [`Record::mark_loaded`].
    pub fn mark_loaded(&self) {
        self.record.mark_loaded();
    }

    /// [`Record::pin_for_read`]: runs `read` while pinned, or returns `None`.
    pub fn read<T>(&self, read: impl FnOnce() -> T) -> Option<T> {
        let pin = self.record.pin_for_read()?;
        let out = read();
        drop(pin);
        Some(out)
    }

    /// The first step of an unload: [`Record::close_for_readers`].
    pub fn close_for_readers(&self) {
        self.record.close_for_readers();
    }

    /// The last step of an unload: [`Record::free`].
    pub fn free(&self) {
        self.record.free();
    }
}
