//! [`FrameArena`]: a ring of frame slots as a Bevy resource.
//!
//! Invariant: the ring holds at most `count` loaded frames, newest last, and the newest
//! is the current frame from one rotation to the next. A rotation unloads the oldest
//! frame first when the ring is full, so the load that follows always finds a free slot
//! (no other code holds the set's slots: it is private to the arena). The ring's
//! `VecDeque` is sized once, so rotating touches no global heap.

use std::collections::VecDeque;
use std::fmt::Write as _;

use bevy_ecs::prelude::*;
use scope_stack::{AllocError, ConcurrentScope, Loaded, MapHandle, Shared, SlotRoot, Slots};

use crate::stats::{FrameArenaStats, FrameStats};

/// Builds a frame's root in its fresh slot.
type Build<R> = for<'x> fn(&'x ConcurrentScope<'x>) -> <R as SlotRoot>::Of<'x>;

/// A ring of frame slots from [`Slots::leak`], rotated just before
/// [`First`](bevy_app::First) (in [`ScopeStackFirst`](crate::ScopeStackFirst)):
/// each frame loads a fresh slot (through a concurrent scope, so systems on any thread
/// add to it), and when all slots are taken the oldest frame unloads (its finalizers
/// run, its memory rewinds). Earlier frames stay readable until then, as a render
/// thread's frames in flight would.
///
/// Systems add to the current frame through `Res` with [`with_scope`](Self::with_scope)
/// (many at once: the root's shared types, such as a [`Pool`](scope_stack::Pool) or a
/// `Mutex`, keep what they place) or through `ResMut` with [`with_mut`](Self::with_mut),
/// and read it with [`with`](Self::with).
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin, Update};
/// use bevy_ecs::prelude::*;
/// use scope_stack::{slot_root, ConcurrentScope, Pool};
/// use scope_stack_bevy::{FrameArena, ScopeStackAppExt, ScopeStackPlugin};
///
/// struct Draws<'s> {
///     sprites: &'s Pool<'s, [f32; 2]>,
/// }
/// slot_root!(struct DrawsRoot => Draws);
///
/// fn new_frame<'s>(scope: &'s ConcurrentScope<'s>) -> Draws<'s> {
///     Draws { sprites: scope.new_pool(256) }
/// }
///
/// fn push_sprites(frame: Res<FrameArena<DrawsRoot>>) {
///     frame.with_scope(|draws, _| {
///         for i in 0..10 {
///             let _kept = draws.sprites.insert([i as f32, 0.0]).unwrap().into_handle();
///         }
///     });
/// }
///
/// fn count(frame: Res<FrameArena<DrawsRoot>>) {
///     assert_eq!(frame.with(|d| d.sprites.len()), 10);
/// }
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .insert_frame_arena(FrameArena::<DrawsRoot>::new("frames", 3, 64 << 10, new_frame).unwrap())
///     .add_systems(Update, (push_sprites, count.after(push_sprites)));
/// for _ in 0..5 {
///     app.update();
/// }
/// ```
#[derive(Resource)]
pub struct FrameArena<R>
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    slots: &'static Slots,
    build: Build<R>,
    /// Loaded frames, oldest first; the last is the current frame.
    ring: VecDeque<Loaded<'static, R, Shared>>,
    /// Frames loaded so far (the current frame's number).
    frame: u64,
    /// Bytes the last finished frame used, and the most any did.
    last_frame_bytes: usize,
    high_water: usize,
}

