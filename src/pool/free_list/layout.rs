//! How a pool's slots split into shards: pure arithmetic, shared by the pool, its
//! report link and `Pool::memory_needed`.
//!
//! Invariant: shard `k` holds the slots `k * len .. min((k + 1) * len, capacity)`; every
//! slot is in exactly one shard, and every shard but the last has `len` slots.

/// How `capacity` slots split into shards: `shards` ranges of `len` slots each, the
/// last one possibly shorter. Pure arithmetic, shared by the pool, its report link and
/// `memory_needed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShardLayout {
    /// Slots per shard (the last shard may have fewer).
    pub(crate) len: u32,
    /// Number of shards: `ceil(capacity / len)`.
    pub(crate) shards: u32,
}

impl ShardLayout {
    /// Splits `capacity` (at least 1) slots into at most `wanted` (at least 1) shards of
    /// equal length, the last one possibly shorter. The result can have fewer shards
    /// than asked: 10 slots in 6 shards become 5 shards of 2.
    pub(crate) fn new(capacity: u32, wanted: u32) -> ShardLayout {
        debug_assert!(capacity >= 1 && wanted >= 1);
        let wanted = wanted.min(capacity);
        let len = capacity.div_ceil(wanted);
        ShardLayout {
            len,
            shards: capacity.div_ceil(len),
        }
    }

    /// The slots of shard `shard`: `start..end`.
    #[inline]
    pub(crate) fn range(self, capacity: u32, shard: u32) -> (u32, u32) {
        let start = shard * self.len;
        (start, (start + self.len).min(capacity))
    }
}
