#![no_main]
//! `apiserver::fuzzing::strategic_merge_patch` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::strategic_merge_patch(data));
