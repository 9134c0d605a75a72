//! Why an in-place load failed: [`LoadError`] (the slot, the bytes, or the reader),
//! and [`BuildError`] (the load, or the build step after it).
//!
//! Invariant: every error names the set and the load (copied in, as a
//! [`SlotError`] does, so it outlives the slots), and when it comes back the slot is
//! free again.
#![allow(clippy::result_large_err)]

use core::fmt;

use crate::error::AllocError;
use crate::slots::{SlotError, SlotErrorKind};

/// What went wrong with an in-place load (feature `rkyv`).
///
/// ```
/// use scope_stack::inplace::{ArchivedRoot, LoadErrorKind};
/// use scope_stack::Slots;
///
/// let levels = Slots::leak("levels", 1, 4096)?;
/// let err = levels.load_archived::<u64>("cut", &[0u8; 3]).unwrap_err();
/// assert_eq!(err.kind(), LoadErrorKind::Invalid);
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// Every slot was held ([`LoadError::slot_error`] names the holders).
    Full,
    /// A waiting load gave up: every slot was still held when its time ran out.
    TimedOut,
    /// The slot is too small for the archive (or for the root after it):
    /// [`LoadError::alloc_error`] has the figures.
    TooSmall,
    /// Validation refused the bytes: cut short, altered, not an archive of this type,
    /// or made with other rkyv format features ([`LoadError::validation_error`]).
    Invalid,
    /// The reader failed or ended before the promised length (feature `std`:
    /// `LoadError::io_error`).
    Read,
}

/// The reason kept beside the names.
#[derive(Debug)]
enum Reason {
    /// The slot's own error is the reason.
    Slot,
    /// bytecheck refused the bytes.
    Invalid(rkyv::rancor::Error),
    /// The reader failed.
    #[cfg(feature = "std")]
    Read(std::io::Error),
}

/// An in-place load failed (feature `rkyv`): no slot, a slot too small, bytes that do
/// not validate, or a reader that failed. It names the set and the load; the slot is
/// free again when it comes back, and nothing was read past the archive's end.
///
/// ```
/// use scope_stack::inplace::LoadErrorKind;
/// use scope_stack::Slots;
///
/// #[derive(rkyv::Archive, rkyv::Serialize)]
/// struct Level {
///     names: Vec<String>,
/// }
///
/// let levels = Slots::leak("levels", 1, 4096)?;
/// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&Level { names: vec!["oak".into()] }).unwrap();
/// let err = levels.load_archived::<Level>("forest", &file[..file.len() - 1]).unwrap_err();
/// assert_eq!((err.kind(), err.slots_name(), err.load_name()), (LoadErrorKind::Invalid, "levels", "forest"));
/// assert!(err.to_string().starts_with("the archived bytes of \"forest\""));
/// assert_eq!(levels.loaded(), 0);
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct LoadError {
    /// Names the set and the load; the reason itself when `reason` is `Slot`.
    slot: SlotError,
    reason: Reason,
    /// The archive's length in bytes.
    len: usize,
}

impl LoadError {
    /// The slot's own error was the reason.
    pub(super) fn slot(slot: SlotError, len: usize) -> Self {
        LoadError {
            slot,
            reason: Reason::Slot,
            len,
        }
    }

    /// Validation refused the bytes; `slot` carries the names.
    pub(super) fn invalid(slot: SlotError, e: rkyv::rancor::Error, len: usize) -> Self {
        LoadError {
            slot,
            reason: Reason::Invalid(e),
            len,
        }
    }

    /// The reader failed; `slot` carries the names.
    #[cfg(feature = "std")]
    pub(super) fn read(slot: SlotError, e: std::io::Error, len: usize) -> Self {
        LoadError {
            slot,
            reason: Reason::Read(e),
            len,
        }
    }

