// Rule 1: a collection that allocates from a scope cannot outlive it.
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    let v = memory.scope("level", |level| {
        let mut v = allocator_api2::vec::Vec::new_in(&**level);
        v.push(1u8);
        v
    });
    println!("{}", v.len());
}
