//! Helpers shared by the benchmarks that print a summary table: finding criterion's
//! output folder and reading a median back from it.
#![allow(dead_code)] // each benchmark uses its own subset

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// `true` when the binary runs as a real measurement (`cargo bench`), not in `--test`
/// or `--list` mode: only then is there a fresh table to print.
pub fn measuring() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list")
}

/// Where criterion writes its results, found the way criterion finds it.
pub fn criterion_dir() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return Some(PathBuf::from(home));
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(Path::new(&target).join("criterion"));
    }
    // The bench binary lives in `<target>/<profile>/deps/`.
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.join("criterion"))
}

/// The median's point estimate from criterion's `estimates.json`.
pub fn read_median(path: &Path) -> Option<f64> {
    let json = fs::read_to_string(path).ok()?;
    let median = &json[json.find("\"median\"")?..];
    let value = &median[median.find("\"point_estimate\"")? + "\"point_estimate\"".len()..];
    let value = value.trim_start().strip_prefix(':')?.trim_start();
    let end = value.find([',', '}'])?;
    value[..end].trim().parse().ok()
}

/// The median (in ns per iteration) of benchmark `group/bench`, if it was measured
/// after `run_started` (so a filtered run never reports stale numbers).
pub fn fresh_median(dir: &Path, group: &str, bench: &str, run_started: SystemTime) -> Option<f64> {
    let path = dir
        .join(folder_name(group))
        .join(folder_name(bench))
        .join("new")
        .join("estimates.json");
    let fresh = fs::metadata(&path).ok()?.modified().ok()? >= run_started;
    fresh.then(|| read_median(&path)).flatten()
}

/// The folder name criterion gives a group or benchmark id: it replaces the characters
/// that file systems reject.
pub fn folder_name(id: &str) -> String {
    id.chars()
        .map(|c| if "?\"/\\*<>:|".contains(c) { '_' } else { c })
        .collect()
}

/// The calling thread's CPU time, where the platform has a clock for it (Linux), so
/// a timed batch leaves out the time another process held the core.
#[cfg(target_os = "linux")]
pub fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    ok.then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// No thread CPU clock here: callers fall back to wall time.
#[cfg(not(target_os = "linux"))]
pub fn thread_cpu_time() -> Option<Duration> {
    None
}
