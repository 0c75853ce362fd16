#![no_main]
//! See iosim::fuzzing::history_migration.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::history_migration(data));
