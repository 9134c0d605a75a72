//! Nested `scratch` and `scratch_for` scopes with allocations through inner and outer
//! scopes. The model knows which arena each live scope is on: an allocation through a
//! scope that is not the innermost live one on its arena must be refused with
//! `NotInnermost`; accepted ones must never overlap a live allocation, and every live
//! allocation keeps its contents until its scope closes.
#![no_main]

use std::ptr::NonNull;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scope_stack::{scratch, scratch_for, AllocError, AllocErrorKind, ScopeStack};

#[derive(Arbitrary, Debug)]
enum Op {
    /// A nested `scratch` scope.
    Scratch,
    /// A nested `scratch_for` scope for the live scope picked by the index.
    ScratchFor(u8),
    Close,
    /// Allocate through the live scope picked by the index (0: innermost).
    Alloc {
        level: u8,
        size: u16,
        align_log2: u8,
        form: u8,
    },
}

/// A live scratch scope, seen through a trait object so that scopes of different
/// lifetimes fit in one list.
trait Level {
    fn try_alloc(&self, size: usize, align: usize, form: u8) -> Result<NonNull<u8>, AllocError>;
    fn arena(&self) -> usize;
    fn nested_for(&self, f: &mut dyn FnMut(&ScopeStack<'_>));
}

impl Level for ScopeStack<'_> {
    fn try_alloc(&self, size: usize, align: usize, form: u8) -> Result<NonNull<u8>, AllocError> {
        match form % 3 {
            0 => self.try_alloc_raw(size, align),
            1 => self
                .try_alloc_slice_copy(&vec![0u8; size])
                .map(|s| NonNull::new(s.as_mut_ptr()).unwrap()),
            _ => self
                .try_new_pod([0u64; 4])
                .map(|p| NonNull::from(p).cast())
                .map_err(|e| e.error),
        }
    }

    fn arena(&self) -> usize {
        self.allocator() as *const _ as usize
    }

    fn nested_for(&self, f: &mut dyn FnMut(&ScopeStack<'_>)) {
        scratch_for(self, |inner| f(inner));
    }
}

struct Live {
    ptr: *mut u8,
    len: usize,
    level: usize,
    fill: u8,
}

struct Model {
    live: Vec<Live>,
    next_fill: u8,
    steps: usize,
}

fn check_live(m: &Model) {
    for l in &m.live {
        // SAFETY: the allocation's scope is open; nothing else writes it.
        let got = unsafe { std::slice::from_raw_parts(l.ptr, l.len) };
        assert!(
            got.iter().all(|&b| b == l.fill),
            "a live allocation was overwritten"
        );
    }
}

/// Runs `ops` from `*at` with `levels` live (the last is the innermost), until a
/// `Close` or the end.
fn run(levels: &[&dyn Level], ops: &[Op], at: &mut usize, m: &mut Model) {
    let depth = levels.len() - 1;
    while *at < ops.len() && m.steps < 2000 {
        let op = &ops[*at];
        *at += 1;
        m.steps += 1;
        match op {
            Op::Close => {
                if depth > 0 {
                    break;
                }
            }
            Op::Scratch | Op::ScratchFor(_) => {
                if depth >= 12 {
                    continue;
                }
                let mut body = |inner: &ScopeStack<'_>| {
                    assert_eq!(inner.used(), 0);
                    let mut next: Vec<&dyn Level> = levels.to_vec();
                    next.push(inner);
                    run(&next, ops, at, m);
                };
                match op {
                    Op::Scratch => scratch(|inner| body(inner)),
                    Op::ScratchFor(i) => {
                        let caller = levels[*i as usize % levels.len()];
                        let before = levels.len();
                        caller.nested_for(&mut |inner| {
                            // The other arena than the caller's.
                            assert_ne!(inner.arena(), caller.arena());
                            body(inner)
                        });
                        assert_eq!(before, levels.len());
                    }
                    _ => unreachable!(),
                }
                // The child's allocations are gone with it.
                m.live.retain(|l| l.level <= depth);
            }
            Op::Alloc {
                level,
                size,
                align_log2,
                form,
            } => {
                let li = depth - (*level as usize % levels.len());
                let scope = levels[li];
                let innermost = levels[li + 1..].iter().all(|l| l.arena() != scope.arena());
                let (size, align) = match form % 3 {
                    0 => (*size as usize % 2048 + 1, 1usize << (align_log2 % 8)),
                    1 => (*size as usize % 2048 + 1, 1),
                    _ => (32, 8),
                };
                match scope.try_alloc(size, align, *form) {
                    Ok(p) => {
                        assert!(
                            innermost,
                            "an outer scratch scope allocated while an inner one lives"
                        );
                        let p = p.as_ptr();
                        assert_eq!(p as usize % align, 0);
                        for l in &m.live {
                            let (a, b) = (l.ptr as usize, l.ptr as usize + l.len);
                            assert!(p as usize >= b || p as usize + size <= a, "overlap");
                        }
                        m.next_fill = m.next_fill.wrapping_add(1);
                        // SAFETY: a fresh allocation of `size` bytes.
                        unsafe { std::ptr::write_bytes(p, m.next_fill, size) };
                        m.live.push(Live {
                            ptr: p,
                            len: size,
                            level: li,
                            fill: m.next_fill,
                        });
                    }
                    Err(e) => {
                        if innermost {
                            assert_eq!(e.kind(), AllocErrorKind::OutOfMemory, "{e}");
                            assert!(e.remaining() < size + align);
                        } else {
                            assert_eq!(e.kind(), AllocErrorKind::NotInnermost, "{e}");
                        }
                    }
                }
            }
        }
        check_live(m);
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut m = Model {
        live: Vec::new(),
        next_fill: 0,
        steps: 0,
    };
    let mut at = 0;
    while at < ops.len() && m.steps < 2000 {
        scratch(|root| run(&[&**root], &ops, &mut at, &mut m));
        m.live.clear();
    }
    if let Some([(a, _), (b, _)]) = scope_stack::scratch::usage() {
        assert_eq!((a, b), (0, 0), "scratch arenas rewound");
    }
});
