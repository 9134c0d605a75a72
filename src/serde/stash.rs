//! A holding place for the values of a sequence of unknown length that must all be read
//! before their container is carved (a pool whose capacity is the number of elements in
//! the file), or whose count is only known at the end (the handles of a pool with a
//! given capacity).
//!
//! Values are staged in this thread's staging block (feature `std`, as
//! [`collect`](super::collect) stages slices); when the block has no room left, or
//! without `std`, they carry on in a buffer at the top of the scope being loaded,
//! which doubles (the old buffers stay taken until the scope ends).
//!
//! Invariants: every value pushed is owned by exactly one place until it is taken out
//! (the staging vector, or the scope buffer's initialised prefix past the taken
//! count), so a stash dropped early (an error, a panic) drops each value it still holds
//! exactly once, and never one that was taken; values come out in the order they went
//! in; the scope buffer gets no finalizer record (the stash drops what it holds), so a
//! value that needs drop is never left there for the scope to drop.
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

use crate::error::AllocError;
use crate::scope::place::Place;
use crate::scope::ScopeStack;

/// Values held in the scope being loaded, in a buffer that doubles when full.
struct Spill<'s, T> {
    buf: &'s mut [MaybeUninit<T>],
    /// `buf[taken..len]` are initialised and owned here.
    len: usize,
    /// How many of the first values were taken out.
    taken: usize,
}

impl<'s, T> Spill<'s, T> {
    const fn new() -> Self {
        Spill {
            buf: &mut [],
            len: 0,
            taken: 0,
        }
    }

    /// Makes room for `more` values after the ones held, with a new buffer of at least
    /// twice the size when the old one is too small.
    fn reserve<P: Place<'s>>(&mut self, scope: P, more: usize) -> Result<(), AllocError> {
        debug_assert_eq!(self.taken, 0);
        if self.buf.len() - self.len >= more {
            return Ok(());
        }
        let want = self
            .len
            .checked_add(more)
            .map_or(usize::MAX, |n| n.max(2 * self.buf.len()).max(4));
        let new = scope.try_alloc_uninit_slice::<T>(want)?;
        // SAFETY: the first `len` values of the old buffer are initialised and owned
        // here; they move to the new buffer, which is fresh and at least `len` long, and
        // the old copies are never read or dropped again (the old buffer is forgotten).
        unsafe { ptr::copy_nonoverlapping(self.buf.as_ptr(), new.as_mut_ptr(), self.len) };
        self.buf = new;
        Ok(())
    }

    /// Adds a value, growing the buffer if need be (on an error `value` is dropped).
    fn push<P: Place<'s>>(&mut self, scope: P, value: T) -> Result<(), AllocError> {
        self.reserve(scope, 1)?;
        self.buf[self.len].write(value);
        self.len += 1;
        Ok(())
    }

    /// Takes the next value out, in the order they went in.
    fn take(&mut self) -> Option<T> {
        if self.taken == self.len {
            return None;
        }
        let i = self.taken;
        self.taken += 1;
        // SAFETY: `buf[i]` is initialised and owned here (`taken <= i < len`); raising
        // `taken` first hands it over, so it is read once and never dropped here.
        Some(unsafe { self.buf[i].assume_init_read() })
    }
}

impl<T> Drop for Spill<'_, T> {
    fn drop(&mut self) {
        for v in &mut self.buf[self.taken..self.len] {
            // SAFETY: `buf[taken..len]` are initialised and owned here, and each is
            // dropped once, as the buffer is never used again.
            unsafe { v.assume_init_drop() };
        }
    }
}

/// The staging vector of a stash (feature `std`).
#[cfg(feature = "std")]
type Staged<'a, 'b, T> = allocator_api2::vec::Vec<T, &'a ScopeStack<'b>>;

