// A scope handle stays on its thread; share the values it hands out instead.
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(64).unwrap();
    memory.scope("a", |a| {
        std::thread::scope(|t| {
            t.spawn(|| {
                a.new_pod(1u8);
            });
        });
    });
}
