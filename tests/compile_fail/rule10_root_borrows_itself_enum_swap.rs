// Rule 10: a reference into an enum's payload cannot be stored in the root, so swapping
// the variant under it (which would give a `String` made of whatever the other variant
// held) is impossible.
use scope_stack::{slot_root, LinearAllocator};

enum Either {
    Text(String),
    Words([usize; 3]),
}
struct Node<'s> {
    either: Either,
    view: Option<&'s String>,
}
slot_root!(struct NodeRoot => Node);

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let mut l = slots
            .load::<NodeRoot>("a", |_| Node { either: Either::Text("x".into()), view: None })
            .unwrap();
        l.with_mut(|n, _| {
            if let Either::Text(text) = &n.either {
                n.view = Some(text);
            }
        });
        l.with_mut(|n, _| n.either = Either::Words([8, 1 << 40, 1 << 40]));
        l.with(|n| println!("{:?}", n.view));
    });
}
