#![doc = include_str!("../README.md")]

pub mod cli;
pub mod config;
pub mod duration;
pub mod logging;
pub mod metrics;
pub mod nodelocal;
pub mod plugin;
pub mod query;
pub mod run;
pub mod server;
