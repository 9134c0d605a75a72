// Rule 10: a slot built through a concurrent scope crosses threads only when its
// root is `Send`.
use std::rc::Rc;

use scope_stack::{slot_root, LinearAllocator};

slot_root!(struct Counted = for<'s> Rc<u32>);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("frames", 1, 16 << 10);
        let loaded = slots.load_concurrent::<Counted>("frame", |_| Rc::new(1)).unwrap();
        std::thread::scope(|t| {
            t.spawn(move || drop(loaded));
        });
    });
}
