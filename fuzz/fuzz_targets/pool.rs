//! `Pool` on one thread: inserts (home shard and chosen shard), boxes held, dropped or
//! turned into handles, lookups, changes and removals by handle (often stale, or from
//! another pool of the same type), iteration and `retain`, checked after every step
//! against a `HashMap` model. Operations that need `&mut Pool` first settle the held
//! boxes (each is dropped or turned into a handle, as chosen when it was made).
#![no_main]

use std::collections::HashMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scope_stack::{Handle, LinearAllocator, Pool, PoolBox};

#[derive(Arbitrary, Debug)]
struct Input {
    capacity: u8,
    shards: u8,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// Insert (into shard `Some(n)`, or the home shard); `keep`: hold the box (dropped
    /// at the phase's end when `drop_later`, else turned into a handle).
    Insert {
        shard: Option<u16>,
        value: u32,
        keep: bool,
        drop_later: bool,
    },
    InsertForeign(u32),
    DropBox(u16),
    BoxToHandle(u16),
    Get(u16),
    Iter,
    // These need `&mut Pool`.
    GetMut(u16, u32),
    Remove(u16),
    RemoveForeign(u16),
    RetainBelow(u32),
}

fn needs_mut(op: &Op) -> bool {
    matches!(
        op,
        Op::GetMut(..) | Op::Remove(_) | Op::RemoveForeign(_) | Op::RetainBelow(_)
    )
}

fn pick(from: &[Handle<u32>], i: u16) -> Option<Handle<u32>> {
    (!from.is_empty()).then(|| from[i as usize % from.len()])
}

struct Model {
    capacity: usize,
    owned: HashMap<Handle<u32>, u32>,
    issued: Vec<Handle<u32>>,
    foreign: Vec<Handle<u32>>,
    peak: usize,
}

fn check(pool: &Pool<'_, u32>, m: &mut Model, held: usize) {
    let len = m.owned.len() + held;
    m.peak = m.peak.max(len);
    assert_eq!(pool.len(), len);
    assert_eq!(pool.is_full(), len == m.capacity);
    let hw = pool.high_water_len();
    assert!(
        hw >= m.peak && hw <= m.capacity,
        "high water {hw}, peak {}",
        m.peak
    );
}

fn own(m: &mut Model, h: Handle<u32>, v: u32) {
    assert!(m.owned.insert(h, v).is_none(), "handle reused");
    m.issued.push(h);
}

fn shared_phase(
    pool: &Pool<'_, u32>,
    other: &Pool<'_, u32>,
    ops: &[Op],
    at: &mut usize,
    m: &mut Model,
) {
    let mut boxes: Vec<(PoolBox<'_, u32>, u32, bool)> = Vec::new();
    while *at < ops.len() && !needs_mut(&ops[*at]) {
        match ops[*at] {
            Op::Insert {
                shard,
                value,
                keep,
                drop_later,
            } => {
                let got = match shard {
                    Some(s) => pool.insert_in_shard(s as usize, value),
                    None => pool.insert(value),
                };
                let len = m.owned.len() + boxes.len();
                match got {
                    Ok(b) => {
                        assert!(len < m.capacity);
                        assert_eq!(*b, value);
                        if keep {
                            boxes.push((b, value, drop_later));
                        } else {
                            own(m, b.into_handle(), value);
                        }
                    }
                    Err(back) => {
                        assert_eq!(back, value);
                        assert_eq!(len, m.capacity, "refused while not full");
                    }
                }
            }
            Op::InsertForeign(v) => {
                if let Ok(b) = other.insert(v) {
                    m.foreign.push(b.into_handle());
                }
            }
            Op::DropBox(i) => {
                if !boxes.is_empty() {
                    let n = boxes.len();
                    drop(boxes.swap_remove(i as usize % n));
                }
            }
            Op::BoxToHandle(i) => {
                if !boxes.is_empty() {
                    let n = boxes.len();
                    let (b, v, _) = boxes.swap_remove(i as usize % n);
                    own(m, b.into_handle(), v);
                }
            }
            Op::Get(i) => {
                if let Some(h) = pick(&m.issued, i) {
                    assert_eq!(pool.get(h), m.owned.get(&h));
                }
                if let Some(h) = pick(&m.foreign, i) {
                    assert_eq!(pool.get(h), None);
                }
            }
            Op::Iter => {
                let mut seen: Vec<(u64, u32)> =
                    pool.iter().map(|(h, v)| (h.to_bits(), *v)).collect();
                let mut want: Vec<(u64, u32)> =
                    m.owned.iter().map(|(h, v)| (h.to_bits(), *v)).collect();
                seen.sort_unstable();
                want.sort_unstable();
                assert_eq!(seen, want);
                assert!(pool.values().eq(pool.iter().map(|(_, v)| v)));
            }
            _ => unreachable!(),
        }
        *at += 1;
        for (b, v, _) in &boxes {
            assert_eq!(**b, *v);
        }
        check(pool, m, boxes.len());
    }
    for (b, v, drop_later) in boxes {
        if drop_later {
            drop(b);
        } else {
            own(m, b.into_handle(), v);
        }
    }
    check(pool, m, 0);
}

fuzz_target!(|input: Input| {
    let capacity = input.capacity as usize % 48 + 1;
    let shards = input.shards as usize % 8 + 1;
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("fuzz", |scope| {
        let pool = scope.new_pool_with_shards::<u32>(capacity, shards);
        let other = scope.new_pool_with_shards::<u32>(capacity, shards);
        assert_eq!(pool.capacity(), capacity);
        let mut m = Model {
            capacity,
            owned: HashMap::new(),
            issued: Vec::new(),
            foreign: Vec::new(),
            peak: 0,
        };
        let ops = &input.ops[..input.ops.len().min(2000)];
        let mut at = 0;
        while at < ops.len() {
            shared_phase(pool, other, ops, &mut at, &mut m);
            let Some(op) = ops.get(at) else { break };
            at += 1;
            match *op {
                Op::GetMut(i, v) => {
                    if let Some(h) = pick(&m.issued, i) {
                        match (pool.get_mut(h), m.owned.get_mut(&h)) {
                            (Some(a), Some(b)) => {
                                *a = v;
                                *b = v;
                            }
                            (None, None) => {}
                            (a, b) => panic!("get_mut {a:?} vs {b:?}"),
                        }
                    }
                }
                Op::Remove(i) => {
                    if let Some(h) = pick(&m.issued, i) {
                        assert_eq!(pool.remove(h), m.owned.remove(&h));
                    }
                }
                Op::RemoveForeign(i) => {
                    if let Some(h) = pick(&m.foreign, i) {
                        assert_eq!(pool.remove(h), None);
                        assert!(pool.get_mut(h).is_none());
                    }
                }
                Op::RetainBelow(limit) => {
                    pool.retain(|_, v| *v < limit);
                    m.owned.retain(|_, v| *v < limit);
                }
                _ => unreachable!(),
            }
            check(pool, &mut m, 0);
        }
        for h in &m.issued {
            assert_eq!(pool.get(*h), m.owned.get(h));
        }
    });
});
