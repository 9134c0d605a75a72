//! The memory map from a system: [`MemoryMaps`] lists the leaked slot sets of the
//! app's frame arenas and level slots, [`MemoryMapRequest`] asks the plugin to print
//! or save the map at the end of a frame, and [`print_memory_map`] prints it from any
//! schedule.
//!
//! Taking a map allocates (the report is a heap value), so it runs on request only: a
//! frame with no request reads one flag.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bevy_ecs::prelude::*;
use scope_stack::{MapHandle, Slots};

use crate::scratch::ScratchStats;

/// The memory maps of the app's leaked slot sets (each [`FrameArena`](crate::FrameArena)
/// and [`LevelSlots`](crate::LevelSlots) added with
/// [`ScopeStackAppExt`](crate::ScopeStackAppExt) is listed), for any thread.
///
/// ```
/// use scope_stack::Slots;
/// use scope_stack_bevy::{MemoryMaps, ScratchStats};
///
/// let mut maps = MemoryMaps::default();
/// maps.add_slots(Slots::leak("sounds", 2, 4096).unwrap());
/// let text = maps.text(&ScratchStats::default());
/// assert!(text.contains("sounds") && text.contains("scratch"));
/// ```
#[derive(Resource, Default, Debug)]
pub struct MemoryMaps {
    handles: Vec<MapHandle<'static>>,
}

impl MemoryMaps {
    /// Lists a leaked set (one made by [`Slots::leak`] or [`Slots::from_static`]); a
    /// set carved from a scope has no map of its own and is skipped.
    ///
    /// ```
    /// let mut maps = scope_stack_bevy::MemoryMaps::default();
    /// maps.add_slots(scope_stack::Slots::leak("a", 1, 1024).unwrap());
    /// assert_eq!(maps.handles().len(), 1);
    /// ```
    pub fn add_slots(&mut self, slots: &'static Slots) {
        if let Some(handle) = slots.map_handle() {
            self.add(handle);
        }
    }

    /// Lists any map handle that lives as long as the program.
    ///
    /// ```
    /// let mut maps = scope_stack_bevy::MemoryMaps::default();
    /// let set = scope_stack::Slots::leak("a", 1, 1024).unwrap();
    /// maps.add(set.map_handle().unwrap());
    /// assert_eq!(maps.handles().len(), 1);
    /// ```
    pub fn add(&mut self, handle: MapHandle<'static>) {
        self.handles.push(handle);
    }

    /// The listed handles.
    ///
    /// ```
    /// assert!(scope_stack_bevy::MemoryMaps::default().handles().is_empty());
    /// ```
    pub fn handles(&self) -> &[MapHandle<'static>] {
        &self.handles
    }

    /// The text map of every listed set, then the scratch figures.
    ///
    /// ```
    /// let maps = scope_stack_bevy::MemoryMaps::default();
    /// let stats = scope_stack_bevy::ScratchStats { threads: 3, ..Default::default() };
    /// assert!(maps.text(&stats).contains("3 threads"));
    /// ```
    pub fn text(&self, scratch: &ScratchStats) -> String {
        let mut out = String::new();
        for handle in &self.handles {
            let _ = writeln!(out, "{}", handle.report());
        }
        let _ = writeln!(
            out,
            "scratch pads: {} threads ({} warmed), {} bytes each, {} reserved \
             ({} in pads, {} thread-local scratch, {} serde staging); \
             last frame's high-water {} (largest thread), {} (sum over threads); peak {}",
            scratch.threads,
            scratch.warmed_threads,
            scratch.capacity_each,
            scratch.bytes_reserved,
            scratch.pad_bytes,
            scratch.thread_scratch_bytes,
            scratch.staging_bytes,
            scratch.frame_high_water,
            scratch.frame_high_water_total,
            scratch.peak,
        );
        out
    }

