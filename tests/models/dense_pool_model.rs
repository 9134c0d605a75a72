//! Model-based test of `DensePool`: random sequences of operations, including stale
//! and foreign handles, checked step by step against a `HashMap` model.

use std::collections::HashMap;

use proptest::prelude::*;
use scope_stack::{DenseHandle, LinearAllocator};

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    /// Evict the smallest value when full.
    InsertEvicting(u32),
    /// Remove by a handle picked from every handle ever issued (often stale).
    Remove(usize),
    Get(usize),
    GetMut(usize, u32),
    /// Use a handle from the other pool.
    Foreign(usize),
    Iterate,
    RetainBelow(u32),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u32>().prop_map(Op::Insert),
        1 => any::<u32>().prop_map(Op::InsertEvicting),
        3 => any::<usize>().prop_map(Op::Remove),
        2 => any::<usize>().prop_map(Op::Get),
        1 => (any::<usize>(), any::<u32>()).prop_map(|(i, v)| Op::GetMut(i, v)),
        1 => any::<usize>().prop_map(Op::Foreign),
        1 => Just(Op::Iterate),
        1 => any::<u32>().prop_map(Op::RetainBelow),
        1 => Just(Op::Clear),
    ]
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn max_ops() -> usize {
    if cfg!(miri) {
        40
    } else {
        300
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn behaves_like_a_hash_map(
        capacity in 1usize..12,
        ops in prop::collection::vec(op(), 0..max_ops()),
    ) {
        let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
        memory.scope("model", |scope| {
            let pool = scope.new_dense_pool::<u32>(capacity);
            let other = scope.new_dense_pool::<u32>(capacity);
            let mut foreign: Vec<DenseHandle<u32>> = Vec::new();
            let mut model: HashMap<DenseHandle<u32>, u32> = HashMap::new();
            let mut issued: Vec<DenseHandle<u32>> = Vec::new();
            let pick = |issued: &[DenseHandle<u32>], i: usize| {
                (!issued.is_empty()).then(|| issued[i % issued.len()])
            };
            for op in ops {
                match op {
                    Op::Insert(v) => match pool.insert(v) {
                        Ok(h) => {
                            prop_assert!(model.len() < capacity);
                            prop_assert!(model.insert(h, v).is_none(), "handle reused");
                            issued.push(h);
                            // Keep the other pool busy so its handles look plausible.
                            if let Ok(f) = other.insert(v) {
                                foreign.push(f);
                            }
                        }
                        Err(back) => {
                            prop_assert_eq!(back, v);
                            prop_assert_eq!(model.len(), capacity);
                        }
                    },
                    Op::InsertEvicting(v) => {
                        if model.len() == capacity {
                            let min = *model.values().min().unwrap();
                            let victim = *model.iter().find(|&(_, &x)| x == min).unwrap().0;
                            model.remove(&victim);
                        }
                        let h = pool.insert_evicting(v, |&x| x);
                        prop_assert!(model.insert(h, v).is_none());
                        issued.push(h);
                    }
                    Op::Remove(i) => {
                        if let Some(h) = pick(&issued, i) {
                            prop_assert_eq!(pool.remove(h), model.remove(&h));
                        }
                    }
                    Op::Get(i) => {
                        if let Some(h) = pick(&issued, i) {
                            prop_assert_eq!(pool.get(h), model.get(&h));
                            prop_assert_eq!(pool.contains(h), model.contains_key(&h));
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
                                (a, b) => prop_assert!(false, "get_mut {:?} vs {:?}", a, b),
                            }
                        }
                    }
                    Op::Foreign(i) => {
                        if let Some(h) = pick(&foreign, i) {
                            prop_assert_eq!(pool.get(h), None);
                            prop_assert_eq!(pool.remove(h), None);
                        }
                    }
                    Op::Iterate => {
                        let mut seen: Vec<u32> = pool.values().copied().collect();
                        let mut want: Vec<u32> = model.values().copied().collect();
                        seen.sort_unstable();
                        want.sort_unstable();
                        prop_assert_eq!(seen, want);
                        // `iter` pairs each object with the handle the model holds
                        // for it, in the order `values` visits them.
                        let mut pairs: Vec<(u64, u32)> =
                            pool.iter().map(|(h, v)| (h.to_bits(), *v)).collect();
                        let in_order: Vec<u32> = pairs.iter().map(|&(_, v)| v).collect();
                        prop_assert_eq!(in_order, pool.values().copied().collect::<Vec<_>>());
                        let mut want: Vec<(u64, u32)> =
                            model.iter().map(|(h, v)| (h.to_bits(), *v)).collect();
                        pairs.sort_unstable();
                        want.sort_unstable();
                        prop_assert_eq!(pairs, want);
                        let mut hs: Vec<u64> = pool.handles().map(|h| h.to_bits()).collect();
                        let mut want: Vec<u64> = model.keys().map(|h| h.to_bits()).collect();
                        hs.sort_unstable();
                        want.sort_unstable();
                        prop_assert_eq!(hs, want);
                        prop_assert_eq!(pool.iter_mut().count(), model.len());
                        prop_assert_eq!(pool.values_mut().count(), model.len());
                    }
                    Op::RetainBelow(limit) => {
                        pool.retain(|_, &mut v| v < limit);
                        model.retain(|_, &mut v| v < limit);
                    }
                    Op::Clear => {
                        pool.clear();
                        model.clear();
                    }
                }
                prop_assert_eq!(pool.len(), model.len());
                prop_assert_eq!(pool.is_full(), model.len() == capacity);
                prop_assert_eq!(pool.iter().len(), model.len());
                prop_assert_eq!(pool.values().len(), model.len());
            }
            // Every handle ever issued agrees with the model at the end.
            for h in &issued {
                prop_assert_eq!(pool.get(*h), model.get(h));
            }
            Ok(())
        })?;
    }
}
