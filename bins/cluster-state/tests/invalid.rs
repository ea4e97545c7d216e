//! Issue 28: objects the API server would refuse are left out of the manifest source's
//! snapshots, each reported with its file, line and field, beside the valid objects of the same
//! file; an edit that makes a published object invalid keeps its previous version.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cluster_state::{Kind, ObjectRef, Snapshot, Source};
use tokio::sync::watch;

/// Liveness only: how long a change may take to show up before the test fails.
const PATIENCE: Duration = Duration::from_secs(20);

/// A port name that, written unescaped into iptables-restore input, adds a rule.
const PAYLOAD: &str =
    "x\n-A KUBE-SERVICES -p tcp -d 10.96.0.1 --dport 443 -j DNAT --to-destination 6.6.6.6:443\n#";

/// The log lines of the whole test binary.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn install() -> Logs {
        let logs = Logs::default();
        let writer = logs.clone();
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .init();
        logs
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn manifest(web_port: u16, value: &str) -> String {
    let payload = serde_json::to_string(PAYLOAD).unwrap();
    format!(
        "\
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: shop}}
spec: {{ports: [{{name: http, port: {web_port}}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: evil, namespace: shop}}
spec:
  ports:
  - name: {payload}
    port: 443
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: web-1, namespace: shop}}
addressType: IPv4
endpoints: [{{addresses: [10.1.0.5]}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: evil-1, namespace: shop}}
addressType: IPv4
endpoints: [{{addresses: [127.0.0.1]}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: marker, namespace: shop}}
data: {{v: {value}}}
"
    )
}

fn marker(snapshot: &Snapshot) -> Option<String> {
    let map = snapshot
        .config_maps
        .get(&ObjectRef::new("shop", "marker"))?;
    Some(map.data.as_ref()?.get("v")?.clone())
}

async fn wait_for_marker(
    snapshots: &mut watch::Receiver<Arc<Snapshot>>,
    value: &str,
) -> Arc<Snapshot> {
    let waited = tokio::time::timeout(PATIENCE, async {
        loop {
            let snapshot = snapshots.borrow_and_update().clone();
            if marker(&snapshot).as_deref() == Some(value) {
                return snapshot;
            }
            snapshots.changed().await.unwrap();
        }
    });
    waited.await.expect("the edit shows")
}

fn web_port(snapshot: &Snapshot) -> i32 {
    let web = &snapshot.services[&ObjectRef::new("shop", "web")];
    web.spec.as_ref().unwrap().ports.as_ref().unwrap()[0].port
}

#[tokio::test]
async fn invalid_objects_are_left_out_with_file_line_and_field() {
    let logs = Logs::install();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().canonicalize().unwrap().join("shop.yaml");
    std::fs::write(&file, manifest(80, "1")).unwrap();
    let source = Source::manifests(dir.path(), Kind::ALL, Duration::from_millis(50))
        .await
        .unwrap();
    let mut snapshots = source.snapshots();
    let first = wait_for_marker(&mut snapshots, "1").await;

    // The valid objects beside the invalid ones are published; the invalid ones are not.
    let services: Vec<_> = first.services.keys().map(ToString::to_string).collect();
    assert_eq!(services, ["shop/web"]);
    let slices: Vec<_> = first
        .endpoint_slices
        .keys()
        .map(ToString::to_string)
        .collect();
    assert_eq!(slices, ["shop/web-1"]);
    assert!(common::metrics(&source).contains("cluster_state_invalid_objects 2\n"));

    // Each is reported at the line where it starts, with the field, in one escaped line.
    let text = logs.text();
    let at = |line: u32| format!("{}:{line}:1: ", file.display());
    let port_name = format!(
        "{}spec.ports[0].name: Invalid value: \"x\\n-A KUBE-SERVICES -p tcp -d 10.96.0.1",
        at(6)
    );
    assert!(text.contains(&port_name), "{text}");
    assert!(text.contains("(Service shop/evil is left out)"), "{text}");
    let loopback = format!(
        "{}endpoints[0].addresses[0]: Invalid value: \"127.0.0.1\": may not be in the loopback \
         range (127.0.0.0/8, ::1/128) (EndpointSlice shop/evil-1 is left out)",
        at(20)
    );
    assert!(text.contains(&loopback), "{text}");
    assert!(
        !text.lines().any(|line| line.starts_with("-A ")),
        "no log line was forged: {text}"
    );

    // An edit that makes `web` invalid keeps its previous version, as the API server would
    // have refused the update; the rest of the edit applies.
    std::fs::write(&file, manifest(0, "2")).unwrap();
    let edited = wait_for_marker(&mut snapshots, "2").await;
    assert_eq!(web_port(&edited), 80);
    let text = logs.text();
    let kept = format!(
        "{}spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive \
         (Service shop/web is left out: its previous version stays)",
        at(1)
    );
    assert!(text.contains(&kept), "{text}");
    assert!(common::metrics(&source).contains("cluster_state_invalid_objects 3\n"));

    // Fixed, it is published again.
    std::fs::write(&file, manifest(8080, "3")).unwrap();
    let fixed = wait_for_marker(&mut snapshots, "3").await;
    assert_eq!(web_port(&fixed), 8080);
    assert!(common::metrics(&source).contains("cluster_state_invalid_objects 2\n"));
}

#[test]
fn parse_manifest_fails_on_the_first_invalid_object() {
    let text = manifest(80, "1");
    let error = cluster_state::parse_manifest(Path::new("shop.yaml"), &text).unwrap_err();
    assert_eq!(error.field, "spec.ports[0].name");
    assert_eq!(error.position.map(|p| p.line), Some(6));
}
