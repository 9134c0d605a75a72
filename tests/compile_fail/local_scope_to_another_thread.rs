// A concurrent scope's per-thread handle stays on its thread; the error names
// `NotThreadSafe` (share `&ConcurrentScope` and call `local()` on each worker instead).
use scope_stack::LinearAllocator;

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs| {
            let here = jobs.local();
            rayon::join(|| *here.new_pod(1u8), || *jobs.new_pod(2u8));
        });
    });
}
