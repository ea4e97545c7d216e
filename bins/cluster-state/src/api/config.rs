//! A client for the API server of a kubeconfig file, or of the pod's service account.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::SourceError;

/// A client for the current context of `kubeconfig`, or, without one, the in-cluster
/// configuration (the service account token and `KUBERNETES_SERVICE_HOST`).
pub(crate) async fn client(kubeconfig: Option<&Path>) -> Result<Client, SourceError> {
    let config = match kubeconfig {
        Some(path) => {
            let unusable = |error: &dyn std::fmt::Display| {
                SourceError::KubeConfig(format!("kubeconfig {}: {error}", path.display()))
            };
            let file = Kubeconfig::read_from(path).map_err(|error| unusable(&error))?;
            let options = KubeConfigOptions::default();
            let config = Config::from_custom_kubeconfig(file, &options).await;
            config.map_err(|error| unusable(&error))?
        }
        None => Config::incluster().map_err(|error| {
            SourceError::KubeConfig(format!(
                "not in a pod ({error}): pass --manifests DIR or --kubeconfig FILE"
            ))
        })?,
    };
    Client::try_from(config)
        .map_err(|error| SourceError::KubeConfig(format!("cannot build a client: {error}")))
}
