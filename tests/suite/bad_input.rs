//! Bad inputs across the public API, as a table of cases.
//!
//! Each case asserts the exact [`AllocErrorKind`] and a readable message (the key words
//! of its `Display`), and shows that nothing was lost: every object the case made is
//! dropped exactly once (a [`Ledger`] counts them), and the scope, pool or store is
//! still usable afterwards.

use std::alloc::Layout;
use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicIsize, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use scope_stack::scratch::{self, SetCapacityError};
use scope_stack::store::{Id, Store, MAX_STORE_OBJECTS};
use scope_stack::{
    AllocError, AllocErrorKind, DenseHandle, DensePool, Handle, LinearAllocator, Pool, ScopeStack,
    ScratchPads, MAX_ALIGN, MAX_POOL_CAPACITY, MAX_POOL_SHARDS,
};

/// The most slots a dense pool takes (its handle's 24-bit index). The crate does not
/// export it as a constant; its docs name the number.
const MAX_DENSE_POOL_CAPACITY: usize = 1 << 24;

/// Rounds of the loops that reuse slots; fewer under Miri, which is slow.
const ROUNDS: u32 = if cfg!(miri) { 3 } else { 40 };

// ----- a drop-counting object -----

/// Which objects were made and which were dropped, for one test.
struct Ledger {
    next: AtomicU32,
    made: Mutex<Vec<u32>>,
    dropped: Mutex<Vec<u32>>,
    /// The object whose destructor panics (`u32::MAX`: none).
    panic_on_drop: AtomicU32,
    /// Clones that may still succeed before one panics (negative: no limit).
    clones_left: AtomicIsize,
}

impl Ledger {
    fn new() -> Arc<Ledger> {
        Arc::new(Ledger {
            next: AtomicU32::new(0),
            made: Mutex::new(Vec::new()),
            dropped: Mutex::new(Vec::new()),
            panic_on_drop: AtomicU32::new(u32::MAX),
            clones_left: AtomicIsize::new(-1),
        })
    }

    fn item(self: &Arc<Self>) -> Item {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.made.lock().unwrap().push(id);
        Item {
            id,
            ledger: self.clone(),
        }
    }

    /// Objects made and not yet dropped.
    fn live(&self) -> usize {
        self.made.lock().unwrap().len() - self.dropped.lock().unwrap().len()
    }

    fn made(&self) -> usize {
        self.made.lock().unwrap().len()
    }

    /// Every object made was dropped, none twice.
    #[track_caller]
    fn assert_each_dropped_once(&self) {
        let mut made = self.made.lock().unwrap().clone();
        let mut dropped = self.dropped.lock().unwrap().clone();
        made.sort_unstable();
        dropped.sort_unstable();
        let mut unique = dropped.clone();
        unique.dedup();
        assert_eq!(unique, dropped, "an object was dropped twice");
        assert_eq!(dropped, made, "an object was never dropped");
    }

    fn panic_when_dropping(&self, id: u32) {
        self.panic_on_drop.store(id, Ordering::Relaxed);
    }

    fn allow_clones(&self, n: isize) {
        self.clones_left.store(n, Ordering::Relaxed);
    }
}

/// An object that reports its drop to a [`Ledger`], and can be told to panic while it
/// is dropped or cloned.
struct Item {
    id: u32,
    ledger: Arc<Ledger>,
}

impl Clone for Item {
    fn clone(&self) -> Item {
        let left = self.ledger.clones_left.load(Ordering::Relaxed);
        if left == 0 {
            panic!("clone of item {} panics", self.id);
        }
        if left > 0 {
            self.ledger.clones_left.store(left - 1, Ordering::Relaxed);
        }
        self.ledger.item()
    }
}

impl Drop for Item {
    fn drop(&mut self) {
        self.ledger.dropped.lock().unwrap().push(self.id);
        if self.ledger.panic_on_drop.load(Ordering::Relaxed) == self.id {
            panic!("drop of item {} panics", self.id);
        }
    }
}

impl fmt::Debug for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Item({})", self.id)
    }
}

// ----- helpers -----

/// The error has kind `kind`, and its message reads as one sentence with `words` in it.
#[track_caller]
fn assert_error(e: &AllocError, kind: AllocErrorKind, words: &[&str]) {
    assert_eq!(e.kind(), kind, "{e}");
    let text = e.to_string();
    assert!(text.starts_with("scope-stack: "), "{text}");
    assert!(!text.contains('\n'), "{text}");
    for w in words {
        assert!(text.contains(w), "{text:?} does not say {w:?}");
    }
}

/// The message of a panic.
fn panic_text(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        String::from("<not a string>")
    }
}

/// Runs `f`, which must panic, and returns the panic's message.
#[track_caller]
fn panics<R>(f: impl FnOnce() -> R) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(p) => panic_text(p),
    }
}

/// The scope still allocates, exactly up to the end of the block and not a byte more.
#[track_caller]
fn assert_scope_usable(s: &ScopeStack<'_>) {
    let left = s.allocator().remaining();
    if left > 0 {
        let p = s.try_alloc_raw(left, 1).expect("the rest of the block");
        // SAFETY: `p` is `left` fresh bytes of this scope.
        unsafe { p.as_ptr().write_bytes(0xAB, left) };
    }
    let e = s.try_alloc_raw(1, 1).unwrap_err();
    assert_error(&e, AllocErrorKind::OutOfMemory, &["out of memory"]);
    assert!(s.try_alloc_raw(0, 1).is_ok());
}

// ----- capacities -----

#[test]
fn a_capacity_of_zero_is_invalid_for_blocks_pools_dense_pools_stores_and_pads() {
    use AllocErrorKind::InvalidCapacity;
    let e = LinearAllocator::with_capacity(0).unwrap_err();
    assert_error(
        &e,
        InvalidCapacity,
        &[
            "invalid capacity",
            "greater than zero",
            "a block of 0 bytes",
        ],
    );
    assert_eq!((e.size(), e.scope_name()), (0, ""));
    let e = ScratchPads::new(0).try_with(|_| ()).unwrap_err();
    assert_error(&e, InvalidCapacity, &["invalid capacity"]);
    assert!(panics(|| ScratchPads::new(0).with(|_| ())).contains("invalid capacity"));
    // This thread's scratch arenas: a refused capacity keeps the old ones.
    match scratch::set_capacity(0) {
        Err(SetCapacityError::Alloc(e)) => assert_error(&e, InvalidCapacity, &["0 bytes"]),
        other => panic!("{other:?}"),
    }
    assert!(panics(|| scratch::set_default_capacity(0)).contains("greater than zero"));
    assert_eq!(scope_stack::scratch(|s| *s.new_pod(3u8)), 3);

    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let first = level.new_object(ledger.item());
        let used = level.used();
        let in_level = ["invalid capacity", "in scope \"level\""];
        let e = level.try_new_pool::<Item>(0).unwrap_err();
        assert_error(&e, InvalidCapacity, &in_level);
        let e = level.try_new_pool_with_shards::<Item>(0, 1).unwrap_err();
        assert_error(&e, InvalidCapacity, &in_level);
        // The capacity is checked before the shard count.
        let e = level.try_new_pool_with_shards::<Item>(0, 0).unwrap_err();
        assert_error(&e, InvalidCapacity, &in_level);
        let e = level.try_new_dense_pool::<Item>(0).unwrap_err();
        assert_error(&e, InvalidCapacity, &in_level);
        let e = level.try_new_store::<Item>(0, 8).unwrap_err();
        assert_error(&e, InvalidCapacity, &in_level);
        let e = level.try_new_store::<Item>(8, 0).unwrap_err();
        assert_error(&e, InvalidCapacity, &in_level);
        assert!(panics(|| level.new_pool::<Item>(0)).contains("invalid capacity"));
        assert!(panics(|| level.new_dense_pool::<Item>(0)).contains("invalid capacity"));
        assert!(panics(|| level.new_store::<Item>(0, 0)).contains("invalid capacity"));
        assert_eq!(level.used(), used, "a refused request takes nothing");
        assert_eq!(ledger.live(), 1);

        // Everything still works in the same scope.
        let pool = level.new_pool::<Item>(2);
        let h = pool.insert(ledger.item()).unwrap().into_handle();
        let dense = level.new_dense_pool::<Item>(2);
        let d = dense.insert(ledger.item()).unwrap();
        let store = level.new_store::<Item>(2, 4);
        let id = store.create(ledger.item()).unwrap();
        assert_eq!(first.id, 0);
        assert_eq!(
            (
                pool.get(h).unwrap().id,
                dense[d].id,
                store.read(id).unwrap().id
            ),
            (1, 2, 3)
        );
    });
    ledger.assert_each_dropped_once();
    assert_eq!(memory.used(), 0);
}

