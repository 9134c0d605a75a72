//! `Serialize` for [`Pool`]: its pooled values, in slot order, as a sequence (feature
//! `serde`), so an editor can save a level it loaded.
//!
//! Invariant: the sequence holds exactly the values that [`Pool::values`] visits, and
//! its length, given up front (binary formats write it first), is the number written;
//! a pool that another thread changes meanwhile gives an error, never a sequence whose
//! length and contents disagree.
use serde::ser::{Error, Serialize, SerializeSeq, Serializer};

use crate::pool::Pool;

/// The pooled values, in slot order (as [`Pool::values`]), as a sequence: a JSON array,
/// or a length and the values in a binary format. Values owned by a
/// [`PoolBox`](crate::PoolBox) are not pooled, so not written; handles are not written
/// either (a loaded level gets new ones).
///
/// The pool is walked twice: once to count (binary formats write the length first),
/// once to write. If another thread inserts or removes values in between, so that the
/// walks disagree, serializing fails with an error; serialize a pool that no other
/// thread changes meanwhile.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
/// memory.scope("level", |level| {
///     let enemies = level.new_pool_pod::<(&str, u32)>(8);
///     let wolf = enemies.insert(("wolf", 30)).unwrap().into_handle();
///     enemies.insert(("bear", 80)).unwrap().into_handle();
///     enemies.remove(wolf);
///     let _boxed = enemies.insert(("ghost", 1)).unwrap(); // a box: not pooled, not written
///     assert_eq!(serde_json::to_string(&*enemies).unwrap(), r#"[["bear",80]]"#);
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
impl<T: Serialize> Serialize for Pool<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = self.values().count();
        let mut seq = serializer.serialize_seq(Some(len))?;
        let mut written = 0;
        for value in self.values() {
            if written == len {
                return Err(S::Error::custom(changed()));
            }
            seq.serialize_element(value)?;
            written += 1;
        }
        if written != len {
            return Err(S::Error::custom(changed()));
        }
        seq.end()
    }
}

/// The error text of a pool that changed while it was written.
fn changed() -> &'static str {
    "the pool changed while it was serialized (another thread inserted or removed values)"
}
