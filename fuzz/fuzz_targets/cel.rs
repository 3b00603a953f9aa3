#![no_main]
//! `apiserver::fuzzing::cel` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::cel(data));
