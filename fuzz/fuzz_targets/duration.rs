#![no_main]
//! `apiserver::fuzzing::duration` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::duration(data));
