// Rule 10: a root's borrow is never the root's own lifetime. `with_mut` lends
// `&'y mut Of<'x>`, so a closure cannot store a reference to the root's own data
// (here, the heap text a `String` field owns) inside the root: a later call could
// replace that data while the reference stays.
use scope_stack::{slot_root, LinearAllocator};

struct Node<'s> {
    owned: String,
    view: &'s str,
}
slot_root!(struct NodeRoot => Node);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let mut l = slots
            .load::<NodeRoot>("a", |_| Node { owned: "x".repeat(64), view: "" })
            .unwrap();
        l.with_mut(|n, _| n.view = &n.owned);
        l.with_mut(|n, _| n.owned = String::new());
        l.with(|n| println!("{}", n.view));
    });
}
