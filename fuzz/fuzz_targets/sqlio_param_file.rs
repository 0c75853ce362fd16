#![no_main]
//! See iosim::fuzzing::sqlio_param_file.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::sqlio_param_file(data));
