#![no_main]
//! See iosim::fuzzing::profile_toml.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::profile_toml(data));
