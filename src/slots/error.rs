//! Why a load found no slot, or could not finish: [`SlotError`].
//!
//! This module owns the error type. Invariant: an error owns all its data (names are
//! copied in, cut to a fixed length), so it can outlive the slots and cross threads.

use core::fmt;

use crate::error::AllocError;

use super::carve::Slots;
use super::table::{copy_name, NAME_BYTES};

/// How many holders an error names (the rest are counted).
const NAMED_HOLDERS: usize = 4;

/// What went wrong with a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SlotErrorKind {
    /// Every slot was held (being built or loaded) at one moment during the call: a
    /// slot freed while the load looked for one is found, not missed.
    Full,
    /// A waiting load gave up: every slot was still held when its time ran out.
    TimedOut,
    /// The slot was too small for what `build` placed or for the root itself (see
    /// [`SlotError::alloc_error`]); the slot is free again.
    Alloc,
}

/// A name copied into the error.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Name {
    bytes: [u8; NAME_BYTES],
    len: usize,
}

impl Name {
    const EMPTY: Name = Name {
        bytes: [0; NAME_BYTES],
        len: 0,
    };

    fn new(name: &str) -> Name {
        let mut n = Name::EMPTY;
        n.len = copy_name(&mut n.bytes, name);
        n
    }

    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

/// A load failed: every slot was busy (which scopes held them is listed), a wait timed
/// out, or the slot was too small for the build.
///
/// ```
/// use scope_stack::{slot_root, LinearAllocator, SlotErrorKind};
/// slot_root!(struct Unit = for<'s> ());
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 2, 1024);
///     let _a = levels.load::<Unit>("forest", |_| ()).unwrap();
///     let _b = levels.load::<Unit>("castle", |_| ()).unwrap();
///     let err = levels.load::<Unit>("caves", |_| ()).unwrap_err();
///     assert_eq!(err.kind(), SlotErrorKind::Full);
///     assert_eq!(err.holders().collect::<Vec<_>>(), ["forest", "castle"]);
///     assert_eq!(
///         err.to_string(),
///         "no free slot for \"caves\": all 2 slots of \"levels\" are busy \
///          (slot 0 holds \"forest\", slot 1 holds \"castle\")"
///     );
/// });
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SlotError {
    kind: SlotErrorKind,
    /// The load's name.
    load: Name,
    /// The slots' name.
    slots: Name,
    count: usize,
    bytes_each: usize,
    /// The first holders found: slot index and name (empty while being built).
    holders: [(usize, Name); NAMED_HOLDERS],
    named: usize,
    alloc: Option<AllocError>,
}

impl SlotError {
    /// An error of `kind` for a load named `load`, listing the slots' holders now.
    pub(crate) fn busy(kind: SlotErrorKind, slots: &Slots, load: &str) -> SlotError {
        let mut err = SlotError::new(kind, slots, load);
        for i in 0..slots.count {
            if err.named == NAMED_HOLDERS {
                break;
            }
            let view = slots.record(i).view();
            if view.state != super::table::FREE {
                err.holders[err.named] = (i, Name::new(view.name()));
                err.named += 1;
            }
        }
        err
    }

    /// The slot was too small: `alloc` says for what.
    pub(crate) fn alloc(slots: &Slots, load: &str, alloc: AllocError) -> SlotError {
        let mut err = SlotError::new(SlotErrorKind::Alloc, slots, load);
        err.alloc = Some(alloc);
        err
    }

    fn new(kind: SlotErrorKind, slots: &Slots, load: &str) -> SlotError {
        SlotError {
            kind,
            load: Name::new(load),
            slots: Name::new(slots.name()),
            count: slots.count,
            bytes_each: slots.bytes_each,
            holders: [(0, Name::EMPTY); NAMED_HOLDERS],
            named: 0,
            alloc: None,
        }
    }

