//! The size limits of a manifest: a `List` of 20,000 Services (about 8 MB) is read, and a
//! document over a limit is refused with the limit named (the file size limit: `folder.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fmt::Write as _;
use std::path::Path;

use cluster_state::{Kind, MAX_YAML_DEPTH, Source, parse_manifest};

/// A `List` of `count` Services, each about 400 bytes, as `kubectl get svc -A -o yaml` gives.
fn service_list(count: usize) -> String {
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for index in 0..count {
        let (high, low) = (index / 250, index % 250);
        write!(
            text,
            "- apiVersion: v1
  kind: Service
  metadata:
    name: service-{index}
    namespace: team-{high}
    labels: {{app: service-{index}, tier: backend}}
  spec:
    type: ClusterIP
    clusterIP: 10.96.{high}.{low}
    selector: {{app: service-{index}}}
    ports:
    - {{name: http, port: 80, protocol: TCP, targetPort: 8080}}
    - {{name: metrics, port: 9090, protocol: TCP, targetPort: 9090}}
"
        )
        .unwrap();
    }
    text
}

#[test]
fn a_document_over_a_limit_is_refused_with_the_limit_named() {
    // Nested one level deeper than the limit allows, under a field nobody reads.
    let depth = MAX_YAML_DEPTH + 1;
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: a}}\nx: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let error = parse_manifest(Path::new("deep.yaml"), &text).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("deep.yaml:4:"), "{message}");
    assert!(
        message.ends_with(
            ": more than 64 levels of nesting in one document, the limit of a manifest document: \
             split it into several documents (`---`) or files"
        ),
        "{message}"
    );
}

/// The watcher reads a `List` of 20,000 Services, as the API server would return it (slow in
/// a debug build: about a minute on a loaded 2-core machine, some seconds in release).
#[tokio::test]
async fn the_manifest_source_reads_a_list_of_20000_services() {
    let dir = tempfile::tempdir().unwrap();
    let text = service_list(20_000);
    assert!(text.len() > 7 << 20, "{} bytes", text.len());
    std::fs::write(dir.path().join("services.yaml"), text).unwrap();
    let source = Source::manifests(dir.path(), &[Kind::Service], std::time::Duration::ZERO)
        .await
        .unwrap();
    let snapshot = source.current();
    assert_eq!(snapshot.services.len(), 20_000);
    assert!(common::metrics(&source).contains("cluster_state_rejected_manifest_files 0\n"));
}
