//! The pool's free lists: per shard, the owner's private cache, a shared lock-free
//! stack and a remote stack of slot indices.
//!
//! # The design in one page
//!
//! - **Owner's cache** (`owner.rs`): the thread that holds the dense index equal to a
//!   shard's number alone is the shard's *owner*. Its inserts and frees of its shard's
//!   slots use a private list with plain loads and stores: no read-modify-write, no
//!   `lock` prefix, the way a `Box` from glibc's or mimalloc's per-thread free list
//!   costs. A two-flag handshake (a `busy` word the owner stores, a *gate* others
//!   close) with asymmetric fences (`crate::sync::asymmetric`: a compiler fence on the
//!   owner's side, `membarrier` on the other) lets other threads reach the cache when
//!   they must.
//! - **Remote stack** (`remote.rs`): a slot freed by a thread that does not live in its
//!   shard goes onto the shard's remote stack with one compare-exchange; the owner takes
//!   the whole stack into its cache with one more when its cache runs dry.
//! - **Shared stack** (this file): the compare-exchange stack that every thread may pop
//!   and push. Threads that own no shard (more threads than shards, a shared index) use
//!   it for their home; owners use it while their gate is closed; stolen slots land on
//!   it.
//! - **Steal and the exact full check** (`steal.rs`): an insert that finds every stack
//!   and every never-used slot empty closes every gate, steals half of a non-empty
//!   cache, or proves with a double collect that every slot was in use at one moment.
//! - **Waiters** (`waiters.rs`): a thread that sleeps for a slot closes the gates to the
//!   owners' frees first, so every free reaches a stack whose push wakes it.
//!
//! # Why shards
//!
//! A single free-list head is one cache line that every insert and every free on every
//! thread compare-exchanges; on more than one core that line bounces on each operation,
//! and the slots it hands out interleave between threads, so the slot and stamp lines
//! bounce too. Here the slots are split into *shards* of contiguous index ranges, and
//! each shard has its own head on its own cache line. A thread takes slots from its
//! *home* shard (see [`crate::thread_index`]) and a freed slot goes back to the shard
//! that owns it. A thread that frees what it inserted, or inserts again after freeing,
//! therefore touches only its own shard's head and its own range of slots, stamps and
//! links: no line that another thread writes, as long as threads have different homes.
//! Only when its home is empty does a thread look at other shards (*stealing*), in the
//! order of [`FreeLists::steal_order`], and for freed slots only at those whose bit in
//! the pool's [`Stock`] says their stacks may hold one (see `stock.rs`).
//!
//! Each shard has two stacks, each head on its own cache line, beside its owner's cache:
//! - the **local** (shared) stack takes the slots that threads living in the shard
//!   but not owning it free, and gives slots to every insert that looks in the shard;
//! - the **remote** stack takes the slots that threads living elsewhere free (objects
//!   handed to another thread and freed there). Nobody pops it one slot at a time: an
//!   insert that finds the local stack empty takes the whole remote stack in one
//!   compare-exchange, keeps its oldest slot and moves the rest onto the local stack,
//!   reversed, so that they are reused in the order they were freed.
//!
//! So a producer thread whose objects a consumer thread frees does not fight the
//! consumer for one head on every object: the consumer writes the remote head (a line
//! that stays in its cache), and the producer touches it once per batch. And the
//! producer does not reuse, at once, the slot whose lines the consumer just wrote.
//! This is the free-list sharding of mimalloc (its thread-free list) and sharded-slab
//! (its remote free list). Unlike theirs, the owner's cache stays reachable: a fixed
//! capacity cannot leave slots stranded in a thread's private list, so a thief that
//! finds nothing else closes the owner's gate and takes half of it (`steal.rs`).
//!
//! # Each shard's stack
//!
//! The links live in one array of `AtomicU32` (`next[i]` is the slot below `i` on its
//! shard's stack), apart from the objects, so a thread that races to read a link never
//! reads memory that another thread is constructing an object in. A head is one
//! `AtomicU64`: the index of the top slot in the low 32 bits, a tag in the high 32 bits.
//! Every successful compare-exchange on a head adds one to its tag.
//!
//! Each shard also counts the slots of its range ever handed out (`fresh_taken`, on the
//! local head's line): slots `start..start + fresh_taken` have been used, the rest of
//! the range never has. A never-used slot is on no stack; it is taken by raising the
//! count ([`FreeLists::take_fresh`]), and goes onto a stack only when it is freed. So an
//! insert's fast path (a pop of its home's local stack) needs no freshness check, and
//! the search of the other shards' stacks for a freed slot runs only when the home
//! shard's stacks are empty, right before a never-used slot would be taken.
//!
//! Invariants this module keeps:
//! - Every index in `0..capacity` is exactly one of: never used (at or above its
//!   shard's count); on one of the two stacks of the shard that owns it
//!   (`index / shard_len`), or on its owner's cache, exactly once; or owned by exactly
//!   one caller who took it
//!   from these lists and has not yet passed it to [`FreeLists::push`] (a chain taken
//!   from a remote stack is owned by its taker until it is on the local stack). A slot
//!   is never on another shard's stacks. Both stacks start empty and the count at 0;
//!   the count only grows, by one per slot handed out, up to the shard's length. So
//!   every slot on a stack was used before, and the slots of a shard that were ever
//!   used are a prefix of its range (the pool's `high_water_len` relies on this).
//! - The index field of a head is a slot index of that shard, [`NIL`] (empty) or
//!   [`NIL_WAITING`] (empty, and at least one thread may be asleep waiting for a slot).
//!   `NIL_WAITING` is only ever installed over `NIL`, and the next push, or chain move,
//!   onto that head replaces it (and reports that waiters must be woken). Taking a
//!   remote stack never removes the mark: it only takes a stack that holds slots.
//! - ABA, per shard: a pop reads `head = (i, t)` and then `next[i] = j`, and installs
//!   `(j, t + 1)` only if the head still equals `(i, t)`. Between the two reads `i` may
//!   have been popped, other slots popped and `i` pushed back with a different link; the
//!   head would then read `(i, t + k)` with `k >= 1`, and the compare fails. A false
//!   success needs exactly 2^32 changes of one shard's head while one thread is stalled
//!   between its load and its compare-exchange.
//!
//! # Counting live objects
//!
//! `Pool::len` must not walk the slots, and the count must not cost the insert and free
//! paths a read-modify-write of a line they do not already write. So each shard's local
//! line also holds two wrapping counters of slots handed out minus slots given back
//! (by `Core::claim` and `Core::release`, and by the exclusive take and push),
//! and a count is the sum over the shards:
//! - **`own`** is written only by the thread that holds the dense index equal to the
//!   shard's number alone (`thread_index::current_exclusive_fast`, which is exactly
//!   the index such a thread calls home), with a relaxed load and a relaxed store: no
//!   other thread writes the word, so nothing is lost, and the line is the one its
//!   insert has just popped from (its home's local head). An index handed over from
//!   an exited thread comes with everything written under it (`thread_index`: given
//!   back with `Release`, taken with `Acquire`). Under `&mut FreeLists` nothing else
//!   runs, so the exclusive paths write `own` of any shard the same way.
//! - **`shared`** takes the counts of every other thread (one that shares its index, or
//!   whose index is not below the shard count) with a relaxed `fetch_add` on its home's
//!   line, the line its home pops and pushes already use.
//!
//! Which thread counts a slot does not matter: only the sum means anything, and it
//! wraps exactly, so a slot counted out on one thread and back on another (a box freed
//! on another thread) nets to zero. Relaxed throughout: the counters order nothing, and
//! a reader that happens after every insert and free it must count (the same thread, a
//! join, a channel) sees their last values. A reader that runs while others insert or
//! free reads the shards one by one, so its sum may mix moments; [`count_live`] clamps
//! it to `0..=capacity`.
//!
//! # Orderings
//! - `push` stores the link with `Relaxed` and publishes it with a `Release`
//!   compare-exchange. A `pop` loads the head with `Acquire` before reading the link of
//!   the slot it names, so it sees the link that was published with it. The same edge
//!   carries the end of the slot's previous life (its object was dropped before the
//!   push) to the next owner, who writes a new object into the slot after the pop.
//!   A stealing pop is the same pop on another shard's head: the pairing is per head.
//! - The `pop` compare-exchange is `Acquire` on success for that second reason: the
//!   successful RMW reads a value in the release sequence of the push that put the
//!   slot on the stack, so everything before that push happens before our use of it.
//!   It needs no `Release`: a pop publishes nothing.
//! - The count is read and raised with `Relaxed`: a never-used slot has no previous
//!   life to order after, and its stamp and link were written when the pool was built,
//!   which happens before any thread reaches the pool. Raises are compare-exchanges on
//!   one word, totally ordered, so no two takers get the same slot.
//! - Links are read and written with `Relaxed`: the head's acquire/release pair orders
//!   them. They must still be atomic, because a stalled pop may read `next[i]` while a
//!   push writes it; that read's value is then discarded by the failing compare.
//! - Taking a remote stack is a compare-exchange that installs `NIL`, `Acquire` (in
//!   fact `SeqCst`, below): it reads the value the last remote push wrote, and each push
//!   is a read-modify-write, so every push onto that stack (and the links each wrote)
//!   happens before the taker walks the chain. It reads no link before its
//!   compare-exchange, so it needs no ABA care beyond the tag. The taker then owns the
//!   chain and may rewrite its links (it reverses it). Moving the chain onto the local
//!   stack is a push of several slots at once: the chain's last link is set to the
//!   local top and published with a `Release` (`SeqCst`) compare-exchange, as a single
//!   push is.
//!
//! # Chains in transit, and "full"
//!
//! (This section is about the stacks. The owners' caches, and the check that proves a
//! pool full, are in `steal.rs`: a scan that finds nothing is only the first half of
//! that proof.)
//!
//! Between taking a remote stack and pushing its rest onto the local stack, the chain is
//! on neither stack: another insert that looks at that shard then sees it empty. So an
//! insert that found every shard empty may report the pool full only if no chain was in
//! transit at any moment of its scan. [`Transit`] keeps one word: the moves under way
//! (`active`, low half) and the moves ever started (`epoch`, high half, wrapping). A
//! mover adds one to both in one read-modify-write before it takes the stack, and
//! subtracts one from `active` after the chain is on the local stack. A scanner reads
//! the word, scans, reads it again, and reports full only if `active` was 0 and the
//! word did not change. All of these accesses, the scan's peeks at the heads, and the
//! mover's two compare-exchanges are `SeqCst`, so they fall into one total order. A
//! chain that the scan missed was taken before the scan read the remote head and pushed
//! after the scan read the local head. If the scanner's first read of the word precedes
//! the mover's increment, the increment precedes the take, which precedes the scan and
//! so the second read: the word changed. If the first read follows the increment, it
//! precedes the decrement (which follows the push, which follows the scan): `active`
//! reads non-zero. Either way the scanner looks again. The never-used slots need no
//! such care: they are never in transit, and a count that a scan saw at its shard's
//! length stays there. These are slow paths: taking a remote stack, and an insert that
//! found its home shard empty.

