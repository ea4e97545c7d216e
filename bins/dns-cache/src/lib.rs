#![doc = include_str!("../README.md")]

// The code map, in the order a query meets it (README.md, "Source layout", says more).

// The server layer: the DNS listeners (UDP in batches, TCP) and the HTTP endpoints.
pub mod server;

// The query layer: admission, names, routing to a server block, replies as CoreDNS writes
// them.
pub mod query;

// The plugin layer: each block's chain (`errors`, `log`, `cache`, `hosts`, `loop`,
// `forward`, `whoami`).
pub mod plugin;

// The configuration layer: the Corefile read, checked against the plugin registry, and
// turned into a plan of listeners, routes and chains.
pub mod config;

// The process: the command line, then start, signals and reloads of the plan.
pub mod cli;
pub mod run;

// Node-local mode (NodeLocal DNSCache): the Corefile, interface and rules around `run`.
pub mod nodelocal;

// Shared by every layer: Go's durations, CoreDNS's log format and metrics.
pub mod duration;
pub mod logging;
pub mod metrics;
