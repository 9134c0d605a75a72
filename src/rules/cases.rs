//! The soundness rules' compile-time cases: each program below breaks a rule and must be
//! rejected by the compiler (a `compile_fail` doctest, with the error code where the
//! compiler gives one), and each "allowed twin" must build and run. They were
//! `tests/compile_fail/` and `tests/compile_pass/` (trybuild) until the README's
//! `cargo test` had to fit in 90 seconds: trybuild built the crate and every
//! dev-dependency a second time (40 of the 142 seconds on a fresh 2-core clone).
//! Doctests check the error code, not the whole message.
//!
//! This module exists only when rustdoc collects doctests (`cfg(doctest)`); the rules
//! themselves are stated in [`crate::rules`].

/// A concurrent scope's per-thread handle stays on its thread; the error names
/// `NotThreadSafe` (share `&ConcurrentScope` and call `local()` on each worker instead).
///
/// ```compile_fail,E0277
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("frame", |frame| {
///         frame.scope_concurrent("jobs", |jobs| {
///             let here = jobs.local();
///             rayon::join(|| *here.new_pod(1u8), || *jobs.new_pod(2u8));
///         });
///     });
/// }
/// ```
pub struct LocalScopeToAnotherThread;

/// Rule 10: a `Loaded` cannot outlive the scope that carved its slots.
///
/// ```compile_fail
/// use scope_stack::{slot_root, LinearAllocator};
///
/// slot_root!(struct Unit = for<'s> ());
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     let loaded = memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         slots.load::<Unit>("level", |_| ()).unwrap()
///     });
///     drop(loaded);
/// }
/// ```
pub struct Rule10LoadedOutlivesItsSlots;

/// Rule 10: a slot loaded through a plain scope cannot cross threads (its scope may
/// hold values whose destructors must run on this thread).
///
/// ```compile_fail,E0277
/// use scope_stack::{slot_root, LinearAllocator};
///
/// slot_root!(struct Unit = for<'s> ());
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         let loaded = slots.load::<Unit>("level", |_| ()).unwrap();
///         std::thread::scope(|t| {
///             t.spawn(move || drop(loaded));
///         });
///     });
/// }
/// ```
pub struct Rule10PlainLoadedIsNotSend;

/// Rule 10: no reference into a slot outlives its `Loaded`: `with` is higher-ranked.
///
/// ```compile_fail
/// use scope_stack::{slot_root, LinearAllocator};
///
/// slot_root!(struct Text = for<'s> &'s str);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         let loaded = slots.load::<Text>("level", |s| &*s.alloc_str("forest")).unwrap();
///         let name: &str = loaded.with(|text| *text);
///         drop(loaded);
///         println!("{name}");
///     });
/// }
/// ```
pub struct Rule10ReferenceEscapesWith;

/// Rule 10: a reference into an enum's payload cannot be stored in the root, so swapping
/// the variant under it (which would give a `String` made of whatever the other variant
/// held) is impossible.
///
/// ```compile_fail
/// use scope_stack::{slot_root, LinearAllocator};
///
/// enum Either {
///     Text(String),
///     Words([usize; 3]),
/// }
/// struct Node<'s> {
///     either: Either,
///     view: Option<&'s String>,
/// }
/// slot_root!(struct NodeRoot => Node);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         let mut l = slots
///             .load::<NodeRoot>("a", |_| Node { either: Either::Text("x".into()), view: None })
///             .unwrap();
///         l.with_mut(|n, _| {
///             if let Either::Text(text) = &n.either {
///                 n.view = Some(text);
///             }
///         });
///         l.with_mut(|n, _| n.either = Either::Words([8, 1 << 40, 1 << 40]));
///         l.with(|n| println!("{:?}", n.view));
///     });
/// }
/// ```
pub struct Rule10RootBorrowsItselfEnumSwap;

/// Rule 10: `with` lends `&'y Of<'x>`, a borrow shorter than the root's lifetime, so a
/// `Cell` in the root cannot be set to a reference into the root itself.
///
/// ```compile_fail
/// use core::cell::Cell;
/// use scope_stack::{slot_root, LinearAllocator};
///
/// struct Node<'s> {
///     owned: Box<str>,
///     view: Cell<&'s str>,
/// }
/// slot_root!(struct NodeRoot => Node);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         let mut l = slots
///             .load::<NodeRoot>("a", |_| Node { owned: "x".repeat(64).into(), view: Cell::new("") })
///             .unwrap();
///         l.with(|n| n.view.set(&n.owned));
///         l.with_mut(|n, _| n.owned = "".into());
///         l.with(|n| println!("{}", n.view.get()));
///     });
/// }
/// ```
pub struct Rule10RootBorrowsItselfThroughCell;

/// Rule 10: a root's borrow is never the root's own lifetime. `with_mut` lends
/// `&'y mut Of<'x>`, so a closure cannot store a reference to the root's own data
/// (here, the heap text a `String` field owns) inside the root: a later call could
/// replace that data while the reference stays.
///
/// ```compile_fail
/// use scope_stack::{slot_root, LinearAllocator};
///
/// struct Node<'s> {
///     owned: String,
///     view: &'s str,
/// }
/// slot_root!(struct NodeRoot => Node);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         let mut l = slots
///             .load::<NodeRoot>("a", |_| Node { owned: "x".repeat(64), view: "" })
///             .unwrap();
///         l.with_mut(|n, _| n.view = &n.owned);
///         l.with_mut(|n, _| n.owned = String::new());
///         l.with(|n| println!("{}", n.view));
///     });
/// }
/// ```
pub struct Rule10RootBorrowsItselfWithMut;

/// Rule 10: a root may borrow only from its own slot (or `'static` data): a local
/// that dies before the `Loaded` cannot be put in it.
///
/// ```compile_fail,E0597
/// use scope_stack::{slot_root, LinearAllocator};
///
/// slot_root!(struct Text = for<'s> &'s str);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         let local = String::from("short-lived");
///         let loaded = slots.load::<Text>("level", |_| local.as_str()).unwrap();
///         drop(local);
///         loaded.with(|t| println!("{t}"));
///     });
/// }
/// ```
pub struct Rule10RootBorrowsOutsideData;

/// Rule 10: the slot's scope lent by `with_mut` cannot leave the closure.
///
/// ```compile_fail,E0521
/// use scope_stack::{slot_root, LinearAllocator, ScopeStack};
///
/// slot_root!(struct Unit = for<'s> ());
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("levels", 1, 4096);
///         let mut loaded = slots.load::<Unit>("level", |_| ()).unwrap();
///         let mut kept: Option<&ScopeStack<'_>> = None;
///         loaded.with_mut(|_, scope| kept = Some(scope));
///         drop(loaded);
///         kept.unwrap().new_pod(1u8);
///     });
/// }
/// ```
pub struct Rule10ScopeEscapesWithMut;

/// Rule 10: a slot built through a concurrent scope crosses threads only when its
/// root is `Send`.
///
/// ```compile_fail,E0277
/// use std::rc::Rc;
///
/// use scope_stack::{slot_root, LinearAllocator};
///
/// slot_root!(struct Counted = for<'s> Rc<u32>);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("frames", 1, 16 << 10);
///         let loaded = slots.load_concurrent::<Counted>("frame", |_| Rc::new(1)).unwrap();
///         std::thread::scope(|t| {
///             t.spawn(move || drop(loaded));
///         });
///     });
/// }
/// ```
pub struct Rule10SharedLoadedWithNonSendRoot;

/// Rule 10, on the `Shared` kind: `with_mut` lends `&'y mut Of<'x>` there too, so a
/// root built through a concurrent scope cannot borrow itself and be read on another
/// thread after the borrowed data is freed.
///
/// ```compile_fail
/// use scope_stack::{slot_root, LinearAllocator};
///
/// struct Node<'s> {
///     owned: String,
///     view: &'s str,
/// }
/// slot_root!(struct NodeRoot => Node);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("frames", 1, 64 << 10);
///         let mut l = slots
///             .load_concurrent::<NodeRoot>("a", |_| Node { owned: "x".repeat(64), view: "" })
///             .unwrap();
///         l.with_mut(|n, _| n.view = &n.owned);
///         l.with_mut(|n, _| n.owned = String::new());
///         std::thread::scope(|t| {
///             t.spawn(|| l.with(|n| println!("{}", n.view)));
///         });
///     });
/// }
/// ```
pub struct Rule10SharedRootBorrowsItself;

/// Rule 1: a reference cannot escape its scope's closure through a captured variable.
///
/// ```compile_fail,E0521
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(64).unwrap();
///     let mut escaped: Option<&mut u32> = None;
///     memory.scope("level", |level| {
///         escaped = Some(level.new_pod(7));
///     });
///     println!("{:?}", escaped);
/// }
/// ```
pub struct Rule1EscapeByAssignment;

/// Rule 1: a reference cannot escape its scope's closure as the return value.
///
/// ```compile_fail
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(64).unwrap();
///     let x = memory.scope("level", |level| level.new_object(String::from("gone")));
///     println!("{x}");
/// }
/// ```
pub struct Rule1EscapeByReturn;

/// Rule 1: a collection that allocates from a scope cannot outlive it.
///
/// ```compile_fail
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1024).unwrap();
///     let v = memory.scope("level", |level| {
///         let mut v = allocator_api2::vec::Vec::new_in(&**level);
///         v.push(1u8);
///         v
///     });
///     println!("{}", v.len());
/// }
/// ```
pub struct Rule1EscapeCollection;

/// Rule 2: while a collection borrows a scope, the scope cannot open a child (which could
/// otherwise rewind memory under the collection's last allocation).
///
/// ```compile_fail,E0502
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1024).unwrap();
///     memory.scope("level", |level| {
///         let mut v = allocator_api2::vec::Vec::new_in(&**level);
///         v.push(1u8);
///         level.scope("frame", |frame| {
///             frame.new_pod(3u8);
///         });
///         v.push(2u8);
///     });
/// }
/// ```
pub struct Rule2CollectionBlocksChild;