    /// What went wrong.
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator, SlotErrorKind};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let _held = slots.load::<Unit>("frame 1", |_| ()).unwrap();
    ///     assert_eq!(slots.load::<Unit>("frame 2", |_| ()).unwrap_err().kind(), SlotErrorKind::Full);
    /// });
    /// ```
    pub fn kind(&self) -> SlotErrorKind {
        self.kind
    }

    /// The name of the [`Slots`] (as given to `new_slots`).
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let _held = slots.load::<Unit>("frame 1", |_| ()).unwrap();
    ///     let err = slots.load::<Unit>("frame 2", |_| ()).unwrap_err();
    ///     assert_eq!((err.slots_name(), err.load_name(), err.count()), ("frames", "frame 2", 1));
    /// });
    /// ```
    pub fn slots_name(&self) -> &str {
        self.slots.as_str()
    }

    /// The name the failed load was given.
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let _held = slots.load::<Unit>("frame 1", |_| ()).unwrap();
    ///     assert_eq!(slots.load::<Unit>("frame 2", |_| ()).unwrap_err().load_name(), "frame 2");
    /// });
    /// ```
    pub fn load_name(&self) -> &str {
        self.load.as_str()
    }

    /// Number of slots.
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let _held = slots.load::<Unit>("frame 1", |_| ()).unwrap();
    ///     assert_eq!(slots.load::<Unit>("frame 2", |_| ()).unwrap_err().count(), 1);
    /// });
    /// ```
    pub fn count(&self) -> usize {
        self.count
    }

    /// The names of the scopes that held slots when the error was made, in slot order
    /// (at most four; `""` for a slot still being built). Empty for
    /// [`SlotErrorKind::Alloc`].
    ///
    /// ```
    /// # use scope_stack::{slot_root, LinearAllocator};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let _held = slots.load::<Unit>("frame 1", |_| ()).unwrap();
    ///     let err = slots.load::<Unit>("frame 2", |_| ()).unwrap_err();
    ///     assert_eq!(err.holders().collect::<Vec<_>>(), ["frame 1"]);
    /// });
    /// ```
    pub fn holders(&self) -> impl Iterator<Item = &str> + '_ {
        self.holders[..self.named].iter().map(|(_, n)| n.as_str())
    }

    /// For [`SlotErrorKind::Alloc`]: the allocation that did not fit in the slot.
    ///
    /// ```
    /// # use scope_stack::{slot_root, AllocErrorKind, LinearAllocator};
    /// slot_root!(struct Big = for<'s> [u64; 512]);
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let err = slots.load::<Big>("frame", |_| [0; 512]).unwrap_err(); // 4 KiB root
    ///     assert_eq!(err.alloc_error().unwrap().kind(), AllocErrorKind::OutOfMemory);
    ///     assert_eq!(slots.loaded(), 0); // the slot is free again
    /// });
    /// ```
    pub fn alloc_error(&self) -> Option<&AllocError> {
        self.alloc.as_ref()
    }
}

impl fmt::Display for SlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SlotErrorKind::Full | SlotErrorKind::TimedOut => {
                let waited = if self.kind == SlotErrorKind::TimedOut {
                    " after waiting"
                } else {
                    ""
                };
                write!(
                    f,
                    "no free slot for \"{}\"{waited}: all {} slots of \"{}\" are busy",
                    self.load.as_str(),
                    self.count,
                    self.slots.as_str()
                )?;
                if self.named > 0 {
                    f.write_str(" (")?;
                    for (k, (i, name)) in self.holders[..self.named].iter().enumerate() {
                        if k > 0 {
                            f.write_str(", ")?;
                        }
                        if name.len == 0 {
                            write!(f, "slot {i} is being built")?;
                        } else {
                            write!(f, "slot {i} holds \"{}\"", name.as_str())?;
                        }
                    }
                    if self.count > self.named {
                        write!(f, ", and {} more", self.count - self.named)?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
            SlotErrorKind::Alloc => {
                write!(
                    f,
                    "a slot of \"{}\" ({} bytes) is too small for \"{}\"",
                    self.slots.as_str(),
                    self.bytes_each,
                    self.load.as_str(),
                )?;
                if let Some(e) = &self.alloc {
                    write!(f, ": {e}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Debug for SlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotError")
            .field("kind", &self.kind)
            .field("load", &self.load_name())
            .field("slots", &self.slots_name())
            .field("count", &self.count)
            .field("holders", &self.holders().collect::<HolderList<'_>>())
            .field("alloc", &self.alloc)
            .finish()
    }
}

/// The holders, for `Debug` without a heap.
struct HolderList<'a>([&'a str; NAMED_HOLDERS], usize);

impl<'a> FromIterator<&'a str> for HolderList<'a> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(iter: I) -> Self {
        let mut list = HolderList([""; NAMED_HOLDERS], 0);
        for s in iter.into_iter().take(NAMED_HOLDERS) {
            list.0[list.1] = s;
            list.1 += 1;
        }
        list
    }
}

impl fmt::Debug for HolderList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.0[..self.1]).finish()
    }
}

impl core::error::Error for SlotError {}
