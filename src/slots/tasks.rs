//! Waiting for a slot without blocking a thread: [`Slots::load_async`],
//! [`Slots::load_task_async`] and [`Slots::load_concurrent_async`] return futures that wait for a free slot, woken by
//! the unload that frees one. They need no particular runtime: the slot set keeps the
//! wakers of the tasks that wait (any executor's `Waker`), and an unload wakes them.
//!
//! Each has a `try_` form ([`Slots::try_load_async`], [`Slots::try_load_task_async`],
//! [`Slots::try_load_concurrent_async`]) whose `build` may fail and whose future gives
//! a `Result`: a build, or a root, too big for the slot is the [`SlotError`] of kind
//! [`SlotErrorKind::Alloc`](super::SlotErrorKind::Alloc) that the sync
//! [`Slots::try_load`] gives, and the slot is free again. The `try_` forms are the
//! ones written out (one `WaitForSlot`, then the build in the same poll); the
//! panicking forms are wrappers that pass an infallible build and panic on the error.
//! The only error a `try_` future can give is `Alloc`: it waits out a full set.
//!
//! This module owns the task half of the free/wait handshake. Invariant (no lost
//! wake-up), the same as the blocking half's (`super::wait`): a waiting task stores its
//! waker and counts itself in `waiters` under the list's lock, then a `SeqCst` fence,
//! then looks for a free slot, and returns `Pending` only if it found none; an unload
//! stores `FREE`, then a `SeqCst` fence, then reads `waiters`, and if anyone waits,
//! wakes every stored waker (taking the lock to do so). If the task's fence comes
//! first, the unload sees its count, and its lock comes after the task's (a lock that
//! came before would order the unload's fence before the task's), so it finds the
//! waker; if the unload's fence comes first, the task's look finds the freed slot.
//!
//! A woken task that finds no slot (another took it) stores its waker again.
//!
//! `waiters` counts a task while its waker is stored, not while it holds a ticket: the
//! count goes up when a poll stores a waker in an empty entry, and down when an unload
//! takes the waker to wake it, or when the task gets a slot or its future is dropped
//! while its waker is still stored. All three happen under the list's lock, so the
//! tasks' share of `waiters` is the number of stored wakers. This is what makes a
//! future that is `mem::forget`-ed while it waits cheap: its drop never runs, so its
//! ticket is never given back, but the next unload wakes its stored waker (as it would
//! any task's), which uncounts it, and from then on unloads take the fast path again (a
//! fence and a load of `waiters`). What it keeps for the set's life is one empty entry
//! of the list. The no-lost-wake-up argument above still holds: an unload that reads
//! the count after a task's fence reads a value that includes the task's increment,
//! and a decrement that cancels it comes only from a wake that took the task's waker
//! (and so woke it); every other decrement cancels an increment of its own.
//!
//! Lock discipline: a waker's `clone` and `drop` are user code, and the usual waker
//! (an `Arc` of a task through `std::task::Wake`) drops its task, and the futures the
//! task owns, when its last reference goes. One of those may be another waiting load
//! of the same set, whose drop takes this list's lock. So nothing here clones, drops or
//! wakes a waker while it holds the lock: a poll clones the new waker before it takes
//! the lock and swaps it in under it, and the waker taken out (by a swap, a `leave` or
//! a wake) is dropped or woken after the guard is gone. Only `Waker::will_wake` runs
//! under the lock, and it compares pointers.
//!
//! The list of wakers (`super::wakers`) is a `Vec` on the global heap: it grows to the
//! most tasks that ever waited at once, and is reused after that (rule 6 holds after
//! warm-up). It is freed with the slot set.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::concurrent::ConcurrentScope;
use crate::error::AllocError;
use crate::scope::ScopeStack;
use crate::sync::{fence, Ordering};

use super::carve::Slots;
use super::error::SlotError;
use super::loaded::{Loaded, Plain, Shared, Task};
use super::root::SlotRoot;
use super::task_scope::TaskScope;

/// A future that claims a free slot of `slots`, waiting (as a task) while none is.
struct WaitForSlot<'a> {
    slots: &'a Slots,
    /// This task's entry in the waker list, from its first `Pending` on.
    ticket: Option<usize>,
}

