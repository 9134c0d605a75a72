//! Levels in place (feature `rkyv`): archived bytes into slots of every kind, validated,
//! read where they lie; bad bytes are errors that free the slot; the runtime half is
//! built beside the archive and unloads with it.
#![cfg(feature = "rkyv")]

use std::io::{self, Read};
use std::sync::{Arc, Mutex};

use rkyv::rancor::Error as RkyvError;
use rkyv::{Archive, Deserialize, Serialize};
use scope_stack::inplace::{BuildError, FromReader, InPlace, LoadErrorKind};
use scope_stack::{slot_root, LinearAllocator, Pool, SlotErrorKind, Slots};

#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Kind {
    Wolf,
    Bear { armour: u8 },
    Named(String),
}

#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Spawn {
    kind: Kind,
    hp: u32,
    at: [f32; 2],
}

#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Level {
    name: String,
    geometry: Vec<[f32; 3]>,
    spawns: Vec<Spawn>,
    music: Option<String>,
    seed: u64,
}

/// A level with `n` spawns and `3 * n` vertices (smaller under Miri).
fn level(n: usize) -> Level {
    Level {
        name: "forest".into(),
        geometry: (0..3 * n).map(|i| [i as f32, 0.5, -(i as f32)]).collect(),
        spawns: (0..n)
            .map(|i| Spawn {
                kind: match i % 3 {
                    0 => Kind::Wolf,
                    1 => Kind::Bear { armour: i as u8 },
                    _ => Kind::Named(format!("boss {i}")),
                },
                hp: 10 * i as u32,
                at: [i as f32, 2.0 * i as f32],
            })
            .collect(),
        music: Some("rain".into()),
        seed: 0x1234_5678_9abc_def0,
    }
}

fn cook(level: &Level) -> rkyv::util::AlignedVec {
    rkyv::to_bytes::<RkyvError>(level).unwrap()
}

const N: usize = if cfg!(miri) { 4 } else { 64 };

#[test]
fn round_trip_heap_to_archive_to_slot_gives_the_same_values() {
    let original = level(N);
    let file = cook(&original);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        let loaded = levels.load_archived::<Level>("forest", &file).unwrap();
        let back = loaded.with(|l| rkyv::deserialize::<Level, RkyvError>(*l).unwrap());
        assert_eq!(back, original);
        loaded.with(|l| {
            assert_eq!(l.name, "forest");
            assert_eq!(l.spawns.len(), N);
            assert!(matches!(l.spawns[1].kind, ArchivedKind::Bear { armour: 1 }));
            assert_eq!(l.seed.to_native(), original.seed);
            assert_eq!(l.music.as_ref().map(|m| m.as_str()), Some("rain"));
        });
    });
}

#[test]
fn the_archive_sits_aligned_at_the_front_of_the_slot_and_rewinds_on_unload() {
    let file = cook(&level(N));
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let first = levels.load_archived::<Level>("a", &file).unwrap();
    let at = first.with(|l| *l as *const ArchivedLevel as usize);
    assert_eq!(at % 16, 0);
    // The slot holds the archive, its row in the map (a link of 12 words and, the
    // slot's first container, the scope's extras of 4), and the root (one reference),
    // nothing else.
    assert!(first.used() >= file.len());
    let map_row = 16 * core::mem::size_of::<usize>();
    assert!(first.used() <= file.len() + 16 + map_row + 2 * core::mem::size_of::<usize>());
    drop(first);
    assert_eq!(levels.loaded(), 0);
    let second = levels.load_archived::<Level>("b", &file).unwrap();
    assert_eq!(second.with(|l| *l as *const ArchivedLevel as usize), at);
}

#[test]
fn a_misaligned_source_is_copied_into_aligned_room() {
    let file = cook(&level(N));
    let mut shifted = vec![0u8; file.len() + 1];
    shifted[1..].copy_from_slice(&file);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let loaded = levels
        .load_archived::<Level>("shifted", &shifted[1..])
        .unwrap();
    assert_eq!(loaded.with(|l| l.spawns.len()), N);
}

