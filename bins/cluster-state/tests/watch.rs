//! The manifest source watching a temporary folder: create, edit, rename, delete, a
//! half-written file, a ConfigMap volume's `..data` swap, and status writes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cluster_state::k8s::api::networking::v1::{
    IngressLoadBalancerIngress, IngressLoadBalancerStatus,
};
use cluster_state::{Kind, ObjectRef, Snapshot, Source, Status, StatusError};
use tokio::sync::watch;

/// Liveness only: how long a change may take to show up before the test fails.
const PATIENCE: Duration = Duration::from_secs(20);

fn config_map(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{v: {value:?}}}\n")
}

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The ConfigMaps of a snapshot as `name=value`.
fn config_maps(snapshot: &Snapshot) -> BTreeSet<String> {
    snapshot
        .config_maps
        .iter()
        .map(|(key, map)| format!("{}={}", key.name, map.data.as_ref().unwrap()["v"]))
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|item| item.to_string()).collect()
}

/// Waits for a snapshot that satisfies `done`, checking every snapshot seen on the way with
/// `consistent`.
async fn wait_for(
    snapshots: &mut watch::Receiver<Arc<Snapshot>>,
    consistent: impl Fn(&Snapshot) -> bool,
    done: impl Fn(&Snapshot) -> bool,
) -> Arc<Snapshot> {
    let waited = tokio::time::timeout(PATIENCE, async {
        loop {
            let snapshot = snapshots.borrow_and_update().clone();
            assert!(
                consistent(&snapshot),
                "inconsistent snapshot: {:?}",
                config_maps(&snapshot)
            );
            if done(&snapshot) {
                return snapshot;
            }
            snapshots.changed().await.unwrap();
        }
    })
    .await;
    waited.unwrap_or_else(|_| {
        panic!(
            "no such snapshot; last: {:?}",
            config_maps(&snapshots.borrow())
        )
    })
}

/// Writes a marker file and waits until it shows: by then every earlier change was read.
async fn settle(dir: &Path, snapshots: &mut watch::Receiver<Arc<Snapshot>>, marker: &str) {
    write(
        dir,
        &format!("{marker}.yaml"),
        &config_map(marker, "marker"),
    );
    let has_marker = |s: &Snapshot| {
        s.config_maps
            .contains_key(&ObjectRef::new("default", marker))
    };
    wait_for(snapshots, |_| true, has_marker).await;
}

async fn start(dir: &Path) -> (Source, watch::Receiver<Arc<Snapshot>>) {
    let source = Source::manifests(dir, Kind::ALL, Duration::from_millis(50))
        .await
        .unwrap();
    let snapshots = source.snapshots();
    (source, snapshots)
}

#[tokio::test]
async fn create_edit_rename_and_delete_publish_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", &config_map("a", "1"));
    let (_source, mut snapshots) = start(dir.path()).await;
    let first = snapshots.borrow_and_update().clone();
    assert_eq!((first.revision, config_maps(&first)), (1, set(&["a=1"])));

    write(dir.path(), "sub/b.yml", &config_map("b", "1"));
    let created = wait_for(&mut snapshots, |_| true, |s| s.config_maps.len() == 2).await;
    assert_eq!(config_maps(&created), set(&["a=1", "b=1"]));
    let changed: Vec<_> = created
        .changes
        .iter()
        .map(|(k, key)| format!("{k} {key}"))
        .collect();
    assert_eq!(changed, ["ConfigMap default/b"]);

    write(dir.path(), "a.yaml", &config_map("a", "2"));
    let edited = wait_for(&mut snapshots, |_| true, |s| config_maps(s).contains("a=2")).await;
    assert_eq!(config_maps(&edited), set(&["a=2", "b=1"]));
    assert!(
        edited
            .changes
            .contains(Kind::ConfigMap, &ObjectRef::new("default", "a"))
    );
    assert_eq!(edited.changes.len(), 1);

    // A rename within the folder changes no object: never a snapshot without `a`.
    std::fs::rename(
        dir.path().join("a.yaml"),
        dir.path().join("renamed.json.yaml"),
    )
    .unwrap();
    let before = edited.revision;
    settle(dir.path(), &mut snapshots, "m1").await;
    let settled = wait_for(&mut snapshots, |s| config_maps(s).contains("a=2"), |_| true).await;
    assert_eq!(settled.revision, before + 1, "only the marker changed");

    // Renamed away from the manifest extensions: gone.
    std::fs::rename(
        dir.path().join("renamed.json.yaml"),
        dir.path().join("a.bak"),
    )
    .unwrap();
    let renamed_away = wait_for(&mut snapshots, |_| true, |s| s.config_maps.len() == 2).await;
    assert_eq!(config_maps(&renamed_away), set(&["b=1", "m1=marker"]));

    std::fs::remove_file(dir.path().join("sub/b.yml")).unwrap();
    let deleted = wait_for(&mut snapshots, |_| true, |s| s.config_maps.len() == 1).await;
    let changed: Vec<_> = deleted
        .changes
        .of(Kind::ConfigMap)
        .map(|k| k.name.clone())
        .collect();
    assert_eq!(changed, ["b"]);

    std::fs::remove_dir_all(dir.path().join("sub")).unwrap();
    std::fs::remove_file(dir.path().join("m1.yaml")).unwrap();
    wait_for(&mut snapshots, |_| true, |s| s.config_maps.is_empty()).await;
}

