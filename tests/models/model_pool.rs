//! Model-based test of `Pool` on one thread: random sequences of inserts (home shard,
//! chosen shard, and the exclusive `insert_mut`/`insert_with_mut`), boxes kept, dropped
//! or turned into handles, lookups, changes and removals by handle (often stale, or from
//! another pool of the same type), iteration and `retain`, checked after every step
//! against a `HashMap` model. With one shard the high-water mark must equal the true
//! peak, and an exclusive insert must never take a never-used slot while a freed one
//! waits.
//!
//! A `PoolBox` borrows the pool, and `get_mut`/`remove`/`retain` need `&mut Pool`, so
//! the list runs in phases: operations on `&Pool` with a set of held boxes, then (when
//! an operation needs `&mut Pool`) each held box is either dropped or turned into a
//! handle, as chosen when it was made.
//!
//! Cases: `PROPTEST_CASES` (proptest reads it; 256 when unset), 6 under Miri. The
//! release CI step runs 10,000.

use std::cell::Cell;
use std::collections::HashMap;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::proptest_config::config;
use scope_stack::{Handle, LinearAllocator, Pool, PoolBox};

thread_local! {
    /// `Tracked` values alive on this thread (each proptest case runs on one thread).
    static ALIVE: Cell<isize> = const { Cell::new(0) };
}

/// A value that counts how many of its kind are alive, to catch leaks and double drops.
#[derive(Debug, PartialEq)]
struct Tracked(u32);

impl Tracked {
    fn new(v: u32) -> Tracked {
        ALIVE.with(|a| a.set(a.get() + 1));
        Tracked(v)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        ALIVE.with(|a| a.set(a.get() - 1));
    }
}

fn alive() -> isize {
    ALIVE.with(Cell::get)
}

/// What happens to a held box when the phase on `&Pool` ends.
#[derive(Clone, Copy, Debug)]
enum Fate {
    Drop,
    Handle,
}

#[derive(Clone, Debug)]
enum Op {
    /// Insert into the home shard; keep the box (until the phase ends) or turn it into
    /// a handle at once.
    Insert(u32, Option<Fate>),
    InsertInShard(usize, u32, Option<Fate>),
    /// Insert into the other pool and keep its handle (to try on this pool).
    InsertForeign(u32),
    /// Drop a held box now.
    DropBox(usize),
    /// Turn a held box into a handle now.
    BoxToHandle(usize),
    /// Look up a handle picked from every handle ever issued (often stale).
    Get(usize),
    GetForeign(usize),
    Iter,
    // Operations on `&mut Pool`: they end the phase.
    GetMut(usize, u32),
    Remove(usize),
    RemoveForeign(usize),
    RetainBelow(u32),
    IterMut(u32),
    /// Exclusive inserts (they return handles).
    InsertMut(u32),
    InsertWithMut(u32),
}

fn fate() -> impl Strategy<Value = Option<Fate>> {
    prop_oneof![Just(None), Just(Some(Fate::Drop)), Just(Some(Fate::Handle)),]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<u32>(), fate()).prop_map(|(v, f)| Op::Insert(v, f)),
        3 => (0usize..300, any::<u32>(), fate()).prop_map(|(s, v, f)| Op::InsertInShard(s, v, f)),
        1 => any::<u32>().prop_map(Op::InsertForeign),
        2 => any::<usize>().prop_map(Op::DropBox),
        1 => any::<usize>().prop_map(Op::BoxToHandle),
        3 => any::<usize>().prop_map(Op::Get),
        1 => any::<usize>().prop_map(Op::GetForeign),
        1 => Just(Op::Iter),
        1 => (any::<usize>(), any::<u32>()).prop_map(|(i, v)| Op::GetMut(i, v)),
        3 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::RemoveForeign),
        1 => any::<u32>().prop_map(Op::RetainBelow),
        1 => any::<u32>().prop_map(Op::IterMut),
        3 => any::<u32>().prop_map(Op::InsertMut),
        1 => any::<u32>().prop_map(Op::InsertWithMut),
    ]
}

fn needs_mut(op: &Op) -> bool {
    matches!(
        op,
        Op::GetMut(..)
            | Op::Remove(_)
            | Op::RemoveForeign(_)
            | Op::RetainBelow(_)
            | Op::IterMut(_)
            | Op::InsertMut(_)
            | Op::InsertWithMut(_)
    )
}

fn max_ops() -> usize {
    if cfg!(miri) {
        30
    } else {
        150
    }
}

struct Model {
    capacity: usize,
    /// Objects the pool owns, by handle.
    owned: HashMap<Handle<Tracked>, u32>,
    /// Every handle this pool ever issued.
    issued: Vec<Handle<Tracked>>,
    /// Handles of the other pool.
    foreign: Vec<Handle<Tracked>>,
    /// The most objects (boxed or owned) at once.
    peak: usize,
}

