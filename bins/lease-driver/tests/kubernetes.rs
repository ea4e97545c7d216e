//! The Kubernetes Lease store against cluster-state's fake API server on 127.0.0.1, which keeps
//! the Lease as the API server does (409 on a stale `resourceVersion`): the store's
//! compare-and-swap, then two drivers electing one leader and handing over on shutdown.

#![cfg(feature = "kubernetes")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use cluster_state::LeaseClient;
use cluster_state::fake_api::{FakeApi, Script};
use leader_lease::{Config, MicroTime, Record};
use lease_driver::{Driver, KubernetesStore, RequestError, Store};
use tokio::sync::oneshot;

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

/// Liveness only: a takeover needs at most a lease duration plus jitter.
const PATIENCE: Duration = Duration::from_secs(20);

async fn fake_api() -> FakeApi {
    let mut script = Script::default();
    script.store(LEASES);
    FakeApi::start(script).await.unwrap()
}

fn store(api: &FakeApi) -> KubernetesStore {
    KubernetesStore::new(LeaseClient::new(
        api.client().unwrap(),
        "kube-system",
        "demo",
    ))
}

fn config(id: &str) -> Config {
    Config::new(
        id,
        leader_lease::Duration::from_secs(2),
        leader_lease::Duration::from_secs(1),
        leader_lease::Duration::from_millis(200),
    )
    .unwrap()
}

fn record(holder: &str) -> Record {
    let mut record = Record::default();
    record.holder_identity = holder.try_into().unwrap();
    record.lease_duration_seconds = 15;
    record.acquire_time = Some(MicroTime::from_unix_micros(1_796_032_800_000_000));
    record.renew_time = record.acquire_time;
    record
}

#[tokio::test]
async fn the_lease_is_a_compare_and_swap_register() {
    let api = fake_api().await;
    let store = store(&api);
    assert!(store.get().await.unwrap().is_none());
    assert!(matches!(
        store.update(&record("a"), leader_lease::Version(1)).await,
        Err(RequestError::NotFound)
    ));

    let first = store.create(&record("a")).await.unwrap();
    assert!(matches!(
        store.create(&record("b")).await,
        Err(RequestError::Conflict)
    ));
    let stored = store.get().await.unwrap().unwrap();
    assert_eq!((stored.record, stored.version), (record("a"), first));

    let second = store.update(&record("b"), first).await.unwrap();
    assert!(second > first, "versions grow: {first} then {second}");
    assert!(matches!(
        store.update(&record("c"), first).await,
        Err(RequestError::Conflict)
    ));
    let lease = api.object(&format!("{LEASES}/demo")).unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "b");
    assert_eq!(lease["spec"]["renewTime"], "2026-11-30T10:00:00.000000Z");
}

#[tokio::test]
async fn two_drivers_elect_one_leader_and_hand_over_on_shutdown() {
    let api = fake_api().await;
    let mut candidates = Vec::new();
    for id in ["a", "b"] {
        let driver = Driver::new(config(id), store(&api));
        let status = driver.status();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(driver.run(
            async move {
                let _ = stopped.await;
            },
            |_| {},
        ));
        candidates.push((id, status, stop, task));
    }
    let leader = tokio::time::timeout(PATIENCE, async {
        loop {
            for (id, status, ..) in &candidates {
                if status.borrow().is_leading(tokio::time::Instant::now()) {
                    return *id;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("someone leads");

    let index = candidates
        .iter()
        .position(|(id, ..)| *id == leader)
        .unwrap();
    let (_, _, stop, task) = candidates.remove(index);
    stop.send(()).unwrap();
    assert!(task.await.unwrap().is_released());
    let (other, mut status, _stop, _task) = candidates.remove(0);
    let takeover = status.wait_for(|s| s.term.is_some());
    tokio::time::timeout(PATIENCE, takeover)
        .await
        .expect("the other takes over")
        .unwrap();
    let lease = api.object(&format!("{LEASES}/demo")).unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], other);
}