#[tokio::test]
async fn a_half_written_file_keeps_its_last_good_objects() {
    let dir = tempfile::tempdir().unwrap();
    let both = format!("{}---\n{}", config_map("a", "1"), config_map("b", "1"));
    write(dir.path(), "ab.yaml", &both);
    write(dir.path(), "c.yaml", &config_map("c", "1"));
    let (source, mut snapshots) = start(dir.path()).await;
    assert_eq!(
        config_maps(&snapshots.borrow_and_update()),
        set(&["a=1", "b=1", "c=1"])
    );

    // Cut in the middle of the second document, as an editor's non-atomic save may leave it.
    let edited = format!("{}---\n{}", config_map("a", "2"), config_map("b", "2"));
    let half = &edited[..edited.len() - 12];
    write(dir.path(), "ab.yaml", half);
    write(dir.path(), "c.yaml", &config_map("c", "2"));
    let last_good = |s: &Snapshot| {
        let maps = config_maps(s);
        maps.contains("a=1") && maps.contains("b=1")
    };
    wait_for(&mut snapshots, last_good, |s| {
        config_maps(s).contains("c=2")
    })
    .await;
    settle(dir.path(), &mut snapshots, "m").await;
    assert!(
        last_good(&snapshots.borrow()),
        "the bad edit removed nothing"
    );

    write(dir.path(), "ab.yaml", &edited);
    let fixed = wait_for(&mut snapshots, |_| true, |s| config_maps(s).contains("b=2")).await;
    assert_eq!(config_maps(&fixed), set(&["a=2", "b=2", "c=2", "m=marker"]));
    assert!(common::metrics(&source).contains("cluster_state_rejected_manifest_files 0\n"));

    // A file that was never good contributes nothing, and hides nothing else.
    write(
        dir.path(),
        "new.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n",
    );
    settle(dir.path(), &mut snapshots, "m2").await;
    assert_eq!(snapshots.borrow().config_maps.len(), 5);
}

#[cfg(unix)]
#[tokio::test]
async fn a_configmap_volume_update_is_seen() {
    use std::os::unix::fs::symlink;

    // The kubelet's layout: visible symlinks into `..data`, itself a symlink to a timestamped
    // folder that an update replaces by renaming a new `..data_tmp` symlink over `..data`.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "..2026_11_30_08_00_00.1/cm.yaml",
        &config_map("a", "1"),
    );
    symlink("..2026_11_30_08_00_00.1", dir.path().join("..data")).unwrap();
    symlink("..data/cm.yaml", dir.path().join("cm.yaml")).unwrap();
    let (_source, mut snapshots) = start(dir.path()).await;
    assert_eq!(config_maps(&snapshots.borrow_and_update()), set(&["a=1"]));

    write(
        dir.path(),
        "..2026_11_30_08_05_00.2/cm.yaml",
        &config_map("a", "2"),
    );
    symlink("..2026_11_30_08_05_00.2", dir.path().join("..data_tmp")).unwrap();
    std::fs::rename(dir.path().join("..data_tmp"), dir.path().join("..data")).unwrap();
    std::fs::remove_dir_all(dir.path().join("..2026_11_30_08_00_00.1")).unwrap();
    let swapped = wait_for(
        &mut snapshots,
        |s| s.config_maps.len() == 1,
        |s| config_maps(s).contains("a=2"),
    )
    .await;
    assert_eq!(swapped.changes.len(), 1);
}

