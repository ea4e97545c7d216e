#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| (fuzz_targets::find("iptables_trace").expect("registered").run)(data));
