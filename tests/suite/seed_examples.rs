//! The examples from the DICE talk, written as tests: `FrogSystem` with a finalized lock,
//! and `File` with its buffer on a scratch scope.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use scope_stack::{LinearAllocator, ScopeStack};

/// Stand-in for a kernel object (the talk's `CriticalSection`): counts live instances.
static LIVE_LOCKS: AtomicUsize = AtomicUsize::new(0);

struct CriticalSection(Mutex<()>);

impl CriticalSection {
    fn new() -> CriticalSection {
        LIVE_LOCKS.fetch_add(1, Ordering::SeqCst);
        CriticalSection(Mutex::new(()))
    }
}

impl Drop for CriticalSection {
    fn drop(&mut self) {
        LIVE_LOCKS.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy, Default)]
struct FrogInfo {
    position: [f32; 3],
    hops: u32,
}

/// Plain data that points at scope memory; the lock is the only thing with cleanup.
struct FrogSystem<'s> {
    max_frogs: usize,
    frog_pool: &'s mut [FrogInfo],
    lock: &'s CriticalSection,
}

impl<'s> FrogSystem<'s> {
    /// The talk's `FrogSystem_init`: grab all memory up front from the scope.
    fn init(scope: &ScopeStack<'s>, max_frogs: usize) -> &'s mut FrogSystem<'s> {
        scope.new_pod(FrogSystem {
            max_frogs,
            frog_pool: scope.alloc_slice_fill_with(max_frogs, |_| FrogInfo::default()),
            lock: scope.new_object(CriticalSection::new()),
        })
    }

    fn update(&mut self) {
        let _guard = self.lock.0.lock().unwrap();
        for (i, frog) in self.frog_pool.iter_mut().enumerate() {
            frog.position[0] += i as f32;
            frog.hops += 1;
        }
    }
}

#[test]
fn frog_system_needs_no_cleanup_code() {
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("systems", |systems| {
        systems.scope("level", |level| {
            let frogs = FrogSystem::init(level, 100);
            frogs.update();
            frogs.update();
            assert_eq!(frogs.frog_pool[99].hops, 2);
            assert_eq!(frogs.frog_pool[3].position[0], 6.0);
            assert_eq!(frogs.max_frogs, 100);
            assert_eq!(LIVE_LOCKS.load(Ordering::SeqCst), 1);
            // Only the lock has a finalizer: the frogs and the system are plain data.
            assert_eq!(level.finalizer_count(), 1);
        });
        // Unwinding the level released the critical section; nobody wrote a destructor.
        assert_eq!(LIVE_LOCKS.load(Ordering::SeqCst), 0);
        // Reconfigure after rewind: a second level with a different pool size.
        systems.scope("level", |level| {
            let frogs = FrogSystem::init(level, 10);
            frogs.update();
            assert_eq!(frogs.frog_pool.len(), 10);
            assert_eq!(LIVE_LOCKS.load(Ordering::SeqCst), 1);
        });
    });
    assert_eq!(LIVE_LOCKS.load(Ordering::SeqCst), 0);
}

/// The talk's `File`: an OS handle that must be closed, and a buffer from the scope it
/// is created in. It does not care about lifetime: it and its buffer live exactly as long
/// as that scope.
struct File<'s> {
    buffer: &'s mut [u8],
    handle: FileHandle,
}

/// The part with cleanup: closing records itself in a log.
struct FileHandle {
    name_len: usize,
    closed: &'static Mutex<Vec<usize>>,
}

impl Drop for FileHandle {
    fn drop(&mut self) {
        self.closed.lock().unwrap().push(self.name_len);
    }
}

impl<'s> File<'s> {
    fn open(
        scope: &ScopeStack<'s>,
        filename: &str,
        closed: &'static Mutex<Vec<usize>>,
    ) -> File<'s> {
        File {
            buffer: scope.alloc_slice_fill_with(8192, |_| 0u8),
            handle: FileHandle {
                name_len: filename.len(),
                closed,
            },
        }
    }

    fn read(&mut self) -> usize {
        self.buffer[..4].copy_from_slice(b"frog");
        4
    }
}

/// The talk's `myFunction`: the file name is formatted on the scratch scope, the `File`
/// lives there too, and nothing needs cleaning up by hand.
fn my_function(
    scratch_block: &mut LinearAllocator,
    f: &str,
    closed: &'static Mutex<Vec<usize>>,
) -> usize {
    let closed_before = closed.lock().unwrap().len();
    scratch_block.scope("scratch", |scratch| {
        let filename = scratch.alloc_fmt(format_args!("foo/bar/{f}"));
        // `File<'s>` borrows scratch memory and needs drop, so `new_object` (which wants
        // `'static`) refuses it. SAFETY: its destructor only closes the handle; it never
        // follows the borrowed buffer, so it cannot see destroyed data.
        let file = unsafe { scratch.new_object_unchecked(File::open(scratch, filename, closed)) };
        let n = file.read();
        assert_eq!(&file.buffer[..4], b"frog");
        assert_eq!(file.handle.name_len, filename.len());
        assert_eq!(closed.lock().unwrap().len(), closed_before, "still open");
        n
    })
}

#[test]
fn file_on_a_scratch_scope_cleans_up_after_itself() {
    static CLOSED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    let mut scratch = LinearAllocator::with_capacity(64 * 1024).unwrap();
    let n = my_function(&mut scratch, "level1.dat", &CLOSED);
    assert_eq!(n, 4);
    // Closed exactly once, when the scratch scope unwound.
    assert_eq!(*CLOSED.lock().unwrap(), vec!["foo/bar/level1.dat".len()]);
    assert_eq!(scratch.used(), 0, "the scratch pad rewound");
    assert!(scratch.high_water_mark() >= 8192);
    // Same pointers every time: a second call lays out exactly the same memory.
    let hw = scratch.high_water_mark();
    my_function(&mut scratch, "level1.dat", &CLOSED);
    assert_eq!(scratch.high_water_mark(), hw);
    assert_eq!(CLOSED.lock().unwrap().len(), 2);
}