impl WaitForSlot<'_> {
    /// Stores `waker` as this task's, and counts the task in `waiters` when its entry
    /// held no waker (its first `Pending`, or the first since a wake took the waker).
    fn register(&mut self, waker: &Waker) {
        // A waker's `clone` and `drop` are user code, which may drop another waiting
        // future of this set (whose `leave` takes the lock): both run outside the lock.
        let mine = waker.clone();
        let unused = {
            let mut list = self.slots.tasks.lock();
            match self.ticket {
                Some(t) => match &mut list.wakers[t] {
                    // `will_wake` compares pointers only: no user code under the lock.
                    // The clone made for nothing is dropped after the lock.
                    Some(stored) if stored.will_wake(waker) => Some(mine),
                    Some(stored) => Some(core::mem::replace(stored, mine)),
                    entry @ None => {
                        *entry = Some(mine);
                        // Under the lock, before the fence in `poll`: see the module docs.
                        self.slots.waiters.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                },
                None => {
                    let t = match list.free.pop() {
                        Some(t) => t,
                        None => {
                            list.wakers.push(None);
                            list.wakers.len() - 1
                        }
                    };
                    list.wakers[t] = Some(mine);
                    self.ticket = Some(t);
                    // Under the lock, before the fence in `poll`: see the module docs.
                    self.slots.waiters.fetch_add(1, Ordering::Relaxed);
                    None
                }
            }
        };
        // The lock is released: the waker this task no longer needs may run user code.
        drop(unused);
    }

    /// Gives the ticket back (the task got a slot, or its future is dropped), and
    /// uncounts the task if its waker was still stored.
    fn leave(&mut self) {
        if let Some(t) = self.ticket.take() {
            let stored = {
                let mut list = self.slots.tasks.lock();
                let stored = list.wakers[t].take();
                list.free.push(t);
                if stored.is_some() {
                    self.slots.waiters.fetch_sub(1, Ordering::Relaxed);
                }
                stored
            };
            // Dropped after the lock is released: it may run user code that drops
            // another waiting future of this set, whose `leave` takes the lock.
            drop(stored);
        }
    }
}

impl Future for WaitForSlot<'_> {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let this = &mut *self;
        if let Some(index) = this.slots.claim() {
            this.leave();
            return Poll::Ready(index);
        }
        this.register(cx.waker());
        // Pairs with the fence in `Slots::wake`: see the module docs.
        fence(Ordering::SeqCst);
        match this.slots.claim() {
            Some(index) => {
                this.leave();
                Poll::Ready(index)
            }
            None => Poll::Pending,
        }
    }
}

impl Drop for WaitForSlot<'_> {
    fn drop(&mut self) {
        self.leave();
    }
}

