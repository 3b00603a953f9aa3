#![no_main]
//! `apiserver::fuzzing::yaml` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::yaml(data));
