//! A loaded slot: [`Loaded`], the owned value that holds a slot, lends its root, and
//! unloads the slot when dropped.
//!
//! This module owns access to a slot's root. Invariants:
//! - The root is reached only through closures that are higher-ranked over the slot
//!   scope's lifetime (`for<'x>`), so nothing a caller gets back can name it, and a
//!   caller cannot put anything into the root that lives shorter than the slot.
//! - A `Loaded` borrows its `Slots` (`'a`), which carry the carving scope's lifetime,
//!   so it outlives neither; it owns its slot until it is dropped.
//! - `Loaded<_, _, Plain>` is never `Send`: its scope may hold values whose
//!   destructors must run on this thread, and its handle is not `Sync`.
//!   `Loaded<_, _, Shared>` (built through a concurrent scope, which only takes `Send`
//!   values that need drop) and `Loaded<_, _, Task>` (built through a [`TaskScope`],
//!   the slot's plain scope behind a surface that only takes `Send` values that need
//!   drop) are `Send` as far as their root is. Every kind is `Sync` as far as its root
//!   is: a `&Loaded` lends only `&root` (the handle needs `&mut self`), so a
//!   `Loaded<'static, R, Shared>` with a `Sync` root is `Send + Sync`, as an engine
//!   resource must be.

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::concurrent::ConcurrentScope;
use crate::scope::ScopeStack;

use super::carve::Slots;
use super::root::SlotRoot;
use super::task_scope::TaskScope;

mod sealed {
    pub trait Sealed {}
}

/// How a [`Loaded`] slot was built: [`Plain`] ([`Slots::load`]), [`Shared`]
/// ([`Slots::load_concurrent`]) or [`Task`] ([`Slots::load_task`]). Sealed.
///
/// ```
/// use scope_stack::{slot_root, Loaded, LoadedKind};
/// slot_root!(struct Unit = for<'s> ());
/// fn describe<K: LoadedKind>(_: &Loaded<'_, Unit, K>) -> &'static str { K::NAME }
/// # let mut memory = scope_stack::LinearAllocator::with_capacity(1 << 16).unwrap();
/// # memory.scope("game", |game| {
/// #     let slots = game.new_slots("s", 2, 8192);
/// #     assert_eq!(describe(&slots.load::<Unit>("a", |_| ()).unwrap()), "plain");
/// #     assert_eq!(describe(&slots.load_concurrent::<Unit>("b", |_| ()).unwrap()), "shared");
/// #     assert_eq!(describe(&slots.load_task::<Unit>("c", |_| ()).unwrap()), "task");
/// # });
/// ```
pub trait LoadedKind: sealed::Sealed + 'static {
    /// `"plain"`, `"shared"` or `"task"`.
    const NAME: &'static str;
}

/// Built through a plain [`ScopeStack`] by [`Slots::load`]: stays on its thread.
///
/// ```
/// use scope_stack::{slot_root, Loaded, Plain};
/// slot_root!(struct Unit = for<'s> ());
/// fn keep(_: Loaded<'_, Unit, Plain>) {} // the same type as `Loaded<'_, Unit>`
/// ```
#[derive(Debug)]
pub enum Plain {}

/// Built through a [`ConcurrentScope`] by [`Slots::load_concurrent`]: may be sent to
/// (and dropped on) another thread when its root is `Send`.
///
/// ```
/// use scope_stack::{slot_root, Loaded, Shared};
/// slot_root!(struct Unit = for<'s> ());
/// fn send_to_render(frame: Loaded<'static, Unit, Shared>) -> impl Send { frame }
/// ```
#[derive(Debug)]
pub enum Shared {}

/// Built through a [`TaskScope`] by [`Slots::load_task`]: one task (or thread) at a
/// time uses it, and it may move to (and be dropped on) another thread when its root
/// is `Send`, as an async request's arena does when a work-stealing runtime moves
/// the task. It costs what a [`Plain`] slot costs: its scope is the slot's plain
/// scope, and the surface over it admits only `Send` values that need drop.
///
/// ```
/// use scope_stack::{slot_root, Loaded, Task};
/// slot_root!(struct Unit = for<'s> ());
/// fn hand_over(request: Loaded<'static, Unit, Task>) -> impl Send { request }
/// ```
#[derive(Debug)]
pub enum Task {}

