//! One placement API: every placement method, with its `try_` form, on every surface
//! (`&ScopeStack`, `&Scope`, `LocalScope`, `&ConcurrentScope`; a task slot's `TaskScope`
//! has only the trait) and through the `Place`
//! trait. A method added to one surface and not the others fails here twice: the
//! source scan below compares the method lists, and the calls stop compiling once a
//! name is added to the list.

use std::collections::BTreeSet;

use scope_stack::{
    AllocErrorKind, ConcurrentScope, LinearAllocator, LocalScope, Place, ScopeStack,
};

/// Every placement method (the panicking form; each has a `try_` twin).
const METHODS: &[&str] = &[
    "new_pod",
    "new_object",
    "new_pod_with",
    "new_object_with",
    "alloc_uninit",
    "alloc_uninit_slice",
    "alloc_layout",
    "alloc_raw",
    "alloc_slice_copy",
    "alloc_slice_clone",
    "alloc_slice_fill_with",
    "alloc_slice_fill_copy",
    "alloc_slice_fill_clone",
    "alloc_slice_fill_default",
    "alloc_iter",
    "alloc_iter_pod",
    "alloc_iter_exact",
    "alloc_str",
    "alloc_fmt",
];

/// The builders that grow in place (`ScopeVec`, `ScopeString`), with their `try_` forms
/// where there is one. On a `ScopeStack` they borrow the scope mutably; elsewhere (and
/// through `Place`) they check the region's top at run time.
const BUILDERS: &[&str] = &[
    "new_vec",
    "vec_with_capacity",
    "try_vec_with_capacity",
    "new_string",
    "string_with_capacity",
    "try_string_with_capacity",
];

/// Public methods of a surface that are not placement methods, or exist on one surface
/// for a reason the docs give.
const NOT_PLACEMENT: &[&str] = &[
    // `unsafe` escape hatch of a plain scope (its drop contract names scope order).
    "new_object_unchecked",
    "try_new_object_unchecked",
    // Introspection.
    "name",
    "remaining",
];

/// The trait's hidden hooks (how a handle lends the crate-private core).
const HIDDEN_HOOKS: &[&str] = &["handle", "as_core"];

/// The `pub fn` names in `files` (inherent methods) or the `fn` names of a trait.
fn methods_in(files: &[&str], trait_fns: bool) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for file in files {
        let path = format!("{}/{}", env!("CARGO_MANIFEST_DIR"), file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for line in text.lines() {
            let line = line.trim_start();
            let rest = if trait_fns {
                line.strip_prefix("fn ")
            } else {
                line.strip_prefix("pub fn ")
                    .or_else(|| line.strip_prefix("pub unsafe fn "))
            };
            if let Some(rest) = rest {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !NOT_PLACEMENT.contains(&name.as_str()) && !HIDDEN_HOOKS.contains(&name.as_str())
                {
                    names.insert(name);
                }
            }
        }
    }
    names
}

fn expected() -> BTreeSet<String> {
    METHODS
        .iter()
        .flat_map(|m| [m.to_string(), format!("try_{m}")])
        .chain(BUILDERS.iter().map(|m| m.to_string()))
        .collect()
}

#[test]
#[cfg_attr(miri, ignore = "reads the source files; Miri isolates the file system")]
fn every_surface_has_the_whole_method_set() {
    let want = expected();
    let surfaces = [
        (
            "ScopeStack",
            methods_in(
                &[
                    "src/scope/values.rs",
                    "src/scope/slices.rs",
                    "src/scope/text.rs",
                    "src/scope/raw.rs",
                    "src/scope/builders/surface.rs",
                ],
                false,
            ),
        ),
        (
            "LocalScope",
            methods_in(
                // `concurrent/builders.rs` holds the builders of both concurrent
                // surfaces; `builders_on_every_surface` below calls each on each.
                &[
                    "src/concurrent/local.rs",
                    "src/concurrent/slices.rs",
                    "src/concurrent/builders.rs",
                ],
                false,
            ),
        ),
        (
            "ConcurrentScope",
            methods_in(
                &["src/concurrent/forward.rs", "src/concurrent/builders.rs"],
                false,
            ),
        ),
        ("Place", methods_in(&["src/scope/place/api.rs"], true)),
    ];
    for (surface, got) in &surfaces {
        let missing: Vec<_> = want.difference(got).collect();
        let extra: Vec<_> = got.difference(&want).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{surface}: missing {missing:?}, not on the other surfaces {extra:?} \
             (add it everywhere, and to METHODS here)"
        );
    }
}