#[tokio::test]
async fn ingress_status_goes_to_a_status_file_and_into_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let ingress = "
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: shop}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
";
    write(dir.path(), "ingress.yaml", ingress);
    let (source, mut snapshots) = start(dir.path()).await;
    let key = ObjectRef::new("shop", "shop");
    let status = IngressLoadBalancerStatus {
        ingress: Some(vec![IngressLoadBalancerIngress {
            ip: Some("192.0.2.10".into()),
            ..IngressLoadBalancerIngress::default()
        }]),
    };
    source
        .write_status(&key, Status::Ingress(status.clone()))
        .await
        .unwrap();
    let with_status = snapshots.borrow_and_update().clone();
    assert_eq!(with_status.revision, 2);
    assert!(with_status.changes.contains(Kind::Ingress, &key));
    let written = with_status.ingresses[&key].status.as_ref().unwrap();
    assert_eq!(written.load_balancer.as_ref(), Some(&status));
    let file = dir.path().join(".status/ingresses/shop/shop.yaml");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("192.0.2.10")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ingress.yaml")).unwrap(),
        ingress
    );

    // The same status again changes nothing; the status folder does not trigger reloads.
    source
        .write_status(&key, Status::Ingress(status.clone()))
        .await
        .unwrap();
    settle(dir.path(), &mut snapshots, "m").await;
    assert_eq!(
        snapshots.borrow().revision,
        3,
        "only the marker was published"
    );

    let missing = ObjectRef::new("shop", "nope");
    let error = source
        .write_status(&missing, Status::Ingress(status.clone()))
        .await
        .unwrap_err();
    assert!(matches!(error, StatusError::NotFound { .. }), "{error}");
    assert_eq!(error.to_string(), "Ingress shop/nope does not exist");

    // A restarted source reads the status back.
    drop(source);
    let (restarted, _) = start(dir.path()).await;
    let again = restarted.current();
    assert_eq!(
        again.ingresses[&key].status,
        with_status.ingresses[&key].status
    );
}

/// Liveness only: how long the watcher may take to start or to read a change in a folder of
/// hostile entries; a hang fails the test instead of blocking it.
const HOSTILE_PATIENCE: Duration = Duration::from_secs(30);

#[cfg(unix)]
#[tokio::test]
async fn fifos_sockets_devices_and_symlink_loops_neither_block_nor_hide_the_other_files() {
    use std::os::unix::fs::symlink;
    use std::os::unix::net::UnixListener;
    use std::time::Instant;

    let mkfifo = |path: &Path| {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.unwrap().success());
    };
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", &config_map("a", "1"));
    write(dir.path(), "sub/b.yaml", &config_map("b", "1"));
    mkfifo(&dir.path().join("fifo.yaml"));
    let _socket = UnixListener::bind(dir.path().join("socket.yaml")).unwrap();
    symlink("/dev/null", dir.path().join("null.yaml")).unwrap();
    symlink("/dev/zero", dir.path().join("zero.yaml")).unwrap();
    for link in ["loop1", "loop2", "loop3"] {
        symlink(".", dir.path().join(link)).unwrap();
        symlink("..", dir.path().join("sub").join(link)).unwrap();
    }

    let started = tokio::time::timeout(HOSTILE_PATIENCE, start(dir.path())).await;
    let (source, mut snapshots) = started.expect("the source starts despite the hostile entries");
    assert_eq!(
        config_maps(&snapshots.borrow_and_update()),
        set(&["a=1", "b=1"])
    );

    // Later changes still apply, also a FIFO appearing (and one replacing a good file, whose
    // objects go as if it had been deleted).
    mkfifo(&dir.path().join("sub/late-fifo.yml"));
    std::fs::remove_file(dir.path().join("sub/b.yaml")).unwrap();
    mkfifo(&dir.path().join("sub/b.yaml"));
    write(dir.path(), "a.yaml", &config_map("a", "2"));
    let changed = tokio::time::timeout(
        HOSTILE_PATIENCE,
        wait_for(
            &mut snapshots,
            |_| true,
            |s| config_maps(s) == set(&["a=2"]),
        ),
    )
    .await;
    changed.expect("later changes are read");
    settle(dir.path(), &mut snapshots, "m").await;
    assert_eq!(config_maps(&snapshots.borrow()), set(&["a=2", "m=marker"]));
    assert!(source.health().healthy(Instant::now()));
}
