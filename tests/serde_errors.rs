//! The crate's own error survives a format that drops messages (issue 47, item 2).
//!
//! postcard answers every `Error::custom` with "Serde Deserialization Error", so a slot
//! too small for a level used to say nothing about the slot, the scope or the bytes
//! asked for. A slot's file load now returns a `LoadError` that keeps the `SlotError`
//! (and its `AllocError`) beside the format's error. These tests check that its text
//! names the set, the load's scope and the sizes with postcard, says it once with
//! serde_json, carries nothing for a failure of the file itself, and never shows an
//! allocation error left by an earlier load.
#![cfg(all(feature = "serde", feature = "derive"))]

use scope_stack::serde::LoadError;
use scope_stack::{
    slot_root, AllocErrorKind, DeserializeIn, LinearAllocator, SlotErrorKind, Slots,
};
use serde::Serialize;

/// A level whose spawns and names go into the slot.
#[derive(DeserializeIn, Serialize)]
struct Level<'s> {
    name: &'s str,
    spawns: &'s [[f32; 2]],
    tags: &'s [&'s str],
}
slot_root!(struct LevelRoot => Level);

// A root that is big by value: 4 KiB placed by the slot itself after the file is read.
slot_root!(struct Big = for<'s> [u64; 512]);

/// A level of `spawns` spawns, as postcard bytes.
fn postcard_level(spawns: usize) -> Vec<u8> {
    let spawns = vec![[1.0f32, 2.0]; spawns];
    postcard::to_allocvec(&Level {
        name: "forest",
        spawns: &spawns,
        tags: &["green", "wet"],
    })
    .unwrap()
}

/// The same level as JSON text.
fn json_level(spawns: usize) -> String {
    let spawns = vec![[1.0f32, 2.0]; spawns];
    serde_json::to_string(&Level {
        name: "forest",
        spawns: &spawns,
        tags: &["green", "wet"],
    })
    .unwrap()
}

/// A postcard load into `slots`. (A `LoadError` holds a `SlotError`, which is large,
/// as the `Err` of `try_load` is.)
#[allow(clippy::result_large_err)]
fn postcard_load<'a>(
    slots: &'a Slots,
    name: &str,
    bytes: &[u8],
) -> Result<scope_stack::Loaded<'a, LevelRoot>, LoadError<postcard::Error>> {
    slots.load_from::<LevelRoot, _>(name, &mut postcard::Deserializer::from_bytes(bytes))
}

/// How many times `needle` occurs in `text`.
fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn postcard_slot_too_small_names_the_set_the_scope_and_the_sizes() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 1024);
        // 1000 spawns of 8 bytes: 8000 bytes for a 1 KiB slot.
        let file = postcard_level(1000);
        let err = postcard_load(levels, "forest", &file).unwrap_err();

        // The format's own error knows nothing...
        assert_eq!(
            err.format_error().to_string(),
            "Serde Deserialization Error"
        );
        // ...the load's error does.
        let slot = err.slot_error().expect("the slot was the reason");
        assert_eq!(slot.kind(), SlotErrorKind::Alloc);
        assert_eq!((slot.slots_name(), slot.load_name()), ("levels", "forest"));
        let alloc = *err.alloc_error().expect("an allocation error");
        assert_eq!(alloc.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(alloc.scope_name(), "forest");
        // How much the load asked for at once depends on how the spawns are collected;
        // it is more than the slot had left.
        assert!(
            alloc.size() > alloc.remaining() && alloc.remaining() < 1024,
            "{alloc:?}"
        );

        let text = err.to_string();
        assert!(text.starts_with("Serde Deserialization Error ("), "{text}");
        assert!(text.contains("\"levels\" (1024 bytes)"), "{text}");
        assert!(text.contains("in scope \"forest\""), "{text}");
        let asked = format!("requested {} bytes", alloc.size());
        assert!(text.contains(&asked), "{text}");
        let left = format!(
            "{} of {} bytes remaining",
            alloc.remaining(),
            alloc.capacity()
        );
        assert!(text.contains(&left), "{text}");
        assert_eq!(count(&text, &alloc.to_string()), 1, "{text}");
        // `Debug` shows both parts too.
        let debug = format!("{err:?}");
        assert!(
            debug.contains("SerdeDeCustom") && debug.contains("OutOfMemory"),
            "{debug}"
        );

        // The slot is free again, and a level that fits loads into it.
        assert_eq!(levels.loaded(), 0);
        let small = postcard_load(levels, "forest", &postcard_level(10)).unwrap();
        assert!(small.with(|l| (l.name, l.spawns.len(), l.tags[1]) == ("forest", 10, "wet")));
    });
}

