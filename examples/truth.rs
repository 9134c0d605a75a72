//! An editor-like data model on a versioned `Store` ("the Truth").
//!
//! Asset objects (a name, a transform, a material colour) live in one store carved
//! from the editor's scope. Each frame:
//! - an editing thread changes assets: mostly with `commit` (last writer wins), and
//!   sometimes with `try_commit`, racing an "auto-save" thread that tidies the same
//!   assets, so some commits conflict and are retried;
//! - a render thread and a physics thread read every asset, without locks;
//! - a background thumbnail job pins a few assets and keeps reading them across
//!   frames while edits go on;
//! - the main loop then calls `end_frame`, which frees the replaced versions.
//!
//! Run with `cargo run --release --example truth`.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use scope_stack::store::Id;
use scope_stack::{LinearAllocator, Pinned, Store};

#[derive(Clone, Debug)]
struct Asset {
    name: String,
    position: [f32; 3],
    scale: f32,
    colour: [u8; 4],
    /// Bumped by every edit, so readers can check they see whole versions.
    revision: u32,
    /// Always `revision * 3`: a reader that sees a half-written asset would notice.
    check: u32,
}

const ASSETS: usize = 2_000;
const FRAMES: usize = 120;
const EDITS_PER_FRAME: usize = 300;

fn main() -> Result<(), scope_stack::AllocError> {
    // Versions: one per asset, plus every commit a frame makes (two threads), plus the
    // drafts in flight and the versions pinned by the background job.
    let max_versions = ASSETS + 2 * EDITS_PER_FRAME + 64;
    let need = Store::<Asset>::memory_needed(ASSETS, max_versions).unwrap();
    let mut memory = LinearAllocator::with_capacity(need + 4096)?;
    println!(
        "store for {ASSETS} assets, {max_versions} versions: {} KiB, carved once",
        need / 1024
    );

    memory.scope("editor", |editor| {
        let truth = editor.new_store::<Asset>(ASSETS, max_versions);
        let ids: Vec<Id> = (0..ASSETS)
            .map(|i| {
                truth
                    .create(Asset {
                        name: format!("asset_{i:04}"),
                        position: [i as f32, 0.0, 0.0],
                        scale: 1.0,
                        colour: [255, 255, 255, 255],
                        revision: 0,
                        check: 0,
                    })
                    .unwrap()
            })
            .collect();
        let ids = &ids;

        let (thumbnails, jobs) = mpsc::channel::<Pinned<'_, Asset>>();
        let (mut commits, mut conflicts, mut reads) = (0u64, 0u64, 0u64);
        let start = Instant::now();
        std::thread::scope(|background| {
            // The thumbnail job outlives frames: it holds pinned versions.
            let job = background.spawn(move || {
                let mut done = 0u64;
                for asset in jobs {
                    std::thread::sleep(Duration::from_micros(200));
                    assert_eq!(asset.check, asset.revision * 3);
                    done += 1;
                }
                done
            });

            for frame in 0..FRAMES {
                let shared = &*truth;
                let (c, x, r) = std::thread::scope(|s| {
                    let editing = s.spawn(move || edit(shared, ids, frame, 0));
                    let autosave = s.spawn(move || edit(shared, ids, frame, 1));
                    let render = s.spawn(move || read_all(shared, ids));
                    let physics = s.spawn(move || read_all(shared, ids));
                    if frame % 10 == 0 {
                        // Hand a few assets to the thumbnail job.
                        for id in ids.iter().step_by(ASSETS / 4) {
                            thumbnails.send(shared.pin(*id).unwrap()).unwrap();
                        }
                    }
                    let (c1, x1) = editing.join().unwrap();
                    let (c2, x2) = autosave.join().unwrap();
                    let reads = render.join().unwrap() + physics.join().unwrap();
                    (c1 + c2, x1 + x2, reads)
                });
                commits += c;
                conflicts += x;
                reads += r;
                // Back at the root state: free what the frame replaced.
                truth.end_frame();
            }
            drop(thumbnails);
            let thumbnails_done = job.join().unwrap();
            println!("thumbnail job read {thumbnails_done} pinned versions across frames");
        });
        truth.end_frame();
        let secs = start.elapsed().as_secs_f64();
        println!("{FRAMES} frames in {secs:.2} s");
        println!(
            "commits: {commits} ({:.0}/s), conflicts: {conflicts} ({:.0}/s), reads: {reads} ({:.1} M/s)",
            commits as f64 / secs,
            conflicts as f64 / secs,
            reads as f64 / secs / 1e6
        );
        println!(
            "versions in use after the last frame: {} (one per asset)",
            truth.versions_in_use()
        );
        assert_eq!(truth.versions_in_use(), ASSETS);
    });
    Ok(())
}

/// One thread's edits for a frame. Thread 0 (the editor) uses `commit` for moves and
/// `try_commit` for colour changes; thread 1 (auto-save) tidies names with
/// `try_commit`. Both touch the same few assets, so `try_commit`s conflict; a lost
/// `try_commit` takes a fresh draft and tries again. Returns (commits, conflicts).
fn edit(truth: &Store<'_, Asset>, ids: &[Id], frame: usize, thread: usize) -> (u64, u64) {
    let (mut commits, mut conflicts) = (0, 0);
    for e in 0..EDITS_PER_FRAME {
        let id = ids[(frame * 7 + e / 3) % 64];
        loop {
            let mut draft = truth.write(id).expect("version slots for the frame");
            draft.revision += 1;
            draft.check = draft.revision * 3;
            let result = match (thread, e % 3) {
                (0, 0) => {
                    draft.position[1] += 0.5;
                    draft.scale *= 1.01;
                    truth.commit(draft)
                }
                (0, _) => {
                    draft.colour[0] = draft.colour[0].wrapping_sub(1);
                    truth.try_commit(draft)
                }
                _ => {
                    if !draft.name.ends_with('*') {
                        draft.name.push('*');
                    }
                    truth.try_commit(draft)
                }
            };
            match result {
                Ok(()) => {
                    commits += 1;
                    break;
                }
                Err(lost) => {
                    conflicts += 1;
                    drop(lost);
                }
            }
        }
    }
    (commits, conflicts)
}

/// Reads every asset once, as a render or physics pass would.
fn read_all(truth: &Store<'_, Asset>, ids: &[Id]) -> u64 {
    let mut sum = 0.0f32;
    for id in ids {
        let a = truth.read(*id).expect("assets are never destroyed here");
        assert_eq!(a.check, a.revision * 3, "a half-written asset");
        sum += a.position[0] * a.scale;
    }
    std::hint::black_box(sum);
    ids.len() as u64
}
