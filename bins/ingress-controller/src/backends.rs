//! The backend table the controller POSTs to nginx's control socket: one line per backend,
//! `NAME key=value…`, read by the Lua balancer ([`crate::lua`]). Every name and value in it has
//! passed an allow-list (no spaces, `=` or newlines), so a line cannot spill into another.
//!
//! A Gateway rule's weighted backendRefs are a split line (rendering notes §5):
//! `gw:NAMESPACE/ROUTE#RULE split=BACKEND*WEIGHT,…,!500*WEIGHT`, the members being backend
//! names of the table and `!500` the share of the invalid refs. Weights and members are table
//! data, so changing them reloads nothing. Route names and namespaces are DNS names (checked by
//! [`crate::gateway::plan`]), so neither they nor the members hold `,`, `*` or spaces.

use std::fmt::Write as _;

use crate::gateway::plan::Share;
use crate::model::{Backend, Model};

/// The table for `model`'s backends, sorted by name, then the Gateway splits.
pub fn table(model: &Model) -> String {
    let mut out = String::new();
    for backend in model.backends.values() {
        line(&mut out, backend);
    }
    for (name, shares) in &model.gateway.splits {
        split(&mut out, name, shares);
    }
    out
}

fn split(out: &mut String, name: &str, shares: &[Share]) {
    let members: Vec<String> = shares
        .iter()
        .map(|share| match share {
            Share::Backend { name, weight } => format!("{name}*{weight}"),
            Share::Invalid { weight } => format!("!500*{weight}"),
        })
        .collect();
    let _ = writeln!(out, "{name} split={}", members.join(","));
}

fn line(out: &mut String, backend: &Backend) {
    let _ = write!(
        out,
        "{} peers={}",
        backend.name,
        backend.endpoints.join(",")
    );
    if let Some(affinity) = &backend.affinity {
        let _ = write!(
            out,
            " affinity={} path={}",
            affinity.cookie_name, affinity.path
        );
        if let Some(max_age) = affinity.max_age {
            let _ = write!(out, " maxage={max_age}");
        }
    } else if let Some(variable) = &backend.hash_by {
        let _ = write!(out, " hash={}", variable.trim_start_matches('$'));
    }
    if let Some((canary, rule)) = &backend.canary {
        let _ = write!(out, " canary={canary}");
        if let Some(header) = &rule.header {
            let _ = write!(
                out,
                " header={}",
                header.to_ascii_lowercase().replace('-', "_")
            );
        }
        if let Some(value) = &rule.header_value {
            let _ = write!(out, " value={value}");
        }
        if let Some(cookie) = &rule.cookie {
            let _ = write!(out, " cookie={cookie}");
        }
        let _ = write!(out, " weight={} total={}", rule.weight, rule.weight_total);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::{Affinity, Canary};

    #[test]
    fn lines() {
        let mut model = Model::default();
        model.backends.insert(
            "a/web:80".into(),
            Backend {
                name: "a/web:80".into(),
                endpoints: vec!["10.0.0.1:8080".into(), "[::1]:8080".into()],
                affinity: Some(Affinity {
                    cookie_name: "route".into(),
                    path: "/".into(),
                    max_age: Some(60),
                }),
                hash_by: None,
                canary: Some((
                    "a/web-canary:80".into(),
                    Canary {
                        header: Some("X-Canary".into()),
                        header_value: None,
                        cookie: None,
                        weight: 10,
                        weight_total: 100,
                    },
                )),
            },
        );
        model.backends.insert(
            "a/empty:http".into(),
            Backend {
                name: "a/empty:http".into(),
                hash_by: Some("$request_uri".into()),
                ..Backend::default()
            },
        );
        model.gateway.splits.insert(
            "gw:a/route#0".into(),
            vec![
                Share::Backend {
                    name: "a/web:80".into(),
                    weight: 70,
                },
                Share::Invalid { weight: 30 },
            ],
        );
        assert_eq!(
            table(&model),
            "a/empty:http peers= hash=request_uri\n\
             a/web:80 peers=10.0.0.1:8080,[::1]:8080 affinity=route path=/ maxage=60 \
             canary=a/web-canary:80 header=x_canary weight=10 total=100\n\
             gw:a/route#0 split=a/web:80*70,!500*30\n"
        );
    }
}
