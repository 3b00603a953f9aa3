#![no_main]
//! `apiserver::fuzzing::label_selector` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::label_selector(data));
