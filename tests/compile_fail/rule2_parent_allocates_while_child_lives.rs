// Rule 2: only the innermost live scope allocates.
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(64).unwrap();
    memory.scope("systems", |systems| {
        systems.scope("level", |level| {
            systems.new_pod(1u8);
            level.new_pod(2u8);
        });
    });
}
