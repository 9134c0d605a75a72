// Rule 1: a reference cannot escape its scope's closure as the return value.
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(64).unwrap();
    let x = memory.scope("level", |level| level.new_object(String::from("gone")));
    println!("{x}");
}
