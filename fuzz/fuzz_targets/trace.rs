#![no_main]
//! See iosim::fuzzing::trace.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::trace(data));
