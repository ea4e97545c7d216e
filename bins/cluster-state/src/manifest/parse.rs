//! Objects from the text of one manifest file: YAML with several documents, or JSON; `List`
//! kinds; errors with line, column and field.
//!
//! Documents are split at `---` lines, as kubectl splits them. Each document is read twice:
//! first only its `apiVersion` and `kind` (and those of its `items` for a `List`), then into the
//! typed object, through `serde_path_to_error` for the path of a bad field. Kinds this crate
//! does not model are skipped; a modelled kind under another version of its API group is an
//! error, so an outdated manifest does not vanish silently. Every reading is bounded by the
//! limits of [`super::limits`].

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{MessageFormatter, Spanned};

use super::limits::{MAX_MANIFEST_BYTES, breach_message, budget, file_too_large};
use super::{ManifestError, Position};
use crate::{Invalid, Kind, Object, validate};

/// Parses every object in the manifest text `text` of the file `path` (used in errors), and
/// checks each as the API server would ([`validate`](crate::validate)).
///
/// Objects of namespaced kinds without a namespace are put in `default`; cluster-scoped ones
/// lose any namespace. Fails on the first error: bad YAML or JSON, a field of the wrong type, an
/// object the API server would refuse (the error names its first invalid field), a modelled
/// kind under an unsupported `apiVersion`, or a limit of the crate's size limits exceeded
/// ([`MAX_MANIFEST_BYTES`](crate::MAX_MANIFEST_BYTES) for the text,
/// [`MAX_YAML_NODES`](crate::MAX_YAML_NODES) and the other `MAX_YAML_*` for each document),
/// which the error names with its value.
pub fn parse_manifest(path: &Path, text: &str) -> Result<Vec<Object>, ManifestError> {
    read_objects(path, text)?
        .into_iter()
        .map(
            |read| match read.errors(path, "is invalid").into_iter().next() {
                Some(error) => Err(error),
                None => Ok(read.object),
            },
        )
        .collect()
}

/// How many characters of an invalid object's key its errors show.
const MAX_SHOWN_KEY_CHARS: usize = 128;

/// One object of a manifest file, with where it starts and why the API server would refuse it.
#[derive(Debug)]
pub(super) struct ReadObject {
    /// The object, its namespace defaulted.
    pub(super) object: Object,
    /// Where the object starts in the file.
    pub(super) start: Position,
    /// Why it is invalid, if it is.
    pub(super) invalid: Option<Invalid>,
}

impl ReadObject {
    /// One error of the file `path` per field error of the object, at the object's start,
    /// each ending with the object named and `outcome` (`is left out`, …).
    pub(super) fn errors(&self, path: &Path, outcome: &str) -> Vec<ManifestError> {
        let Some(invalid) = &self.invalid else {
            return Vec::new();
        };
        // The key of an invalid object may be long or hold line breaks: shown escaped and cut.
        let key = self.object.key().to_string();
        let mut name = format!("{} ", self.object.kind());
        name.extend(
            key.chars()
                .take(MAX_SHOWN_KEY_CHARS)
                .flat_map(char::escape_debug),
        );
        if key.chars().nth(MAX_SHOWN_KEY_CHARS).is_some() {
            name.push('…');
        }
        invalid
            .errors
            .iter()
            .map(|error| ManifestError {
                path: path.to_owned(),
                position: Some(self.start),
                field: error.field.clone(),
                message: format!("{} ({} {outcome})", error.message, name),
            })
            .collect()
    }
}

/// Parses every object of the manifest text `text` of the file `path` and validates each, as
/// `kubectl apply` of the file would: the file fails as a whole only when it cannot be read
/// (bad YAML or JSON, a field of the wrong type, an unsupported `apiVersion`, a size limit);
/// an invalid object is returned with its errors, beside the valid ones.
pub(super) fn read_objects(path: &Path, text: &str) -> Result<Vec<ReadObject>, ManifestError> {
    let bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
    if bytes > MAX_MANIFEST_BYTES {
        return Err(ManifestError::file(path, file_too_large(bytes)));
    }
    let mut objects = Vec::new();
    for (lines_before, document) in documents(text) {
        let at = |error: DocumentError| error.into_manifest_error(path, lines_before);
        for (start, object) in parse_document(document).map_err(at)? {
            let object = normalise(object);
            objects.push(ReadObject {
                invalid: validate(&object).err(),
                object,
                start: Position {
                    line: start.line + lines_before,
                    column: start.column,
                },
            });
        }
    }
    Ok(objects)
}

