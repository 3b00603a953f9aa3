#![no_main]
//! `apiserver::fuzzing::json` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::json(data));