impl sealed::Sealed for Plain {}
impl sealed::Sealed for Shared {}
impl sealed::Sealed for Task {}
impl LoadedKind for Plain {
    const NAME: &'static str = "plain";
}
impl LoadedKind for Shared {
    const NAME: &'static str = "shared";
}
impl LoadedKind for Task {
    const NAME: &'static str = "task";
}

/// A loaded slot: owns the slot and the root built in it, until dropped.
///
/// Get one from [`Slots::load`] (kind [`Plain`], the default),
/// [`Slots::load_concurrent`] (kind [`Shared`]) or [`Slots::load_task`] (kind
/// [`Task`]). It can sit in a variable across
/// frames, move into a struct field or a `Vec`, and be dropped in any order relative to
/// other `Loaded`s. Dropping it drops the root, then runs the slot's finalizers newest
/// first, rewinds the slot in one step and frees it (waking a thread that waits in
/// [`Slots::load_wait`]).
///
/// `mem::forget` of a `Loaded` leaks what the slot holds and leaves the slot busy; it
/// is never unsound.
///
/// ```
/// use scope_stack::{slot_root, LinearAllocator, Loaded};
///
/// struct Level<'s> { name: &'s str }
/// slot_root!(struct LevelRoot = for<'s> Level<'s>);
///
/// struct World<'a> { playing: Vec<Loaded<'a, LevelRoot>> }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("game", |game| {
///     let slots = game.new_slots("levels", 3, 4096);
///     let mut world = World { playing: Vec::new() };
///     for name in ["a", "b", "c"] {
///         let level = slots.load::<LevelRoot>(name, |s| Level { name: s.alloc_str(name) });
///         world.playing.push(level.unwrap());
///     }
///     world.playing.remove(1); // unloads "b" first
///     let names: Vec<String> = world.playing.iter().map(|l| l.with(|l| l.name.to_string())).collect();
///     assert_eq!(names, ["a", "c"]);
/// });
/// ```
///
/// A `Loaded` cannot outlive its slots:
///
/// ```compile_fail,E0521
/// use scope_stack::{slot_root, LinearAllocator, Loaded};
/// slot_root!(struct Unit = for<'s> ());
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// let mut escaped = None;
/// memory.scope("game", |game| {
///     let slots = game.new_slots("levels", 1, 4096);
///     escaped = Some(slots.load::<Unit>("a", |_| ()).unwrap());
/// });
/// ```
#[must_use = "dropping a Loaded unloads its slot at once"]
pub struct Loaded<'a, R: SlotRoot, K: LoadedKind = Plain> {
    slots: &'a Slots,
    index: usize,
    /// The root, in the slot's memory.
    root: NonNull<u8>,
    /// `*const ()`: neither `Send` nor `Sync` unless a kind says otherwise (below).
    _marker: PhantomData<Marker<R, K>>,
}