#[test]
fn every_slot_kind_loads_in_place() {
    let original = level(N);
    let file = cook(&original);
    let levels = Slots::leak("levels", 3, 64 << 10).unwrap();
    let plain = levels.load_archived::<Level>("plain", &file).unwrap();
    let shared = std::thread::scope(|t| {
        t.spawn(|| {
            levels
                .load_archived_concurrent::<Level>("shared", &file)
                .unwrap()
        })
        .join()
        .unwrap()
    });
    let task = levels.load_archived_task::<Level>("task", &file).unwrap();
    assert_eq!(levels.loaded(), 3);
    // The shared and task levels are played on another thread and dropped there.
    let played = std::thread::spawn(move || {
        shared.with(|l| l.spawns.len()) + task.with(|l| l.geometry.len())
    });
    assert_eq!(played.join().unwrap(), N + 3 * N);
    assert_eq!(plain.with(|l| l.name.len()), 6);
    drop(plain);
    assert_eq!(levels.loaded(), 0);
}

#[test]
fn every_slot_kind_loads_with_a_build_step() {
    slot_root!(struct Count = for<'s> usize);
    let file = cook(&level(N));
    let levels = Slots::leak("levels", 3, 64 << 10).unwrap();
    let count = |l: &ArchivedLevel| Ok::<_, ()>(l.spawns.len());
    let a = levels
        .load_archived_with::<Level, Count, _>("a", &file, |l, _| count(l))
        .unwrap();
    let b = levels
        .load_archived_concurrent_with::<Level, Count, _>("b", &file, |l, _| count(l))
        .unwrap();
    let c = levels
        .load_archived_task_with::<Level, Count, _>("c", &file, |l, _| count(l))
        .unwrap();
    let total = std::thread::spawn(move || b.with(|l| l.runtime) + c.with(|l| l.runtime));
    assert_eq!(total.join().unwrap() + a.with(|l| l.runtime), 3 * N);
}

/// Checks that `file` fails to load into a one-slot set and leaves the slot free.
fn refused(levels: &Slots, file: &[u8]) -> LoadErrorKind {
    let err = levels.load_archived::<Level>("bad", file).unwrap_err();
    assert_eq!(levels.loaded(), 0, "{err}");
    assert_eq!((err.slots_name(), err.load_name()), ("levels", "bad"));
    err.kind()
}

#[test]
fn every_truncation_is_refused_and_frees_the_slot() {
    let file = cook(&level(N));
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let step = if cfg!(miri) { 17 } else { 1 };
    for cut in (0..file.len()).step_by(step) {
        let kind = refused(levels, &file[..cut]);
        assert_eq!(kind, LoadErrorKind::Invalid, "cut at {cut}");
    }
    // The slot is still good for a whole file.
    assert!(levels.load_archived::<Level>("whole", &file).is_ok());
}

#[test]
fn flipped_bits_are_refused_or_read_safely() {
    let file = cook(&level(N.min(8)));
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let step = if cfg!(miri) { 29 } else { 1 };
    let (mut refused_count, mut accepted) = (0, 0);
    for bit in (0..file.len() * 8).step_by(step) {
        let mut bad = file.to_vec();
        bad[bit / 8] ^= 1 << (bit % 8);
        match levels.load_archived::<Level>("flipped", &bad) {
            Ok(l) => {
                // A flip in a number's bits is still a valid level: read all of it.
                let back = l.with(|l| rkyv::deserialize::<Level, RkyvError>(*l).unwrap());
                assert_eq!(back.spawns.len(), l.with(|l| l.spawns.len()));
                accepted += 1;
            }
            Err(e) => {
                assert_eq!(e.kind(), LoadErrorKind::Invalid, "bit {bit}: {e}");
                assert!(e.validation_error().is_some());
                refused_count += 1;
            }
        }
        assert_eq!(levels.loaded(), 0);
    }
    assert!(
        refused_count > 0 && accepted > 0,
        "{refused_count} refused, {accepted} accepted"
    );
}

#[test]
fn a_level_too_big_for_its_slot_is_refused_at_once() {
    let file = cook(&level(N));
    let levels = Slots::leak("levels", 1, 256).unwrap();
    assert!(file.len() > 256);
    let err = levels.load_archived::<Level>("big", &file).unwrap_err();
    assert_eq!(err.kind(), LoadErrorKind::TooSmall);
    assert_eq!(err.slot_error().unwrap().kind(), SlotErrorKind::Alloc);
    assert_eq!(err.alloc_error().unwrap().size(), file.len());
    assert_eq!(err.archive_len(), file.len());
    assert!(err.to_string().contains("\"levels\""), "{err}");
    assert_eq!(levels.loaded(), 0);
    // A reader is not read at all when its length cannot fit.
    let reader = FailAfter { left: 0, read: 0 };
    let err = levels
        .load_archived::<Level>("big", FromReader::new(reader, 10_000))
        .unwrap_err();
    assert_eq!(err.kind(), LoadErrorKind::TooSmall);
    assert_eq!(levels.loaded(), 0);
}

#[test]
fn a_full_set_names_the_holders() {
    let file = cook(&level(N));
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let held = levels.load_archived::<Level>("forest", &file).unwrap();
    let err = levels.load_archived::<Level>("castle", &file).unwrap_err();
    assert_eq!(err.kind(), LoadErrorKind::Full);
    assert_eq!(
        err.slot_error().unwrap().holders().collect::<Vec<_>>(),
        ["forest"]
    );
    drop(held);
    assert!(levels.load_archived::<Level>("castle", &file).is_ok());
}

/// A reader that gives `left` bytes, then fails.
struct FailAfter {
    left: usize,
    read: usize,
}

impl Read for FailAfter {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::other("disk pulled out"));
        }
        let n = buf.len().min(self.left).min(7);
        buf[..n].fill(0xAB);
        self.left -= n;
        self.read += n;
        Ok(n)
    }
}

