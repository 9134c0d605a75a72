//! Level files read on the loader task (`LevelSlots::stream_file`,
//! `stream_from_reader`): a file streams in and plays, I/O errors fail the level
//! cleanly (the path in the error, the slot free, the playing level kept), and the
//! loader thread's file buffer is reused, so a second load of the same size allocates
//! no heap for the file.
#![cfg(feature = "serde")]
// `LoadError` keeps the slot's error inline (no heap), as the core's own tests allow.
#![allow(clippy::result_large_err)]

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use bevy_app::{App, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_tasks::AsyncComputeTaskPool;
use scope_stack::slot_root;
use scope_stack_bevy::{
    with_level_file_bytes, with_level_reader_bytes, LevelEvent, LevelMessage, LevelSlots,
    ScopeStackAppExt, ScopeStackPlugin,
};

#[derive(scope_stack::DeserializeIn)]
struct Level<'s> {
    name: &'s str,
    spawns: &'s [[f32; 2]],
}
slot_root!(struct LevelRoot => Level);

/// A file in the temp directory, named for this process and `tag`, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str, bytes: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!(
            "scope-stack-bevy-level-files-{}-{tag}.json",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A JSON level named `name` with `spawns` spawn points.
fn level_json(name: &str, spawns: usize) -> Vec<u8> {
    let points: Vec<String> = (0..spawns).map(|i| format!("[{i}, 1]")).collect();
    format!(r#"{{"name": "{name}", "spawns": [{}]}}"#, points.join(", ")).into_bytes()
}

/// Every level message read so far, in order.
#[derive(Resource, Default)]
struct Heard(Vec<LevelMessage<LevelRoot>>);

fn listen(mut messages: MessageReader<LevelMessage<LevelRoot>>, mut heard: ResMut<Heard>) {
    heard.0.extend(messages.read().cloned());
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
        .insert_level_slots(LevelSlots::<LevelRoot>::new("levels", 2, 64 << 10).unwrap())
        .init_resource::<Heard>()
        .add_systems(Update, listen);
    app.finish();
    app
}

fn levels(app: &App) -> &LevelSlots<LevelRoot> {
    app.world().resource::<LevelSlots<LevelRoot>>()
}

fn levels_mut(app: &mut App) -> Mut<'_, LevelSlots<LevelRoot>> {
    app.world_mut().resource_mut::<LevelSlots<LevelRoot>>()
}

/// Runs frames until the pending build is swapped in (at most 10 s), and one more so
/// `listen` hears the messages.
fn run_until_swapped(app: &mut App) {
    let start = std::time::Instant::now();
    while levels(app).is_loading() {
        assert!(start.elapsed().as_secs() < 10, "the build never finished");
        app.update();
    }
    app.update();
}

fn heard(app: &mut App) -> Vec<LevelMessage<LevelRoot>> {
    std::mem::take(&mut app.world_mut().resource_mut::<Heard>().0)
}

fn stream_file(app: &mut App, name: &str, path: &Path) {
    levels_mut(app).stream_file(name, path, |bytes, reader| {
        reader.read(&mut serde_json::Deserializer::from_slice(bytes))
    });
}

/// The name of the level playing now.
fn playing(app: &App) -> Option<String> {
    levels(app).with(|l| l.name.to_string())
}

#[test]
fn a_level_file_streams_in_and_plays() {
    let mut app = app();
    let file = TempFile::new("plays", &level_json("harbour", 50));
    stream_file(&mut app, "harbour", file.path());
    run_until_swapped(&mut app);
    let levels = levels(&app);
    assert_eq!(levels.last_error(), None);
    assert_eq!(
        levels.with(|l| (l.name.to_string(), l.spawns.len(), l.spawns[49])),
        Some(("harbour".to_string(), 50, [49.0, 1.0]))
    );
    assert_eq!(levels.current().unwrap().kind(), "task");
    assert_eq!(levels.slots().loaded(), 1);
    assert_eq!(
        heard(&mut app),
        [
            LevelMessage::new("harbour".into(), LevelEvent::Ready),
            LevelMessage::new("harbour".into(), LevelEvent::Swapped { replaced: None }),
        ]
    );
}

