//! The query layer: what happens to one DNS message between the socket and the plugins, in
//! the order a query meets it.
//!
//! 1. [`request`]: admission of the packet (miekg/dns's accept rules and CoreDNS's server
//!    checks) and the parsed view of the query that the plugins read;
//! 2. [`names`]: the query name lower-cased on the stack, and zone membership;
//! 3. [`route`]: the server block whose zone is the longest suffix of the name;
//! 4. the block's plugin chain ([`plugin`](crate::plugin)), run by the
//!    [`server`](crate::server);
//! 5. [`classify`]: what kind of reply came back (what the cache stores, what `log`
//!    filters on);
//! 6. [`reply`]: the reply written as CoreDNS writes it (error replies, the mirrored OPT
//!    record, truncation) or replayed from the cache, kept as a [`stored`] reply.

pub mod classify;
pub mod names;
pub mod reply;
pub mod request;
pub mod route;
pub mod stored;