    /// What went wrong.
    ///
    /// ```
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::Slots;
    ///
    /// let levels = Slots::leak("levels", 1, 64)?;
    /// let err = levels.load_archived::<u64>("big", &[0u8; 100]).unwrap_err();
    /// assert_eq!(err.kind(), LoadErrorKind::TooSmall);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn kind(&self) -> LoadErrorKind {
        match &self.reason {
            Reason::Slot => match self.slot.kind() {
                SlotErrorKind::Full => LoadErrorKind::Full,
                SlotErrorKind::TimedOut => LoadErrorKind::TimedOut,
                _ => LoadErrorKind::TooSmall,
            },
            Reason::Invalid(_) => LoadErrorKind::Invalid,
            #[cfg(feature = "std")]
            Reason::Read(_) => LoadErrorKind::Read,
        }
    }

    /// The name of the set the load went to.
    ///
    /// ```
    /// use scope_stack::Slots;
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// assert_eq!(levels.load_archived::<u32>("x", &[]).unwrap_err().slots_name(), "levels");
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn slots_name(&self) -> &str {
        self.slot.slots_name()
    }

    /// The load's name.
    ///
    /// ```
    /// use scope_stack::Slots;
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// assert_eq!(levels.load_archived::<u32>("x", &[]).unwrap_err().load_name(), "x");
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_name(&self) -> &str {
        self.slot.load_name()
    }

    /// The archive's length in bytes (what the load asked the slot for).
    ///
    /// ```
    /// use scope_stack::Slots;
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// assert_eq!(levels.load_archived::<u64>("x", &[1, 2, 3]).unwrap_err().archive_len(), 3);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn archive_len(&self) -> usize {
        self.len
    }

    /// The slot's error, when the slot was the reason (every slot held, or too small).
    ///
    /// ```
    /// use scope_stack::{SlotErrorKind, Slots};
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&7u32).unwrap();
    /// let held = levels.load_archived::<u32>("forest", &file).unwrap();
    /// let err = levels.load_archived::<u32>("castle", &file).unwrap_err();
    /// assert_eq!(err.slot_error().unwrap().kind(), SlotErrorKind::Full);
    /// assert_eq!(err.slot_error().unwrap().holders().collect::<Vec<_>>(), ["forest"]);
    /// drop(held);
    /// assert!(levels.load_archived::<u32>("cut", &file[..2]).unwrap_err().slot_error().is_none());
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn slot_error(&self) -> Option<&SlotError> {
        match self.reason {
            Reason::Slot => Some(&self.slot),
            _ => None,
        }
    }

    /// For a slot too small: the allocation that did not fit (the bytes asked for and
    /// the bytes left).
    ///
    /// ```
    /// use scope_stack::Slots;
    /// let levels = Slots::leak("levels", 1, 256)?;
    /// let err = levels.load_archived::<u64>("big", &[0u8; 1000]).unwrap_err();
    /// let alloc = err.alloc_error().unwrap();
    /// assert!(alloc.size() > alloc.remaining());
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn alloc_error(&self) -> Option<&AllocError> {
        self.slot_error().and_then(SlotError::alloc_error)
    }

    /// bytecheck's error, when validation refused the bytes. Its text says where and
    /// why in builds with debug assertions; release builds of rancor keep no message.
    ///
    /// ```
    /// use scope_stack::Slots;
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let err = levels.load_archived::<bool>("flag", &[2u8]).unwrap_err();
    /// assert!(err.validation_error().is_some());
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn validation_error(&self) -> Option<&rkyv::rancor::Error> {
        match &self.reason {
            Reason::Invalid(e) => Some(e),
            _ => None,
        }
    }

    /// The reader's error, when the reader failed or ended early (feature `std`).
    ///
    /// ```
    /// use scope_stack::inplace::FromReader;
    /// use scope_stack::Slots;
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let short = FromReader::new(&[0u8; 3][..], 8);
    /// let err = levels.load_archived::<u64>("cut", short).unwrap_err();
    /// assert_eq!(err.io_error().unwrap().kind(), std::io::ErrorKind::UnexpectedEof);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match &self.reason {
            Reason::Read(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Reason::Slot => fmt::Display::fmt(&self.slot, f),
            Reason::Invalid(e) => write!(
                f,
                "the archived bytes of \"{}\" ({} bytes, in a slot of \"{}\") are invalid: {e}",
                self.load_name(),
                self.len,
                self.slots_name()
            ),
            #[cfg(feature = "std")]
            Reason::Read(e) => write!(
                f,
                "reading the archived bytes of \"{}\" ({} bytes) into a slot of \"{}\" failed: {e}",
                self.load_name(),
                self.len,
                self.slots_name()
            ),
        }
    }
}

