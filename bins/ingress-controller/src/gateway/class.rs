//! Which GatewayClasses and Gateways are ours, and the class's own verdicts (semantics S-GC).

use cluster_state::gateway::{Gateway, GatewayClass};
use cluster_state::{ObjectRef, Objects};

use super::{Fault, Settings};

/// Whether `class` names this controller (S-GC.1): `spec.controllerName` equal to the
/// configured name, byte for byte.
pub fn is_ours(class: &GatewayClass, settings: &Settings) -> bool {
    class.spec.controller_name == settings.controller_name
}

/// The class of `gateway` when that class exists and is ours (S-GC.5: a Gateway of a missing
/// or foreign class is not ours and is left alone).
pub fn class_of<'a>(
    gateway: &Gateway,
    classes: &'a Objects<GatewayClass>,
    settings: &Settings,
) -> Option<&'a GatewayClass> {
    classes
        .get(&ObjectRef::cluster(
            gateway.spec.gateway_class_name.as_str(),
        ))
        .map(AsRef::as_ref)
        .filter(|class| is_ours(class, settings))
}

/// The class's `Accepted` (S-GC.2): we support no parameters kind, so any `parametersRef`
/// refuses the class.
///
/// # Errors
///
/// `InvalidParameters` when `parametersRef` is set.
pub fn accepted(class: &GatewayClass) -> Result<(), Fault> {
    match &class.spec.parameters_ref {
        None => Ok(()),
        Some(reference) => Err(Fault::new(
            "InvalidParameters",
            format!(
                "parametersRef {}/{} {}: this controller supports no parameters",
                reference.group, reference.kind, reference.name
            ),
        )),
    }
}

/// The class's `SupportedVersion` (S-GC.3): the Gateway API CRDs' bundle version, when the
/// source knows it, must be v1.5.x or v1.6.x; without CRDs (manifests) the types' own version
/// (v1.6.1) is the one in use.
///
/// # Errors
///
/// `UnsupportedVersion` for any other bundle version.
pub fn supported_version(settings: &Settings) -> Result<(), Fault> {
    match settings.bundle_version.as_deref() {
        None => Ok(()),
        Some(version) if version.starts_with("v1.5.") || version.starts_with("v1.6.") => Ok(()),
        Some(version) => Err(Fault::new(
            "UnsupportedVersion",
            format!("Gateway API bundle version {version} is not v1.5.x or v1.6.x"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cluster_state::gateway::{GatewayClassParametersReference, GatewayClassSpec, GatewaySpec};

    use super::*;

    fn class(controller: &str) -> GatewayClass {
        GatewayClass {
            spec: GatewayClassSpec {
                controller_name: controller.into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn s_gc_1_ours_by_exact_controller_name() {
        let settings = Settings::default();
        assert!(is_ours(
            &class("kube-node-net.io/gateway-controller"),
            &settings
        ));
        assert!(!is_ours(
            &class("kube-node-net.io/gateway-controller/"),
            &settings
        ));
        assert!(!is_ours(&class("example.com/other"), &settings));
    }

    #[test]
    fn s_gc_5_gateway_of_a_missing_or_foreign_class_is_not_ours() {
        let settings = Settings::default();
        let classes = Objects::from([
            (
                ObjectRef::cluster("ours"),
                Arc::new(class(&settings.controller_name)),
            ),
            (
                ObjectRef::cluster("theirs"),
                Arc::new(class("example.com/other")),
            ),
        ]);
        let gateway = |name: &str| Gateway {
            spec: GatewaySpec {
                gateway_class_name: name.into(),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(class_of(&gateway("ours"), &classes, &settings).is_some());
        assert!(class_of(&gateway("theirs"), &classes, &settings).is_none());
        assert!(class_of(&gateway("missing"), &classes, &settings).is_none());
    }

    #[test]
    fn s_gc_2_parameters_ref_is_refused() {
        let mut with = class("x/y");
        assert_eq!(accepted(&with), Ok(()));
        with.spec.parameters_ref = Some(GatewayClassParametersReference {
            group: "example.com".into(),
            kind: "Params".into(),
            name: "p".into(),
            namespace: None,
        });
        assert_eq!(accepted(&with).unwrap_err().reason, "InvalidParameters");
    }

    #[test]
    fn s_gc_3_supported_versions() {
        let mut settings = Settings::default();
        assert_eq!(supported_version(&settings), Ok(()));
        settings.bundle_version = Some("v1.6.1".into());
        assert_eq!(supported_version(&settings), Ok(()));
        settings.bundle_version = Some("v1.5.0".into());
        assert_eq!(supported_version(&settings), Ok(()));
        settings.bundle_version = Some("v1.4.0".into());
        let fault = supported_version(&settings).unwrap_err();
        assert_eq!(fault.reason, "UnsupportedVersion");
    }
}