use core::ptr::NonNull;

use crossbeam_utils::CachePadded;

mod exclusive;
mod owner;
mod remote;
mod steal;
mod stock;
mod waiters;

pub(crate) use remote::Transit;
pub(crate) use steal::Drained;
pub(crate) use stock::{Stock, StockSnapshot};

use crate::sync::{fence, AtomicU32, AtomicU64, Ordering};

/// Index value of an empty stack.
pub(crate) const NIL: u32 = u32::MAX;
/// Index value of an empty stack with sleeping waiters.
pub(crate) const NIL_WAITING: u32 = u32::MAX - 1;

/// One stack's head, alone on its cache line(s). Each shard has two: local, remote.
pub(crate) type Head = CachePadded<HeadLine>;

/// What a head's line holds: the stack's head word and, on a shard's local line, the
/// count of the shard's slots ever handed out (the never-used ones are the rest of its
/// range, in order; see the module docs). The remote line's count stays 0 and unused.
/// The count shares the local head's line because the thread that lives in the shard
/// is the one that takes its never-used slots: one line, not two, per shard.
pub(crate) struct HeadLine {
    word: AtomicU64,
    fresh_taken: AtomicU32,
    /// On a shard's local line: slots handed out minus slots given back, counted by the
    /// thread that holds the shard's number as its dense index alone, or under `&mut`
    /// (module docs, "Counting live objects"). Wrapping. Unused on the remote line.
    own: AtomicU32,
    /// The same, counted by every other thread whose home this shard is, with a
    /// read-modify-write. Wrapping. Unused on the remote line.
    shared: AtomicU32,
    /// On a shard's local line: the top of the owner's cache (`owner.rs`), or `NIL`.
    cache: AtomicU32,
    /// 1 while the owner is inside an operation on its cache (`owner.rs`).
    busy: AtomicU32,
    /// The owner's gate: [`owner::REQUEST`] while a thief or a full check works on the
    /// caches, plus [`owner::WAITER`] per waiting thread (`owner.rs`).
    gate: AtomicU32,
}

