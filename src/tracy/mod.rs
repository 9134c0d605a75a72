//! Seeing the block in the Tracy profiler (feature `tracy`).
//!
//! With the feature on, the crate reports its memory to the
//! [Tracy](https://github.com/wolfpld/tracy) client as the program runs, so Tracy's
//! memory view shows the block, not an empty heap. Nothing needs to be called: enable the
//! feature, run the program, and connect the profiler.
//!
//! | in the program | in Tracy |
//! |---|---|
//! | a scope `"systems"`, a child `"level"` in it | memory pools `systems` and `systems/level` |
//! | a slot of the slot set `"levels"` loaded as `"forest"` (as `""`) | pool `levels/forest` (`levels[1]`) |
//! | a `Pool<Enemy>` or `DensePool<Shot>` carved in `systems/level` | pool `systems/level/Pool<Enemy>` |
//! | a [`Heap`](crate::Heap) carved in `systems/level` | pool `systems/level/Heap` |
//! | a level read in place into slot `levels/forest` (feature `rkyv`) | pool `levels/forest/Archive Level`: one allocation, the whole archive (also in the slot's pool, as its first) |
//! | an allocation, free, grow or shrink through `&Heap`'s `Allocator` | an allocation, a free, or a free and an allocation in the heap's pool |
//! | an allocation in a scope (any surface, any thread) | an allocation in the scope's pool, as it is placed |
//! | `Allocator::deallocate`, `grow`, `shrink` on a scope | a free, or a free and an allocation |
//! | a scope closing, a slot unloading, a container dropped (a heap: its scope closing or its slot unloading; an archive: its slot unloading) | one discard of its pool |
//! | a pool `insert` / `remove` | an allocation / a free in the pool's pool |
//! | a scope closing; a slot loaded or unloaded | plots `<top> used` and `<top> high-water` (`<top>`: the top-level scope or the slot) |
//! | a pool `insert` / `remove` | plot `<pool> len` |
//! | an out-of-memory or budget error (returned or panicking) | a message: the error and the text memory map |
//!
//! Names are as in the memory map (a slot loaded with `load_concurrent` is named once:
//! `levels/canyon/Pool<Enemy>`). Two pools live at once with one name (the same
//! scope name on two threads' blocks, two `Pool<Enemy>` in one scope) get `name#2`,
//! `name#3`, ..., so a discard never ends another pool's allocations. Each distinct name
//! is copied once into memory that lives until the program ends (Tracy keeps the
//! pointer, and a name in a slot's memory would be gone after the unload); nothing
//! else touches the heap per event. The out-of-memory message is formatted on the heap
//! on that failure path.
//!
//! **No profiler, no cost.** The first block starts a thread that asks the Tracy
//! client every 10 ms whether a profiler is connected. A scope, slot or container that
//! opens while none is reads that (one relaxed load) and stays hidden until it ends: no
//! name is made, no event sent, nothing touches the heap. One that opens while a
//! profiler is connected is named then, by its full path, and shown from its first
//! allocation for as long as that connection lasts; what was open before the profiler
//! connected stays hidden until it ends. So a profiler that connects mid-run never sees
//! a free of an allocation it was not shown, nor a discard of a pool it was not shown
//! an allocation of (a pool that showed none gets no discard: Tracy's server mis-times
//! the memory events that follow a discard of a pool it does not know). A profiler that
//! disconnects and connects again within one 10 ms poll is taken for the same
//! connection.
//!
//! **The name table is bounded.** After 1,024 names, a name the table has never seen
//! is shown under its base name, each run of digits written `*`: scopes or slots named
//! `frame 1234` share `.../frame *`. At 1,280 names (base names and `#2` variants
//! included) the table is full: a pool whose name has no free entry is not shown, and
//! the profiler gets one message saying so. Each name costs about 150 bytes and five
//! copies of its text (cut at 200 bytes): at most about 1.5 MiB in all.
//!
//! Plots change when their figure can have changed at a scope boundary, not per
//! allocation, so a frame that opens a `"frame"` scope under `"level"` plots the level's
//! use at the frame's end: put Tracy's frame mark (`tracy_client::frame_mark()`) after
//! the frame scope closes and the plots line up with the frames.
//!
//! What is not shown: a `Store`'s objects (its memory shows as the scope allocation it
//! is), the room a concurrent scope's threads claim ahead in chunks (only what is
//! placed in it), and room given back when a constructor passed to a `_with` method
//! panics (it shows until its scope ends).
//!
//! The Tracy client is built with `enable` and `ondemand`: it collects nothing until a
//! profiler connects, so a program with no profiler keeps no growing queue and exits
//! without waiting. The client is C++ (building it takes about 31 s) and needs `std`,
//! so the feature implies `std` and has no `no_std` form. Miri and loom runs leave it
//! off.
//!
//! ```
//! use scope_stack::LinearAllocator;
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("systems", |systems| {
//!     let enemies = systems.new_pool::<[f32; 4]>(64); // pool "systems/Pool<[f32; 4]>"
//!     for _frame in 0..3 {
//!         systems.scope("frame", |frame| {
//!             // allocations in pool "systems/frame", one discard when it closes
//!             frame.alloc_slice_fill_copy(256, 0u8);
//!             let _e = enemies.insert([0.0; 4]).unwrap(); // alloc + free in the pool's
//!         });
//!         // with tracy-client as a dependency: tracy_client::frame_mark();
//!     }
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```

#[cfg(test)]
mod tests;
