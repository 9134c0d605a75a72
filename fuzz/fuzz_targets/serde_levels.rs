//! Level files from arbitrary bytes through `#[derive(DeserializeIn)]`: read as JSON
//! (serde_json) and as postcard, into a scope and into a slot (`Slots::load_from`).
//! No input may panic; a failed slot load must leave the slot free; a successful load
//! must round-trip (serialize it back, load that, and get an equal level).
//!
//! The JSON level holds every enum representation (externally, internally and
//! adjacently tagged, untagged), so the buffered path (`Content`) is fuzzed too;
//! postcard, not self-describing, gets the externally tagged level only. Integers
//! only: a float NaN would not equal itself after the round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scope_stack::serde::{DeserializeIn, ScopeMap, Serde};
use scope_stack::{slot_root, LinearAllocator};
use serde::Serialize;

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Level<'s> {
    name: &'s str,
    tags: &'s [&'s str],
    grid: &'s [&'s [u16]],
    props: ScopeMap<'s, &'s str, i32>,
    things: &'s [Thing<'s>],
    music: Option<&'s str>,
    /// Values with drop behind a slice: each gets a finalizer.
    notes: &'s [Serde<String>],
    /// A value with drop, read with serde's own `Deserialize`.
    #[scope(with_serde)]
    title: String,
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
enum Thing<'s> {
    Empty,
    Named(&'s str),
    Box { w: u8, h: u8 },
    Pair(i8, Option<&'s str>),
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(tag = "type")]
enum Shape<'s> {
    Empty,
    Circle { r: i32 },
    Poly { points: &'s [[i16; 2]] },
    Wrapped(Inner<'s>),
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Inner<'s> {
    label: &'s str,
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Cmd<'s> {
    Stop,
    Say(&'s str),
    Move { x: i8, y: i8 },
    Pair(u8, &'s [u8]),
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(untagged)]
enum Value<'s> {
    Int(i64),
    Text(&'s str),
    List(&'s [u32]),
    Named { name: &'s str },
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct JsonLevel<'s> {
    level: Level<'s>,
    shapes: &'s [Shape<'s>],
    cmds: &'s [Cmd<'s>],
    values: &'s [Value<'s>],
}

slot_root!(struct LevelRoot => Level);
slot_root!(struct JsonRoot => JsonLevel);

/// The name of the scope a round trip loads into: running out of room there is the
/// one error a round trip may give.
const ROUND_TRIP: &str = "round trip";

/// Loads `$again` (the serialized form of `$level`, a `$ty`) into a block of its own and
/// checks that it equals `$level`.
macro_rules! round_trip {
    ($ty:ident, $level:expr, $again:expr) => {{
        let mut memory = LinearAllocator::with_capacity(2 << 20).unwrap();
        memory.scope(ROUND_TRIP, |s| match s.deserialize::<$ty, _>($again) {
            Ok(back) => assert_eq!(&back, $level),
            Err(e) => assert!(e.to_string().contains(ROUND_TRIP), "round trip failed: {e}"),
        });
    }};
}

fuzz_target!(|data: &[u8]| {
    let mut memory = LinearAllocator::with_capacity(2 << 20).unwrap();
    memory.scope("fuzz", |scope| {
        // Into a scope, as JSON, then as postcard.
        scope.scope("json", |s| {
            let mut de = serde_json::Deserializer::from_slice(data);
            if let Ok(level) = s.deserialize::<JsonLevel, _>(&mut de) {
                let text = serde_json::to_vec(&level).unwrap();
                round_trip!(
                    JsonLevel,
                    &level,
                    &mut serde_json::Deserializer::from_slice(&text)
                );
            }
        });
        scope.scope("postcard", |s| {
            let mut de = postcard::Deserializer::from_bytes(data);
            if let Ok(level) = s.deserialize::<Level, _>(&mut de) {
                let bytes = postcard::to_allocvec(&level).unwrap();
                round_trip!(
                    Level,
                    &level,
                    &mut postcard::Deserializer::from_bytes(&bytes)
                );
            }
        });
        // Into a slot: a failed load frees it.
        let slots = scope.new_slots("levels", 1, 64 << 10);
        match slots
            .load_from::<JsonRoot, _>("json", &mut serde_json::Deserializer::from_slice(data))
        {
            Ok(loaded) => loaded.with(|level| {
                let text = serde_json::to_vec(level).unwrap();
                round_trip!(
                    JsonLevel,
                    level,
                    &mut serde_json::Deserializer::from_slice(&text)
                );
            }),
            Err(_) => assert_eq!(slots.loaded(), 0),
        }
        match slots
            .load_from::<LevelRoot, _>("postcard", &mut postcard::Deserializer::from_bytes(data))
        {
            Ok(loaded) => loaded.with(|level| {
                let bytes = postcard::to_allocvec(level).unwrap();
                round_trip!(
                    Level,
                    level,
                    &mut postcard::Deserializer::from_bytes(&bytes)
                );
            }),
            Err(_) => assert_eq!(slots.loaded(), 0),
        }
        assert_eq!(slots.loaded(), 0);
    });
});