#[test]
fn a_missing_file_fails_with_its_path_and_the_playing_level_stays() {
    let mut app = app();
    let good = TempFile::new("stays", &level_json("harbour", 3));
    stream_file(&mut app, "harbour", good.path());
    run_until_swapped(&mut app);
    heard(&mut app);
    let missing = std::env::temp_dir().join(format!(
        "scope-stack-bevy-level-files-{}-no-such-level.json",
        std::process::id()
    ));
    stream_file(&mut app, "docks", &missing);
    run_until_swapped(&mut app);

    let error = levels(&app)
        .last_error()
        .expect("the load failed")
        .to_string();
    assert!(error.contains(&*missing.to_string_lossy()), "{error}");
    let io_error = std::fs::File::open(&missing).unwrap_err().to_string();
    assert!(error.contains(&io_error), "{error} lacks {io_error}");
    let messages = heard(&mut app);
    assert_eq!(
        messages,
        [LevelMessage::new(
            "docks".into(),
            LevelEvent::Failed {
                error: error.as_str().into()
            }
        )]
    );
    let levels = levels(&app);
    assert_eq!((levels.swaps(), levels.failures()), (1, 1));
    assert_eq!(playing(&app).as_deref(), Some("harbour"));
    assert_eq!(levels.slots().loaded(), 1, "the failed load holds no slot");
}