impl HeadLine {
    fn new(word: u32) -> HeadLine {
        HeadLine {
            word: AtomicU64::new(word as u64),
            fresh_taken: AtomicU32::new(0),
            own: AtomicU32::new(0),
            shared: AtomicU32::new(0),
            cache: AtomicU32::new(NIL),
            busy: AtomicU32::new(0),
            gate: AtomicU32::new(0),
        }
    }
}

/// What a count of one slot adds to a live counter: one slot handed out.
pub(crate) const COUNT_OUT: u32 = 1;
/// What a count of one slot adds to a live counter: one slot given back (minus one,
/// wrapping).
pub(crate) const COUNT_BACK: u32 = u32::MAX;

/// The number of slots handed out and not given back, read from `shards` shards'
/// local lines at `heads` (one line per shard, two relaxed loads on it), clamped to
/// `0..=capacity`: exact when every count it must include happens before the call,
/// a snapshot while other threads insert and free (module docs, "Counting live
/// objects").
///
/// # Safety
/// `heads` points to the `2 * shards` heads of live free lists (or of lists whose pool
/// is gone but whose scope memory is not yet rewound).
pub(crate) unsafe fn count_live(heads: NonNull<Head>, shards: u32, capacity: u32) -> u32 {
    let mut sum = 0u32;
    for shard in 0..shards as usize {
        // SAFETY: `shard < shards`: the local line of one of the caller's shards.
        let line = unsafe { heads.add(HEADS_PER_SHARD * shard).as_ref() };
        // Relaxed: a count, ordering nothing (module docs).
        sum = sum
            .wrapping_add(line.own.load(Ordering::Relaxed))
            .wrapping_add(line.shared.load(Ordering::Relaxed));
    }
    // A sum that mixed moments may dip below zero (a free read, its insert not) or
    // pass the capacity; the true count is at most 2^24, far from the wrap.
    if (sum as i32) < 0 {
        0
    } else {
        sum.min(capacity)
    }
}

