//! loom models of the versioned store's lock-free paths.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom loom_store::`.
//!
//! Versions live in pool slots, which are loom `UnsafeCell`s: a reader that could see a
//! version before its contents were published (a missing Release/Acquire edge), or a
//! version freed while a pin still reads it, fails the model. Under loom the table's
//! blocks hold 4 objects and there are 2 garbage lists, so the models stay small.
//!
//! The store lives in a scope, but loom's threads need `'static` data: each model
//! extends the store reference's lifetime and joins every thread before the scope
//! ends.
#![cfg(loom)]

use loom::thread;
use scope_stack::store::Id;
use scope_stack::{LinearAllocator, Pinned, Store};

type Pair = (u32, u32);

/// Runs `f` with a fresh store of `objects` objects and `versions` versions.
fn with_store(objects: usize, versions: usize, f: impl FnOnce(&'static mut Store<'static, Pair>)) {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("loom", |scope| {
        let store: *mut Store<'_, Pair> = scope.new_store::<Pair>(objects, versions);
        // SAFETY: `f` joins every thread it spawns and drops every pin before
        // returning, and the store outlives this closure; the `'static` is never
        // observed past it.
        let store: &'static mut Store<'static, Pair> =
            unsafe { &mut *store.cast::<Store<'static, Pair>>() };
        f(store);
    });
}

/// A shared view of the store for the threads of one frame.
fn share(store: &mut Store<'static, Pair>) -> &'static Store<'static, Pair> {
    // SAFETY: callers stop using the view (and join its threads) before they next use
    // `store` mutably (`end_frame`); the store outlives the model's closure.
    unsafe { &*(store as *const Store<'static, Pair>) }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

fn edit(
    store: &'static Store<'static, Pair>,
    id: Id,
    value: Pair,
) -> scope_stack::Draft<'static, Pair> {
    let mut d = store.write(id).unwrap();
    *d = value;
    d
}

#[test]
fn two_try_commits_from_one_base_exactly_one_loses() {
    model(|| {
        with_store(2, 4, |store| {
            let id = store.create((50, 50)).unwrap();
            let shared = share(store);
            let a = edit(shared, id, (10, 90));
            let b = edit(shared, id, (20, 80));
            let ta = thread::spawn(move || shared.try_commit(a).is_ok());
            let tb = thread::spawn(move || shared.try_commit(b).is_ok());
            let (wa, wb) = (ta.join().unwrap(), tb.join().unwrap());
            assert!(wa ^ wb, "exactly one try_commit wins");
            let expected = if wa { (10, 90) } else { (20, 80) };
            assert_eq!(shared.read(id), Some(&expected));
            // The base version was retired once; the loser's draft was discarded.
            assert_eq!(store.end_frame(), 1);
            assert_eq!(store.versions_in_use(), 1);
        });
    });
}

#[test]
fn commit_racing_try_commit() {
    model(|| {
        with_store(2, 4, |store| {
            let id = store.create((50, 50)).unwrap();
            let shared = share(store);
            // Drafts are taken (and filled) on the racing threads, so the loser's
            // retirement of the winner's version needs the winner's Release edge.
            let t = thread::spawn(move || shared.try_commit(edit(shared, id, (10, 90))).is_ok());
            let c = thread::spawn(move || shared.commit(edit(shared, id, (30, 70))).is_ok());
            let try_won = t.join().unwrap();
            assert!(c.join().unwrap(), "commit fails only on a destroyed object");
            // Last writer wins. The try_commit wins only if nobody committed between
            // its write and its try_commit: then it went first (and the commit
            // overwrote it) or its draft was based on the commit (and it is last).
            let last = *shared.read(id).unwrap();
            assert!(
                last == (30, 70) || (try_won && last == (10, 90)),
                "{last:?}"
            );
            let retired = if try_won { 2 } else { 1 };
            assert_eq!(store.end_frame(), retired);
            assert_eq!(store.versions_in_use(), 1);
        });
    });
}

#[test]
fn read_racing_commit_sees_a_whole_version() {
    model(|| {
        with_store(2, 4, |store| {
            let id = store.create((50, 50)).unwrap();
            let shared = share(store);
            let writer = thread::spawn(move || {
                let d = edit(shared, id, (30, 70));
                shared.commit(d).unwrap();
            });
            let reader = thread::spawn(move || {
                let seen = *shared.read(id).unwrap();
                assert!(seen == (50, 50) || seen == (30, 70), "{seen:?}");
            });
            writer.join().unwrap();
            reader.join().unwrap();
            assert_eq!(shared.read(id), Some(&(30, 70)));
            assert_eq!(store.end_frame(), 1);
        });
    });
}

#[test]
fn destroy_then_create_reusing_the_slot_stale_id_finds_nothing() {
    model(|| {
        with_store(2, 4, |store| {
            let old = store.create((50, 50)).unwrap();
            let shared = share(store);
            let destroyer = thread::spawn(move || assert!(shared.destroy(old)));
            let creator = thread::spawn(move || {
                // A read racing the destroy sees the whole old version or nothing.
                if let Some(seen) = shared.read(old) {
                    assert_eq!(*seen, (50, 50));
                }
                // A create racing the destroy cannot reuse the index in this frame.
                shared.create((1, 99)).unwrap()
            });
            destroyer.join().unwrap();
            let other = creator.join().unwrap();
            assert_ne!(other.index(), old.index());
            assert_eq!(shared.read(old), None);
            assert_eq!(store.end_frame(), 1);
            let new = store.create((2, 98)).unwrap();
            assert_eq!(new.index(), old.index());
            assert_eq!(store.read(old), None);
            assert!(!store.destroy(old));
            assert_eq!(store.read(new), Some(&(2, 98)));
            assert_eq!(store.read(other), Some(&(1, 99)));
        });
    });
}

#[test]
fn pin_dropped_while_end_frame_runs() {
    model(|| {
        with_store(2, 4, |store| {
            let id = store.create((50, 50)).unwrap();
            let pinned = store.pin(id).unwrap();
            // SAFETY: the thread is joined before the store's scope ends.
            let pinned: Pinned<'static, Pair> = unsafe { core::mem::transmute(pinned) };
            let background = thread::spawn(move || {
                let (a, b) = *pinned;
                assert_eq!(a + b, 100);
                drop(pinned);
            });
            let frame = thread::spawn(move || {
                let d = edit(share(store), id, (30, 70));
                share(store).commit(d).unwrap();
                // Frees the old version only if the pin is already gone; never while
                // the background thread may still read it.
                let freed = store.end_frame();
                (store, freed)
            });
            background.join().unwrap();
            let (store, freed) = frame.join().unwrap();
            let later = store.end_frame();
            assert_eq!(freed + later, 1);
            assert_eq!(store.versions_in_use(), 1);
        });
    });
}
