#![no_main]
//! See iosim::fuzzing::cli.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::cli(data));