#[test]
fn a_corrupt_file_names_its_path_beside_the_parse_error() {
    let mut app = app();
    let corrupt = TempFile::new("corrupt", br#"{"name": "docks", "spawns": [[1, "x"]]}"#);
    stream_file(&mut app, "docks", corrupt.path());
    run_until_swapped(&mut app);
    let levels = levels(&app);
    let error = levels.last_error().unwrap();
    assert!(
        error.contains(&*corrupt.path().to_string_lossy()),
        "{error}"
    );
    assert!(error.contains("invalid type"), "{error}");
    assert!(levels.current().is_none());
    assert_eq!(levels.slots().loaded(), 0);
}

/// Yields `bytes` a few at a time, then fails with "disk pulled" after `fail_after`
/// bytes (never, with `usize::MAX`). Records the thread it ran on and the room the
/// first `read` call was given.
struct Flaky {
    bytes: Vec<u8>,
    at: usize,
    fail_after: usize,
    chunk: usize,
    seen: Arc<Mutex<Vec<(ThreadId, usize)>>>,
    first_call: bool,
}

impl Flaky {
    fn new(bytes: Vec<u8>, fail_after: usize, chunk: usize) -> Self {
        Flaky {
            bytes,
            at: 0,
            fail_after,
            chunk,
            seen: Arc::default(),
            first_call: true,
        }
    }
}

impl Read for Flaky {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if std::mem::take(&mut self.first_call) {
            let thread = std::thread::current().id();
            self.seen.lock().unwrap().push((thread, buf.len()));
        }
        if self.at >= self.fail_after {
            return Err(io::Error::other("disk pulled"));
        }
        let n = buf
            .len()
            .min(self.chunk)
            .min(self.bytes.len() - self.at)
            .min(self.fail_after - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn stream_reader(app: &mut App, name: &str, reader: Flaky) {
    levels_mut(app).stream_from_reader(name, reader, |bytes, reader| {
        reader.read(&mut serde_json::Deserializer::from_slice(bytes))
    });
}

#[test]
fn a_level_streams_from_a_reader_on_the_loader_task() {
    let mut app = app();
    let reader = Flaky::new(level_json("caves", 20), usize::MAX, 7);
    let seen = reader.seen.clone();
    stream_reader(&mut app, "caves", reader);
    run_until_swapped(&mut app);
    assert_eq!(playing(&app).as_deref(), Some("caves"));
    assert_eq!(levels(&app).with(|l| l.spawns.len()), Some(20));
    // Read on an async compute thread, not on the thread that asked (this one).
    let (thread, _) = seen.lock().unwrap()[0];
    assert_ne!(thread, std::thread::current().id());
}

#[test]
fn a_reader_that_fails_midway_fails_the_level_cleanly() {
    let mut app = app();
    stream_reader(
        &mut app,
        "forest",
        Flaky::new(level_json("forest", 5), usize::MAX, 4),
    );
    run_until_swapped(&mut app);
    heard(&mut app);
    stream_reader(
        &mut app,
        "caves",
        Flaky::new(level_json("caves", 100), 10, 4),
    );
    run_until_swapped(&mut app);

    let error = levels(&app).last_error().unwrap().to_string();
    assert!(error.contains("disk pulled"), "{error}");
    assert!(error.contains("after 10 bytes"), "{error}");
    let messages = heard(&mut app);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(&*messages[0].name, "caves");
    assert!(matches!(&messages[0].event, LevelEvent::Failed { error: e } if **e == *error));
    let levels = levels(&app);
    assert_eq!((levels.swaps(), levels.failures()), (1, 1));
    assert_eq!(playing(&app).as_deref(), Some("forest"));
    assert_eq!(levels.slots().loaded(), 1);
}

/// Heap allocations `f` made on this thread (allocation-counter's counting allocator).
fn allocations_in<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (info.count_total, out.expect("ran"))
}

#[test]
fn a_second_file_of_the_same_size_on_a_thread_allocates_nothing() {
    let first = TempFile::new("same-size-a", &level_json("aaaa", 300));
    let second = TempFile::new("same-size-b", &level_json("bbbb", 300));
    let (a, b) = (first.path().to_owned(), second.path().to_owned());
    // A fresh thread: its buffer starts empty.
    std::thread::spawn(move || {
        let name = |bytes: &[u8]| bytes[10..14].to_vec();
        let (cold, got) = allocations_in(|| with_level_file_bytes(&a, name).unwrap());
        assert_eq!(got, b"aaaa");
        assert!(cold > 0, "the first load grows the thread's buffer");
        // `name` allocates the 4-byte copy it returns: one allocation, nothing else.
        let (warm, got) = allocations_in(|| with_level_file_bytes(&b, name).unwrap());
        assert_eq!(got, b"bbbb", "the second file's bytes, not the first's");
        assert_eq!(warm, 1, "no heap for the file after the first load");
        let (smaller, _) = allocations_in(|| {
            with_level_reader_bytes(&b"[1, 2]"[..], |bytes| bytes.len()).unwrap()
        });
        assert_eq!(smaller, 0, "a smaller level fits the kept buffer");
    })
    .join()
    .unwrap();
}

#[test]
fn a_read_closure_that_loads_again_gets_a_buffer_of_its_own() {
    std::thread::spawn(|| {
        let outer = with_level_reader_bytes(&b"outer level"[..], |outer| {
            let inner = with_level_reader_bytes(&b"inner"[..], |inner| inner.to_vec()).unwrap();
            (outer.to_vec(), inner)
        })
        .unwrap();
        assert_eq!(outer, (b"outer level".to_vec(), b"inner".to_vec()));
        // Both buffers went back; the larger was kept, and serves the next load whole.
        let (allocations, len) = allocations_in(|| {
            with_level_reader_bytes(&b"next level"[..], |bytes| bytes.len()).unwrap()
        });
        assert_eq!((allocations, len), (0, 10));
    })
    .join()
    .unwrap();
}

#[test]
fn the_loader_threads_buffer_is_kept_between_streamed_levels() {
    let mut app = app();
    let json = level_json("caves", 600);
    let len = json.len();
    assert!(
        len > 4096 && len < 8192,
        "one read call takes it whole: {len}"
    );
    // One load more than there are loader threads: some thread loads twice.
    let threads = AsyncComputeTaskPool::get().thread_num().max(1);
    let mut room_by_thread: Vec<(ThreadId, Vec<usize>)> = Vec::new();
    for _ in 0..=threads {
        let reader = Flaky::new(json.clone(), usize::MAX, usize::MAX);
        let seen = reader.seen.clone();
        stream_reader(&mut app, "caves", reader);
        run_until_swapped(&mut app);
        assert_eq!(levels(&app).with(|l| l.spawns.len()), Some(600));
        let (thread, room) = seen.lock().unwrap()[0];
        match room_by_thread.iter_mut().find(|(t, _)| *t == thread) {
            Some((_, rooms)) => rooms.push(room),
            None => room_by_thread.push((thread, vec![room])),
        }
    }
    let mut repeats = 0;
    for (_, rooms) in &room_by_thread {
        // A thread's later loads start with room for the whole file: the buffer its
        // first load grew was kept (an empty `Vec` gives the reader no room at all
        // before it grows, and grows by small steps from there).
        for &room in &rooms[1..] {
            assert!(room >= len, "{room} bytes of room for a {len}-byte file");
            repeats += 1;
        }
    }
    assert!(repeats >= 1, "{room_by_thread:?}");
}