impl<R> FrameArena<R>
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    /// Leaks a set of `count` frame slots of `bytes_each` bytes (see [`Slots::leak`]) and
    /// loads frame 0 with `build`, which builds each frame's root in its slot.
    ///
    /// # Errors
    /// Those of [`Slots::leak`] (a `count` or `bytes_each` of 0, or no memory).
    ///
    /// # Panics
    /// When the first frame's root does not fit in its slot.
    ///
    /// ```
    /// use scope_stack::slot_root;
    /// use scope_stack_bevy::FrameArena;
    /// slot_root!(struct Unit = for<'s> ());
    /// let arena = FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap();
    /// assert_eq!((arena.frame(), arena.frames_held()), (0, 1));
    /// assert!(FrameArena::<Unit>::new("frames", 0, 4096, |_| ()).is_err());
    /// ```
    pub fn new(
        name: &str,
        count: usize,
        bytes_each: usize,
        build: Build<R>,
    ) -> Result<Self, AllocError> {
        let slots = Slots::leak(name, count, bytes_each)?;
        let mut ring = VecDeque::with_capacity(count);
        ring.push_back(load(slots, build, 0));
        Ok(FrameArena {
            slots,
            build,
            ring,
            frame: 0,
            last_frame_bytes: 0,
            high_water: 0,
        })
    }

    /// Starts the next frame: unloads the oldest frame if every slot is taken, then
    /// loads a fresh one. [`rotate_frames`] calls this once a frame, just before
    /// [`First`](bevy_app::First).
    ///
    /// # Panics
    /// When the new frame's root does not fit in its slot.
    ///
    /// ```
    /// use scope_stack::slot_root;
    /// use scope_stack_bevy::FrameArena;
    /// slot_root!(struct Unit = for<'s> ());
    /// let mut arena = FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap();
    /// for _ in 0..5 {
    ///     arena.rotate();
    /// }
    /// assert_eq!((arena.frame(), arena.frames_held(), arena.slots().loaded()), (5, 2, 2));
    /// ```
    pub fn rotate(&mut self) {
        // The finished frame's figure: one relaxed load.
        self.last_frame_bytes = self.current().used();
        self.high_water = self.high_water.max(self.last_frame_bytes);
        if self.ring.len() == self.slots.count() {
            self.ring.pop_front();
        }
        self.frame += 1;
        let next = load(self.slots, self.build, self.frame);
        self.ring.push_back(next);
    }

    /// The current frame's number (0 for the frame [`new`](Self::new) loaded).
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let arena = scope_stack_bevy::FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap();
    /// assert_eq!(arena.frame(), 0);
    /// ```
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// What the arena used, as of its last rotation (see [`FrameStats`]).
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut arena = scope_stack_bevy::FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap();
    /// arena.rotate();
    /// assert_eq!((arena.stats().frames, arena.stats().frames_held), (1, 2));
    /// ```
    pub fn stats(&self) -> FrameStats {
        FrameStats {
            frames: self.frame,
            last_frame_bytes: self.last_frame_bytes,
            high_water: self.high_water,
            bytes_each: self.slots.bytes_each(),
            frames_held: self.ring.len(),
        }
    }

    /// How many frames are loaded now (the current one and those before it).
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut arena = scope_stack_bevy::FrameArena::<Unit>::new("frames", 3, 4096, |_| ()).unwrap();
    /// arena.rotate();
    /// assert_eq!(arena.frames_held(), 2);
    /// ```
    pub fn frames_held(&self) -> usize {
        self.ring.len()
    }

    /// The leaked slot set.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let arena = scope_stack_bevy::FrameArena::<Unit>::new("frames", 3, 4096, |_| ()).unwrap();
    /// assert_eq!((arena.slots().name(), arena.slots().count()), ("frames", 3));
    /// ```
    pub fn slots(&self) -> &'static Slots {
        self.slots
    }

    /// A handle on the set's memory map, for any thread.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let arena = scope_stack_bevy::FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap();
    /// assert!(arena.map_handle().report().to_string().contains("frame 0"));
    /// ```
    pub fn map_handle(&self) -> MapHandle<'static> {
        self.slots
            .map_handle()
            .expect("a leaked set has a map of its own")
    }

    /// The current frame.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let arena = scope_stack_bevy::FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap();
    /// assert_eq!(arena.current().name(), "frame 0");
    /// ```
    pub fn current(&self) -> &Loaded<'static, R, Shared> {
        self.ring
            .back()
            .expect("the ring always holds the current frame")
    }

    /// The frame `back` frames before the current one (`previous(0)` is the current
    /// frame), while it is still loaded.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// slot_root!(struct Number = for<'s> u64);
    /// let mut arena = scope_stack_bevy::FrameArena::<Number>::new("frames", 2, 4096, |_| 7).unwrap();
    /// arena.rotate();
    /// assert_eq!(arena.previous(1).map(|f| f.name().to_string()).as_deref(), Some("frame 0"));
    /// assert!(arena.previous(2).is_none());
    /// ```
    pub fn previous(&self, back: usize) -> Option<&Loaded<'static, R, Shared>> {
        let i = self.ring.len().checked_sub(back + 1)?;
        self.ring.get(i)
    }

    /// Lends the current frame's root to `f`.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// slot_root!(struct Number = for<'s> u64);
    /// let arena = scope_stack_bevy::FrameArena::<Number>::new("frames", 2, 4096, |_| 7).unwrap();
    /// assert_eq!(arena.with(|n| *n), 7);
    /// ```
    pub fn with<T>(&self, f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>) -> T) -> T {
        self.current().with(f)
    }

    /// Lends the current frame's root shared, with its concurrent scope, through
    /// `&self`: systems holding `Res<FrameArena<R>>` add to the frame at once (see
    /// [`Loaded::with_scope`]).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use scope_stack::slot_root;
    /// struct Log<'s> { lines: Mutex<Vec<&'s str>> }
    /// slot_root!(struct LogRoot => Log);
    /// let arena = scope_stack_bevy::FrameArena::<LogRoot>::new("frames", 2, 4096, |_| Log {
    ///     lines: Mutex::new(Vec::new()),
    /// })
    /// .unwrap();
    /// arena.with_scope(|log, scope| log.lines.lock().unwrap().push(scope.alloc_str("hit")));
    /// assert_eq!(arena.with(|log| log.lines.lock().unwrap().len()), 1);
    /// ```
    pub fn with_scope<T>(
        &self,
        f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>, &'x ConcurrentScope<'x>) -> T,
    ) -> T {
        self.current().with_scope(f)
    }

    /// Lends the current frame's root mutably, with its concurrent scope (a system
    /// holding `ResMut<FrameArena<R>>`).
    ///
    /// ```
    /// use scope_stack::slot_root;
    /// struct Text<'s> { line: &'s str }
    /// slot_root!(struct TextRoot => Text);
    /// let mut arena = scope_stack_bevy::FrameArena::<TextRoot>::new("frames", 2, 4096, |_| Text { line: "" }).unwrap();
    /// arena.with_mut(|t, scope| t.line = scope.alloc_str("score 10"));
    /// assert_eq!(arena.with(|t| t.line.len()), 8);
    /// ```
    pub fn with_mut<T>(
        &mut self,
        f: impl for<'x, 'y> FnOnce(&'y mut R::Of<'x>, &'x ConcurrentScope<'x>) -> T,
    ) -> T {
        self.ring
            .back_mut()
            .expect("the ring always holds the current frame")
            .with_mut(f)
    }
}

