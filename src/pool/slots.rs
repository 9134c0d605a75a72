//! The pool's storage: the slot array, the stamp per slot (state and generation), and
//! the free lists, without the scope lifetime that only `Pool` needs.
//!
//! This module owns [`Core`]. Invariants: a slot's stamp says whether it is free, held
//! by a `PoolBox` or pooled behind a handle, and its generation advances on every free,
//! so a stale handle never matches; a slot is handed out by exactly one pop of the free
//! lists, and its value is written before and dropped after the stamp changes hands
//! (release/acquire on the stamp and the heads).

use core::marker::PhantomData;
use core::mem::{self, MaybeUninit};
use core::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU32, Ordering, UnsafeCell};

use super::free_list::{Drained, FreeLists, Gate, Stock, Transit};
use super::handle::Handle;

// Stamp states (low two bits of a slot's stamp).
pub(super) const FREE: u32 = 0;
pub(super) const BOXED: u32 = 1;
pub(super) const POOLED: u32 = 2;
pub(super) const STATE_MASK: u32 = 3;
/// Added to a stamp each time its slot is filled: the generation lives above the state.
pub(super) const GENERATION_STEP: u32 = 4;

/// Source of pool tags and generation seeds. A plain `core` atomic (also under loom:
/// it only names pools, it orders nothing).
pub(super) static POOL_IDS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

pub(super) type Slot<T> = UnsafeCell<MaybeUninit<T>>;

/// Marks a type as invariant in `T`.
pub(super) type Invariant<T> = fn(T) -> T;

/// The calling thread's place in a pool: see [`Core::home`].
#[derive(Clone, Copy)]
pub(super) struct Home {
    /// The home shard.
    pub(super) shard: u32,
    /// Whether the thread holds dense index `shard` alone (it counts on the shard's
    /// `own` counter then, else on its `shared` one).
    pub(super) alone: bool,
}

/// The pool's state, without the scope lifetime (which only [`Pool`] needs).
pub(super) struct Core<T> {
    // Read-only after construction.
    pub(super) values: NonNull<Slot<T>>,
    pub(super) stamps: NonNull<AtomicU32>,
    pub(super) capacity: u32,
    pub(super) tag: u32,
    /// The shards' free lists. The fields are read-only; the heads they point to (the
    /// hot atomics, one cache line per shard) live in scope memory.
    pub(super) free: FreeLists,
    /// The slow paths' words (the steal hint, remote-list moves in transit; see
    /// `free_list`). Written only by steals and moves, on a line of its own, so that the
    /// read-only fields above stay shared in every core's cache.
    pub(super) transit: CachePadded<Transit>,
    /// Words written seldom and read on slow paths or by some frees: the futex word
    /// and the stock bits. Padded so that those writes do not evict the read-only
    /// fields above from other cores' caches.
    pub(super) quiet: CachePadded<Quiet>,
    /// Owns `T`s, and is invariant in `T`: through `&Pool` one can store a `T`, so a
    /// `Pool<&'static str>` must not pass for a `Pool<&'short str>`.
    pub(super) _owns: PhantomData<Invariant<T>>,
    /// The pool as the profiler shows it (feature `tracy`).
    #[cfg(feature = "tracy")]
    pub(super) profiler: crate::profiler::Counted,
}

/// The pool's seldom-written words (see [`Core::quiet`]).
pub(super) struct Quiet {
    /// Where threads wait for a full pool. Written only when the pool is full and
    /// threads wait.
    #[cfg(feature = "std")]
    pub(super) futex: crate::sync::Futex,
    /// Which shards' stacks may hold freed slots (see `free_list::Stock`). Read by a free
    /// that fills an empty stack; written when such a free finds its shard's bit clear,
    /// and by a search that finds a bit stale.
    pub(super) stock: Stock,
    /// The owners' gate (`free_list/owner.rs`): read by every owner's insert and free,
    /// written only by steals, full checks and waiters.
    pub(super) gate: Gate,
}

// SAFETY: the `Core` owns its `T`s (through raw pointers into scope memory that nothing
// else uses); moving it to another thread moves them, so `T: Send` suffices.
unsafe impl<T: Send> Send for Core<T> {}
// SAFETY: through `&Core`, threads insert (moving a `T` in), drop boxes (dropping a `T`
// on another thread) and share pooled objects (`&T` on many threads): hence
// `T: Send + Sync`. All shared bookkeeping is atomic.
unsafe impl<T: Send + Sync> Sync for Core<T> {}

