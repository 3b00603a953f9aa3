#![no_main]
//! `apiserver::fuzzing::json_patch` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::json_patch(data));
