//! Corefile templates: filling `__PILLAR__NAME__` placeholders from a map, the way
//! NodeLocal DNSCache (`node-cache`) renders its Corefile.
//!
//! Placeholders are replaced as exact strings (`__PILLAR__` + NAME + `__`), longest name
//! first so that a name which is a prefix of another (`DNS` and `DNS__SERVER`) cannot cut
//! it. Values are inserted as text: the result is Corefile source, parsed afterwards.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The marker that starts every placeholder.
pub const PREFIX: &str = "__PILLAR__";

/// Placeholders that were left unfilled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    /// Each unfilled placeholder, as written (`__PILLAR__CLUSTER__DNS__`), in order.
    pub unfilled: Vec<String>,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no value for template placeholder(s): {}",
            self.unfilled.join(", ")
        )
    }
}

impl core::error::Error for TemplateError {}

/// Replaces every `__PILLAR__NAME__` whose NAME is a key of `values`; fails listing the
/// placeholders left over.
pub fn fill(template: &str, values: &BTreeMap<String, String>) -> Result<String, TemplateError> {
    let mut names: Vec<(&String, &String)> = values.iter().collect();
    names.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(b.0)));
    let mut out = String::from(template);
    for (name, value) in names {
        let placeholder = alloc::format!("{PREFIX}{name}__");
        if out.contains(&placeholder) {
            out = out.replace(&placeholder, value);
        }
    }
    let unfilled = unfilled(&out);
    if unfilled.is_empty() {
        Ok(out)
    } else {
        Err(TemplateError { unfilled })
    }
}

/// The placeholders in `text`: `__PILLAR__` followed by upper-case letters, digits and
/// underscores.
pub fn unfilled(text: &str) -> Vec<String> {
    text.match_indices(PREFIX)
        .map(|(start, _)| {
            let rest = text.get(start + PREFIX.len()..).unwrap_or_default();
            let len = rest
                .bytes()
                .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
                .count();
            String::from(
                text.get(start..start + PREFIX.len() + len)
                    .unwrap_or_default(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn fills_node_cache_placeholders() {
        let template = "cluster.local:53 {\n    bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__\n    forward . __PILLAR__CLUSTER__DNS__\n}\n";
        let filled = fill(
            template,
            &values(&[
                ("LOCAL__DNS", "169.254.20.10"),
                ("DNS__SERVER", "10.96.0.10"),
                ("CLUSTER__DNS", "10.96.0.11"),
                ("DNS", "wrong"),
            ]),
        )
        .unwrap();
        assert_eq!(
            filled,
            "cluster.local:53 {\n    bind 169.254.20.10 10.96.0.10\n    forward . 10.96.0.11\n}\n"
        );
    }

    #[test]
    fn reports_what_is_left() {
        let err = fill(
            "forward . __PILLAR__UPSTREAM__SERVERS__\n",
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert_eq!(err.unfilled, ["__PILLAR__UPSTREAM__SERVERS__"]);
    }
}