// SAFETY: a shared loaded slot was built through a `ConcurrentScope`, whose values that
// need drop are all `Send` (rule 8), and its root is `Send` here; dropping it on another
// thread runs those destructors there and touches the slot's table record, which the
// holder alone touches (the slot's state hands it over with acquire/release, see
// `super::table`). The handle lent by `with_mut` is a `ConcurrentScope`, which is `Send`
// and `Sync`.
//
// A task slot was built, and is added to, only through a `TaskScope`: every placement
// that links a finalizer asks `T: Send + 'static` there (the `Place`/`Carve` bounds,
// and `Finalizes` for its builders), so its chain holds only destructors that may run
// on any thread, and its root is `Send` here. Its scope is a plain one (`Cell`s in the
// slot's own block and record, no thread-local state), used by one thread at a time:
// `with_mut` needs `&mut self`, and the `TaskScope` it lends is neither `Send` nor
// `Sync` and cannot leave the closure, so no other thread reaches those `Cell`s while
// it runs. Moving the `Loaded` to another thread is a move of an owned value, which
// safe code only does through something that orders the two threads (a spawn, a
// channel, a runtime's queue), so the next thread sees every write the last one made;
// then it uses (or unloads) the scope alone, as the holder.
unsafe impl<R: SlotRoot, K: LoadedKind> Send for Loaded<'_, R, K>
where
    R::Of<'static>: Send,
    K: SendKind,
{
}
// SAFETY: `&Loaded` only lends `&R::Of` (through `with`) and reads the slot's name; with
// `R::Of: Sync` sharing those is sound. The slot's handle is not reachable through
// `&Loaded` (`with_mut` takes `&mut self`), so a plain slot's non-`Sync` scope is
// not shared either.
unsafe impl<R: SlotRoot, K: LoadedKind> Sync for Loaded<'_, R, K> where R::Of<'static>: Sync {}

/// What a `Loaded` owns as far as auto traits go: nothing `Send` or `Sync` (a raw
/// pointer), plus its root family and kind.
type Marker<R, K> = (*const (), fn() -> (R, K));

/// The kinds whose `Loaded` may cross threads: [`Shared`] and [`Task`]. Sending a
/// [`Plain`] one is an error (E0277) that names rule 10, [`Slots::load_task`] and
/// [`Slots::load_concurrent`].
///
/// ```
/// use scope_stack::slots::SendKind;
/// fn crosses<K: SendKind>() {}
/// crosses::<scope_stack::Shared>();
/// crosses::<scope_stack::Task>();
/// ```
#[diagnostic::on_unimplemented(
    message = "a `Loaded` slot of kind `{Self}` stays on the thread that loaded it (rule 10); build it with `Slots::load_task` or `Slots::load_concurrent` to send it to another thread",
    label = "built by `Slots::load` through a plain scope",
    note = "a plain slot's values may have destructors that must run on this thread",
    note = "to hand a request's arena to another thread, build it with `Slots::load_task` (kind `Task`); for a frame many threads fill, `Slots::load_concurrent` (kind `Shared`); see `scope_stack::rules`, rule 10"
)]
pub trait SendKind: LoadedKind {}
impl SendKind for Shared {}
impl SendKind for Task {}

impl<'a, R: SlotRoot, K: LoadedKind> Loaded<'a, R, K> {
    pub(crate) fn new(slots: &'a Slots, index: usize, root: NonNull<u8>) -> Self {
        Loaded {
            slots,
            index,
            root,
            _marker: PhantomData,
        }
    }

