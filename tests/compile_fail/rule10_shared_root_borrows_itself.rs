// Rule 10, on the `Shared` kind: `with_mut` lends `&'y mut Of<'x>` there too, so a
// root built through a concurrent scope cannot borrow itself and be read on another
// thread after the borrowed data is freed.
use scope_stack::{slot_root, LinearAllocator};

struct Node<'s> {
    owned: String,
    view: &'s str,
}
slot_root!(struct NodeRoot => Node);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("frames", 1, 64 << 10);
        let mut l = slots
            .load_concurrent::<NodeRoot>("a", |_| Node { owned: "x".repeat(64), view: "" })
            .unwrap();
        l.with_mut(|n, _| n.view = &n.owned);
        l.with_mut(|n, _| n.owned = String::new());
        std::thread::scope(|t| {
            t.spawn(|| l.with(|n| println!("{}", n.view)));
        });
    });
}