/// The number of slots ever handed out: each shard's count of its never-used slots
/// taken (one relaxed load per shard). Exact when every insert it must include happens
/// before the call; while other threads insert it may miss the slots they are taking.
///
/// # Safety
/// As [`count_live`].
pub(crate) unsafe fn count_used(heads: NonNull<Head>, shards: u32) -> u32 {
    (0..shards as usize)
        .map(|shard| {
            // SAFETY: `shard < shards`: the local line of one of the caller's shards.
            let line = unsafe { heads.add(HEADS_PER_SHARD * shard).as_ref() };
            // Relaxed: see `take_fresh`.
            line.fresh_taken.load(Ordering::Relaxed)
        })
        .sum()
}

/// How many never-used slots of its home a thread takes before slots freed into
/// another live thread's home (see `Core::take_elsewhere`): enough for what a worker
/// usually keeps live, few enough that the slots ever used stay close to the most
/// objects ever live (`Pool::high_water_len`).
pub(crate) const SETTLE_SLOTS: u32 = 32;

/// Heads per shard: the local stack's and the remote stack's.
pub(crate) const HEADS_PER_SHARD: usize = 2;

#[inline(always)]
fn index_of(head: u64) -> u32 {
    head as u32
}

#[inline(always)]
fn with_index(head: u64, index: u32) -> u64 {
    // The tag (high half) advances by one with every change of the head.
    (head & 0xFFFF_FFFF_0000_0000).wrapping_add(1 << 32) | index as u64
}

/// How `capacity` slots split into shards: `shards` ranges of `len` slots each, the
/// last one possibly shorter. Pure arithmetic, shared by the pool, its report link and
/// `memory_needed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShardLayout {
    /// Slots per shard (the last shard may have fewer).
    pub(crate) len: u32,
    /// Number of shards: `ceil(capacity / len)`.
    pub(crate) shards: u32,
}

impl ShardLayout {
    /// Splits `capacity` (at least 1) slots into at most `wanted` (at least 1) shards of
    /// equal length, the last one possibly shorter. The result can have fewer shards
    /// than asked: 10 slots in 6 shards become 5 shards of 2.
    pub(crate) fn new(capacity: u32, wanted: u32) -> ShardLayout {
        debug_assert!(capacity >= 1 && wanted >= 1);
        let wanted = wanted.min(capacity);
        let len = capacity.div_ceil(wanted);
        ShardLayout {
            len,
            shards: capacity.div_ceil(len),
        }
    }

    /// The slots of shard `shard`: `start..end`.
    #[inline]
    pub(crate) fn range(self, capacity: u32, shard: u32) -> (u32, u32) {
        let start = shard * self.len;
        (start, (start + self.len).min(capacity))
    }
}

/// The shards' lock-free index stacks. See the module docs.
///
/// Every field is read-only after construction; the heads it points to are the hot
/// atomics, each padded to its own cache line.
pub(crate) struct FreeLists {
    /// `2 * shards` heads: shard `k`'s local head at `2k`, its remote head at `2k + 1`.
    heads: NonNull<Head>,
    /// `capacity` links, one per slot.
    next: NonNull<AtomicU32>,
    layout: ShardLayout,
    /// The number of slots (the end of the last shard's range).
    capacity: u32,
    /// `ceil(2^48 / layout.len)`: `index * magic >> 48` (a 64 × 64 → 128-bit multiply)
    /// is `index / layout.len` for every index below 2^24, without a division on the
    /// free path. With `magic = 2^48 / len + e` and `0 <= e < 1`, the product is
    /// `index / len + index * e / 2^48`, and the error term is below
    /// `2^24 / 2^48 = 2^-24 <= 1 / len`, while the fraction of `index / len` is at most
    /// `1 - 1 / len`: the sum never carries into the integer part.
    magic: u64,
    /// The shard where the next exclusive (`&mut`) insert looks first: the shard of the
    /// last exclusive free or steal. Read and written only through `&mut FreeLists`
    /// (see `exclusive.rs`), so a plain field.
    exclusive_shard: u32,
    /// A shard whose stock bit an exclusive free knows to be set (bits are never
    /// cleared), so the exclusive free path skips the stock's line while it keeps
    /// freeing into that shard; `NIL` when none is known. A one-shard pool keeps no
    /// bits, and starts with shard 0 here. `&mut` only, like `exclusive_shard`.
    exclusive_marked: u32,
}

