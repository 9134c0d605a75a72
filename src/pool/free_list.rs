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
//! - **Shared stack** (`lists.rs`): the compare-exchange stack that every thread may pop
//!   and push. Threads that own no shard (more threads than shards, a shared index) use
//!   it for their home; owners use it while their gate is closed; stolen slots land on
//!   it.
//! - **Steal and the exact full check** (`steal.rs`): an insert that finds every stack
//!   and every never-used slot empty closes the owners' gate, steals half of a non-empty
//!   cache, or proves with a double collect that every slot was in use at one moment.
//! - **Waiters** (`waiters.rs`): a thread that sleeps for a slot closes the gate to the
//!   owners' frees first, so every free reaches a stack whose push wakes it.
//!
//! The other files: `search.rs` (other shards' stacks and the never-used slots, by
//! count), `full.rs` (the double collect that proves a pool full), `counts.rs` (the
//! live counters behind `Pool::len`), `transit.rs` (the slow paths' shared words),
//! `stock.rs` (which shards' stacks may hold slots), `layout.rs` (slots into shards)
//! and `exclusive.rs` (the same lists under `&mut`).
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
//! See `counts.rs`: two wrapping counters on each shard's local line, summed by
//! `Pool::len`.
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

mod counts;
mod exclusive;
mod full;
mod layout;
mod lists;
mod owner;
mod remote;
mod search;
mod steal;
mod stock;
mod transit;
mod waiters;

pub(crate) use counts::{count_live, count_used, COUNT_BACK, COUNT_OUT};
pub(crate) use layout::ShardLayout;
pub(crate) use lists::{FreeLists, Head, HEADS_PER_SHARD};
pub(crate) use owner::Gate;
pub(crate) use steal::Drained;
pub(crate) use stock::Stock;
pub(crate) use transit::Transit;
