//! Writing to a store: `write` takes a draft, `commit` and `try_commit` publish it,
//! `pin` keeps a version for a long-running reader.
//!
//! This module owns the write path. Invariants: a commit publishes the draft's version
//! with one compare-exchange on the object's entry (release), so readers see either the
//! old version or the new one, complete; the replaced version goes to the garbage lists
//! and is freed only at `end_frame`.

use crate::pool::{Pool, PoolBox};
use crate::sync::Ordering;

use super::draft::Draft;
use super::id::Id;
use super::pinned::Pinned;
use super::table::NONE;
use super::version::{Version, MAX_PINS};
use super::Store;

impl<'s, T: Clone + 'static> Store<'s, T> {
    /// A private copy of an object's current version to change and then
    /// [`commit`](Self::commit) or [`try_commit`](Self::try_commit). Dropping the draft
    /// discards it. `None` if `id` names no live object, or if every version slot is
    /// in use (see [`versions_in_use`](Self::versions_in_use)).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<Vec<u32>>(16, 32);
    ///     let id = store.create(vec![1]).unwrap();
    ///     let mut d = store.write(id).unwrap();
    ///     d.push(2);
    ///     assert_eq!(store.read(id).unwrap(), &[1]); // not published yet
    ///     store.commit(d).ok().unwrap();
    ///     assert_eq!(store.read(id).unwrap(), &[1, 2]);
    /// });
    /// ```
    pub fn write(&self, id: Id) -> Option<Draft<'_, T>> {
        let (entry, word) = self.lookup(id)?;
        // SAFETY: the word was just loaded with Acquire under this `&self` borrow.
        let copy = unsafe { self.version(super::table::version(word)) }
            .value
            .clone();
        let boxed = self.versions.insert(Version::new(copy)).ok()?;
        Some(Draft {
            boxed,
            entry,
            base: word,
            index: id.index(),
        })
    }

    /// Publishes a draft as the object's new version; the last writer wins. Readers
    /// see the old version or the new one, whole.
    ///
    /// Fails (handing the draft back) only if the object was destroyed since the draft
    /// was taken.
    ///
    /// # Panics
    /// If the draft comes from another store.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(0).unwrap();
    ///     let (mut a, mut b) = (store.write(id).unwrap(), store.write(id).unwrap());
    ///     (*a, *b) = (1, 2);
    ///     store.commit(a).ok().unwrap();
    ///     store.commit(b).ok().unwrap(); // overwrites a's commit
    ///     assert_eq!(store.read(id), Some(&2));
    ///     let late = store.write(id).unwrap();
    ///     store.destroy(id);
    ///     assert_eq!(*store.commit(late).unwrap_err(), 2);
    /// });
    /// ```
    pub fn commit<'a>(&'a self, draft: Draft<'a, T>) -> Result<(), Draft<'a, T>> {
        let new = self.check_draft(&draft);
        let mut expected = draft.base;
        loop {
            // Success: Release, so readers that load the new word (Acquire) see the
            // draft's contents; and Acquire, because we then retire the version we
            // replaced, which makes a `&Version` to it: the thread that filled it must
            // happen-before that. Failure: Relaxed, the word seen is only compared (if
            // we adopt it, the successful exchange reads it again with Acquire).
            match draft.entry.compare_exchange_weak(
                expected,
                new,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.published(draft, expected);
                    return Ok(());
                }
                Err(seen) => {
                    if super::table::generation(seen) != super::table::generation(draft.base)
                        || super::table::version(seen) == NONE
                    {
                        return Err(draft);
                    }
                    expected = seen;
                }
            }
        }
    }

    /// Publishes a draft only if nobody has committed (or destroyed) the object since
    /// the draft was taken: one compare-exchange of the object's version. Otherwise
    /// hands the draft back; take a new one with [`write`](Self::write) and try again.
    ///
    /// # Panics
    /// If the draft comes from another store.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(0).unwrap();
    ///     let (mut a, mut b) = (store.write(id).unwrap(), store.write(id).unwrap());
    ///     (*a, *b) = (1, 2);
    ///     assert!(store.try_commit(a).is_ok());
    ///     let b = store.try_commit(b).unwrap_err(); // a got there first
    ///     assert_eq!((*b, store.read(id)), (2, Some(&1)));
    /// });
    /// ```
    pub fn try_commit<'a>(&'a self, draft: Draft<'a, T>) -> Result<(), Draft<'a, T>> {
        let new = self.check_draft(&draft);
        // Orderings: as in `commit`.
        match draft
            .entry
            .compare_exchange(draft.base, new, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => {
                let base = draft.base;
                self.published(draft, base);
                Ok(())
            }
            Err(_) => Err(draft),
        }
    }

    /// The entry word that publishes `draft`. Panics if it is another store's.
    fn check_draft(&self, draft: &Draft<'_, T>) -> u64 {
        assert!(
            self.versions.owns_box(&draft.boxed),
            "scope-stack: a Draft was committed to a store it does not come from"
        );
        let v = Pool::slot_index_of(&draft.boxed);
        super::table::pack(super::table::generation(draft.base), v)
    }

    /// After a successful exchange: the draft's box now belongs to the table, and the
    /// version the exchange replaced (in word `old`) is retired.
    fn published(&self, draft: Draft<'_, T>, old: u64) {
        let index = draft.index;
        PoolBox::leak_to_slot_index(draft.boxed);
        self.retire_version(super::table::version(old), index);
    }

    /// Pins an object's current version so that it outlives frames: the returned
    /// [`Pinned`] derefs to it and keeps it alive across any number of
    /// [`end_frame`](Self::end_frame)s, until it is dropped. For readers, such as
    /// background threads, that cannot finish within a frame. `None` if `id` names no
    /// live object.
    ///
    /// A pin costs one atomic increment (and one decrement when dropped); plain
    /// [`read`](Self::read) costs none.
    ///
    /// # Panics
    /// If one version has more than 2^31 pins at once.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<String>(16, 32);
    ///     let id = store.create("v1".to_string()).unwrap();
    ///     let pinned = store.pin(id).unwrap();
    ///     for frame in 2..5 {
    ///         let mut d = store.write(id).unwrap();
    ///         *d = format!("v{frame}");
    ///         store.commit(d).ok().unwrap();
    ///         store.end_frame(); // "v1" stays alive: it is pinned
    ///     }
    ///     // A background reader uses the pin across those frames, then drops it.
    ///     let len = std::thread::scope(|s| s.spawn(move || pinned.len()).join().unwrap());
    ///     assert_eq!(len, 2);
    ///     assert_eq!(store.end_frame(), 1); // the pin is gone: "v1" is freed now
    /// });
    /// ```
    #[track_caller]
    pub fn pin(&self, id: Id) -> Option<Pinned<'s, T>> {
        let (_, word) = self.lookup(id)?;
        let v = super::table::version(word);
        // SAFETY: the word was just loaded with Acquire under this `&self` borrow.
        let version = unsafe { self.version(v) };
        // Relaxed: `end_frame`, the only reader of the count that matters, runs after
        // this `&self` borrow has ended, which orders this increment before it.
        let old = version.pins.fetch_add(1, Ordering::Relaxed);
        if old >= MAX_PINS {
            version.pins.fetch_sub(1, Ordering::Relaxed);
            panic!("scope-stack: too many pins on one version");
        }
        Some(Pinned {
            versions: self.versions,
            slot: v,
        })
    }
}