/// A type so large that 2^23 of them (2^63 bytes) do not fit in `isize`.
type Huge = [u8; 1 << 40];

#[test]
fn capacities_that_overflow_isize_are_capacity_overflow() {
    use AllocErrorKind::CapacityOverflow;
    // Blocks: the capacity, rounded up to `MAX_ALIGN`, must fit in `isize`.
    for bytes in [
        usize::MAX,
        isize::MAX as usize + 1,
        isize::MAX as usize,
        isize::MAX as usize - MAX_ALIGN + 2,
    ] {
        let e = LinearAllocator::with_capacity(bytes).unwrap_err();
        let asked = format!("a block of {bytes} bytes");
        assert_error(&e, CapacityOverflow, &["overflows isize", &asked]);
        assert_eq!(e.size(), bytes);
        let e = ScratchPads::new(bytes).try_with(|_| ()).unwrap_err();
        assert_error(&e, CapacityOverflow, &["overflows isize", &asked]);
        match scratch::set_capacity(bytes) {
            Err(SetCapacityError::Alloc(e)) => assert_error(&e, CapacityOverflow, &[&asked]),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(scope_stack::scratch(|s| *s.new_pod(3u8)), 3);
    // Nothing to reserve for the sizes, so `memory_needed` says so too.
    assert_eq!(Pool::<u64>::memory_needed(usize::MAX), None);
    assert_eq!(Pool::<u64>::memory_needed_with_shards(usize::MAX, 1), None);
    assert_eq!(DensePool::<u64>::memory_needed(usize::MAX), None);
    assert_eq!(Store::<u64>::memory_needed(usize::MAX, usize::MAX), None);

    // Pools and stores: within their slot maximums, but the arrays overflow `isize`.
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let item = level.new_object(ledger.item());
        let used = level.used();
        let words = [
            "overflows isize",
            "in scope \"level\"",
            "more than isize::MAX bytes",
        ];
        for capacity in [1 << 23, MAX_POOL_CAPACITY] {
            let named = |what: &str| format!("{what}<[u8; 1099511627776]> {capacity}");
            let e = level.try_new_pool::<Huge>(capacity).unwrap_err();
            assert_error(&e, CapacityOverflow, &words);
            assert_error(
                &e,
                CapacityOverflow,
                &[&named("Pool").replace("> ", "> capacity ")],
            );
            let e = level
                .try_new_pool_with_shards::<Huge>(capacity, 3)
                .unwrap_err();
            assert_error(&e, CapacityOverflow, &words);
            let e = level.try_new_dense_pool::<Huge>(capacity).unwrap_err();
            assert_error(&e, CapacityOverflow, &words);
            let dense = named("DensePool").replace("> ", "> capacity ");
            assert_error(&e, CapacityOverflow, &[&dense]);
            let e = level.try_new_store::<Huge>(4, capacity).unwrap_err();
            assert_error(&e, CapacityOverflow, &words);
            let store = named("Store").replace("> ", "> max_versions ");
            assert_error(&e, CapacityOverflow, &[&store]);
        }
        assert!(panics(|| level.new_pool::<Huge>(1 << 23)).contains("overflows isize"));
        // Sizes that fit in `isize` but not in the block are out of memory.
        let e = level.try_new_pool::<Huge>(2).unwrap_err();
        assert_error(&e, AllocErrorKind::OutOfMemory, &["out of memory"]);
        let e = level.try_new_dense_pool::<Huge>(2).unwrap_err();
        assert_error(&e, AllocErrorKind::OutOfMemory, &["out of memory"]);
        assert_eq!(level.used(), used, "a refused request takes nothing");

        let pool = level.new_pool::<Item>(4);
        pool.insert(ledger.item()).unwrap().into_handle();
        assert_eq!(item.id, 0);
        assert_eq!(ledger.live(), 2);
    });
    ledger.assert_each_dropped_once();
}

// ----- alignments and sizes -----

#[derive(Clone, Copy, Debug)]
#[repr(C, align(8192))]
struct OverAligned(u8);

#[derive(Clone, Debug)]
#[repr(C, align(8192))]
struct OverAlignedItem(Item);

