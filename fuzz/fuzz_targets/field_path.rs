#![no_main]
//! `apiserver::fuzzing::field_path` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::field_path(data));
