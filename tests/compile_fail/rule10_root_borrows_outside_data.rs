// Rule 10: a root may borrow only from its own slot (or `'static` data): a local
// that dies before the `Loaded` cannot be put in it.
use scope_stack::{slot_root, LinearAllocator};

slot_root!(struct Text = for<'s> &'s str);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let local = String::from("short-lived");
        let loaded = slots.load::<Text>("level", |_| local.as_str()).unwrap();
        drop(local);
        loaded.with(|t| println!("{t}"));
    });
}
