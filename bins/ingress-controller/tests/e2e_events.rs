//! Problems reported on the Ingress as events, beside the manifests
//! (`.status/events/NAMESPACE/NAME.yaml`): an invalid annotation gives one event while it
//! lasts, however many reconciles; when it comes back after a fix, its event's series counts 2.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use support::{Backends, CLASS, Controller, events, eventually, ingress, service};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_annotation_is_an_event_on_the_ingress_once_while_it_lasts() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["a"]).await;
    let objects = |annotations: &str, path: &str| {
        let mut m = String::from(CLASS);
        m.push_str(&service("ev", "a", &[backends.port("a")]));
        m.push_str(&ingress(
            "ev",
            "web",
            "web.example.com",
            annotations,
            None,
            &[("Prefix", path, "a")],
        ));
        m
    };
    let invalid = "nginx.ingress.kubernetes.io/limit-rps: lots";
    let controller = Controller::start(&objects(invalid, "/")).await;
    let dir = controller.manifests_dir();
    eventually("an event file", || async { !events(&dir, "ev").is_empty() }).await;
    let event = &events(&dir, "ev")[0];
    for expected in [
        "apiVersion: events.k8s.io/v1",
        "kind: Event",
        "type: Warning",
        "reason: InvalidAnnotation",
        "nginx.ingress.kubernetes.io/limit-rps",
        "kind: Ingress",
        "name: web",
    ] {
        assert!(event.contains(expected), "{expected} in {event}");
    }
    // The refused annotation never reaches nginx.conf.
    let conf = std::fs::read_to_string(controller.prefix().join("nginx.conf")).unwrap();
    assert!(!conf.contains("limit_req "), "{conf}");
    // `nginx -t` checked the same model in its private prefix: nothing of it in the running
    // configuration, none of the running files in its own.
    let private = controller.prefix().join("validate");
    let checked = std::fs::read_to_string(private.join("nginx.conf")).unwrap();
    assert!(!conf.contains(&private.display().to_string()));
    assert!(checked.contains(&private.join("nginx.pid").display().to_string()));
    assert!(!checked.contains(&controller.prefix().join("nginx.pid").display().to_string()));

    // Another change, the same problem: no new event.
    controller.update(&objects(invalid, "/v2")).await;
    assert_eq!(
        controller.get("web.example.com", "/v2").await.backend(),
        "a"
    );
    assert_eq!(events(&dir, "ev").len(), 1);
    assert_eq!(
        controller.metric("ingress_controller_events_total").await,
        1.0
    );

    // Fixed, then broken again: a repeat of the same event.
    controller.update(&objects("", "/v3")).await;
    controller.update(&objects(invalid, "/v2")).await;
    eventually("the event's series", || async {
        events(&dir, "ev")
            .first()
            .is_some_and(|e| e.contains("count: 2"))
    })
    .await;
    assert_eq!(events(&dir, "ev").len(), 1);
}