/// Splits `text` at lines that are `---` (optionally followed by blanks or a comment), as
/// kubectl does; yields each document with the number of lines before it.
fn documents(text: &str) -> impl Iterator<Item = (u64, &str)> {
    let mut rest = text;
    let mut line = 0u64;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let start_line = line;
        let mut end = 0;
        for text_line in rest.split_inclusive('\n') {
            if is_separator(text_line) {
                let document = &rest[..end];
                rest = &rest[end + text_line.len()..];
                line += 1;
                return Some((start_line, document));
            }
            end += text_line.len();
            line += 1;
        }
        let document = rest;
        rest = "";
        Some((start_line, document))
    })
}

fn is_separator(line: &str) -> bool {
    line.strip_prefix("---").is_some_and(|after| {
        let after = after.trim_start();
        after.is_empty() || after.starts_with('#')
    })
}

/// An error inside one document, positioned relative to it.
struct DocumentError {
    position: Option<Position>,
    field: String,
    message: String,
}

impl DocumentError {
    fn at(position: Position, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            position: Some(position),
            field: field.into(),
            message: message.into(),
        }
    }

    fn yaml(error: &serde_saphyr::Error, field: String) -> Self {
        let error = error.without_snippet();
        let message = match error {
            serde_saphyr::Error::Budget { breach, .. } => breach_message(breach),
            other => serde_saphyr::DefaultMessageFormatter
                .format_message(other)
                .into_owned(),
        };
        Self {
            position: error.location().map(position),
            field: if field == "." { String::new() } else { field },
            message: escape_controls(&message),
        }
    }

    fn into_manifest_error(self, path: &Path, lines_before: u64) -> ManifestError {
        ManifestError {
            path: path.to_owned(),
            position: self.position.map(|p| Position {
                line: p.line + lines_before,
                column: p.column,
            }),
            field: self.field,
            message: self.message,
        }
    }
}

/// The message formatter leaves control characters (from the input) to its renderer, which we
/// do not use: escape them, so that a message is one printable line.
fn escape_controls(message: &str) -> String {
    let mut escaped = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    escaped
}

fn position(location: serde_saphyr::Location) -> Position {
    Position {
        line: location.line(),
        column: location.column(),
    }
}

/// What the first reading of a document looks at.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head {
    api_version: Option<String>,
    kind: Option<String>,
}

/// The first reading of a `List`.
#[derive(Deserialize)]
struct ListHead {
    #[serde(default)]
    items: Vec<Spanned<Head>>,
}

fn options() -> serde_saphyr::Options {
    serde_saphyr::options! { with_snippet: false, budget: Some(budget()) }
}

/// The objects of one document, each with the line it starts on.
fn parse_document(document: &str) -> Result<Vec<(Position, Object)>, DocumentError> {
    let head = serde_saphyr::from_str_with_options::<Option<Spanned<Head>>>(document, options())
        .map_err(|error| DocumentError::yaml(&error, String::new()))?;
    let Some(head) = head else {
        return Ok(Vec::new()); // an empty document
    };
    let start = position(head.referenced);
    let Some(kind_name) = head.value.kind.as_deref() else {
        return Err(DocumentError::at(
            start,
            "kind",
            "missing: not a Kubernetes object",
        ));
    };
    if kind_name.ends_with("List") && Kind::from_name(kind_name).is_none() {
        let list = serde_saphyr::from_str_with_options::<ListHead>(document, options())
            .map_err(|error| DocumentError::yaml(&error, String::new()))?;
        let kinds = list
            .items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                let prefix = format!("items[{index}].");
                modelled_kind(&item.value, position(item.referenced), &prefix)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let objects = read(document, ListSeed(&kinds))?;
        return Ok(list
            .items
            .iter()
            .zip(objects)
            .filter_map(|(item, object)| Some((position(item.referenced), object?)))
            .collect());
    }
    match modelled_kind(&head.value, start, "")? {
        Some(kind) => Ok(vec![(start, read(document, ObjectSeed(kind))?)]),
        None => Ok(Vec::new()),
    }
}

