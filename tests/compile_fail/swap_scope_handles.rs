// Scope handles of two blocks cannot be swapped to fool the rewind.
use scope_stack::LinearAllocator;

fn main() {
    let mut a = LinearAllocator::with_capacity(64).unwrap();
    let mut b = LinearAllocator::with_capacity(64).unwrap();
    a.scope("a", |sa| {
        b.scope("b", |sb| {
            core::mem::swap(&mut **sa, &mut **sb);
        });
    });
}
