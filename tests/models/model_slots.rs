//! Model-based test of `Slots` on one thread: random sequences of loads (plain and
//! concurrent, some too big for their slot, some that panic while building), drops in
//! any order, `with_mut` growth and reports, checked after every step against a model
//! (which names hold a slot, and how many tracked values are alive).
//!
//! Cases: `PROPTEST_CASES` (256 when unset), 6 under Miri. CI runs 2,000 in release.

// `SlotError` keeps its names inline (no heap on the error path), so it is large.
#![allow(clippy::result_large_err)]

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use proptest::prelude::*;

use crate::proptest_config::config;
use scope_stack::{slot_root, LinearAllocator, Loaded, Plain, Shared, SlotErrorKind, SlotState};

thread_local! {
    /// `Tracked` values alive on this thread.
    static ALIVE: Cell<isize> = const { Cell::new(0) };
}

/// Counts how many of its kind are alive, to catch leaks and double drops.
struct Tracked(#[allow(dead_code)] u32);
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
    ALIVE.with(|a| a.get())
}

struct Level<'s> {
    id: u32,
    data: &'s [u32],
    extra: usize,
}
slot_root!(struct LevelRoot = for<'s> Level<'s>);

#[derive(Clone, Debug)]
enum Op {
    /// Load with `objects` tracked values and `words` words of data.
    Load { objects: u8, words: u16 },
    /// The same through a concurrent scope.
    LoadConcurrent { objects: u8, words: u16 },
    /// A build that panics after placing `objects` tracked values.
    Panic { objects: u8 },
    /// Drop the held slot at this position (modulo the number held).
    Drop(usize),
    /// Grow the held slot at this position by `words`.
    Grow(usize, u16),
    /// Take a report and compare it with the model.
    Report,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..4, 0u16..600).prop_map(|(objects, words)| Op::Load { objects, words }),
        2 => (0u8..4, 0u16..600).prop_map(|(objects, words)| Op::LoadConcurrent { objects, words }),
        1 => (0u8..3).prop_map(|objects| Op::Panic { objects }),
        4 => any::<usize>().prop_map(Op::Drop),
        2 => (any::<usize>(), 0u16..200).prop_map(|(i, w)| Op::Grow(i, w)),
        1 => Just(Op::Report),
    ]
}

enum Held<'a> {
    Plain(Loaded<'a, LevelRoot, Plain>, u32),
    Shared(Loaded<'a, LevelRoot, Shared>, u32),
}

impl Held<'_> {
    fn id(&self) -> u32 {
        match self {
            Held::Plain(_, id) | Held::Shared(_, id) => *id,
        }
    }
    fn slot(&self) -> usize {
        match self {
            Held::Plain(l, _) => l.slot(),
            Held::Shared(l, _) => l.slot(),
        }
    }
    fn check(&self) {
        let id = self.id();
        let check = |l: &Level<'_>| {
            assert_eq!(l.id, id);
            assert!(l.data.iter().all(|&w| w == id));
        };
        match self {
            Held::Plain(l, _) => l.with(|l| check(l)),
            Held::Shared(l, _) => l.with(|l| check(l)),
        }
    }
}

