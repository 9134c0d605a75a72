//! Property test: one thread's operations on a concurrent scope (through the shared
//! handle and through `local()`, mixed), checked against a plain `Vec` model. Every
//! value placed keeps its contents until the scope closes, allocator-api2 vectors grow
//! and shrink like `Vec`s, and at the close each finalized value drops exactly once in
//! reverse order of construction.

use crate::proptest_config;

use std::sync::Mutex;

use allocator_api2::vec::Vec as AVec;
use proptest::prelude::*;
use scope_stack::{ConcurrentConfig, LinearAllocator};

#[derive(Clone, Debug)]
enum Op {
    Pod(u64),
    Object(u32),
    Slice(u8, u8),
    Text(u16),
    Iter(u8),
    Push(u32),
    Pop,
    Big(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<u64>().prop_map(Op::Pod),
        any::<u32>().prop_map(Op::Object),
        (any::<u8>(), 0u8..40).prop_map(|(v, n)| Op::Slice(v, n)),
        any::<u16>().prop_map(Op::Text),
        (0u8..50).prop_map(Op::Iter),
        any::<u32>().prop_map(Op::Push),
        Just(Op::Pop),
        (0u16..3000).prop_map(Op::Big),
    ]
}

static DROPPED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

struct Logged(u32);
impl Drop for Logged {
    fn drop(&mut self) {
        DROPPED.lock().unwrap().push(self.0);
    }
}

/// What a placed value should still hold.
enum Placed<'a> {
    Pod(&'a u64, u64),
    Object(&'a Logged, u32),
    Slice(&'a [u8], u8, u8),
    Text(&'a str, String),
    Iter(&'a [u64], u8),
    Big(&'a [u16], u16),
}

fn check(p: &Placed<'_>) {
    match p {
        Placed::Pod(r, v) => assert_eq!(**r, *v),
        Placed::Object(r, v) => assert_eq!(r.0, *v),
        Placed::Slice(r, v, n) => assert_eq!(*r, vec![*v; *n as usize].as_slice()),
        Placed::Text(r, s) => assert_eq!(*r, s.as_str()),
        Placed::Iter(r, n) => assert_eq!(
            r.to_vec(),
            (0..*n as u64).map(|i| i * 3).collect::<Vec<_>>()
        ),
        Placed::Big(r, v) => assert!(r.iter().all(|x| x == v) && r.len() == 700),
    }
}

/// Operations per case, scaled down under Miri.
const MAX_OPS: usize = if cfg!(miri) { 50 } else { 120 };

proptest! {
    #![proptest_config(proptest_config::config())]

    #[test]
    fn one_thread_matches_a_vec_model(ops in prop::collection::vec(op(), 0..MAX_OPS), chunk in 256usize..4096) {
        DROPPED.lock().unwrap().clear();
        let mut made = Vec::new();
        let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
        memory.scope("model", |scope| {
            scope.scope_concurrent_with("jobs", ConcurrentConfig::new().chunk_size(chunk), |jobs| {
                let here = jobs.local();
                let mut placed = Vec::new();
                let mut v = AVec::new_in(jobs);
                let mut model = Vec::new();
                for (n, op) in ops.iter().enumerate() {
                    match op.clone() {
                        Op::Pod(x) => placed.push(Placed::Pod(if n % 2 == 0 { jobs.new_pod(x) } else { here.new_pod(x) }, x)),
                        Op::Object(x) => {
                            made.push(x);
                            placed.push(Placed::Object(if n % 2 == 0 { jobs.new_object(Logged(x)) } else { here.new_object(Logged(x)) }, x));
                        }
                        Op::Slice(x, len) => placed.push(Placed::Slice(here.alloc_slice_fill_with(len as usize, |_| x), x, len)),
                        Op::Text(x) => {
                            let s = format!("text {x}");
                            placed.push(Placed::Text(jobs.alloc_fmt(format_args!("text {x}")), s));
                        }
                        Op::Iter(len) => placed.push(Placed::Iter(here.alloc_iter((0..len as u64).map(|i| i * 3)), len)),
                        Op::Push(x) => { v.push(x); model.push(x); }
                        Op::Pop => { prop_assert_eq!(v.pop(), model.pop()); v.shrink_to_fit(); }
                        Op::Big(x) => placed.push(Placed::Big(jobs.alloc_slice_copy(&[x; 700]), x)),
                    }
                    prop_assert_eq!(v.as_slice(), model.as_slice());
                }
                for p in &placed {
                    check(p);
                }
                Ok(())
            })
        })?;
        made.reverse();
        prop_assert_eq!(DROPPED.lock().unwrap().clone(), made);
    }
}