/// Calls every method and its `try_` form through a handle expression `$s`, checking
/// each result, with `$big` a length that cannot fit.
macro_rules! exercise {
    ($s:expr) => {{
        let s = $s;
        let big = 1usize << 40;
        assert_eq!(*s.new_pod(7u32), 7);
        assert_eq!(
            s.try_new_pod([0u8; 96 << 10]).unwrap_err().value.len(),
            96 << 10
        );
        assert_eq!(s.new_object(String::from("a")), "a");
        assert_eq!(s.try_new_object(vec![1u8]).unwrap(), &[1]);
        assert_eq!(*s.new_pod_with(|| 3u64), 3);
        assert!(s.try_new_pod_with(|| [0u8; 96 << 10]).is_err());
        assert_eq!(s.new_object_with(|| String::from("b")), "b");
        assert_eq!(s.try_new_object_with(|| vec![2u8]).unwrap(), &[2]);
        assert_eq!(*s.alloc_uninit::<u16>().write(5), 5);
        assert!(s.try_alloc_uninit::<[u8; 96 << 10]>().is_err());
        assert_eq!(s.alloc_uninit_slice::<u32>(3).len(), 3);
        assert!(s.try_alloc_uninit_slice::<u64>(big).is_err());
        let l = std::alloc::Layout::new::<[u64; 2]>();
        assert_eq!(s.alloc_layout(l).as_ptr() as usize % 8, 0);
        assert!(s
            .try_alloc_layout(std::alloc::Layout::new::<[u8; 96 << 10]>())
            .is_err());
        assert_eq!(s.alloc_raw(3, 32).as_ptr() as usize % 32, 0);
        assert_eq!(
            s.try_alloc_raw(8, 3).unwrap_err().kind(),
            AllocErrorKind::InvalidAlignment
        );
        assert_eq!(s.alloc_slice_copy(&[1, 2]), &[1, 2]);
        assert!(s.try_alloc_slice_copy(&vec![0u8; 96 << 10]).is_err());
        assert_eq!(s.alloc_slice_clone(&[String::from("c")])[0], "c");
        assert!(s.try_alloc_slice_clone(&vec![0u64; 1 << 18]).is_err());
        assert_eq!(s.alloc_slice_fill_with(3, |i| i * 2), &[0, 2, 4]);
        assert!(s.try_alloc_slice_fill_with(big, |i| i).is_err());
        assert_eq!(s.alloc_slice_fill_copy(2, 9u8), &[9, 9]);
        assert_eq!(s.try_alloc_slice_fill_copy(big, 4u64).unwrap_err().value, 4);
        assert_eq!(s.alloc_slice_fill_clone(2, &String::from("d"))[1], "d");
        assert!(s.try_alloc_slice_fill_clone(big, &0u64).is_err());
        assert_eq!(s.alloc_slice_fill_default::<u8>(2), &[0, 0]);
        assert!(s.try_alloc_slice_fill_default::<u64>(big).is_err());
        assert_eq!(s.alloc_iter((0..6).filter(|n| n % 2 == 0)), &[0, 2, 4]);
        let word = s.alloc_str("frog");
        let refs: &[&str] = s.alloc_iter_pod([&*word, &*word]);
        assert_eq!(refs, &["frog", "frog"]);
        assert_eq!(s.alloc_iter_exact([1, 2].map(|x| x + 1)), &[2, 3]);
        assert!(s.try_alloc_iter_exact(vec![0u64; 1 << 18]).is_err());
        assert_eq!(s.alloc_str("e"), "e");
        assert!(s.try_alloc_str(&"x".repeat(96 << 10)).is_err());
        assert_eq!(s.alloc_fmt(format_args!("{}-{}", 1, 2)), "1-2");
        assert!(s
            .try_alloc_fmt(format_args!("{}", "x".repeat(96 << 10)))
            .is_err());
        // Last: on a concurrent scope, room claimed from the shared region while a
        // collection grows stays taken until the scope closes.
        assert!(s
            .try_alloc_iter_pod(std::iter::repeat(&*word).take(1 << 20))
            .is_err());
        assert!(s.try_alloc_iter(0..(1u64 << 20)).is_err());
    }};
}