impl FreeLists {
    /// Builds each shard's empty local and remote stacks, with none of its slots handed
    /// out yet, in the memory at `heads`; the links at `next` are set to `NIL`.
    ///
    /// # Safety
    /// `heads` is valid for writes of `2 * layout.shards` heads and `next` of `capacity`
    /// `AtomicU32`s; both stay valid and are used by nothing else for as long as the
    /// returned lists live. `layout` came from [`ShardLayout::new`] for `capacity`, and
    /// `capacity` is at most 2^24.
    pub(crate) unsafe fn new(
        heads: NonNull<Head>,
        next: NonNull<AtomicU32>,
        capacity: u32,
        layout: ShardLayout,
    ) -> FreeLists {
        debug_assert!(capacity > 0 && capacity <= 1 << 24);
        // The owners' brackets pair with the thieves' heavy fence (`owner.rs`): choose
        // the fences before any thread can reach these lists.
        crate::sync::asymmetric::prepare();
        for i in 0..capacity {
            // SAFETY: `i < capacity`; the caller gave us that many writable links.
            // (A link is read only after a push wrote it; this makes every link
            // initialised memory all the same.)
            unsafe { next.add(i as usize).as_ptr().write(AtomicU32::new(NIL)) };
        }
        for k in 0..HEADS_PER_SHARD * layout.shards as usize {
            // SAFETY: `k < 2 * layout.shards`, the heads the caller gave us. No thread
            // can see the lists yet; whatever hands them to other threads (a `&Pool`,
            // a spawned thread) carries these writes with it.
            unsafe {
                heads
                    .as_ptr()
                    .add(k)
                    .write(CachePadded::new(HeadLine::new(NIL)))
            };
        }
        FreeLists {
            heads,
            next,
            layout,
            capacity,
            magic: (1u64 << 48).div_ceil(layout.len as u64),
            exclusive_shard: 0,
            exclusive_marked: if layout.shards == 1 { 0 } else { NIL },
        }
    }

    /// The number of shards.
    #[inline(always)]
    pub(crate) fn shards(&self) -> u32 {
        self.layout.shards
    }

    /// The shard that owns slot `index`.
    #[inline(always)]
    pub(crate) fn shard_of(&self, index: u32) -> u32 {
        let shard = ((index as u128 * self.magic as u128) >> 48) as u32;
        debug_assert_eq!(shard, index / self.layout.len);
        shard
    }

    /// Shard `shard`'s local head.
    #[inline(always)]
    fn head(&self, shard: u32) -> &AtomicU64 {
        debug_assert!(shard < self.layout.shards);
        // SAFETY: callers pass `shard < shards` (a home shard is reduced modulo the
        // count, a slot's shard is computed from a valid index); there are two heads
        // per shard, and they live as long as `self`.
        unsafe {
            &self
                .heads
                .add(HEADS_PER_SHARD * shard as usize)
                .as_ref()
                .word
        }
    }

    /// Shard `shard`'s count of slots ever handed out (on its local head's line).
    #[inline(always)]
    fn fresh_taken(&self, shard: u32) -> &AtomicU32 {
        debug_assert!(shard < self.layout.shards);
        // SAFETY: as in `head`.
        unsafe {
            &self
                .heads
                .add(HEADS_PER_SHARD * shard as usize)
                .as_ref()
                .fresh_taken
        }
    }

    /// Shard `shard`'s local line (its head, counts and live counters).
    #[inline(always)]
    fn line(&self, shard: u32) -> &HeadLine {
        debug_assert!(shard < self.layout.shards);
        // SAFETY: as in `head`.
        unsafe { self.heads.add(HEADS_PER_SHARD * shard as usize).as_ref() }
    }

    /// The heads, for a report link (see `count_live`).
    pub(crate) fn heads(&self) -> NonNull<Head> {
        self.heads
    }

    /// Counts `delta` ([`COUNT_OUT`] or [`COUNT_BACK`]) slots for the calling thread,
    /// whose home is `home`: on `home`'s `own` counter if `alone` (the thread holds
    /// dense index `home` alone), else on its `shared` counter (module docs, "Counting
    /// live objects").
    #[inline(always)]
    pub(crate) fn count(&self, home: u32, alone: bool, delta: u32) {
        if alone {
            // Relaxed load and store: no other thread writes `own` (module docs).
            let own = &self.line(home).own;
            own.store(
                own.load(Ordering::Relaxed).wrapping_add(delta),
                Ordering::Relaxed,
            );
        } else {
            self.count_shared(home, delta);
        }
    }

