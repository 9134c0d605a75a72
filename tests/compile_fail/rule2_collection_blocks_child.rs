// Rule 2: while a collection borrows a scope, the scope cannot open a child (which could
// otherwise rewind memory under the collection's last allocation).
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    memory.scope("level", |level| {
        let mut v = allocator_api2::vec::Vec::new_in(&**level);
        v.push(1u8);
        level.scope("frame", |frame| {
            frame.new_pod(3u8);
        });
        v.push(2u8);
    });
}