/// Rule 2: only the innermost live scope allocates.
///
/// ```compile_fail,E0502
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(64).unwrap();
///     memory.scope("systems", |systems| {
///         systems.scope("level", |level| {
///             systems.new_pod(1u8);
///             level.new_pod(2u8);
///         });
///     });
/// }
/// ```
pub struct Rule2ParentAllocatesWhileChildLives;

/// Rule 2: two outermost scopes on one block cannot be live at once.
///
/// ```compile_fail,E0499
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(64).unwrap();
///     memory.scope("a", |a| {
///         memory.scope("b", |b| {
///             b.new_pod(1u8);
///         });
///         a.new_pod(2u8);
///     });
/// }
/// ```
pub struct Rule2TwoOutermostScopes;

/// Rule 4: a value that gets a finalizer must be 'static, or its destructor could read
/// data that was destroyed first.
///
/// ```compile_fail,E0521
/// use scope_stack::LinearAllocator;
///
/// struct Reader<'a>(&'a String);
///
/// impl Drop for Reader<'_> {
///     fn drop(&mut self) {
///         println!("{}", self.0);
///     }
/// }
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1024).unwrap();
///     memory.scope("level", |level| {
///         let later = level.new_object(String::from("destroyed first"));
///         level.new_object(Reader(later));
///     });
/// }
/// ```
pub struct Rule4NewObjectNotStatic;

