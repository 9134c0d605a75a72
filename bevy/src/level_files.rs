//! Level files read on the loader task: [`LevelSlots::stream_file`] and
//! [`LevelSlots::stream_from_reader`] (feature `serde`), and the per-thread file buffer
//! they read into ([`with_level_file_bytes`], [`with_level_reader_bytes`]).
//!
//! [`LevelSlots::stream_from_bytes`] takes an owned `Vec<u8>`, so the file is read
//! before the stream starts: on a system's thread, or cloned for each stream. These
//! calls take a path (or any [`Read`]) instead, and the file is opened and read on the
//! [`AsyncComputeTaskPool`](bevy_tasks::AsyncComputeTaskPool) task that builds the
//! level, then handed to `read` exactly as `stream_from_bytes` hands its bytes. An I/O
//! error (a missing file, no permission, a reader that fails midway) is the level's
//! failure: [`LevelSlots::last_error`] names the path (or the reader) and the error, a
//! [`LevelEvent::Failed`](crate::LevelEvent::Failed) message is written, the slot stays
//! free and the playing level plays on.
//!
//! Invariant: each thread keeps one file buffer (a `Vec<u8>` in a thread local) that
//! is lent out whole while a file is read and used, and given back afterwards with its
//! capacity, so after the first load of the largest file a thread reads, its loads
//! allocate no heap for the file. The buffer is *taken* out of its cell while lent
//! (not borrowed in place), so code that runs inside the `read` closure (a nested
//! load on the same thread, for example) finds the cell empty and uses a buffer of its
//! own; it can never alias the bytes being read. The larger of the two buffers is kept.
//!
//! # The buffer's size
//!
//! A thread's buffer holds at least as many bytes as the largest file it has read:
//! exactly that for a [`File`] (its length from [`File::metadata`] is reserved once
//! before the read), up to about twice that for a reader with no size hint (the
//! buffer grows by doubling). It is freed when the thread ends. Bevy's async compute
//! threads live as long as the app, so each of them that loads a level keeps a buffer
//! of the largest level file it loaded, for the app's life: count
//! `AsyncComputeTaskPool::get().thread_num()` of them when you budget memory.
//!
//! # Why a reader, and not a `bevy_asset` `AssetLoader`
//!
//! Build weight. `bevy_asset` depends on `bevy_reflect` (its `Asset` trait needs
//! `TypePath`), and this crate builds neither: with Bevy's default features off it
//! needs only `bevy_ecs`, `bevy_app` and `bevy_tasks`. An `AssetLoader` behind a
//! feature would make every build that turns the feature on, CI's included, compile
//! both. A reader gives the part that matters here (the file is read on the loader
//! task into a buffer that is reused, and parsed from there straight into the slot)
//! with `std` alone.
//! What an asset loader would add and this does not: asset paths and sources (this
//! takes a file-system path or any `Read`), hot reload, and the asset server's
//! dependency tracking.
//!
//! An app that already uses `bevy_asset` can keep its own loader and feed
//! [`LevelSlots::stream_from_bytes`] from it: load the file's bytes as an asset, and
//! when it arrives move the bytes out of `Assets` (no copy) into a stream. A sketch
//! against `bevy_asset` 0.20 (not compiled here; check the loader's signature against
//! your Bevy):
//!
//! ```rust,ignore
//! use bevy_asset::{io::Reader, prelude::*, AssetLoader, LoadContext};
//! use bevy_reflect::TypePath;
//!
//! #[derive(Asset, TypePath)]
//! struct LevelFile(Vec<u8>);
//!
//! #[derive(Default, TypePath)]
//! struct LevelFileLoader;
//!
//! impl AssetLoader for LevelFileLoader {
//!     type Asset = LevelFile;
//!     type Settings = ();
//!     type Error = std::io::Error;
//!     async fn load(
//!         &self,
//!         reader: &mut dyn Reader,
//!         _: &(),
//!         _: &mut LoadContext<'_>,
//!     ) -> Result<LevelFile, std::io::Error> {
//!         let mut bytes = Vec::new();
//!         reader.read_to_end(&mut bytes).await?;
//!         Ok(LevelFile(bytes))
//!     }
//!     fn extensions(&self) -> &[&str] {
//!         &["level.json"]
//!     }
//! }
//!
//! // app.init_asset::<LevelFile>().init_asset_loader::<LevelFileLoader>()
//! //    .add_systems(Update, stream_loaded_levels);
//! fn stream_loaded_levels(
//!     mut events: MessageReader<AssetEvent<LevelFile>>,
//!     mut files: ResMut<Assets<LevelFile>>,
//!     mut levels: ResMut<LevelSlots<LevelRoot>>,
//! ) {
//!     for event in events.read() {
//!         if let AssetEvent::LoadedWithDependencies { id } = event {
//!             // `remove` moves the bytes out: the stream owns them, nothing is cloned.
//!             if let Some(LevelFile(bytes)) = files.remove(*id) {
//!                 levels.stream_from_bytes("next", bytes, |bytes, reader| {
//!                     reader.read(&mut serde_json::Deserializer::from_slice(bytes))
//!                 });
//!             }
//!         }
//!     }
//! }
//! ```
//!
//! There the bytes are read by Bevy's IO pool into a fresh `Vec` per load; the calls
//! of this module reuse their thread's buffer instead.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
#[cfg(feature = "serde")]
use std::path::PathBuf;

