#![no_main]
//! `apiserver::fuzzing::quantity` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::quantity(data));