/// The kind of `head` if this crate models it; `None` (logged) for other kinds.
fn modelled_kind(head: &Head, at: Position, prefix: &str) -> Result<Option<Kind>, DocumentError> {
    let Some(name) = head.kind.as_deref() else {
        let message = "missing: not a Kubernetes object";
        return Err(DocumentError::at(at, format!("{prefix}kind"), message));
    };
    let api_version = head.api_version.as_deref().unwrap_or_default();
    let Some(kind) = Kind::from_name(name) else {
        tracing::debug!(
            kind = name,
            api_version,
            "skipping a kind cluster-state does not use"
        );
        return Ok(None);
    };
    if api_version == kind.api_version() {
        Ok(Some(kind))
    } else if api_group(api_version) == api_group(kind.api_version()) {
        let message = format!(
            "{name} {api_version:?} is not supported: use {}",
            kind.api_version()
        );
        Err(DocumentError::at(
            at,
            format!("{prefix}apiVersion"),
            message,
        ))
    } else {
        tracing::debug!(
            kind = name,
            api_version,
            "skipping a kind of another API group"
        );
        Ok(None)
    }
}

/// `apps` for `apps/v1`, the empty core group for `v1`.
fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Reads `document` with `seed`, recording the path of the field an error is about.
fn read<'de, S: DeserializeSeed<'de>>(
    document: &'de str,
    seed: S,
) -> Result<S::Value, DocumentError> {
    let mut field = String::new();
    serde_saphyr::with_deserializer_from_str_with_options(document, options(), |deserializer| {
        let mut track = serde_path_to_error::Track::new();
        let tracked = serde_path_to_error::Deserializer::new(deserializer, &mut track);
        seed.deserialize(tracked).inspect_err(|_| {
            field = track.path().to_string();
        })
    })
    .map_err(|error| DocumentError::yaml(&error, field))
}

/// Reads one object of a known kind.
struct ObjectSeed(Kind);

impl<'de> DeserializeSeed<'de> for ObjectSeed {
    type Value = Object;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Object, D::Error> {
        self.0.deserialize_object(deserializer)
    }
}

/// Reads the `items` of a `List` whose item kinds are known (`None`: skip the item).
struct ListSeed<'a>(&'a [Option<Kind>]);

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Vec<Option<Object>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Vec<Option<Object>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a List")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                items = map.next_value_seed(ItemsSeed(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(items)
    }
}

struct ItemsSeed<'a>(&'a [Option<Kind>]);

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = Vec<Option<Object>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = Vec<Option<Object>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut objects = Vec::with_capacity(self.0.len());
        for kind in self.0 {
            let object = match kind {
                Some(kind) => seq.next_element_seed(ObjectSeed(*kind))?,
                None => {
                    seq.next_element::<IgnoredAny>()?;
                    None
                }
            };
            objects.push(object);
        }
        Ok(objects)
    }
}

/// Defaults the namespace of an object: `default` for a namespaced kind, none for a
/// cluster-scoped one.
fn normalise(mut object: Object) -> Object {
    let namespaced = object.kind().is_namespaced();
    let meta = object.metadata_mut();
    if !namespaced {
        meta.namespace = None;
    } else if meta.namespace.as_deref().unwrap_or_default().is_empty() {
        meta.namespace = Some("default".to_owned());
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Object>, ManifestError> {
        parse_manifest(Path::new("m.yaml"), text)
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    fn keys(objects: &[Object]) -> Vec<String> {
        objects
            .iter()
            .map(|o| format!("{} {}", o.kind(), o.key()))
            .collect()
    }

    #[test]
    fn reads_every_document_and_list_item_and_skips_other_kinds() {
        let text = "\
--- # services
apiVersion: v1
kind: Service
metadata: {name: a}
spec: {ports: [{port: 80}]}
---
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: skipped}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b, namespace: kube-system}
- apiVersion: v1
  kind: ReplicationController
  metadata: {name: skipped}
- {apiVersion: v1, kind: Namespace, metadata: {name: c, namespace: ignored}}
";
        let objects = parse(text).unwrap();
        assert_eq!(
            keys(&objects),
            [
                "Service default/a",
                "ConfigMap kube-system/b",
                "Namespace c"
            ]
        );
    }

    #[test]
    fn reads_json() {
        let text = r#"{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}}"#;
        assert_eq!(keys(&parse(text).unwrap()), ["IngressClass nginx"]);
    }

    #[test]
    fn a_bad_field_is_reported_with_its_line_column_and_path() {
        let text = "\
apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: http
";
        assert_eq!(error(text), "m.yaml:11:11: spec.ports[0].port: invalid i32");
    }

    #[test]
    fn bad_yaml_is_reported_with_its_line() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a\n";
        let message = error(text);
        assert!(message.starts_with("m.yaml:4:"), "{message}");
        assert!(message.contains("unclosed bracket"), "{message}");
    }

    #[test]
    fn a_bad_list_item_is_reported_with_its_index() {
        let text = "\
kind: List
apiVersion: v1
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
  data: {k: [1]}
";
        let message = error(text);
        assert!(message.starts_with("m.yaml:7:"), "{message}");
        assert!(message.contains(": items[0].data.k: "), "{message}");
    }

    #[test]
    fn missing_required_fields_are_reported_at_their_object() {
        let no_name = "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: Secret\n";
        assert_eq!(
            error(no_name),
            "m.yaml:1:1: metadata.name: Required value: name or generateName is required \
             (ConfigMap default/ is invalid)"
        );
        let no_port = "
apiVersion: v1
kind: Service
metadata: {name: a}
spec:
  ports: [{name: http, targetPort: 80}]
";
        assert_eq!(
            error(no_port),
            "m.yaml:2:1: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, \
             inclusive (Service default/a is invalid)"
        );
        let no_path_type = "
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: a}
spec:
  rules:
  - http:
      paths:
      - path: /
        backend: {service: {name: web, port: {number: 80}}}