    /// Writes the text map to `dir/memory-map.txt` and each set's SVG map to
    /// `dir/<set name>.svg` (the name's characters other than letters, digits, `-` and
    /// `_` become `_`), creating `dir` if needed. Returns the files written.
    ///
    /// # Errors
    /// The first file-system error.
    ///
    /// ```
    /// let mut maps = scope_stack_bevy::MemoryMaps::default();
    /// maps.add_slots(scope_stack::Slots::leak("my frames", 2, 4096).unwrap());
    /// let dir = std::env::temp_dir().join(format!("scope-stack-bevy-doc-{}", std::process::id()));
    /// let files = maps.save(&dir, &Default::default()).unwrap();
    /// assert_eq!(files.len(), 2);
    /// assert!(files[1].ends_with("my_frames.svg"));
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn save(&self, dir: &Path, scratch: &ScratchStats) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let text = dir.join("memory-map.txt");
        std::fs::write(&text, self.text(scratch))?;
        let mut files = vec![text];
        for handle in &self.handles {
            let map = handle.report();
            let name: String = map
                .scopes
                .first()
                .map_or("slots", |s| s.name.as_str())
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let path = dir.join(format!("{name}.svg"));
            std::fs::write(&path, map.to_svg())?;
            files.push(path);
        }
        Ok(files)
    }
}

/// Asks the [`ScopeStackPlugin`](crate::ScopeStackPlugin) to print and/or save the
/// memory map at the end of this frame (in [`Last`](bevy_app::Last), after the scratch
/// figures are taken). The request is cleared once served.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin, Update};
/// use bevy_ecs::prelude::*;
/// use scope_stack_bevy::{MemoryMapRequest, ScopeStackPlugin};
///
/// fn on_key(mut request: ResMut<MemoryMapRequest>) {
///     request.print = true;
/// }
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .add_systems(Update, on_key);
/// app.update();
/// let request = app.world().resource::<MemoryMapRequest>();
/// assert!(!request.print && request.served == 1);
/// ```
#[derive(Resource, Default, Debug, Clone)]
pub struct MemoryMapRequest {
    /// Print the text map to standard output.
    pub print: bool,
    /// Save the text and SVG maps to this folder (see [`MemoryMaps::save`]).
    pub save_to: Option<PathBuf>,
    /// How many requests have been served.
    pub served: u64,
    /// The files the last save wrote, or its error.
    pub last_saved: Option<Result<Vec<PathBuf>, String>>,
}

impl MemoryMapRequest {
    /// Whether a print or a save is asked for.
    ///
    /// ```
    /// let mut request = scope_stack_bevy::MemoryMapRequest::default();
    /// assert!(!request.is_pending());
    /// request.save_to = Some("maps".into());
    /// assert!(request.is_pending());
    /// ```
    pub fn is_pending(&self) -> bool {
        self.print || self.save_to.is_some()
    }
}

/// The run condition of [`serve_memory_map_requests`]: a request is pending.
pub(crate) fn memory_map_requested(request: Res<MemoryMapRequest>) -> bool {
    request.is_pending()
}

/// Serves a pending [`MemoryMapRequest`] (the plugin runs it in
/// [`Last`](bevy_app::Last)).
pub(crate) fn serve_memory_map_requests(
    mut request: ResMut<MemoryMapRequest>,
    maps: Res<MemoryMaps>,
    stats: Res<ScratchStats>,
) {
    if !request.is_pending() {
        return;
    }
    if std::mem::take(&mut request.print) {
        print!("{}", maps.text(&stats));
    }
    if let Some(dir) = request.save_to.take() {
        request.last_saved = Some(maps.save(&dir, &stats).map_err(|e| e.to_string()));
    }
    request.served += 1;
}

/// Prints the memory map (every set in [`MemoryMaps`], then the scratch figures) to
/// standard output; add it to any schedule, with a run condition.
///
/// ```
/// use bevy_app::{App, Last, TaskPoolPlugin};
/// use bevy_ecs::prelude::*;
/// use scope_stack_bevy::{print_memory_map, ScopeStackPlugin};
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .add_systems(Last, print_memory_map.run_if(|mut once: Local<bool>| !std::mem::replace(&mut *once, true)));
/// app.update();
/// ```
pub fn print_memory_map(maps: Res<MemoryMaps>, stats: Res<ScratchStats>) {
    print!("{}", maps.text(&stats));
}