#[cfg(feature = "serde")]
use scope_stack::SlotRoot;

#[cfg(feature = "serde")]
use crate::levels::{LevelReader, LevelSlots, LoadedLevel};

thread_local! {
    /// This thread's file buffer: empty (no heap) until the first load, then kept with
    /// the capacity of the largest load, and freed when the thread ends. Lent out by
    /// `mem::take` while a load uses it (see the module docs).
    static FILE_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A read that failed, with how many bytes had come in before it did.
struct ReadFailure {
    error: io::Error,
    // Shown in `last_error` (the `serde` feature's stream calls).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    bytes_read: usize,
}

/// The calling thread's buffer, lent out of its cell; given back (cleared, capacity
/// kept) when dropped, even when the closure using it panics.
struct LentBuffer(Vec<u8>);

impl LentBuffer {
    fn take() -> Self {
        // `try_with`: during the thread's teardown the cell may be gone; then a fresh
        // buffer serves, and is freed after the load.
        let mut bytes = FILE_BUFFER
            .try_with(|cell| std::mem::take(&mut *cell.borrow_mut()))
            .unwrap_or_default();
        bytes.clear();
        LentBuffer(bytes)
    }
}

impl Drop for LentBuffer {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.0);
        bytes.clear();
        let _ = FILE_BUFFER.try_with(|cell| {
            // The cell is empty unless a load nested inside this one gave its buffer
            // back first: keep the larger of the two.
            let mut kept = cell.borrow_mut();
            if bytes.capacity() >= kept.capacity() {
                *kept = bytes;
            }
        });
    }
}

/// Fills this thread's buffer with `fill`, reserving `size_hint` bytes first, and lends
/// the bytes to `use_bytes`.
fn with_buffer<T>(
    size_hint: Option<u64>,
    fill: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
    use_bytes: impl FnOnce(&[u8]) -> T,
) -> Result<T, ReadFailure> {
    let mut lent = LentBuffer::take();
    let bytes = &mut lent.0;
    if let Some(hint) = size_hint {
        // Once, before the read: no growth while reading a file that kept its length.
        // A length that does not fit in memory is an error, not an abort.
        let reserved = usize::try_from(hint)
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))
            .and_then(|hint| {
                bytes
                    .try_reserve(hint)
                    .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))
            });
        if let Err(error) = reserved {
            return Err(ReadFailure {
                error,
                bytes_read: 0,
            });
        }
    }
    if let Err(error) = fill(bytes) {
        return Err(ReadFailure {
            error,
            bytes_read: bytes.len(),
        });
    }
    Ok(use_bytes(bytes))
}

/// Reads the file at `path` into the calling thread's file buffer and lends its bytes
/// to `f`; what [`LevelSlots::stream_file`] runs on the loader task, for a load of your
/// own (a level built with [`LevelSlots::stream_with`] from a format without serde, or
/// a tool that loads levels on its own thread).
///
/// The thread's buffer is reused: after the first load of the largest file, a load
/// allocates no heap for the file (the path's conversion to a C string uses the stack
/// for paths under a few hundred bytes). The file's length ([`File::metadata`]) is
/// reserved once before the read. `f` may itself load a file on the same thread: that
/// load uses a buffer of its own (this one is lent out), and the larger buffer is kept.
///
/// The buffer holds at least as many bytes as the largest file the thread has read
/// (exactly that for files; up to about twice that through
/// [`with_level_reader_bytes`], which has no size hint), and is freed when the thread
/// ends. Bevy's async compute threads live as long as the app, so each that loads a
/// level keeps a buffer of the largest level file it loaded.
///
/// # Errors
/// Opening or reading the file: the [`io::Error`] (it does not name the path;
/// [`LevelSlots::stream_file`] adds it).
///
/// ```
/// let path = std::env::temp_dir().join(format!("level-bytes-{}.txt", std::process::id()));
/// std::fs::write(&path, b"forest")?;
/// let len = scope_stack_bevy::with_level_file_bytes(&path, |bytes| bytes.len())?;
/// assert_eq!(len, 6);
/// std::fs::remove_file(&path)?;
/// assert!(scope_stack_bevy::with_level_file_bytes(&path, |bytes| bytes.len()).is_err());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn with_level_file_bytes<T>(path: &Path, f: impl FnOnce(&[u8]) -> T) -> io::Result<T> {
    read_file(path, f).map_err(|failure| failure.error)
}