    /// The `shared` half of [`count`](Self::count), out of line, so that the usual
    /// case (a thread that calls the shard home alone) jumps over nothing.
    #[cold]
    #[inline(never)]
    fn count_shared(&self, home: u32, delta: u32) {
        // Relaxed: a count, ordering nothing (module docs).
        self.line(home).shared.fetch_add(delta, Ordering::Relaxed);
    }

    /// See [`count_live`].
    pub(crate) fn live(&self) -> u32 {
        // SAFETY: our own heads, valid while `self` lives.
        unsafe { count_live(self.heads, self.layout.shards, self.capacity) }
    }

    /// See [`count_used`].
    pub(crate) fn used(&self) -> u32 {
        // SAFETY: as in `live`.
        unsafe { count_used(self.heads, self.layout.shards) }
    }

    /// Shard `shard`'s remote head.
    #[inline(always)]
    fn remote(&self, shard: u32) -> &AtomicU64 {
        debug_assert!(shard < self.layout.shards);
        // SAFETY: as in `head`.
        unsafe {
            &self
                .heads
                .add(HEADS_PER_SHARD * shard as usize + 1)
                .as_ref()
                .word
        }
    }

    #[inline(always)]
    fn link(&self, index: u32) -> &AtomicU32 {
        // SAFETY: callers pass indices taken from a head, which are `< capacity`
        // (the only non-index values, NIL and NIL_WAITING, are checked first), or a
        // slot they own; the links live as long as `self`.
        unsafe { self.next.add(index as usize).as_ref() }
    }

    /// Takes a free slot from shard `shard`: from its local stack, or else the whole
    /// remote stack (see [`take_remote`](Self::take_remote)). `None` when both were
    /// empty. The flag says that waiters must be woken.
    #[inline]
    pub(crate) fn pop(&self, shard: u32, transit: &Transit, stock: &Stock) -> (Option<u32>, bool) {
        match self.pop_local(shard) {
            Some(index) => (Some(index), false),
            None => self.take_remote(shard, transit, stock),
        }
    }

    /// Takes the top slot of shard `shard`'s local stack, or `None` when it is empty.
    #[inline]
    pub(crate) fn pop_local(&self, shard: u32) -> Option<u32> {
        self.pop_local_read(shard, |_| ()).map(|(index, ())| index)
    }

    /// Takes the top slot of shard `shard`'s local stack with what `read(slot)` said
    /// about it, or `None` when the stack is empty. `read` runs before the head swap,
    /// so its load overlaps the swap instead of waiting for it (a locked instruction
    /// on x86-64 holds back later loads).
    ///
    /// What `read` saw is still true once the slot is ours, if only owners write what
    /// it reads: it read after the head load (Acquire, so after the last owner's
    /// writes), and the head swap succeeds only if no pop or push came between, so
    /// nobody owned the slot since.
    #[inline]
    pub(crate) fn pop_local_read<S>(
        &self,
        shard: u32,
        read: impl Fn(u32) -> S,
    ) -> Option<(u32, S)> {
        let head_word = self.head(shard);
        // Acquire: pairs with the Release of the push that installed this head, so the
        // link we read below is the one that push wrote.
        let mut head = head_word.load(Ordering::Acquire);
        loop {
            let index = index_of(head);
            if index >= NIL_WAITING {
                return None;
            }
            let seen = read(index);
            // Relaxed: ordered by the acquire above. It may be stale if `index` is
            // being popped and pushed right now; then the head has moved on (new tag)
            // and the compare-exchange below fails.
            let next = self.link(index).load(Ordering::Relaxed);
            match head_word.compare_exchange_weak(
                head,
                with_index(head, next),
                // Success, Acquire: the slot's previous life (its drop, its push)
                // happens before we construct a new object in it.
                Ordering::Acquire,
                // Failure, Acquire: we read the new head's link next time round.
                Ordering::Acquire,
            ) {
                Ok(_) => return Some((index, seen)),
                Err(now) => head = now,
            }
        }
    }

