// Rule 10: no reference into a slot outlives its `Loaded`: `with` is higher-ranked.
use scope_stack::{slot_root, LinearAllocator};

slot_root!(struct Text = for<'s> &'s str);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let loaded = slots.load::<Text>("level", |s| &*s.alloc_str("forest")).unwrap();
        let name: &str = loaded.with(|text| *text);
        drop(loaded);
        println!("{name}");
    });
}
