#![no_main]
//! `apiserver::fuzzing::apply_patch` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::apply_patch(data));
