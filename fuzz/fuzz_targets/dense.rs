//! `DensePool` with `insert_evicting`: inserts, evicting inserts, removals and lookups by
//! handles (often stale, or from another pool), iteration, `retain` and `clear`, checked
//! after every step against a `HashMap` model.
#![no_main]

use std::collections::HashMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scope_stack::{DenseHandle, LinearAllocator};

#[derive(Arbitrary, Debug)]
struct Input {
    capacity: u8,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Insert(u16),
    /// Insert; when full, evict the smallest value.
    InsertEvicting(u16),
    Remove(u16),
    Get(u16),
    GetMut(u16, u16),
    Foreign(u16),
    Iterate,
    RetainBelow(u16),
    Clear,
}

fn pick(from: &[DenseHandle<u16>], i: u16) -> Option<DenseHandle<u16>> {
    (!from.is_empty()).then(|| from[i as usize % from.len()])
}

fuzz_target!(|input: Input| {
    let capacity = input.capacity as usize % 24 + 1;
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("fuzz", |scope| {
        let pool = scope.new_dense_pool::<u16>(capacity);
        let other = scope.new_dense_pool::<u16>(capacity);
        let mut model: HashMap<DenseHandle<u16>, u16> = HashMap::new();
        let mut issued = Vec::new();
        let mut foreign = Vec::new();
        for op in input.ops.iter().take(2000) {
            match *op {
                Op::Insert(v) => match pool.insert(v) {
                    Ok(h) => {
                        assert!(model.len() < capacity);
                        assert!(model.insert(h, v).is_none(), "handle reused");
                        issued.push(h);
                        if let Ok(f) = other.insert(v) {
                            foreign.push(f);
                        }
                    }
                    Err(back) => {
                        assert_eq!(back, v);
                        assert_eq!(model.len(), capacity);
                    }
                },
                Op::InsertEvicting(v) => {
                    let min = model.values().min().copied();
                    let h = pool.insert_evicting(v, |&x| x);
                    if model.len() == capacity {
                        // Some object with the smallest value went.
                        let gone: Vec<DenseHandle<u16>> = model
                            .keys()
                            .filter(|k| !pool.contains(**k))
                            .copied()
                            .collect();
                        assert_eq!(gone.len(), 1, "evicted one object");
                        assert_eq!(Some(model[&gone[0]]), min, "evicted the smallest");
                        model.remove(&gone[0]);
                    }
                    assert!(model.insert(h, v).is_none(), "handle reused");
                    issued.push(h);
                }
                Op::Remove(i) => {
                    if let Some(h) = pick(&issued, i) {
                        assert_eq!(pool.remove(h), model.remove(&h));
                    }
                }
                Op::Get(i) => {
                    if let Some(h) = pick(&issued, i) {
                        assert_eq!(pool.get(h), model.get(&h));
                        assert_eq!(pool.contains(h), model.contains_key(&h));
                    }
                }
                Op::GetMut(i, v) => {
                    if let Some(h) = pick(&issued, i) {
                        match (pool.get_mut(h), model.get_mut(&h)) {
                            (Some(a), Some(b)) => {
                                *a = v;
                                *b = v;
                            }
                            (None, None) => {}
                            (a, b) => panic!("get_mut {a:?} vs {b:?}"),
                        }
                    }
                }
                Op::Foreign(i) => {
                    if let Some(h) = pick(&foreign, i) {
                        assert_eq!(pool.get(h), None);
                        assert_eq!(pool.remove(h), None);
                    }
                }
                Op::Iterate => {
                    let mut seen: Vec<(u64, u16)> = pool
                        .handles()
                        .map(|h| (h.to_bits(), *pool.get(h).unwrap()))
                        .collect();
                    let mut want: Vec<(u64, u16)> =
                        model.iter().map(|(h, v)| (h.to_bits(), *v)).collect();
                    seen.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(seen, want);
                    // `iter` pairs the same handles with the same values, and `values`
                    // walks them in its order.
                    let mut pairs: Vec<(u64, u16)> =
                        pool.iter().map(|(h, v)| (h.to_bits(), *v)).collect();
                    assert!(pool.values().eq(pool.iter().map(|(_, v)| v)));
                    pairs.sort_unstable();
                    assert_eq!(pairs, want);
                }
                Op::RetainBelow(limit) => {
                    pool.retain(|_, v| *v < limit);
                    model.retain(|_, v| *v < limit);
                }
                Op::Clear => {
                    pool.clear();
                    model.clear();
                }
            }
            assert_eq!(pool.len(), model.len());
            assert_eq!(pool.is_full(), model.len() == capacity);
            assert_eq!(pool.is_empty(), model.is_empty());
        }
        for h in &issued {
            assert_eq!(pool.get(*h), model.get(h));
        }
    });
});
