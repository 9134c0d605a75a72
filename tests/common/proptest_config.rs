//! The proptest settings the model tests share: no failure files, the case count from
//! `PROPTEST_CASES` (256 when unset), and 4 cases under Miri (each case interprets a
//! few dozen operations there; CI's release run checks 2,000 to 10,000 cases).

use proptest::test_runner::Config as ProptestConfig;

pub fn config() -> ProptestConfig {
    let mut config = ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    if cfg!(miri) {
        config.cases = 4;
    }
    config
}