impl Slots {
    /// Like [`load_wait`](Self::load_wait), but as a future: while every slot is held,
    /// the task waits (its thread goes on with other tasks) until an unload frees one.
    /// Works with any executor; see the [module docs](crate::slots#async-services).
    ///
    /// The future keeps `build` until it has a slot, then builds at once, in the same
    /// poll: dropping the future before then claims nothing and leaves nothing behind.
    /// The `Loaded` it gives is [`Plain`](crate::Plain) (it stays on the thread that
    /// polled last); use [`load_concurrent_async`](Self::load_concurrent_async) for one
    /// that crosses threads, as a work-stealing runtime's tasks do.
    ///
    /// A future that is `mem::forget`-ed while it waits keeps one empty entry of the
    /// set's waker list for the set's life, and costs unloads nothing after the next
    /// one: that unload wakes its waker once and stops counting it (the set counts a
    /// waiting task only while it keeps the task's waker, not while the task holds its
    /// place in the list).
    ///
    /// The set never clones, drops or wakes a waker while it holds its waker lock, so
    /// a waker whose `clone` or `drop` drops another waiting load of the same set (a
    /// task that owns its future, whose last reference the set holds) is fine.
    ///
    /// # Panics
    /// When the root does not fit in the slot (as [`load_wait`](Self::load_wait)); a
    /// service that must answer that instead uses
    /// [`try_load_async`](Self::try_load_async).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Text = for<'s> &'s str);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("service", |service| {
    ///     let slots = service.new_slots("requests", 1, 4096);
    ///     let held = slots.load::<Text>("first", |s| &*s.alloc_str("busy")).unwrap();
    ///     std::thread::scope(|t| {
    ///         let waiter = t.spawn(|| {
    ///             let request = block_on(slots.load_async::<Text>("second", |s| &*s.alloc_str("ok")));
    ///             request.with(|text| text.to_string())
    ///         });
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(held); // frees the slot and wakes the task
    ///         assert_eq!(waiter.join().unwrap(), "ok");
    ///     });
    /// });
    /// ```
    pub fn load_async<'a: 'n, 'n, R: SlotRoot>(
        &'a self,
        name: &'n str,
        build: impl for<'x> FnOnce(&'x ScopeStack<'x>) -> R::Of<'x> + 'n,
    ) -> impl Future<Output = Loaded<'a, R>> + 'n {
        let load = self.try_load_async::<R>(name, move |s| Ok(build(s)));
        async move {
            match load.await {
                Ok(l) => l,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Like [`load_async`](Self::load_async), with a `build` that may fail, and a
    /// future that gives an error instead of panicking: the async form of
    /// [`try_load`](Self::try_load). A `build` that returns an error (a `try_`
    /// placement that did not fit), or a root too big for what is left of the slot,
    /// gives the same [`SlotErrorKind::Alloc`](crate::SlotErrorKind::Alloc) error as
    /// `try_load` (it names the set, the slot's size and the load, and holds the
    /// [`AllocError`]), and the slot is free again, with what `build` placed dropped.
    /// A full set is waited out, as in `load_async`, so that is the only error.
    ///
    /// The future keeps `build` until it has a slot and builds in the poll that gets
    /// one; dropping it before then claims nothing. Forgetting the future while it
    /// waits, and wakers that re-enter the set, are as for
    /// [`load_async`](Self::load_async).
    ///
    /// # Errors
    /// [`SlotErrorKind::Alloc`](crate::SlotErrorKind::Alloc) when what `build` placed,
    /// or the root itself, does not fit in the slot.
    ///
    /// ```
    /// use scope_stack::{slot_root, AllocErrorKind, LinearAllocator, SlotErrorKind};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("service", |service| {
    ///     let chunks = service.new_slots("chunks", 1, 1024);
    ///     let big = [7u8; 4096];
    ///     let err = block_on(chunks.try_load_async::<Bytes>("big", |s| Ok(&*s.try_alloc_slice_copy(&big)?)))
    ///         .unwrap_err();
    ///     assert_eq!(err.kind(), SlotErrorKind::Alloc);
    ///     assert_eq!(err.alloc_error().unwrap().kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(err.to_string().starts_with("a slot of \"chunks\" (1024 bytes) is too small for \"big\""));
    ///     assert_eq!(chunks.loaded(), 0); // the slot is free again
    ///     let small = block_on(chunks.try_load_async::<Bytes>("small", |s| Ok(&*s.try_alloc_slice_copy(&big[..100])?)));
    ///     assert_eq!(small.unwrap().with(|b| b.len()), 100);
    /// });
    /// ```
    pub fn try_load_async<'a: 'n, 'n, R: SlotRoot>(
        &'a self,
        name: &'n str,
        build: impl for<'x> FnOnce(&'x ScopeStack<'x>) -> Result<R::Of<'x>, AllocError> + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, R>, SlotError>> + 'n {
        let wait = WaitForSlot {
            slots: self,
            ticket: None,
        };
        async move {
            let index = wait.await;
            // SAFETY: this task just claimed slot `index` (and the claim is used in
            // the same poll: nothing can cancel between).
            unsafe { self.build_plain::<R, Plain>(index, name, build) }
        }
    }

    /// Like [`load_task_wait`](Self::load_task_wait), but as a future; see
    /// [`load_async`](Self::load_async). The future is `Send` when `build` is, and the
    /// [`Task`] `Loaded` it gives is `Send` when its root is: the request's arena of a
    /// task on a work-stealing runtime, at the cost of a plain slot. Forgetting the
    /// future while it waits, and wakers that re-enter the set, are as for
    /// [`load_async`](Self::load_async).
    ///
    /// # Panics
    /// When the root does not fit in the slot; see
    /// [`try_load_task_async`](Self::try_load_task_async) for the error instead.
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, Slots};
    /// slot_root!(struct Reply = for<'s> Vec<&'s str>);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    /// fn assert_send<T: Send>(t: T) -> T { t }
    ///
    /// async fn serve(requests: &'static Slots, n: u32) -> String {
    ///     let mut reply = requests
    ///         .load_task_async::<Reply>("request", move |arena| vec![&*arena.alloc_fmt(format_args!("#{n}"))])
    ///         .await;
    ///     std::future::ready(()).await; // the arena crosses this await
    ///     reply.with_mut(|r, arena| r.push(arena.alloc_str("done")));
    ///     reply.with(|r| r.join(" "))
    /// }
    ///
    /// let requests = Slots::leak("requests", 2, 4096)?;
    /// let task = assert_send(serve(requests, 7));
    /// assert_eq!(std::thread::spawn(move || block_on(task)).join().unwrap(), "#7 done");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_task_async<'a: 'n, 'n, R: SlotRoot>(
        &'a self,
        name: &'n str,
        build: impl for<'x> FnOnce(TaskScope<'x>) -> R::Of<'x> + 'n,
    ) -> impl Future<Output = Loaded<'a, R, Task>> + 'n {
        let load = self.try_load_task_async::<R>(name, move |s| Ok(build(s)));
        async move {
            match load.await {
                Ok(l) => l,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Like [`load_task_async`](Self::load_task_async), with a `build` that may fail,
    /// and a future that gives an error instead of panicking (see
    /// [`try_load_async`](Self::try_load_async)): a request too big for its slot is an
    /// error the service answers, and the slot is free for the next request. The
    /// future is `Send` when `build` is, and the [`Task`] `Loaded` it gives is `Send`
    /// when its root is.
    ///
    /// # Errors
    /// As [`try_load_async`](Self::try_load_async):
    /// [`SlotErrorKind::Alloc`](crate::SlotErrorKind::Alloc) when what `build` placed,
    /// or the root itself, does not fit.
    ///
    /// A service that answers "413 too large" for a body its slot cannot hold:
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, SlotErrorKind, Slots};
    /// slot_root!(struct Body = for<'s> &'s [u8]);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    /// fn assert_send<T: Send>(t: T) -> T { t }
    ///
    /// async fn serve(requests: &'static Slots, body: Vec<u8>) -> String {
    ///     let request = requests
    ///         .try_load_task_async::<Body>("upload", move |arena| Ok(&*arena.try_alloc_slice_copy(&body)?))
    ///         .await;
    ///     match request {
    ///         Ok(body) => body.with(|b| format!("200 OK ({} bytes)", b.len())),
    ///         Err(e) if e.kind() == SlotErrorKind::Alloc => format!("413 too large ({e})"),
    ///         Err(e) => format!("503 ({e})"),
    ///     }
    /// }
    ///
    /// let requests = Slots::leak("requests", 2, 1024)?;
    /// assert_eq!(block_on(assert_send(serve(requests, vec![1; 100]))), "200 OK (100 bytes)");
    /// let reply = std::thread::spawn(move || block_on(serve(requests, vec![1; 4096]))).join().unwrap();
    /// assert!(reply.starts_with("413 too large (a slot of \"requests\" (1024 bytes) is too small for \"upload\""));
    /// assert_eq!(requests.loaded(), 0); // both slots free: the next request is served
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_load_task_async<'a: 'n, 'n, R: SlotRoot>(
        &'a self,
        name: &'n str,
        build: impl for<'x> FnOnce(TaskScope<'x>) -> Result<R::Of<'x>, AllocError> + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, R, Task>, SlotError>> + 'n {
        let wait = WaitForSlot {
            slots: self,
            ticket: None,
        };
        async move {
            let index = wait.await;
            // SAFETY: this task just claimed slot `index`, and builds in the same poll;
            // `build` sees the handle only through a `TaskScope`.
            unsafe { self.build_plain::<R, Task>(index, name, |s| build(TaskScope::new(s))) }
        }
    }

    /// Like [`load_concurrent_wait`](Self::load_concurrent_wait), but as a future;
    /// see [`load_async`](Self::load_async). The future is `Send` when `build` is, and
    /// the [`Shared`] `Loaded` it gives is `Send` when its root is, so it may run on a
    /// work-stealing runtime and its slot may cross `.await`s and threads. Forgetting
    /// the future while it waits, and wakers that re-enter the set, are as for
    /// [`load_async`](Self::load_async).
    ///
    /// # Panics
    /// When the root does not fit in the slot; see
    /// [`try_load_concurrent_async`](Self::try_load_concurrent_async) for the error
    /// instead.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Reply = for<'s> &'s str);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    /// fn assert_send<T: Send>(t: T) -> T { t }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("service", |service| {
    ///     let requests = service.new_slots("requests", 2, 16 << 10);
    ///     let replies: Vec<String> = std::thread::scope(|t| {
    ///         let tasks: Vec<_> = (0..4)
    ///             .map(|n| {
    ///                 let requests = &requests;
    ///                 t.spawn(move || {
    ///                     let request = assert_send(requests.load_concurrent_async::<Reply>("request", move |arena| {
    ///                         arena.alloc_fmt(format_args!("reply {n}"))
    ///                     }));
    ///                     block_on(request).with(|r| r.to_string())
    ///                 })
    ///             })
    ///             .collect();
    ///         tasks.into_iter().map(|t| t.join().unwrap()).collect()
    ///     });
    ///     assert_eq!(replies, ["reply 0", "reply 1", "reply 2", "reply 3"]);
    /// });
    /// ```
    pub fn load_concurrent_async<'a: 'n, 'n, R: SlotRoot>(
        &'a self,
        name: &'n str,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> R::Of<'x> + 'n,
    ) -> impl Future<Output = Loaded<'a, R, Shared>> + 'n {
        let load = self.try_load_concurrent_async::<R>(name, move |s| Ok(build(s)));
        async move {
            match load.await {
                Ok(l) => l,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Like [`load_concurrent_async`](Self::load_concurrent_async), with a `build`
    /// that may fail, and a future that gives an error instead of panicking (see
    /// [`try_load_async`](Self::try_load_async)). The future is `Send` when `build`
    /// is, and the [`Shared`] `Loaded` it gives is `Send` when its root is.
    ///
    /// # Errors
    /// As [`try_load_async`](Self::try_load_async):
    /// [`SlotErrorKind::Alloc`](crate::SlotErrorKind::Alloc) when what `build` placed
    /// (the concurrent scope's own state included), or the root itself, does not fit.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator, SlotErrorKind};
    /// slot_root!(struct Samples = for<'s> &'s [f32]);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    /// fn assert_send<T: Send>(t: T) -> T { t }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("mixer", |mixer| {
    ///     let clips = mixer.new_slots("clips", 1, 16 << 10);
    ///     let clip = |n: usize| {
    ///         assert_send(clips.try_load_concurrent_async::<Samples>("clip", move |jobs| {
    ///             Ok(&*jobs.try_alloc_slice_fill_with(n, |i| i as f32)?)
    ///         }))
    ///     };
    ///     let err = block_on(clip(1 << 20)).unwrap_err();
    ///     assert_eq!((err.kind(), err.slots_name(), err.load_name()), (SlotErrorKind::Alloc, "clips", "clip"));
    ///     assert_eq!(clips.loaded(), 0);
    ///     let ok = block_on(clip(100)).unwrap();
    ///     // The clip crosses threads.
    ///     assert_eq!(std::thread::scope(|t| t.spawn(move || ok.with(|s| s[99])).join().unwrap()), 99.0);
    /// });
    /// ```
    pub fn try_load_concurrent_async<'a: 'n, 'n, R: SlotRoot>(
        &'a self,
        name: &'n str,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> Result<R::Of<'x>, AllocError> + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, R, Shared>, SlotError>> + 'n {
        let wait = WaitForSlot {
            slots: self,
            ticket: None,
        };
        async move {
            let index = wait.await;
            // SAFETY: this task just claimed slot `index`, and builds in the same poll.
            unsafe { self.build_shared::<R>(index, name, build) }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use core::pin::Pin;
    use core::task::{Context, Poll, Waker};
    use std::boxed::Box;
    use std::sync::Arc;
    use std::task::Wake;

    use super::{Future, Ordering, Slots, WaitForSlot};

    crate::slot_root!(struct Number = for<'s> u32);

    /// A waker that does nothing.
    struct Quiet;
    impl Wake for Quiet {
        fn wake(self: Arc<Self>) {}
    }

    fn waiters(slots: &Slots) -> u32 {
        slots.waiters.load(Ordering::SeqCst)
    }

    /// A waiting future that is forgotten is counted until the next unload wakes its
    /// waker, and not after: later unloads find `waiters` at 0 (their fast path), and a
    /// new waiter is counted and uncounted as usual. (`WaitForSlot` is `Unpin`, so it
    /// is forgotten here without a leaked box.)
    #[test]
    fn a_forgotten_waiting_future_is_uncounted_by_the_next_unload() {
        let slots = Slots::leak("forget", 1, 4096).unwrap();
        let waker = Waker::from(Arc::new(Quiet));
        let mut cx = Context::from_waker(&waker);
        let held = slots.load::<Number>("held", |_| 1).unwrap();
        let mut wait = WaitForSlot {
            slots,
            ticket: None,
        };
        assert!(Pin::new(&mut wait).poll(&mut cx).is_pending());
        assert_eq!(waiters(slots), 1);
        core::mem::forget(wait);
        drop(held);
        assert_eq!(
            waiters(slots),
            0,
            "the unload took the waker and uncounted it"
        );
        assert!(slots.tasks.lock().wakers[0].is_none());

        for _ in 0..3 {
            drop(slots.load::<Number>("plain", |_| 2).unwrap());
            assert_eq!(waiters(slots), 0);
        }

        // A later waiter takes a new ticket (the forgotten one is never given back),
        // is counted while its waker is stored, and is uncounted by its wake.
        let held = slots.load::<Number>("held", |_| 1).unwrap();
        let mut load = Box::pin(slots.load_async::<Number>("waiter", |_| 3));
        assert!(load.as_mut().poll(&mut cx).is_pending());
        assert_eq!(waiters(slots), 1);
        drop(held);
        assert_eq!(waiters(slots), 0);
        // Woken: polled again, it gets the slot and gives its ticket back.
        match load.as_mut().poll(&mut cx) {
            Poll::Ready(loaded) => assert_eq!(loaded.with(|n| *n), 3),
            Poll::Pending => panic!("woken with a free slot, yet pending"),
        }
        assert_eq!(waiters(slots), 0);
        {
            let list = slots.tasks.lock();
            assert_eq!(list.wakers.len(), 2, "the forgotten ticket is kept");
            assert_eq!(list.free, [1]);
        }
        assert_eq!(slots.loaded(), 0);
    }

    /// A woken task that polls again without a slot stores its waker again and is
    /// counted again; dropping it then uncounts it.
    #[test]
    fn a_woken_task_that_waits_again_is_counted_again() {
        let slots = Slots::leak("again", 1, 4096).unwrap();
        let waker = Waker::from(Arc::new(Quiet));
        let mut cx = Context::from_waker(&waker);
        let first = slots.load::<Number>("first", |_| 1).unwrap();
        let mut wait = WaitForSlot {
            slots,
            ticket: None,
        };
        assert!(Pin::new(&mut wait).poll(&mut cx).is_pending());
        drop(first);
        assert_eq!(waiters(slots), 0);
        // Another load takes the freed slot before the woken task polls.
        let second = slots.load::<Number>("second", |_| 2).unwrap();
        assert!(Pin::new(&mut wait).poll(&mut cx).is_pending());
        assert_eq!(waiters(slots), 1);
        drop(wait);
        assert_eq!(waiters(slots), 0);
        drop(second);
        assert_eq!(waiters(slots), 0);
    }
}