impl fmt::Debug for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadError")
            .field("kind", &self.kind())
            .field("slots", &self.slots_name())
            .field("load", &self.load_name())
            .field("len", &self.len)
            .field("reason", &self.reason)
            .field("slot", &self.slot_error())
            .finish()
    }
}

impl core::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.reason {
            Reason::Slot => Some(&self.slot),
            Reason::Invalid(e) => Some(e),
            #[cfg(feature = "std")]
            Reason::Read(e) => Some(e),
        }
    }
}

/// An in-place load with a build step failed (feature `rkyv`): the load's own
/// [`LoadError`] (the build step did not run), or the build step's error (the archive
/// was valid). Either way the slot is free again, with everything placed dropped once.
///
/// ```
/// use scope_stack::inplace::{BuildError, LoadErrorKind};
/// use scope_stack::{slot_root, Slots};
///
/// slot_root!(struct Nothing = for<'s> ());
///
/// let levels = Slots::leak("levels", 1, 4096)?;
/// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&0u32).unwrap();
/// let err = levels
///     .load_archived_with::<u32, Nothing, _>("empty", &file, |n, _| if *n == 0 { Err("no enemies") } else { Ok(()) })
///     .unwrap_err();
/// assert!(matches!(err, BuildError::Build("no enemies")));
/// let err = levels
///     .load_archived_with::<u32, Nothing, &str>("cut", &file[..1], |_, _| Ok(()))
///     .unwrap_err();
/// assert_eq!(err.load_error().unwrap().kind(), LoadErrorKind::Invalid);
/// assert_eq!(levels.loaded(), 0);
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
// The `Load` variant holds a `SlotError` with its names inline, kept unboxed so that a
// failed load allocates nothing of its own, as `try_load`'s error does.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum BuildError<B> {
    /// The load failed before the build step ran (the slot, the bytes, the reader).
    Load(LoadError),
    /// The build step returned this error; the archive was valid.
    Build(B),
}

impl<B> BuildError<B> {
    /// The load's error, when the load failed before the build step ran.
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    /// slot_root!(struct Nothing = for<'s> ());
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let err = levels.load_archived_with::<u32, Nothing, ()>("x", &[1u8], |_, _| Ok(())).unwrap_err();
    /// assert!(err.load_error().is_some() && err.build_error().is_none());
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_error(&self) -> Option<&LoadError> {
        match self {
            BuildError::Load(e) => Some(e),
            BuildError::Build(_) => None,
        }
    }

    /// The build step's error, when the build step failed.
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    /// slot_root!(struct Nothing = for<'s> ());
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&1u32).unwrap();
    /// let err = levels.load_archived_with::<u32, Nothing, _>("x", &file, |_, _| Err(42)).unwrap_err();
    /// assert_eq!(err.build_error(), Some(&42));
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn build_error(&self) -> Option<&B> {
        match self {
            BuildError::Load(_) => None,
            BuildError::Build(b) => Some(b),
        }
    }
}

impl<B: fmt::Display> fmt::Display for BuildError<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Load(e) => fmt::Display::fmt(e, f),
            BuildError::Build(b) => fmt::Display::fmt(b, f),
        }
    }
}

impl<B: core::error::Error> core::error::Error for BuildError<B> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            BuildError::Load(e) => e.source(),
            BuildError::Build(b) => b.source(),
        }
    }
}

impl<B> From<LoadError> for BuildError<B> {
    fn from(e: LoadError) -> Self {
        BuildError::Load(e)
    }
}
