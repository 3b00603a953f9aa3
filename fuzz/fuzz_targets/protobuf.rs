#![no_main]
//! `apiserver::fuzzing::protobuf` under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| apiserver::fuzzing::protobuf(data));