/// Loads frame `number` into a free slot of `slots`, named `frame {number}` (formatted
/// on the stack: no heap).
fn load<R: SlotRoot>(
    slots: &'static Slots,
    build: Build<R>,
    number: u64,
) -> Loaded<'static, R, Shared> {
    let mut name = NameBuf::default();
    let _ = write!(name, "frame {number}");
    match slots.load_concurrent::<R>(name.as_str(), build) {
        Ok(frame) => frame,
        Err(e) => panic!("{e}"),
    }
}

/// A short name written on the stack.
#[derive(Default)]
struct NameBuf {
    bytes: [u8; 32],
    len: usize,
}

impl NameBuf {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("frame")
    }
}

impl std::fmt::Write for NameBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Rotates every frame of `arena` (see [`FrameArena::rotate`]) and updates its
/// [`FrameArenaStats`] when the app has one; the
/// [`ScopeStackAppExt::insert_frame_arena`](crate::ScopeStackAppExt::insert_frame_arena)
/// call inserts that and schedules this system in
/// [`ScopeStackFirst`](crate::ScopeStackFirst), just before [`First`](bevy_app::First)
/// (single-threaded: no system task each frame); any schedule works, as below.
///
/// ```
/// use bevy_app::{App, First};
/// use scope_stack::slot_root;
/// use scope_stack_bevy::{rotate_frames, FrameArena};
/// slot_root!(struct Unit = for<'s> ());
///
/// let mut app = App::new();
/// app.insert_resource(FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap())
///     .add_systems(First, rotate_frames::<Unit>);
/// app.update();
/// assert_eq!(app.world().resource::<FrameArena<Unit>>().frame(), 1);
/// ```
pub fn rotate_frames<R>(mut arena: ResMut<FrameArena<R>>, stats: Option<ResMut<FrameArenaStats<R>>>)
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    arena.rotate();
    if let Some(mut stats) = stats {
        FrameArenaStats::set_if_neq(&mut stats, arena.stats());
    }
}
