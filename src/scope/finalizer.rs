//! The intrusive finalizer chain.
//!
//! A finalized value is laid out in scope memory as `[Finalizer record][padding][value]`
//! (a slice stores its length after the record). The record holds a function pointer
//! that knows the value's type and a link to the previously finalized value of the same
//! scope, so the chain runs newest-first: exact reverse order of construction.
//!
//! Consecutive `new_object` calls for one `'static` type share a *run* record: when
//! the newest record is a run of the same type (checked by `TypeId`) and ends exactly at
//! the bump pointer, the next value is placed right after it and the run's length grows.
//! (The chain remembers the head run's `TypeId`; no function pointers are compared.)
//! A run drops its values back to front, so the order stays exactly the reverse of
//! construction; unwinding a run costs one indirect call instead of one per value, and
//! the values after the first carry no record at all.
//!
//! Invariants this module keeps:
//! - A record is linked only after its value is fully constructed, and each record is
//!   run at most once: the chain head is taken out of the scope before it is walked.
//! - If a destructor panics, the rest of the chain still runs (a guard walks it during
//!   unwinding), as `Vec` does for its elements. A second panic during that walk aborts,
//!   as it does everywhere in Rust.
//! - Records are only read and written through raw pointers that carry the block's
//!   provenance; no reference to a record is ever made.
//! - A chain's count and head-run type are initialised exactly while it has a head; an
//!   empty chain is one `None` word.

use core::any::TypeId;
use core::cell::Cell;
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};

/// One link of the chain: how to destroy the value that follows, and the next record.
#[repr(C)]
pub(crate) struct Finalizer {
    /// Destroys the value owned by this record. Monomorphised for the value's type.
    run: unsafe fn(NonNull<Finalizer>),
    /// The record linked before this one, if any.
    next: Option<NonNull<Finalizer>>,
}

/// A record for a slice: the plain record followed by the element count.
#[repr(C)]
struct SliceFinalizer {
    head: Finalizer,
    len: usize,
}

/// A record for a run of same-typed values placed back to back.
#[repr(C)]
struct RunFinalizer {
    head: Finalizer,
    len: usize,
}

/// Rounds `n` up to a multiple of `align` (a power of two). Only used on constants.
const fn round_up(n: usize, align: usize) -> usize {
    (n + align - 1) & !(align - 1)
}

/// The layout of `[record][value]` for one finalized `T`.
pub(crate) struct ObjectLayout<T>(core::marker::PhantomData<T>);

impl<T> ObjectLayout<T> {
    /// Offset of the value from the start of the record.
    pub(crate) const VALUE_OFFSET: usize = round_up(size_of::<Finalizer>(), align_of::<T>());
    /// Total bytes for record plus value.
    pub(crate) const SIZE: usize = Self::VALUE_OFFSET + size_of::<T>();
    /// Alignment of the record (and so of the value that follows it).
    pub(crate) const ALIGN: usize = if align_of::<T>() > align_of::<Finalizer>() {
        align_of::<T>()
    } else {
        align_of::<Finalizer>()
    };
}

/// The layout of `[slice record][elements]` for a finalized `[T]`.
pub(crate) struct SliceLayout<T>(core::marker::PhantomData<T>);

impl<T> SliceLayout<T> {
    /// Offset of the first element from the start of the record.
    pub(crate) const VALUE_OFFSET: usize = round_up(size_of::<SliceFinalizer>(), align_of::<T>());
    /// Alignment of the record (and so of the elements that follow it).
    pub(crate) const ALIGN: usize = ObjectLayout::<T>::ALIGN;

    /// Total bytes for record plus `len` elements, or `None` on overflow.
    pub(crate) fn size(len: usize) -> Option<usize> {
        let bytes = len.checked_mul(size_of::<T>())?;
        let total = bytes.checked_add(Self::VALUE_OFFSET)?;
        (total <= isize::MAX as usize).then_some(total)
    }
}

/// The layout of `[run record][values...]` for a run of `T`s.
pub(crate) struct RunLayout<T>(core::marker::PhantomData<T>);

impl<T> RunLayout<T> {
    /// Offset of the first value from the start of the record.
    pub(crate) const VALUE_OFFSET: usize = round_up(size_of::<RunFinalizer>(), align_of::<T>());
    /// Bytes for the record plus its first value.
    pub(crate) const FIRST_SIZE: usize = Self::VALUE_OFFSET + size_of::<T>();
    /// Alignment of the record (and so of the values that follow it).
    pub(crate) const ALIGN: usize = if align_of::<T>() > align_of::<RunFinalizer>() {
        align_of::<T>()
    } else {
        align_of::<RunFinalizer>()
    };
}