    /// Takes a slot that was used before and is free now from a shard other than
    /// `home`, or `None` (with nothing taken) when no stack it looked at had one.
    /// Visits the other shards whose bit `stocked` has (a snapshot of `stock`) once
    /// each, in the order of [`steal_order`](Self::steal_order), looking at a shard's
    /// local stack and then its remote stack. Every slot on a stack was used before (the never-used ones
    /// are counted, not stacked), so whatever a stack holds will do. The flag says that
    /// waiters must be woken (a remote chain replaced a waiters' mark).
    ///
    /// `live(shard)` says that the shard may be another live thread's home. The first
    /// pass (`live_homes == false`) skips those shards and the second looks only at
    /// them; the caller takes its home's never-used slots in between (see
    /// `Core::take_elsewhere`). Such a thread pushes and pops its local head on every
    /// insert and free, and a slot taken from its shard goes back there when it is
    /// freed: a thread that took slots there one at a time would bounce those lines
    /// between two cores on each object and never settle into a home of its own.
    /// (`live` is a hint: an index held by a thread that never touches this pool, or a
    /// thread that is done inserting but has not exited, makes a shard look busy; the
    /// second pass, before any never-used slot of another shard, keeps the high-water
    /// mark honest then.)
    #[cold]
    #[inline(never)]
    pub(crate) fn take_used(
        &self,
        home: u32,
        transit: &Transit,
        stock: &Stock,
        stocked: StockSnapshot,
        live: impl Fn(u32) -> bool,
        live_homes: bool,
    ) -> (Option<u32>, bool) {
        let mut wake = false;
        // Only the shards whose stacks may hold a slot (`stocked`, see `stock`).
        for shard in self.steal_order(home, transit) {
            if !stocked.has(shard) || live(shard) != live_homes {
                continue;
            }
            let mut taken = self.pop_local(shard);
            if taken.is_none() && self.remote_has_slots(shard) {
                let (got, woke) = self.take_remote(shard, transit, stock);
                wake |= woke;
                taken = got;
            }
            if taken.is_some() {
                transit.stole_from(shard);
                return (taken, wake);
            }
        }
        (None, wake)
    }

    /// Takes shard `shard`'s lowest never-used slot if the shard has handed out fewer
    /// than [`SETTLE_SLOTS`] so far, or `None`.
    #[inline]
    pub(crate) fn take_fresh_to_settle(&self, shard: u32) -> Option<u32> {
        // Relaxed: see `take_fresh`; a stale read only takes one slot more or less.
        if self.fresh_taken(shard).load(Ordering::Relaxed) >= SETTLE_SLOTS {
            return None;
        }
        self.take_fresh(shard)
    }

    /// Takes shard `shard`'s lowest never-used slot, or `None` when it has none left.
    ///
    /// The count only grows, by one per slot, and never past the shard's length, so
    /// each never-used slot is handed out once, in order (the pool's `high_water_len`
    /// relies on the order). Relaxed: a never-used slot has no previous life to order
    /// after (its link and stamp were written when the pool was built, which happens
    /// before any thread can reach it), and the count orders nothing else; the
    /// compare-exchanges on the one counter are totally ordered, so two takers never
    /// get the same slot. A stale read only sends us round the loop.
    #[inline]
    pub(crate) fn take_fresh(&self, shard: u32) -> Option<u32> {
        let (start, end) = self.layout.range(self.capacity, shard);
        let len = end - start;
        let count = self.fresh_taken(shard);
        let mut taken = count.load(Ordering::Relaxed);
        loop {
            if taken >= len {
                return None;
            }
            match count.compare_exchange_weak(
                taken,
                taken + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(start + taken),
                Err(now) => taken = now,
            }
        }
    }

    /// `true` when shard `shard` has never-used slots left (a snapshot; the answer
    /// only ever changes from `true` to `false`).
    #[inline]
    fn has_fresh(&self, shard: u32) -> bool {
        let (start, end) = self.layout.range(self.capacity, shard);
        // Relaxed: see `take_fresh`.
        self.fresh_taken(shard).load(Ordering::Relaxed) < end - start
    }

    /// The shards other than `home`, each once, in the order a thread whose home ran
    /// dry visits them: downwards (wrapping), starting at the shard the last successful
    /// steal took from, or at the last shard before any steal. Downwards, because
    /// threads hold the lowest free indices, so the highest shards are the ones no
    /// live thread calls home; and from the last steal, so that a thread that fills
    /// the whole pool from one home finds the next shard with room at once instead of
    /// walking past every shard it already emptied.
    #[inline]
    fn steal_order(&self, home: u32, transit: &Transit) -> impl Iterator<Item = u32> + use<> {
        let shards = self.layout.shards;
        // Relaxed: a hint; any shard number is correct, and it orders nothing.
        let hint = transit.steal_hint.load(Ordering::Relaxed);
        let start = if hint < shards { hint } else { shards - 1 };
        (0..shards)
            .map(move |k| {
                if k <= start {
                    start - k
                } else {
                    start + shards - k
                }
            })
            .filter(move |&shard| shard != home)
    }

