#![no_main]
//! `apiserver::fuzzing::field_selector` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::field_selector(data));