fn pick<T: Copy>(from: &[T], i: usize) -> Option<T> {
    (!from.is_empty()).then(|| from[i % from.len()])
}

/// Checks what holds after every step.
fn check(
    pool: &Pool<'_, Tracked>,
    other: &Pool<'_, Tracked>,
    m: &mut Model,
    boxes: &[(PoolBox<'_, Tracked>, u32, Fate)],
) -> Result<(), TestCaseError> {
    let len = m.owned.len() + boxes.len();
    m.peak = m.peak.max(len);
    prop_assert_eq!(pool.len(), len);
    prop_assert_eq!(pool.capacity(), m.capacity);
    prop_assert_eq!(pool.is_full(), len == m.capacity);
    prop_assert_eq!(pool.is_empty(), len == 0);
    let hw = pool.high_water_len();
    prop_assert!(
        hw >= m.peak && hw <= m.capacity,
        "high water {} vs peak {}",
        hw,
        m.peak
    );
    if pool.shard_count() == 1 {
        prop_assert_eq!(hw, m.peak, "one shard: the mark is exact");
    }
    for (b, v, _) in boxes {
        prop_assert_eq!(b.0, *v);
    }
    prop_assert_eq!(alive(), (len + other.len()) as isize, "leak or double drop");
    Ok(())
}

/// One insert: the result agrees with the model (refused only when full).
fn inserted<'p>(
    got: Result<PoolBox<'p, Tracked>, Tracked>,
    v: u32,
    fate: Option<Fate>,
    m: &mut Model,
    boxes: &mut Vec<(PoolBox<'p, Tracked>, u32, Fate)>,
) -> Result<(), TestCaseError> {
    let len = m.owned.len() + boxes.len();
    match got {
        Ok(b) => {
            prop_assert!(len < m.capacity);
            prop_assert_eq!(b.0, v);
            match fate {
                None => {
                    let h = b.into_handle();
                    prop_assert!(m.owned.insert(h, v).is_none(), "handle reused");
                    m.issued.push(h);
                }
                Some(f) => boxes.push((b, v, f)),
            }
        }
        Err(back) => {
            prop_assert_eq!(back.0, v);
            prop_assert_eq!(len, m.capacity, "refused an insert while not full");
        }
    }
    Ok(())
}

/// One exclusive insert: the result agrees with the model (refused only when full), and
/// it took a never-used slot only if no freed slot was left (`high_before` is the mark
/// before the insert).
fn inserted_mut(
    got: Result<Handle<Tracked>, u32>,
    v: u32,
    pool: &Pool<'_, Tracked>,
    high_before: usize,
    m: &mut Model,
) -> Result<(), TestCaseError> {
    let len = m.owned.len();
    match got {
        Ok(h) => {
            prop_assert!(len < m.capacity);
            prop_assert_eq!(pool.get(h).map(|t| t.0), Some(v));
            prop_assert!(m.owned.insert(h, v).is_none(), "handle reused");
            m.issued.push(h);
            let fresh = usize::from(len == high_before);
            prop_assert_eq!(
                pool.high_water_len(),
                high_before + fresh,
                "fresh slot taken early"
            );
        }
        Err(back) => {
            prop_assert_eq!(back, v);
            prop_assert_eq!(
                len,
                m.capacity,
                "refused an exclusive insert while not full"
            );
        }
    }
    Ok(())
}

/// Runs operations on `&Pool` from `*at` until one needs `&mut Pool` (or the list
/// ends), then settles the held boxes.
fn shared_phase(
    pool: &Pool<'_, Tracked>,
    other: &Pool<'_, Tracked>,
    ops: &[Op],
    at: &mut usize,
    m: &mut Model,
) -> Result<(), TestCaseError> {
    let mut boxes: Vec<(PoolBox<'_, Tracked>, u32, Fate)> = Vec::new();
    while *at < ops.len() && !needs_mut(&ops[*at]) {
        match &ops[*at] {
            Op::Insert(v, fate) => {
                let got = pool.insert(Tracked::new(*v));
                inserted(got, *v, *fate, m, &mut boxes)?;
            }
            Op::InsertInShard(shard, v, fate) => {
                let got = pool.insert_in_shard(*shard, Tracked::new(*v));
                inserted(got, *v, *fate, m, &mut boxes)?;
            }
            Op::InsertForeign(v) => {
                if let Ok(b) = other.insert(Tracked::new(*v)) {
                    m.foreign.push(b.into_handle());
                }
            }
            Op::DropBox(i) => {
                if !boxes.is_empty() {
                    let n = boxes.len();
                    drop(boxes.swap_remove(i % n));
                }
            }
            Op::BoxToHandle(i) => {
                if !boxes.is_empty() {
                    let n = boxes.len();
                    let (b, v, _) = boxes.swap_remove(i % n);
                    let h = b.into_handle();
                    prop_assert!(m.owned.insert(h, v).is_none(), "handle reused");
                    m.issued.push(h);
                }
            }
            Op::Get(i) => {
                if let Some(h) = pick(&m.issued, *i) {
                    prop_assert_eq!(pool.get(h).map(|t| t.0), m.owned.get(&h).copied());
                }
            }
            Op::GetForeign(i) => {
                if let Some(h) = pick(&m.foreign, *i) {
                    prop_assert!(pool.get(h).is_none());
                }
            }
            Op::Iter => {
                // Iteration yields the objects the pool owns (not the boxed ones).
                let mut seen: Vec<u32> = pool.iter().map(|(_, t)| t.0).collect();
                let mut want: Vec<u32> = m.owned.values().copied().collect();
                seen.sort_unstable();
                want.sort_unstable();
                prop_assert_eq!(seen, want);
                for (h, t) in pool.iter() {
                    prop_assert_eq!(m.owned.get(&h), Some(&t.0));
                }
            }
            _ => unreachable!(),
        }
        *at += 1;
        check(pool, other, m, &boxes)?;
    }
    for (b, v, fate) in boxes {
        match fate {
            Fate::Drop => drop(b),
            Fate::Handle => {
                let h = b.into_handle();
                prop_assert!(m.owned.insert(h, v).is_none(), "handle reused");
                m.issued.push(h);
            }
        }
    }
    check(pool, other, m, &[])
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn pool_behaves_like_a_hash_map(
        capacity in 1usize..40,
        shards in 1usize..9,
        ops in prop::collection::vec(op(), 0..max_ops()),
    ) {
        let start = alive();
        let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
        memory.scope("model", |scope| {
            let pool = scope.new_pool_with_shards::<Tracked>(capacity, shards);
            let other = scope.new_pool_with_shards::<Tracked>(capacity, shards);
            prop_assert!(pool.shard_count() >= 1 && pool.shard_count() <= shards.min(capacity));
            let mut m = Model {
                capacity,
                owned: HashMap::new(),
                issued: Vec::new(),
                foreign: Vec::new(),
                peak: 0,
            };
            let mut at = 0;
            while at < ops.len() {
                shared_phase(pool, other, &ops, &mut at, &mut m)?;
                let Some(op) = ops.get(at) else { break };
                at += 1;
                match op {
                    Op::GetMut(i, v) => {
                        if let Some(h) = pick(&m.issued, *i) {
                            match (pool.get_mut(h), m.owned.get_mut(&h)) {
                                (Some(a), Some(b)) => {
                                    a.0 = *v;
                                    *b = *v;
                                }
                                (None, None) => {}
                                (a, b) => prop_assert!(false, "get_mut {:?} vs {:?}", a, b),
                            }
                        }
                    }
                    Op::Remove(i) => {
                        if let Some(h) = pick(&m.issued, *i) {
                            prop_assert_eq!(pool.remove(h).map(|t| t.0), m.owned.remove(&h));
                        }
                    }
                    Op::RemoveForeign(i) => {
                        if let Some(h) = pick(&m.foreign, *i) {
                            prop_assert!(pool.remove(h).is_none());
                            prop_assert!(pool.get_mut(h).is_none());
                        }
                    }
                    Op::RetainBelow(limit) => {
                        let mut agree = true;
                        pool.retain(|h, t| {
                            agree &= m.owned.get(&h) == Some(&t.0);
                            t.0 < *limit
                        });
                        prop_assert!(agree, "retain saw an object the model does not own");
                        m.owned.retain(|_, v| *v < *limit);
                    }
                    Op::IterMut(add) => {
                        for (h, t) in pool.iter_mut() {
                            t.0 = t.0.wrapping_add(*add);
                            let v = m.owned.get_mut(&h).unwrap();
                            *v = v.wrapping_add(*add);
                        }
                    }
                    Op::InsertMut(v) => {
                        let high = pool.high_water_len();
                        let got = pool.insert_mut(Tracked::new(*v)).map_err(|t| t.0);
                        inserted_mut(got, *v, pool, high, &mut m)?;
                    }
                    Op::InsertWithMut(v) => {
                        let high = pool.high_water_len();
                        let got = pool
                            .insert_with_mut(|| Tracked::new(*v))
                            .map_err(|f| f().0);
                        inserted_mut(got, *v, pool, high, &mut m)?;
                    }
                    _ => unreachable!(),
                }
                check(pool, other, &mut m, &[])?;
            }
            // Every handle ever issued agrees with the model at the end.
            for h in &m.issued {
                prop_assert_eq!(pool.get(*h).map(|t| t.0), m.owned.get(h).copied());
            }
            Ok(())
        })?;
        prop_assert_eq!(alive(), start, "the scope's end dropped every object once");
    }
}
