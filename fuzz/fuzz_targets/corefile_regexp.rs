#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| (fuzz_targets::find("corefile_regexp").expect("registered").run)(data));