/// A holding place for values of a sequence, in order: see the module docs.
pub(crate) struct Stash<'a, 'b, 's, T, P> {
    #[cfg(feature = "std")]
    staged: Option<Staged<'a, 'b, T>>,
    spill: Spill<'s, T>,
    scope: P,
    _staging: PhantomData<&'a ScopeStack<'b>>,
}

/// Runs `f` with an empty stash whose scope buffer, if it needs one, is in `scope`;
/// `hint` is how many values the format says are coming (room is reserved for them in
/// the staging block, if it has it). Whatever the stash still holds when `f` returns is
/// dropped, and the staging room is given back.
pub(crate) fn with_stash<'s, T: 's, P, R>(
    scope: P,
    hint: usize,
    f: impl FnOnce(&mut Stash<'_, '_, 's, T, P>) -> R,
) -> R
where
    P: Place<'s> + Copy,
{
    #[cfg(feature = "std")]
    {
        super::staging::with_staging(|staging| {
            let mut stash = Stash {
                staged: staging.map(|s| {
                    let mut v = Staged::new_in(s);
                    // Best effort: a hint too large for the block grows as it goes.
                    let _ = v.try_reserve_exact(hint);
                    v
                }),
                spill: Spill::new(),
                scope,
                _staging: PhantomData,
            };
            f(&mut stash)
        })
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = hint;
        let mut stash = Stash {
            spill: Spill::new(),
            scope,
            _staging: PhantomData,
        };
        f(&mut stash)
    }
}

impl<'s, T, P: Place<'s> + Copy> Stash<'_, '_, 's, T, P> {
    /// Adds a value after the others. On an error (no room in the scope either) the
    /// value is dropped and the stash still holds the values before it.
    pub(crate) fn push(&mut self, value: T) -> Result<(), AllocError> {
        #[cfg(feature = "std")]
        if let Some(staged) = &mut self.staged {
            let more = staged.len().max(4);
            if staged.len() < staged.capacity()
                || staged.try_reserve(more).is_ok()
                || staged.try_reserve(1).is_ok()
            {
                staged.push(value);
                return Ok(());
            }
            // The staging block is full: the values move to the scope and carry on there.
            let staged = self.staged.take().unwrap_or_else(|| unreachable!());
            self.spill.reserve(self.scope, staged.len() + 1)?;
            for v in staged {
                // Room was reserved above, so this does not allocate or fail.
                self.spill.push(self.scope, v)?;
            }
        }
        self.spill.push(self.scope, value)
    }

    /// How many values the stash holds.
    pub(crate) fn len(&self) -> usize {
        #[cfg(feature = "std")]
        if let Some(staged) = &self.staged {
            return staged.len();
        }
        self.spill.len - self.spill.taken
    }

    /// Takes every value out, in the order they went in, and hands each to `f`. If `f`
    /// panics, the values not yet handed over are dropped with the stash.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(T)) {
        #[cfg(feature = "std")]
        if let Some(staged) = &mut self.staged {
            for v in staged.drain(..) {
                f(v);
            }
            return;
        }
        while let Some(v) = self.spill.take() {
            f(v);
        }
    }
}

