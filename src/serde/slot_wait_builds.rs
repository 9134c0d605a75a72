//! The waiting file loads with a build step (feature `serde` with `std`):
//! [`Slots::load_wait_from_with`], [`Slots::load_wait_timeout_from_with`] and their
//! concurrent and task forms. A loader thread that streams levels into a ring of slots
//! reads each file once, builds what the file does not hold in the same slot, and
//! blocks only while every slot is held; a bad file, a slot too small, or a step that
//! refuses the level is an error and the slot is free again at once.
//!
//! Each is the waiting load of [`slot_waits`](super::slot_waits) whose read also runs
//! the step (`Trial::read_with`), so the waiting, and the invariant that makes the
//! caller's `Loaded` from the `Option` root, are that module's and nothing of them is
//! repeated here. A step's error wins over the slot's when both happen (the step ran,
//! so the file was read and the slot was had).
#![allow(clippy::result_large_err)]

use core::time::Duration;

use serde::de::Deserializer;

use crate::slots::{Loaded, Shared, SlotRoot, Slots, Task};
use crate::{ConcurrentScope, ScopeStack, TaskScope};

use super::slot_waits::{payload, read_plain, read_shared, read_task, Attempt, Trial, FOREVER};
use super::slots::BuildError;
use super::trait_in::DeserializeIn;