/// The same calls through the trait, in a helper that takes any surface.
fn through_trait<'s>(s: impl Place<'s>) {
    exercise!(&s);
}

/// Places into a 64 KiB block: enough for every call, too small for the big ones.
const BLOCK: usize = 64 << 10;

#[test]
fn scope_stack_inherent_and_trait() {
    let mut memory = LinearAllocator::with_capacity(BLOCK).unwrap();
    memory.scope("level", |level| {
        let stack: &ScopeStack<'_> = level;
        exercise!(stack);
        through_trait(stack);
        through_trait(&*level);
    });
}

#[test]
fn local_scope_inherent_and_trait() {
    let mut memory = LinearAllocator::with_capacity(BLOCK).unwrap();
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs| {
            let here: LocalScope<'_> = jobs.local();
            exercise!(here);
        });
        frame.scope_concurrent("jobs", |jobs| through_trait(jobs.local()));
    });
}

#[test]
fn concurrent_scope_inherent_and_trait_on_threads() {
    let mut memory = LinearAllocator::with_capacity(BLOCK).unwrap();
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs: &ConcurrentScope<'_>| exercise!(jobs));
        frame.scope_concurrent("jobs", |jobs: &ConcurrentScope<'_>| {
            std::thread::scope(|t| {
                t.spawn(|| through_trait(jobs));
            });
        });
        frame.scope_concurrent("jobs", |jobs: &ConcurrentScope<'_>| {
            std::thread::scope(|t| {
                t.spawn(|| exercise!(jobs.local()));
            });
        });
    });
}

/// Calls every builder method through `$s` (a surface or a `Place`), checking each.
macro_rules! build {
    ($s:expr) => {{
        let mut v = $s.new_vec::<String>();
        v.push(String::from("a"));
        assert_eq!(v.into_slice(), ["a"]);
        let mut v = $s.vec_with_capacity::<u64>(4);
        assert!(v.capacity() >= 4);
        v.extend(0..3);
        assert_eq!(v.into_slice_pod(), [0, 1, 2]);
        assert!($s.try_vec_with_capacity::<u64>(4).is_ok());
        assert!($s.try_vec_with_capacity::<u64>(1 << 20).is_err());
        let mut t = $s.new_string();
        t.push_str("frog");
        assert_eq!(t.into_str(), "frog");
        let mut t = $s.string_with_capacity(4);
        t.push('x');
        assert_eq!(t.into_str(), "x");
        assert!($s.try_string_with_capacity(4).is_ok());
        assert!($s.try_string_with_capacity(1 << 20).is_err());
    }};
}

fn build_through_trait<'s, P: Place<'s>>(s: P)
where
    P::Handle: scope_stack::Finalizes<String>,
{
    build!(&s);
}

#[test]
fn builders_on_every_surface() {
    let mut memory = LinearAllocator::with_capacity(BLOCK).unwrap();
    memory.scope("level", |level| {
        build!(level);
        build_through_trait(&**level);
    });
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs: &ConcurrentScope<'_>| {
            build!(jobs);
            build!(jobs.local());
            std::thread::scope(|t| {
                t.spawn(|| build!(jobs));
                t.spawn(|| build_through_trait(jobs.local()));
            });
        });
    });
}

/// A task slot's surface, `TaskScope`, has no inherent placement methods: it implements
/// `Place` (and `Carve`), so every method and builder is reached through the trait,
/// and the source scan above has nothing of its own to compare. Each is called here,
/// in a task slot the size of the other tests' block; a `Loaded` of kind `Task` then
/// unloads on another thread.
#[test]
fn task_scope_through_the_trait() {
    use scope_stack::{slot_root, Slots, TaskScope};
    slot_root!(struct Unit = for<'s> ());
    let slots = Slots::leak("tasks", 1, BLOCK).unwrap();
    let exercised = slots
        .load_task::<Unit>("exercise", |s: TaskScope<'_>| {
            exercise!(s);
        })
        .unwrap();
    std::thread::spawn(move || drop(exercised)).join().unwrap();
    let traited = slots
        .load_task::<Unit>("trait", |s| through_trait(s))
        .unwrap();
    drop(traited);
    let built = slots
        .load_task::<Unit>("build", |s| {
            build!(s);
            build_through_trait(s);
        })
        .unwrap();
    std::thread::spawn(move || drop(built)).join().unwrap();
    assert_eq!(slots.loaded(), 0);
}