impl<'s, T: Copy, P: Place<'s> + Copy> Stash<'_, '_, 's, T, P> {
    /// The values as one slice of the scope, in order: copied from the staging block,
    /// or the scope buffer itself (its unused tail stays taken until the scope ends).
    pub(crate) fn take_slice(&mut self) -> Result<&'s [T], AllocError> {
        #[cfg(feature = "std")]
        if let Some(staged) = &self.staged {
            return self.scope.try_alloc_slice_copy(staged).map(|s| &*s);
        }
        debug_assert_eq!(self.spill.taken, 0);
        let len = core::mem::take(&mut self.spill.len);
        let buf: &'s mut [MaybeUninit<T>] = core::mem::take(&mut self.spill.buf);
        let init: &'s [MaybeUninit<T>] = &buf[..len];
        // SAFETY: `buf[..len]` are initialised (nothing was taken: `taken` only moves in
        // `drain`, which is not mixed with this), and `MaybeUninit<T>` has `T`'s layout.
        // The spill now holds an empty buffer, so the values are owned by the slice
        // alone (`T: Copy` needs no drop); the buffer lives in the scope for `'s`.
        Ok(unsafe { &*(ptr::from_ref(init) as *const [T]) })
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use core::marker::PhantomData;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use std::vec::Vec;

    use crate::block::linear::LinearAllocator;
    use crate::scope::place::Place;
    use crate::scope::ScopeStack;
    use crate::serde::stash::{Spill, Staged, Stash};

    /// Counts its drops.
    struct D<'c>(usize, &'c AtomicUsize);
    impl Drop for D<'_> {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A stash whose staging vector lives in `staging` (or that has none).
    fn stash<'a, 'b, 's, T, P: Place<'s> + Copy>(
        staging: Option<&'a ScopeStack<'b>>,
        scope: P,
    ) -> Stash<'a, 'b, 's, T, P> {
        Stash {
            staged: staging.map(Staged::new_in),
            spill: Spill::new(),
            scope,
            _staging: PhantomData,
        }
    }

    #[test]
    fn values_come_out_in_order_from_the_scope_buffer_and_drop_once() {
        let drops = AtomicUsize::new(0);
        let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
        memory.scope("level", |level| {
            let mut s = stash::<D, _>(None, &**level);
            for i in 0..100 {
                s.push(D(i, &drops)).unwrap();
            }
            assert_eq!(s.len(), 100);
            let mut seen = Vec::new();
            s.drain(|d| seen.push(d.0));
            assert_eq!(seen, (0..100).collect::<Vec<_>>());
            assert_eq!(drops.load(Ordering::Relaxed), 100);
            drop(s);
            assert_eq!(drops.load(Ordering::Relaxed), 100);
            // Dropped early: each value once.
            let mut s = stash::<D, _>(None, &**level);
            for i in 0..33 {
                s.push(D(i, &drops)).unwrap();
            }
            drop(s);
            assert_eq!(drops.load(Ordering::Relaxed), 133);
        });
    }

    #[test]
    fn a_panic_while_draining_drops_the_rest_once() {
        let drops = AtomicUsize::new(0);
        let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
        memory.scope("level", |level| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut s = stash::<D, _>(None, &**level);
                for i in 0..20 {
                    s.push(D(i, &drops)).unwrap();
                }
                s.drain(|d| assert!(d.0 < 7, "stop"));
            }));
            assert!(r.is_err());
            assert_eq!(drops.load(Ordering::Relaxed), 20);
        });
    }

    #[test]
    fn a_full_staging_vector_moves_on_to_the_scope() {
        let drops = AtomicUsize::new(0);
        let small = LinearAllocator::with_capacity(256).unwrap();
        let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
        small.scope_shared("staging", |staging| {
            memory.scope("level", |level| {
                let mut s = stash::<D, _>(Some(&**staging), &**level);
                for i in 0..50 {
                    s.push(D(i, &drops)).unwrap();
                }
                assert!(s.staged.is_none(), "the 256-byte block holds fewer than 50");
                let mut seen = Vec::new();
                s.drain(|d| seen.push(d.0));
                assert_eq!(seen, (0..50).collect::<Vec<_>>());
                assert_eq!(drops.load(Ordering::Relaxed), 50);
                // Copy values become one slice of the scope, staged or not.
                let mut s = stash::<u64, _>(Some(&**staging), &**level);
                for i in 0..5 {
                    s.push(i).unwrap();
                }
                assert!(s.staged.is_some());
                assert_eq!(s.take_slice().unwrap(), [0, 1, 2, 3, 4]);
                let mut s = stash::<u64, _>(None, &**level);
                for i in 0..37 {
                    s.push(i).unwrap();
                }
                assert_eq!(s.take_slice().unwrap(), (0..37).collect::<Vec<_>>());
                assert_eq!(s.len(), 0);
            });
        });
    }
}
