//! Nested (and budgeted) scopes with raw layouts up to 4096-aligned, requests at and
//! past the limit, drop-logging objects, slices, strings and formatted strings, checked
//! after every step against a model of the bump offset, the limit each budget sets, the
//! live allocations and the drop log. `Open` runs the following operations in a child
//! scope until the matching `Close`.
#![no_main]

use std::alloc::Layout;
use std::cell::RefCell;
use std::rc::Rc;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scope_stack::{AllocError, AllocErrorKind, LinearAllocator, ScopeStack, MAX_ALIGN};

const NAMES: [&str; 9] = ["root", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"];

#[derive(Arbitrary, Debug)]
struct Input {
    capacity: u16,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Open(Option<u16>),
    Close,
    /// A raw layout: size and log2 of the alignment (13 and up: past `MAX_ALIGN`).
    Layout(u16, u8),
    /// A request ending `delta % 3 - 1` bytes past the limit.
    Edge {
        align_log2: u8,
        delta: u8,
    },
    Object,
    Slice(Vec<u8>),
    Fmt(u32),
}

struct Noisy {
    id: u32,
    log: Rc<RefCell<Vec<u32>>>,
}

impl Drop for Noisy {
    fn drop(&mut self) {
        self.log.borrow_mut().push(self.id);
    }
}

struct Live {
    ptr: *const u8,
    bytes: Vec<u8>,
    depth: usize,
}

struct Frame {
    start: usize,
    budget: Option<usize>,
    limit: usize,
    made: Vec<u32>,
}

struct Model {
    base: usize,
    capacity: usize,
    cur: usize,
    frames: Vec<Frame>,
    live: Vec<Live>,
    /// Objects in order, with their addresses, for checking their ids.
    objects: Vec<(*const Noisy, u32, usize)>,
    next_id: u32,
    log: Rc<RefCell<Vec<u32>>>,
    dropped: usize,
    steps: usize,
}

impl Model {
    fn limit(&self) -> usize {
        self.frames.last().unwrap().limit
    }
    fn aligned(&self, align: usize) -> usize {
        ((self.base + self.cur + align - 1) & !(align - 1)) - self.base
    }
    fn fits(&self, size: usize, align: usize) -> bool {
        size == 0 || self.aligned(align) + size <= self.limit()
    }
    fn check_error(&self, e: &AllocError, size: usize, align: usize) {
        let mut want = (AllocErrorKind::OutOfMemory, NAMES[self.frames.len() - 1]);
        if self.aligned(align) + size <= self.capacity {
            if let Some(d) = (0..self.frames.len()).rev().find(|&d| {
                let f = &self.frames[d];
                f.budget.is_some_and(|b| f.start + b == self.limit())
            }) {
                want = (AllocErrorKind::BudgetExceeded, NAMES[d]);
            }
        }
        assert_eq!((e.kind(), e.scope_name()), want, "{e}");
        assert_eq!((e.size(), e.align()), (size, align));
        assert_eq!(e.remaining(), self.limit() - self.cur);
    }
    /// A new allocation `[ptr, ptr + len)` lies in `[from, cur)` and overlaps nothing.
    fn add(&mut self, ptr: *const u8, bytes: Vec<u8>, from: usize) {
        let len = bytes.len();
        if len > 0 {
            let at = ptr as usize - self.base;
            assert!(
                at >= from && at + len <= self.cur,
                "{at}+{len} outside {from}..{}",
                self.cur
            );
            for l in &self.live {
                let a = l.ptr as usize;
                assert!(
                    ptr as usize >= a + l.bytes.len() || ptr as usize + len <= a,
                    "overlap"
                );
            }
        }
        self.live.push(Live {
            ptr,
            bytes,
            depth: self.frames.len() - 1,
        });
    }
    fn check(&self, scope: &ScopeStack<'_>) {
        assert_eq!(scope.allocator().used(), self.cur);
        assert_eq!(scope.used(), self.cur - self.frames.last().unwrap().start);
        for l in &self.live {
            // SAFETY: live allocation of `bytes.len()` bytes; nothing else writes it.
            let got = unsafe { std::slice::from_raw_parts(l.ptr, l.bytes.len()) };
            assert_eq!(got, &l.bytes[..]);
        }
        for &(p, id, _) in &self.objects {
            // SAFETY: the object's scope is open.
            assert_eq!(unsafe { (*p).id }, id);
        }
        assert_eq!(
            self.log.borrow().len(),
            self.dropped,
            "a drop happened early"
        );
    }
}

fn run(scope: &mut ScopeStack<'_>, ops: &[Op], at: &mut usize, m: &mut Model) {
    let depth = m.frames.len() - 1;
    while *at < ops.len() && m.steps < 3000 {
        let op = &ops[*at];
        *at += 1;
        m.steps += 1;
        let from = m.cur;
        match *op {
            Op::Close => {
                if depth > 0 {
                    return;
                }
            }
            Op::Open(budget) => {
                if depth + 1 == NAMES.len() {
                    continue;
                }
                let start = m.cur;
                let budget = budget.map(|b| b as usize % 4096);
                let limit = match budget {
                    Some(b) if start + b < m.limit() => start + b,
                    _ => m.limit(),
                };
                m.frames.push(Frame {
                    start,
                    budget,
                    limit,
                    made: Vec::new(),
                });
                let name = NAMES[depth + 1];
                match budget {
                    Some(b) => scope.scope_with_budget(name, b, |c| run(c, ops, at, m)),
                    None => scope.scope(name, |c| run(c, ops, at, m)),
                }
                let frame = m.frames.pop().unwrap();
                let want: Vec<u32> = frame.made.iter().rev().copied().collect();
                assert_eq!(&m.log.borrow()[m.dropped..], &want[..], "drop order");
                m.dropped += want.len();
                m.live.retain(|l| l.depth <= depth);
                m.objects.retain(|o| o.2 <= depth);
                m.cur = start;
            }
            Op::Layout(size, align_log2) => {
                let (size, align) = (size as usize % 1024, 1usize << (align_log2 % 14));
                let layout = Layout::from_size_align(size, align).unwrap();
                if align > MAX_ALIGN {
                    let e = scope.try_alloc_layout(layout).unwrap_err();
                    assert_eq!(e.kind(), AllocErrorKind::AlignmentTooLarge);
                } else if m.fits(size, align) {
                    let p = scope.try_alloc_layout(layout).unwrap().as_ptr();
                    assert_eq!(p as usize % align, 0);
                    if size > 0 {
                        m.cur = m.aligned(align) + size;
                        let bytes: Vec<u8> = (0..size).map(|i| (i as u8) ^ align_log2).collect();
                        // SAFETY: fresh allocation of `size` bytes.
                        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, size) };
                        m.add(p, bytes, from);
                    }
                } else {
                    m.check_error(&scope.try_alloc_layout(layout).unwrap_err(), size, align);
                }
            }
            Op::Edge { align_log2, delta } => {
                let align = 1usize << (align_log2 % 13);
                let size =
                    m.limit() as isize - m.aligned(align) as isize + (delta % 3) as isize - 1;
                if size <= 0 {
                    continue;
                }
                let size = size as usize;
                match scope.try_alloc_raw(size, align) {
                    Ok(p) => {
                        assert!(delta % 3 <= 1);
                        m.cur = m.aligned(align) + size;
                        assert_eq!(p.as_ptr() as usize - m.base + size, m.cur);
                        // SAFETY: fresh allocation of `size` bytes.
                        unsafe { std::ptr::write_bytes(p.as_ptr(), 0xee, size) };
                        m.add(p.as_ptr(), vec![0xee; size], from);
                    }
                    Err(e) => {
                        assert_eq!(delta % 3, 2);
                        m.check_error(&e, size, align);
                    }
                }
            }
            Op::Object => {
                let id = m.next_id;
                m.next_id += 1;
                match scope.try_new_object(Noisy {
                    id,
                    log: m.log.clone(),
                }) {
                    Ok(p) => {
                        let p: *const Noisy = p;
                        m.cur = scope.allocator().used();
                        assert!(m.cur <= m.limit());
                        let at = p as usize - m.base;
                        assert!(at >= from && at + size_of::<Noisy>() <= m.cur);
                        for l in &m.live {
                            let a = l.ptr as usize;
                            assert!(
                                p as usize >= a + l.bytes.len()
                                    || p as usize + size_of::<Noisy>() <= a
                            );
                        }
                        m.objects.push((p, id, depth));
                        m.frames.last_mut().unwrap().made.push(id);
                    }
                    Err(e) => {
                        assert!(m.limit() - m.cur < 2 * size_of::<Noisy>() + 64);
                        assert_eq!(e.error.remaining(), m.limit() - m.cur);
                        drop(e.into_value());
                        assert_eq!(m.log.borrow_mut().pop(), Some(id));
                    }
                }
            }
            Op::Slice(ref bytes) => {
                if m.fits(bytes.len(), 1) {
                    let s = scope.try_alloc_slice_copy(bytes).unwrap();
                    m.cur += bytes.len();
                    m.add(s.as_ptr(), bytes.clone(), from);
                } else {
                    m.check_error(
                        &scope.try_alloc_slice_copy(bytes).unwrap_err(),
                        bytes.len(),
                        1,
                    );
                }
            }
            Op::Fmt(v) => {
                let want = format!("<{v:x}>");
                match scope.try_alloc_fmt(format_args!("<{v:x}>")) {
                    Ok(s) => {
                        assert!(m.fits(want.len(), 1));
                        assert_eq!(&*s, want);
                        m.cur += want.len();
                        m.add(s.as_ptr(), want.into_bytes(), from);
                    }
                    Err(e) => {
                        assert!(!m.fits(want.len(), 1));
                        assert!(matches!(
                            e.kind(),
                            AllocErrorKind::OutOfMemory | AllocErrorKind::BudgetExceeded
                        ));
                    }
                }
            }
        }
        m.check(scope);
    }
}

fuzz_target!(|input: Input| {
    let capacity = input.capacity as usize % 16384 + 1;
    let mut memory = LinearAllocator::with_capacity(capacity).unwrap();
    let base = memory.scope("probe", |s| s.alloc_raw(1, 1).as_ptr() as usize);
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut m = Model {
        base,
        capacity,
        cur: 0,
        frames: vec![Frame {
            start: 0,
            budget: None,
            limit: capacity,
            made: Vec::new(),
        }],
        live: Vec::new(),
        objects: Vec::new(),
        next_id: 0,
        log: log.clone(),
        dropped: 0,
        steps: 0,
    };
    let mut at = 0;
    memory.scope("root", |root| run(root, &input.ops, &mut at, &mut m));
    assert_eq!(memory.used(), 0);
    let want: Vec<u32> = m.frames[0].made.iter().rev().copied().collect();
    assert_eq!(
        &log.borrow()[m.dropped..],
        &want[..],
        "drop order at the root"
    );
});