#[test]
fn alignments_that_are_not_powers_of_two_are_invalid_in_every_raw_form() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 14).unwrap();
    memory.scope("raw", |raw| {
        let item = raw.new_object(ledger.item());
        raw.new_pod(1u8);
        let used = raw.used();
        for align in [0, 3, 6, 12, 100, 4095, usize::MAX] {
            for size in [0, 1, 64] {
                let e = raw.try_alloc_raw(size, align).unwrap_err();
                let asked = format!("requested {size} bytes (align {align})");
                let words = ["alignment is not a power of two", "\"raw\"", asked.as_str()];
                assert_error(&e, AllocErrorKind::InvalidAlignment, &words);
                assert_eq!((e.size(), e.align()), (size, align));
                let text = panics(|| raw.alloc_raw(size, align));
                assert!(text.contains("not a power of two"), "{text}");
            }
        }
        // `Layout` itself rejects such alignments, so the layout forms never see one.
        assert!(Layout::from_size_align(8, 3).is_err());
        assert_eq!(raw.used(), used, "a refused request takes nothing");
        assert_eq!(item.id, 0);
        assert_scope_usable(raw);
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn alignments_above_max_align_are_too_large_in_every_form() {
    use AllocErrorKind::AlignmentTooLarge;
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 15).unwrap();
    memory.scope("raw", |raw| {
        let item = raw.new_object(ledger.item());
        raw.new_pod(1u8);
        let used = raw.used();
        let words = ["alignment is larger than MAX_ALIGN", "\"raw\""];
        for align in [MAX_ALIGN * 2, 1 << 20, 1 << (usize::BITS - 1)] {
            for size in [0, 1, 64] {
                let e = raw.try_alloc_raw(size, align).unwrap_err();
                assert_error(&e, AlignmentTooLarge, &words);
                assert_eq!((e.size(), e.align()), (size, align));
                let text = panics(|| raw.alloc_raw(size, align));
                assert!(text.contains("larger than MAX_ALIGN"), "{text}");
                if let Ok(layout) = Layout::from_size_align(size, align) {
                    let e = raw.try_alloc_layout(layout).unwrap_err();
                    assert_error(&e, AlignmentTooLarge, &words);
                    let text = panics(|| raw.alloc_layout(layout));
                    assert!(text.contains("larger than MAX_ALIGN"), "{text}");
                }
            }
        }
        // Over-aligned types, in every form that places them.
        let e = raw.try_new_pod(OverAligned(7)).unwrap_err();
        assert_error(&e.error, AlignmentTooLarge, &words);
        assert_eq!(e.value.0, 7);
        let e = raw
            .try_new_object(OverAlignedItem(ledger.item()))
            .unwrap_err();
        assert_error(&e.error, AlignmentTooLarge, &words);
        drop(e.into_value()); // the value came back: dropped here, once
        assert!(panics(|| raw.new_object(OverAlignedItem(ledger.item())))
            .contains("larger than MAX_ALIGN"));
        let e = raw.try_alloc_slice_copy(&[OverAligned(1); 2]).unwrap_err();
        assert_error(&e, AlignmentTooLarge, &words);
        let e = raw
            .try_alloc_slice_fill_with(2, |_| -> OverAligned { unreachable!() })
            .unwrap_err();
        assert_error(&e, AlignmentTooLarge, &words);
        let e = raw
            .try_alloc_slice_fill_with(2, |_| -> OverAlignedItem { unreachable!() })
            .unwrap_err();
        assert_error(&e, AlignmentTooLarge, &words);
        let src = [OverAlignedItem(ledger.item())];
        let e = raw.try_alloc_slice_clone(&src).unwrap_err();
        assert_error(&e, AlignmentTooLarge, &words);
        drop(src);
        let e = raw.try_new_pool::<OverAlignedItem>(2).unwrap_err();
        assert_error(&e, AlignmentTooLarge, &words);
        let e = raw.try_new_dense_pool::<OverAlignedItem>(2).unwrap_err();
        assert_error(&e, AlignmentTooLarge, &words);
        let e = raw.try_new_store::<OverAlignedItem>(2, 2).unwrap_err();
        assert_error(&e, AlignmentTooLarge, &words);
        assert_eq!(raw.used(), used, "a refused request takes nothing");
        assert_eq!(ledger.live(), 1);

        // `MAX_ALIGN` itself is fine.
        let p = raw.alloc_raw(1, MAX_ALIGN);
        assert_eq!(p.as_ptr() as usize % MAX_ALIGN, 0);
        assert_eq!(item.id, 0);
        assert_scope_usable(raw);
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn sizes_above_isize_max_are_capacity_overflow() {
    use AllocErrorKind::CapacityOverflow;
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("big", |big| {
        let item = big.new_object(ledger.item());
        let used = big.used();
        for size in [isize::MAX as usize + 1, usize::MAX - 7, usize::MAX] {
            for align in [1, 8, MAX_ALIGN] {
                let e = big.try_alloc_raw(size, align).unwrap_err();
                let asked = format!("requested {size} bytes (align {align})");
                let words = ["size overflows isize", "\"big\"", asked.as_str()];
                assert_error(&e, CapacityOverflow, &words);
                let text = panics(|| big.alloc_raw(size, align));
                assert!(text.contains("overflows isize"), "{text}");
            }
        }
        // `isize::MAX` itself passes the size check and is simply too big.
        let e = big.try_alloc_raw(isize::MAX as usize, 1).unwrap_err();
        assert_error(&e, AllocErrorKind::OutOfMemory, &["out of memory"]);

        // Slices whose byte size overflows: the initialiser is never called.
        let words = ["size overflows isize", "\"big\""];
        for len in [isize::MAX as usize / 8 + 1, usize::MAX / 2, usize::MAX] {
            let e = big.try_alloc_slice_fill_with(len, |_| -> u64 { unreachable!() });
            assert_error(&e.unwrap_err(), CapacityOverflow, &words);
            let e = big.try_alloc_slice_fill_with(len, |_| -> Item { unreachable!() });
            assert_error(&e.unwrap_err(), CapacityOverflow, &words);
            let text = panics(|| big.alloc_slice_fill_with(len, |_| -> Item { unreachable!() }));
            assert!(text.contains("overflows isize"), "{text}");
        }
        assert_eq!(big.used(), used, "a refused request takes nothing");
        assert_eq!((item.id, ledger.made()), (0, 1));
        assert_scope_usable(big);
    });
    ledger.assert_each_dropped_once();
}

// ----- pool, dense pool and store maximums -----

#[test]
fn pool_dense_pool_and_store_sizes_over_their_maximums_are_too_many_slots() {
    use AllocErrorKind::TooManySlots;
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let item = level.new_object(ledger.item());
        let used = level.used();
        let words = ["too many slots", "16777216 slots", "in scope \"level\""];
        // Each message names the container and the count it was given, says the count
        // overflows the index, and talks about nothing else (no bytes, no other kind).
        let names_only = |e: &AllocError, container: &str, count: usize| {
            let text = e.to_string();
            assert!(text.contains(&format!("{container} ")), "{text}");
            assert!(text.contains(&format!(" {count} overflows its ")), "{text}");
            assert!(!text.contains("bytes"), "{text}");
            let store = container.starts_with("Store");
            assert_eq!(text.to_lowercase().contains("store"), store, "{text}");
        };
        for capacity in [MAX_POOL_CAPACITY + 1, MAX_POOL_CAPACITY * 2, usize::MAX] {
            let e = level.try_new_pool::<Item>(capacity).unwrap_err();
            assert_error(&e, TooManySlots, &words);
            names_only(&e, "Pool<Item> capacity", capacity);
            let e = level
                .try_new_pool_with_shards::<u8>(capacity, 1)
                .unwrap_err();
            assert_error(&e, TooManySlots, &words);
            names_only(&e, "Pool<u8> capacity", capacity);
            let e = level.try_new_store::<Item>(8, capacity).unwrap_err();
            assert_error(&e, TooManySlots, &["16777216 versions", "\"level\""]);
            names_only(&e, "Store<Item> max_versions", capacity);
        }
        let e = level.try_new_pool::<u64>(usize::MAX).unwrap_err();
        assert_eq!(
            e.to_string(),
            "scope-stack: too many slots in scope \"level\": Pool<u64> capacity \
             18446744073709551615 overflows its 24-bit slot index (at most 16777216 slots)"
        );
        for capacity in [MAX_DENSE_POOL_CAPACITY + 1, usize::MAX] {
            let e = level.try_new_dense_pool::<Item>(capacity).unwrap_err();
            assert_error(&e, TooManySlots, &words);
            names_only(&e, "DensePool<Item> capacity", capacity);
        }
        for objects in [MAX_STORE_OBJECTS + 1, usize::MAX] {
            let e = level.try_new_store::<Item>(objects, 8).unwrap_err();
            let words = ["too many slots", "at most 4294967295 objects"];
            assert_error(&e, TooManySlots, &words);
            assert_error(&e, TooManySlots, &["in scope \"level\""]);
            names_only(&e, "Store<Item> max_objects", objects);
        }
        let text = panics(|| level.new_pool::<Item>(MAX_POOL_CAPACITY + 1));
        assert!(text.contains("16777216 slots"), "{text}");
        let text = panics(|| level.new_dense_pool::<Item>(MAX_DENSE_POOL_CAPACITY + 1));
        assert!(text.contains("16777216 slots"), "{text}");
        let text = panics(|| level.new_store::<Item>(MAX_STORE_OBJECTS + 1, 1));
        assert!(text.contains("4294967295 objects"), "{text}");
        assert_eq!(level.used(), used, "a refused request takes nothing");

        // The maximums themselves pass the check; this block is just too small.
        let e = level.try_new_pool::<u8>(MAX_POOL_CAPACITY).unwrap_err();
        assert_error(&e, AllocErrorKind::OutOfMemory, &["out of memory"]);
        let e = level
            .try_new_dense_pool::<u8>(MAX_DENSE_POOL_CAPACITY)
            .unwrap_err();
        assert_error(&e, AllocErrorKind::OutOfMemory, &["out of memory"]);
        assert_eq!(level.used(), used);

        let pool = level.new_pool::<Item>(2);
        let h = pool.insert(ledger.item()).unwrap().into_handle();
        assert_eq!((item.id, pool.get(h).unwrap().id), (0, 1));
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn pool_shard_counts_of_zero_and_above_the_maximum_are_invalid() {
    use AllocErrorKind::InvalidShardCount;
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 18).unwrap();
    memory.scope("level", |level| {
        let item = level.new_object(ledger.item());
        let used = level.used();
        let words = ["invalid pool shard count", "MAX_POOL_SHARDS", "\"level\""];
        for shards in [0, MAX_POOL_SHARDS + 1, MAX_POOL_SHARDS * 2, usize::MAX] {
            for capacity in [1, 64, MAX_POOL_CAPACITY] {
                let e = level
                    .try_new_pool_with_shards::<Item>(capacity, shards)
                    .unwrap_err();
                assert_error(&e, InvalidShardCount, &words);
            }
            let text = panics(|| level.new_pool_with_shards::<Item>(8, shards));
            assert!(text.contains("invalid pool shard count"), "{text}");
        }
        assert_eq!(level.used(), used, "a refused request takes nothing");

        // The bounds themselves are fine.
        let one = level.try_new_pool_with_shards::<Item>(4, 1).unwrap();
        assert_eq!(one.shard_count(), 1);
        let most = level
            .try_new_pool_with_shards::<u8>(MAX_POOL_SHARDS, MAX_POOL_SHARDS)
            .unwrap();
        assert_eq!(most.shard_count(), MAX_POOL_SHARDS);
        let h = one.insert(ledger.item()).unwrap().into_handle();
        assert_eq!((item.id, one.get(h).unwrap().id), (0, 1));
        // Any shard number is a fine hint for `insert_in_shard`.
        let four = level.new_pool_with_shards::<Item>(8, 4);
        for shard in [4, 255, usize::MAX] {
            let item = ledger.item();
            let id = item.id;
            let h = four.insert_in_shard(shard, item).unwrap().into_handle();
            assert_eq!(four.get(h).map(|i| i.id), Some(id));
        }
        assert_eq!(four.len(), 3);
    });
    ledger.assert_each_dropped_once();
}

// ----- stale, foreign and reloaded handles -----

#[test]
fn stale_foreign_and_reloaded_pool_handles_find_nothing() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let from_old_level: Handle<Item> = memory.scope("level", |level| {
        let a = level.new_pool::<Item>(4);
        let b = level.new_pool::<Item>(4);
        let ha = a.insert(ledger.item()).unwrap().into_handle();
        let hb = b.insert(ledger.item()).unwrap().into_handle();
        assert_eq!(ha.index(), hb.index());

        // A handle of another pool of the same type.
        assert!(b.get(ha).is_none());
        assert!(b.get_mut(ha).is_none());
        assert!(b.remove(ha).is_none());
        assert!(a.get(hb).is_none());
        assert_eq!((a.get(ha).unwrap().id, b.get(hb).unwrap().id), (0, 1));

        // A stale handle, also once its slot holds a new object.
        drop(a.remove(ha).unwrap());
        for _ in 0..ROUNDS {
            let h = a.insert(ledger.item()).unwrap().into_handle();
            assert_eq!(h.index(), ha.index());
            assert!(a.get(ha).is_none());
            assert!(a.get_mut(ha).is_none());
            assert!(a.remove(ha).is_none());
            assert!(a.get(h).is_some());
            drop(a.remove(h).unwrap());
            assert!(a.get(h).is_none());
        }
        // Forged handles.
        for bits in [0, u64::MAX, ha.to_bits() ^ (1 << 32), hb.to_bits() + 1] {
            assert!(a.get(Handle::from_bits(bits)).is_none());
            assert!(a.remove(Handle::from_bits(bits)).is_none());
        }
        assert_eq!((a.len(), b.len()), (0, 1));
        assert_eq!(ledger.live(), 1);
        let kept = a.insert(ledger.item()).unwrap().into_handle();
        assert_eq!(a.get(kept).map(|i| i.id), Some(ROUNDS + 2));
        kept
    });
    assert_eq!(ledger.live(), 0);

    // The level is loaded again and its pool carved again, in the same memory.
    memory.scope("level", |level| {
        let a = level.new_pool::<Item>(4);
        let h = a.insert(ledger.item()).unwrap().into_handle();
        assert_eq!(h.index(), from_old_level.index());
        assert!(a.get(from_old_level).is_none());
        assert!(a.get_mut(from_old_level).is_none());
        assert!(a.remove(from_old_level).is_none());
        assert_eq!(a.len(), 1);
        assert!(a.get(h).is_some());
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn stale_foreign_and_reloaded_dense_pool_handles_find_nothing() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let from_old_level: DenseHandle<Item> = memory.scope("level", |level| {
        let a = level.new_dense_pool::<Item>(4);
        let b = level.new_dense_pool::<Item>(4);
        let ha = a.insert(ledger.item()).unwrap();
        let hb = b.insert(ledger.item()).unwrap();
        assert_eq!(ha.index(), hb.index());

        // A handle of another pool of the same type.
        assert!(!b.contains(ha));
        assert!(b.get(ha).is_none());
        assert!(b.get_mut(ha).is_none());
        assert!(b.remove(ha).is_none());
        assert!(a.get(hb).is_none());
        assert!(panics(|| &b[ha]).contains("stale or foreign handle"));
        assert_eq!((a[ha].id, b[hb].id), (0, 1));

        // A stale handle, also once its slot holds a new object.
        drop(a.remove(ha).unwrap());
        for _ in 0..ROUNDS {
            let h = a.insert(ledger.item()).unwrap();
            assert_eq!(h.index(), ha.index());
            assert!(!a.contains(ha));
            assert!(a.get(ha).is_none());
            assert!(a.get_mut(ha).is_none());
            assert!(a.remove(ha).is_none());
            drop(a.remove(h).unwrap());
        }
        for bits in [0, u64::MAX, ha.to_bits() ^ (1 << 33), hb.to_bits() + 1] {
            assert!(a.get(DenseHandle::from_bits(bits)).is_none());
            assert!(a.remove(DenseHandle::from_bits(bits)).is_none());
        }
        assert!(panics(|| &a[ha]).contains("stale or foreign handle"));
        assert_eq!((a.len(), b.len()), (0, 1));
        assert_eq!(ledger.live(), 1);
        a.insert(ledger.item()).unwrap()
    });
    assert_eq!(ledger.live(), 0);

    memory.scope("level", |level| {
        let a = level.new_dense_pool::<Item>(4);
        let h = a.insert(ledger.item()).unwrap();
        assert_eq!(h.index(), from_old_level.index());
        assert!(!a.contains(from_old_level));
        assert!(a.get(from_old_level).is_none());
        assert!(a.get_mut(from_old_level).is_none());
        assert!(a.remove(from_old_level).is_none());
        assert_eq!(a.len(), 1);
        assert!(a.get(h).is_some());
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn stale_store_ids_find_nothing() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let store = level.new_store::<Item>(2, 8);
        let first = store.create(ledger.item()).unwrap();
        let mut stale = first;
        for _ in 0..ROUNDS {
            assert!(store.destroy(stale));
            store.end_frame();
            let next = store.create(ledger.item()).unwrap();
            assert_eq!(next.index(), stale.index());
            for old in [first, stale] {
                assert!(store.read(old).is_none());
                assert!(store.write(old).is_none());
                assert!(store.pin(old).is_none());
                assert!(!store.destroy(old));
            }
            stale = next;
        }
        for raw in [u64::MAX, stale.to_u64() + 1, stale.to_u64() ^ (1 << 40)] {
            assert!(store.read(Id::from_u64(raw)).is_none());
            assert!(!store.destroy(Id::from_u64(raw)));
        }
        assert_eq!(store.versions_in_use(), 1);
        assert!(store.read(stale).is_some());
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn foreign_and_reloaded_store_ids_find_nothing() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 17).unwrap();
    let from_old_level: Id = memory.scope("level", |level| {
        let a = level.new_store::<Item>(4, 8);
        let b = level.new_store::<Item>(4, 8);
        let ia = a.create(ledger.item()).unwrap();
        let ib = b.create(ledger.item()).unwrap();
        assert_eq!(ia.index(), ib.index());
        // An id of another store of the same type.
        assert!(b.read(ia).is_none());
        assert!(b.write(ia).is_none());
        assert!(b.pin(ia).is_none());
        assert!(!b.destroy(ia));
        assert!(a.read(ib).is_none());
        assert_eq!((a.read(ia).unwrap().id, b.read(ib).unwrap().id), (0, 1));
        ia
    });
    assert_eq!(ledger.live(), 0);

    // The level is loaded again and its store carved again, in the same memory.
    memory.scope("level", |level| {
        let a = level.new_store::<Item>(4, 8);
        let id = a.create(ledger.item()).unwrap();
        assert_eq!(id.index(), from_old_level.index());
        assert!(a.read(from_old_level).is_none());
        assert!(a.write(from_old_level).is_none());
        assert!(a.pin(from_old_level).is_none());
        assert!(!a.destroy(from_old_level));
        assert_eq!(a.read(id).unwrap().id, 2);
    });
    ledger.assert_each_dropped_once();
}

// ----- out of memory at the exact boundary -----

/// How an allocation form failed.
enum Failed {
    /// A `try_` form's error.
    Error(AllocError),
    /// A panicking form's message.
    Panic(String),
}

/// One allocation form: it places something (objects it makes come from the ledger).
type Form = fn(&ScopeStack<'_>, &Arc<Ledger>) -> Result<(), Failed>;

/// Runs a panicking form, turning its panic into a [`Failed::Panic`].
fn catch(f: impl FnOnce()) -> Result<(), Failed> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| Failed::Panic(panic_text(p)))
}

/// A form with its name, and whether a failure can keep part of what it carved (the
/// pools' arrays, as their docs say).
fn form(name: &'static str, f: Form, keeps_part: bool) -> (&'static str, Form, bool) {
    (name, f, keeps_part)
}

/// A `try_` form's outcome, with whatever it placed let go of (it stays in the scope).
fn placed<T>(r: Result<T, AllocError>) -> Result<(), Failed> {
    r.map(|_| ()).map_err(Failed::Error)
}

/// Every allocation form.
fn forms() -> Vec<(&'static str, Form, bool)> {
    vec![
        form(
            "try_alloc_raw",
            |s, _| placed(s.try_alloc_raw(100, 8)),
            false,
        ),
        form("alloc_raw", |s, _| catch(|| _ = s.alloc_raw(100, 8)), false),
        form(
            "try_alloc_layout",
            |s, _| placed(s.try_alloc_layout(Layout::new::<[u128; 5]>())),
            false,
        ),
        form(
            "alloc_layout",
            |s, _| catch(|| _ = s.alloc_layout(Layout::new::<[u128; 5]>())),
            false,
        ),
        form(
            "try_new_pod",
            |s, _| placed(s.try_new_pod([7u8; 37]).map_err(|e| e.error)),
            false,
        ),
        form("new_pod", |s, _| catch(|| _ = s.new_pod([7u64; 5])), false),
        form(
            "try_new_object",
            // On failure the value comes back inside the error and is dropped with it.
            |s, l| placed(s.try_new_object(l.item()).map_err(|e| e.error)),
            false,
        ),
        form(
            "new_object",
            |s, l| catch(|| _ = s.new_object(l.item())),
            false,
        ),
        form(
            "try_new_object_unchecked",
            // SAFETY: an `Item` borrows nothing, so its destructor reads no scope data.
            |s, l| placed(unsafe { s.try_new_object_unchecked(l.item()) }.map_err(|e| e.error)),
            false,
        ),
        form(
            "try_alloc_slice_copy",
            |s, _| placed(s.try_alloc_slice_copy(&[3u32; 9])),
            false,
        ),
        form(
            "alloc_slice_copy",
            |s, _| catch(|| _ = s.alloc_slice_copy(&[3u16; 11])),
            false,
        ),
        form(
            "try_alloc_slice_clone",
            |s, l| placed(s.try_alloc_slice_clone(&[l.item(), l.item(), l.item()])),
            false,
        ),
        form(
            "alloc_slice_clone",
            |s, l| {
                let src = [l.item(), l.item()];
                catch(|| _ = s.alloc_slice_clone(&src))
            },
            false,
        ),
        form(
            "try_alloc_slice_fill_with",
            |s, l| placed(s.try_alloc_slice_fill_with(4, |_| l.item())),
            false,
        ),
        form(
            "alloc_slice_fill_with",
            |s, _| catch(|| _ = s.alloc_slice_fill_with(7, |i| i as u16)),
            false,
        ),
        form(
            "try_alloc_str",
            |s, _| placed(s.try_alloc_str("frogs and toads")),
            false,
        ),
        form(
            "alloc_str",
            |s, _| catch(|| _ = s.alloc_str("toads")),
            false,
        ),
        form(
            "try_alloc_fmt",
            |s, _| placed(s.try_alloc_fmt(format_args!("{}-{}", 12345, "frog"))),
            false,
        ),
        form(
            "alloc_fmt",
            |s, _| catch(|| _ = s.alloc_fmt(format_args!("level {}.map", 42))),
            false,
        ),
        form(
            "try_new_pool",
            |s, l| {
                let pool = s.try_new_pool::<Item>(5).map_err(Failed::Error)?;
                pool.insert(l.item()).unwrap().into_handle();
                Ok(())
            },
            true,
        ),
        form(
            "new_pool",
            |s, l| {
                catch(|| {
                    s.new_pool::<Item>(3)
                        .insert(l.item())
                        .unwrap()
                        .into_handle();
                })
            },
            true,
        ),
        form(
            "try_new_pool_with_shards",
            |s, _| placed(s.try_new_pool_with_shards::<u32>(6, 2)),
            true,
        ),
        form(
            "try_new_dense_pool",
            |s, l| {
                let pool = s.try_new_dense_pool::<Item>(5).map_err(Failed::Error)?;
                pool.insert(l.item()).unwrap();
                Ok(())
            },
            true,
        ),
        form(
            "new_dense_pool",
            |s, _| catch(|| _ = s.new_dense_pool::<u64>(9)),
            true,
        ),
        form(
            "try_new_store",
            |s, l| {
                let store = s.try_new_store::<Item>(3, 5).map_err(Failed::Error)?;
                store.create(l.item()).unwrap();
                Ok(())
            },
            true,
        ),
        form(
            "new_store",
            |s, _| catch(|| _ = s.new_store::<u32>(2, 2)),
            true,
        ),
    ]
}

/// The failure is out-of-memory in scope `scope`, with the memory map for a panic.
#[track_caller]
fn assert_out_of_memory(name: &str, failed: Failed, scope: &str) {
    match failed {
        Failed::Error(e) => {
            let quoted = format!("in scope \"{scope}\"");
            assert_error(&e, AllocErrorKind::OutOfMemory, &["out of memory", &quoted]);
        }
        Failed::Panic(text) => {
            assert!(
                text.starts_with("scope-stack: out of memory"),
                "{name}: {text}"
            );
            assert!(text.contains("memory map:"), "{name}: {text}");
        }
    }
}

/// Whether `form` succeeds in a fresh block of `capacity` bytes.
fn fits(form: Form, ledger: &Arc<Ledger>, capacity: usize) -> bool {
    let mut memory = LinearAllocator::with_capacity(capacity).unwrap();
    memory.scope("trial", |s| form(s, ledger).is_ok())
}

#[test]
fn every_allocation_form_fails_with_out_of_memory_one_byte_past_the_end() {
    for (name, form, keeps_part) in forms() {
        let ledger = Ledger::new();
        // The smallest block the form fits in (a block starts MAX_ALIGN-aligned). It is
        // what the form takes, except for pools, whose entry for reports is left out
        // when only it does not fit.
        let took = {
            let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
            memory.scope("measure", |s| {
                assert!(form(s, &ledger).is_ok(), "{name}");
                s.used()
            })
        };
        let (mut low, mut need) = (0, took);
        while need - low > 1 {
            let mid = low + (need - low) / 2;
            if fits(form, &ledger, mid) {
                need = mid;
            } else {
                low = mid;
            }
        }
        assert!(need > 1, "{name}");
        if !keeps_part {
            assert_eq!(need, took, "{name}");
        }

        // Exactly enough: it fits, and then not one more byte does.
        let mut memory = LinearAllocator::with_capacity(need).unwrap();
        memory.scope("exact", |s| {
            assert!(form(s, &ledger).is_ok(), "{name}");
            assert_eq!((s.used(), s.allocator().remaining()), (need, 0), "{name}");
            let e = s.try_alloc_raw(1, 1).unwrap_err();
            let remaining = format!("0 of {need} bytes remaining");
            let words = ["out of memory", "in scope \"exact\"", remaining.as_str()];
            assert_error(&e, AllocErrorKind::OutOfMemory, &words);
            assert_eq!((e.size(), e.remaining(), e.capacity()), (1, 0, need));
            let failed = form(s, &ledger).expect_err(name);
            assert_out_of_memory(name, failed, "exact");
            // What the first call made is intact, and the scope goes on working.
            assert!(s.try_alloc_raw(0, 1).is_ok(), "{name}");
            s.scope("child", |child| {
                assert_eq!(child.used(), 0);
                let e = child.try_new_pod(1u8).unwrap_err().error;
                assert_error(&e, AllocErrorKind::OutOfMemory, &["in scope \"child\""]);
            });
            assert_eq!(s.used(), need, "{name}");
        });
        assert_eq!(memory.used(), 0, "{name}");

        // One byte short: it fails, and the scope still has the rest.
        let mut memory = LinearAllocator::with_capacity(need - 1).unwrap();
        memory.scope("short", |s| {
            let failed = form(s, &ledger).expect_err(name);
            assert_out_of_memory(name, failed, "short");
            if !keeps_part {
                assert_eq!(s.used(), 0, "{name}: a failed request takes nothing");
            }
            assert_scope_usable(s);
        });
        // And a second block of the right size still takes it whole.
        let mut memory = LinearAllocator::with_capacity(need).unwrap();
        memory.scope("again", |s| assert!(form(s, &ledger).is_ok(), "{name}"));
        ledger.assert_each_dropped_once();
    }
}

#[test]
fn collections_in_a_full_scope_are_refused_and_the_scope_goes_on() {
    use allocator_api2::alloc::Allocator;
    use allocator_api2::vec::Vec;
    let mut memory = LinearAllocator::with_capacity(64).unwrap();
    memory.scope("collections", |s| {
        let scope: &ScopeStack<'_> = s;
        let mut v: Vec<u64, _> = Vec::new_in(scope);
        assert!(v.try_reserve_exact(9).is_err(), "72 bytes do not fit in 64");
        v.try_reserve_exact(8).unwrap();
        v.extend([1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(scope.allocator().remaining(), 0);
        assert!(scope.allocate(Layout::new::<u8>()).is_err());
        assert!(v.try_reserve(1).is_err());
        assert_eq!(v.iter().sum::<u64>(), 36, "the full vector is intact");
        drop(v); // the newest allocation: its bytes come back
        assert_eq!(scope.used(), 0);
        let p = scope.allocate(Layout::new::<[u64; 8]>()).unwrap();
        assert_eq!(p.len(), 64);
    });
}

// ----- panics in user code -----

#[test]
fn a_panicking_drop_during_a_pool_unwind_drops_every_other_object_once() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let text = panics(|| {
        memory.scope("level", |level| {
            level.new_object(ledger.item()); // 0, finalized after the pool
            let pool = level.new_pool::<Item>(8);
            for _ in 0..4 {
                pool.insert(ledger.item()).unwrap().into_handle(); // 1..=4
            }
            std::mem::forget(pool.insert(ledger.item()).unwrap()); // 5: a leaked box
            let boxed = pool.insert(ledger.item()).unwrap(); // 6: dropped by its box
            assert_eq!(boxed.id, 6);
            drop(boxed);
            level.new_object(ledger.item()); // 7, finalized before the pool
            ledger.panic_when_dropping(2);
        })
    });
    assert!(text.contains("drop of item 2 panics"), "{text}");
    ledger.assert_each_dropped_once();
    assert_eq!(memory.used(), 0);
    memory.scope("level", |level| {
        let pool = level.new_pool::<Item>(8);
        let h = pool.insert(ledger.item()).unwrap().into_handle();
        assert_eq!(pool.get(h).unwrap().id, 8);
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn a_panicking_drop_during_a_dense_pool_unwind_drops_every_other_object_once() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let text = panics(|| {
        memory.scope("level", |level| {
            level.new_object(ledger.item()); // 0
            let pool = level.new_dense_pool::<Item>(8);
            let handles: Vec<_> = (0..5)
                .map(|_| pool.insert(ledger.item()).unwrap())
                .collect();
            drop(pool.remove(handles[1]).unwrap()); // 2, dropped here
            level.new_object(ledger.item()); // 6
            ledger.panic_when_dropping(3);
        })
    });
    assert!(text.contains("drop of item 3 panics"), "{text}");
    ledger.assert_each_dropped_once();
    assert_eq!(memory.used(), 0);

    // A panicking drop in `clear` empties the pool too, and the pool goes on working.
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<Item>(4);
        let first = ledger.made() as u32;
        for _ in 0..4 {
            pool.insert(ledger.item()).unwrap();
        }
        ledger.panic_when_dropping(first + 1);
        let text = panics(|| pool.clear());
        assert!(text.contains("panics"), "{text}");
        assert!(pool.is_empty());
        assert_eq!(ledger.live(), 0);
        let h = pool.insert(ledger.item()).unwrap();
        assert_eq!(pool[h].id, first + 4);
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn a_panicking_drop_during_a_store_unwind_drops_every_other_version_once() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 17).unwrap();
    let text = panics(|| {
        memory.scope("level", |level| {
            level.new_object(ledger.item()); // 0
            let store = level.new_store::<Item>(8, 16);
            let a = store.create(ledger.item()).unwrap(); // 1
            let b = store.create(ledger.item()).unwrap(); // 2
            store.create(ledger.item()).unwrap(); // 3
            let draft = store.write(a).unwrap(); // 4: a clone of 1
            store.commit(draft).ok().unwrap(); // 1 is retired, not yet freed
            std::mem::forget(store.write(b).unwrap()); // 5: a leaked draft
            std::mem::forget(store.pin(b).unwrap()); // 2 stays pinned forever
            assert!(store.destroy(b)); // 2 is retired as well
            let unused = store.write(a).unwrap(); // 6, dropped with its draft
            drop(unused);
            level.new_object(ledger.item()); // 7
            ledger.panic_when_dropping(4);
        })
    });
    assert!(text.contains("drop of item 4 panics"), "{text}");
    ledger.assert_each_dropped_once();
    assert_eq!(memory.used(), 0);
}

#[test]
fn a_panicking_drop_in_end_frame_leaves_a_working_store() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 17).unwrap();
    memory.scope("level", |level| {
        let store = level.new_store::<Item>(8, 16);
        let id = store.create(ledger.item()).unwrap(); // 0
        for _ in 0..3 {
            let draft = store.write(id).unwrap(); // 1, 2, 3
            store.commit(draft).ok().unwrap();
        }
        let gone = store.create(ledger.item()).unwrap(); // 4
        assert!(store.destroy(gone));
        ledger.panic_when_dropping(1);
        let text = panics(|| store.end_frame());
        assert!(text.contains("drop of item 1 panics"), "{text}");
        // The store goes on: reads, writes, commits and later frames all work.
        assert_eq!(store.read(id).unwrap().id, 3);
        assert!(store.read(gone).is_none());
        let mut draft = store.write(id).unwrap(); // 5
        assert_eq!(draft.id(), id);
        *draft = ledger.item(); // 6 (5 is dropped here)
        store.commit(draft).ok().unwrap();
        assert_eq!(store.read(id).unwrap().id, 6);
        store.end_frame();
        let other = store.create(ledger.item()).unwrap(); // 7
        assert_eq!(store.read(other).unwrap().id, 7);
    });
    // What the panicking frame left behind is dropped with the store, once.
    ledger.assert_each_dropped_once();
}

#[test]
fn a_panicking_clone_in_alloc_slice_clone_drops_the_clones_made_so_far() {
    let ledger = Ledger::new();
    let src: Vec<Item> = (0..5).map(|_| ledger.item()).collect();
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |level| {
        let kept = level.new_object(ledger.item()); // 5
        let used = level.used();
        for clones in 0..src.len() as isize {
            ledger.allow_clones(clones);
            let text = panics(|| level.alloc_slice_clone(&src));
            assert!(text.contains("clone of item"), "{text}");
            assert_eq!(ledger.live(), 6, "the clones made so far are dropped");
            ledger.allow_clones(clones);
            let text = panics(|| level.try_alloc_slice_clone(&src));
            assert!(text.contains("clone of item"), "{text}");
            assert_eq!(ledger.live(), 6);
            assert_eq!(level.used(), used, "the slice's bytes come back");
        }
        ledger.allow_clones(-1);
        let copies = level.alloc_slice_clone(&src);
        assert_eq!(copies.len(), 5);
        assert_eq!(ledger.live(), 11);
        assert_eq!(kept.id, 5);
    });
    assert_eq!(ledger.live(), 5);
    drop(src);
    ledger.assert_each_dropped_once();
}

#[test]
fn a_panicking_clone_in_store_write_leaves_the_store_unchanged() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 17).unwrap();
    memory.scope("level", |level| {
        let store = level.new_store::<Item>(4, 4);
        let id = store.create(ledger.item()).unwrap(); // 0
        ledger.allow_clones(0);
        for _ in 0..ROUNDS {
            let text = panics(|| store.write(id));
            assert!(text.contains("clone of item 0 panics"), "{text}");
            assert_eq!(store.versions_in_use(), 1, "no version slot is lost");
            assert_eq!(store.read(id).unwrap().id, 0);
            assert_eq!(ledger.live(), 1);
        }
        ledger.allow_clones(-1);
        let draft = store.write(id).unwrap(); // 1
        store.commit(draft).ok().unwrap();
        assert_eq!(store.read(id).unwrap().id, 1);
        assert_eq!(store.end_frame(), 1);
        assert_eq!(store.versions_in_use(), 1);
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn a_panicking_key_in_insert_evicting_leaves_the_pool_unchanged() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(1 << 14).unwrap();
    memory.scope("audio", |audio| {
        let pool = audio.new_dense_pool::<Item>(4);
        let handles: Vec<_> = (0..4)
            .map(|_| pool.insert(ledger.item()).unwrap())
            .collect();
        for calls_before_panic in 0..4 {
            let mut calls = 0;
            let text = panics(|| {
                pool.insert_evicting(ledger.item(), |item| {
                    if calls == calls_before_panic {
                        panic!("key of item {} panics", item.id);
                    }
                    calls += 1;
                    item.id
                })
            });
            assert!(text.contains("key of item"), "{text}");
            assert_eq!(pool.len(), 4);
            for (i, &h) in handles.iter().enumerate() {
                assert_eq!(pool.get(h).map(|item| item.id), Some(i as u32));
            }
            assert_eq!(ledger.live(), 4, "the new value was dropped");
        }
        // A key that does not panic evicts the smallest, once.
        let h = pool.insert_evicting(ledger.item(), |item| item.id);
        assert!(pool.get(handles[0]).is_none());
        assert_eq!(pool[h].id, 8);
        assert_eq!(ledger.live(), 4);
        // While the pool is not full, the key is never called.
        drop(pool.remove(h).unwrap());
        let h = pool.insert_evicting(ledger.item(), |_| -> u32 { unreachable!() });
        assert_eq!(pool[h].id, 9);
    });
    ledger.assert_each_dropped_once();
}

/// A `Display` that panics, fails or writes, as told.
enum Shown {
    Panics,
    Fails,
    Writes(&'static str),
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Panics => panic!("display panics"),
            Shown::Fails => Err(fmt::Error),
            Shown::Writes(s) => f.write_str(s),
        }
    }
}

#[test]
fn a_panicking_display_in_alloc_fmt_gives_everything_back() {
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("text", |s| {
        let item = s.new_object(ledger.item());
        let number = s.new_pod(7u32);
        let used = s.used();
        let remaining = s.allocator().remaining();
        let high = s.allocator().high_water_mark();
        for _ in 0..ROUNDS {
            let text = panics(|| s.alloc_fmt(format_args!("{}{}", "frog ", Shown::Panics)));
            assert_eq!(text, "display panics");
            let text = panics(|| s.try_alloc_fmt(format_args!("{}{}", 1, Shown::Panics)));
            assert_eq!(text, "display panics");
            assert_eq!((s.used(), s.allocator().remaining()), (used, remaining));
            assert_eq!(s.allocator().high_water_mark(), high);
        }
        // A `Display` that returns an error is a format error, not out of memory.
        let e = s
            .try_alloc_fmt(format_args!("{}{}", "frog ", Shown::Fails))
            .unwrap_err();
        let words = ["a formatting implementation returned an error", "\"text\""];
        assert_error(&e, AllocErrorKind::Format, &words);
        let text = panics(|| s.alloc_fmt(format_args!("{}", Shown::Fails)));
        assert!(
            text.contains("formatting implementation returned an error"),
            "{text}"
        );
        assert_eq!(s.used(), used);

        // The scope goes on: the text lands where the failed ones would have.
        let ok = s.alloc_fmt(format_args!("{}{}", "frog ", Shown::Writes("toad")));
        assert_eq!(ok, "frog toad");
        assert_eq!(s.used(), used + ok.len());
        assert_eq!((item.id, *number), (0, 7));
    });
    ledger.assert_each_dropped_once();
}

#[test]
fn a_zero_capacity_pool_dense_pool_or_store_says_the_capacity_is_zero() {
    /// Says that the capacity is 0, and nothing about bytes remaining.
    #[track_caller]
    fn says_zero(text: &str, what: &str) {
        for w in ["capacity", "0", "in scope \"level\"", what] {
            assert!(text.contains(w), "{text:?} does not say {w:?}");
        }
        assert!(!text.contains("remaining"), "{text:?}");
        assert!(!text.contains("requested"), "{text:?}");
    }
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        says_zero(&panics(|| level.new_pool::<u64>(0)), "a pool needs");
        says_zero(&panics(|| level.new_dense_pool::<u64>(0)), "a dense pool");
        says_zero(&panics(|| level.new_store::<u64>(0, 8)), "max_objects 0");
        says_zero(&panics(|| level.new_store::<u64>(8, 0)), "max_versions 0");
        says_zero(
            &panics(|| level.new_pool_with_shards::<u64>(0, 4)),
            "a pool",
        );

        let e = level.try_new_pool::<u64>(0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "scope-stack: invalid capacity in scope \"level\": \
             a pool needs at least one slot (capacity 0)"
        );
        assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
        let e = level.try_new_dense_pool::<u64>(0).unwrap_err();
        assert_error(
            &e,
            AllocErrorKind::InvalidCapacity,
            &["dense pool", "capacity 0"],
        );
        let e = level.try_new_store::<u64>(0, 0).unwrap_err();
        assert_error(&e, AllocErrorKind::InvalidCapacity, &["max_objects 0"]);
    });
    // A block's own zero capacity still reads as before.
    let e = LinearAllocator::with_capacity(0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "scope-stack: invalid capacity (must be greater than zero): asked for a block of 0 bytes"
    );
}

// ----- budgets larger than the parent's room -----

/// A budget larger than the room the parent has left is clamped to that room when the
/// scope opens, the same way for every kind of scope: a plain child, a child of a
/// scratch scope, and a concurrent scope. `budget()` reports the clamped figure, and a
/// request past it is refused by whatever really ends the room: the block (out of
/// memory) or a budgeted parent (its budget exceeded, naming it), never the clamped
/// scope.
#[test]
fn budgets_over_the_parents_room_are_clamped_for_every_scope_kind() {
    let bytes = |n| Layout::from_size_align(n, 1).unwrap();
    let ledger = Ledger::new();
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |level| {
        let item = level.new_object(ledger.item());
        level.alloc_raw(96, 1);
        let room = level.remaining();
        for asked in [room + 1, 1 << 40, usize::MAX] {
            // A plain child: the block ends the room.
            level.scope_with_budget("audio", asked, |audio| {
                assert_eq!((audio.budget(), audio.remaining()), (Some(room), room));
                let e = audio.try_alloc_raw(room + 1, 1).unwrap_err();
                assert_error(&e, AllocErrorKind::OutOfMemory, &["in scope \"audio\""]);
                assert_eq!((e.budget(), e.remaining()), (None, room));
                audio.alloc_raw(room, 1);
            });
            // A concurrent child: the same.
            level.scope_concurrent_with_budget("jobs", asked, |jobs| {
                assert_eq!(jobs.budget(), Some(room));
                let e = jobs.try_alloc_layout(bytes(room + 1)).unwrap_err();
                assert_error(&e, AllocErrorKind::OutOfMemory, &["in scope \"jobs\""]);
                assert_eq!(e.budget(), None);
                let report = jobs.report();
                let mine = report.scopes.iter().find(|s| s.name == "jobs").unwrap();
                assert_eq!(mine.budget, Some(room));
                assert_eq!(mine.concurrent.as_ref().unwrap().region_bytes, room);
            });
            // Inside a budgeted parent: the parent's budget ends the room, and the
            // error names the parent, not the clamped child.
            level.scope_with_budget("sound", 512, |sound| {
                sound.scope_with_budget("voice", asked, |voice| {
                    assert_eq!(voice.budget(), Some(512));
                    let e = voice.try_alloc_raw(513, 1).unwrap_err();
                    let words = ["\"sound\" (budget 512 bytes)", "513 bytes"];
                    assert_error(&e, AllocErrorKind::BudgetExceeded, &words);
                    assert_eq!(e.budget(), Some(512));
                });
                sound.scope_concurrent_with_budget("mix", asked, |mix| {
                    assert_eq!(mix.budget(), Some(512));
                    let e = mix.try_alloc_layout(bytes(513)).unwrap_err();
                    let words = ["\"sound\" (budget 512 bytes)", "513 bytes"];
                    assert_error(&e, AllocErrorKind::BudgetExceeded, &words);
                });
            });
            // A scratch scope's child: the arena ends the room.
            scope_stack::scratch(|s| {
                let room = s.remaining();
                s.scope_with_budget("tmp", asked.max(room + 1), |tmp| {
                    assert_eq!(tmp.budget(), Some(room));
                    let e = tmp.try_alloc_raw(room + 1, 1).unwrap_err();
                    assert_error(&e, AllocErrorKind::OutOfMemory, &["\"tmp\""]);
                });
            });
        }
        // A budget within the room still binds, and is named.
        level.scope_concurrent_with_budget("jobs", room - 1, |jobs| {
            assert_eq!(jobs.budget(), Some(room - 1));
            let e = jobs.try_alloc_layout(bytes(room)).unwrap_err();
            assert_error(&e, AllocErrorKind::BudgetExceeded, &["\"jobs\""]);
        });
        level.scope_with_budget("audio", room - 1, |audio| {
            let e = audio.try_alloc_raw(room, 1).unwrap_err();
            assert_error(&e, AllocErrorKind::BudgetExceeded, &["\"audio\""]);
        });
        assert_eq!(level.remaining(), room, "the parent's room is untouched");
        assert_eq!(item.id, 0);
        assert_scope_usable(level);
    });
    ledger.assert_each_dropped_once();
}
