// Rule 10: `with` lends `&'y Of<'x>`, a borrow shorter than the root's lifetime, so a
// `Cell` in the root cannot be set to a reference into the root itself.
use core::cell::Cell;
use scope_stack::{slot_root, LinearAllocator};

struct Node<'s> {
    owned: Box<str>,
    view: Cell<&'s str>,
}
slot_root!(struct NodeRoot => Node);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let mut l = slots
            .load::<NodeRoot>("a", |_| Node { owned: "x".repeat(64).into(), view: Cell::new("") })
            .unwrap();
        l.with(|n| n.view.set(&n.owned));
        l.with_mut(|n, _| n.owned = "".into());
        l.with(|n| println!("{}", n.view.get()));
    });
}
