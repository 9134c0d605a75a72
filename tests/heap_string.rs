//! `HeapString`: a growable UTF-8 string in a `Heap` (issue 47, item 5).
//!
//! What it must do: grow with pushes and `write!`, give every byte back to its heap
//! when it shrinks, clears or drops (the heap's `used` and `live` return to where they
//! were), report a full heap as an `AllocError` and leave the string unchanged (the
//! panicking forms panic with that error's message, never abort), cut only at char
//! boundaries (a cut inside a char panics, as `String`'s does), compare, hash and
//! order as its `str` (so a hashbrown map keyed by it is looked up with `&str`), and
//! move to and be used on another thread. Loops are scaled down under Miri, and heaps
//! stay small there (Miri's time per heap call grows with the heap's size).
#![cfg(feature = "alloc")]

use core::fmt::Write;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};

use allocator_api2::vec::Vec as HVec;
use hashbrown::{DefaultHashBuilder, HashMap};
use scope_stack::{slot_root, AllocErrorKind, Carve, Heap, HeapString, LinearAllocator};

/// Pushes per loop: small under Miri, which interprets every step.
const N: usize = if cfg!(miri) { 40 } else { 2_000 };

fn memory() -> LinearAllocator {
    LinearAllocator::with_capacity(1 << 20).unwrap()
}

fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

#[test]
fn pushes_and_formatting_grow_it_and_a_drop_gives_every_byte_back() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(16 << 10);
        let _kept = HeapString::from_str_in("kept", heap); // something already there
        let (used, live) = (heap.used(), heap.live());
        let mut s = HeapString::new_in(heap);
        assert_eq!((heap.used(), heap.live()), (used, live)); // empty takes nothing
        let mut expected = String::new();
        for i in 0..N {
            match i % 3 {
                0 => s.push('é'),
                1 => s.push_str("wolf"),
                _ => write!(s, "#{i}").unwrap(),
            }
            match i % 3 {
                0 => expected.push('é'),
                1 => expected.push_str("wolf"),
                _ => write!(expected, "#{i}").unwrap(),
            }
            // The heap counts exactly the string's block beside what was there.
            assert_eq!(heap.used(), used + s.capacity());
            assert_eq!(heap.live(), live + 1);
        }
        assert_eq!(s, expected);
        assert_eq!(s.len(), expected.len());
        assert!(s.capacity() >= s.len());
        drop(s);
        assert_eq!((heap.used(), heap.live()), (used, live));
    });
}

#[test]
fn shrinking_clearing_and_truncating_give_room_back_only_when_asked() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(16 << 10);
        let mut s = HeapString::with_capacity_in(1000, heap);
        assert_eq!((s.capacity(), heap.used()), (1000, 1000));
        s.push_str("frogs and toads");
        s.truncate(5);
        assert_eq!((s.as_str(), heap.used()), ("frogs", 1000)); // the room stays
        s.shrink_to_fit();
        assert_eq!((s.capacity(), heap.used()), (5, 5));
        s.clear();
        assert_eq!((s.capacity(), heap.used()), (5, 5));
        s.shrink_to_fit(); // empty: the block is freed
        assert_eq!((s.capacity(), heap.used(), heap.live()), (0, 0, 0));
        s.push_str("again");
        assert_eq!(s, "again");
        // A freed heap merges its blocks again: as much room as before.
        let empty_free = {
            let probe = level.new_heap(16 << 10);
            probe.free()
        };
        drop(s);
        assert_eq!(heap.free(), empty_free);
    });
}

#[test]
fn a_full_heap_is_an_error_and_the_string_is_unchanged() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(4096);
        let mut s = HeapString::from_str_in("frog", heap);
        let (used, cap) = (heap.used(), s.capacity());

        let big = "x".repeat(5000);
        let e = s.try_push_str(&big).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(e.size(), 5004); // the exact block it asked for last
        assert_eq!(e.capacity(), 4096);
        assert_eq!(e.remaining(), heap.largest_free());
        assert_eq!(e.scope_name(), "");
        let text = e.to_string();
        assert!(
            text.contains("out of memory") && text.contains("requested 5004 bytes"),
            "{text}"
        );
        assert_eq!((s.as_str(), s.capacity(), heap.used()), ("frog", cap, used));

        assert!(s.try_push('x').is_ok());
        s.truncate(4);
        assert_eq!(
            s.try_reserve(10_000).unwrap_err().kind(),
            AllocErrorKind::OutOfMemory
        );
        assert_eq!(
            s.try_reserve(usize::MAX).unwrap_err().kind(),
            AllocErrorKind::CapacityOverflow
        );
        assert_eq!(
            s.try_reserve_exact(1 << 40).unwrap_err().kind(),
            AllocErrorKind::OutOfMemory
        );
        assert_eq!(s, "frog");
        assert!(HeapString::try_with_capacity_in(5000, heap).is_err());
        assert!(HeapString::try_from_str_in(&big, heap).is_err());

        // try_push_fmt takes back what it wrote before the failure; write! keeps it.
        let e = s
            .try_push_fmt(format_args!("{}{}", "-ok", big))
            .unwrap_err();
        assert_eq!(
            (e.kind(), s.as_str()),
            (AllocErrorKind::OutOfMemory, "frog")
        );
        let ok = "-ok";
        assert!(write!(s, "{ok}{big}").is_err());
        assert_eq!(s, "frog-ok");

        // A failing Display is a Format error, and the string is as it was.
        struct Fails;
        impl core::fmt::Display for Fails {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("partial")?;
                Err(core::fmt::Error)
            }
        }
        let e = s.try_push_fmt(format_args!("{Fails}")).unwrap_err();
        assert_eq!((e.kind(), s.as_str()), (AllocErrorKind::Format, "frog-ok"));

        // Nothing of the failed calls is left in the heap.
        drop(s);
        assert_eq!((heap.used(), heap.live()), (0, 0));
    });
}

