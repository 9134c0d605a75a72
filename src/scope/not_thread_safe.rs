//! [`NotThreadSafe`]: the one name the compiler gives when a scope handle is moved or
//! shared across threads.
//!
//! The `Send` and `Sync` impls of `ScopeStack` (in `crate::scope`) and `LocalScope` (in
//! `crate::concurrent`) apply only where `*mut NotThreadSafe<'s>` is `Send` (or
//! `Sync`), which it never is (no raw pointer is), so a scope handle stays neither
//! `Send` nor `Sync`, exactly as its fields (a `Cell`-based cursor and record) would
//! make it. What the impls change is the compiler's error: it names the unmet bound,
//! this documented type, once, instead of every private field type. Invariant: this
//! module imports nothing of the crate, and the type stays neither `Send` nor `Sync`.

use core::marker::PhantomData;

/// The reason a scope handle cannot cross threads; it appears in compiler errors only.
///
/// [`ScopeStack`](crate::ScopeStack), [`Scope`](crate::Scope) and
/// [`LocalScope`](crate::LocalScope) belong to the thread that uses them: they bump a
/// plain (non-atomic) pointer and link finalizers without locks. They are neither
/// `Send` nor `Sync`, and when code tries to send or share one (a closure given to
/// `std::thread::spawn`, `rayon::join` or `rayon::ThreadPool::install` that captures
/// it) the compiler says so by naming this type:
///
/// ```text
/// error[E0277]: `*mut NotThreadSafe<'_>` cannot be shared between threads safely
///   = note: required for `ScopeStack<'_>` to implement `Sync`
/// ```
///
/// **The fix**: keep the scope on its thread and hand the workers a
/// [`ConcurrentScope`](crate::ConcurrentScope), which any number of threads share
/// (`&ConcurrentScope` is `Send + Sync`; each worker may take a
/// [`local`](crate::ConcurrentScope::local) handle on its own thread). Open it where the
/// parallel part begins, and put the thread pool's `install` (or `std::thread::scope`)
/// inside it. What the workers place lives until the concurrent scope closes, so the
/// opening thread reads their results after the join.
///
/// What crosses threads: `&ConcurrentScope`, `&Pool` (a pool carved from any scope),
/// and the values a scope hands out when they are `Send`/`Sync` themselves (a `&'s [T]`
/// of `Sync` elements, say); `&Slots`, and a `Loaded` built through a concurrent scope
/// (`load_concurrent`). What does not: `ScopeStack`, `Scope` and `LocalScope`.
///
/// This does not compile (the scope is captured by a worker):
///
/// ```compile_fail,E0277
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("frame", |frame| {
///     std::thread::scope(|t| {
///         t.spawn(|| *frame.new_pod(1u32)); // `*mut NotThreadSafe` cannot be shared
///     });
/// });
/// ```
///
/// This does: the workers get a concurrent scope, and the frame reads what they made.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("frame", |frame| {
///     let total = frame.scope_concurrent("jobs", |jobs| {
///         let parts: Vec<&[u32]> = std::thread::scope(|t| {
///             let workers: Vec<_> = (0..2u32)
///                 .map(|w| t.spawn(move || &*jobs.local().alloc_slice_fill_with(4, |i| w + i as u32)))
///                 .collect();
///             workers.into_iter().map(|w| w.join().unwrap()).collect()
///         });
///         parts.iter().flat_map(|p| p.iter()).sum::<u32>()
///     });
///     assert_eq!(total, (0 + 1 + 2 + 3) + (1 + 2 + 3 + 4));
///     frame.new_pod(total); // the frame allocates again once the workers are joined
/// });
/// ```
///
/// You never hold a value of this type: it has no constructor. It is neither `Send`
/// nor `Sync` itself. The lifetime is the scope's; it only keeps the compiler from
/// treating the bound as a constant.
pub struct NotThreadSafe<'s> {
    _not_send_or_sync: PhantomData<(&'s (), *mut ())>,
}

impl core::fmt::Debug for NotThreadSafe<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("NotThreadSafe")
    }
}
