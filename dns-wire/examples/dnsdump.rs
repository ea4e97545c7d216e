//! Prints a DNS message in the layout `dig` prints.
//!
//! ```sh
//! cargo run -p dns-wire --example dnsdump -- FILE          # FILE holds wire bytes
//! echo 1234010000010000... | cargo run -p dns-wire --example dnsdump -- --hex
//! ```

use std::io::Read;
use std::process::ExitCode;

use dns_wire::Message;

fn read_input() -> Result<Vec<u8>, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--hex" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("reading stdin: {e}"))?;
            let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            if !digits.len().is_multiple_of(2) {
                return Err("odd number of hex digits".into());
            }
            digits
                .chunks(2)
                .map(|pair| {
                    core::str::from_utf8(pair)
                        .ok()
                        .and_then(|s| u8::from_str_radix(s, 16).ok())
                        .ok_or_else(|| format!("not hex: {:?}", String::from_utf8_lossy(pair)))
                })
                .collect()
        }
        [path] => std::fs::read(path).map_err(|e| format!("reading {path}: {e}")),
        _ => Err("usage: dnsdump FILE | dnsdump --hex < HEX".into()),
    }
}

fn main() -> ExitCode {
    let bytes = match read_input() {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("dnsdump: {e}");
            return ExitCode::FAILURE;
        }
    };
    match Message::parse(&bytes) {
        Ok(msg) => {
            print!("{msg}");
            println!("\n;; MSG SIZE  rcvd: {}", bytes.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dnsdump: malformed message: {e}");
            ExitCode::FAILURE
        }
    }
}