impl<T> Core<T> {
    #[inline(always)]
    pub(super) fn stamp(&self, index: u32) -> &AtomicU32 {
        debug_assert!(index < self.capacity);
        // SAFETY: `index < capacity` (callers take it from the free list, a box, or a
        // checked handle); the stamps live as long as `self`.
        unsafe { self.stamps.add(index as usize).as_ref() }
    }

    #[inline(always)]
    pub(super) fn slot(&self, index: u32) -> &Slot<T> {
        debug_assert!(index < self.capacity);
        // SAFETY: as in `stamp`.
        unsafe { self.values.add(index as usize).as_ref() }
    }

    /// Pointer to the object in slot `index`, valid while the slot holds one.
    #[inline(always)]
    pub(super) fn value_ptr(&self, index: u32) -> *mut T {
        self.slot(index).with(|p| p.cast_mut().cast::<T>())
    }

    /// The slot a handle names, if it names a pooled object of this pool now.
    #[inline]
    pub(super) fn find(&self, handle: Handle<T>) -> Option<u32> {
        let index = handle.index() as u32;
        if handle.tag() != self.tag
            || index >= self.capacity
            || handle.stamp() & STATE_MASK != POOLED
        {
            return None;
        }
        // Acquire: pairs with the Release in `into_handle`, so the object's contents
        // written through its box are visible to us.
        (self.stamp(index).load(Ordering::Acquire) == handle.stamp()).then_some(index)
    }

    /// The calling thread's home shard (see [`crate::thread_index`]), and whether the
    /// thread holds that number as its dense index alone, so that it may count on the
    /// shard's `own` live counter (see `free_list`, "Counting live objects").
    ///
    /// The home is the thread's index modulo the shard count, as ever: a thread that
    /// holds its index alone has it in `current_exclusive_fast` too, and most programs
    /// have fewer live threads than shards, so the usual path reads that one word and
    /// compares it (no division). Every other thread (one whose index is not below the
    /// shard count, or is shared, or not yet assigned) takes the plain index.
    #[inline(always)]
    pub(super) fn home(&self) -> Home {
        let shards = self.free.shards();
        let alone = crate::thread_index::current_exclusive_fast();
        if alone < shards {
            Home {
                shard: alone,
                alone: true,
            }
        } else {
            let thread = crate::thread_index::current();
            Home {
                shard: if thread < shards {
                    thread
                } else {
                    thread % shards
                },
                alone: false,
            }
        }
    }

    /// Counts one slot handed out (`delta` = `COUNT_OUT`) or given back (`COUNT_BACK`) by
    /// the calling thread, whose home is `who`.
    #[inline(always)]
    fn count(&self, who: Home, delta: u32) {
        self.free.count(who.shard, who.alone, delta);
    }

    /// Takes a free slot, looking in shard `home` first and then in every other one.
    /// `who` is the calling thread's [`home`](Self::home), for the live count.
    #[inline]
    pub(super) fn insert(&self, home: u32, who: Home, value: T, exact: bool) -> Result<u32, T> {
        let Some((index, old)) = self.claim(home, who, exact) else {
            return Err(value);
        };
        #[cfg(feature = "tracy")]
        self.profiler.alloc(self.value_ptr(index).addr());
        // We own the slot now (see the free list's invariant). Relaxed: only owners
        // write a stamp; other threads read it only to compare it with a pooled stamp,
        // which a boxed stamp never equals.
        self.stamp(index).store(
            (old & !STATE_MASK).wrapping_add(GENERATION_STEP) | BOXED,
            Ordering::Relaxed,
        );
        // SAFETY: the slot is ours and holds no object.
        self.slot(index)
            .with_mut(|p| unsafe { p.write(MaybeUninit::new(value)) });
        Ok(index)
    }