    /// Lends the root to `f`. The closure is higher-ranked over the slot scope's
    /// lifetime, so nothing it returns can borrow from the slot.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    /// struct Level<'s> { spawns: &'s [[f32; 2]] }
    /// slot_root!(struct LevelRoot = for<'s> Level<'s>);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("levels", 1, 4096);
    ///     let level = slots
    ///         .load::<LevelRoot>("a", |s| Level { spawns: s.alloc_slice_fill_with(8, |i| [i as f32, 0.0]) })
    ///         .unwrap();
    ///     let farthest = level.with(|l| l.spawns.iter().map(|p| p[0]).fold(0.0, f32::max));
    ///     assert_eq!(farthest, 7.0);
    /// });
    /// ```
    ///
    /// A reference into the slot cannot come back out:
    ///
    /// ```compile_fail
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Text = for<'s> &'s str);
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("levels", 1, 4096);
    ///     let loaded = slots.load::<Text>("a", |s| &*s.alloc_str("hi")).unwrap();
    ///     let text: &str = loaded.with(|t| *t); // error: lifetime may not live long enough
    ///     drop(loaded);
    ///     println!("{text}");
    /// });
    /// ```
    #[inline]
    pub fn with<T>(&self, f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>) -> T) -> T {
        // SAFETY: the root was placed in the slot when it loaded and lives until this
        // `Loaded` drops; `&self` keeps it from dropping meanwhile, and no `&mut` to it
        // exists (only `with_mut`, through `&mut self`, makes one). `f` is higher-ranked
        // over both the root's lifetime and the borrow's, so neither escapes into its
        // result, and the borrow (`'y`) is never the root's own lifetime (`'x`): nothing
        // borrowed from the root can be stored back into it (rule 10).
        f(unsafe { self.root.cast::<R::Of<'_>>().as_ref() })
    }

    /// The name the slot was loaded with (cut to 48 bytes).
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("levels", 1, 4096);
    ///     assert_eq!(slots.load::<Unit>("castle", |_| ()).unwrap().name(), "castle");
    /// });
    /// ```
    pub fn name(&self) -> &str {
        // SAFETY: we hold the slot, and the name is borrowed no longer than `self`.
        unsafe { self.slots.record(self.index).holder_name() }
    }

    /// Which slot this is (0 to `count - 1`).
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 3, 1024);
    ///     let a = slots.load::<Unit>("1", |_| ()).unwrap();
    ///     let b = slots.load::<Unit>("2", |_| ()).unwrap();
    ///     assert_eq!((a.slot(), b.slot()), (0, 1));
    /// });
    /// ```
    pub fn slot(&self) -> usize {
        self.index
    }

    /// Bytes in use in the slot, as of the end of the build or the last `with_mut` (or,
    /// on a shared slot, the last `with_scope`).
    ///
    /// The figure is published when those calls end, so it leaves out anything placed
    /// in the slot since by another route: through a scope handle or a pool the root
    /// keeps and uses inside [`with`](Self::with), or by worker threads still running
    /// on a concurrent slot's scope. The next `with_mut` counts it. The slot's
    /// high-water mark in [reports](crate::MemoryMap) follows the same rule.
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 4096);
    ///     let loaded = slots.load::<Bytes>("1", |s| &*s.alloc_slice_copy(&[0u8; 1000])).unwrap();
    ///     assert!(loaded.used() >= 1000);
    /// });
    /// ```
    pub fn used(&self) -> usize {
        self.slots
            .record(self.index)
            .used
            .load(crate::sync::Ordering::Relaxed)
    }

    /// The root, mutably, with the lifetime the caller's closure is given.
    ///
    /// # Safety
    /// Only from `&mut self`, lent to a higher-ranked closure.
    #[inline]
    unsafe fn root_mut<'x, 'y>(&mut self) -> &'y mut R::Of<'x> {
        // SAFETY: per the caller; the root lives until this `Loaded` drops.
        unsafe { self.root.cast::<R::Of<'x>>().as_mut() }
    }
}

impl<R: SlotRoot> Loaded<'_, R, Plain> {
    /// Lends the root mutably together with the slot's scope, so a level keeps
    /// allocating into its slot while it plays (within the slot's size). Both are
    /// higher-ranked over the slot scope's lifetime: values placed through the scope
    /// may be stored in the root, and nothing comes back out.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    /// struct Log<'s> { lines: Vec<&'s str> }
    /// slot_root!(struct LogRoot = for<'s> Log<'s>);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("logs", 1, 4096);
    ///     let mut log = slots.load::<LogRoot>("log", |_| Log { lines: Vec::new() }).unwrap();
    ///     for turn in 0..3 {
    ///         log.with_mut(|log, scope| log.lines.push(scope.alloc_fmt(format_args!("turn {turn}"))));
    ///     }
    ///     assert_eq!(log.with(|l| l.lines.join(",")), "turn 0,turn 1,turn 2");
    /// });
    /// ```
    pub fn with_mut<T>(
        &mut self,
        f: impl for<'x, 'y> FnOnce(&'y mut R::Of<'x>, &'x ScopeStack<'x>) -> T,
    ) -> T {
        // SAFETY: we hold the slot, which is open until we drop; the handle lives in
        // the table. `&mut self` makes this the only access to the root now.
        let (root, handle) = unsafe { (self.root_mut(), self.slots.handle(self.index)) };
        let out = f(root, handle);
        self.slots.publish(self.index);
        out
    }
}

