#![doc = include_str!("../README.md")]

pub mod classify;
pub mod cli;
pub mod config;
pub mod duration;
pub mod logging;
pub mod metrics;
pub mod names;
pub mod nodelocal;
pub mod plugin;
pub mod prehashed;
pub mod reply;
pub mod request;
pub mod route;
pub mod run;
pub mod server;
pub mod stored;
