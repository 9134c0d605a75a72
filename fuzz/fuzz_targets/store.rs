//! `Store` on one thread: create / read / write / commit / try_commit / destroy / pin /
//! end_frame, with stale and made-up ids, checked after every step against a model of
//! the live objects, their versions, drafts, pins and the garbage `end_frame` frees.
#![no_main]

use std::collections::HashMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scope_stack::store::{Id, Store};
use scope_stack::{Draft, LinearAllocator, Pinned};

#[derive(Arbitrary, Debug)]
struct Input {
    max_objects: u8,
    max_versions: u8,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Create(u32),
    /// Read an id picked from every id ever issued (often stale).
    Read(u16),
    /// Read an id made from arbitrary bits.
    ReadBits(u64),
    /// Take a draft of a picked id and set its value.
    Write(u16, u32),
    /// Commit (or, with `true`, try_commit) a held draft.
    Commit(u16, bool),
    DropDraft(u16),
    Destroy(u16),
    Pin(u16),
    Unpin(u16),
    /// Ends the phase on `&Store`: held drafts are dropped first.
    EndFrame,
}

/// A version in the model, by key.
struct Ver {
    value: u32,
    pins: usize,
    retired: bool,
}

#[derive(Default)]
struct Model {
    max_objects: usize,
    max_versions: usize,
    /// Live objects: id bits -> current version key.
    objects: HashMap<u64, u32>,
    vers: HashMap<u32, Ver>,
    next_ver: u32,
    /// Objects destroyed since the last `end_frame` (their indices are not free yet).
    destroyed: usize,
    issued: Vec<Id>,
}

impl Model {
    fn new_ver(&mut self, value: u32) -> u32 {
        let k = self.next_ver;
        self.next_ver += 1;
        self.vers.insert(
            k,
            Ver {
                value,
                pins: 0,
                retired: false,
            },
        );
        k
    }

    fn value(&self, id: Id) -> Option<u32> {
        self.objects.get(&id.to_u64()).map(|k| self.vers[k].value)
    }

    fn pick(&self, i: u16) -> Option<Id> {
        (!self.issued.is_empty()).then(|| self.issued[i as usize % self.issued.len()])
    }
}

struct HeldDraft<'a> {
    draft: Draft<'a, u32>,
    base: u32,
    value: u32,
}

fn check(store: &Store<'_, u32>, m: &Model, drafts: usize, pins: &[(Pinned<'_, u32>, u32)]) {
    assert_eq!(store.versions_in_use(), m.vers.len() + drafts);
    for (id, k) in &m.objects {
        assert_eq!(store.read(Id::from_u64(*id)), Some(&m.vers[k].value));
    }
    for (p, k) in pins {
        assert_eq!(**p, m.vers[k].value);
    }
}