";
        assert_eq!(
            error(no_path_type),
            "m.yaml:2:1: spec.rules[0].http.paths[0].pathType: Required value: \
             pathType must be specified (Ingress default/a is invalid)"
        );
        let no_key = "
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata: {name: a}
stringData: {tls.crt: x}
";
        assert_eq!(
            error(no_key),
            "m.yaml:2:1: data[tls.key]: Required value (Secret default/a is invalid)"
        );
        let no_address_type = "
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: a}
endpoints: []
";
        assert_eq!(
            error(no_address_type),
            "m.yaml:2:1: addressType: Required value (EndpointSlice default/a is invalid)"
        );
    }

    #[test]
    fn each_object_is_validated_on_its_own_at_its_line() {
        let text = "\
kind: List
apiVersion: v1
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: Shop}
- {apiVersion: v1, kind: Namespace, metadata: {name: shop}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80, protocol: HTTP}]}
";
        let path = Path::new("m.yaml");
        let read = read_objects(path, text).unwrap();
        let outcome: Vec<_> = read
            .iter()
            .map(|read| {
                (
                    read.object.key().to_string(),
                    read.start.line,
                    read.invalid.is_some(),
                )
            })
            .collect();
        assert_eq!(
            outcome,
            [
                ("Shop".to_owned(), 4, true),
                ("shop".to_owned(), 7, false),
                ("shop/web".to_owned(), 9, true)
            ]
        );
        let errors: Vec<_> = read[2]
            .errors(path, "is left out")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errors,
            [
                "m.yaml:9:1: spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \
              \"SCTP\", \"TCP\", \"UDP\" (Service shop/web is left out)"
            ]
        );
        assert!(read[1].errors(path, "is left out").is_empty());
    }

    #[test]
    fn an_invalid_name_is_shown_escaped_and_cut() {
        let name = format!("a\\nb{}", "c".repeat(200));
        let text = format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: \"{name}\"}}\n");
        let error = parse(&text).unwrap_err().to_string();
        assert!(!error.contains('\n'), "{error}");
        assert!(
            error.ends_with(&format!("(Namespace a\\nb{}… is invalid)", "c".repeat(125))),
            "{error}"
        );
    }

    #[test]
    fn kinds_are_checked() {
        assert_eq!(
            error("apiVersion: v1\nmetadata: {name: a}\n"),
            "m.yaml:1:1: kind: missing: not a Kubernetes object"
        );
        assert_eq!(
            error("apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: a}\n"),
            "m.yaml:1:1: apiVersion: Ingress \"networking.k8s.io/v1beta1\" is not supported: \
             use networking.k8s.io/v1"
        );
        // Knative's Service is another kind that happens to share the name.
        let knative = "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: a}\n";
        assert!(parse(knative).unwrap().is_empty());
        assert!(parse("").unwrap().is_empty());
        assert!(parse("# only a comment\n---\n").unwrap().is_empty());
    }

    #[test]
    fn messages_are_one_printable_line() {
        assert_eq!(
            escape_controls("bad \"a\u{1b}[31m\nb\""),
            "bad \"a\\u{1b}[31m\\nb\""
        );
    }

    #[test]
    fn documents_split_at_separator_lines_only() {
        let text = "a: 1\n---\nb: |\n  ---x\n--- # c\nc: 3";
        let documents: Vec<_> = documents(text).collect();
        assert_eq!(
            documents,
            [(0, "a: 1\n"), (2, "b: |\n  ---x\n"), (5, "c: 3")]
        );
    }
}