/// Drops `len` values starting at `first`, last to first; if one panics, the rest are
/// still dropped (a second panic aborts, as usual).
///
/// # Safety
/// `first..first + len` are live `T`s that nothing uses again.
unsafe fn drop_reverse<T>(first: *mut T, mut len: usize) {
    struct Rest<T> {
        first: *mut T,
        len: usize,
    }
    impl<T> Drop for Rest<T> {
        fn drop(&mut self) {
            // SAFETY: the values before the one that panicked are untouched.
            unsafe { drop_reverse(self.first, self.len) }
        }
    }
    while len > 0 {
        len -= 1;
        let rest = Rest { first, len };
        // SAFETY: index `len` is live (caller contract) and dropped exactly once.
        unsafe { ptr::drop_in_place(first.add(len)) };
        core::mem::forget(rest);
    }
}

/// Destroys the run of `T`s that follows `record`, newest first.
///
/// # Safety
/// `record` was written by [`write_run_record`] and its `len` values are alive.
unsafe fn drop_run<T>(record: NonNull<Finalizer>) {
    // SAFETY: per the caller, a `RunFinalizer` with `len` live values after it.
    unsafe {
        let len = ptr::read(ptr::addr_of!((*record.cast::<RunFinalizer>().as_ptr()).len));
        let first = record
            .cast::<u8>()
            .add(RunLayout::<T>::VALUE_OFFSET)
            .cast::<T>();
        drop_reverse(first.as_ptr(), len);
    }
}

/// Writes a run record with one (not yet written) value and returns the value's slot.
///
/// # Safety
/// `record` points to `RunLayout::<T>::FIRST_SIZE` writable bytes aligned to
/// `RunLayout::<T>::ALIGN`.
pub(crate) unsafe fn write_run_record<T: 'static>(record: NonNull<u8>) -> NonNull<T> {
    // SAFETY: per the caller, the record fits and is aligned.
    unsafe {
        record.cast::<RunFinalizer>().as_ptr().write(RunFinalizer {
            head: Finalizer {
                run: drop_run::<T>,
                next: None,
            },
            len: 1,
        });
        record.add(RunLayout::<T>::VALUE_OFFSET).cast::<T>()
    }
}

/// Destroys the `T` that follows `record`.
///
/// # Safety
/// `record` was written by [`write_object_record`] for a `T` that is still alive.
unsafe fn drop_object<T>(record: NonNull<Finalizer>) {
    // SAFETY: per the caller, a live `T` sits `VALUE_OFFSET` bytes after the record, in
    // the same block (same provenance).
    unsafe {
        let value = record
            .cast::<u8>()
            .add(ObjectLayout::<T>::VALUE_OFFSET)
            .cast::<T>();
        ptr::drop_in_place(value.as_ptr());
    }
}

/// Destroys the `[T]` that follows the slice `record`.
///
/// # Safety
/// `record` was written by [`write_slice_record`] for `len` live `T`s.
unsafe fn drop_slice<T>(record: NonNull<Finalizer>) {
    // SAFETY: per the caller, the record is a `SliceFinalizer` (repr(C), `head` first)
    // and `len` live elements follow at `VALUE_OFFSET`. `drop_in_place` on a slice keeps
    // dropping the other elements if one panics.
    unsafe {
        let len = ptr::read(ptr::addr_of!(
            (*record.cast::<SliceFinalizer>().as_ptr()).len
        ));
        let first = record
            .cast::<u8>()
            .add(SliceLayout::<T>::VALUE_OFFSET)
            .cast::<T>();
        ptr::drop_in_place(ptr::slice_from_raw_parts_mut(first.as_ptr(), len));
    }
}

/// Writes the record for a finalized `T` at `record` and returns the address of the
/// value slot, which the caller must fill before linking.
///
/// # Safety
/// `record` points to `ObjectLayout::<T>::SIZE` writable bytes aligned to
/// `ObjectLayout::<T>::ALIGN`.
pub(crate) unsafe fn write_object_record<T>(record: NonNull<u8>) -> NonNull<T> {
    let rec = record.cast::<Finalizer>();
    // SAFETY: per the caller, the record fits and is aligned; `next` is set on linking.
    unsafe {
        rec.as_ptr().write(Finalizer {
            run: drop_object::<T>,
            next: None,
        });
        record.add(ObjectLayout::<T>::VALUE_OFFSET).cast::<T>()
    }
}

