//! Sequences of unknown length that outgrow the thread's first staging block (1 MiB;
//! 4 KiB under Miri): they move to a larger block and still land in the scope in one
//! piece, so the scope holds little more than the data; the larger block is kept, so
//! the next load of the same file takes no global-heap allocation; nested sequences
//! inside a moved one, and errors after a move, leave nothing staged behind.
#![cfg(all(feature = "serde", feature = "derive"))]

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use std::sync::atomic::{AtomicUsize, Ordering};

use scope_stack::serde::{DeserializeIn, DropRule};
use scope_stack::{LinearAllocator, Place};

#[derive(DeserializeIn, Debug, PartialEq)]
struct Entity<'s> {
    name: &'s str,
    path: &'s [[u16; 2]],
}

/// Entities in the first block's worth many times over (each staged element is 32
/// bytes: 64,000 of them are 2 MB; 400 under Miri are 12.8 KB).
const COUNT: usize = if cfg!(miri) { 400 } else { 64_000 };

/// A JSON list of `count` entities, and the bytes their data takes in a scope.
fn entities(count: usize) -> (String, usize) {
    let mut text = String::from("[");
    let mut data = 0;
    for i in 0..count {
        let name = format!("e{i}");
        let steps = i % 4;
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("{{\"name\":\"{name}\",\"path\":["));
        for j in 0..steps {
            text.push_str(&format!("{}[{j},{}]", if j == 0 { "" } else { "," }, i % 7));
        }
        text.push_str("]}");
        // The element, its name, its path (and at most 3 bytes of alignment after a
        // name, before a path of `u16`s).
        data += size_of::<Entity<'_>>() + name.len() + steps * 4 + 3;
    }
    text.push(']');
    (text, data)
}

#[test]
fn a_sequence_longer_than_the_first_staging_block_lands_in_one_piece() {
    let (text, data) = entities(COUNT);
    let last = format!("e{}", COUNT - 1);
    let mut memory = LinearAllocator::with_capacity(16 << 20).unwrap();
    memory.scope("level", |level| {
        let mut load = || {
            level.scope("load", |s| {
                let before = s.used();
                let all: &[Entity] = s
                    .deserialize(&mut serde_json::Deserializer::from_str(&text))
                    .unwrap();
                assert_eq!(all.len(), COUNT);
                assert_eq!(all[COUNT - 1].name, last);
                assert_eq!(all[7].path, [[0, 0], [1, 0], [2, 0]]);
                s.used() - before
            })
        };
        let used = load();
        eprintln!("{used} bytes in the scope for {data} bytes of data");
        assert!(
            used * 4 <= data * 5,
            "{used} bytes in the scope for {data} bytes of data"
        );
        // The larger block was kept: the same load again reserves nothing.
        assert_eq!(
            counting_alloc::heap_calls_during(|| assert_eq!(load(), used)),
            0
        );
    });
}

#[test]
fn nested_sequences_in_a_moved_one_and_an_error_after_the_move() {
    // Outer lists that each outgrow the first block while inner lists nest in them.
    let inner = if cfg!(miri) { 150 } else { 40_000 };
    let mut text = String::from("[");
    for k in 0..3 {
        if k > 0 {
            text.push(',');
        }
        text.push('[');
        for i in 0..inner {
            text.push_str(&format!(
                "{}[\"n{i}\",[{k}]]",
                if i == 0 { "" } else { "," }
            ));
        }
        text.push(']');
    }
    text.push(']');
    let mut memory = LinearAllocator::with_capacity(32 << 20).unwrap();
    memory.scope("level", |level| {
        let lists: &[&[(&str, &[u8])]] = level
            .deserialize(&mut serde_json::Deserializer::from_str(&text))
            .unwrap();
        assert_eq!(lists.len(), 3);
        assert!(lists.iter().all(|l| l.len() == inner));
        assert_eq!(
            lists[2][inner - 1],
            (format!("n{}", inner - 1).as_str(), &[2u8][..])
        );
        // The same file cut off after the first list moved: a serde error, and the
        // next load on this thread still works (nothing was left staged).
        let cut = &text[..text.len() * 2 / 3];
        let err = level
            .deserialize::<&[&[(&str, &[u8])]], _>(&mut serde_json::Deserializer::from_str(cut))
            .unwrap_err();
        assert!(err.is_eof(), "{err}");
        let again: &[&[(&str, &[u8])]] = level
            .deserialize(&mut serde_json::Deserializer::from_str(&text))
            .unwrap();
        assert_eq!(again, lists);
    });
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

/// A value with a destructor. Its impl by hand leaves `PLACES` at its default (it may
/// place data), so a list of them is staged, not grown in place.
struct Counted(#[allow(dead_code)] String);

impl<'s> DeserializeIn<'s> for Counted {
    const DROP: DropRule<Self> = DropRule::finalize();
    fn deserialize_in<'de, P, D>(_scope: P, de: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: serde::Deserializer<'de>,
    {
        <String as serde::Deserialize>::deserialize(de).map(Counted)
    }
}
impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn values_with_drop_staged_across_a_move_are_dropped_once() {
    let count = if cfg!(miri) { 300 } else { 60_000 };
    let items: Vec<String> = (0..count).map(|i| format!("\"v{i}\"")).collect();
    let text = format!("[{}]", items.join(","));
    let broken = format!("[{}, 7]", items.join(","));
    let mut memory = LinearAllocator::with_capacity(16 << 20).unwrap();
    DROPS.store(0, Ordering::Relaxed);
    memory.scope("level", |level| {
        level.scope("ok", |s| {
            let all: &[Counted] = s
                .deserialize(&mut serde_json::Deserializer::from_str(&text))
                .unwrap();
            assert_eq!(all.len(), count);
            assert_eq!(DROPS.load(Ordering::Relaxed), 0, "moving drops nothing");
        });
        assert_eq!(DROPS.load(Ordering::Relaxed), count, "each dropped once");
        level.scope("broken", |s| {
            let r =
                s.deserialize::<&[Counted], _>(&mut serde_json::Deserializer::from_str(&broken));
            assert!(r.is_err());
            // The staged values were dropped with the staging vector at the error.
            assert_eq!(DROPS.load(Ordering::Relaxed), 2 * count);
        });
        assert_eq!(
            DROPS.load(Ordering::Relaxed),
            2 * count,
            "nothing dropped twice"
        );
    });
}

#[test]
fn a_thread_warmed_at_start_stages_its_first_list_without_the_heap() {
    std::thread::spawn(|| {
        let mut memory = LinearAllocator::with_capacity(64 << 10).unwrap();
        // A list of unknown length (`filter` hides it) is staged.
        let load = |memory: &mut LinearAllocator| {
            memory.scope("level", |s| {
                let names = ["a", "b", "c"].into_iter().filter(|_| true);
                let de =
                    serde::de::value::SeqDeserializer::<_, serde::de::value::Error>::new(names);
                s.deserialize::<&[&str], _>(de).unwrap().len()
            })
        };
        assert_eq!(
            scope_stack::serde::warm_staging(),
            scope_stack::serde::STAGING_BYTES
        );
        assert_eq!(
            scope_stack::serde::warm_staging(),
            0,
            "a second call reserves nothing"
        );
        assert_eq!(
            counting_alloc::heap_calls_during(|| assert_eq!(load(&mut memory), 3)),
            0
        );
    })
    .join()
    .unwrap();
}
