//! Panics point at the caller's line, not at a line inside the crate: every public
//! method that can panic is `#[track_caller]`. Each case catches the panic and checks
//! that the location the panic hook saw is this file.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

use scope_stack::LinearAllocator;

static WHERE: Mutex<Option<String>> = Mutex::new(None);

/// A named call that must panic.
type Case<'a> = (&'static str, Box<dyn Fn() + 'a>);

/// Runs `f`, which must panic, and returns the file the panic was located in.
fn panic_file(f: impl FnOnce()) -> String {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        *WHERE.lock().unwrap() = info.location().map(|l| l.file().to_string());
    }));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(previous);
    assert!(result.is_err(), "expected a panic");
    WHERE
        .lock()
        .unwrap()
        .take()
        .expect("the hook saw a location")
}

#[test]
fn placement_panics_point_at_the_caller() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut memory = LinearAllocator::with_capacity(256).unwrap();
    memory.scope("tiny", |tiny| {
        let cases: Vec<Case<'_>> = vec![
            (
                "new_pod",
                Box::new(|| {
                    let _ = tiny.new_pod([0u8; 4096]);
                }),
            ),
            (
                "new_object",
                Box::new(|| {
                    let _ = tiny.new_object([0u8; 64].map(|_| String::new()));
                }),
            ),
            (
                "new_pod_with",
                Box::new(|| {
                    let _ = tiny.new_pod_with(|| [0u8; 4096]);
                }),
            ),
            (
                "alloc_raw",
                Box::new(|| {
                    let _ = tiny.alloc_raw(4096, 8);
                }),
            ),
            (
                "alloc_slice_copy",
                Box::new(|| {
                    let _ = tiny.alloc_slice_copy(&[0u8; 4096]);
                }),
            ),
            (
                "alloc_slice_fill_with",
                Box::new(|| {
                    let _ = tiny.alloc_slice_fill_with(4096, |_| 0u8);
                }),
            ),
            (
                "alloc_iter",
                Box::new(|| {
                    let _ = tiny.alloc_iter(0..4096u32);
                }),
            ),
            (
                "alloc_str",
                Box::new(|| {
                    let _ = tiny.alloc_str(&"x".repeat(4096));
                }),
            ),
            (
                "alloc_fmt",
                Box::new(|| {
                    let _ = tiny.alloc_fmt(format_args!("{:4096}", 1));
                }),
            ),
            (
                "new_pool",
                Box::new(|| {
                    let _ = tiny.new_pool::<u64>(1000);
                }),
            ),
            (
                "new_dense_pool",
                Box::new(|| {
                    let _ = tiny.new_dense_pool::<u64>(1000);
                }),
            ),
            (
                "new_store",
                Box::new(|| {
                    let _ = tiny.new_store::<u64>(1000, 1000);
                }),
            ),
        ];
        for (name, case) in cases {
            assert_eq!(panic_file(case), file!(), "{name}");
        }
    });
}

#[test]
fn concurrent_scope_and_stale_handle_panics_point_at_the_caller() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent_with_budget("jobs", 4096, |jobs| {
            let big = [0u8; 8192];
            assert_eq!(
                panic_file(|| {
                    let _ = jobs.new_pod(big);
                }),
                file!()
            );
            assert_eq!(
                panic_file(|| {
                    let _ = jobs.alloc_slice_copy(&big);
                }),
                file!()
            );
            let text = "y".repeat(8192);
            assert_eq!(
                panic_file(|| {
                    let _ = jobs.local().alloc_str(&text);
                }),
                file!()
            );
        });
        let dense = level.new_dense_pool::<u32>(4);
        let h = dense.insert(1).unwrap();
        dense.remove(h);
        assert_eq!(
            panic_file(|| {
                let _ = dense[h];
            }),
            file!()
        );
    });
}

#[test]
fn scratch_not_innermost_points_at_the_caller() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    scope_stack::scratch(|outer| {
        scope_stack::scratch(|_inner| {
            // The outer scope may not allocate while the inner one lives.
            assert_eq!(
                panic_file(|| {
                    let _ = outer.new_pod(1u32);
                }),
                file!()
            );
        });
    });
}

/// The panic hook is process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());
