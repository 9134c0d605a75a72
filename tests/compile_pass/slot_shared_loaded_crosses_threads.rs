// The allowed twin of rule10_plain_loaded_is_not_send: a slot built through a
// concurrent scope with a `Send` root is handed to another thread and dropped there.
use scope_stack::{slot_root, LinearAllocator};

struct Frame<'s> {
    draws: &'s [u32],
}
slot_root!(struct FrameRoot = for<'s> Frame<'s>);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("frames", 1, 16 << 10);
        let frame = slots
            .load_concurrent::<FrameRoot>("frame", |jobs| Frame {
                draws: jobs.alloc_slice_copy(&[1, 2, 3]),
            })
            .unwrap();
        std::thread::scope(|t| {
            t.spawn(move || assert_eq!(frame.with(|f| f.draws.len()), 3));
        });
    });
}