    /// Like [`insert`](Self::insert), but takes the slot first and then builds the
    /// object in it from `f`. On a full pool, `f` comes back un-called.
    #[inline(always)]
    pub(super) fn insert_with<F: FnOnce() -> T>(
        &self,
        home: u32,
        who: Home,
        f: F,
    ) -> Result<u32, F> {
        /// Frees the claimed slot if `f` panics (it holds no object then).
        struct Unclaim<'a, T>(&'a Core<T>, u32);
        impl<T> Drop for Unclaim<'_, T> {
            #[cold]
            fn drop(&mut self) {
                // SAFETY: the slot was popped by `insert_with` and no object was written.
                unsafe { self.0.release(self.1) }
            }
        }

        let Some((index, old)) = self.claim(home, who, true) else {
            return Err(f);
        };
        #[cfg(feature = "tracy")]
        self.profiler.alloc(self.value_ptr(index).addr());
        // We own the slot now; the stamp says boxed, as in `insert`.
        self.stamp(index).store(
            (old & !STATE_MASK).wrapping_add(GENERATION_STEP) | BOXED,
            Ordering::Relaxed,
        );
        let unclaim = Unclaim(self, index);
        // SAFETY: the slot is ours and holds no object; `MaybeUninit<T>` has `T`'s
        // layout, so the pointer is valid and aligned for a `T`.
        self.slot(index)
            .with_mut(|p| unsafe { p.cast::<T>().write(f()) });
        core::mem::forget(unclaim);
        Ok(index)
    }

    /// Takes a free slot for an insert: the slot and its stamp, which holds once we own
    /// the slot (only owners write stamps, so it stays as read until we write it).
    /// Counts the slot out for the calling thread, whose home is `who`.
    ///
    /// The fast path is a pop of shard `home`'s local stack. Every slot on a stack was
    /// used before (the never-used slots are a count per shard, not stacked), so no
    /// freshness check is needed; `take_elsewhere` looks for a freed slot everywhere
    /// before it takes a never-used one.
    #[inline(always)]
    fn claim(&self, home: u32, who: Home, exact: bool) -> Option<(u32, u32)> {
        // Relaxed: the slot's last owner stored its stamp before the push that the
        // pop acquires, and the stamp stays as read once the pop succeeds (see
        // `FreeLists::pop_local_read`).
        let stamp_of = |i| self.stamp(i).load(Ordering::Relaxed);
        let fast = if who.alone && who.shard == home {
            // The shard's owner: its cache, with plain loads and stores.
            self.free.owner_pop_read(home, &self.quiet.gate, stamp_of)
        } else {
            self.free.pop_local_read(home, stamp_of)
        };
        let claimed = match fast {
            Some(claimed) => claimed,
            None => self
                .take_elsewhere(home, who, exact)
                // Relaxed: we own the slot; its last owner's stamp store happened
                // before the push we acquired (or, for a never-used slot, the pool's
                // construction happened before this thread could reach it).
                .map(|index| (index, self.stamp(index).load(Ordering::Relaxed)))?,
        };
        self.count(who, super::free_list::COUNT_OUT);
        Some(claimed)
    }

    /// The slow half of [`insert`](Self::insert): shard `home`'s local list was empty.
    /// Takes, in this order: the slots other threads freed into shard `home`'s remote
    /// list; a slot freed into a shard that is no other live thread's home; a
    /// never-used slot of shard `home`, while it has handed out fewer than
    /// `SETTLE_SLOTS` (32); a slot freed into another live thread's home; and only
    /// then a never-used slot (shard `home`'s first). Reports the pool full only
    /// after a scan during which no chain of freed slots was in transit between two
    /// lists (see `free_list`'s module docs); while one is, it looks again.
    ///
    /// The home's never-used slots come before another live thread's freed ones so
    /// that a thread settles into its own shard: a slot taken from another live home
    /// goes back there when it is freed, so a thread that kept taking those would
    /// steal on every insert, and the thread it took from would run dry and steal in
    /// turn. On 16 cores `pool_scaling`'s ring pattern did exactly that, at 13 times
    /// sharded-slab's cost (docs/PERFORMANCE.md). The price is in `high_water_len`'s
    /// docs: a thread may use up to 32 never-used slots of its home while slots another
    /// live thread freed wait in that thread's home.
    #[cold]
    #[inline(never)]
    pub(super) fn take_elsewhere(&self, home: u32, who: Home, exact: bool) -> Option<u32> {
        if who.alone && who.shard == home {
            // The owner's remote stack moves into its cache; then the shared stack
            // (slots that thieves, or the owner itself while its gate was closed, put
            // there).
            if let Some(index) = self.free.owner_refill(home, &self.quiet.gate) {
                return Some(index);
            }
            if let Some(index) = self.free.pop_local(home) {
                return Some(index);
            }
        } else if who.alone {
            // An owner inserting elsewhere (`insert_in_shard`): its own cache first,
            // the cheapest freed slot there is.
            if let Some((index, ())) = self
                .free
                .owner_pop_read(who.shard, &self.quiet.gate, |_| ())
            {
                return Some(index);
            }
        }
        if self.free.shards() > 1 {
            if self.free.remote_has_slots(home) {
                let (index, wake) = self
                    .free
                    .take_remote(home, &self.transit, &self.quiet.stock);
                if wake {
                    self.wake_waiters();
                }
                if index.is_some() {
                    return index;
                }
            }
            // A live thread whose index is `shard` calls that shard home; this
            // thread's own home is not another thread's. (Threads past the shard count
            // share homes by `index % shards`; those are not looked for.)
            let own = self.home().shard;
            let live = |shard| shard != own && crate::thread_index::held(shard);
            // The shards whose stacks may hold a freed slot: none, in a pool that one
            // thread is filling, and then neither pass looks anywhere.
            let stocked = self.quiet.stock.snapshot(self.free.shards());
            let any_stocked = stocked.any_but(home);
            for live_homes in [false, true] {
                if live_homes {
                    if let Some(index) = self.free.take_fresh_to_settle(home) {
                        return Some(index);
                    }
                }
                if !any_stocked {
                    continue;
                }
                let (index, wake) = self.free.take_used(
                    home,
                    &self.transit,
                    &self.quiet.stock,
                    stocked,
                    live,
                    live_homes,
                );
                if wake {
                    self.wake_waiters();
                }
                if index.is_some() {
                    return index;
                }
            }
        }
        // Freed slots in the owners' caches come before never-used slots of other
        // shards (the scan below takes those), so that `high_water_len` stays close
        // to the true peak: one handshake moves half a cache onto its shared stack.
        if self.free.any_cache_holds_slots() {
            if let Drained::Got(index, wake) = self.free.drain_caches(
                home,
                &self.transit,
                &self.quiet.stock,
                &self.quiet.gate,
                false,
            ) {
                if wake {
                    self.wake_waiters();
                }
                return Some(index);
            }
        }
        loop {
            let before = self.transit.before_scan();
            let (index, wake) = self.free.scan(home, &self.transit, &self.quiet.stock);
            if wake {
                self.wake_waiters();
            }
            if index.is_some() {
                return index;
            }
            if self.transit.quiet_since(before) {
                if !exact {
                    // A waiter's first look (`wait.rs`): its own checks under the gate
                    // stand in for the full check.
                    return None;
                }
                // Every stack was empty when looked at: what is left is in the owners'
                // caches, or nowhere (`free_list/steal.rs`).
                match self.free.drain_caches(
                    home,
                    &self.transit,
                    &self.quiet.stock,
                    &self.quiet.gate,
                    true,
                ) {
                    Drained::Got(index, wake) => {
                        if wake {
                            self.wake_waiters();
                        }
                        return Some(index);
                    }
                    Drained::Full => return None,
                    Drained::Changed => {}
                }
            }
            crate::sync::spin_hint();
        }
    }

    /// Marks slot `index` free and puts it back on the free list, waking waiters.
    ///
    /// # Safety
    /// The caller owns the slot (a box, or `&mut self` with a checked handle) and its
    /// object has been dropped or moved out.
    #[inline]
    pub(super) unsafe fn release(&self, index: u32) {
        // With `debug-fill`, paint the vacated storage so stale reads stand out.
        #[cfg(feature = "debug-fill")]
        self.slot(index).with_mut(|p| {
            if let Some(p) = NonNull::new(p.cast::<u8>()) {
                crate::block::debug_fill::freed_slot(p, size_of::<T>());
            }
        });
        #[cfg(feature = "tracy")]
        self.profiler.free(self.value_ptr(index).addr());
        let stamp = self.stamp(index);
        // Relaxed: see `insert`. The free list's Release push orders it for the next
        // owner.
        stamp.store(
            stamp.load(Ordering::Relaxed) & !STATE_MASK,
            Ordering::Relaxed,
        );
        // Counted back before the push: once the slot is on a stack another insert may
        // count it out again, and a count read meanwhile should not hold it twice.
        let who = self.home();
        self.count(who, super::free_list::COUNT_BACK);
        if who.alone
            && self.free.shard_of(index) == who.shard
            && self.free.owner_push(who.shard, &self.quiet.gate, index)
        {
            // On its owner's cache, with plain stores; no waiter can be asleep on it
            // (a waiter closes the gate first, `free_list/waiters.rs`).
            return;
        }
        // SAFETY: per the caller the slot was popped and is not on the list.
        let had_waiters = unsafe { self.free.push(index, who.shard, &self.quiet.stock) };
        if had_waiters {
            self.wake_waiters();
        }
    }

    #[cold]
    pub(super) fn wake_waiters(&self) {
        #[cfg(feature = "std")]
        self.quiet.futex.bump_and_wake_all();
    }

    /// Drops the object in `index` and releases the slot, even if the drop panics.
    ///
    /// # Safety
    /// As [`release`](Self::release), except the object is still alive.
    // `#[inline]`: a `PoolBox` drop's hot path. Without it, whether this generic
    // function is inlined into a caller in another crate depends on how that crate's
    // code is split into codegen units, which unrelated changes move
    // (`scripts/hot_path.sh --check` saw `pool_pair` go from 95 to 102 instructions).
    #[inline]
    pub(super) unsafe fn drop_and_release(&self, index: u32) {
        struct Release<'a, T>(&'a Core<T>, u32);
        impl<T> Drop for Release<'_, T> {
            #[inline]
            fn drop(&mut self) {
                // SAFETY: forwarded from `drop_and_release`; the object is gone.
                unsafe { self.0.release(self.1) }
            }
        }
        let guard = Release(self, index);
        // SAFETY: the caller owns the live object; it is dropped exactly once here.
        self.slot(index)
            .with_mut(|p| unsafe { ptr::drop_in_place(p.cast::<T>()) });
        drop(guard);
    }

    /// Moves the object out of `index` and releases the slot.
    ///
    /// # Safety
    /// As [`release`](Self::release), except the object is still alive.
    pub(super) unsafe fn take(&self, index: u32) -> T {
        // SAFETY: the caller owns the live object; reading it moves it out, and the
        // slot is released right after, so it is never read again.
        let value = self
            .slot(index)
            .with_mut(|p| unsafe { p.cast::<T>().read() });
        // SAFETY: forwarded.
        unsafe { self.release(index) };
        value
    }
}