/// Writes the record for a finalized `[T]` of `len` elements and returns a pointer to
/// the first element slot.
///
/// # Safety
/// `record` points to `SliceLayout::<T>::size(len)` writable bytes aligned to
/// `SliceLayout::<T>::ALIGN`.
pub(crate) unsafe fn write_slice_record<T>(record: NonNull<u8>, len: usize) -> NonNull<T> {
    let rec = record.cast::<SliceFinalizer>();
    // SAFETY: per the caller, the record fits and is aligned.
    unsafe {
        rec.as_ptr().write(SliceFinalizer {
            head: Finalizer {
                run: drop_slice::<T>,
                next: None,
            },
            len,
        });
        record.add(SliceLayout::<T>::VALUE_OFFSET).cast::<T>()
    }
}

/// The head of one scope's chain. Not `Clone`: one owner walks it once.
///
/// Opening a scope writes only `head` (`None`): the other fields are meaningful only
/// while `head` is `Some`, and the first [`link`](Chain::link) writes them. An empty
/// scope's record then costs one word. `repr(C)` keeps `head` first (see `ScopeInfo`).
///
/// The newest record may be an *open run*: a run of `T` that can still grow. While it
/// is open the chain, not the record, knows where it ends (`run_end`), so appending a
/// value writes the bump pointer and `run_end` and nothing else; the record's count is
/// written when the run is *sealed*, which happens when another record is linked or the
/// chain runs. Runs of zero-sized types are never open (their values share one address,
/// so an end cannot count them); each such value gets its own record.
///
/// # Readers on other threads
///
/// The head is an atomic, so a report on another thread may walk the chain of a scope
/// whose owner can still link records: a scratch scope suspended by an inner one (rule
/// 2: suspended, not frozen), whose builders made before the inner scope opened link
/// their records when they freeze. The owner is the only writer. It writes a record
/// (its `next` included) before it publishes the record as the head with a release
/// store, and never writes a linked record's `next` again, so a reader that loads the
/// head with acquire ([`for_each_record`](Chain::for_each_record)) walks a consistent
/// chain: the records linked up to some moment, newest first. It reads nothing else
/// of the chain (not the count, not the open run's fields, which the owner writes with
/// plain stores). On x86 the release store and the owner's relaxed loads are plain
/// `mov`s, so the placing paths cost what they did with a `Cell`.
#[repr(C)]
pub struct Chain {
    /// The newest record, null when the chain is empty. Written only by the owner.
    head: AtomicPtr<Finalizer>,
    /// Values in the sealed records (a run counts each of its values, a slice once).
    /// Initialised while `head` is `Some`.
    len: Cell<MaybeUninit<usize>>,
    /// `Some(T)` while the head record is an open run of `T`. Initialised while `head`
    /// is `Some`.
    run_type: Cell<MaybeUninit<Option<TypeId>>>,
    /// The open run's end, first value and value size (all addresses and bytes).
    /// Initialised while `run_type` is `Some`.
    run_end: Cell<MaybeUninit<usize>>,
    run_first: Cell<MaybeUninit<usize>>,
    run_size: Cell<MaybeUninit<usize>>,
}

impl Chain {
    pub(crate) const fn new() -> Chain {
        Chain {
            head: AtomicPtr::new(ptr::null_mut()),
            len: Cell::new(MaybeUninit::uninit()),
            run_type: Cell::new(MaybeUninit::uninit()),
            run_end: Cell::new(MaybeUninit::uninit()),
            run_first: Cell::new(MaybeUninit::uninit()),
            run_size: Cell::new(MaybeUninit::uninit()),
        }
    }

    /// The newest record, as the owner sees it: a plain read of its own stores.
    #[inline(always)]
    fn head(&self) -> Option<NonNull<Finalizer>> {
        // SAFETY: only the owner writes the head, and this is the owner: a chain is
        // written only through its scope's handles, which are not `Sync` (a task slot's
        // scope moves between threads, never used by two at once), or by the one
        // thread holding a concurrent scope's slot; other threads only load it,
        // atomically. A plain read racing
        // only with reads is no data race, and it lets the compiler keep the head in a
        // register as it did when the head was a `Cell`.
        NonNull::new(unsafe { *self.head.as_ptr() })
    }