#[test]
fn when_the_amortized_growth_does_not_fit_the_exact_one_is_tried() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(4096);
        let mut s = HeapString::new_in(heap);
        s.push_str(&"x".repeat(2500));
        s.shrink_to_fit();
        // Doubling would ask for 5000 bytes, more than the heap has; 2600 fits.
        s.push_str(&"y".repeat(100));
        assert_eq!((s.len(), s.capacity()), (2600, 2600));
    });
}

#[test]
fn the_panicking_forms_panic_with_the_error_message_and_lose_nothing() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(4096);
        let mut s = HeapString::from_str_in("frog", heap);
        let big = "x".repeat(5000);
        let message = |r: std::thread::Result<()>| {
            let p = r.unwrap_err();
            p.downcast_ref::<String>().cloned().unwrap_or_default()
        };
        let m = message(catch_unwind(AssertUnwindSafe(|| s.push_str(&big))));
        assert!(
            m.contains("out of memory") && m.contains("of 4096 bytes"),
            "{m}"
        );
        let m = message(catch_unwind(AssertUnwindSafe(|| s.reserve(5000))));
        assert!(m.contains("out of memory"), "{m}");
        let m = message(catch_unwind(AssertUnwindSafe(|| {
            HeapString::with_capacity_in(5000, heap);
        })));
        assert!(m.contains("requested 5000 bytes"), "{m}");
        let m = message(catch_unwind(AssertUnwindSafe(|| {
            HeapString::from_str_in(&big, heap);
        })));
        assert!(m.contains("out of memory"), "{m}");
        assert_eq!(s, "frog");
        let long = HeapString::from_str_in(&"z".repeat(2500), heap);
        let m = message(catch_unwind(AssertUnwindSafe(|| {
            let _ = long.clone();
        })));
        assert!(m.contains("out of memory"), "{m}");
        drop((s, long));
        assert_eq!((heap.used(), heap.live()), (0, 0));
    });
}

#[test]
fn cuts_only_at_char_boundaries() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(4096);
        let mut s = HeapString::from_str_in("añ€😀", heap); // 1, 2, 3 and 4 bytes
        assert_eq!(s.len(), 10);
        for bad in [2, 4, 5, 7, 8, 9] {
            let r = catch_unwind(AssertUnwindSafe(|| s.truncate(bad)));
            let p = r.unwrap_err();
            let m = p.downcast_ref::<String>().unwrap();
            assert!(m.contains("not a char boundary"), "{m}");
            assert_eq!(s, "añ€😀"); // unchanged
        }
        s.truncate(100); // longer than the text: nothing happens
        assert_eq!(s, "añ€😀");
        assert_eq!(s.pop(), Some('😀'));
        s.truncate(3);
        assert_eq!(s, "añ");
        assert_eq!((s.pop(), s.pop(), s.pop()), (Some('ñ'), Some('a'), None));
        s.push('€');
        s.extend(['a', 'b']);
        s.extend(["cd", "ef"]);
        assert_eq!(s, "€abcdef");
        s.as_mut_str().make_ascii_uppercase();
        s[3..].make_ascii_lowercase(); // `DerefMut` to `str`
        assert_eq!(s, "€abcdef");
        s.get_mut(3..5).unwrap().make_ascii_uppercase();
        assert_eq!(s, "€ABcdef");
        assert_eq!(core::str::from_utf8(s.as_bytes()).unwrap(), "€ABcdef");
    });
}