/// Runs operations on `&Store` from `*at` until an `EndFrame` (consumed) or the end.
fn phase<'s>(
    store: &Store<'s, u32>,
    ops: &[Op],
    at: &mut usize,
    m: &mut Model,
    pins: &mut Vec<(Pinned<'s, u32>, u32)>,
) {
    let mut drafts: Vec<HeldDraft<'_>> = Vec::new();
    while *at < ops.len() {
        let op = &ops[*at];
        *at += 1;
        let in_use = m.vers.len() + drafts.len();
        match op {
            Op::EndFrame => break,
            Op::Create(v) => {
                let room = m.objects.len() + m.destroyed < m.max_objects && in_use < m.max_versions;
                match store.create(*v) {
                    Ok(id) => {
                        assert!(room, "created past the limits");
                        assert!(!m.objects.contains_key(&id.to_u64()), "id of a live object");
                        assert!(!m.issued.contains(&id), "id issued twice");
                        let k = m.new_ver(*v);
                        m.objects.insert(id.to_u64(), k);
                        m.issued.push(id);
                    }
                    Err(back) => {
                        assert_eq!(back, *v);
                        assert!(!room, "refused a create with room");
                    }
                }
            }
            Op::Read(i) => {
                if let Some(id) = m.pick(*i) {
                    assert_eq!(store.read(id).copied(), m.value(id));
                }
            }
            Op::ReadBits(bits) => {
                let id = Id::from_u64(*bits);
                assert_eq!(store.read(id).copied(), m.value(id));
            }
            Op::Write(i, v) => {
                if let Some(id) = m.pick(*i) {
                    let live = m.objects.get(&id.to_u64()).copied();
                    match store.write(id) {
                        Some(mut d) => {
                            let base = live.expect("a draft of a dead object");
                            assert!(in_use < m.max_versions);
                            assert_eq!(*d, m.vers[&base].value);
                            assert_eq!(d.id(), id);
                            *d = *v;
                            drafts.push(HeldDraft {
                                draft: d,
                                base,
                                value: *v,
                            });
                        }
                        None => assert!(live.is_none() || in_use == m.max_versions),
                    }
                }
            }
            Op::Commit(i, try_) => {
                if !drafts.is_empty() {
                    let n = drafts.len();
                    let d = drafts.swap_remove(*i as usize % n);
                    let id = d.draft.id();
                    let current = m.objects.get(&id.to_u64()).copied();
                    let ok = match current {
                        None => false,
                        Some(k) => !try_ || k == d.base,
                    };
                    let r = if *try_ {
                        store.try_commit(d.draft)
                    } else {
                        store.commit(d.draft)
                    };
                    match r {
                        Ok(()) => {
                            assert!(ok, "commit should have failed");
                            let old = current.unwrap();
                            m.vers.get_mut(&old).unwrap().retired = true;
                            let k = m.new_ver(d.value);
                            m.objects.insert(id.to_u64(), k);
                        }
                        Err(back) => {
                            assert!(!ok, "commit should have succeeded");
                            assert_eq!(*back, d.value);
                        }
                    }
                }
            }
            Op::DropDraft(i) => {
                if !drafts.is_empty() {
                    let n = drafts.len();
                    drop(drafts.swap_remove(*i as usize % n));
                }
            }
            Op::Destroy(i) => {
                if let Some(id) = m.pick(*i) {
                    let live = m.objects.remove(&id.to_u64());
                    assert_eq!(store.destroy(id), live.is_some());
                    if let Some(k) = live {
                        m.vers.get_mut(&k).unwrap().retired = true;
                        m.destroyed += 1;
                    }
                    assert_eq!(store.read(id), None);
                }
            }
            Op::Pin(i) => {
                if let Some(id) = m.pick(*i) {
                    let live = m.objects.get(&id.to_u64()).copied();
                    match store.pin(id) {
                        Some(p) => {
                            let k = live.expect("pinned a dead object");
                            m.vers.get_mut(&k).unwrap().pins += 1;
                            pins.push((p, k));
                        }
                        None => assert!(live.is_none()),
                    }
                }
            }
            Op::Unpin(i) => {
                if !pins.is_empty() {
                    let n = pins.len();
                    let (p, k) = pins.swap_remove(*i as usize % n);
                    drop(p);
                    m.vers.get_mut(&k).unwrap().pins -= 1;
                }
            }
        }
        check(store, m, drafts.len(), pins);
    }
}

fuzz_target!(|input: Input| {
    let max_objects = input.max_objects as usize % 16 + 1;
    let max_versions = input.max_versions as usize % 32 + 1;
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("fuzz", |scope| {
        let store = scope.new_store::<u32>(max_objects, max_versions);
        assert_eq!(store.max_objects(), max_objects);
        assert_eq!(store.max_versions(), max_versions);
        let mut m = Model {
            max_objects,
            max_versions,
            ..Model::default()
        };
        let mut pins: Vec<(Pinned<'_, u32>, u32)> = Vec::new();
        let mut at = 0;
        let ops = &input.ops[..input.ops.len().min(2000)];
        while at < ops.len() {
            phase(store, ops, &mut at, &mut m, &mut pins);
            // End of the frame: retired versions without pins are freed.
            let free: Vec<u32> = m
                .vers
                .iter()
                .filter(|(_, v)| v.retired && v.pins == 0)
                .map(|(k, _)| *k)
                .collect();
            assert_eq!(store.end_frame(), free.len());
            for k in free {
                m.vers.remove(&k);
            }
            m.destroyed = 0;
            check(store, &m, 0, &pins);
        }
        drop(pins);
    });
});
