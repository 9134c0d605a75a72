// The allowed twins: parent values and caller data may be used and stored in a child.
use scope_stack::{LinearAllocator, ScopeStack};

fn helper<'s>(scope: &ScopeStack<'s>) -> &'s mut u32 {
    scope.new_pod(5)
}

fn main() {
    let caller = String::from("caller data");
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("systems", |systems| {
        let config = systems.new_pod(60u32);
        let name = systems.new_object(String::from("frog"));
        let from_helper = helper(systems);
        systems.scope("level", |level| {
            *config += 1;
            let refs = level.alloc_slice_copy(&[&*config, &*from_helper]);
            let held = level.new_pod((name.as_str(), caller.as_str()));
            assert_eq!(*refs[0] + *refs[1], 66);
            assert_eq!(held.1, "caller data");
        });
        // The parent allocates again once the child is gone.
        systems.new_pod(1u8);
    });
    // A value with drop that borrows only 'static data is fine in new_object.
    memory.scope("static", |s| {
        s.new_object(vec!["static str"]);
    });
    // Values handed out by a scope can be shared with threads.
    memory.scope("threads", |s| {
        let counters = s.alloc_slice_fill_with(2, |_| std::sync::atomic::AtomicU32::new(0));
        std::thread::scope(|t| {
            for c in counters.iter() {
                t.spawn(move || c.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            }
        });
    });
}