impl<T> Core<T> {
    /// Drops every object in slots `from..capacity`. If a destructor panics, the rest
    /// are still dropped while the panic unwinds (a second panic aborts, as anywhere).
    ///
    /// # Safety
    /// Called once, from the pool's drop: no box or reference to any object is alive
    /// (boxes borrow the pool; leaked boxes are gone for good).
    pub(super) unsafe fn drop_objects_from(&self, from: u32) {
        /// Drops the objects after a panicking one.
        struct Rest<'a, T>(&'a Core<T>, u32);
        impl<T> Drop for Rest<'_, T> {
            fn drop(&mut self) {
                // SAFETY: forwarded; the slots from `self.1` on are untouched.
                unsafe { self.0.drop_objects_from(self.1) }
            }
        }
        for index in from..self.capacity {
            // Relaxed: the pool is being dropped, so whatever handed it to this thread
            // (the end of every borrow) already ordered all earlier writes.
            if self.stamp(index).load(Ordering::Relaxed) & STATE_MASK != FREE {
                let rest = Rest(self, index + 1);
                // SAFETY: a non-free slot holds a live object, and we are its last
                // owner (see the function's contract); it is dropped once, since the
                // guard carries on after it.
                self.slot(index)
                    .with_mut(|p| unsafe { ptr::drop_in_place(p.cast::<T>()) });
                mem::forget(rest);
            }
        }
    }
}

impl<T> Drop for Core<T> {
    fn drop(&mut self) {
        // Ends the pool in the profiler after the drops, even if one panics.
        #[cfg(feature = "tracy")]
        let _ending = self.profiler.ending();
        if mem::needs_drop::<T>() {
            // SAFETY: `&mut self` in drop: nothing else can reach the objects.
            unsafe { self.drop_objects_from(0) };
        }
    }
}
