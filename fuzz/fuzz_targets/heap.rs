//! `Heap` through allocator-api2's `Allocator` on `&Heap`: allocations (any size the
//! heap could hold, alignments up to 4096, zero-sized ones among them), grows and
//! shrinks (same alignment or another one), frees, checked after every step against a
//! model: live blocks never overlap and keep their alignment, each keeps its contents
//! (a fill byte written when it was made or resized) across resizes, `used()` and
//! `live()` are exact, and running out is an error that changes nothing. At the end
//! everything is freed and the heap's free space merges back to what it was.
#![no_main]

use std::alloc::Layout;
use std::ptr::NonNull;

use allocator_api2::alloc::Allocator;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scope_stack::{Heap, LinearAllocator};

#[derive(Arbitrary, Debug)]
struct Input {
    /// The heap's size in KiB, 1 to 64.
    kib: u8,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// Allocate `size` bytes aligned to `1 << (align_log % 13)`.
    Alloc { size: u16, align_log: u8 },
    /// Grow or shrink block `which` (of the live ones) to `size` bytes with the same
    /// alignment, or another one when `realign`.
    Resize {
        which: u8,
        size: u16,
        realign: bool,
        align_log: u8,
    },
    /// Free block `which`.
    Free(u8),
}

/// A block the model says is live.
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
    fill: u8,
}

fn align(log: u8) -> usize {
    1 << (log % 13)
}

/// Writes `fill` over the block.
fn paint(ptr: NonNull<u8>, size: usize, fill: u8) {
    // SAFETY: `ptr` is a live block of at least `size` bytes, the model's alone.
    unsafe { ptr.as_ptr().write_bytes(fill, size) };
}

/// Whether the first `n` bytes of the block are all `fill`.
fn holds(ptr: NonNull<u8>, n: usize, fill: u8) -> bool {
    // SAFETY: `ptr` is a live block of at least `n` bytes, initialised by `paint`.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), n) };
    bytes.iter().all(|&b| b == fill)
}

fn check(heap: &Heap, blocks: &[Block]) {
    let used: usize = blocks.iter().map(|b| b.layout.size()).sum();
    let live = blocks.iter().filter(|b| b.layout.size() != 0).count();
    assert_eq!(heap.used(), used);
    assert_eq!(heap.live(), live);
    assert!(heap.high_water() >= used);
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for b in blocks {
        assert_eq!(b.ptr.as_ptr() as usize % b.layout.align(), 0, "misaligned");
        assert!(holds(b.ptr, b.layout.size(), b.fill), "contents lost");
        if b.layout.size() != 0 {
            spans.push((b.ptr.as_ptr() as usize, b.layout.size()));
        }
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "blocks overlap: {w:?}");
    }
}

fuzz_target!(|input: Input| {
    let bytes = (1 + input.kib as usize % 64) << 10;
    let mut memory = LinearAllocator::with_capacity(bytes + (64 << 10)).unwrap();
    memory.scope("fuzz", |scope| {
        let heap = scope.new_heap(bytes);
        let empty_free = heap.free();
        let mut blocks: Vec<Block> = Vec::new();
        let mut fills: u8 = 0;
        let mut next_fill = || {
            fills = fills.wrapping_add(1);
            fills
        };
        for op in input.ops.iter().take(256) {
            match *op {
                Op::Alloc { size, align_log } => {
                    let layout = Layout::from_size_align(size as usize, align(align_log)).unwrap();
                    let largest = heap.largest_free();
                    match heap.allocate(layout) {
                        Ok(p) => {
                            assert_eq!(p.len(), layout.size());
                            assert!(layout.size() == 0 || layout.size() <= largest);
                            let fill = next_fill();
                            paint(p.cast(), layout.size(), fill);
                            blocks.push(Block {
                                ptr: p.cast(),
                                layout,
                                fill,
                            });
                        }
                        Err(_) => assert!(layout.size() != 0, "a zero-sized request failed"),
                    }
                }
                Op::Resize {
                    which,
                    size,
                    realign,
                    align_log,
                } => {
                    if blocks.is_empty() {
                        continue;
                    }
                    let i = which as usize % blocks.len();
                    let b = &blocks[i];
                    let new_align = if realign {
                        align(align_log)
                    } else {
                        b.layout.align()
                    };
                    let new = Layout::from_size_align(size as usize, new_align).unwrap();
                    let old = b.layout;
                    // SAFETY: `b` is live with `old`; grow when the size does not
                    // drop, else shrink, as each requires.
                    let result = unsafe {
                        if new.size() >= old.size() {
                            heap.grow(b.ptr, old, new)
                        } else {
                            heap.shrink(b.ptr, old, new)
                        }
                    };
                    match result {
                        Ok(p) => {
                            assert_eq!(p.len(), new.size());
                            let kept = old.size().min(new.size());
                            assert!(holds(p.cast(), kept, b.fill), "resize lost contents");
                            let fill = next_fill();
                            paint(p.cast(), new.size(), fill);
                            blocks[i] = Block {
                                ptr: p.cast(),
                                layout: new,
                                fill,
                            };
                        }
                        // Only a grow or a move to another alignment may fail; the
                        // block is intact (checked below).
                        Err(_) => assert!(new.size() > old.size() || new.align() != old.align()),
                    }
                }
                Op::Free(which) => {
                    if blocks.is_empty() {
                        continue;
                    }
                    let b = blocks.swap_remove(which as usize % blocks.len());
                    // SAFETY: `b` is live with this layout, and leaves the model.
                    unsafe { heap.deallocate(b.ptr, b.layout) };
                }
            }
            check(heap, &blocks);
        }
        for b in blocks.drain(..) {
            // SAFETY: as for `Op::Free`.
            unsafe { heap.deallocate(b.ptr, b.layout) };
        }
        assert_eq!((heap.used(), heap.live()), (0, 0));
        assert_eq!(heap.free(), empty_free, "free blocks did not merge back");
    });
});
