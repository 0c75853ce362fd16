#![no_main]
//! See iosim::fuzzing::diskspd_cmdline.
libfuzzer_sys::fuzz_target!(|data: &[u8]| iosim::fuzzing::diskspd_cmdline(data));
