//! [`TaskScope`]: a task slot's placement surface, the slot's plain scope behind the
//! bounds of a concurrent one.
//!
//! A request served by an async runtime uses its arena from one task at a time, but the
//! task may move between threads at any `.await`, and the slot may be dropped wherever
//! the task ends. A concurrent scope would do (it takes only `Send` values that need
//! drop, rule 8), at the price of its per-thread table. A `TaskScope` keeps the slot's
//! plain [`ScopeStack`] (one bump pointer, one chain, no atomics) and changes only what
//! it admits: it places through the [`Place`] and [`Carve`](crate::Carve) traits, whose
//! bounds are already the stricter ones (a value that gets a finalizer must be
//! `Send + 'static`), and its builders freeze only what [`Finalizes`] admits for it
//! (the same `Send + 'static`). It has no inherent placement methods of its own, so
//! it cannot drift from the other surfaces (rule 11): bring `Place` (and `Carve`) into
//! scope to call them.
//!
//! Invariants:
//! - A `TaskScope` wraps the handle of an open task slot and is lent only to
//!   higher-ranked closures (`Slots::load_task`'s build, `Loaded::with_mut`), so it
//!   cannot outlive the call; it is neither `Send` nor `Sync` (it holds a
//!   `&ScopeStack`), so no other thread reaches the scope's `Cell`s meanwhile.
//! - Every finalizer linked through it is for a `Send + 'static` value, so the chain may
//!   run on whichever thread drops the `Loaded` (what makes `Loaded<_, _, Task>` `Send`).
//! - The plain handle inside is never handed out: the core the placement code works
//!   through is reachable only from this crate.

use core::fmt;

use crate::scope::builders::{sealed, Finalizes};
use crate::scope::place::{allocator_through_core, Handle, Place, Sealed};
use crate::scope::ScopeStack;

/// The placement surface of a task slot ([`Slots::load_task`](crate::Slots::load_task),
/// [`Loaded::with_mut`](crate::Loaded::with_mut) on a [`Task`](crate::Task) slot): every
/// method of [`Place`] and [`Carve`](crate::Carve), over the slot's plain scope, with
/// the bound a concurrent scope has: a value that needs drop must be `Send`, because
/// the task may end (and drop the slot) on another thread.
///
/// A `Copy` handle, like `&ScopeStack`; neither `Send` nor `Sync`, so it stays in the
/// closure it was lent to, on that thread.
///
/// ```
/// use scope_stack::{slot_root, Carve, Place, Slots};
/// struct Request<'s> { path: &'s str, ids: &'s [u32], log: &'s mut Vec<String> }
/// slot_root!(struct RequestRoot => Request);
///
/// let requests = Slots::leak("requests", 4, 8 << 10)?;
/// let request = requests.load_task::<RequestRoot>("GET /a", |arena| Request {
///     path: arena.alloc_str("/a"),
///     ids: arena.alloc_slice_copy(&[1, 2, 3]),
///     log: arena.new_object(Vec::new()), // `Vec<String>` is `Send`: a finalizer is fine
/// })?;
/// let answer = std::thread::spawn(move || request.with(|r| format!("{} {:?}", r.path, r.ids)));
/// assert_eq!(answer.join().unwrap(), "/a [1, 2, 3]");
/// # let _ = |s: scope_stack::TaskScope<'_>| { let _: &mut scope_stack::Pool<'_, u8> = s.new_pool(1); };
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A value that needs drop and is not `Send` is refused (its destructor could run on
/// another thread):
///
/// ```compile_fail,E0277
/// use scope_stack::{slot_root, Place, Slots};
/// slot_root!(struct Unit = for<'s> ());
/// let requests = Slots::leak("requests", 1, 4096).unwrap();
/// let _r = requests.load_task::<Unit>("r", |arena| {
///     arena.new_object(std::rc::Rc::new(1)); // error: `Rc<i32>` cannot be sent between threads
/// });
/// ```
///
/// and so is a builder frozen with such values:
///
/// ```compile_fail,E0277
/// use scope_stack::{slot_root, Place, Slots};
/// slot_root!(struct Unit = for<'s> ());
/// let requests = Slots::leak("requests", 1, 4096).unwrap();
/// let _r = requests.load_task::<Unit>("r", |arena| {
///     let mut v = arena.new_vec();
///     v.push(std::rc::Rc::new(1));
///     v.into_slice(); // error: `Rc<i32>` cannot be sent between threads
/// });
/// ```
///
/// The handle cannot go to another thread while the closure runs:
///
/// ```compile_fail,E0277
/// use scope_stack::{slot_root, Place, Slots};
/// slot_root!(struct Unit = for<'s> ());
/// let requests = Slots::leak("requests", 1, 4096).unwrap();
/// let mut r = requests.load_task::<Unit>("r", |_| ()).unwrap();
/// r.with_mut(|_, arena| {
///     std::thread::scope(|t| {
///         t.spawn(move || arena.alloc_str("x").len()); // error: cannot be shared between threads
///     });
/// });
/// ```
///
/// nor leave it:
///
/// ```compile_fail,E0521
/// use scope_stack::{slot_root, Slots, TaskScope};
/// slot_root!(struct Unit = for<'s> ());
/// let requests = Slots::leak("requests", 1, 4096).unwrap();
/// let mut r = requests.load_task::<Unit>("r", |_| ()).unwrap();
/// let mut kept: Option<TaskScope<'_>> = None;
/// r.with_mut(|_, arena| kept = Some(arena)); // error: borrowed data escapes the closure
/// ```
#[derive(Clone, Copy)]
pub struct TaskScope<'s> {
    scope: &'s ScopeStack<'s>,
}

