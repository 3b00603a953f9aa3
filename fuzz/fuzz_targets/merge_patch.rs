#![no_main]
//! `apiserver::fuzzing::merge_patch` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::merge_patch(data));
