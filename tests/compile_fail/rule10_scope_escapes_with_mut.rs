// Rule 10: the slot's scope lent by `with_mut` cannot leave the closure.
use scope_stack::{slot_root, LinearAllocator, ScopeStack};

slot_root!(struct Unit = for<'s> ());

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let mut loaded = slots.load::<Unit>("level", |_| ()).unwrap();
        let mut kept: Option<&ScopeStack<'_>> = None;
        loaded.with_mut(|_, scope| kept = Some(scope));
        drop(loaded);
        kept.unwrap().new_pod(1u8);
    });
}
