//! `log [NAMES...] [FORMAT] { class CLASSES... }`.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::{PluginConfig, line, words};
use crate::dispenser::{Dispenser, PluginError};
use crate::syntax::Line;

/// `log`: query logging rules, one per occurrence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log {
    /// The rules, in order.
    pub rules: Vec<LogRule>,
}

/// One `log` line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogRule {
    /// Names to log (as written; CoreDNS makes them fully qualified); empty means `.`.
    pub names: Vec<String>,
    /// The format, when given (the last argument of two or more, if it contains `{`).
    pub format: Option<String>,
    /// Response classes to log: `all`, `denial`, `error`, `success`.
    pub classes: Vec<String>,
}

const CLASSES: [&str; 4] = ["all", "denial", "error", "success"];

impl PluginConfig for Log {
    const NAME: &'static str = "log";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut log = Log::default();
        while d.next_token() {
            let mut args = d.remaining_args();
            let mut rule = LogRule::default();
            if args.len() > 1
                && let Some(last) = args.last()
                && last.contains('{')
            {
                rule.format = Some(last.to_string());
                args.pop();
            }
            rule.names = args.iter().map(|a| a.to_string()).collect();
            while d.next_block() {
                if d.val() != "class" {
                    return Err(d.arg_err());
                }
                let classes = d.remaining_args();
                if classes.is_empty() {
                    return Err(d.arg_err());
                }
                for class in classes {
                    if !CLASSES.contains(&class) {
                        return Err(d.plain(alloc::format!("invalid Class: {class}")));
                    }
                    rule.classes.push(class.to_string());
                }
            }
            log.rules.push(rule);
        }
        Ok(log)
    }

    fn to_lines(&self) -> Vec<Line> {
        self.rules
            .iter()
            .map(|rule| {
                let mut args: Vec<&str> = rule.names.iter().map(String::as_str).collect();
                if let Some(format) = &rule.format {
                    if args.is_empty() {
                        args.push(".");
                    }
                    args.push(format);
                }
                let block = if rule.classes.is_empty() {
                    Vec::new()
                } else {
                    vec![Line::words(words(
                        "class",
                        rule.classes.iter().map(String::as_str),
                    ))]
                };
                line(words("log", args), block)
            })
            .collect()
    }
}