impl<R: SlotRoot> Loaded<'_, R, Task> {
    /// Lends the root mutably together with the slot's [`TaskScope`], so a request keeps
    /// placing values in its slot between `.await`s, on whichever thread runs it now.
    /// Both are higher-ranked over the slot scope's lifetime, as on a plain slot;
    /// values that need drop must be `Send` (the surface asks it).
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, Slots};
    /// struct Reply<'s> { parts: Vec<&'s str> }
    /// slot_root!(struct ReplyRoot => Reply);
    ///
    /// let requests = Slots::leak("requests", 2, 4096)?;
    /// let mut reply = requests.load_task::<ReplyRoot>("r", |_| Reply { parts: Vec::new() })?;
    /// reply.with_mut(|r, arena| r.parts.push(arena.alloc_str("built here")));
    /// let reply = std::thread::spawn(move || {
    ///     reply.with_mut(|r, arena| r.parts.push(arena.alloc_fmt(format_args!("and {}", "there"))));
    ///     reply
    /// })
    /// .join()
    /// .unwrap();
    /// assert_eq!(reply.with(|r| r.parts.join(", ")), "built here, and there");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_mut<T>(
        &mut self,
        f: impl for<'x, 'y> FnOnce(&'y mut R::Of<'x>, TaskScope<'x>) -> T,
    ) -> T {
        // SAFETY: we hold the slot, which is open until we drop; the handle lives in
        // the table. `&mut self` makes this the only access to the root and the scope
        // now, and the `TaskScope` cannot leave `f` (higher-ranked) or this thread.
        let (root, handle) = unsafe { (self.root_mut(), self.slots.handle(self.index)) };
        let out = f(root, TaskScope::new(handle));
        self.slots.publish(self.index);
        out
    }
}

impl<R: SlotRoot> Loaded<'_, R, Shared> {
    /// Lends the root mutably together with the slot's concurrent scope (which worker
    /// threads may share inside `f`), so a frame may keep growing in its slot.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    /// struct Frame<'s> { extra: Option<&'s [u32]> }
    /// slot_root!(struct FrameRoot = for<'s> Frame<'s>);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 2, 64 << 10);
    ///     let mut frame = frames.load_concurrent::<FrameRoot>("f", |_| Frame { extra: None }).unwrap();
    ///     frame.with_mut(|f, jobs| f.extra = Some(jobs.alloc_slice_copy(&[1, 2, 3])));
    ///     assert_eq!(frame.with(|f| f.extra.map_or(0, |e| e.len())), 3);
    /// });
    /// ```
    pub fn with_mut<T>(
        &mut self,
        f: impl for<'x, 'y> FnOnce(&'y mut R::Of<'x>, &'x ConcurrentScope<'x>) -> T,
    ) -> T {
        // SAFETY: we hold the slot, which is open until we drop; its concurrent scope
        // lives in the slot's memory until then. `&mut self` makes this the only
        // access to the root now.
        let (root, scope) = unsafe { (self.root_mut(), self.slots.concurrent_scope(self.index)) };
        let out = f(root, scope);
        self.slots.publish(self.index);
        out
    }
}

