//! Lists whose length the format gives (feature `serde`): the slice is carved at once
//! and filled, for elements that place nothing (float pairs) and for elements that do
//! (string slices). A format whose length is wrong either way still loads what the
//! file holds, and a length that claims more than the scope can hold is an error that
//! names the scope, never an abort (issue 47).
#![cfg(all(feature = "serde", feature = "derive"))]

use scope_stack::serde::DeserializeIn;
use scope_stack::LinearAllocator;
use serde::de::value::{Error as ValueError, SeqDeserializer};
use serde::de::IntoDeserializer;

/// Yields `items` but tells the format's consumer that `claimed` are left.
struct Lying<I> {
    items: I,
    claimed: usize,
}

impl<I: Iterator> Iterator for Lying<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let v = self.items.next()?;
        self.claimed = self.claimed.saturating_sub(1);
        Some(v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        // serde's `SeqDeserializer` passes a hint on only when the two bounds agree.
        (self.claimed, Some(self.claimed))
    }
}

/// A sequence of `items` whose format claims `claimed` elements.
fn lying<T, I>(items: I, claimed: usize) -> SeqDeserializer<Lying<I::IntoIter>, ValueError>
where
    I: IntoIterator<Item = T>,
    T: for<'de> IntoDeserializer<'de, ValueError>,
{
    SeqDeserializer::new(Lying {
        items: items.into_iter(),
        claimed,
    })
}

#[test]
fn a_true_length_carves_the_slice_once() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let before = level.allocator().used();
        let xs: &[u32] = level.deserialize(lying(0..100u32, 100)).unwrap();
        assert_eq!(xs, (0..100).collect::<Vec<_>>());
        // Exactly the slice: nothing staged, no room left over.
        assert_eq!(level.allocator().used() - before, 400);
    });
}

#[test]
fn a_length_that_says_too_few_or_too_many_still_loads_the_file() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        for claimed in [1, 5, 9, 10, 11, 50] {
            let xs: &[u32] = level.deserialize(lying(0..10u32, claimed)).unwrap();
            assert_eq!(xs, (0..10).collect::<Vec<_>>(), "claimed {claimed}");
        }
        // Elements that place something (each a string slice in the scope).
        let words = ["frog", "toad", "newt"];
        for claimed in [1, 3, 7] {
            let ws: &[&str] = level.deserialize(lying(words, claimed)).unwrap();
            assert_eq!(ws, words, "claimed {claimed}");
        }
    });
}

#[test]
fn a_length_larger_than_the_scope_is_an_error_that_names_the_scope() {
    let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    memory.scope("level", |level| {
        let r: Result<&[u64], _> = level.deserialize(lying(0..3u64, usize::MAX / 16));
        let e = r.unwrap_err().to_string();
        assert!(e.contains("level"), "{e}");
        // The scope is unharmed: the same data with a true length loads.
        let xs: &[u64] = level.deserialize(lying(0..3u64, 3)).unwrap();
        assert_eq!(xs, [0, 1, 2]);
    });
}

/// The canada shape: lists of float pairs inside a list, each length given.
#[derive(DeserializeIn, Debug, PartialEq)]
struct Rings<'s> {
    rings: &'s [&'s [(f32, f32)]],
}

#[test]
fn nested_lists_of_float_pairs_from_postcard_round_trip() {
    #[derive(serde::Serialize)]
    struct HeapRings {
        rings: Vec<Vec<(f32, f32)>>,
    }
    let heap = HeapRings {
        rings: (0..20)
            .map(|r| (0..r * 7).map(|i| (i as f32, -(r as f32))).collect())
            .collect(),
    };
    let bytes = postcard::to_allocvec(&heap).unwrap();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let before = level.allocator().used();
        let rings: Rings<'_> = level
            .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap();
        assert_eq!(rings.rings.len(), heap.rings.len());
        for (a, b) in rings.rings.iter().zip(&heap.rings) {
            assert_eq!(*a, &b[..]);
        }
        // The data's own size, give or take alignment: no staging copies left behind.
        let points: usize = heap.rings.iter().map(Vec::len).sum();
        let data = points * 8 + heap.rings.len() * 16;
        let used = level.allocator().used() - before;
        assert!(used >= data && used <= data + 64, "{used} bytes for {data}");
    });
}
