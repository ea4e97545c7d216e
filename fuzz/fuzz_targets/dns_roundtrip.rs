#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| (fuzz_targets::find("dns_roundtrip").expect("registered").run)(data));
