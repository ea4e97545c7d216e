//! Ingress objects to a real nginx, rendered through nginx-conf's builder, with leader election.

fn main() {}
