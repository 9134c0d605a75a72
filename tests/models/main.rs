//! The proptest models, one test binary (one module per model, so a filter picks one:
//! `cargo test --release --test models model_scopes::`). `cargo test` runs them with
//! few cases; CI runs them in release with `PROPTEST_CASES` set (see `.ci/run`).

#[path = "../common/proptest_config.rs"]
mod proptest_config;

mod dense_pool_model;
mod model_concurrent;
mod model_pool;
mod model_scopes;
mod model_slots;
