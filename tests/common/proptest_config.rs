//! The proptest settings the model tests share: no failure files, the case count from
//! `PROPTEST_CASES` (256 when unset), and 6 cases under Miri.

use proptest::test_runner::Config as ProptestConfig;

pub fn config() -> ProptestConfig {
    let mut config = ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    if cfg!(miri) {
        config.cases = 6;
    }
    config
}
