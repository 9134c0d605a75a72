//! Waiting for a slot without blocking a thread: [`Slots::load_async`],
//! [`Slots::load_task_async`] and [`Slots::load_concurrent_async`] return futures that wait for a free slot, woken by
//! the unload that frees one. They need no particular runtime: the slot set keeps the
//! wakers of the tasks that wait (any executor's `Waker`), and an unload wakes them.
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
//! A woken task that finds no slot (another took it) stores its waker again. A task is
//! counted from its first `Pending` until it gets a slot or its future is dropped, so a
//! dropped future leaves nothing behind.
//!
//! The list of wakers (`super::wakers`) is a `Vec` on the global heap: it grows to the
//! most tasks that ever waited at once, and is reused after that (rule 6 holds after
//! warm-up). It is freed with the slot set.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::concurrent::ConcurrentScope;
use crate::scope::ScopeStack;
use crate::sync::{fence, Ordering};

use super::carve::Slots;
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
    /// Stores `waker` as this task's, and counts the task in `waiters` the first time.
    fn register(&mut self, waker: &Waker) {
        let mut list = self.slots.tasks.lock();
        match self.ticket {
            Some(t) => match &mut list.wakers[t] {
                Some(w) if w.will_wake(waker) => {}
                entry => *entry = Some(waker.clone()),
            },
            None => {
                let t = match list.free.pop() {
                    Some(t) => t,
                    None => {
                        list.wakers.push(None);
                        list.wakers.len() - 1
                    }
                };
                list.wakers[t] = Some(waker.clone());
                self.ticket = Some(t);
                // Under the lock, before the fence in `poll`: see the module docs.
                self.slots.waiters.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Gives the ticket back (the task got a slot, or its future is dropped).
    fn leave(&mut self) {
        if let Some(t) = self.ticket.take() {
            let mut list = self.slots.tasks.lock();
            list.wakers[t] = None;
            list.free.push(t);
            self.slots.waiters.fetch_sub(1, Ordering::Relaxed);
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
    /// # Panics
    /// When the root does not fit in the slot (as [`load_wait`](Self::load_wait)).
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
        let wait = WaitForSlot {
            slots: self,
            ticket: None,
        };
        async move {
            let index = wait.await;
            // SAFETY: this task just claimed slot `index` (and the claim is used in
            // the same poll: nothing can cancel between).
            match unsafe { self.build_plain::<R, Plain>(index, name, |s| Ok(build(s))) } {
                Ok(l) => l,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Like [`load_task_wait`](Self::load_task_wait), but as a future; see
    /// [`load_async`](Self::load_async). The future is `Send` when `build` is, and the
    /// [`Task`] `Loaded` it gives is `Send` when its root is: the request's arena of a
    /// task on a work-stealing runtime, at the cost of a plain slot.
    ///
    /// # Panics
    /// When the root does not fit in the slot.
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
        let wait = WaitForSlot {
            slots: self,
            ticket: None,
        };
        async move {
            let index = wait.await;
            // SAFETY: this task just claimed slot `index`, and builds in the same poll;
            // `build` sees the handle only through a `TaskScope`.
            match unsafe {
                self.build_plain::<R, Task>(index, name, |s| Ok(build(TaskScope::new(s))))
            } {
                Ok(l) => l,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Like [`load_concurrent_wait`](Self::load_concurrent_wait), but as a future;
    /// see [`load_async`](Self::load_async). The future is `Send` when `build` is, and
    /// the [`Shared`] `Loaded` it gives is `Send` when its root is, so it may run on a
    /// work-stealing runtime and its slot may cross `.await`s and threads.
    ///
    /// # Panics
    /// When the root does not fit in the slot.
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
        let wait = WaitForSlot {
            slots: self,
            ticket: None,
        };
        async move {
            let index = wait.await;
            // SAFETY: this task just claimed slot `index`, and builds in the same poll.
            match unsafe { self.build_shared::<R>(index, name, |s| Ok(build(s))) } {
                Ok(l) => l,
                Err(e) => panic!("{e}"),
            }
        }
    }
}