impl<R: SlotRoot> Loaded<'_, R, Shared> {
    /// Lends the root *shared* together with the slot's concurrent scope, through
    /// `&self`: several threads (or several systems of an engine, running in parallel)
    /// may add to one frame at once, each placing values and inserting into the root's
    /// pools, with no `&mut` and no lock. Values placed here live until the slot
    /// unloads; they may be kept in the root through the root's own shared-mutation
    /// types (a [`Pool`](crate::Pool), an atomic, a `Mutex`), never outside it (rule
    /// 13 of [`crate::rules`]).
    ///
    /// Sharing `&Loaded` across threads needs `Loaded: Sync`, that is, a `Sync` root.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator, Pool};
    /// use std::sync::Mutex;
    /// struct Frame<'s> {
    ///     draws: &'s Pool<'s, [f32; 4]>,
    ///     labels: Mutex<Vec<&'s str>>,
    /// }
    /// slot_root!(struct FrameRoot = for<'s> Frame<'s>);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 2, 64 << 10);
    ///     let frame = frames
    ///         .load_concurrent::<FrameRoot>("frame", |jobs| Frame {
    ///             draws: jobs.new_pool(64),
    ///             labels: Mutex::new(Vec::new()),
    ///         })
    ///         .unwrap();
    ///     std::thread::scope(|t| {
    ///         for system in 0..4 {
    ///             let frame = &frame; // shared: no `&mut`, the systems run at once
    ///             t.spawn(move || {
    ///                 frame.with_scope(|f, jobs| {
    ///                     // The box would free its object when dropped; the handle keeps it.
    ///                     let _kept = f.draws.insert([system as f32; 4]).unwrap().into_handle();
    ///                     let label = jobs.alloc_fmt(format_args!("system {system}"));
    ///                     f.labels.lock().unwrap().push(label);
    ///                 })
    ///             });
    ///         }
    ///     });
    ///     assert_eq!(frame.with(|f| f.draws.len()), 4);
    ///     assert_eq!(frame.with(|f| f.labels.lock().unwrap().len()), 4);
    /// });
    /// ```
    ///
    /// Nothing placed comes back out of the closure:
    ///
    /// ```compile_fail
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 1, 64 << 10);
    ///     let frame = frames.load_concurrent::<Unit>("frame", |_| ()).unwrap();
    ///     let label: &str = frame.with_scope(|_, jobs| jobs.alloc_str("late")); // error
    ///     drop(frame); // the slot rewinds here
    ///     println!("{label}");
    /// });
    /// ```
    ///
    /// A plain slot's scope is not shared (it is not `Sync`): `with_scope` is only on
    /// shared slots.
    ///
    /// ```compile_fail,E0599
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("levels", 1, 64 << 10);
    ///     let level = slots.load::<Unit>("level", |_| ()).unwrap();
    ///     level.with_scope(|_, scope| scope.alloc(1u32)); // error: no such method
    /// });
    /// ```
    pub fn with_scope<T>(
        &self,
        f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>, &'x ConcurrentScope<'x>) -> T,
    ) -> T {
        // SAFETY: we hold the slot, which is open until this `Loaded` drops, and
        // `&self` keeps it from dropping while `f` runs; its concurrent scope lives in
        // the slot's memory until then and is made to be shared by threads (`Sync`;
        // every placement through `&ConcurrentScope` is thread-safe). The root is
        // lent shared, as `with` lends it; `with_mut` (the only `&mut` to it) needs
        // `&mut self`, which cannot coexist with this borrow. Both are higher-ranked
        // over the slot's lifetime, so what `f` places can be kept only in the root
        // (through its own shared-mutation types) or dropped, never returned.
        let (root, scope) = unsafe {
            (
                self.root.cast::<R::Of<'_>>().as_ref(),
                self.slots.concurrent_scope(self.index),
            )
        };
        let out = f(root, scope);
        self.slots.publish_shared(self.index);
        out
    }
}

impl<R: SlotRoot, K: LoadedKind> Drop for Loaded<'_, R, K> {
    // `#[inline]`: a slot with nothing to drop unloads in a few dozen instructions;
    // one with destructors calls the guarded path out of line.
    #[inline]
    fn drop(&mut self) {
        // SAFETY: this `Loaded` holds the slot (it was made by its holder after the
        // build) and is being dropped, so nothing reaches the root or the slot's values
        // again (every borrow lent by `with`/`with_mut` has ended).
        unsafe { self.slots.unload(self.index) }
    }
}

impl<R: SlotRoot, K: LoadedKind> core::fmt::Debug for Loaded<'_, R, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Loaded")
            .field("slots", &self.slots.name())
            .field("slot", &self.index)
            .field("name", &self.name())
            .field("kind", &K::NAME)
            .field("used", &self.used())
            .finish()
    }
}