/// Opens `path` and reads it whole into this thread's buffer; then `f`.
fn read_file<T>(path: &Path, f: impl FnOnce(&[u8]) -> T) -> Result<T, ReadFailure> {
    let mut file = File::open(path).map_err(|error| ReadFailure {
        error,
        bytes_read: 0,
    })?;
    // A size hint only: a file that grows or shrinks meanwhile is still read whole.
    let size_hint = file.metadata().ok().map(|m| m.len());
    with_buffer(size_hint, |bytes| file.read_to_end(bytes).map(drop), f)
}

/// Reads `reader` to its end into the calling thread's file buffer and lends the
/// bytes to `f`; what [`LevelSlots::stream_from_reader`] runs on the loader task. As
/// [`with_level_file_bytes`], with no size hint: the buffer grows (by doubling) until
/// the reader is drained, and keeps that capacity for the next load on this thread.
///
/// # Errors
/// The reader's error (reads interrupted with [`io::ErrorKind::Interrupted`] are
/// retried); the bytes read before it are dropped.
///
/// ```
/// let words = scope_stack_bevy::with_level_reader_bytes(&b"oak elm fir"[..], |bytes| {
///     bytes.split(|b| *b == b' ').count()
/// })?;
/// assert_eq!(words, 3);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn with_level_reader_bytes<T>(reader: impl Read, f: impl FnOnce(&[u8]) -> T) -> io::Result<T> {
    read_reader(reader, f).map_err(|failure| failure.error)
}

/// Reads `reader` to its end into this thread's buffer (no size hint); then `f`.
fn read_reader<T>(mut reader: impl Read, f: impl FnOnce(&[u8]) -> T) -> Result<T, ReadFailure> {
    with_buffer(None, |bytes| reader.read_to_end(bytes).map(drop), f)
}

/// Why a level read from a file or a reader failed: its bytes could not be read, or
/// `read` failed on them.
#[cfg(feature = "serde")]
enum StreamError<E> {
    /// The file could not be opened or read.
    File { path: PathBuf, failure: ReadFailure },
    /// The reader failed.
    Reader { failure: ReadFailure },
    /// `read` failed on a file's bytes.
    FileRead { path: PathBuf, error: E },
    /// `read` failed on a reader's bytes.
    ReaderRead(E),
}

#[cfg(feature = "serde")]
impl<E: std::fmt::Display> std::fmt::Display for StreamError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let after = |f: &mut std::fmt::Formatter<'_>, failure: &ReadFailure| {
            if failure.bytes_read > 0 {
                write!(f, " (after {} bytes)", failure.bytes_read)
            } else {
                Ok(())
            }
        };
        match self {
            StreamError::File { path, failure } => {
                write!(
                    f,
                    "cannot read level file {}: {}",
                    path.display(),
                    failure.error
                )?;
                after(f, failure)
            }
            StreamError::Reader { failure } => {
                write!(f, "cannot read level from its reader: {}", failure.error)?;
                after(f, failure)
            }
            StreamError::FileRead { path, error } => {
                write!(f, "level file {}: {error}", path.display())
            }
            StreamError::ReaderRead(error) => error.fmt(f),
        }
    }
}