#[test]
fn json_slot_too_small_says_it_once() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 1024);
        let text = json_level(1000);
        let err = levels
            .load_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(&text))
            .unwrap_err();
        let alloc = *err
            .alloc_error()
            .expect("the allocation error is kept for JSON too");
        assert_eq!(alloc.scope_name(), "forest");
        assert_eq!(err.slot_error().unwrap().slots_name(), "levels");

        // serde_json kept the message: the combined text is its text, once.
        let shown = err.to_string();
        assert_eq!(shown, err.format_error().to_string());
        assert_eq!(count(&shown, &alloc.to_string()), 1, "{shown}");
        assert_eq!(count(&shown, "scope-stack:"), 1, "{shown}");
        assert!(shown.contains("in scope \"forest\""), "{shown}");
        assert!(
            shown.contains(&format!("requested {} bytes", alloc.size())),
            "{shown}"
        );
        assert!(shown.contains("line 1"), "{shown}");
        assert_eq!(levels.loaded(), 0);
    });
}

#[test]
fn a_bad_file_carries_no_alloc_error() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        let file = postcard_level(10);
        for cut in [0, 1, 5, file.len() / 2, file.len() - 1] {
            let err = postcard_load(levels, "cut", &file[..cut]).unwrap_err();
            assert!(err.slot_error().is_none(), "{cut}: {err:?}");
            assert!(err.alloc_error().is_none(), "{cut}: {err:?}");
            // The text is the format's, untouched.
            assert_eq!(err.to_string(), err.format_error().to_string());
            assert!(!err.to_string().contains("scope-stack"), "{err}");
            assert_eq!(levels.loaded(), 0);
        }
        // The format's error is there to match on.
        let err = postcard_load(levels, "cut", &file[..3]).unwrap_err();
        assert_eq!(
            err.into_format_error(),
            postcard::Error::DeserializeUnexpectedEnd
        );
    });
}

#[test]
fn a_stale_alloc_error_never_shows_on_a_later_failure() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let small = game.new_slots("small", 1, 512);
        let large = game.new_slots("large", 1, 64 << 10);
        let big = postcard_level(1000);
        let cut = &postcard_level(10)[..7];

        // Slot too small, then a file cut short, in another set and in the same one.
        assert!(postcard_load(small, "first", &big)
            .unwrap_err()
            .alloc_error()
            .is_some());
        let err = postcard_load(large, "second", cut).unwrap_err();
        assert!(
            err.alloc_error().is_none() && err.slot_error().is_none(),
            "{err:?}"
        );
        assert!(!err.to_string().contains("first"), "{err}");
        assert!(postcard_load(small, "third", &big)
            .unwrap_err()
            .alloc_error()
            .is_some());
        let err = postcard_load(small, "fourth", cut).unwrap_err();
        assert!(err.alloc_error().is_none(), "{err:?}");

        // A plain scope's load that ran out of room also leaves an error behind on this
        // thread; the next slot load does not pick it up.
        game.scope("tiny", |tiny| {
            tiny.scope_with_budget("budget", 64, |budget| {
                let r =
                    budget.deserialize::<Level, _>(&mut postcard::Deserializer::from_bytes(&big));
                assert!(r.is_err());
            });
        });
        let err = postcard_load(large, "fifth", cut).unwrap_err();
        assert!(err.alloc_error().is_none(), "{err:?}");
        assert!(!err.to_string().contains("budget"), "{err}");

        // A load that succeeds between a failure and the next failure.
        assert!(postcard_load(small, "sixth", &big)
            .unwrap_err()
            .alloc_error()
            .is_some());
        drop(postcard_load(large, "seventh", &postcard_level(3)).unwrap());
        let err = postcard_load(large, "eighth", cut).unwrap_err();
        assert!(err.alloc_error().is_none(), "{err:?}");
        assert_eq!((small.loaded(), large.loaded()), (0, 0));
    });
}

