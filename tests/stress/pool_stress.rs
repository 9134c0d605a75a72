//! Stress: many threads inserting and erasing on one pool, more than a million
//! operations in all. Checks that every live object's contents stay intact, that no
//! slot is ever held by two owners at once, and that `len` is right at the end.
//!
//! Under Miri the loops shrink to about 800 operations a run.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;

use scope_stack::{LinearAllocator, PoolBox};

const THREADS: usize = 4;

fn ops_per_thread(threads: usize) -> usize {
    if cfg!(miri) {
        // About 800 operations a run, at least 100 a thread: the 8-thread runs were a
        // third of the stress binary's time under Miri, where every thread is
        // interpreted in turn (the release run below is the one that counts).
        (800 / threads).clamp(100, 200)
    } else if cfg!(debug_assertions) {
        30_000 // `cargo test` in debug: the full count runs in release (CI)
    } else {
        300_000 // 4 threads: 1.2M inserts or erases per run
    }
}

/// An object whose contents can be checked: every field derives from `(owner, seq)`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Payload {
    owner: u32,
    seq: u32,
    check: u64,
    pad: [u64; 2],
}

impl Payload {
    fn new(owner: u32, seq: u32) -> Payload {
        let check = (owner as u64) << 32 ^ seq as u64 ^ 0x5EED_F00D_DEAD_B0B1;
        Payload {
            owner,
            seq,
            check,
            pad: [check.rotate_left(7), !check],
        }
    }

    fn assert_intact(&self, owner: u32, seq: u32) {
        assert_eq!(*self, Payload::new(owner, seq), "object corrupted");
    }
}

/// Small xorshift generator, so the test needs no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Maps an object's address to its slot, from the addresses of all slots.
struct SlotMap {
    base: usize,
    stride: usize,
    owners: Vec<AtomicU32>,
}

impl SlotMap {
    fn index(&self, p: &Payload) -> usize {
        let addr = p as *const Payload as usize;
        let i = (addr - self.base) / self.stride;
        assert_eq!(addr, self.base + i * self.stride);
        i
    }

    /// Claims the slot for `owner`; it must have been unclaimed.
    fn claim(&self, p: &Payload, owner: u32) {
        let prev = self.owners[self.index(p)].swap(owner + 1, Ordering::AcqRel);
        assert_eq!(prev, 0, "slot handed out twice");
    }

    fn unclaim(&self, p: &Payload, owner: u32) {
        let prev = self.owners[self.index(p)].swap(0, Ordering::AcqRel);
        assert_eq!(prev, owner + 1, "slot changed owner while held");
    }
}

/// A box in flight between threads in the cross-thread variant, with who made it.
type Handed<'p> = (PoolBox<'p, Payload>, u32, u32);

