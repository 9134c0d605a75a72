//! Lean at start-up: the plugin reserves what its settings ask for and `ScratchStats`
//! counts every byte of it, per pool and in all; a plugin with warming off reserves
//! nothing; a warmed serde staging block makes a level-loading thread's first staged
//! load reserve nothing.

use bevy_app::{App, TaskPoolPlugin};
use bevy_tasks::{AsyncComputeTaskPool, ComputeTaskPool, IoTaskPool};
use scope_stack_bevy::{ScopeStackPlugin, ScratchStats};

/// Runs `f` and returns the heap allocations it made on this thread (allocation-counter
/// installs its counting global allocator in this test binary and counts per thread).
#[cfg(feature = "serde")]
fn allocations_in<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (info.count_total, out.expect("ran"))
}

fn started(plugin: ScopeStackPlugin) -> ScratchStats {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), plugin));
    app.finish();
    app.update();
    *app.world().resource::<ScratchStats>()
}

fn pool_threads() -> [usize; 3] {
    [
        ComputeTaskPool::get().thread_num(),
        AsyncComputeTaskPool::get().thread_num(),
        IoTaskPool::get().thread_num(),
    ]
}

#[test]
fn a_plugin_with_warming_off_reserves_no_scratch_at_start_up() {
    let stats = started(ScopeStackPlugin::lean());
    assert_eq!(stats.warmed_threads, 0);
    assert_eq!(stats.threads, 0, "no pad reserved");
    assert_eq!(stats.bytes_reserved, 0, "{stats:?}");
    assert_eq!(stats.warmed.total().bytes(), 0);
}

#[test]
fn scratch_stats_count_every_byte_the_warm_up_reserved_per_pool_and_in_all() {
    let pad = 64 << 10;
    let arena = 32 << 10;
    let stats = started(
        ScopeStackPlugin::with_scratch_capacity(pad)
            .with_thread_scratch(arena)
            .with_serde_staging(),
    );
    let [compute, async_compute, io] = pool_threads();
    let w = stats.warmed;
    assert_eq!(
        [
            w.main.threads,
            w.compute.threads,
            w.async_compute.threads,
            w.io.threads
        ],
        [1, compute, async_compute, io]
    );
    for pool in [w.main, w.compute, w.async_compute, w.io] {
        assert_eq!(pool.pad_bytes, pool.threads * pad);
        assert_eq!(pool.thread_scratch_bytes, pool.threads * 2 * arena);
    }
    // Staging only where levels load, and only with the `serde` feature.
    let staging = if cfg!(feature = "serde") { 1 << 20 } else { 0 };
    assert_eq!(w.async_compute.staging_bytes, async_compute * staging);
    assert_eq!(
        w.main.staging_bytes + w.compute.staging_bytes + w.io.staging_bytes,
        0
    );
    let total = w.total();
    assert_eq!(stats.warmed_threads, total.threads);
    assert_eq!(stats.pad_bytes, stats.threads * pad);
    assert_eq!(
        stats.pad_bytes, total.pad_bytes,
        "every pad is a warmed one"
    );
    assert_eq!(stats.thread_scratch_bytes, total.thread_scratch_bytes);
    assert_eq!(stats.staging_bytes, total.staging_bytes);
    assert_eq!(stats.bytes_reserved, total.bytes());
}

#[test]
fn the_default_plugin_warms_pads_only() {
    let stats = started(ScopeStackPlugin::with_scratch_capacity(16 << 10));
    assert!(stats.warmed_threads >= 2);
    assert_eq!((stats.thread_scratch_bytes, stats.staging_bytes), (0, 0));
    assert_eq!(stats.bytes_reserved, stats.pad_bytes);
}

/// A staged load: a list of strings of unknown length, as a JSON level has.
#[cfg(feature = "serde")]
fn staged_load() -> usize {
    let mut memory = scope_stack::LinearAllocator::with_capacity(4096).unwrap();
    let (allocations, len) = allocations_in(|| {
        memory.scope("level", |s| {
            let mut de = serde_json::Deserializer::from_slice(br#"["oak", "elm", "fir"]"#);
            s.deserialize::<&[&str], _>(&mut de).unwrap().len()
        })
    });
    assert_eq!(len, 3);
    allocations as usize
}

#[cfg(feature = "serde")]
#[test]
fn a_warmed_loader_thread_stages_its_first_level_without_reserving() {
    // A thread that was not warmed reserves its staging block on its first load.
    let cold = std::thread::spawn(staged_load).join().unwrap();
    assert!(cold > 0, "a cold thread reserves its staging block");
    let _ = started(ScopeStackPlugin::lean().with_serde_staging());
    let warm = bevy_tasks::block_on(AsyncComputeTaskPool::get().spawn(async { staged_load() }));
    assert_eq!(warm, 0, "the warm-up reserved the staging block");
}
