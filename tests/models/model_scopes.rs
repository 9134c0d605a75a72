//! Model-based test of the scope API: random sequences of operations (nested scopes,
//! budgets, values, slices, strings, raw layouts, requests at and past the end of the
//! memory, an `allocator_api2` `Vec`) checked after every step against a model of the
//! bump offset, the limits set by budgets, the live allocations and the drop log.
//!
//! Nested scopes are closures, so the flat list of operations is interpreted by a
//! recursive function: `Open` runs the rest of the list inside a child scope until the
//! matching `Close` (or the end of the list, which closes everything).
//!
//! Cases: `PROPTEST_CASES` (proptest reads it; 256 when unset), 6 under Miri. The
//! release CI step runs 10,000.

use std::alloc::Layout;
use std::cell::RefCell;
use std::rc::Rc;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::proptest_config::config;
use scope_stack::{AllocError, AllocErrorKind, LinearAllocator, ScopeStack, MAX_ALIGN};

/// Scope names by depth (the root is depth 0).
const NAMES: [&str; 9] = ["root", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"];
const MAX_DEPTH: usize = NAMES.len() - 1;

#[derive(Clone, Debug)]
enum VecOp {
    Push(u32),
    Reserve(u8),
    ShrinkToFit,
    Truncate(u8),
}

#[derive(Clone, Debug)]
enum Op {
    /// Open a child scope, with a byte budget when given.
    Open(Option<u16>),
    Close,
    Pod(u64),
    /// A value that logs its drop (gets a finalizer).
    Object,
    SliceCopy(Vec<u8>),
    /// `n` drop-logging values built by `alloc_slice_fill_with`.
    SliceFill(u8),
    Str(String),
    Fmt(u32, u16),
    /// A raw layout: size and log2 of the alignment (13 is past `MAX_ALIGN`).
    Layout(u16, u8),
    /// A request sized to end exactly `delta` bytes past the current limit (-1, 0: it
    /// fits; 1: it does not), in one of four forms.
    Edge {
        align_log2: u8,
        delta: i8,
        form: u8,
    },
    /// An `allocator_api2` `Vec<u32>` in the scope, driven and dropped.
    Vec(Vec<VecOp>),
}

fn vec_op() -> impl Strategy<Value = VecOp> {
    prop_oneof![
        4 => any::<u32>().prop_map(VecOp::Push),
        1 => any::<u8>().prop_map(VecOp::Reserve),
        1 => Just(VecOp::ShrinkToFit),
        1 => any::<u8>().prop_map(VecOp::Truncate),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::option::weighted(0.3, 0u16..2048).prop_map(Op::Open),
        2 => Just(Op::Close),
        2 => any::<u64>().prop_map(Op::Pod),
        2 => Just(Op::Object),
        2 => prop::collection::vec(any::<u8>(), 0..48).prop_map(Op::SliceCopy),
        1 => (0u8..6).prop_map(Op::SliceFill),
        1 => "[a-zé]{0,24}".prop_map(Op::Str),
        1 => (any::<u32>(), any::<u16>()).prop_map(|(a, b)| Op::Fmt(a, b)),
        3 => (0u16..600, 0u8..14).prop_map(|(s, a)| Op::Layout(s, a)),
        2 => (0u8..13, -1i8..=1, 0u8..4)
            .prop_map(|(align_log2, delta, form)| Op::Edge { align_log2, delta, form }),
        1 => prop::collection::vec(vec_op(), 0..24).prop_map(Op::Vec),
    ]
}

fn max_ops() -> usize {
    if cfg!(miri) {
        24
    } else {
        80
    }
}

/// A value that appends its id to a shared log when dropped.
struct Noisy {
    id: u32,
    log: Rc<RefCell<Vec<u32>>>,
}

impl Drop for Noisy {
    fn drop(&mut self) {
        self.log.borrow_mut().push(self.id);
    }
}

/// What a live allocation should still hold.
enum Content {
    Bytes(Vec<u8>),
    /// `Noisy` values with consecutive ids from the first.
    Noisy(u32),
}

struct Live {
    ptr: *const u8,
    len: usize,
    depth: usize,
    content: Content,
}

/// One open scope in the model.
struct Frame {
    start: usize,
    budget: Option<usize>,
    /// The limit (offset) in force while this scope is innermost.
    limit: usize,
    /// Ids of the drop-logging values made in this scope, in order, one group per call
    /// (a slice's elements form one group).
    made: Vec<Vec<u32>>,
}

struct Model {
    base: usize,
    capacity: usize,
    /// The bump offset from the start of the block.
    cur: usize,
    frames: Vec<Frame>,
    live: Vec<Live>,
    next_id: u32,
    log: Rc<RefCell<Vec<u32>>>,
    /// How many drops the log should hold by now.
    dropped: usize,
    /// Values refused by `try_new_object` (their ids were never placed).
    refused: u32,
}

fn align_up(x: usize, a: usize) -> usize {
    (x + a - 1) & !(a - 1)
}

impl Model {
    fn frame(&self) -> &Frame {
        self.frames.last().unwrap()
    }

    fn limit(&self) -> usize {
        self.frame().limit
    }

    /// The offset a request at `align` would start at.
    fn aligned(&self, align: usize) -> usize {
        align_up(self.base + self.cur, align) - self.base
    }

    /// Whether `size` bytes at `align` fit under the limit.
    fn fits(&self, size: usize, align: usize) -> bool {
        size == 0 || self.aligned(align) + size <= self.limit()
    }

    /// The error kind and scope name a refused request of `size` at `align` must have.
    fn refusal(&self, size: usize, align: usize) -> (AllocErrorKind, &'static str) {
        let fits_block = self.aligned(align) + size <= self.capacity;
        if fits_block {
            // The innermost scope whose budget set the limit in force.
            for (depth, f) in self.frames.iter().enumerate().rev() {
                if let Some(b) = f.budget {
                    if f.start + b == self.limit() {
                        return (AllocErrorKind::BudgetExceeded, NAMES[depth]);
                    }
                }
            }
        }
        (AllocErrorKind::OutOfMemory, NAMES[self.frames.len() - 1])
    }

    fn check_error(&self, e: &AllocError, size: usize, align: usize) -> Result<(), TestCaseError> {
        let (kind, name) = self.refusal(size, align);
        prop_assert_eq!(e.kind(), kind, "{}", e);
        prop_assert_eq!(e.scope_name(), name);
        prop_assert_eq!(e.size(), size);
        prop_assert_eq!(e.align(), align);
        prop_assert_eq!(e.remaining(), self.limit() - self.cur);
        prop_assert_eq!(e.capacity(), self.capacity);
        if kind == AllocErrorKind::BudgetExceeded {
            prop_assert!(e.budget().is_some());
        }
        Ok(())
    }

    /// Records a new live allocation after checking it lies in `[from, to)` of the block
    /// and overlaps no other live allocation.
    fn add(
        &mut self,
        ptr: *const u8,
        len: usize,
        from: usize,
        content: Content,
    ) -> Result<(), TestCaseError> {
        if len > 0 {
            let at = ptr as usize - self.base;
            prop_assert!(
                at >= from && at + len <= self.cur,
                "{at}+{len} not in {from}..{}",
                self.cur
            );
            for l in &self.live {
                let (a, b) = (l.ptr as usize, l.ptr as usize + l.len);
                prop_assert!(ptr as usize >= b || ptr as usize + len <= a, "overlap");
            }
        }
        let depth = self.frames.len() - 1;
        self.live.push(Live {
            ptr,
            len,
            depth,
            content,
        });
        Ok(())
    }

    fn noisy(&mut self) -> Noisy {
        let id = self.next_id;
        self.next_id += 1;
        Noisy {
            id,
            log: self.log.clone(),
        }
    }

    /// Every live allocation still holds what was put there; no drop happened early.
    fn check_live(&self) -> Result<(), TestCaseError> {
        for l in &self.live {
            match &l.content {
                Content::Bytes(want) => {
                    // SAFETY: the allocation is live (its scope is open) and `len` bytes
                    // long; nothing else writes it.
                    let got = unsafe { std::slice::from_raw_parts(l.ptr, l.len) };
                    prop_assert_eq!(got, &want[..]);
                }
                Content::Noisy(first) => {
                    let n = l.len / size_of::<Noisy>();
                    for i in 0..n {
                        // SAFETY: as above; `n` live `Noisy` values.
                        let id = unsafe { (*(l.ptr as *const Noisy).add(i)).id };
                        prop_assert_eq!(id, first + i as u32);
                    }
                }
            }
        }
        prop_assert_eq!(
            self.log.borrow().len(),
            self.dropped,
            "a drop happened early"
        );
        Ok(())
    }
}

/// The order a scope's values must drop in: newest call first; a slice's elements in
/// index order, as `drop_in_place` on a slice does (tests/suite/drop_order.rs documents it).
fn drop_order(made: &[Vec<u32>]) -> Vec<u32> {
    made.iter().rev().flatten().copied().collect()
}

/// Runs `ops` from `*at` in `scope` (the model's innermost frame) until a `Close` or the
/// end of the list.
fn run(
    scope: &mut ScopeStack<'_>,
    ops: &[Op],
    at: &mut usize,
    m: &mut Model,
) -> Result<(), TestCaseError> {
    let depth = m.frames.len() - 1;
    prop_assert_eq!(scope.depth() as usize, depth);
    prop_assert_eq!(scope.start_offset(), m.frame().start);
    while *at < ops.len() {
        let op = &ops[*at];
        *at += 1;
        let from = m.cur;
        match op {
            Op::Close => {
                if depth > 0 {
                    return Ok(());
                }
            }
            Op::Open(budget) => {
                if depth == MAX_DEPTH {
                    continue;
                }
                let start = m.cur;
                let limit = match budget {
                    Some(b) if start + (*b as usize) < m.limit() => start + *b as usize,
                    _ => m.limit(),
                };
                m.frames.push(Frame {
                    start,
                    budget: budget.map(usize::from),
                    limit,
                    made: Vec::new(),
                });
                let name = NAMES[depth + 1];
                let r = match budget {
                    Some(b) => scope.scope_with_budget(name, *b as usize, |child| {
                        prop_assert_eq!(child.used(), 0);
                        run(child, ops, at, m)
                    }),
                    None => scope.scope(name, |child| {
                        prop_assert_eq!(child.used(), 0);
                        run(child, ops, at, m)
                    }),
                };
                r?;
                // The child unwound: its values dropped newest first, the offset is back.
                let frame = m.frames.pop().unwrap();
                let want = drop_order(&frame.made);
                {
                    let log = m.log.borrow();
                    prop_assert_eq!(&log[m.dropped..], &want[..], "drop order");
                }
                m.dropped += want.len();
                m.live.retain(|l| l.depth <= depth);
                m.cur = start;
                prop_assert_eq!(scope.allocator().used(), start);
            }
            Op::Pod(v) => {
                if m.fits(8, 8) {
                    let p: *mut u64 = scope.new_pod(*v);
                    m.cur = m.aligned(8) + 8;
                    prop_assert_eq!(p as usize % 8, 0);
                    m.add(
                        p as *const u8,
                        8,
                        from,
                        Content::Bytes(v.to_ne_bytes().to_vec()),
                    )?;
                } else {
                    let e = scope.try_new_pod(*v).unwrap_err();
                    prop_assert_eq!(e.value, *v);
                    m.check_error(&e.error, 8, 8)?;
                }
            }
            Op::Object => {
                let obj = m.noisy();
                let id = obj.id;
                match scope.try_new_object(obj) {
                    Ok(p) => {
                        let p: *mut Noisy = p;
                        m.cur = scope.allocator().used();
                        prop_assert!(m.cur <= m.limit());
                        prop_assert_eq!(p as usize % align_of::<Noisy>(), 0);
                        m.add(p as *const u8, size_of::<Noisy>(), from, Content::Noisy(id))?;
                        m.frames.last_mut().unwrap().made.push(vec![id]);
                    }
                    Err(e) => {
                        // Refused only when the value and its finalizer record cannot fit.
                        let tight = m.limit() - m.cur < 2 * size_of::<Noisy>() + 64;
                        prop_assert!(tight, "refused with {} bytes left", m.limit() - m.cur);
                        prop_assert!(matches!(
                            e.error.kind(),
                            AllocErrorKind::OutOfMemory | AllocErrorKind::BudgetExceeded
                        ));
                        prop_assert_eq!(e.error.remaining(), m.limit() - m.cur);
                        let v = e.into_value();
                        prop_assert_eq!(v.id, id);
                        drop(v);
                        prop_assert_eq!(m.log.borrow_mut().pop(), Some(id));
                        m.refused += 1;
                    }
                }
            }
            Op::SliceCopy(bytes) => {
                if m.fits(bytes.len(), 1) {
                    let s = scope.alloc_slice_copy(bytes);
                    m.cur += bytes.len();
                    m.add(s.as_ptr(), s.len(), from, Content::Bytes(bytes.clone()))?;
                } else {
                    let e = scope.try_alloc_slice_copy(bytes).unwrap_err();
                    m.check_error(&e, bytes.len(), 1)?;
                }
            }
            Op::SliceFill(n) => {
                let n = *n as usize;
                let first = m.next_id;
                let log = m.log.clone();
                let mut calls = 0;
                let r = scope.try_alloc_slice_fill_with(n, |i| {
                    calls += 1;
                    Noisy {
                        id: first + i as u32,
                        log: log.clone(),
                    }
                });
                match r {
                    Ok(s) => {
                        prop_assert_eq!(calls, n);
                        m.next_id += n as u32;
                        let (ptr, len) = (s.as_ptr() as *const u8, std::mem::size_of_val(s));
                        m.cur = scope.allocator().used();
                        prop_assert!(m.cur <= m.limit());
                        m.add(ptr, len, from, Content::Noisy(first))?;
                        m.frames
                            .last_mut()
                            .unwrap()
                            .made
                            .push((first..first + n as u32).collect());
                    }
                    Err(e) => {
                        prop_assert_eq!(calls, 0, "f called for a refused slice");
                        prop_assert!(n > 0);
                        prop_assert!(matches!(
                            e.kind(),
                            AllocErrorKind::OutOfMemory | AllocErrorKind::BudgetExceeded
                        ));
                        prop_assert_eq!(e.remaining(), m.limit() - m.cur);
                    }
                }
            }
            Op::Str(s) => {
                if m.fits(s.len(), 1) {
                    let got = scope.alloc_str(s);
                    prop_assert_eq!(&*got, s.as_str());
                    m.cur += s.len();
                    m.add(
                        got.as_ptr(),
                        got.len(),
                        from,
                        Content::Bytes(s.clone().into_bytes()),
                    )?;
                } else {
                    let e = scope.try_alloc_str(s).unwrap_err();
                    m.check_error(&e, s.len(), 1)?;
                }
            }
            Op::Fmt(a, b) => {
                let want = format!("{a}:{b:x}");
                match scope.try_alloc_fmt(format_args!("{a}:{b:x}")) {
                    Ok(got) => {
                        prop_assert!(m.fits(want.len(), 1));
                        prop_assert_eq!(&*got, want.as_str());
                        m.cur += want.len();
                        m.add(
                            got.as_ptr(),
                            got.len(),
                            from,
                            Content::Bytes(want.into_bytes()),
                        )?;
                    }
                    Err(e) => {
                        prop_assert!(!m.fits(want.len(), 1));
                        prop_assert!(matches!(
                            e.kind(),
                            AllocErrorKind::OutOfMemory | AllocErrorKind::BudgetExceeded
                        ));
                    }
                }
            }
            Op::Layout(size, align_log2) => {
                let (size, align) = (*size as usize, 1usize << align_log2);
                let layout = Layout::from_size_align(size, align).unwrap();
                if align > MAX_ALIGN {
                    let e = scope.try_alloc_layout(layout).unwrap_err();
                    prop_assert_eq!(e.kind(), AllocErrorKind::AlignmentTooLarge);
                    prop_assert_eq!((e.size(), e.align()), (size, align));
                } else if m.fits(size, align) {
                    let p = scope.alloc_layout(layout).as_ptr();
                    prop_assert_eq!(p as usize % align, 0);
                    if size > 0 {
                        m.cur = m.aligned(align) + size;
                        let fill: Vec<u8> =
                            (0..size).map(|i| (i as u8) ^ (*align_log2 * 17)).collect();
                        // SAFETY: `p` is a fresh allocation of `size` bytes.
                        unsafe { std::ptr::copy_nonoverlapping(fill.as_ptr(), p, size) };
                        m.add(p, size, from, Content::Bytes(fill))?;
                    }
                } else {
                    let e = scope.try_alloc_layout(layout).unwrap_err();
                    m.check_error(&e, size, align)?;
                }
            }
            Op::Edge {
                align_log2,
                delta,
                form,
            } => {
                let align = if *form == 0 { 1usize << align_log2 } else { 1 };
                let aligned = m.aligned(align);
                let room = m.limit() as isize - aligned as isize;
                let size = room + *delta as isize;
                if size <= 0 {
                    continue;
                }
                let size = size as usize;
                let result = match form {
                    0 => scope
                        .try_alloc_layout(Layout::from_size_align(size, align).unwrap())
                        .map(|p| p.as_ptr() as *const u8),
                    1 => scope
                        .try_alloc_raw(size, 1)
                        .map(|p| p.as_ptr() as *const u8),
                    2 => scope
                        .try_alloc_slice_copy(&vec![0x5au8; size])
                        .map(|s| s.as_ptr()),
                    _ => scope.try_alloc_str(&"z".repeat(size)).map(|s| s.as_ptr()),
                };
                match result {
                    Ok(p) => {
                        prop_assert!(*delta <= 0);
                        prop_assert_eq!(p as usize - m.base, aligned);
                        m.cur = aligned + size;
                        let fill = match form {
                            2 => vec![0x5a; size],
                            3 => vec![b'z'; size],
                            _ => {
                                // SAFETY: fresh allocation of `size` bytes.
                                unsafe { std::ptr::write_bytes(p as *mut u8, 0xa5, size) };
                                vec![0xa5; size]
                            }
                        };
                        m.add(p, size, from, Content::Bytes(fill))?;
                        if *delta == 0 {
                            prop_assert_eq!(m.cur, m.limit());
                        }
                    }
                    Err(e) => {
                        prop_assert_eq!(*delta, 1);
                        m.check_error(&e, size, align)?;
                    }
                }
            }
            Op::Vec(vops) => {
                run_vec(scope, vops, m)?;
            }
        }
        if !matches!(op, Op::Vec(_)) {
            prop_assert_eq!(scope.allocator().used(), m.cur);
        }
        prop_assert_eq!(scope.used(), m.cur - m.frame().start);
        m.check_live()?;
    }
    Ok(())
}

/// Drives an `allocator_api2` `Vec` in `scope` against a `std` `Vec`, then drops it.
fn run_vec(scope: &ScopeStack<'_>, vops: &[VecOp], m: &mut Model) -> Result<(), TestCaseError> {
    let from = m.cur;
    let limit = m.limit();
    let mut v: allocator_api2::vec::Vec<u32, &ScopeStack<'_>> =
        allocator_api2::vec::Vec::new_in(scope);
    let mut model: Vec<u32> = Vec::new();
    for vop in vops {
        match vop {
            VecOp::Push(x) => {
                if v.try_reserve(1).is_ok() {
                    v.push(*x);
                    model.push(*x);
                } else {
                    // Refused only when the memory cannot hold the grown buffer.
                    let want = (2 * v.capacity()).max(v.len() + 1).max(4);
                    prop_assert!(limit - from < want * 4 + 3);
                }
            }
            VecOp::Reserve(n) => {
                if v.try_reserve(*n as usize).is_ok() {
                    prop_assert!(v.capacity() >= v.len() + *n as usize);
                }
            }
            VecOp::ShrinkToFit => {
                v.shrink_to_fit();
                prop_assert!(v.capacity() >= v.len());
            }
            VecOp::Truncate(n) => {
                v.truncate(*n as usize);
                model.truncate(*n as usize);
            }
        }
        prop_assert_eq!(&v[..], &model[..]);
        if v.capacity() > 0 {
            let at = v.as_ptr() as usize - m.base;
            prop_assert!(at >= from && at + v.capacity() * 4 <= limit);
            prop_assert_eq!(at % 4, 0);
        }
        let used = scope.allocator().used();
        prop_assert!(used >= from && used <= limit);
        m.check_live()?;
    }
    drop(v);
    let used = scope.allocator().used();
    prop_assert!(used >= from && used <= limit);
    m.cur = used;
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn scopes_behave_like_the_model(
        capacity in prop_oneof![64usize..512, 512usize..8192],
        ops in prop::collection::vec(op(), 0..max_ops()),
    ) {
        let mut memory = LinearAllocator::with_capacity(capacity).unwrap();
        let base = memory.scope("probe", |s| s.alloc_raw(1, 1).as_ptr() as usize);
        prop_assert_eq!(memory.used(), 0);
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut m = Model {
            base,
            capacity,
            cur: 0,
            frames: vec![Frame { start: 0, budget: None, limit: capacity, made: Vec::new() }],
            live: Vec::new(),
            next_id: 0,
            log: log.clone(),
            dropped: 0,
            refused: 0,
        };
        let mut at = 0;
        memory.scope("root", |root| {
            // Run the whole list: a `Close` at the root is ignored.
            run(root, &ops, &mut at, &mut m)
        })?;
        prop_assert_eq!(memory.used(), 0);
        let want = drop_order(&m.frames[0].made);
        prop_assert_eq!(&log.borrow()[m.dropped..], &want[..], "drop order at the root");
        // Every value that was placed was dropped exactly once.
        prop_assert_eq!(log.borrow().len() as u32, m.next_id - m.refused);
        let mut ids = log.borrow().clone();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), log.borrow().len(), "a value was dropped twice");
    }
}
