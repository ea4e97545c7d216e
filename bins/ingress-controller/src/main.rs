//! `ingress-controller`: Ingress objects to a real nginx.

fn main() {}
