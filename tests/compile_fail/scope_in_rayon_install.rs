// Frame code run inside a rayon pool's `install` cannot capture the frame's scope: the
// error names `NotThreadSafe`, whose docs explain the rule and the fix.
use scope_stack::LinearAllocator;

fn main() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("frame", |frame| {
        pool.install(|| {
            let hits = frame.new_pod(0u32);
            *hits += 1;
        });
    });
}
