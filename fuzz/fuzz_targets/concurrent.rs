//! A concurrent scope driven by two threads at once (each with its own list of
//! operations) plus the opening thread: values of every kind, raw layouts up to and
//! past `MAX_ALIGN`, requests past the budget, allocator-api2 vectors that grow and
//! shrink, and reports taken mid-way. After the join every value must hold what was
//! written, errors must say the right kind, and at the close every finalizer must run
//! exactly once, each thread's in reverse order.
#![no_main]

use std::alloc::Layout;
use std::sync::Mutex;

use allocator_api2::vec::Vec as AVec;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scope_stack::{AllocErrorKind, ConcurrentConfig, ConcurrentScope, LinearAllocator, MAX_ALIGN};

#[derive(Arbitrary, Debug)]
struct Input {
    budget: u16,
    chunk: u16,
    slots: u8,
    threads: [Vec<Op>; 3],
}

#[derive(Arbitrary, Debug, Clone)]
enum Op {
    Pod(u64),
    Object(u16),
    Layout(u16, u8),
    Slice(Vec<u8>),
    Fmt(u32),
    Iter(u8),
    Push(u32),
    Pop,
    Report,
    Local(u64),
}

static DROPS: Mutex<Vec<(usize, u16)>> = Mutex::new(Vec::new());

struct Noisy(usize, u16);
impl Drop for Noisy {
    fn drop(&mut self) {
        DROPS.lock().unwrap().push((self.0, self.1));
    }
}

/// Runs one thread's operations; returns the objects it made, in order.
fn run(jobs: &ConcurrentScope<'_>, who: usize, ops: &[Op]) -> Vec<u16> {
    let here = jobs.local();
    let mut made = Vec::new();
    let mut pods: Vec<(&u64, u64)> = Vec::new();
    let mut slices: Vec<(&[u8], Vec<u8>)> = Vec::new();
    let mut v = AVec::new_in(jobs);
    let mut model = Vec::new();
    for op in ops.iter().take(200) {
        match op {
            Op::Pod(x) => {
                if let Ok(r) = jobs.try_new_pod(*x) {
                    pods.push((r, *x));
                }
            }
            Op::Local(x) => {
                if let Ok(r) = here.try_new_pod(*x) {
                    pods.push((r, *x));
                }
            }
            Op::Object(x) => {
                match jobs.try_new_object(Noisy(who, *x)) {
                    Ok(_) => made.push(*x),
                    // A refused value comes back to us; it was never placed, so its
                    // drop is not one the scope ran.
                    Err(refused) => core::mem::forget(refused.into_value()),
                }
            }
            Op::Layout(size, align_log2) => {
                let align = 1usize << (align_log2 % 14);
                let layout = Layout::from_size_align(*size as usize, align).unwrap();
                match jobs.try_alloc_layout(layout) {
                    Ok(p) => assert_eq!(p.as_ptr() as usize % align, 0),
                    Err(e) if align > MAX_ALIGN => assert_eq!(e.kind(), AllocErrorKind::AlignmentTooLarge),
                    Err(e) => assert!(matches!(
                        e.kind(),
                        AllocErrorKind::OutOfMemory | AllocErrorKind::BudgetExceeded
                    )),
                }
            }
            Op::Slice(bytes) => {
                if let Ok(s) = here.try_alloc_slice_copy(bytes) {
                    slices.push((s, bytes.clone()));
                }
            }
            Op::Fmt(x) => {
                if let Ok(s) = jobs.try_alloc_fmt(format_args!("{x}-{who}")) {
                    assert_eq!(&*s, format!("{x}-{who}"));
                }
            }
            Op::Iter(n) => {
                if let Ok(s) = here.try_alloc_iter((0..*n as u32).map(|i| i * 7)) {
                    assert!(s.iter().enumerate().all(|(i, x)| *x == i as u32 * 7));
                }
            }
            Op::Push(x) => {
                if v.try_reserve(1).is_ok() {
                    v.push(*x);
                    model.push(*x);
                }
            }
            Op::Pop => {
                assert_eq!(v.pop(), model.pop());
                v.shrink_to_fit();
            }
            Op::Report => {
                let map = jobs.report();
                let c = map.scopes[1].concurrent.as_ref().unwrap();
                assert!(c.chunks.iter().all(|ch| ch.used + ch.tail == ch.bytes));
            }
        }
        assert_eq!(v.as_slice(), model.as_slice());
    }
    for (r, x) in pods {
        assert_eq!(*r, x);
    }
    for (s, b) in slices {
        assert_eq!(s, b.as_slice());
    }
    made
}

fuzz_target!(|input: Input| {
    DROPS.lock().unwrap().clear();
    let mut memory = LinearAllocator::with_capacity(256 << 10).unwrap();
    let config = ConcurrentConfig::new()
        .budget(input.budget as usize * 4)
        .chunk_size(input.chunk as usize)
        .threads(input.slots as usize % 8);
    let made = memory.scope("root", |root| {
        root.scope_concurrent_with("jobs", config, |jobs| {
            std::thread::scope(|t| {
                let a = t.spawn(|| run(jobs, 0, &input.threads[0]));
                let b = t.spawn(|| run(jobs, 1, &input.threads[1]));
                let c = run(jobs, 2, &input.threads[2]);
                [a.join().unwrap(), b.join().unwrap(), c]
            })
        })
    });
    assert_eq!(memory.used(), 0);
    let drops = DROPS.lock().unwrap();
    for (who, mine) in made.iter().enumerate() {
        let dropped: Vec<u16> = drops.iter().filter(|(w, _)| *w == who).map(|(_, x)| *x).collect();
        let mut expect = mine.clone();
        expect.reverse();
        assert_eq!(dropped, expect, "thread {who}");
    }
});
