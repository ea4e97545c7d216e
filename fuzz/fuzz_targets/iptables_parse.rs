#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| (fuzz_targets::find("iptables_parse").expect("registered").run)(data));
