//! The Object Pool chapter's "quietest sound": a fixed pool of playing sounds where a
//! new sound, when every voice is busy, replaces the quietest one.
//!
//! Run with `cargo run --example sounds`.

use scope_stack::{DenseHandle, LinearAllocator};

#[derive(Debug)]
struct Sound {
    name: &'static str,
    /// Current loudness, 0..=100. Sounds fade each frame.
    volume: u32,
}

/// What an eviction compares: the quietest sound has the smallest key.
fn loudness(s: &Sound) -> u32 {
    s.volume
}

fn main() -> Result<(), scope_stack::AllocError> {
    let mut memory = LinearAllocator::with_capacity(64 * 1024)?;
    memory.scope("audio", |audio| {
        let voices = audio.new_dense_pool::<Sound>(4);
        let requests = [
            ("wind", 20),
            ("music", 60),
            ("footstep", 35),
            ("door", 50),
            ("swish", 90), // all four voices busy: the wind (20) gives way
            ("thunder", 100),
        ];
        let mut swish: Option<DenseHandle<Sound>> = None;
        for (frame, &(name, volume)) in requests.iter().enumerate() {
            let h = voices.insert_evicting(Sound { name, volume }, loudness);
            if name == "swish" {
                swish = Some(h);
            }
            // Every playing sound fades a little each frame: a dense walk, no gaps.
            for s in voices.values_mut() {
                s.volume = s.volume.saturating_sub(2);
            }
            // Silent sounds stop.
            voices.retain(|_, s| s.volume > 0);
            let mut playing: Vec<_> = voices.values().map(|s| (s.name, s.volume)).collect();
            playing.sort();
            println!("frame {frame}: {playing:?}");
        }
        let swish = swish.expect("swish was started");
        println!("the swish is still playing: {:?}", voices.get(swish));
        assert!(
            voices.values().all(|s| s.name != "wind"),
            "the quietest sound made room"
        );
    }); // the sounds still playing are dropped here
    Ok(())
}