    /// Takes a free slot from shard `home` or, failing that, from any other shard (in
    /// [`steal_order`](Self::steal_order)), or `None` if each shard was empty when
    /// visited. In each shard it looks at the stacks first, then at the never-used
    /// slots.
    ///
    /// A `None` means "full" only if no chain was in transit meanwhile: see
    /// [`Transit`] and the module docs.
    #[cold]
    #[inline(never)]
    pub(crate) fn scan(&self, home: u32, transit: &Transit, stock: &Stock) -> (Option<u32>, bool) {
        let popped = self.pop_any(home, transit, stock);
        if popped.0.is_some() {
            return popped;
        }
        for shard in self.steal_order(home, transit) {
            let popped = self.pop_any(shard, transit, stock);
            if popped.0.is_some() {
                transit.stole_from(shard);
                return popped;
            }
        }
        (None, false)
    }

    /// Takes a free slot of shard `shard`: from its stacks (see [`pop`](Self::pop)),
    /// or else a never-used one. Peeks first: an empty shard costs shared reads of its
    /// lines, not exclusive ones.
    #[inline]
    fn pop_any(&self, shard: u32, transit: &Transit, stock: &Stock) -> (Option<u32>, bool) {
        if !self.stacks_empty(shard) {
            let popped = self.pop(shard, transit, stock);
            if popped.0.is_some() {
                return popped;
            }
        }
        (self.take_fresh(shard), false)
    }

    /// Pushes the run `first -> ... -> last` (linked, and owned by the caller) onto the
    /// stack whose head is `head_word`: sets `last`'s link to the current top and
    /// installs `first` with a compare-exchange of ordering `success` (at least
    /// `Release`). Returns `true` when it replaced a waiters' mark, so waiters must be
    /// woken.
    #[inline(always)]
    fn push_run(
        &self,
        head_word: &AtomicU64,
        shard: u32,
        first: u32,
        last: u32,
        success: Ordering,
        stock: &Stock,
    ) -> bool {
        // Relaxed: the compare-exchange below checks this value; nothing is read
        // through it.
        let mut head = head_word.load(Ordering::Relaxed);
        loop {
            let below = match index_of(head) {
                NIL_WAITING => NIL,
                i => i,
            };
            // Relaxed: published by the compare-exchange below.
            self.link(last).store(below, Ordering::Relaxed);
            match head_word.compare_exchange_weak(
                head,
                with_index(head, first),
                // Success (Release or stronger): the links of the run and the end of its
                // slots' objects (dropped before the push) happen before any pop that
                // takes one of them.
                success,
                // Failure, Relaxed: we only retry with the fresh value.
                Ordering::Relaxed,
            ) {
                Ok(old) => {
                    // The stack was empty: the shard's stock bit must be set (a
                    // one-shard pool never searches other shards, and keeps no bits).
                    if below == NIL && self.layout.shards > 1 {
                        stock.mark(shard);
                    }
                    if index_of(old) == NIL_WAITING {
                        // Acquire fence: the waiter's Release in `announce_waiter`
                        // (which we just read) happens before our wake, so the futex
                        // value the waiter read is older than the bump we make next.
                        fence(Ordering::Acquire);
                        return true;
                    }
                    return false;
                }
                Err(now) => head = now,
            }
        }
    }

    /// `true` when both of shard `shard`'s stacks look empty (a snapshot). SeqCst: a
    /// scan's peeks take part in the transit argument (module docs); on x86-64 these
    /// are plain loads.
    #[inline]
    fn stacks_empty(&self, shard: u32) -> bool {
        index_of(self.head(shard).load(Ordering::SeqCst)) >= NIL_WAITING
            && index_of(self.remote(shard).load(Ordering::SeqCst)) >= NIL_WAITING
    }

    /// `true` when shard `shard` has no free slot: both stacks look empty and its
    /// never-used slots are all handed out (a snapshot).
    #[inline]
    fn shard_empty(&self, shard: u32) -> bool {
        self.stacks_empty(shard) && !self.has_fresh(shard)
    }

    /// Puts `index` back in the shard that owns it: on its local stack when that shard
    /// is `home` (the freeing thread's home shard), else on its remote stack. Returns
    /// `true` when threads were waiting for a slot and must now be woken.
    ///
    /// # Safety
    /// `index` was handed out by these lists ([`pop`](Self::pop),
    /// [`take_used`](Self::take_used), [`take_fresh`](Self::take_fresh) or
    /// [`scan`](Self::scan)) and has not been pushed since.
    #[inline]
    pub(crate) unsafe fn push(&self, index: u32, home: u32, stock: &Stock) -> bool {
        let shard = self.shard_of(index);
        let head_word = if shard == home {
            self.head(shard)
        } else {
            self.remote(shard)
        };
        // Success, Release: see `push_run`.
        self.push_run(head_word, shard, index, index, Ordering::Release, stock)
    }

    /// `true` when no shard has a free slot right now (the answer may be stale at once).
    pub(crate) fn all_empty(&self) -> bool {
        (0..self.layout.shards).all(|shard| self.shard_empty(shard) && self.cache_empty(shard))
    }
}