    /// The open run's values so far, or `None` when the head is not an open run.
    fn open_run_len(&self) -> Option<usize> {
        self.head()?;
        // SAFETY: `run_type` is initialised while the chain has a head, and the run
        // fields while it is `Some` (type invariant). An open run's size is non-zero.
        unsafe {
            self.run_type.get().assume_init()?;
            let bytes = self.run_end.get().assume_init() - self.run_first.get().assume_init();
            Some(bytes / self.run_size.get().assume_init())
        }
    }

    /// Whether no finalizer is linked (closing the scope then runs nothing).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.head().is_none()
    }

    /// Number of values linked so far (a run counts each of its values, a slice once).
    pub(crate) fn len(&self) -> usize {
        match self.head() {
            // SAFETY: `len` is initialised while the chain has a head (type invariant).
            Some(_) => self.open_run_len().unwrap_or(0) + unsafe { self.len.get().assume_init() },
            None => 0,
        }
    }

    /// Writes the open run's count into its record and closes it, so nothing more is
    /// appended and the record can run.
    fn seal(&self) {
        if let (Some(n), Some(head)) = (self.open_run_len(), self.head()) {
            // SAFETY: the head is an open run, so a `RunFinalizer` we may update; `len`
            // is initialised while the chain has a head.
            unsafe {
                ptr::addr_of_mut!((*head.cast::<RunFinalizer>().as_ptr()).len).write(n);
                self.len
                    .set(MaybeUninit::new(self.len.get().assume_init() + n));
            }
            self.run_type.set(MaybeUninit::new(None));
        }
    }

    /// If the newest record is an open run of `T` that ends at `at`, returns `at`: the
    /// next `T` may be placed there with [`grow_run`](Self::grow_run).
    #[inline]
    pub(crate) fn run_end<T: 'static>(&self, at: usize) -> Option<usize> {
        self.head()?;
        // SAFETY: `run_type` is initialised while the chain has a head, and `run_end`
        // while `run_type` is `Some` (type invariant).
        unsafe {
            let open = self.run_type.get().assume_init()?;
            if self.run_end.get().assume_init() != at || open != TypeId::of::<T>() {
                return None;
            }
        }
        Some(at)
    }

    /// Links a run record of `T` written by [`write_run_record`]; its first value is
    /// initialised. The run stays open for more values unless `T` is zero-sized.
    ///
    /// # Safety
    /// As [`link`](Self::link), for a run record of `T`.
    #[inline]
    pub(crate) unsafe fn link_run<T: 'static>(&self, record: NonNull<u8>) {
        if size_of::<T>() == 0 {
            // A run of one, sealed at once: the record already says `len: 1`.
            // SAFETY: forwarded from the caller.
            return unsafe { self.link(record) };
        }
        // SAFETY: forwarded from the caller; the count of 1 is not counted in `len`
        // (the open run counts its values itself), so take it back.
        unsafe {
            self.link(record);
            self.len
                .set(MaybeUninit::new(self.len.get().assume_init() - 1));
        }
        let first = record.as_ptr().addr() + RunLayout::<T>::VALUE_OFFSET;
        self.run_first.set(MaybeUninit::new(first));
        self.run_end.set(MaybeUninit::new(first + size_of::<T>()));
        self.run_size.set(MaybeUninit::new(size_of::<T>()));
        self.run_type.set(MaybeUninit::new(Some(TypeId::of::<T>())));
    }

    /// Counts one more value in the open run of `T` (see `run_end`), whose new last
    /// value has just been written at the run's old end.
    ///
    /// # Safety
    /// [`run_end`](Self::run_end) returned `Some` for `T` and nothing was linked since.
    #[inline]
    pub(crate) unsafe fn grow_run<T: 'static>(&self) {
        // SAFETY: per the caller the run is open, so `run_end` is initialised.
        let end = unsafe { self.run_end.get().assume_init() };
        self.run_end.set(MaybeUninit::new(end + size_of::<T>()));
    }

    /// Calls `f` with the address of every linked record, newest first (for reports).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn for_each_record(&self, mut f: impl FnMut(usize)) {
        // Acquire: pairs with the release store in `link`, so every record reachable from
        // this head, and its `next`, was written before it was published.
        let mut at = NonNull::new(self.head.load(Ordering::Acquire));
        while let Some(rec) = at {
            f(rec.as_ptr().addr());
            // SAFETY: linked records stay valid until `run_all` empties the chain, which
            // only happens when the scope ends (this chain's owner is live here).
            at = unsafe { ptr::read(ptr::addr_of!((*rec.as_ptr()).next)) };
        }
    }

    /// Links a record whose value is now fully constructed.
    ///
    /// # Safety
    /// `record` was written by `write_object_record`/`write_slice_record`, its value is
    /// initialised, and it lives in memory that stays valid until [`Chain::run_all`].
    #[inline]
    pub(crate) unsafe fn link(&self, record: NonNull<u8>) {
        self.seal();
        let rec = record.cast::<Finalizer>();
        let old = self.head();
        // SAFETY: per the caller, `rec` is a written record we may update.
        unsafe { ptr::addr_of_mut!((*rec.as_ptr()).next).write(old) };
        let len = match old {
            // SAFETY: `len` is initialised while the chain has a head (type invariant).
            Some(_) => 1 + unsafe { self.len.get().assume_init() },
            None => 1,
        };
        // Release: a reader on another thread that loads this head (acquire) sees the
        // record written, its `next` included (see the type's docs).
        self.head.store(rec.as_ptr(), Ordering::Release);
        self.run_type.set(MaybeUninit::new(None));
        self.len.set(MaybeUninit::new(len));
    }

    /// Runs every linked finalizer, newest first, and empties the chain.
    ///
    /// # Safety
    /// Every linked value is still alive and nothing will use it again.
    #[inline]
    pub(crate) unsafe fn run_all(&self) {
        // An empty chain (the usual case for a short scope) is left untouched: no store.
        let Some(head) = self.head() else {
            return;
        };
        self.seal();
        // No reader is left: the scope (or slot) is ending, and a report reads a chain
        // only while its scope lives.
        self.head.store(ptr::null_mut(), Ordering::Relaxed);
        let head = Some(head);
        // SAFETY: forwarded from the caller; the head was taken, so no record runs twice.
        unsafe { run_from(head) }
    }
}

