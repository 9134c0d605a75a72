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

/// Rule 10, on the `Shared` kind: a `&Loaded` lends `&root`, so a loaded slot is
/// `Sync` only when its root is. A root with a `Cell` cannot be an engine resource
/// (`Send + Sync`), even in a set that lives as long as the program.
///
/// ```compile_fail,E0277
/// use core::cell::Cell;
///
/// use scope_stack::{slot_root, Loaded, Shared, Slots};
///
/// slot_root!(struct Counter = for<'s> Cell<u32>);
///
/// fn resource<T: Send + Sync + 'static>(_: &T) {}
///
/// fn main() {
///     let frames: &'static Slots = Slots::leak("frames", 1, 16 << 10).unwrap();
///     let frame: Loaded<'static, Counter, Shared> =
///         frames.load_concurrent::<Counter>("frame", |_| Cell::new(0)).unwrap();
///     resource(&frame);
/// }
/// ```
pub struct Rule10SharedLoadedWithCellRootIsNotSync;

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

/// Rule 10, on the `Task` kind: a task slot's surface takes a value that needs drop
/// only when it is `Send`, since whichever thread ends the task unloads the slot and
/// runs its finalizers there. An `Rc` placed on thread A and dropped on thread B would
/// race with A's clones.
///
/// ```compile_fail,E0277
/// use std::rc::Rc;
///
/// use scope_stack::{slot_root, Place, Slots};
///
/// slot_root!(struct Unit = for<'s> ());
///
/// fn main() {
///     let requests: &'static Slots = Slots::leak("requests", 1, 4096).unwrap();
///     let shared = Rc::new(1);
///     let mut request = requests.load_task::<Unit>("request", |_| ()).unwrap();
///     request.with_mut(|_, arena| {
///         arena.new_object(shared.clone());
///     });
///     std::thread::spawn(move || drop(request)).join().unwrap();
///     drop(shared);
/// }
/// ```
pub struct Rule10TaskSlotTakesNoNonSendDrop;

/// Rule 10, on the `Task` kind: the same refusal for a container's items (`Carve`),
/// which the container drops when the slot unloads.
///
/// ```compile_fail,E0277
/// use std::rc::Rc;
///
/// use scope_stack::{slot_root, Carve, Pool, Slots};
///
/// struct Lights<'s> {
///     pool: &'s mut Pool<'s, Rc<u32>>,
/// }
/// slot_root!(struct LightsRoot => Lights);
///
/// fn main() {
///     let requests: &'static Slots = Slots::leak("requests", 1, 4096).unwrap();
///     let _request = requests
///         .load_task::<LightsRoot>("request", |arena| Lights { pool: arena.new_pool(4) })
///         .unwrap();
/// }
/// ```
pub struct Rule10TaskSlotPoolOfNonSend;

/// Rule 10, on the `Task` kind: the `TaskScope` a task slot lends is neither `Send` nor
/// `Sync` (its scope bumps a plain pointer and links finalizers without locks), so a
/// worker thread cannot place into it while the task's thread does.
///
/// ```compile_fail,E0277
/// use scope_stack::{slot_root, Place, Slots};
///
/// slot_root!(struct Unit = for<'s> ());
///
/// fn main() {
///     let requests: &'static Slots = Slots::leak("requests", 1, 4096).unwrap();
///     let mut request = requests.load_task::<Unit>("request", |_| ()).unwrap();
///     request.with_mut(|_, arena| {
///         rayon::join(|| arena.alloc_str("a").len(), || arena.alloc_str("b").len());
///     });
/// }
/// ```
pub struct Rule10TaskScopeIsNotShared;

/// Rule 10, on the `Task` kind: a task slot is `Send` only as far as its root is; a
/// root that holds an `Rc` keeps it on its thread.
///
/// ```compile_fail,E0277
/// use std::rc::Rc;
///
/// use scope_stack::{slot_root, Slots};
///
/// slot_root!(struct Counted = for<'s> Rc<u32>);
///
/// fn main() {
///     let requests: &'static Slots = Slots::leak("requests", 1, 4096).unwrap();
///     let request = requests.load_task::<Counted>("request", |_| Rc::new(1)).unwrap();
///     std::thread::spawn(move || drop(request)).join().unwrap();
/// }
/// ```
pub struct Rule10TaskLoadedWithNonSendRoot;

/// The allowed twin of the `Task` cases: `Send` values with destructors, in the slot
/// and in a pool, built on one thread and dropped on another.
///
/// ```
/// use std::sync::Arc;
///
/// use scope_stack::{slot_root, Carve, Place, Pool, Slots};
///
/// struct Lights<'s> {
///     pool: &'s mut Pool<'s, Arc<u32>>,
///     names: &'s [String],
/// }
/// slot_root!(struct LightsRoot => Lights);
///
/// fn main() {
///     let requests: &'static Slots = Slots::leak("requests", 1, 4096).unwrap();
///     let shared = Arc::new(1);
///     let mut request = requests
///         .load_task::<LightsRoot>("request", |arena| Lights {
///             pool: arena.new_pool(4),
///             names: arena.alloc_slice_clone(&[String::from("a")]),
///         })
///         .unwrap();
///     request.with_mut(|l, arena| {
///         l.pool.insert(shared.clone()).ok().unwrap().into_handle();
///         arena.new_object(shared.clone());
///     });
///     std::thread::spawn(move || drop(request)).join().unwrap();
///     assert_eq!(Arc::strong_count(&shared), 1);
/// }
/// ```
pub struct Rule10TaskSlotAllowedTwin;