/// `threads` threads insert and erase on a pool of `capacity` slots in `shards`
/// shards, each holding up to `hold` objects (so together they can fill the pool and
/// must steal from each other's shards). With `cross`, a thread also hands some of its
/// boxes to a shared tray, and others free them: frees into a shard the freeing
/// thread does not live in.
fn stress(threads: usize, capacity: usize, shards: usize, hold: usize, cross: bool) {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("stress", |scope| {
        let pool = &*scope.new_pool_with_shards::<Payload>(capacity, shards);

        // Learn every slot's address by filling the pool once.
        let all: Vec<_> = (0..capacity)
            .map(|i| pool.insert(Payload::new(0, i as u32)).unwrap())
            .collect();
        assert!(pool.is_full());
        let mut addrs: Vec<usize> = all
            .iter()
            .map(|b| &**b as *const Payload as usize)
            .collect();
        drop(all);
        addrs.sort();
        let slots = SlotMap {
            base: addrs[0],
            stride: std::mem::size_of::<Payload>(),
            owners: (0..capacity).map(|_| AtomicU32::new(0)).collect(),
        };
        let slots = &slots;
        let full_seen = AtomicUsize::new(0);
        let tray: Mutex<Vec<Handed<'_>>> = Mutex::new(Vec::new());

        let leftovers: Vec<Vec<(PoolBox<'_, Payload>, u32)>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads as u32)
                .map(|t| {
                    let (full_seen, tray) = (&full_seen, &tray);
                    s.spawn(move || {
                        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((t as u64 + 1) * 0x1234_5678));
                        let mut held: Vec<(PoolBox<'_, Payload>, u32)> = Vec::new();
                        for seq in 0..ops_per_thread(threads) as u32 {
                            let roll = rng.next();
                            if cross && roll % 8 == 0 {
                                // Hand one over, or free one that another thread made.
                                let mut tray = tray.lock().unwrap();
                                if roll % 16 == 0 && !held.is_empty() {
                                    let (b, s) = held.swap_remove(0);
                                    tray.push((b, t, s));
                                } else if let Some((b, owner, s)) = tray.pop() {
                                    drop(tray);
                                    b.assert_intact(owner, s);
                                    slots.unclaim(&b, owner);
                                    drop(b);
                                }
                                continue;
                            }
                            // Inserts twice as often as erases, so the threads keep
                            // close to `hold` objects each and often fill the pool.
                            let insert =
                                held.is_empty() || (held.len() < hold && rng.next() % 3 != 0);
                            if insert {
                                match pool.insert(Payload::new(t, seq)) {
                                    Ok(mut b) => {
                                        slots.claim(&b, t);
                                        b.assert_intact(t, seq);
                                        b.pad[0] = b.pad[0].rotate_right(7).rotate_left(7);
                                        held.push((b, seq));
                                    }
                                    Err(v) => {
                                        v.assert_intact(t, seq);
                                        full_seen.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                            } else {
                                let i = rng.next() as usize % held.len();
                                let (b, s) = held.swap_remove(i);
                                b.assert_intact(t, s);
                                slots.unclaim(&b, t);
                                drop(b);
                            }
                            if seq % 64 == 0 {
                                for (b, s) in &held {
                                    b.assert_intact(t, *s);
                                }
                            }
                        }
                        held
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });

        let tray = tray.into_inner().unwrap();
        let live: usize = leftovers.iter().map(Vec::len).sum::<usize>() + tray.len();
        assert_eq!(pool.len(), live);
        assert!(pool.high_water_len() <= capacity);
        for (t, held) in leftovers.iter().enumerate() {
            for (b, s) in held {
                b.assert_intact(t as u32, *s);
            }
        }
        for (b, owner, s) in &tray {
            b.assert_intact(*owner, *s);
        }
        drop((leftovers, tray));
        assert_eq!(pool.len(), 0);
        assert!(!pool.is_full());
        // Every slot is free again: the pool can be filled exactly once more.
        let refill: Vec<_> = (0..capacity)
            .map(|i| pool.insert(Payload::new(9, i as u32)).unwrap())
            .collect();
        assert!(pool.is_full());
        assert!(pool.insert(Payload::new(9, 0)).is_err());
        drop(refill);
        if !cfg!(miri) {
            assert!(
                full_seen.load(Ordering::Relaxed) > 0,
                "the pool never filled up"
            );
        }
    });
}

#[test]
fn many_threads_insert_and_erase() {
    // 4 threads holding up to 24 each can fill the 64 slots (2 shards by default).
    stress(
        THREADS,
        64,
        scope_stack::Pool::<Payload>::default_shards(64),
        24,
        false,
    );
}

#[test]
fn more_threads_than_cores_steal_across_eight_shards() {
    // 8 threads, 8 shards of 8 slots, up to 12 held each: homes overflow all the time.
    stress(8, 64, 8, 12, false);
}

#[test]
fn boxes_freed_on_other_threads_go_home_to_their_shards() {
    stress(4, 64, 4, 24, true);
}

#[test]
fn one_shard_many_threads() {
    stress(2, 32, 1, 20, true);
}

// Every thread count (2, 4, 8) on the two-core CI machine, with and without frees from
// other threads.

#[test]
fn two_threads_two_shards_fill_and_steal() {
    stress(2, 32, 2, 20, false);
}

#[test]
fn two_threads_free_into_each_others_shards() {
    stress(2, 32, 2, 20, true);
}

#[test]
fn four_threads_one_shard() {
    stress(4, 32, 1, 12, false);
}

#[test]
fn eight_threads_free_into_each_others_shards() {
    // 8 threads on 2 cores: a thread is often preempted halfway through a free or steal.
    stress(8, 64, 8, 12, true);
}

#[test]
fn eight_threads_one_shard() {
    stress(8, 64, 1, 12, true);
}

#[test]
fn waiters_on_a_tiny_pool_all_finish() {
    let rounds = if cfg!(miri) {
        50
    } else if cfg!(debug_assertions) {
        10_000
    } else {
        100_000
    };
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("stress", |scope| {
        let pool = &*scope.new_pool::<Payload>(2);
        let done = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..THREADS as u32 {
                let done = &done;
                s.spawn(move || {
                    for seq in 0..rounds {
                        let b = pool.insert_wait(Payload::new(t, seq));
                        b.assert_intact(t, seq);
                        if seq % 16 == 0 {
                            std::thread::yield_now();
                        }
                        drop(b);
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(done.load(Ordering::Relaxed), THREADS * rounds as usize);
        assert_eq!(pool.len(), 0);
    });
}

#[test]
fn readers_see_pooled_objects_intact_while_writers_churn() {
    let rounds = if cfg!(miri) {
        100
    } else if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("stress", |scope| {
        let pool = scope.new_pool::<Payload>(32);
        let handles: Vec<_> = (0..16)
            .map(|i| pool.insert(Payload::new(7, i)).unwrap().into_handle())
            .collect();
        let shared = &*pool;
        std::thread::scope(|s| {
            for t in 0..2 {
                s.spawn(move || {
                    for seq in 0..rounds {
                        if let Ok(b) = shared.insert(Payload::new(t, seq)) {
                            b.assert_intact(t, seq);
                        }
                    }
                });
            }
            let handles = &handles;
            s.spawn(move || {
                for _ in 0..rounds / 16 {
                    for (i, h) in handles.iter().enumerate() {
                        shared.get(*h).unwrap().assert_intact(7, i as u32);
                    }
                }
            });
        });
        assert_eq!(pool.len(), 16);
        for (i, h) in handles.iter().enumerate() {
            pool.remove(*h).unwrap().assert_intact(7, i as u32);
        }
        assert!(pool.is_empty());
    });
}