impl Slots {
    /// [`load_from_with`](Self::load_from_with) that sleeps while every slot is held,
    /// until another thread drops a [`Loaded`] (see [`load_wait_from`](Self::load_wait_from)).
    /// The file is read once a slot is had, and `build` runs on it in the same slot.
    ///
    /// # Errors
    /// As [`load_from_with`](Self::load_from_with), except that a full set is waited
    /// out.
    ///
    /// ```
    /// use scope_stack::serde::{BuildError, DeserializeIn};
    /// use scope_stack::{slot_root, LinearAllocator, ScopeStack};
    ///
    /// #[derive(DeserializeIn)]
    /// struct Names<'s> {
    ///     names: &'s [&'s str],
    ///     #[serde(skip)]
    ///     longest: usize,
    /// }
    /// slot_root!(struct NamesRoot => Names);
    ///
    /// fn measure<'s>(n: &mut Names<'s>, _: &'s ScopeStack<'s>) -> Result<(), &'static str> {
    ///     n.longest = n.names.iter().map(|s| s.len()).max().ok_or("no names")?;
    ///     Ok(())
    /// }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 16 << 10);
    ///     let mut de = serde_json::Deserializer::from_str(r#"{"names": ["forest"]}"#);
    ///     let playing = levels.load_from_with::<NamesRoot, _, _>("forest", &mut de, measure).unwrap();
    ///     std::thread::scope(|t| {
    ///         let loader = t.spawn(|| {
    ///             let mut de = serde_json::Deserializer::from_str(r#"{"names": ["castle", "keep"]}"#);
    ///             let next = levels.load_wait_from_with::<NamesRoot, _, _>("castle", &mut de, measure).unwrap();
    ///             next.with(|n| n.longest)
    ///         });
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(playing); // frees the slot and wakes the loader
    ///         assert_eq!(loader.join().unwrap(), 6);
    ///     });
    ///     // A step that refuses the level: its error, and the slot is free again.
    ///     let mut de = serde_json::Deserializer::from_str(r#"{"names": []}"#);
    ///     let err = levels.load_wait_from_with::<NamesRoot, _, _>("empty", &mut de, measure);
    ///     assert!(matches!(err, Err(BuildError::Build("no names"))));
    ///     assert_eq!(levels.loaded(), 0);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_wait_from_with<'de, R, D, B>(
        &self,
        name: &str,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, &'x ScopeStack<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        self.load_wait_timeout_from_with::<R, D, B>(name, FOREVER, deserializer, build)
    }

    /// [`load_wait_from_with`](Self::load_wait_from_with) that gives up after about
    /// `timeout` (see [`load_wait_timeout_from`](Self::load_wait_timeout_from)).
    ///
    /// # Errors
    /// As [`load_from_with`](Self::load_from_with); when no slot was freed in time, a
    /// [`BuildError::Load`] whose slot error is
    /// [`SlotErrorKind::TimedOut`](crate::SlotErrorKind::TimedOut): the file was not
    /// read and the step did not run.
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, SlotErrorKind, Slots};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let mut de = serde_json::Deserializer::from_str(r#"["forest"]"#);
    /// let _playing = levels.load_from::<Names, _>("forest", &mut de).unwrap();
    /// let mut de = serde_json::Deserializer::from_str(r#"["castle"]"#);
    /// let err = levels
    ///     .load_wait_timeout_from_with::<Names, _, ()>("castle", Duration::from_millis(5), &mut de, |_, _| Ok(()))
    ///     .unwrap_err();
    /// assert_eq!(err.load_error().unwrap().slot_error().unwrap().kind(), SlotErrorKind::TimedOut);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_wait_timeout_from_with<'de, R, D, B>(
        &self,
        name: &str,
        timeout: Duration,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, &'x ScopeStack<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut trial = Trial::new();
        let read = read_plain::<R, _>(|s| trial.read_with::<R, _, _>(s, deserializer, build));
        let got = self.load_wait_timeout::<Attempt<R>>(name, timeout, read);
        trial.finish_with(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }

    /// [`load_concurrent_from_with`](Self::load_concurrent_from_with) that sleeps while
    /// every slot is held (see [`load_concurrent_wait_from`](Self::load_concurrent_wait_from)):
    /// a loader thread reads each level file once, builds the level's pools and derived
    /// data in the same slot (with worker threads, through the concurrent scope), and
    /// sends the level to the game thread.
    ///
    /// # Errors
    /// As [`load_wait_from_with`](Self::load_wait_from_with).
    ///
    /// ```
    /// use scope_stack::serde::{BuildError, DeserializeIn};
    /// use scope_stack::{slot_root, ConcurrentScope, LinearAllocator, Loaded, Shared};
    ///
    /// #[derive(DeserializeIn)]
    /// struct Path<'s> {
    ///     points: &'s [[f32; 2]],
    ///     #[serde(skip)]
    ///     length: f32,
    /// }
    /// slot_root!(struct PathRoot => Path);
    ///
    /// fn measure<'s>(p: &mut Path<'s>, _: &'s ConcurrentScope<'s>) -> Result<(), String> {
    ///     if p.points.len() < 2 {
    ///         return Err(format!("{} point(s): a path needs two", p.points.len()));
    ///     }
    ///     p.length = p.points.windows(2).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).sum();
    ///     Ok(())
    /// }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let paths = game.new_slots("paths", 2, 16 << 10);
    ///     let (send, receive) = std::sync::mpsc::channel::<Result<Loaded<'_, PathRoot, Shared>, String>>();
    ///     std::thread::scope(|t| {
    ///         t.spawn(move || {
    ///             for file in [r#"{"points": [[0, 0], [3, 4]]}"#, r#"{"points": [[1, 1]]}"#, r#"{"points": ["#] {
    ///                 let mut de = serde_json::Deserializer::from_str(file);
    ///                 let level = paths
    ///                     .load_concurrent_wait_from_with::<PathRoot, _, _>("path", &mut de, measure)
    ///                     .map_err(|e| e.to_string());
    ///                 send.send(level).unwrap();
    ///             }
    ///         });
    ///         let got: Vec<_> = receive.iter().map(|l| l.map(|l| l.with(|p| p.length))).collect();
    ///         assert_eq!(got[0], Ok(5.0));
    ///         assert_eq!(got[1], Err("1 point(s): a path needs two".to_string()));
    ///         assert!(got[2].as_ref().unwrap_err().contains("EOF"));
    ///     });
    ///     assert_eq!(paths.loaded(), 0);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_concurrent_wait_from_with<'de, R, D, B>(
        &self,
        name: &str,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, &'x ConcurrentScope<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R, Shared>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        self.load_concurrent_wait_timeout_from_with::<R, D, B>(name, FOREVER, deserializer, build)
    }

    /// [`load_concurrent_wait_from_with`](Self::load_concurrent_wait_from_with) with a
    /// time limit; see [`load_wait_timeout_from_with`](Self::load_wait_timeout_from_with).
    ///
    /// # Errors
    /// As [`load_wait_timeout_from_with`](Self::load_wait_timeout_from_with).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, SlotErrorKind, Slots};
    ///
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    ///
    /// let levels = Slots::leak("levels", 1, 16 << 10)?;
    /// let mut de = serde_json::Deserializer::from_str("[[1, 2]]");
    /// let playing = levels.load_concurrent_from::<Spawns, _>("a", &mut de).unwrap();
    /// let mut de = serde_json::Deserializer::from_str("[[3, 4]]");
    /// let five_ms = Duration::from_millis(5);
    /// let err = levels
    ///     .load_concurrent_wait_timeout_from_with::<Spawns, _, ()>("b", five_ms, &mut de, |_, _| Ok(()))
    ///     .unwrap_err();
    /// assert_eq!(err.load_error().unwrap().slot_error().unwrap().kind(), SlotErrorKind::TimedOut);
    /// drop(playing);
    /// let mut de = serde_json::Deserializer::from_str("[[3, 4]]");
    /// let next = levels
    ///     .load_concurrent_wait_timeout_from_with::<Spawns, _, ()>("b", five_ms, &mut de, |s, _| {
    ///         assert_eq!(s.len(), 1);
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// assert_eq!(next.with(|s| s[0]), [3.0, 4.0]);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_concurrent_wait_timeout_from_with<'de, R, D, B>(
        &self,
        name: &str,
        timeout: Duration,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, &'x ConcurrentScope<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R, Shared>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut trial = Trial::new();
        let read = read_shared::<R, _>(|s| trial.read_with::<R, _, _>(s, deserializer, build));
        let got = self.load_concurrent_wait_timeout::<Attempt<R>>(name, timeout, read);
        trial.finish_with(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }

    /// [`load_task_from_with`](Self::load_task_from_with) that sleeps while every slot
    /// is held (see [`load_task_wait_from`](Self::load_task_wait_from)): a thread
    /// pool's job parses a request body and checks it in the request's arena once a
    /// slot is free.
    ///
    /// # Errors
    /// As [`load_wait_from_with`](Self::load_wait_from_with).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots, TaskScope};
    ///
    /// slot_root!(struct Body = for<'s> &'s [&'s str]);
    ///
    /// fn check<'s>(b: &mut &'s [&'s str], _: TaskScope<'s>) -> Result<(), &'static str> {
    ///     if b.first() == Some(&"GET") { Ok(()) } else { Err("only GET") }
    /// }
    ///
    /// let requests = Slots::leak("requests", 2, 4096)?;
    /// let answers: Vec<String> = std::thread::scope(|t| {
    ///     let jobs: Vec<_> = (0..6)
    ///         .map(|n| t.spawn(move || {
    ///             let verb = if n == 3 { "PUT" } else { "GET" };
    ///             let text = format!(r#"["{verb}", "/{n}"]"#);
    ///             let mut de = serde_json::Deserializer::from_str(&text);
    ///             match requests.load_task_wait_from_with::<Body, _, _>("body", &mut de, check) {
    ///                 Ok(body) => body.with(|b| b[1].to_string()),
    ///                 Err(e) => e.to_string(),
    ///             }
    ///         }))
    ///         .collect();
    ///     jobs.into_iter().map(|j| j.join().unwrap()).collect()
    /// });
    /// assert_eq!(answers, ["/0", "/1", "/2", "only GET", "/4", "/5"]);
    /// assert_eq!(requests.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_task_wait_from_with<'de, R, D, B>(
        &self,
        name: &str,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, TaskScope<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R, Task>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        self.load_task_wait_timeout_from_with::<R, D, B>(name, FOREVER, deserializer, build)
    }

    /// [`load_task_wait_from_with`](Self::load_task_wait_from_with) with a time limit;
    /// see [`load_wait_timeout_from_with`](Self::load_wait_timeout_from_with): a
    /// service that answers "busy" instead of queueing for ever.
    ///
    /// # Errors
    /// As [`load_wait_timeout_from_with`](Self::load_wait_timeout_from_with).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, SlotErrorKind, Slots};
    ///
    /// slot_root!(struct Body = for<'s> &'s [&'s str]);
    ///
    /// let requests = Slots::leak("requests", 1, 4096)?;
    /// let mut de = serde_json::Deserializer::from_str(r#"["GET", "/a"]"#);
    /// let _first = requests.load_task_from::<Body, _>("first", &mut de).unwrap();
    /// let mut de = serde_json::Deserializer::from_str(r#"["GET", "/b"]"#);
    /// let err = requests
    ///     .load_task_wait_timeout_from_with::<Body, _, ()>("second", Duration::from_millis(5), &mut de, |_, _| Ok(()))
    ///     .unwrap_err();
    /// assert_eq!(err.load_error().unwrap().slot_error().unwrap().kind(), SlotErrorKind::TimedOut);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_task_wait_timeout_from_with<'de, R, D, B>(
        &self,
        name: &str,
        timeout: Duration,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, TaskScope<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R, Task>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut trial = Trial::new();
        let read = read_task::<R, _>(|s| trial.read_with::<R, _, _>(s, deserializer, build));
        let got = self.load_task_wait_timeout::<Attempt<R>>(name, timeout, read);
        trial.finish_with(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }
}