#[test]
fn a_reader_loads_straight_into_the_slot() {
    let original = level(N);
    let file = cook(&original);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let reader = io::Cursor::new(file.to_vec());
    let loaded = levels
        .load_archived::<Level>("read", FromReader::new(reader, file.len()))
        .unwrap();
    assert_eq!(
        loaded.with(|l| rkyv::deserialize::<Level, RkyvError>(*l).unwrap()),
        original
    );
}

#[test]
fn a_reader_that_fails_midway_frees_the_slot() {
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let err = levels
        .load_archived::<Level>(
            "pulled",
            FromReader::new(FailAfter { left: 100, read: 0 }, 1000),
        )
        .unwrap_err();
    assert_eq!(err.kind(), LoadErrorKind::Read);
    assert_eq!(err.io_error().unwrap().kind(), io::ErrorKind::Other);
    assert!(err.to_string().contains("disk pulled out"), "{err}");
    assert_eq!(levels.loaded(), 0);
    // A reader that ends early.
    let file = cook(&level(N));
    let short = &file[..file.len() / 2];
    let err = levels
        .load_archived::<Level>("short", FromReader::new(short, file.len()))
        .unwrap_err();
    assert_eq!(err.io_error().unwrap().kind(), io::ErrorKind::UnexpectedEof);
    assert_eq!(levels.loaded(), 0);
}

/// An enemy of the runtime half: borrows its kind's name from the archive.
#[derive(Debug)]
struct Enemy<'s> {
    name: &'s str,
    hp: u32,
}

slot_root!(struct Enemies = for<'s> &'s mut Pool<'s, Enemy<'s>>);

fn name_of(k: &ArchivedKind) -> &str {
    match k {
        ArchivedKind::Wolf => "wolf",
        ArchivedKind::Bear { .. } => "bear",
        ArchivedKind::Named(n) => n.as_str(),
    }
}

#[test]
fn the_build_step_carves_a_pool_from_the_archived_spawn_list() {
    let file = cook(&level(N));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        let mut loaded = levels
            .load_archived_with::<Level, Enemies, &str>("forest", &file, |level, scope| {
                let pool = scope
                    .try_new_pool_pod(level.spawns.len())
                    .map_err(|_| "no room")?;
                for s in level.spawns.iter() {
                    let enemy = Enemy {
                        name: name_of(&s.kind),
                        hp: s.hp.to_native(),
                    };
                    let _ = pool.insert(enemy).map_err(|_| "full")?.into_handle();
                }
                Ok(pool)
            })
            .unwrap();
        loaded.with_mut(|l, _| {
            for e in l.runtime.values_mut() {
                e.hp += 1;
            }
        });
        loaded.with(|l: &InPlace<'_, Level, &mut Pool<'_, Enemy<'_>>>| {
            assert_eq!(l.runtime.len(), N);
            let hp: u32 = l.runtime.values().map(|e| e.hp).sum();
            let archived: u32 = l.archived.spawns.iter().map(|s| s.hp.to_native()).sum();
            assert_eq!(hp, archived + N as u32); // the archive did not change
            assert!(l.runtime.values().any(|e| e.name == "wolf"));
        });
        drop(loaded);
        // A pool too small for the spawn list: the step's error, the slot free.
        let err = levels
            .load_archived_with::<Level, Enemies, &str>("small", &file, |level, scope| {
                let pool = scope.try_new_pool_pod(1).map_err(|_| "no room")?;
                for s in level.spawns.iter() {
                    let _ = pool
                        .insert(Enemy {
                            name: "x",
                            hp: s.hp.to_native(),
                        })
                        .map_err(|_| "full")?
                        .into_handle();
                }
                Ok(pool)
            })
            .unwrap_err();
        assert!(matches!(err, BuildError::Build("full")));
        assert_eq!(levels.loaded(), 0);
    });
}

