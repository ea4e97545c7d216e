//! Process logs as CoreDNS prints them: to stdout, no timestamp, a level prefix (`[INFO] `,
//! `[WARNING] `, `[ERROR] `, `[DEBUG] `) and, for plugin messages, `plugin/NAME: `.
//!
//! Events carry the plugin in a `plugin` field: `tracing::error!(plugin = "errors", "...")`.
//! `[DEBUG]` lines appear only while a server block uses the `debug` plugin.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

static DEBUG: AtomicBool = AtomicBool::new(false);

/// Turns `[DEBUG]` lines on or off (the `debug` plugin).
pub fn set_debug(on: bool) {
    DEBUG.store(on, Ordering::Relaxed);
}

/// Installs the subscriber that writes CoreDNS-style lines to stdout.
pub fn init() {
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(Level::DEBUG)
        .event_format(CoreDnsFormat)
        .with_writer(std::io::stdout)
        .finish();
    // A second call (tests) keeps the first subscriber.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// The event formatter: `[LEVEL] [plugin/NAME: ]message`.
struct CoreDnsFormat;

impl<S, N> FormatEvent<S, N> for CoreDnsFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = *event.metadata().level();
        if level == Level::DEBUG && !DEBUG.load(Ordering::Relaxed) || level == Level::TRACE {
            return Ok(());
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut line = String::with_capacity(fields.message.len() + 32);
        line.push_str(prefix(level));
        if let Some(plugin) = &fields.plugin {
            let _ = write!(line, "plugin/{plugin}: ");
        }
        line.push_str(&fields.message);
        writeln!(writer, "{line}")
    }
}

/// The level prefix of CoreDNS's logger.
fn prefix(level: Level) -> &'static str {
    match level {
        Level::ERROR => "[ERROR] ",
        Level::WARN => "[WARNING] ",
        Level::INFO => "[INFO] ",
        _ => "[DEBUG] ",
    }
}

#[derive(Default)]
struct Fields {
    plugin: Option<String>,
    message: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "plugin" => self.plugin = Some(value.to_owned()),
            "message" => self.message.push_str(value),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "plugin" => self.plugin = Some(format!("{value:?}")),
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_coredns_levels() {
        assert_eq!(prefix(Level::INFO), "[INFO] ");
        assert_eq!(prefix(Level::WARN), "[WARNING] ");
        assert_eq!(prefix(Level::ERROR), "[ERROR] ");
        assert_eq!(prefix(Level::DEBUG), "[DEBUG] ");
    }
}
