// Rule 10: a `Loaded` cannot outlive the scope that carved its slots.
use scope_stack::{slot_root, LinearAllocator};

slot_root!(struct Unit = for<'s> ());

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let loaded = memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        slots.load::<Unit>("level", |_| ()).unwrap()
    });
    drop(loaded);
}