/// Writes its name into a shared log when dropped.
struct Logs(&'static str, Arc<Mutex<Vec<&'static str>>>);

impl Drop for Logs {
    fn drop(&mut self) {
        self.1.lock().unwrap().push(self.0);
    }
}

slot_root!(struct Logged = for<'s> Logs);

#[test]
fn the_runtime_half_drops_root_first_then_newest_first_and_once() {
    let file = cook(&level(N));
    let log = Arc::new(Mutex::new(Vec::new()));
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let loaded = levels
        .load_archived_with::<Level, Logged, ()>("forest", &file, |_, scope| {
            scope.new_object(Logs("first placed", log.clone()));
            scope.new_object(Logs("second placed", log.clone()));
            Ok(Logs("root", log.clone()))
        })
        .unwrap();
    assert!(log.lock().unwrap().is_empty());
    drop(loaded);
    assert_eq!(
        *log.lock().unwrap(),
        ["root", "second placed", "first placed"]
    );
    assert_eq!(levels.loaded(), 0);

    // A step that fails drops what it placed once, and frees the slot.
    log.lock().unwrap().clear();
    let err = levels
        .load_archived_with::<Level, Logged, &str>("forest", &file, |_, scope| {
            scope.new_object(Logs("placed", log.clone()));
            Err("refused")
        })
        .unwrap_err();
    assert_eq!(err.build_error(), Some(&"refused"));
    assert_eq!(*log.lock().unwrap(), ["placed"]);
    assert_eq!(levels.loaded(), 0);

    // Bad bytes: the step never runs.
    let ran = Mutex::new(false);
    let err = levels
        .load_archived_with::<Level, Logged, ()>("cut", &file[..10], |_, _| {
            *ran.lock().unwrap() = true;
            Ok(Logs("never", log.clone()))
        })
        .unwrap_err();
    assert_eq!(err.load_error().unwrap().kind(), LoadErrorKind::Invalid);
    assert!(!*ran.lock().unwrap());
    assert_eq!(levels.loaded(), 0);
}

#[test]
fn unchecked_loads_read_trusted_files() {
    let original = level(N);
    let file = cook(&original);
    let levels = Slots::leak("levels", 2, 64 << 10).unwrap();
    // SAFETY: `file` is an archived `Level` written above by this build.
    let a = unsafe { levels.load_archived_unchecked::<Level>("a", &file) }.unwrap();
    // SAFETY: as above.
    let b = unsafe { levels.load_archived_concurrent_unchecked::<Level>("b", &file) }.unwrap();
    assert_eq!(
        a.with(|l| rkyv::deserialize::<Level, RkyvError>(*l).unwrap()),
        original
    );
    assert_eq!(
        std::thread::spawn(move || b.with(|l| l.spawns.len()))
            .join()
            .unwrap(),
        N
    );
    // Too big is still an error, and frees the slot.
    let small = Slots::leak("small", 1, 64).unwrap();
    // SAFETY: as above (the load fails before reading).
    let err = unsafe { small.load_archived_unchecked::<Level>("big", &file) }.unwrap_err();
    assert_eq!(err.kind(), LoadErrorKind::TooSmall);
    assert_eq!(small.loaded(), 0);
}

#[test]
fn the_task_unchecked_load_reads_a_trusted_file_where_the_checked_one_puts_it() {
    let original = level(N);
    let file = cook(&original);
    let chunks = Slots::leak("chunks", 1, 64 << 10).unwrap();
    let addr = |l: &ArchivedLevel| l as *const ArchivedLevel as usize;
    let checked = chunks.load_archived_task::<Level>("a", &file).unwrap();
    let (at, used) = (checked.with(|l| addr(l)), checked.used());
    drop(checked);
    // SAFETY: `file` is an archived `Level` written above by this build.
    let trusted = unsafe { chunks.load_archived_task_unchecked::<Level>("a", &file) }.unwrap();
    assert_eq!((trusted.with(|l| addr(l)), trusted.used()), (at, used));
    // The level is `Send` with its task: read it on another thread.
    let back = std::thread::spawn(move || {
        trusted.with(|l| rkyv::deserialize::<Level, RkyvError>(*l).unwrap())
    })
    .join()
    .unwrap();
    assert_eq!(back, original);
    assert_eq!(chunks.loaded(), 0);
    // Every slot held, then too big: errors that name the set, and free the slot.
    let held = chunks.load_archived_task::<Level>("held", &file).unwrap();
    // SAFETY: as above (the load fails before reading).
    let err = unsafe { chunks.load_archived_task_unchecked::<Level>("b", &file) }.unwrap_err();
    assert_eq!(
        (err.kind(), err.slots_name()),
        (LoadErrorKind::Full, "chunks")
    );
    drop(held);
    let small = Slots::leak("small", 1, 64).unwrap();
    // SAFETY: as above (the load fails before reading).
    let err = unsafe { small.load_archived_task_unchecked::<Level>("big", &file) }.unwrap_err();
    assert_eq!(
        (err.kind(), err.load_name()),
        (LoadErrorKind::TooSmall, "big")
    );
    assert_eq!(small.loaded(), 0);
}

slot_root!(struct Hp = for<'s> &'s Pool<'s, u32>);

#[test]
fn the_map_shows_the_archive_then_what_the_build_step_carved() {
    let file = cook(&level(N));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 64 << 10);
        let forest = levels
            .load_archived_with::<Level, Hp, &str>("forest", &file, |l, s| {
                let pool = s.try_new_pool(l.spawns.len()).map_err(|_| "no room")?;
                for spawn in l.spawns.iter() {
                    let _ = pool
                        .insert(spawn.hp.to_native())
                        .map_err(|_| "full")?
                        .into_handle();
                }
                Ok(&*pool)
            })
            .unwrap();
        let report = game.report();
        let slot = &report.scopes[0].slots[0].slots[0];
        // The archive's row, first, at the front of the slot, then the pool after it.
        let kinds: Vec<_> = slot
            .contents
            .iter()
            .map(|p| (p.kind, p.type_name.as_str()))
            .collect();
        assert_eq!(kinds, [("Archive", "Level"), ("Pool", "u32")]);
        let archive = &slot.contents[0];
        assert_eq!((archive.offset, archive.bytes), (slot.offset, file.len()));
        assert_eq!((archive.len, archive.capacity), (file.len(), file.len()));
        assert!(slot.contents[1].offset >= archive.offset + archive.bytes);
        // The text: a row of its own kind under the slot, before the pool.
        let text = report.to_string();
        let row = text.find("- Archive Level").expect(&text);
        assert!(
            text[row..]
                .lines()
                .next()
                .unwrap()
                .contains("archived, read in place"),
            "{text}"
        );
        assert!(text[row..].contains("- Pool<u32>"), "{text}");
        assert!(text.find("- Slot forest").unwrap() < row, "{text}");
        // The picture: a box of its own, its label, and a legend entry.
        let svg = report.to_svg();
        assert!(svg.contains("class=\"archive\""), "{svg}");
        assert!(svg.contains("Archive Level: "), "{svg}");
        assert!(svg.contains("archive (read in place)"), "{svg}");
        drop(forest);
        // Unloaded, the slot lists nothing, and a failed load leaves no row behind.
        assert!(levels
            .load_archived::<Level>("cut", &file[..file.len() / 2])
            .is_err());
        let report = game.report();
        assert!(report.scopes[0].slots[0]
            .slots
            .iter()
            .all(|s| s.contents.is_empty()));
        assert!(!report.to_string().contains("Archive"), "{report}");
    });
}
