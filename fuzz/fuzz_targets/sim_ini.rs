#![no_main]
//! See iosim::fuzzing::sim_ini.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::sim_ini(data));
