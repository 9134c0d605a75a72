// Rule 1: a reference cannot escape its scope's closure through a captured variable.
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(64).unwrap();
    let mut escaped: Option<&mut u32> = None;
    memory.scope("level", |level| {
        escaped = Some(level.new_pod(7));
    });
    println!("{:?}", escaped);
}