#[test]
fn compares_hashes_orders_and_prints_as_its_str() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let (a, b) = (level.new_heap(4096), level.new_heap(4096));
        let x = HeapString::from_str_in("toad", a);
        let y = HeapString::from_str_in("toad", b); // another heap
        let z = HeapString::from_str_in("frog", a);
        assert_eq!(x, y);
        assert_ne!(x, z);
        let (text, owned): (&str, String) = ("toad", "toad".into());
        assert_eq!(x, text);
        assert_eq!(text, x);
        assert_eq!(x, *text);
        assert_eq!(*text, x);
        assert_eq!(x, owned);
        assert_eq!(owned, x);
        assert_eq!(hash_of(&x), hash_of("toad"));
        assert!(z < x && x.cmp(&z) == core::cmp::Ordering::Greater);
        let mut sorted = HVec::new_in(a);
        sorted.extend([x.clone(), z.clone(), HeapString::from_str_in("newt", a)]);
        sorted.sort();
        let names: Vec<&str> = sorted.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["frog", "newt", "toad"]);
        assert_eq!(format!("{x}|{x:>6}|{x:?}"), "toad|  toad|\"toad\"");
        let c = x.clone();
        assert!(core::ptr::eq(c.heap(), a) && c == x);
        assert_eq!(x.into_bytes(), b"toad");
    });
}

#[test]
fn a_hashbrown_map_keyed_by_heap_strings_is_looked_up_with_str() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(16 << 10);
        let mut by_name: HashMap<HeapString, u32, DefaultHashBuilder, &Heap> =
            HashMap::with_hasher_in(DefaultHashBuilder::default(), heap);
        let n = if cfg!(miri) { 8 } else { 100 };
        for id in 0..n {
            let mut name = HeapString::new_in(heap);
            write!(name, "wolf #{id}").unwrap();
            by_name.insert(name, id);
        }
        assert_eq!(by_name.get("wolf #7"), Some(&7));
        assert!(by_name.contains_key("wolf #0") && !by_name.contains_key("wolf"));
        let live = heap.live();
        let (key, id) = by_name.remove_entry("wolf #3").unwrap();
        assert_eq!((key.as_str(), id), ("wolf #3", 3));
        drop(key);
        assert_eq!(heap.live(), live - 1); // the name's block went back to the heap
        *by_name.get_mut("wolf #1").unwrap() += 100;
        assert_eq!(by_name["wolf #1"], 101);
        drop(by_name);
        assert_eq!((heap.used(), heap.live()), (0, 0));
    });
}

#[test]
fn frames_open_above_it_while_it_grows() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(16 << 10);
        let mut log = HeapString::new_in(heap);
        let frames = if cfg!(miri) { 10 } else { 500 };
        for frame_number in 0..frames {
            level.scope("frame", |frame| {
                let scratch = frame.alloc_str("spawned ");
                log.push_str(scratch);
                write!(log, "{frame_number};").unwrap();
            });
            if log.len() > 1000 {
                log.clear();
            }
        }
        assert!(log.ends_with(&format!("spawned {};", frames - 1)));
    });
}

/// A level's root in a slot: its heap and the names made while it plays.
struct Level<'s> {
    heap: &'s Heap,
    names: HVec<HeapString<'s>, &'s Heap>,
}
slot_root!(struct LevelRoot => Level);

fn build<'s>(into: impl Carve<'s>) -> Level<'s> {
    let heap = into.new_heap(16 << 10);
    Level {
        heap,
        names: HVec::new_in(heap),
    }
}

#[test]
fn names_in_a_slots_root_grow_there_and_go_with_the_level_on_another_thread() {
    let mut memory = memory();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        let mut forest = levels
            .load_concurrent::<LevelRoot>("forest", |s| build(s))
            .unwrap();
        forest.with_mut(|l, _| {
            for i in 0..N.min(50) {
                let mut name = HeapString::new_in(l.heap);
                write!(name, "wolf #{i}").unwrap();
                l.names.push(name);
            }
        });
        std::thread::scope(|t| {
            t.spawn(move || {
                let mut forest = forest;
                forest.with_mut(|l, _| {
                    l.names[0].push_str(" (alpha)");
                    l.names.retain(|n| !n.ends_with('3'));
                    assert!(l.names.iter().all(|n| n.starts_with("wolf #")));
                    assert_eq!(l.names[0], "wolf #0 (alpha)");
                });
            }); // dropped there: the names, then the slot (and its heap) go
        });
        // The slot is free again.
        let again = levels.load::<LevelRoot>("again", |s| build(s)).unwrap();
        assert_eq!(again.with(|l| (l.names.len(), l.heap.used())), (0, 0));
    });
}

#[test]
fn two_threads_build_strings_in_one_heap() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let heap = level.new_heap(16 << 10);
        let (used, live) = (heap.used(), heap.live());
        let n = if cfg!(miri) { 20 } else { 1000 };
        std::thread::scope(|t| {
            for who in ["frog", "toad"] {
                t.spawn(move || {
                    let mut s = HeapString::new_in(heap);
                    for i in 0..n {
                        write!(s, "{who}{i} ").unwrap();
                        if s.len() > 200 {
                            s.clear();
                            s.shrink_to_fit();
                        }
                    }
                    assert!(s.starts_with(who) || s.is_empty());
                });
            }
            // And one moved to another thread after it was built here.
            let mine = HeapString::from_str_in("newt", heap);
            t.spawn(move || {
                let mut mine = mine;
                mine.push_str(" (moved)");
                assert_eq!(mine, "newt (moved)");
            });
        });
        assert_eq!((heap.used(), heap.live()), (used, live));
    });
}
