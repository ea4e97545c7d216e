//! `errors [stdout] { stacktrace; consolidate DURATION REGEXP [LEVEL] [show_first] }`.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::{PluginConfig, line, once, re2};
use crate::dispenser::{Dispenser, PluginError};
use crate::go::Duration;
use crate::syntax::Line;

/// `errors`: logs errors, optionally consolidating repeated ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Errors {
    /// Log stack traces of panics.
    pub stacktrace: bool,
    /// Consolidation rules, in order.
    pub consolidate: Vec<Consolidate>,
}

/// One `consolidate` rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consolidate {
    /// The aggregation period.
    pub period: Duration,
    /// The regular expression, in Go's RE2 syntax (checked as Go's `regexp.Compile` would).
    pub pattern: String,
    /// The log level: `warning`, `error` (CoreDNS's default when absent), `info` or `debug`.
    pub level: Option<String>,
    /// Log the first matching error right away.
    pub show_first: bool,
}

const LEVELS: [&str; 4] = ["warning", "error", "info", "debug"];

impl PluginConfig for Errors {
    const NAME: &'static str = "errors";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut errors = Errors::default();
        let mut seen = false;
        while d.next_token() {
            once(d, &mut seen)?;
            match d.remaining_args().as_slice() {
                [] => {}
                ["stdout"] => {}
                [file] => return Err(d.err(alloc::format!("invalid log file: {file}"))),
                _ => return Err(d.arg_err()),
            }
            while d.next_block() {
                match d.val() {
                    // Takes no argument: anything after it is read as the next field.
                    "stacktrace" => errors.stacktrace = true,
                    "consolidate" => errors.consolidate.push(consolidate(d)?),
                    field => return Err(d.syntax_err(&alloc::format!("Unknown field {field}"))),
                }
            }
        }
        Ok(errors)
    }

    fn to_lines(&self) -> Vec<Line> {
        let mut block = Vec::new();
        if self.stacktrace {
            block.push(Line::words(["stacktrace"]));
        }
        for c in &self.consolidate {
            let mut words = vec![
                "consolidate".to_string(),
                c.period.to_string(),
                c.pattern.clone(),
            ];
            words.extend(c.level.clone());
            if c.show_first {
                words.push("show_first".to_string());
            }
            block.push(Line::words(words));
        }
        vec![line(["errors"], block)]
    }
}

fn consolidate(d: &mut Dispenser<'_>) -> Result<Consolidate, PluginError> {
    let args = d.remaining_args();
    if !(2..=4).contains(&args.len()) {
        return Err(d.arg_err());
    }
    let (Some(period), Some(pattern)) = (args.first(), args.get(1)) else {
        return Err(d.arg_err());
    };
    let period = Duration::parse(period).map_err(|e| d.err(e))?;
    re2::check(pattern).map_err(|e| d.err(e.to_string()))?;
    let mut rule = Consolidate {
        period,
        pattern: pattern.to_string(),
        level: None,
        show_first: false,
    };
    for extra in args.iter().skip(2) {
        match *extra {
            "show_first" if !rule.show_first => rule.show_first = true,
            level if rule.level.is_none() && LEVELS.contains(&level) => {
                rule.level = Some(level.to_string());
            }
            other => {
                return Err(d.err(alloc::format!(
                    "unknown log level argument in consolidate: {other}"
                )));
            }
        }
    }
    Ok(rule)
}
