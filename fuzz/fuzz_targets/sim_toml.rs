#![no_main]
//! See iosim::fuzzing::sim_toml.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::sim_toml(data));
