#![no_main]
//! See iosim::fuzzing::sqlio_cmdline.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::sqlio_cmdline(data));