const COUNT: usize = 3;
/// Operations per case (fewer under Miri, which is slow).
const MAX_OPS: usize = if cfg!(miri) { 16 } else { 60 };
const EACH: usize = 8 << 10;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn slots_follow_the_model(ops in proptest::collection::vec(op(), 1..MAX_OPS)) {
        let before = alive();
        let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
        memory.scope("game", |game| {
            let slots = game.new_slots("levels", COUNT, EACH);
            let mut held: Vec<Held<'_>> = Vec::new();
            // Tracked values each held slot placed.
            let mut placed: Vec<isize> = Vec::new();
            let mut next_id = 0u32;
            for op in &ops {
                let in_slots: isize = placed.iter().sum();
                match *op {
                    Op::Load { objects, words } | Op::LoadConcurrent { objects, words } => {
                        next_id += 1;
                        let id = next_id;
                        let concurrent = matches!(op, Op::LoadConcurrent { .. });
                        let name = format!("level {id}");
                        let fits = (words as usize) * 4 + 512 < EACH / 2;
                        let result = if concurrent {
                            slots
                                .try_load_concurrent::<LevelRoot>(&name, |s| {
                                    for o in 0..objects {
                                        s.try_new_object(Tracked::new(o as u32)).map_err(|e| e.error)?;
                                    }
                                    let data = s.try_alloc_slice_fill_with(words as usize, |_| id)?;
                                    Ok(Level { id, data, extra: 0 })
                                })
                                .map(|l| Held::Shared(l, id))
                        } else {
                            slots
                                .try_load::<LevelRoot>(&name, |s| {
                                    for o in 0..objects {
                                        s.try_new_object(Tracked::new(o as u32)).map_err(|e| e.error)?;
                                    }
                                    let data = s.try_alloc_slice_fill_with(words as usize, |_| id)?;
                                    Ok(Level { id, data, extra: 0 })
                                })
                                .map(|l| Held::Plain(l, id))
                        };
                        match result {
                            Ok(h) => {
                                assert!(held.len() < COUNT);
                                assert!(!held.iter().any(|o| o.slot() == h.slot()));
                                held.push(h);
                                placed.push(objects as isize);
                            }
                            Err(e) if e.kind() == SlotErrorKind::Full => {
                                assert_eq!(held.len(), COUNT);
                                let holders: Vec<String> = e.holders().map(String::from).collect();
                                let mut expected: Vec<(usize, String)> = held
                                    .iter()
                                    .map(|h| (h.slot(), format!("level {}", h.id())))
                                    .collect();
                                expected.sort();
                                let expected: Vec<String> = expected.into_iter().map(|(_, n)| n).collect();
                                assert_eq!(holders, expected);
                            }
                            Err(e) => {
                                assert_eq!(e.kind(), SlotErrorKind::Alloc);
                                assert!(!fits, "{e}");
                            }
                        }
                    }
                    Op::Panic { objects } => {
                        let r = catch_unwind(AssertUnwindSafe(|| {
                            let _ = slots.load::<LevelRoot>("broken", |s| {
                                for o in 0..objects {
                                    s.new_object(Tracked::new(o as u32));
                                }
                                panic!("broken level");
                            });
                        }));
                        if held.len() < COUNT {
                            assert!(r.is_err());
                        }
                    }
                    Op::Drop(i) => {
                        if !held.is_empty() {
                            let i = i % held.len();
                            drop(held.remove(i));
                            placed.remove(i);
                        }
                    }
                    Op::Grow(i, words) => {
                        if !held.is_empty() {
                            let i = i % held.len();
                            let id = held[i].id();
                            let grown = match &mut held[i] {
                                Held::Plain(l, _) => l.with_mut(|l, s| {
                                    s.try_alloc_slice_fill_with(words as usize, |_| id)
                                        .map(|d| l.extra += d.len())
                                        .is_ok()
                                }),
                                Held::Shared(l, _) => l.with_mut(|l, s| {
                                    s.try_alloc_slice_fill_with(words as usize, |_| id)
                                        .map(|d| l.extra += d.len())
                                        .is_ok()
                                }),
                            };
                            let _ = grown;
                        }
                    }
                    Op::Report => {
                        let map = game.report();
                        let set = &map.scopes[0].slots[0];
                        assert_eq!(set.loaded, held.len());
                        for s in &set.slots {
                            match held.iter().find(|h| h.slot() == s.index) {
                                Some(h) => {
                                    assert_eq!(s.state, SlotState::Loaded);
                                    assert_eq!(s.holder.clone().unwrap(), format!("level {}", h.id()));
                                    assert!(s.used <= EACH && s.used <= s.high_water_mark);
                                }
                                None => assert_eq!((s.state, s.used), (SlotState::Free, 0)),
                            }
                        }
                    }
                }
                let _ = in_slots;
                assert_eq!(slots.loaded(), held.len());
                assert_eq!(alive() - before, placed.iter().sum::<isize>());
                for h in &held {
                    h.check();
                }
            }
            drop(held);
            assert_eq!(alive(), before);
            assert_eq!(slots.loaded(), 0);
        });
        prop_assert_eq!(memory.used(), 0);
    }
}