#[test]
fn a_loader_thread_reports_its_own() {
    let levels = Slots::leak("levels", 4, 16 << 10).unwrap();
    // 80,000 bytes of spawns; a concurrent scope needs room of its own, so 16 KiB slots.
    let big = postcard_level(10_000);
    let cut = postcard_level(10)[..7].to_vec();
    // Leave an allocation error behind on this thread first.
    assert!(postcard_load(levels, "main", &big)
        .unwrap_err()
        .alloc_error()
        .is_some());
    std::thread::scope(|t| {
        let too_small = t.spawn(|| {
            levels
                .load_concurrent_from::<LevelRoot, _>(
                    "streamed",
                    &mut postcard::Deserializer::from_bytes(&big),
                )
                .unwrap_err()
        });
        let cut_short = t.spawn(|| {
            levels
                .load_concurrent_from::<LevelRoot, _>(
                    "cut",
                    &mut postcard::Deserializer::from_bytes(&cut),
                )
                .unwrap_err()
        });
        let err = too_small.join().unwrap();
        assert_eq!(err.alloc_error().map(|a| a.scope_name()), Some("streamed"));
        assert!(
            err.to_string().contains("\"levels\" (16384 bytes)"),
            "{err}"
        );
        // A concurrent scope hands its threads chunks: the request that failed may be
        // any of the level's, but the text gives its size and what was left.
        let alloc = *err.alloc_error().unwrap();
        let sizes = format!(
            "requested {} bytes (align {}), {} of {} bytes remaining",
            alloc.size(),
            alloc.align(),
            alloc.remaining(),
            alloc.capacity()
        );
        assert!(err.to_string().contains(&sizes), "{err}");
        let err = cut_short.join().unwrap();
        assert!(err.alloc_error().is_none(), "{err:?}");
    });
    // A task slot's load on another thread, and the main thread's own record.
    let err = std::thread::spawn(move || {
        levels
            .load_task_from::<LevelRoot, _>("task", &mut postcard::Deserializer::from_bytes(&big))
            .unwrap_err()
    })
    .join()
    .unwrap();
    assert_eq!(err.alloc_error().map(|a| a.scope_name()), Some("task"));
    assert!(err.to_string().contains("\"levels\""), "{err}");
    let err = postcard_load(levels, "main", &cut).unwrap_err();
    assert!(err.alloc_error().is_none(), "{err:?}");
    assert_eq!(levels.loaded(), 0);
}

#[test]
fn every_slot_held_names_the_holders_once() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        let file = postcard_level(3);
        let _held = postcard_load(levels, "forest", &file).unwrap();

        let err = postcard_load(levels, "castle", &file).unwrap_err();
        assert_eq!(err.slot_error().unwrap().kind(), SlotErrorKind::Full);
        assert!(err.alloc_error().is_none());
        let text = err.to_string();
        assert!(
            text.starts_with("Serde Deserialization Error (no free slot"),
            "{text}"
        );
        assert!(text.contains("slot 0 holds \"forest\""), "{text}");

        let json = json_level(3);
        let err = levels
            .load_from::<LevelRoot, _>("castle", &mut serde_json::Deserializer::from_str(&json))
            .unwrap_err();
        let text = err.to_string();
        assert_eq!(count(&text, "no free slot for \"castle\""), 1, "{text}");
        assert_eq!(text, err.format_error().to_string());
    });
}

#[test]
fn a_root_too_big_for_the_slot_is_named_too() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("roots", 1, 1024);
        // postcard writes an array as its elements alone, each `7u64` one varint byte.
        let file = vec![7u8; 512];
        let err = slots
            .load_from::<Big, _>("big", &mut postcard::Deserializer::from_bytes(&file))
            .unwrap_err();
        assert_eq!(err.slot_error().unwrap().kind(), SlotErrorKind::Alloc);
        assert!(err.alloc_error().is_some());
        let text = err.to_string();
        assert!(
            text.contains("a slot of \"roots\" (1024 bytes) is too small for \"big\""),
            "{text}"
        );
        assert_eq!(slots.loaded(), 0);
    });
}

#[test]
fn the_error_goes_into_box_dyn_error() {
    fn load(
        slots: &Slots,
        bytes: &[u8],
    ) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
        Ok(postcard_load(slots, "boxed", bytes)?.with(|l| l.spawns.len()))
    }
    let slots = Slots::leak("boxed", 1, 1024).unwrap();
    assert_eq!(load(slots, &postcard_level(2)).unwrap(), 2);
    let err = load(slots, &postcard_level(1000)).unwrap_err();
    assert!(err.to_string().contains("in scope \"boxed\""), "{err}");
    // The format's message is part of the text, so it is not repeated as the source.
    assert!(err.source().is_none());
}
