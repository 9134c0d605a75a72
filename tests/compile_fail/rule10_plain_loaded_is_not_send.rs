// Rule 10: a slot loaded through a plain scope cannot cross threads (its scope may
// hold values whose destructors must run on this thread).
use scope_stack::{slot_root, LinearAllocator};

slot_root!(struct Unit = for<'s> ());

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let loaded = slots.load::<Unit>("level", |_| ()).unwrap();
        std::thread::scope(|t| {
            t.spawn(move || drop(loaded));
        });
    });
}
