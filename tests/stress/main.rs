//! The stress tests and in-place construction, one test binary: more threads than
//! cores, a million or more operations per pool test, 8 MiB values on a 256 KiB stack.
//! CI runs it in release (`cargo test --release --test stress`); `cargo test` runs it
//! in debug, where the loops are shorter and the in-place `_with` tests are left out.
//! One module per file, so a filter picks one: `cargo test --release --test stress
//! pool_stress::`.

mod concurrent_stress;
mod in_place;
mod map_stress;
mod pool_owner_stress;
mod pool_stress;
mod report_race;
mod slots_stress;
mod store_stress;
mod suspended_chain;
