//! The soundness rules, in plain words, each with its proof.
//!
//! Safe code using this crate cannot cause undefined behaviour. These are the rules that
//! make it so. Rules 1, 2, 4, the lifetime and `Send` parts of 10, the lifetime part
//! of 12 and rule 13 are enforced by the type system: the examples below that break them do not
//! compile (they are `compile_fail` doctests, and the programs in `rules::cases`,
//! doctests too, break each rule once more in a whole program, with the error code the
//! compiler must give; the source is `src/rules/cases.rs`). Rules 3 and 5 are run-time
//! behaviour, proven by the tests named with each.
//!
//! # 1. No reference outlives its scope
//!
//! A scope is lent to a closure with a higher-ranked lifetime, and everything it hands out
//! carries that lifetime, so nothing can leave the closure:
//!
//! ```compile_fail,E0521
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(64).unwrap();
//! let mut escaped: Option<&mut u32> = None;
//! memory.scope("level", |level| {
//!     escaped = Some(level.new_pod(7u32)); // error: borrowed data escapes the closure
//! });
//! ```
//!
//! Returning it fails the same way:
//!
//! ```compile_fail
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(64).unwrap();
//! let x = memory.scope("level", |level| level.new_pod(7u32)); // lifetime may not live long enough
//! ```
//!
//! # 2. Only the innermost live scope allocates
//!
//! Opening a child borrows the parent mutably, so the parent cannot allocate (its memory
//! would land inside the child's region and be rewound under it):
//!
//! ```compile_fail,E0502
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(64).unwrap();
//! memory.scope("systems", |systems| {
//!     systems.scope("level", |level| {
//!         systems.new_pod(1u8); // error: `*systems` is already borrowed mutably
//!         level.new_pod(2u8);
//!     });
//! });
//! ```
//!
//! Values the parent handed out *before* the child opened stay usable inside it, because
//! they carry the parent's lifetime rather than the borrow of the handle:
//!
//! ```
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(64).unwrap();
//! memory.scope("systems", |systems| {
//!     let config = systems.new_pod(60u32);
//!     systems.scope("level", |level| {
//!         *config += 1;
//!         level.new_pod(*config);
//!     });
//!     assert_eq!(*config, 61);
//! });
//! ```
//!
//! The outermost scope borrows the [`LinearAllocator`](crate::LinearAllocator) mutably
//! for the same reason, so two outermost scopes cannot be live at once.
//!
//! ## Suspended, not frozen
//!
//! Scratch scopes ([`scratch`](crate::scratch()), [`ScratchPads`](crate::ScratchPads))
//! open a child without borrowing the parent: a helper function opens one wherever it is
//! called. The parent's cursor is *suspended* instead, so a new allocation through it
//! panics (or returns [`AllocErrorKind::NotInnermost`](crate::AllocErrorKind::NotInnermost)).
//! What the parent handed out before the child opened still works, and may still change
//! the parent: a builder made earlier has already claimed its room, so freezing it
//! links the parent's finalizer record without a bump, and a heap made earlier still
//! allocates in its own region. A caller cannot know whether a function it calls opens
//! scratch, so this is allowed:
//!
//! ```
//! let names = scope_stack::scratch(|outer| {
//!     let outer = &**outer;
//!     let mut names = scope_stack::Place::new_vec(&outer);
//!     names.push(String::from("frog"));
//!     scope_stack::scratch(|inner| {
//!         inner.alloc_str("a helper's temporary");
//!         // The builder's room was claimed before `inner` opened: freezing it links
//!         // a finalizer record on `outer`, and places nothing new.
//!         names.into_slice().len()
//!     })
//! });
//! assert_eq!(names, 1);
//! ```
//!
//! A reader on another thread (a [`MapHandle`](crate::MapHandle), a concurrent scope's
//! [`report`](crate::ConcurrentScope::report)) therefore relies only on what cannot
//! change or is published for it: a suspended scope's finalizer chain is read through
//! an atomic head that the owner publishes each record with (release) and the reader
//! loads (acquire), so a report shows the records linked up to some moment, newest
//! first, and may show more in the next report. The list of what each reader reads,
//! and why each read is safe, is in the module docs of `report::handle`.
//!
//! # 3. Destructors run in exact reverse order of construction
//!
//! Then the block rewinds to where the scope began. Values that need no drop get no
//! finalizer record, so a scope that holds only such values unwinds in O(1).
//! Proven by `tests/suite/drop_order.rs`.
//!
//! # 4. A destructor never sees a destroyed value
//!
//! The finalizer chain is type-erased, so the compiler's drop check cannot see the order
//! in which scope values are destroyed. The API closes that hole itself:
//!
//! - values that get a finalizer ([`new_object`](crate::ScopeStack::new_object), the
//!   `alloc_slice_*` forms for types that need drop) must be `'static`, so they cannot
//!   borrow scope memory that might already be destroyed;
//! - non-`'static` values are accepted only when they need no drop
//!   ([`new_pod`](crate::ScopeStack::new_pod), [`alloc_slice_copy`](crate::ScopeStack::alloc_slice_copy)):
//!   nothing runs when they go away.
//!
//! Without the rule, this would read a freed `String` when the scope unwinds (the
//! `String` was created later, so it is destroyed first):
//!
//! ```compile_fail,E0597
//! # use scope_stack::LinearAllocator;
//! struct Reader<'a>(&'a String);
//! impl Drop for Reader<'_> {
//!     fn drop(&mut self) { println!("{}", self.0); }
//! }
//! let mut memory = LinearAllocator::with_capacity(1024).unwrap();
//! memory.scope("level", |level| {
//!     let later = String::from("gone");
//!     level.new_object(Reader(&later)); // error: `later` does not live long enough
//! });
//! ```
//!
//! `new_pod` refuses types that need drop at compile time:
//!
//! ```compile_fail,E0080
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1024).unwrap();
//! memory.scope("level", |level| {
//!     level.new_pod(vec![1, 2, 3]);
//! });
//! ```
//!
//! [`new_object_unchecked`](crate::ScopeStack::new_object_unchecked) is the `unsafe`
//! opt-in for non-`'static` values; its contract is that the destructor uses only data
//! that outlives the value (outside the scope, or created before it in the same scope).
//! This is the rule blink-alloc settled on; scoped-arena's issue #1 shows the
//! use-after-free that follows without it.
//!
//! # 5. Panics neither leak nor double-drop
//!
//! A panic inside a scope's closure still unwinds the scope: finalizers run and the block
//! rewinds. A panic in one destructor does not skip the others (if a second destructor
//! also panics while the first panic unwinds, the process aborts, as it does for `Vec`).
//! Proven by `tests/suite/panics.rs`.
//!
//! # 6. Nothing touches the global heap after construction
//!
//! A [`LinearAllocator`](crate::LinearAllocator) makes one global-heap reservation in
//! `with_capacity` (none with `from_static`) and never another. Proven by
//! `tests/suite/no_heap.rs` with a counting global allocator.
//!
//! # 7. Every `unsafe` block says why it holds
//!
//! Each one has a `// SAFETY:` comment, and the whole suite runs under Miri with strict
//! provenance and symbolic alignment checks.
//!
//! # 8. Concurrent scopes keep every thread inside the closure
//!
//! [`scope_concurrent`](crate::ScopeStack::scope_concurrent) borrows its parent mutably
//! and lends `&'c ConcurrentScope` with a higher-ranked `'c`, so any number of threads
//! may allocate into it at once while nothing of theirs outlives the closure: a thread
//! can only hold the scope if it was joined before the closure returns, and that join
//! orders everything it did before the close. Values that get a finalizer there must be
//! `Send + 'static`, because their destructor runs on the closing thread. Each thread's
//! finalizers run in reverse order of construction. Proven by the `compile_fail`
//! examples of [`crate::concurrent`] (a reference escaping the closure, the scope moved
//! into a `'static` thread, a non-`Send` value given to `new_object`, a `LocalScope`
//! sent to another thread), by `tests/suite/concurrent.rs` and `tests/stress/concurrent_stress.rs`
//! under Miri, and by the loom models in `tests/loom/loom_concurrent.rs`.
//!
//! # 9. Statistics are exact, or say they are a bound
//!
//! Used bytes and high-water marks are what users size blocks from. A concurrent
//! scope's report counts every chunk's used bytes exactly (a chunk's header included)
//! and says which tails are still free and which were left behind; while it is open the
//! block's own counters leave its region out, and its close counts the region's peak
//! into the block's high-water mark. Proven by `tests/suite/concurrent.rs`
//! (`reports_list_every_chunk_with_its_thread`,
//! `statistics_count_the_regions_peak_after_the_close`).
//!
//! # 10. Lifetimes that do not nest are owned values
//!
//! [`Slots`](crate::Slots) cut a scope's memory into sub-blocks that load and unload in
//! any order. A loaded slot is an owned value, [`Loaded`](crate::Loaded), that borrows
//! its `Slots`, which carry the carving scope's lifetime: it cannot outlive them.
//!
//! ```compile_fail
//! # use scope_stack::{slot_root, LinearAllocator};
//! # slot_root!(struct Unit = for<'s> ());
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! let loaded = memory.scope("game", |game| {
//!     let slots = game.new_slots("levels", 1, 4096);
//!     slots.load::<Unit>("level", |_| ()).unwrap() // error: lifetime may not live long enough
//! });
//! ```
//!
//! The root is reached only through closures that are higher-ranked over the slot
//! scope's lifetime, so no reference into the slot comes back out (and nothing that
//! lives shorter than the slot goes in):
//!
//! ```compile_fail
//! # use scope_stack::{slot_root, LinearAllocator};
//! slot_root!(struct Text = for<'s> &'s str);
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("game", |game| {
//!     let slots = game.new_slots("levels", 1, 4096);
//!     let loaded = slots.load::<Text>("level", |s| &*s.alloc_str("forest")).unwrap();
//!     let name: &str = loaded.with(|text| *text); // error: lifetime may not live long enough
//!     drop(loaded);
//!     println!("{name}");
//! });
//! ```
//!
//! The borrow of the root is never the root's own lifetime. [`with`](crate::Loaded::with)
//! lends `&'y R::Of<'x>` and [`with_mut`](crate::Loaded::with_mut) lends
//! `&'y mut R::Of<'x>`, both higher-ranked over `'x` (what the root may hold: the slot's
//! memory, which lives until unload) and `'y` (this one call). If the two were the same
//! lifetime, a closure could store a reference to the root's own fields, or to heap
//! data the root owns, inside the root; a later call could then replace that data (a
//! `String` reassigned, an enum variant swapped) and leave the stored reference
//! dangling. With `'y` shorter than `'x`, only what lives as long as the slot (values
//! placed through the slot's scope) can be stored in the root:
//!
//! ```compile_fail
//! # use scope_stack::{slot_root, LinearAllocator};
//! struct Node<'s> { owned: String, view: &'s str }
//! slot_root!(struct NodeRoot => Node);
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("game", |game| {
//!     let slots = game.new_slots("levels", 1, 4096);
//!     let mut l = slots.load::<NodeRoot>("a", |_| Node { owned: "x".repeat(64), view: "" }).unwrap();
//!     l.with_mut(|n, _| n.view = &n.owned); // error: lifetime may not live long enough
//!     l.with_mut(|n, _| n.owned = String::new());
//!     l.with(|n| println!("{}", n.view));
//! });
//! ```
//!
//! Dropping a `Loaded` drops the root first (its destructor may read the slot's other
//! values), then runs the slot's finalizers newest first, rewinds the slot and frees
//! it. `mem::forget` of it leaks, never dangles: each slot is a block of its own whose
//! scope record lives in the `Slots` table (in the parent's memory), never in a stack
//! frame and never in the parent block's list of live scopes, so nothing the parent's
//! close or its reports read points into a forgotten slot. A panicking `build` runs
//! what it placed and frees the slot; a panicking destructor skips no other.
//!
//! A slot built through a plain scope stays on its thread (a value placed there may
//! have a destructor that must not run elsewhere):
//!
//! ```compile_fail,E0277
//! # use scope_stack::{slot_root, LinearAllocator};
//! # slot_root!(struct Unit = for<'s> ());
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("game", |game| {
//!     let slots = game.new_slots("levels", 1, 4096);
//!     let loaded = slots.load::<Unit>("level", |_| ()).unwrap();
//!     std::thread::scope(|t| {
//!         t.spawn(move || drop(loaded)); // error: `Loaded<'_, Unit>` cannot be sent
//!     });
//! });
//! ```
//!
//! One built by [`load_concurrent`](crate::Slots::load_concurrent) may cross threads
//! when its root is `Send`: a concurrent scope only takes `Send` values that need drop
//! (rule 8), so its finalizers may run on the thread that drops it.
//!
//! ```
//! # use scope_stack::{slot_root, LinearAllocator};
//! slot_root!(struct Numbers = for<'s> &'s [u32]);
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("game", |game| {
//!     let frames = game.new_slots("frames", 1, 16 << 10);
//!     let frame = frames
//!         .load_concurrent::<Numbers>("frame", |jobs| &*jobs.alloc_slice_copy(&[1, 2, 3]))
//!         .unwrap();
//!     std::thread::scope(|t| {
//!         t.spawn(move || assert_eq!(frame.with(|n| n.len()), 3)); // dropped there
//!     });
//! });
//! ```
//!
//! ```compile_fail,E0277
//! # use scope_stack::{slot_root, LinearAllocator};
//! slot_root!(struct Counted = for<'s> std::rc::Rc<u32>);
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("game", |game| {
//!     let frames = game.new_slots("frames", 1, 16 << 10);
//!     let frame = frames.load_concurrent::<Counted>("frame", |_| std::rc::Rc::new(1)).unwrap();
//!     std::thread::scope(|t| {
//!         t.spawn(move || drop(frame)); // error: `Rc<u32>` cannot be sent between threads
//!     });
//! });
//! ```
//!
//! **A slot one task at a time uses.** A request served by an async runtime keeps its
//! arena across `.await`s, and a work-stealing runtime may resume the task on another
//! thread. [`load_task`](crate::Slots::load_task) (and its `try_`, `_wait` and
//! `_async` forms) builds such a slot through a [`TaskScope`](crate::TaskScope): the
//! slot's plain scope (no concurrent scope, no per-thread table, the cost of a plain
//! load) behind the [`Place`](crate::Place) and [`Carve`](crate::Carve) traits only,
//! whose bounds are a concurrent scope's: a value that gets a finalizer must be
//! `Send + 'static`, and so must the items of a container or a builder it freezes.
//! [`Loaded::with_mut`](crate::Loaded::with_mut) lends the same surface, and nothing
//! else reaches the slot's scope. So every destructor on the slot's chain may run on
//! any thread, and its [`Task`](crate::Task) `Loaded` is `Send` when its root is. The
//! scope's `Cell`s are never shared: `with_mut` needs `&mut Loaded`, the `TaskScope` it
//! lends is neither `Send` nor `Sync` and cannot leave the closure (higher-ranked), so
//! one thread at a time uses them, and moving the `Loaded` to another thread, which
//! safe code does only through something that orders the two threads, hands them over
//! whole. A non-`Send` value that needs drop is refused:
//!
//! ```compile_fail,E0277
//! # use scope_stack::{slot_root, Place, Slots};
//! # slot_root!(struct Unit = for<'s> ());
//! let requests = Slots::leak("requests", 1, 4096).unwrap();
//! let request = requests.load_task::<Unit>("r", |arena| {
//!     arena.new_object(std::rc::Rc::new(1)); // error: `Rc<i32>` cannot be sent between threads
//! });
//! ```
//!
//! ```
//! # use scope_stack::{slot_root, Place, Slots};
//! slot_root!(struct Names = for<'s> &'s [String]);
//! let requests = Slots::leak("requests", 1, 4096).unwrap();
//! let request = requests
//!     .load_task::<Names>("r", |arena| &*arena.alloc_slice_clone(&[String::from("a")]))
//!     .unwrap();
//! std::thread::spawn(move || assert_eq!(request.with(|n| n.len()), 1)).join().unwrap();
//! ```
//!
//! **Sharing a loaded slot.** A `&Loaded` lends only `&root` (through
//! [`with`](crate::Loaded::with)) and reads the slot's name and use figure, so a
//! `Loaded` of any kind is `Sync` exactly when its root is (`R::Of<'static>: Sync`),
//! and only a shared one ([`Shared`](crate::Shared), from `load_concurrent`) or a task
//! one ([`Task`](crate::Task), from `load_task`) is ever `Send`. A plain `Loaded` is never `Send`: scoped threads may read it, but nothing
//! that needs `Send + Sync` can hold it. An engine whose resources must be
//! `Send + Sync` (a Bevy resource, a `OnceLock` in a `static`, a value moved into
//! `std::thread::spawn` or `tokio::spawn`) keeps `Loaded<'static, R, Shared>` with a
//! `Sync` root; a root with a `Cell`, a `RefCell` or an `Rc` makes it not `Sync`:
//!
//! ```compile_fail,E0277
//! # use scope_stack::{slot_root, Slots};
//! slot_root!(struct Counter = for<'s> std::cell::Cell<u32>);
//! fn resource<T: Send + Sync + 'static>(_: &T) {}
//! let frames = Slots::leak("frames", 1, 16 << 10).unwrap();
//! let frame = frames.load_concurrent::<Counter>("frame", |_| std::cell::Cell::new(0)).unwrap();
//! resource(&frame); // error: `Cell<u32>` cannot be shared between threads safely
//! ```
//!
//! **Sets that live as long as the program.** [`Slots::leak`](crate::Slots::leak) (one
//! block from the global heap, never given back) and
//! [`Slots::from_static`](crate::Slots::from_static) (a caller's `&'static mut` buffer)
//! make a `&'static Slots`, whose loaded slots are `Loaded<'static, R, K>`: fields of
//! an engine struct without a lifetime parameter, or values in a `static`. Each is a
//! root scope over its memory that is opened once and never closes, so everything
//! carved in it lives for `'static`, and nothing writes that scope's block or record
//! after the carve (reports only read them). `'static` lets nothing shorter in: the
//! root is still built by a closure that is higher-ranked over the slot scope's
//! lifetime, so it holds what was placed in its slot, or `'static` data, never a
//! borrow of a local or of an outer scope's value:
//!
//! ```compile_fail
//! # use scope_stack::{slot_root, Slots};
//! slot_root!(struct Text = for<'s> &'s str);
//! let levels = Slots::leak("levels", 1, 4096).unwrap();
//! let local = String::from("forest");
//! let level = levels.load::<Text>("level", |_| local.as_str()).unwrap(); // error
//! drop(local);
//! level.with(|name| println!("{name}"));
//! ```
//!
//! A slot's state is an atomic (free, building, loaded): claiming it is a
//! compare-exchange (acquire), freeing it a release store, so the thread that holds a
//! slot has it alone and sees all its predecessor did; a waiting load sleeps on a
//! futex and cannot miss a free. Proven by the fifteen `Rule10*`
//! `compile_fail` programs in `src/rules/cases.rs`, by `tests/suite/slots.rs`, `tests/suite/slots_bad_input.rs`,
//! `tests/stress/slots_stress.rs`, `tests/models/model_slots.rs` and `tests/static_slots.rs` (also under Miri, scaled down)
//! and by the loom models in `tests/loom/loom_slots.rs`.
//!
//! # 11. One placement API
//!
//! Every kind of scope offers the same placement methods, each written once over a
//! small private core (`src/scope/place/`): [`ScopeStack`](crate::ScopeStack), one
//! thread's [`LocalScope`](crate::LocalScope) and `&`[`ConcurrentScope`](crate::ConcurrentScope)
//! have the same names, `try_` forms and errors, and the public [`Place`](crate::Place)
//! trait lets one helper serve all of them. The surfaces differ only where a rule
//! demands it: on a concurrent scope (and so through `Place`) a value that gets a
//! finalizer must be `Send` as well as `'static` (rule 8). Items that need no drop may
//! borrow, even from the same scope ([`alloc_iter_pod`](crate::ScopeStack::alloc_iter_pod),
//! like `new_pod`): no finalizer is recorded for them, so no destructor can see a dead
//! borrow. A destructor-carrying value that only outlives the scope (`T: 's`) is *not*
//! admitted: it could borrow a value of the same scope placed after it, which the chain
//! destroys first (see the `Place` docs for the `compile_fail` proofs). Proven by
//! `tests/suite/place_parity.rs`, which calls every method and its `try_` form on every
//! surface and through the trait, and fails when a method exists on one surface only.
//!
//! **An allocation is grown, shrunk or freed in place only by the scope that made it.**
//! Every surface's allocator-api2 `Allocator` (and the builders) act in place only on
//! the newest block of the surface's own region, and only while the surface may
//! allocate: a scope with a child open is suspended (its limit is 0), so a collection
//! of an ancestor can neither grow over the child's memory nor free the child's bytes
//! (bump-scope's advisory GHSA-xhx6-q96x-pf9c was exactly that: an ancestor's block
//! grown in place through the cursor a child was using, then freed by the child's
//! rewind). On `ScopeStack` the borrow checker already refuses the program, since a
//! collection holds `&ScopeStack` and the child needs `&mut`:
//!
//! ```compile_fail,E0502
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     let mut v = allocator_api2::vec::Vec::<u64, _>::new_in(&**level);
//!     level.scope("frame", |_frame| {
//!         v.push(1); // error: `*level` is borrowed by `v`
//!     });
//! });
//! ```
//!
//! Where the nesting goes around the handle (a nested scratch scope opened by a called
//! function, through the thread's scratch), the suspended ancestor refuses the push at
//! run time with a panic that says only the innermost scope allocates, and the child's
//! data stays intact (`tests/ancestor_grow.rs`). Concurrent scopes open no children,
//! slots have regions of their own, and heaps have rule 12.
//!
//! Containers follow the same rule: [`new_pool`](crate::ScopeStack::new_pool),
//! `new_pool_with_shards`, `new_dense_pool`, `new_store`, `new_slots`, `new_pool_pod`
//! and `new_dense_pool_pod` (with their `try_` forms) are on every kind of scope, each
//! body written once over the same core, and the [`Carve`](crate::Carve) trait lets
//! one level builder serve all of them. On a concurrent scope the items of a container
//! with a destructor must be `Send`: whichever thread closes the scope (or unloads the
//! slot) drops what is left in it.
//!
//! ```compile_fail,E0277
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("level", |level| {
//!     level.scope_concurrent("load", |load| {
//!         load.new_dense_pool::<std::rc::Rc<u32>>(8); // error: `Rc<u32>` cannot be sent
//!     });
//! });
//! ```
//!
//! Proven by `tests/suite/levels.rs` (every container on every surface, a level with pools
//! built on a loader thread and played on another).
//!
//! # Builders that grow in place
//!
//! A [`ScopeVec`](crate::ScopeVec) or [`ScopeString`](crate::ScopeString) takes the top
//! of its scope while it lives. On a [`ScopeStack`](crate::ScopeStack) it borrows the
//! scope mutably (rule 2): nothing else is placed there and no child opens until it is
//! frozen or dropped, so a builder of an outer scope can never grow while a child is
//! open (E0499 below; E0502 for a placement, in the `ScopeVec` docs). Through a shared
//! handle (`Place`, a slot's `&ScopeStack`, a `LocalScope`, `&ConcurrentScope`) other
//! placements may happen meanwhile: the builder grows in place only while the end of its
//! room is still the top of the region, which it checks on every growth, and otherwise
//! moves to fresh room. Either way no room is grown, shrunk or given back by anything but
//! the surface that handed it out, and only while it is the newest allocation there.
//!
//! ```compile_fail,E0499
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
//! memory.scope("level", |level| {
//!     let mut names = level.new_vec::<u32>();
//!     level.scope("frame", |frame| {   // error: `level` is already borrowed mutably
//!         names.push(1);
//!         frame.new_pod(2u8);
//!     });
//!     names.push(3);
//! });
//! ```
//!
//! Freezing follows rule 4: `into_slice` gives a type that needs drop a finalizer, so
//! it asks for `'static` (and `Send` on a concurrent scope), and `into_slice_pod` refuses
//! types that need drop at build time:
//!
//! ```compile_fail,E0597
//! # use scope_stack::LinearAllocator;
//! struct Reader<'a>(&'a String);
//! impl Drop for Reader<'_> {
//!     fn drop(&mut self) { println!("{}", self.0); }
//! }
//! let mut memory = LinearAllocator::with_capacity(1024).unwrap();
//! memory.scope("level", |level| {
//!     let later = String::from("gone");
//!     let mut v = level.new_vec();
//!     v.push(Reader(&later));
//!     v.into_slice(); // error: `later` does not live long enough
//! });
//! ```
//!
//! ```compile_fail,E0080
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1024).unwrap();
//! memory.scope("level", |level| {
//!     let mut v = level.new_vec();
//!     v.push(String::from("x"));
//!     v.into_slice_pod();
//! });
//! ```
//!
//! Proven at run time (drops counted exactly, panics in `retain` and `extend`, out of
//! memory, zero-sized and 64-byte-aligned elements, builders moved by placements above
//! them, threads) by `tests/suite/builders.rs`.
//!
//! # 12. A heap lives as long as its scope
//!
//! [`new_heap`](crate::ScopeStack::new_heap) (on every kind of scope, and through
//! [`Carve`](crate::Carve)) places a [`Heap`](crate::Heap) and its region in the scope
//! and returns `&'s Heap`, a shared reference with the scope's lifetime. Three things
//! follow.
//!
//! **Nothing allocated from a heap outlives its scope.** A collection in the heap holds
//! `&'s Heap` (its allocator), so it is bounded by `'s` like any value the scope hands
//! out (rule 1), and the region is only rewound when `'s` ends:
//!
//! ```compile_fail,E0521
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! let mut escaped = None;
//! memory.scope("level", |level| {
//!     let heap = level.new_heap(4096);
//!     let mut names = allocator_api2::vec::Vec::<u8, _>::new_in(heap);
//!     names.push(1);
//!     escaped = Some(names); // error: borrowed data escapes the closure
//! });
//! ```
//!
//! ```compile_fail
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! let map = memory.scope("level", |level| {
//!     hashbrown::HashMap::<u32, u32, hashbrown::DefaultHashBuilder, _>::with_hasher_in(
//!         Default::default(),
//!         level.new_heap(4096),
//!     ) // error: lifetime may not live long enough
//! });
//! ```
//!
//! A heap in a slot's root is reached, like the rest of the root, only inside the
//! higher-ranked closures of [`Loaded`](crate::Loaded) (rule 10):
//!
//! ```compile_fail
//! # use scope_stack::{slot_root, Heap, LinearAllocator};
//! slot_root!(struct HeapRoot = for<'s> &'s Heap);
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("game", |game| {
//!     let slots = game.new_slots("levels", 1, 16 << 10);
//!     let level = slots.load::<HeapRoot>("level", |s| s.new_heap(4096)).unwrap();
//!     let heap: &Heap = level.with(|h| *h); // error: lifetime may not live long enough
//!     drop(level); // the slot, and the heap's region with it, is free again
//!     let _dangling = allocator_api2::boxed::Box::new_in(1u64, heap);
//! });
//! ```
//!
//! **A heap borrows the scope, not its handle.** `&'s Heap` carries the scope's
//! lifetime, not a borrow of the `&ScopeStack` handle, so while a collection holds the
//! heap the scope may still open children (`scope` takes `&mut`), and frames come and
//! go above a level-long map (the [`heap`](crate::heap) module docs show the loop). The
//! heap's region sits below every child, and the heap never moves the scope's cursor
//! after carving, so a child's rewind cannot touch a heap block, and a heap block is
//! never grown into a child's memory. (bump-scope's advisory GHSA-xhx6-q96x-pf9c was
//! such a case: a collection of an ancestor scope grew in place through the cursor that
//! a child scope was using, and the child's rewind freed it. A scope's own `Allocator`
//! here grows only the newest block of its own region, and only while no child is
//! open: it is `&ScopeStack`, which a child's `&mut` borrow excludes.)
//!
//! **A block is grown, shrunk and freed only by the heap that made it.** The
//! `Allocator` methods that take a block back (`deallocate`, `grow`, `shrink`) are
//! `unsafe`, and their contract is that the block came from the same allocator; safe
//! collections keep the `&Heap` they allocated with and call only it. The impl is for
//! `&Heap` alone: no `Heap` is ever handed out by value or as `&mut`, so no safe code
//! can swap, replace or reset one under a collection that holds it:
//!
//! ```compile_fail,E0308
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     let (a, b) = (level.new_heap(4096), level.new_heap(4096));
//!     core::mem::swap(a, b); // error: expected `&mut _`, found `&Heap`
//! });
//! ```
//!
//! **The heap goes in one step.** When the scope ends (or its slot unloads) the region
//! is rewound with the scope, whatever is still allocated: the heap walks nothing and
//! runs no destructor of a collection's items. The collections themselves are the
//! user's values. Dropping them frees their blocks (and runs their items' destructors)
//! as usual; a collection that is never dropped (forgotten, or kept in a `new_pod`
//! value) leaks whatever its items own elsewhere (a `String`'s global-heap bytes),
//! which safe Rust allows, and never dangles, since nothing can reach it after `'s`.
//! Collections of items that need no drop never need dropping at all.
//!
//! `Heap` is `Sync` (each call takes the heap's lock), so collections on several
//! threads may share one, and a level loaded through
//! [`load_concurrent`](crate::Slots::load_concurrent) may hold a heap and cross to the
//! game thread. Proven by `tests/heap.rs` (drop order beside a heap, two threads, every
//! kind of scope and both kinds of slot load; also under Miri).
//!
//! # 13. Many writers add to one shared slot without `&mut`
//!
//! [`Loaded::with_scope`](crate::Loaded::with_scope) lends a shared slot's root *shared*
//! together with its [`ConcurrentScope`](crate::ConcurrentScope), through `&Loaded`, so
//! systems running in parallel add to one frame at once. Why it holds:
//!
//! - **Only shared slots.** A slot built by [`load_concurrent`](crate::Slots::load_concurrent)
//!   has a concurrent scope, made to be shared by threads (rule 8: it takes only `Send`
//!   values that need drop, and every placement through `&ConcurrentScope` is
//!   thread-safe). A plain slot's scope is not `Sync`, so a plain `Loaded` has no
//!   `with_scope` (E0599, shown on the method).
//! - **The root is touched only through shared references** while writers place
//!   values: `with_scope` and `with` lend `&Root`, so other threads see the root only
//!   through what it offers to `&self` (a [`Pool`](crate::Pool)'s insert, an atomic, a
//!   `Mutex`). Lending `&Loaded` to another thread needs `Loaded: Sync`, which needs a
//!   `Sync` root (rule 10), so a root with a `Cell` cannot be written from two threads.
//!   `with_mut`, the only `&mut Root`, takes `&mut Loaded`, which the borrow checker
//!   keeps apart from every shared borrow.
//! - **No placed value outlives the slot.** The closure is higher-ranked over the slot's
//!   lifetime, as `with` and `with_mut` are: what it places can be kept in the root
//!   (through its shared-mutation types) or dropped, never returned or stored outside.
//!   The slot unloads only when its `Loaded` drops, which needs ownership, so no
//!   `with_scope` runs then; the root is dropped first, while every placed value it may
//!   name still lives, then the finalizers run newest first.
//!
//! While another thread writes through `with_scope`, the owner cannot take `&mut`:
//!
//! ```compile_fail,E0502
//! # use scope_stack::{slot_root, LinearAllocator};
//! slot_root!(struct Count = for<'s> u32);
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("renderer", |renderer| {
//!     let frames = renderer.new_slots("frames", 1, 64 << 10);
//!     let mut frame = frames.load_concurrent::<Count>("frame", |_| 0).unwrap();
//!     std::thread::scope(|t| {
//!         let shared = &frame;
//!         t.spawn(move || shared.with_scope(|_, jobs| jobs.alloc_str("draw").len()));
//!         frame.with_mut(|count, _| *count += 1); // error: already borrowed as shared
//!     });
//! });
//! ```
//!
//! A root that is not `Sync` cannot be written from another thread:
//!
//! ```compile_fail,E0277
//! # use scope_stack::{slot_root, LinearAllocator};
//! # use core::cell::Cell;
//! slot_root!(struct Counter = for<'s> Cell<u32>);
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("renderer", |renderer| {
//!     let frames = renderer.new_slots("frames", 1, 64 << 10);
//!     let frame = frames.load_concurrent::<Counter>("frame", |_| Cell::new(0)).unwrap();
//!     std::thread::scope(|t| {
//!         let shared = &frame;
//!         t.spawn(move || shared.with_scope(|c, _| c.set(c.get() + 1))); // error: `Cell` is not `Sync`
//!     });
//! });
//! ```
//!
//! A value placed through `with_scope` cannot be stored outside the root:
//!
//! ```compile_fail
//! # use scope_stack::{slot_root, LinearAllocator};
//! slot_root!(struct Unit = for<'s> ());
//! let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
//! memory.scope("renderer", |renderer| {
//!     let frames = renderer.new_slots("frames", 1, 64 << 10);
//!     let frame = frames.load_concurrent::<Unit>("frame", |_| ()).unwrap();
//!     let kept = std::sync::Mutex::new(Vec::<&str>::new());
//!     frame.with_scope(|_, jobs| kept.lock().unwrap().push(jobs.alloc_str("x"))); // error
//!     drop(frame);
//!     println!("{:?}", kept.lock().unwrap());
//! });
//! ```
//!
//! Proven at run time by `tests/suite/slots_shared_writers.rs` (writers on several
//! threads, drops counted at unload, a report read while they write).
//!
//! # Also rejected
//!
//! Scope handles cannot be swapped between allocators to fool the rewind:
//!
//! ```compile_fail
//! # use scope_stack::LinearAllocator;
//! let mut a = LinearAllocator::with_capacity(64).unwrap();
//! let mut b = LinearAllocator::with_capacity(64).unwrap();
//! a.scope("a", |sa| {
//!     b.scope("b", |sb| core::mem::swap(sa, sb));
//! });
//! ```
//!
//! A scope cannot be sent to or shared with another thread (it is neither `Send` nor
//! `Sync`). The compiler's error names one public type, [`NotThreadSafe`](crate::NotThreadSafe),
//! whose docs give the fix: hand the workers a concurrent scope, and share the values
//! the scope hands out (`ScopeInRayonInstall` in `src/rules/cases.rs` is the same with
//! rayon):
//!
//! ```compile_fail,E0277
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(64).unwrap();
//! memory.scope("a", |a| {
//!     std::thread::scope(|t| {
//!         t.spawn(|| a.new_pod(1u8));
//!     });
//! });
//! ```

#[cfg(doctest)]
mod cases;