impl<'s> TaskScope<'s> {
    /// Wraps the handle of an open task slot.
    #[inline(always)]
    pub(crate) fn new(scope: &'s ScopeStack<'s>) -> Self {
        TaskScope { scope }
    }

    /// The slot scope's name (the name the slot was loaded with).
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let requests = Slots::leak("requests", 1, 4096)?;
    /// let _r = requests.load_task::<Unit>("GET /", |arena| assert_eq!(arena.name(), "GET /"))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> &str {
        self.scope.name()
    }

    /// Bytes still free in the slot.
    ///
    /// ```
    /// # use scope_stack::{slot_root, Place, Slots};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let requests = Slots::leak("requests", 1, 4096)?;
    /// let _r = requests.load_task::<Unit>("r", |arena| {
    ///     let before = arena.remaining();
    ///     arena.alloc_slice_fill_copy(100, 0u8);
    ///     assert!(arena.remaining() <= before - 100);
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remaining(&self) -> usize {
        self.scope.remaining()
    }
}

impl fmt::Debug for TaskScope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskScope")
            .field("name", &self.name())
            .field("remaining", &self.remaining())
            .finish()
    }
}

impl<'s> Handle<'s> for TaskScope<'s> {
    type Core<'h>
        = &'s ScopeStack<'s>
    where
        Self: 'h;
    #[inline(always)]
    fn as_core(&self) -> &'s ScopeStack<'s> {
        self.scope
    }
}

impl Sealed for TaskScope<'_> {}

impl<'s> Place<'s> for TaskScope<'s> {
    type Handle = TaskScope<'s>;
    #[inline(always)]
    fn handle(&self) -> TaskScope<'s> {
        *self
    }
}

// SAFETY: the chain of a task slot runs on whichever thread drops its `Loaded`, so a
// value with a destructor must be `Send` (as on a concurrent scope, rule 8) and
// `'static` (no borrow may end before the chain runs).
unsafe impl<'s, T: Send + 'static> Finalizes<T> for TaskScope<'s> {}
impl<'s, T: Send + 'static> sealed::Admits<T> for TaskScope<'s> {}

// SAFETY: as for `&ScopeStack`, whose core this is: memory from `allocate` is fresh and
// exclusive to the caller and stays valid until the slot unloads, which cannot happen
// while a `&TaskScope` lives (it is lent inside a closure that borrows the `Loaded`).
// Bytes move back only when they are the newest of the slot's region. A collection
// drops its own elements (the allocator links no finalizer), wherever it is dropped.
allocator_through_core!(&TaskScope<'_>, |this| this.scope);