/// Runs the chain starting at `next`. If a finalizer panics, the guard runs the rest.
///
/// # Safety
/// As [`Chain::run_all`], for every record reachable from `next`.
unsafe fn run_from(mut next: Option<NonNull<Finalizer>>) {
    /// Runs the records after a panicking one while the panic unwinds.
    struct RunRest(Option<NonNull<Finalizer>>);
    impl Drop for RunRest {
        fn drop(&mut self) {
            // SAFETY: the records after the one that panicked are untouched and valid.
            unsafe { run_from(self.0) }
        }
    }

    while let Some(rec) = next {
        // SAFETY: `rec` is a valid, linked record (caller contract); read its fields by
        // value before running it, since running it may not touch the record again.
        let (run, after) = unsafe {
            let r = rec.as_ptr();
            (
                ptr::read(ptr::addr_of!((*r).run)),
                ptr::read(ptr::addr_of!((*r).next)),
            )
        };
        next = after;
        let rest = RunRest(after);
        // SAFETY: `run` was stored with this record and matches its value's type; the
        // value is alive and runs exactly once (we moved past it).
        unsafe { run(rec) };
        core::mem::forget(rest);
    }
}

/// A chain that any thread may push records onto, and that one thread runs at the end:
/// a Treiber stack with pushes only, so it has no ABA problem (nothing is popped while
/// others push). A concurrent scope keeps one for threads without a slot of their own.
///
/// Each pushing thread's records stay in its own order, so running the stack newest
/// first destroys each thread's values in reverse order of construction.
pub(crate) struct SharedChain {
    head: crate::sync::AtomicPtr<Finalizer>,
}

impl SharedChain {
    pub(crate) fn new() -> SharedChain {
        SharedChain {
            head: crate::sync::AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Links a record whose value is fully constructed.
    ///
    /// # Safety
    /// As [`Chain::link`]; the record is not linked anywhere else.
    pub(crate) unsafe fn push(&self, record: NonNull<u8>) {
        use crate::sync::Ordering;
        let rec = record.cast::<Finalizer>();
        let mut old = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: the record is ours until the exchange below publishes it.
            unsafe { ptr::addr_of_mut!((*rec.as_ptr()).next).write(NonNull::new(old)) };
            // Release: whoever runs the chain (after an Acquire load) sees the record
            // and its value.
            match self.head.compare_exchange_weak(
                old,
                rec.as_ptr(),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }

    /// Runs every linked finalizer, newest first, and empties the chain.
    ///
    /// # Safety
    /// As [`Chain::run_all`]; no thread pushes any more.
    pub(crate) unsafe fn run_all(&self) {
        let head = self
            .head
            .swap(ptr::null_mut(), crate::sync::Ordering::Acquire);
        // SAFETY: forwarded from the caller; the head was taken, so nothing runs twice.
        unsafe { run_from(NonNull::new(head)) }
    }
}
