//! Slots: a scope's memory cut into equal sub-blocks that load and unload in any order.
//!
//! Scopes nest: a child ends before its parent. Some lifetimes in a game do not: level B
//! loads while level A still plays, and A goes away after B is up; frame N is built
//! while frames N-1 and N-2 are still being drawn on another thread. A [`Slots`] serves
//! both. [`ScopeStack::new_slots`](crate::ScopeStack::new_slots) carves `count`
//! sub-blocks of `bytes_each` from a scope and returns `&'s Slots` (the scope's own
//! lifetime, so the scope still opens children while slots are loaded).
//! [`Slots::load`] takes a free slot, opens a scope on it, lets a closure build the
//! *root* (a value that may borrow from that scope) and returns a [`Loaded`]: an owned
//! value that can sit in a variable, a struct field or a `Vec`, and be dropped in any
//! order. Dropping it drops the root, runs the slot's finalizers newest first, rewinds
//! the slot in one step and frees it.
//!
//! The root's type depends on the slot scope's lifetime, so it is named through a type
//! family, [`SlotRoot`] (written by hand or with [`slot_root!`](crate::slot_root)).
//!
//! # Streaming levels
//!
//! ```
//! use scope_stack::{slot_root, LinearAllocator, Pool};
//!
//! struct Level<'s> {
//!     name: &'s str,
//!     enemies: &'s Pool<'s, [f32; 2]>,
//! }
//! slot_root!(struct LevelRoot = for<'s> Level<'s>);
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("game", |game| {
//!     let levels = game.new_slots("levels", 2, 64 << 10);
//!     let load = |name: &str| {
//!         levels
//!             .load::<LevelRoot>(name, |scope| Level {
//!                 name: scope.alloc_str(name),
//!                 enemies: scope.new_pool(100),
//!             })
//!             .unwrap()
//!     };
//!     let a = load("forest");
//!     let b = load("castle"); // both loaded: the transition
//!     drop(a); // A goes first, although it was loaded first
//!     let c = load("caves"); // reuses A's slot
//!     c.with(|level| assert_eq!(level.name, "caves"));
//!     b.with(|level| assert_eq!(level.enemies.capacity(), 100));
//!     game.scope("frame", |_frame| { /* the game scope still opens children */ });
//! });
//! ```
//!
//! # A frame ring
//!
//! Frames are built by worker jobs ([`Slots::load_concurrent`] lends a
//! [`ConcurrentScope`](crate::ConcurrentScope)), handed to a render thread and dropped
//! there. With three slots, [`Slots::load_concurrent_wait`] blocks only when three frames are
//! still in flight: the back-pressure of a GPU fence.
//!
//! ```
//! use scope_stack::{slot_root, LinearAllocator, Loaded, Shared};
//! use std::sync::mpsc;
//!
//! struct Frame<'s> {
//!     number: u32,
//!     draws: &'s [[f32; 4]],
//! }
//! slot_root!(struct FrameRoot = for<'s> Frame<'s>);
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("renderer", |renderer| {
//!     let frames = renderer.new_slots("frames", 3, 64 << 10);
//!     std::thread::scope(|t| {
//!         let (send, receive) = mpsc::channel::<Loaded<'_, FrameRoot, Shared>>();
//!         let render = t.spawn(move || {
//!             let mut drawn = 0;
//!             for frame in receive {
//!                 drawn += frame.with(|f| f.draws.len());
//!                 // dropping `frame` here frees its slot for the game thread
//!             }
//!             drawn
//!         });
//!         for number in 0..10u32 {
//!             let frame = frames.load_concurrent_wait::<FrameRoot>("frame", |jobs| {
//!                 let halves = std::thread::scope(|w| {
//!                     let a = w.spawn(|| &*jobs.alloc_slice_fill_with(50, |i| [i as f32; 4]));
//!                     let b = w.spawn(|| &*jobs.alloc_slice_fill_with(50, |i| [i as f32; 4]));
//!                     [a.join().unwrap(), b.join().unwrap()]
//!                 });
//!                 let draws = jobs.alloc_iter(halves.iter().flat_map(|h| h.iter().copied()));
//!                 Frame { number, draws }
//!             });
//!             send.send(frame).unwrap();
//!         }
//!         drop(send);
//!         assert_eq!(render.join().unwrap(), 1000);
//!     });
//! });
//! ```
//!
//! # Sets that live as long as the program
//!
//! A set carved from a scope borrows it, so its `Loaded` values cannot outlive the
//! scope's closure. An engine that keeps its levels and frames in a long-lived struct
//! (a Bevy resource, a field of the engine, a value moved into `std::thread::spawn` or
//! `tokio::spawn`) makes its sets with [`Slots::leak`] (one block from the global heap,
//! never given back) or [`Slots::from_static`] (a `&'static mut` buffer, for `no_std`):
//! they are `&'static Slots`, and what they load is `Loaded<'static, R, K>`. Each slot
//! still rewinds when it unloads; [`Slots::map_handle`] gives the set's memory map.
//!
//! ```
//! use scope_stack::{slot_root, Loaded, Shared, Slots};
//!
//! struct Level<'s> { name: &'s str }
//! slot_root!(struct LevelRoot => Level);
//! struct Frame<'s> { draws: &'s [u32] }
//! slot_root!(struct FrameRoot => Frame);
//!
//! /// No lifetime parameter: it can live anywhere, for as long as the program runs.
//! struct Engine {
//!     levels: &'static Slots,
//!     frames: &'static Slots,
//!     level: Option<Loaded<'static, LevelRoot>>,
//!     in_flight: Vec<Loaded<'static, FrameRoot, Shared>>,
//! }
//!
//! let mut engine = Engine {
//!     levels: Slots::leak("levels", 2, 64 << 10)?,
//!     frames: Slots::leak("frames", 3, 64 << 10)?,
//!     level: None,
//!     in_flight: Vec::new(),
//! };
//! engine.level = engine.levels.load::<LevelRoot>("forest", |s| Level { name: s.alloc_str("forest") }).ok();
//! let frame = engine
//!     .frames
//!     .load_concurrent::<FrameRoot>("frame 1", |jobs| Frame { draws: jobs.alloc_slice_copy(&[1, 2, 3]) })
//!     .unwrap();
//! // `std::thread::spawn` needs `'static`: a shared frame of a static set is.
//! let drawn = std::thread::spawn(move || frame.with(|f| f.draws.len())).join().unwrap();
//! assert_eq!(drawn, 3);
//! assert_eq!(engine.frames.loaded(), 0); // dropped on the other thread
//! assert_eq!(engine.level.as_ref().map(|l| l.with(|l| l.name.len())), Some(6));
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! # Async services
//!
//! A service can give each request in flight a slot of its own, used as the request's
//! arena across `.await`s and dropped when the reply is sent (the slot rewinds in one
//! step). What may cross an `.await`:
//!
//! - a [`Loaded`] of kind [`Task`] whose root is `Send` (from
//!   [`load_task`](Slots::load_task) or [`load_task_async`](Slots::load_task_async)):
//!   the request's arena. It is `Send`, so the task may move between a work-stealing
//!   runtime's threads, and `'static` when the set is ([`Slots::leak`]), as
//!   `tokio::spawn` needs. It is built and added to through a [`TaskScope`], the
//!   slot's plain scope behind the [`Place`](crate::Place) and
//!   [`Carve`](crate::Carve) traits, which take a value that needs drop only when it is
//!   `Send`; it costs what a plain slot costs;
//! - a [`Loaded`] of kind [`Shared`] whose root is `Send` (from
//!   [`load_concurrent`](Slots::load_concurrent) or
//!   [`load_concurrent_async`](Slots::load_concurrent_async)), when several threads
//!   fill the request's slot at once (a request fanned out to rayon jobs): also `Send`,
//!   at the price of a concurrent scope (a per-thread table, about 5 KiB of the slot,
//!   opened and closed with each load);
//! - not a [`Plain`] `Loaded` on such a runtime (it stays on its thread), and never a
//!   scope handle: scopes, including [`scratch`](crate::scratch()) scopes, are
//!   closures, so they begin and end between two awaits. Use `scratch` for the
//!   stretches of work between awaits, and the request's slot for what must live
//!   across them.
//!
//! When every slot is busy, [`load_task_async`](Slots::load_task_async) (or
//! [`load_concurrent_async`](Slots::load_concurrent_async),
//! [`load_async`](Slots::load_async)) waits as a task, not as a thread: the slot set
//! keeps the waker, and the unload that frees a slot wakes it. Any executor works.
//!
//! ```
//! use scope_stack::{slot_root, Place, Slots};
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     struct Unpark(std::thread::Thread);
//! #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
//! #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
//! #     let mut cx = std::task::Context::from_waker(&waker);
//! #     let mut f = std::pin::pin!(f);
//! #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
//! # }
//! # async fn fetch(key: &str) -> usize { key.len() }
//!
//! struct Request<'s> { path: &'s str, words: Vec<&'s str> }
//! slot_root!(struct RequestRoot => Request);
//!
//! async fn handle(requests: &'static Slots, line: String) -> String {
//!     let mut request = requests
//!         .load_task_async::<RequestRoot>("request", move |arena| Request {
//!             path: arena.alloc_str(&line),
//!             words: Vec::new(),
//!         })
//!         .await;
//!     let path = request.with(|r| r.path.to_string());
//!     let size = fetch(&path).await; // the request's arena crosses this await
//!     request.with_mut(|r, arena| {
//!         r.words = r.path.split('/').collect();
//!         r.words.push(arena.alloc_fmt(format_args!("{size} bytes")));
//!     });
//!     request.with(|r| r.words.join(" "))
//! } // the slot rewinds here
//!
//! /// What `tokio::spawn` asks of a task.
//! fn spawnable<F: std::future::Future + Send + 'static>(task: F) -> F { task }
//!
//! let requests = Slots::leak("requests", 8, 16 << 10)?;
//! assert_eq!(block_on(spawnable(handle(requests, "a/b".into()))), "a b 3 bytes");
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! # Soundness (rule 10 of [`crate::rules`])
//!
//! - A [`Loaded`] borrows its `Slots`, which carry the carving scope's lifetime, so it
//!   can outlive neither. The root is reached only through [`Loaded::with`] and
//!   [`Loaded::with_mut`], whose closures are higher-ranked over the slot scope's
//!   lifetime: nothing they return can name it, so no reference into the slot leaves.
//! - Each slot is its own sub-block: its own cursor, its own list of live scopes and its
//!   own scope record, all in the `Slots` table (in the parent's memory). Nothing is
//!   linked into the parent block's list, so `mem::forget` of a `Loaded` leaks the
//!   slot's contents and leaves the slot busy, and the parent's close and reports read
//!   nothing that dangles.
//! - A slot's state is an atomic (free, building, loaded): claiming it is a
//!   compare-exchange (acquire), freeing it a release store, so whoever holds the slot
//!   has it alone and sees everything the previous holder did.
//! - A `Loaded` built through a plain scope is never `Send` (a value placed there may
//!   have a destructor that must not run on another thread). One built by
//!   [`Slots::load_concurrent`] is `Send` when its root is: a
//!   [`ConcurrentScope`](crate::ConcurrentScope) only takes `Send` values that need drop.
//!   So is one built by [`Slots::load_task`]: its plain scope is reached only through a
//!   [`TaskScope`], which takes only `Send` values that need drop, and whose `Cell`s
//!   one thread at a time uses (`with_mut` needs `&mut Loaded`, and the `TaskScope`
//!   neither crosses threads nor leaves the closure).
//! - A `Loaded` of either kind is `Sync` when its root is: a `&Loaded` lends only
//!   `&root` and reads the slot's name and use figure. So a `Loaded<'static, R, Shared>`
//!   with a `Sync` root is `Send + Sync`, what an engine resource must be (a Bevy
//!   resource, a `OnceLock` in a `static`); a root with a `Cell`, a `RefCell` or an
//!   `Rc` is not `Sync`, and neither is its `Loaded`.
//! - A set made by [`Slots::leak`] or [`Slots::from_static`] is carved in a root scope
//!   over memory that is never given back, opened once and never closed; nothing
//!   writes that scope after the carve, so the set and its table live for `'static`.
//!   The roots of its slots are built and reached through the same higher-ranked
//!   closures, so `'static` lets nothing borrowed from a local or an outer scope in.
//! - The root is dropped first, before the slot's finalizer chain runs, so its
//!   destructor still sees every value it may borrow from the slot. A panicking `build`
//!   runs what it placed and frees the slot; a panicking destructor skips no other.
//!
//! # Where this differs from the design sketch
//!
//! - A slot is a whole block of its own (a `LinearAllocator` over the sub-block, kept
//!   in the table), not only a cursor: a block keeps its live-scope list, high-water
//!   mark and reservations in `Cell`s, and a slot is built and dropped on other threads
//!   while the parent's thread keeps using the parent block. With a block per slot,
//!   nothing a slot does touches the parent's block; only the table's atomics are
//!   shared, and a report of the parent reads those.
//! - The root is not a record on the slot's finalizer chain: it is dropped first, by
//!   itself. `with_mut` may place values after the root, and those would otherwise be
//!   destroyed before a root whose destructor can read them.
//! - A loaded slot's kind is a type parameter (`Loaded<'a, R, Plain>` by default,
//!   `Loaded<'a, R, Shared>` from `load_concurrent`, `Loaded<'a, R, Task>` from
//!   `load_task`) rather than a sibling type, so code that stores any of them can name
//!   one type.
//! - A task slot's surface, [`TaskScope`], has no inherent placement methods: it
//!   implements [`Place`](crate::Place) and [`Carve`](crate::Carve), whose bounds are
//!   already the ones it needs, so it cannot drift from the other surfaces (rule 11).

pub(crate) mod carve;
mod error;
mod forever;
mod load;
mod loaded;
#[doc(hidden)]
pub mod root;
mod shared;
pub(crate) mod table;
mod task_load;
mod task_scope;
#[cfg(feature = "std")]
mod tasks;
#[cfg(feature = "std")]
mod wait;
#[cfg(feature = "std")]
mod wakers;

pub use carve::Slots;
pub use loaded::SendKind;

pub use error::{SlotError, SlotErrorKind};
pub use loaded::{Loaded, LoadedKind, Plain, Shared, Task};
pub use root::SlotRoot;
pub use task_scope::TaskScope;
