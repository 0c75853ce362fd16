#![no_main]
//! See iosim::fuzzing::units.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::units(data));
