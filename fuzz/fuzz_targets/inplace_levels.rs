//! Levels in place: arbitrary bytes loaded as an archived level, validated. Raw input
//! goes straight in; cooked input is an arbitrary level written with `rkyv::to_bytes`
//! and then cut and bit-flipped, so the fuzzer starts near valid archives. Through
//! every slot kind, from a slice and from a reader, with and without a build step.
//! Nothing may panic or read out of bounds; a refused load frees its slot at once; an
//! accepted one reads back in full (deserialized to heap types) and unloads in one step.
#![no_main]

use std::io::Cursor;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rkyv::rancor::Error as RkyvError;
use scope_stack::inplace::{BuildError, FromReader, LoadErrorKind};
use scope_stack::{slot_root, LinearAllocator, Pool, Slots};

#[derive(Arbitrary, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize, Debug, PartialEq)]
enum Kind {
    Wolf,
    Bear { armour: u8 },
    Named(String),
}

#[derive(Arbitrary, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize, Debug, PartialEq)]
struct Spawn {
    kind: Kind,
    hp: u32,
    at: [f32; 2],
}

#[derive(Arbitrary, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize, Debug, PartialEq)]
struct Level {
    name: String,
    geometry: Vec<[f32; 3]>,
    spawns: Vec<Spawn>,
    music: Option<String>,
    seed: u64,
}

#[derive(Arbitrary, Debug)]
enum Input {
    Raw {
        shape: u8,
        bytes: Vec<u8>,
    },
    Cooked {
        shape: u8,
        level: Level,
        cut: u16,
        flips: Vec<u16>,
    },
}

slot_root!(struct Live = for<'s> &'s mut Pool<'s, u32>);

/// Reads every part of an accepted level.
fn read_all(l: &ArchivedLevel) -> usize {
    let back = rkyv::deserialize::<Level, RkyvError>(l).unwrap();
    assert_eq!(back.spawns.len(), l.spawns.len());
    assert_eq!(back.name.as_str(), l.name.as_str());
    back.geometry.len() + back.spawns.len() + back.music.map_or(0, |m| m.len())
}

/// Loads `bytes` one of six ways; `Err` is the kind of a refused load.
fn load(levels: &Slots, shape: u8, bytes: &[u8]) -> Result<usize, LoadErrorKind> {
    let kind = |e: scope_stack::inplace::LoadError| e.kind();
    match shape % 6 {
        0 => levels
            .load_archived::<Level>("raw", bytes)
            .map(|l| l.with(|l| read_all(l)))
            .map_err(kind),
        1 => levels
            .load_archived::<Level>("read", FromReader::new(Cursor::new(bytes), bytes.len()))
            .map(|l| l.with(|l| read_all(l)))
            .map_err(kind),
        2 => levels
            .load_archived_concurrent::<Level>("shared", bytes)
            .map(|l| {
                std::thread::scope(|t| t.spawn(move || l.with(|l| read_all(l))).join().unwrap())
            })
            .map_err(kind),
        3 => levels
            .load_archived_task::<Level>("task", bytes)
            .map(|l| l.with(|l| read_all(l)))
            .map_err(kind),
        4 => {
            // A reader that promises one byte more than it has is never accepted.
            let short = FromReader::new(Cursor::new(bytes), bytes.len() + 1);
            let err = levels
                .load_archived::<Level>("short", short)
                .map(|_| ())
                .unwrap_err();
            assert!(
                matches!(err.kind(), LoadErrorKind::Read | LoadErrorKind::TooSmall),
                "{err}"
            );
            Err(err.kind())
        }
        _ => {
            let built =
                levels.load_archived_with::<Level, Live, &str>("built", bytes, |l, scope| {
                    let pool = scope
                        .try_new_pool_pod(l.spawns.len().max(1))
                        .map_err(|_| "no room")?;
                    for s in l.spawns.iter() {
                        let _ = pool
                            .insert(s.hp.to_native())
                            .map_err(|_| "full")?
                            .into_handle();
                    }
                    Ok(pool)
                });
            match built {
                Ok(mut l) => {
                    l.with_mut(|l, _| {
                        l.runtime
                            .values_mut()
                            .for_each(|hp| *hp = hp.wrapping_add(1))
                    });
                    Ok(l.with(|l| {
                        assert_eq!(l.runtime.len(), l.archived.spawns.len());
                        read_all(l.archived)
                    }))
                }
                Err(BuildError::Load(e)) => Err(e.kind()),
                // The step ran out of room in a small slot: the archive was valid.
                Err(BuildError::Build(_)) => Ok(0),
            }
        }
    }
}

fuzz_target!(|input: Input| {
    let (shape, bytes, cooked) = match input {
        Input::Raw { shape, bytes } => (shape, bytes, false),
        Input::Cooked {
            shape,
            level,
            cut,
            flips,
        } => {
            let mut bytes = rkyv::to_bytes::<RkyvError>(&level).unwrap().to_vec();
            let whole = flips.is_empty() && cut == 0;
            if cut != 0 {
                bytes.truncate(bytes.len().saturating_sub(cut as usize));
            }
            for f in flips.iter().take(8) {
                if !bytes.is_empty() {
                    let bit = *f as usize % (bytes.len() * 8);
                    bytes[bit / 8] ^= 1 << (bit % 8);
                }
            }
            (shape, bytes, whole)
        }
    };
    // Slots from 64 bytes to 64 KiB: small ones refuse big archives at once.
    let bytes_each = 64usize << ((shape / 6) % 11);
    let mut memory = LinearAllocator::with_capacity(128 << 10).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, bytes_each);
        let result = load(levels, shape, &bytes);
        // A refused load freed its slot; an accepted one unloaded when it was dropped.
        assert_eq!(levels.loaded(), 0);
        if cooked && shape % 6 != 4 {
            // An untouched cooked level is refused only for want of room.
            match result {
                Ok(_) => {}
                Err(k) => assert_eq!(
                    k,
                    LoadErrorKind::TooSmall,
                    "{} bytes into {bytes_each}",
                    bytes.len()
                ),
            }
        }
        // The slot is good for the next load.
        let again =
            levels.load_archived::<u32>("again", &rkyv::to_bytes::<RkyvError>(&7u32).unwrap());
        assert_eq!(again.unwrap().with(|n| n.to_native()), 7);
    });
    assert_eq!(memory.used(), 0);
});
