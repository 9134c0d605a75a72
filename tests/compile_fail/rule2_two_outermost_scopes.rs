// Rule 2: two outermost scopes on one block cannot be live at once.
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(64).unwrap();
    memory.scope("a", |a| {
        memory.scope("b", |b| {
            b.new_pod(1u8);
        });
        a.new_pod(2u8);
    });
}
