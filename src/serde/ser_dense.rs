//! `Serialize` for [`DensePool`]: its live values, in iteration order, as a sequence
//! (feature `serde`), so an editor can save a level it loaded.
//!
//! Invariant: the sequence is exactly [`DensePool::values`], with its length up front.
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::dense::DensePool;

/// The live values, in the order of [`DensePool::values`] (one packed slice), as a
/// sequence: a JSON array, or a length and the values in a binary format. Handles are
/// not written (a loaded level gets new ones).
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let shots = level.new_dense_pool::<[f32; 2]>(8);
///     let first = shots.insert([1.0, 2.0]).unwrap();
///     shots.insert([3.0, 4.0]).unwrap();
///     shots.insert([5.0, 6.0]).unwrap();
///     shots.remove(first); // the last shot takes its place
///     assert_eq!(serde_json::to_string(&*shots).unwrap(), "[[5.0,6.0],[3.0,4.0]]");
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
impl<T: Serialize> Serialize for DensePool<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for value in self.values() {
            seq.serialize_element(value)?;
        }
        seq.end()
    }
}
