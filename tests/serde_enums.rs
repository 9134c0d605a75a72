//! The derive's enum representations (internally tagged, adjacently tagged, untagged)
//! and `#[scope(capacity = N)]` fields (features `serde` and `derive`): values read
//! into a scope round-trip through JSON (and postcard for the representations a
//! non-self-describing format can carry), errors read like serde's, and buffered loads
//! after a thread's first take no global-heap allocation.
#![cfg(all(feature = "serde", feature = "derive"))]

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use scope_stack::serde::{DeserializeIn, DeserializeInCapacity};
use scope_stack::{slot_root, LinearAllocator, Place};
use serde::de::{Deserializer, Error};
use serde::Serialize;

fn json(t: &str) -> serde_json::Deserializer<serde_json::de::StrRead<'_>> {
    serde_json::Deserializer::from_str(t)
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Circle {
    r: f32,
}

/// Internally tagged: `{"type": "poly", "name": ..., "points": ...}`.
#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Shape<'s> {
    Empty,
    Circle(Circle),
    Poly {
        name: &'s str,
        points: &'s [[f32; 2]],
    },
    #[serde(rename = "rect", alias = "box")]
    Rectangle {
        w: f32,
        #[serde(default)]
        h: f32,
    },
}

/// Adjacently tagged: `{"t": "Say", "c": "hello"}`.
#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Cmd<'s> {
    Stop,
    Say(&'s str),
    #[serde(rename = "move")]
    Move {
        x: i32,
        y: i32,
    },
    Pair(u8, &'s [u8]),
}

/// Untagged: the first variant that reads the value.
#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(untagged)]
enum Value<'s> {
    Nothing,
    Flag(bool),
    Int(i64),
    Text(&'s str),
    List(&'s [u32]),
    Pair(u8, &'s str),
    Named { name: &'s str, hp: u32 },
    Shape(Shape<'s>),
}

fn round_trip_json<'s, T>(scope: &scope_stack::ScopeStack<'s>, text: &str) -> T
where
    T: DeserializeIn<'s> + Serialize + PartialEq + std::fmt::Debug,
{
    let value: T = scope.deserialize(&mut json(text)).unwrap();
    let again_text = serde_json::to_string(&value).unwrap();
    let again: T = scope.deserialize(&mut json(&again_text)).unwrap();
    assert_eq!(again, value, "{text} -> {again_text}");
    value
}

#[test]
fn internally_tagged_variants_round_trip_in_json() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        let s = &**s;
        assert_eq!(
            round_trip_json::<Shape>(s, r#"{"type": "empty"}"#),
            Shape::Empty
        );
        assert_eq!(
            round_trip_json::<Shape>(s, r#"{"type": "circle", "r": 2}"#),
            Shape::Circle(Circle { r: 2.0 })
        );
        // The tag may come anywhere in the map.
        assert_eq!(
            round_trip_json::<Shape>(
                s,
                r#"{"name": "tri", "points": [[0, 0], [1, 0], [0, 1]], "type": "poly"}"#
            ),
            Shape::Poly {
                name: "tri",
                points: &[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
            }
        );
        assert_eq!(
            round_trip_json::<Shape>(s, r#"{"type": "rect", "w": 3}"#),
            Shape::Rectangle { w: 3.0, h: 0.0 }
        );
        assert_eq!(
            s.deserialize::<Shape, _>(&mut json(r#"{"type": "box", "w": 1, "h": 2}"#))
                .unwrap(),
            Shape::Rectangle { w: 1.0, h: 2.0 }
        );
        let shapes: &[Shape] = s
            .deserialize(&mut json(
                r#"[{"type": "empty"}, {"type": "poly", "name": "a", "points": []}]"#,
            ))
            .unwrap();
        assert_eq!(
            shapes[1],
            Shape::Poly {
                name: "a",
                points: &[]
            }
        );
    });
}

#[test]
fn internally_tagged_errors_read_like_serde() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        let err = |t: &str| {
            s.deserialize::<Shape, _>(&mut json(t))
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"r": 1}"#).contains("missing field `type`"));
        let e = err(r#"{"type": "hexagon"}"#);
        assert!(e.contains("unknown variant `hexagon`"), "{e}");
        assert!(e.contains("`empty`, `circle`, `poly`, `rect`"), "{e}");
        assert!(
            err(r#"{"type": "rect", "type": "rect", "w": 1}"#).contains("duplicate field `type`")
        );
        assert!(err(r#"{"type": "poly", "name": "a"}"#).contains("missing field `points`"));
        assert!(err(r#"{"type": "circle", "r": "big"}"#).contains("invalid type"));
        assert!(err(r#""circle""#).contains("internally tagged enum Shape"));
    });
}

#[test]
fn adjacently_tagged_variants_round_trip_in_json() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        let s = &**s;
        assert_eq!(round_trip_json::<Cmd>(s, r#"{"t": "Stop"}"#), Cmd::Stop);
        assert_eq!(
            round_trip_json::<Cmd>(s, r#"{"t": "Stop", "c": null}"#),
            Cmd::Stop
        );
        assert_eq!(
            round_trip_json::<Cmd>(s, r#"{"t": "Say", "c": "hello"}"#),
            Cmd::Say("hello")
        );
        // The content before the tag is buffered, then read.
        assert_eq!(
            round_trip_json::<Cmd>(s, r#"{"c": {"x": 1, "y": -2}, "t": "move"}"#),
            Cmd::Move { x: 1, y: -2 }
        );
        assert_eq!(
            round_trip_json::<Cmd>(s, r#"{"c": [7, [1, 2, 3]], "t": "Pair"}"#),
            Cmd::Pair(7, &[1, 2, 3])
        );
        // Unknown keys are skipped; the sequence form is read too.
        assert_eq!(
            s.deserialize::<Cmd, _>(&mut json(r#"{"x": 0, "t": "Say", "c": "hi"}"#))
                .unwrap(),
            Cmd::Say("hi")
        );
        assert_eq!(
            s.deserialize::<Cmd, _>(&mut json(r#"["Say", "seq"]"#))
                .unwrap(),
            Cmd::Say("seq")
        );
    });
}

#[test]
fn adjacently_tagged_errors_read_like_serde() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        let err = |t: &str| {
            s.deserialize::<Cmd, _>(&mut json(t))
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"c": "hi"}"#).contains("missing field `t`"));
        assert!(err(r#"{}"#).contains("missing field `t`"));
        assert!(err(r#"{"t": "Say"}"#).contains("missing field `c`"));
        let e = err(r#"{"t": "Shout", "c": "hi"}"#);
        assert!(e.contains("unknown variant `Shout`"), "{e}");
        let e = err(r#"{"c": 1, "t": "Shout"}"#);
        assert!(e.contains("unknown variant `Shout`"), "{e}");
        assert!(err(r#"{"t": "Say", "c": "a", "c": "b"}"#).contains("duplicate field `c`"));
        assert!(err(r#"{"c": "a", "t": "Say", "t": "Say"}"#).contains("duplicate field `t`"));
        assert!(err(r#"{"t": "Say", "c": 5}"#).contains("invalid type"));
        assert!(err(r#""Stop""#).contains("adjacently tagged enum Cmd"));
    });
}

#[test]
fn untagged_variants_are_tried_in_order() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        let s = &**s;
        assert_eq!(round_trip_json::<Value>(s, "null"), Value::Nothing);
        assert_eq!(round_trip_json::<Value>(s, "true"), Value::Flag(true));
        assert_eq!(round_trip_json::<Value>(s, "-3"), Value::Int(-3));
        assert_eq!(
            round_trip_json::<Value>(s, r#""frog""#),
            Value::Text("frog")
        );
        assert_eq!(round_trip_json::<Value>(s, "[1, 2]"), Value::List(&[1, 2]));
        // `[1, "a"]` fails as a list of u32, then reads as a pair.
        assert_eq!(
            round_trip_json::<Value>(s, r#"[1, "a"]"#),
            Value::Pair(1, "a")
        );
        assert_eq!(
            round_trip_json::<Value>(s, r#"{"name": "wolf", "hp": 30}"#),
            Value::Named {
                name: "wolf",
                hp: 30
            }
        );
        // An internally tagged enum inside an untagged one: a buffer inside a buffer.
        assert_eq!(
            round_trip_json::<Value>(s, r#"{"type": "poly", "name": "p", "points": [[1, 2]]}"#),
            Value::Shape(Shape::Poly {
                name: "p",
                points: &[[1.0, 2.0]]
            })
        );
        let values: &[Value] = s
            .deserialize(&mut json(r#"[1, "two", [3], {"type": "empty"}]"#))
            .unwrap();
        assert_eq!(values.len(), 4);
        assert_eq!(values[3], Value::Shape(Shape::Empty));
        for bad in [r#"1.5"#, r#"{"x": 1}"#, r#"[1, 2, 3, "a"]"#] {
            let e = s
                .deserialize::<Value, _>(&mut json(bad))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("data did not match any variant of untagged enum Value"),
                "{bad}: {e}"
            );
        }
        // Bad input is still a syntax error, not a variant mismatch.
        let e = s.deserialize::<Value, _>(&mut json("[1, ")).unwrap_err();
        assert!(e.is_eof(), "{e}");
    });
}

/// `deny_unknown_fields` sees the fields of an internally tagged variant without its tag.
#[derive(DeserializeIn, Debug, PartialEq)]
#[serde(tag = "kind", deny_unknown_fields)]
enum Strict<'s> {
    Door { to: &'s str },
}

#[test]
fn internally_tagged_with_deny_unknown_fields() {
    let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    memory.scope("s", |s| {
        let d: Strict = s
            .deserialize(&mut json(r#"{"to": "hall", "kind": "Door"}"#))
            .unwrap();
        assert_eq!(d, Strict::Door { to: "hall" });
        let e = s
            .deserialize::<Strict, _>(&mut json(r#"{"kind": "Door", "to": "a", "x": 1}"#))
            .unwrap_err();
        assert!(
            e.to_string().contains("unknown field `x`, expected `to`"),
            "{e}"
        );
    });
}

/// A level of every representation, loaded into a slot.
#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Scene<'s> {
    shapes: &'s [Shape<'s>],
    script: &'s [Cmd<'s>],
    values: &'s [Value<'s>],
}
slot_root!(struct SceneRoot => Scene);

const SCENE: &str = r#"{
    "shapes": [{"type": "circle", "r": 1}, {"points": [[0, 0]], "name": "dot", "type": "poly"}],
    "script": [{"t": "Say", "c": "go"}, {"c": {"x": 1, "y": 2}, "t": "move"}, {"t": "Stop"}],
    "values": [7, "seven", {"name": "wolf", "hp": 3}]
}"#;

#[test]
fn buffered_loads_after_the_first_take_no_heap() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("scenes", 1, 64 << 10);
        let load = || {
            let scene = slots
                .load_from::<SceneRoot, _>("scene", &mut json(SCENE))
                .unwrap();
            scene.with(|s| {
                assert_eq!(s.shapes.len(), 2);
                assert_eq!(s.script[1], Cmd::Move { x: 1, y: 2 });
                assert_eq!(
                    s.values[2],
                    Value::Named {
                        name: "wolf",
                        hp: 3
                    }
                );
            });
        };
        load(); // the thread's staging block is reserved here
        assert_eq!(counting_alloc::heap_calls_during(load), 0);
        // A broken scene frees its slot for the next load.
        let err = slots
            .load_from::<SceneRoot, _>("broken", &mut json(r#"{"shapes": [{"r": 1}]}"#))
            .unwrap_err();
        assert!(err.to_string().contains("missing field `type`"), "{err}");
        assert_eq!(slots.loaded(), 0);
        load();
    });
}

/// A container for the capacity tests: the elements of the file and the capacity the
/// reader asked for (the real containers, pools, come from another branch).
#[derive(Debug, PartialEq)]
struct Bag<'s> {
    items: &'s [u32],
    capacity: usize,
}

impl<'s> DeserializeIn<'s> for Bag<'s> {
    fn deserialize_in<'de, P, D>(scope: P, de: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        let items = <&[u32]>::deserialize_in(scope, de)?;
        Ok(Bag {
            items,
            capacity: items.len(),
        })
    }
}

impl<'s> DeserializeInCapacity<'s> for Bag<'s> {
    fn deserialize_in_capacity<'de, P, D>(
        scope: P,
        capacity: usize,
        de: D,
    ) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        let items = <&[u32]>::deserialize_in(scope, de)?;
        if items.len() > capacity {
            return Err(D::Error::invalid_length(
                items.len(),
                &format!("at most {capacity} elements").as_str(),
            ));
        }
        Ok(Bag { items, capacity })
    }
}

const SPARE: usize = 8;

#[derive(DeserializeIn, Debug, PartialEq)]
struct Store<'s> {
    #[scope(capacity = 4)]
    small: Bag<'s>,
    #[scope(capacity = SPARE)]
    spare: Bag<'s>,
    #[scope(capacity = SPARE * 2 + 1)]
    large: Bag<'s>,
    plain: Bag<'s>,
}

#[derive(DeserializeIn, Debug, PartialEq)]
struct Wrapped<'s>(#[scope(capacity = 3)] Bag<'s>);

#[derive(DeserializeIn, Debug, PartialEq)]
enum Holder<'s> {
    One(#[scope(capacity = 5)] Bag<'s>),
    Two {
        #[scope(capacity = 6)]
        bag: Bag<'s>,
    },
}

#[derive(DeserializeIn, Debug, PartialEq)]
#[serde(tag = "kind")]
enum Tagged<'s> {
    Box {
        #[scope(capacity = 2)]
        bag: Bag<'s>,
    },
}

#[test]
fn capacity_fields_get_their_capacity() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        let store: Store = s
            .deserialize(&mut json(
                r#"{"small": [1, 2], "spare": [], "large": [1], "plain": [5, 6, 7]}"#,
            ))
            .unwrap();
        assert_eq!((store.small.items, store.small.capacity), (&[1, 2][..], 4));
        assert_eq!(store.spare.capacity, 8);
        assert_eq!(store.large.capacity, 17);
        assert_eq!(store.plain.capacity, 3);
        // postcard reads the struct as a sequence: the same seeds.
        let lists: [&[u32]; 4] = [&[1, 2], &[9], &[], &[3]];
        let bytes = postcard::to_allocvec(&(lists[0], lists[1], lists[2], lists[3])).unwrap();
        let store: Store = s
            .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap();
        assert_eq!((store.small.capacity, store.spare.items), (4, &[9][..]));

        let w: Wrapped = s.deserialize(&mut json("[1, 2, 3]")).unwrap();
        assert_eq!(w.0.capacity, 3);
        let h: Holder = s.deserialize(&mut json(r#"{"One": [1]}"#)).unwrap();
        assert_eq!(
            h,
            Holder::One(Bag {
                items: &[1],
                capacity: 5
            })
        );
        let h: Holder = s.deserialize(&mut json(r#"{"Two": {"bag": []}}"#)).unwrap();
        assert_eq!(
            h,
            Holder::Two {
                bag: Bag {
                    items: &[],
                    capacity: 6
                }
            }
        );
        let t: Tagged = s
            .deserialize(&mut json(r#"{"kind": "Box", "bag": [1, 2]}"#))
            .unwrap();
        assert_eq!(
            t,
            Tagged::Box {
                bag: Bag {
                    items: &[1, 2],
                    capacity: 2
                }
            }
        );

        // Too many elements, and a missing capacity field.
        let err = |t: &str| {
            s.deserialize::<Store, _>(&mut json(t))
                .unwrap_err()
                .to_string()
        };
        let e = err(r#"{"small": [1, 2, 3, 4, 5], "spare": [], "large": [], "plain": []}"#);
        assert!(
            e.contains("invalid length 5, expected at most 4 elements"),
            "{e}"
        );
        let e = err(r#"{"small": [], "large": [], "plain": []}"#);
        assert!(e.contains("missing field `spare`"), "{e}");
        let e = s
            .deserialize::<Wrapped, _>(&mut json("[1, 2, 3, 4]"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected at most 3 elements"), "{e}");
        let e = s
            .deserialize::<Tagged, _>(&mut json(r#"{"kind": "Box", "bag": [1, 2, 3]}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected at most 2 elements"), "{e}");
    });
}

/// Enums whose variants read nothing into the scope: the derive's helpers must not warn.
#[deny(warnings)]
mod quiet {
    use scope_stack::serde::DeserializeIn;

    #[derive(DeserializeIn, Debug, PartialEq)]
    #[serde(untagged)]
    pub enum Units {
        A,
    }

    #[derive(DeserializeIn, Debug, PartialEq)]
    #[serde(tag = "t")]
    pub enum Tags {
        A,
        B,
    }

    #[derive(DeserializeIn, Debug, PartialEq)]
    #[serde(tag = "t", content = "c")]
    pub enum Adjacent {
        A,
        #[serde(skip)]
        #[allow(dead_code)]
        B(u8),
    }
}

#[test]
fn enums_of_unit_variants() {
    let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    memory.scope("s", |s| {
        let u: quiet::Units = s.deserialize(&mut json("null")).unwrap();
        assert_eq!(u, quiet::Units::A);
        let t: quiet::Tags = s.deserialize(&mut json(r#"{"t": "B"}"#)).unwrap();
        assert_eq!(t, quiet::Tags::B);
        let a: quiet::Adjacent = s.deserialize(&mut json(r#"{"t": "A"}"#)).unwrap();
        assert_eq!(a, quiet::Adjacent::A);
        let e = s
            .deserialize::<quiet::Adjacent, _>(&mut json(r#"{"t": "B", "c": 1}"#))
            .unwrap_err();
        assert!(e.to_string().contains("unknown variant `B`"), "{e}");
    });
}