/// Rule 4: new_pod takes only types that need no drop.
///
/// ```compile_fail,E0080
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1024).unwrap();
///     memory.scope("level", |level| {
///         level.new_pod(String::from("needs drop"));
///     });
/// }
/// ```
pub struct Rule4NewPodNeedsDrop;

/// Frame code run inside a rayon pool's `install` cannot capture the frame's scope: the
/// error names `NotThreadSafe`, whose docs explain the rule and the fix.
///
/// ```compile_fail,E0277
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("frame", |frame| {
///         pool.install(|| {
///             let hits = frame.new_pod(0u32);
///             *hits += 1;
///         });
///     });
/// }
/// ```
pub struct ScopeInRayonInstall;

/// Scope handles of two blocks cannot be swapped to fool the rewind.
///
/// ```compile_fail,E0521
/// use scope_stack::LinearAllocator;
///
/// fn main() {
///     let mut a = LinearAllocator::with_capacity(64).unwrap();
///     let mut b = LinearAllocator::with_capacity(64).unwrap();
///     a.scope("a", |sa| {
///         b.scope("b", |sb| {
///             core::mem::swap(&mut **sa, &mut **sb);
///         });
///     });
/// }
/// ```
pub struct SwapScopeHandles;

/// The allowed twins: parent values and caller data may be used and stored in a child.
///
/// ```rust
/// use scope_stack::{LinearAllocator, ScopeStack};
///
/// fn helper<'s>(scope: &ScopeStack<'s>) -> &'s mut u32 {
///     scope.new_pod(5)
/// }
///
/// fn main() {
///     let caller = String::from("caller data");
///     let mut memory = LinearAllocator::with_capacity(4096).unwrap();
///     memory.scope("systems", |systems| {
///         let config = systems.new_pod(60u32);
///         let name = systems.new_object(String::from("frog"));
///         let from_helper = helper(systems);
///         systems.scope("level", |level| {
///             *config += 1;
///             let refs = level.alloc_slice_copy(&[&*config, &*from_helper]);
///             let held = level.new_pod((name.as_str(), caller.as_str()));
///             assert_eq!(*refs[0] + *refs[1], 66);
///             assert_eq!(held.1, "caller data");
///         });
///         // The parent allocates again once the child is gone.
///         systems.new_pod(1u8);
///     });
///     // A value with drop that borrows only 'static data is fine in new_object.
///     memory.scope("static", |s| {
///         s.new_object(vec!["static str"]);
///     });
///     // Values handed out by a scope can be shared with threads.
///     memory.scope("threads", |s| {
///         let counters = s.alloc_slice_fill_with(2, |_| std::sync::atomic::AtomicU32::new(0));
///         std::thread::scope(|t| {
///             for c in counters.iter() {
///                 t.spawn(move || c.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
///             }
///         });
///     });
/// }
/// ```
pub struct SharedValuesInChild;

/// The allowed twin of rule10_plain_loaded_is_not_send: a slot built through a
/// concurrent scope with a `Send` root is handed to another thread and dropped there.
///
/// ```rust
/// use scope_stack::{slot_root, LinearAllocator};
///
/// struct Frame<'s> {
///     draws: &'s [u32],
/// }
/// slot_root!(struct FrameRoot = for<'s> Frame<'s>);
///
/// fn main() {
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     memory.scope("game", |game| {
///         let slots = game.new_slots("frames", 1, 16 << 10);
///         let frame = slots
///             .load_concurrent::<FrameRoot>("frame", |jobs| Frame {
///                 draws: jobs.alloc_slice_copy(&[1, 2, 3]),
///             })
///             .unwrap();
///         std::thread::scope(|t| {
///             t.spawn(move || assert_eq!(frame.with(|f| f.draws.len()), 3));
///         });
///     });
/// }
/// ```
pub struct SlotSharedLoadedCrossesThreads;