/// Rule 10, for a set that lives as long as the program: `'static` does not make a
/// plain loaded slot `Send` (its values' destructors may have to run on this thread),
/// so `std::thread::spawn` rejects it.
///
/// ```compile_fail,E0277
/// use scope_stack::{slot_root, Slots};
///
/// slot_root!(struct Unit = for<'s> ());
///
/// fn main() {
///     let levels = Slots::leak("levels", 1, 4096).unwrap();
///     let loaded = levels.load::<Unit>("level", |_| ()).unwrap();
///     std::thread::spawn(move || drop(loaded)).join().unwrap();
/// }
/// ```
pub struct Rule10StaticPlainLoadedIsNotSend;

/// Rule 10, for a set that lives as long as the program: `'static` lets nothing
/// shorter into a root. The build closure is higher-ranked over the slot scope's
/// lifetime, so a root cannot borrow a local `String`, although the `Loaded` is
/// `Loaded<'static, ..>`.
///
/// ```compile_fail,E0597
/// use scope_stack::{slot_root, Slots};
///
/// slot_root!(struct Text = for<'s> &'s str);
///
/// fn main() {
///     let levels: &'static Slots = Slots::leak("levels", 1, 4096).unwrap();
///     let local = String::from("short-lived");
///     let loaded = levels.load::<Text>("level", |_| local.as_str()).unwrap();
///     drop(local);
///     loaded.with(|t| println!("{t}"));
/// }
/// ```
pub struct Rule10StaticRootBorrowsLocal;

/// Rule 10, for a set that lives as long as the program: a root cannot borrow a value
/// of an outer scope that is not `'static` (it would dangle once that scope rewinds,
/// while the `Loaded<'static, ..>` lives on).
///
/// ```compile_fail
/// use scope_stack::{slot_root, LinearAllocator, Loaded, Slots};
///
/// slot_root!(struct Number = for<'s> &'s u32);
///
/// fn main() {
///     let levels: &'static Slots = Slots::leak("levels", 1, 4096).unwrap();
///     let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
///     let mut kept: Option<Loaded<'static, Number>> = None;
///     memory.scope("game", |game| {
///         let config: &u32 = game.new_pod(60u32);
///         kept = Some(levels.load::<Number>("level", |_| config).unwrap());
///     });
///     kept.unwrap().with(|n| println!("{n}"));
/// }
/// ```
pub struct Rule10StaticRootBorrowsOuterScope;

/// Rule 10, for a set that lives as long as the program: `with_mut` lends
/// `&'y mut Of<'x>` with `'x` higher-ranked, so a shorter borrow cannot be stored in
/// the root after it was built either.
///
/// ```compile_fail,E0597
/// use scope_stack::{slot_root, Slots};
///
/// slot_root!(struct Text = for<'s> &'s str);
///
/// fn main() {
///     let levels: &'static Slots = Slots::leak("levels", 1, 4096).unwrap();
///     let mut loaded = levels.load::<Text>("level", |_| "static text").unwrap();
///     {
///         let local = String::from("short-lived");
///         loaded.with_mut(|text, _| *text = local.as_str());
///     }
///     loaded.with(|t| println!("{t}"));
/// }
/// ```
pub struct Rule10StaticRootStoresShorterBorrow;

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

/// The allowed twin of the `Rule10Static*` cases: a shared loaded slot of a set that
/// lives as long as the program, with a `Sync` root, is an engine resource: it sits in
/// a `OnceLock` in a `static`, in a struct without a lifetime parameter, and moves
/// into `std::thread::spawn`. A root may hold `'static` data beside what it placed.
///
/// ```rust
/// use std::sync::OnceLock;
///
/// use scope_stack::{slot_root, Loaded, Shared, Slots};
///
/// struct Frame<'s> {
///     label: &'static str,
///     draws: &'s [u32],
/// }
/// slot_root!(struct FrameRoot => Frame);
///
/// struct Renderer {
///     frames: &'static Slots,
///     current: Option<Loaded<'static, FrameRoot, Shared>>,
/// }
///
/// fn resource<T: Send + Sync + 'static>(_: &T) {}
///
/// static LAST: OnceLock<Loaded<'static, FrameRoot, Shared>> = OnceLock::new();
///
/// fn main() {
///     let frames = Slots::leak("frames", 3, 16 << 10).unwrap();
///     let load = |n: u32| {
///         frames
///             .load_concurrent::<FrameRoot>("frame", |jobs| Frame {
///                 label: "main pass",
///                 draws: jobs.alloc_slice_fill_with(4, |i| n + i as u32),
///             })
///             .unwrap()
///     };
///     let mut renderer = Renderer { frames, current: Some(load(1)) };
///     resource(&renderer);
///     assert!(LAST.set(load(2)).is_ok());
///     let moved = load(3);
///     let sum = std::thread::spawn(move || moved.with(|f| f.draws.iter().sum::<u32>()));
///     assert_eq!(sum.join().unwrap(), 3 + 4 + 5 + 6);
///     renderer.current = None;
///     assert_eq!(renderer.frames.loaded(), 1); // the one in `LAST`
///     assert_eq!(LAST.get().unwrap().with(|f| f.label), "main pass");
/// }
/// ```
pub struct StaticSharedLoadedIsAResource;