#[cfg(feature = "serde")]
impl<R> LevelSlots<R>
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
    for<'x> R::Of<'x>: scope_stack::DeserializeIn<'x>,
{
    /// Builds level `name` from the file at `path` (feature `serde`): the file is
    /// opened and read on the [`AsyncComputeTaskPool`](bevy_tasks::AsyncComputeTaskPool)
    /// task that builds the level, not on the calling system's thread, into that
    /// thread's reused file buffer ([`with_level_file_bytes`]), and its bytes go to
    /// `read` as in [`stream_from_bytes`](Self::stream_from_bytes). A build still
    /// pending is cancelled.
    ///
    /// A file that cannot be opened or read (missing, no permission) fails the level:
    /// [`last_error`](Self::last_error) names the path and the I/O error, a
    /// [`LevelEvent::Failed`](crate::LevelEvent::Failed) message is written, the slot
    /// stays free and the playing level plays on. An error of `read` is shown after
    /// the path, too.
    ///
    /// # Panics
    /// When the async compute pool does not exist.
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::{slot_root, DeserializeIn};
    ///
    /// #[derive(DeserializeIn)]
    /// struct Level<'s> {
    ///     name: &'s str,
    ///     spawns: &'s [[f32; 2]],
    /// }
    /// slot_root!(struct LevelRoot => Level);
    ///
    /// let path = std::env::temp_dir().join(format!("forest-{}.json", std::process::id()));
    /// std::fs::write(&path, br#"{"name": "forest", "spawns": [[1, 2], [3, 4]]}"#)?;
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<LevelRoot>::new("levels", 2, 64 << 10).unwrap();
    /// levels.stream_file("forest", &path, |bytes, reader| {
    ///     reader.read(&mut serde_json::Deserializer::from_slice(bytes))
    /// });
    /// while !levels.swap() {}
    /// assert_eq!(levels.with(|l| (l.name.len(), l.spawns.len())), Some((6, 2)));
    ///
    /// // A missing file: the error names it, and the forest plays on.
    /// std::fs::remove_file(&path)?;
    /// levels.stream_file("forest again", &path, |bytes, reader| {
    ///     reader.read(&mut serde_json::Deserializer::from_slice(bytes))
    /// });
    /// while !levels.swap() {}
    /// assert!(levels.last_error().unwrap().contains(&*path.to_string_lossy()));
    /// assert_eq!(levels.with(|l| l.name.len()), Some(6));
    /// assert_eq!(levels.slots().loaded(), 1);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn stream_file<L, E: std::fmt::Display>(
        &mut self,
        name: impl Into<String>,
        path: impl Into<PathBuf>,
        read: impl FnOnce(&[u8], LevelReader<'_, R>) -> Result<L, E> + Send + 'static,
    ) where
        L: Into<LoadedLevel<R>>,
    {
        let path = path.into();
        self.stream_with(name, move |slots, name| {
            match read_file(&path, |bytes| read(bytes, LevelReader::new(slots, name))) {
                Ok(Ok(level)) => Ok(level),
                Ok(Err(error)) => Err(StreamError::FileRead { path, error }),
                Err(failure) => Err(StreamError::File { path, failure }),
            }
        });
    }

    /// Builds level `name` from what `reader` yields (feature `serde`): as
    /// [`stream_file`](Self::stream_file), from any [`Read`] (an archive entry, a
    /// decompressor, a socket). The reader is drained on the loader task into that
    /// thread's reused file buffer ([`with_level_reader_bytes`]); a reader error fails
    /// the level, with the error and how many bytes came before it in
    /// [`last_error`](Self::last_error).
    ///
    /// # Panics
    /// When the async compute pool does not exist.
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::slot_root;
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    ///
    /// let path = std::env::temp_dir().join(format!("spawns-{}.json", std::process::id()));
    /// std::fs::write(&path, b"[[1, 2], [3, 4]]")?;
    /// let file = std::io::BufReader::new(std::fs::File::open(&path)?);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Spawns>::new("levels", 2, 4096).unwrap();
    /// levels.stream_from_reader("spawns", file, |bytes, reader| {
    ///     reader.read(&mut serde_json::Deserializer::from_slice(bytes))
    /// });
    /// while !levels.swap() {}
    /// assert_eq!(levels.with(|s| s[1]), Some([3.0, 4.0]));
    /// std::fs::remove_file(&path)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn stream_from_reader<L, E: std::fmt::Display>(
        &mut self,
        name: impl Into<String>,
        reader: impl Read + Send + 'static,
        read: impl FnOnce(&[u8], LevelReader<'_, R>) -> Result<L, E> + Send + 'static,
    ) where
        L: Into<LoadedLevel<R>>,
    {
        self.stream_with(name, move |slots, name| {
            match read_reader(reader, |bytes| read(bytes, LevelReader::new(slots, name))) {
                Ok(Ok(level)) => Ok(level),
                Ok(Err(error)) => Err(StreamError::ReaderRead(error)),
                Err(failure) => Err(StreamError::Reader { failure }),
            }
        });
    }
}
