// Rule 4: new_pod takes only types that need no drop.
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    memory.scope("level", |level| {
        level.new_pod(String::from("needs drop"));
    });
}
