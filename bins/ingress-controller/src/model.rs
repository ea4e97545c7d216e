//! Ingress v1 semantics: the selected Ingresses become servers (one per host), locations (one
//! or two per path) and backends, with every refusal reported per object.
//!
//! Conflicts follow ingress-nginx: Ingresses are taken oldest first (`creationTimestamp`, then
//! `namespace/name`), and the first to claim a host + location, a host's certificate, or a
//! host's default backend keeps it. An Exact path takes the `= /p` location from a Prefix path
//! of the same host whatever their ages: that is the specification's tie-break.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cluster_state::ObjectRef;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::networking::v1::{
    Ingress, IngressBackend, IngressServiceBackend, ServiceBackendPort,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::annotations::{self, Affinity, Annotations, Canary};
use crate::class::Selection;
use crate::endpoints::Index;
use crate::hosts::Host;
use crate::objects::{Objects, key};
use crate::paths::{Kind, LocationKey, PathRule};

/// Everything nginx and its balancer need, built from the objects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    /// One server per host; the catch-all ([`Host::Any`]) first, then by host.
    pub servers: Vec<Server>,
    /// Backends by name (`namespace/service:port`).
    pub backends: BTreeMap<String, Backend>,
    /// Certificates by Secret (`namespace/name`).
    pub certificates: BTreeMap<String, Certificate>,
    /// The Ingresses served, `namespace/name`: primaries oldest first, then canaries (their
    /// status is ours to write).
    pub ingresses: Vec<String>,
    /// The creation time of each primary Ingress served (`namespace/name`): its age when it
    /// claims a location an HTTPRoute claims too (S-IG.1).
    pub ingress_created: BTreeMap<String, Option<Time>>,
    /// What was refused and why, per object.
    pub problems: Vec<Problem>,
    /// The global settings (the `--configmap`, else ingress-nginx's defaults).
    pub global: crate::configmap::Global,
    /// What reading the ConfigMap refused or ignored.
    pub global_notes: crate::configmap::Notes,
    /// The default server's certificate (`--default-ssl-certificate`): the Secret, when it
    /// loads; `Err` with why when it is missing or refused (the generated one serves then).
    pub default_certificate: DefaultCertificate,
    /// What the Gateways of ours serve (their backends and certificates are in
    /// [`Model::backends`] and [`Model::certificates`]). Where each is served, and so which
    /// Gateways the configuration serves: [`crate::gateway::plan::Plan::addresses`].
    pub gateway: crate::gateway::plan::Plan,
}

/// The default server's certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DefaultCertificate {
    /// None named: the generated one (or none at all in `render`).
    #[default]
    Generated,
    /// The named Secret (`namespace/name`), loaded into [`Model::certificates`].
    Secret(String),
    /// The named Secret is missing or refused (why); the generated one serves instead.
    Refused(String),
}

/// One nginx `server`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// The host it answers for.
    pub host: Host,
    /// The Secret (`namespace/name`) whose certificate it presents, if any.
    pub certificate: Option<String>,
    /// Whether it is under an Ingress's `tls` without a usable Secret (none named, missing or
    /// refused): it presents the default certificate then, as ingress-nginx.
    pub default_tls: bool,
    /// Where requests matching no location go.
    pub default_target: Target,
    /// The locations, ordered by key.
    pub locations: Vec<Location>,
}

/// Where a request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Proxied to this backend.
    Backend(String),
    /// Answered 404 by nginx (no default backend).
    NotFound,
}

/// One nginx `location`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The nginx location it becomes.
    pub key: LocationKey,
    /// The rule it implements.
    pub rule: PathRule,
    /// The Ingress it comes from (`namespace/name`).
    pub ingress: String,
    /// Where it sends requests.
    pub target: Target,
    /// Whether plain-HTTP requests are redirected to HTTPS.
    pub ssl_redirect: bool,
    /// The Ingress's annotations.
    pub annotations: Arc<Annotations>,
}

/// What the Lua balancer knows about one backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Backend {
    /// `namespace/service:port`.
    pub name: String,
    /// Ready endpoints, `ip:port` or `[ipv6]:port`, sorted.
    pub endpoints: Vec<String>,
    /// Cookie affinity.
    pub affinity: Option<Affinity>,
    /// `upstream-hash-by` variable.
    pub hash_by: Option<String>,
    /// A canary backend and the rule that sends requests to it.
    pub canary: Option<(String, Canary)>,
}

/// A TLS certificate and key from a Secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Certificate {
    /// PEM certificate chain (`tls.crt`).
    pub cert: Vec<u8>,
    /// PEM private key (`tls.key`).
    pub key: Vec<u8>,
}

impl std::fmt::Debug for Certificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificate")
            .field("cert_bytes", &self.cert.len())
            .field("key", &"<redacted>")
            .finish()
    }
}

/// Something in an Ingress that was refused (and ignored), for the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The Ingress.
    pub ingress: ObjectRef,
    /// What kind of problem (the reason of its Kubernetes event).
    pub reason: Reason,
    /// What was refused and why.
    pub message: String,
}

impl std::fmt::Display for Problem {
    /// `Ingress "namespace/name": message` (the key quoted: it may be an invalid name).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Ingress {:?}: {}",
            self.ingress.to_string(),
            self.message
        )
    }
}

/// What kind of problem an Ingress has, as the reason of its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// An annotation was refused (unknown, or an invalid value).
    InvalidAnnotation,
    /// A field of the Ingress was refused, or lost a conflict to an older Ingress.
    InvalidIngress,
    /// The TLS Secret the Ingress names is missing or refused (its hosts present the default
    /// certificate): the state of another object, not of the Ingress.
    InvalidTlsSecret,
}

impl Reason {
    /// The event reason: `InvalidAnnotation`, `InvalidIngress`, `InvalidTLSSecret`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::InvalidAnnotation => "InvalidAnnotation",
            Reason::InvalidIngress => "InvalidIngress",
            Reason::InvalidTlsSecret => "InvalidTLSSecret",
        }
    }
}

/// A server under construction.
struct Draft {
    certificate: Option<String>,
    default_tls: bool,
    default_target: Option<Target>,
    locations: BTreeMap<LocationKey, Location>,
}

struct Builder<'a> {
    index: Index<'a>,
    /// The time certificates are checked against.
    now: Option<i64>,
    secrets: BTreeMap<String, &'a Secret>,
    servers: BTreeMap<Host, Draft>,
    model: Model,
}

/// Builds the model for the Ingresses `selection` picks out of `objects`.
pub fn build(objects: &Objects, selection: &Selection) -> Model {
    let namespaces = selection.selected_namespaces(&objects.namespaces);
    let mut ingresses: Vec<&Ingress> = objects
        .ingresses
        .values()
        .map(|i| &**i)
        .filter(|i| selection.selects(i, &objects.ingress_classes, namespaces.as_ref()))
        .collect();
    ingresses.sort_by(|a, b| {
        let age = |i: &Ingress| i.metadata.creation_timestamp.as_ref().map(|t| t.0);
        age(a)
            .cmp(&age(b))
            .then_with(|| key(&a.metadata).cmp(&key(&b.metadata)))
    });
    let mut builder = Builder {
        index: Index::new(&objects.services, &objects.endpoint_slices),
        now: objects.now,
        secrets: objects
            .secrets
            .values()
            .map(|s| (key(&s.metadata), &**s))
            .collect(),
        servers: BTreeMap::new(),
        model: Model::default(),
    };
    builder.default_certificate(selection.default_certificate.as_deref());
    if let Some(data) = objects.config_map.as_ref().and_then(|c| c.data.as_ref()) {
        let (global, notes) = crate::configmap::Global::parse(data);
        builder.model.global = global;
        builder.model.global_notes = notes;
    }
    ingresses.retain(|ingress| {
        let meta = &ingress.metadata;
        let valid = [&meta.namespace, &meta.name]
            .iter()
            .all(|n| n.as_deref().is_some_and(crate::hosts::is_dns_name));
        if !valid {
            builder.model.problems.push(Problem {
                ingress: ObjectRef::from_meta(meta),
                reason: Reason::InvalidIngress,
                message: "namespace and name must be DNS names; Ingress ignored".into(),
            });
        }
        valid
    });
    let parsed: Vec<(&Ingress, Arc<Annotations>)> = ingresses
        .into_iter()
        .map(|ingress| {
            let empty = BTreeMap::new();
            let raw = ingress.metadata.annotations.as_ref().unwrap_or(&empty);
            let (annotations, errors) = annotations::parse(raw);
            for error in errors {
                builder.report(ingress, Reason::InvalidAnnotation, error.to_string());
            }
            (ingress, Arc::new(annotations))
        })
        .collect();
    let (canaries, primaries): (Vec<_>, Vec<_>) =
        parsed.into_iter().partition(|(_, a)| a.canary.is_some());
    for (ingress, annotations) in &primaries {
        builder.add_ingress(ingress, annotations);
    }
    for (ingress, _) in &primaries {
        builder.add_tls(ingress);
    }
    for (ingress, annotations) in &canaries {
        builder.add_canary(ingress, annotations);
    }
    builder.add_gateways(objects, &selection.gateway);
    builder.finish()
}

/// nginx answers `/p` with a 301 to `/p/` when a proxying location is named `/p/`, even an
/// exact one. Exact `/p/` without a location for `/p` would do that, where the specification
/// sends `/p` to the rule that matches it, or the default backend: add that location.
fn shield_auto_redirects(draft: &mut Draft) {
    let rules: Vec<PathRule> = draft
        .locations
        .values()
        .map(|l| l.rule.clone())
        .filter(|r| r.kind != Kind::Regex)
        .collect();
    let exposed: Vec<String> = draft
        .locations
        .keys()
        .filter_map(|key| match key {
            LocationKey::Exact(p) if p.len() > 1 && p.ends_with('/') => {
                Some(p.trim_end_matches('/').to_owned())
            }
            _ => None,
        })
        .filter(|p| !p.is_empty() && !draft.locations.contains_key(&LocationKey::Exact(p.clone())))
        .collect();
    for path in exposed {
        let key = LocationKey::Exact(path.clone());
        let chosen = crate::paths::select(&rules, &path)
            .and_then(|rule| draft.locations.values().find(|l| l.rule == *rule))
            .cloned();
        let location = match chosen {
            Some(location) => Location {
                key: key.clone(),
                ..location
            },
            None => Location {
                key: key.clone(),
                rule: PathRule {
                    kind: Kind::Exact,
                    path,
                },
                ingress: String::new(),
                target: draft.default_target.clone().unwrap_or(Target::NotFound),
                ssl_redirect: false,
                annotations: Arc::default(),
            },
        };
        draft.locations.insert(key, location);
    }
}

impl Builder<'_> {
    fn problem(&mut self, ingress: &Ingress, message: String) {
        self.report(ingress, Reason::InvalidIngress, message);
    }

    fn report(&mut self, ingress: &Ingress, reason: Reason, message: String) {
        self.model.problems.push(Problem {
            ingress: ObjectRef::from_meta(&ingress.metadata),
            reason,
            message,
        });
    }

    /// The backend an Ingress backend names, registered with its endpoints; `None` (and a
    /// problem) when it cannot be used.
    fn backend(
        &mut self,
        ingress: &Ingress,
        annotations: &Annotations,
        backend: &IngressBackend,
    ) -> Option<String> {
        let namespace = ingress.metadata.namespace.as_deref().unwrap_or_default();
        let Some(service) = &backend.service else {
            self.problem(
                ingress,
                "resource backends are not supported; only service backends".into(),
            );
            return None;
        };
        match self.index.resolve(namespace, service) {
            Ok((name, endpoints)) => {
                // A balancing policy belongs to the Ingress that asks for it: such an Ingress
                // gets its own variant of the backend, `NAME@namespace/ingress`.
                let policy =
                    annotations.affinity.is_some() || annotations.upstream_hash_by.is_some();
                let name = if policy {
                    format!("{name}@{}", key(&ingress.metadata))
                } else {
                    name
                };
                self.model
                    .backends
                    .entry(name.clone())
                    .or_insert_with(|| Backend {
                        name: name.clone(),
                        endpoints,
                        affinity: annotations.affinity.clone(),
                        hash_by: annotations.upstream_hash_by.clone(),
                        canary: None,
                    });
                Some(name)
            }
            Err(message) => {
                self.problem(ingress, message);
                None
            }
        }
    }

    fn add_ingress(&mut self, ingress: &Ingress, annotations: &Arc<Annotations>) {
        let id = key(&ingress.metadata);
        self.model.ingresses.push(id.clone());
        let created = ingress.metadata.creation_timestamp.clone();
        self.model.ingress_created.insert(id.clone(), created);
        let Some(spec) = &ingress.spec else {
            self.problem(ingress, "no spec".into());
            return;
        };
        let default_target = spec
            .default_backend
            .as_ref()
            .and_then(|b| self.backend(ingress, annotations, b))
            .map(Target::Backend);
        if spec.rules.as_ref().is_none_or(Vec::is_empty) && default_target.is_none() {
            self.problem(
                ingress,
                "an Ingress without rules needs a defaultBackend".into(),
            );
        }
        // The catch-all server takes the oldest Ingress's default backend.
        if let Some(target) = &default_target {
            let draft = self.server(Host::Any);
            draft.default_target.get_or_insert_with(|| target.clone());
        }
        for rule in spec.rules.iter().flatten() {
            let host = match Host::parse(rule.host.as_deref()) {
                Ok(host) => host,
                Err(message) => {
                    self.problem(ingress, message);
                    continue;
                }
            };
            if let Some(target) = &default_target {
                let draft = self.server(host.clone());
                draft.default_target.get_or_insert_with(|| target.clone());
            } else {
                self.server(host.clone());
            }
            for path in rule.http.iter().flat_map(|h| &h.paths) {
                let parsed =
                    PathRule::parse(path.path.as_deref(), &path.path_type, annotations.use_regex);
                let rule = match parsed {
                    Ok(rule) => rule,
                    Err(message) => {
                        self.problem(ingress, message);
                        continue;
                    }
                };
                let Some(backend) = self.backend(ingress, annotations, &path.backend) else {
                    continue;
                };
                for key in rule.locations() {
                    let location = Location {
                        key: key.clone(),
                        rule: rule.clone(),
                        ingress: id.clone(),
                        target: Target::Backend(backend.clone()),
                        ssl_redirect: false,
                        annotations: Arc::clone(annotations),
                    };
                    self.add_location(ingress, &host, location);
                }
            }
        }
    }

    fn server(&mut self, host: Host) -> &mut Draft {
        self.servers.entry(host).or_insert_with(|| Draft {
            certificate: None,
            default_tls: false,
            default_target: None,
            locations: BTreeMap::new(),
        })
    }

    fn add_location(&mut self, ingress: &Ingress, host: &Host, location: Location) {
        let draft = self.server(host.clone());
        let Some(existing) = draft.locations.get(&location.key) else {
            draft.locations.insert(location.key.clone(), location);
            return;
        };
        if existing.rule.kind == Kind::Prefix && location.rule.kind == Kind::Exact {
            // `= /p` belongs to an Exact rule rather than to Prefix /p's half.
            draft.locations.insert(location.key.clone(), location);
        } else if existing.rule.kind == Kind::Exact && location.rule.kind == Kind::Prefix {
            // Prefix /p keeps only its `/p/` half.
        } else if existing.ingress != location.ingress || existing.rule != location.rule {
            let message = format!(
                "path {:?} on host {:?} is already served by Ingress {} (older); ignored",
                location.rule.path,
                host.spelling(),
                existing.ingress
            );
            self.problem(ingress, message);
        }
    }

    fn add_tls(&mut self, ingress: &Ingress) {
        let namespace = ingress.metadata.namespace.clone().unwrap_or_default();
        for tls in ingress.spec.iter().flat_map(|s| s.tls.iter().flatten()) {
            // Without a usable Secret the hosts present the default certificate (ingress-nginx:
            // an entry without secretName is how an Ingress asks for it).
            let secret_key = match tls.secret_name.as_deref() {
                None | Some("") => None,
                Some(name) if !crate::hosts::is_dns_name(name) => {
                    self.problem(ingress, format!("secretName {name:?} is not a valid name"));
                    None
                }
                Some(name) => {
                    let key = format!("{namespace}/{name}");
                    match self.certificate(&key) {
                        Ok(()) => Some(key),
                        Err(message) => {
                            self.report(ingress, Reason::InvalidTlsSecret, message);
                            None
                        }
                    }
                }
            };
            for host in tls.hosts.iter().flatten() {
                let host = match Host::parse(Some(host)) {
                    Ok(host) => host,
                    Err(message) => {
                        self.problem(ingress, message);
                        continue;
                    }
                };
                match self.servers.get_mut(&host) {
                    Some(draft) => match &secret_key {
                        Some(key) if draft.certificate.is_none() => {
                            draft.certificate = Some(key.clone());
                        }
                        Some(_) => {}
                        None => draft.default_tls = true,
                    },
                    None => self.problem(
                        ingress,
                        format!("TLS host {:?} has no rule; ignored", host.spelling()),
                    ),
                }
            }
        }
    }

    /// `--default-ssl-certificate`: the Secret, loaded as any other, or why not.
    fn default_certificate(&mut self, secret_key: Option<&str>) {
        let Some(key) = secret_key else {
            return;
        };
        self.model.default_certificate = match self.certificate(key) {
            Ok(()) => DefaultCertificate::Secret(key.to_owned()),
            Err(message) => DefaultCertificate::Refused(message),
        };
    }

    /// Loads the certificate of Secret `secret_key` into the model once.
    fn certificate(&mut self, secret_key: &str) -> Result<(), String> {
        if self.model.certificates.contains_key(secret_key) {
            return Ok(());
        }
        let secret = self.secrets.get(secret_key).copied();
        let certificate = crate::certs::load(secret_key, secret, self.now)?;
        self.model
            .certificates
            .insert(secret_key.to_owned(), certificate);
        Ok(())
    }

    /// The Gateways of ours: every servable listener (the listeners do not depend on what
    /// nginx has loaded, so every Gateway counts as loaded), their backends and certificates.
    fn add_gateways(&mut self, objects: &Objects, settings: &crate::gateway::Settings) {
        use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::Time;
        use cluster_state::k8s::jiff::Timestamp;
        let loaded: BTreeSet<ObjectRef> = objects.gateways.keys().cloned().collect();
        let inputs = crate::gateway::GatewayInputs::new(objects, &loaded);
        let now = self
            .now
            .and_then(|s| Timestamp::from_second(s).ok())
            .unwrap_or(Timestamp::UNIX_EPOCH);
        let evaluation = crate::gateway::evaluate(inputs, settings, &Time(now));
        let plan = crate::gateway::plan::build(&evaluation, objects);
        for (service, port) in &plan.backends {
            let backend = IngressServiceBackend {
                name: service.name.clone(),
                port: Some(ServiceBackendPort {
                    number: Some(*port),
                    name: None,
                }),
            };
            if let Ok((name, endpoints)) = self.index.resolve(&service.namespace, &backend) {
                self.model
                    .backends
                    .entry(name.clone())
                    .or_insert_with(|| Backend {
                        name,
                        endpoints,
                        ..Backend::default()
                    });
            }
        }
        let secrets: BTreeSet<&String> = plan
            .gateways
            .iter()
            .flat_map(|g| &g.sockets)
            .flat_map(|s| &s.servers)
            .flat_map(|s| &s.certificates)
            .collect();
        for secret in secrets {
            // The listener checks refused the certificates that do not load (S-GW.3).
            let _ = self.certificate(secret);
        }
        self.model.gateway = plan;
    }

    fn add_canary(&mut self, ingress: &Ingress, annotations: &Annotations) {
        let Some(canary) = &annotations.canary else {
            return;
        };
        self.model.ingresses.push(key(&ingress.metadata));
        for rule in ingress.spec.iter().flat_map(|s| s.rules.iter().flatten()) {
            let Ok(host) = Host::parse(rule.host.as_deref()) else {
                self.problem(ingress, "canary rule with an invalid host; ignored".into());
                continue;
            };
            for path in rule.http.iter().flat_map(|h| &h.paths) {
                let Ok(path_rule) =
                    PathRule::parse(path.path.as_deref(), &path.path_type, annotations.use_regex)
                else {
                    self.problem(ingress, "canary path is invalid; ignored".into());
                    continue;
                };
                let Some(canary_backend) = self.backend(ingress, annotations, &path.backend) else {
                    continue;
                };
                let canary_id = key(&ingress.metadata);
                let mut attached = false;
                for location_key in path_rule.locations() {
                    let location = self
                        .servers
                        .get_mut(&host)
                        .and_then(|d| d.locations.get_mut(&location_key));
                    let Some(location) = location else { continue };
                    let Target::Backend(primary) = &location.target else {
                        continue;
                    };
                    if *primary == canary_backend || primary.contains("+canary=") {
                        continue;
                    }
                    // The canary applies to this rule only: the location gets its own route,
                    // the primary backend with the canary attached.
                    let route = format!("{primary}+canary={canary_id}");
                    let Some(mut backend) = self.model.backends.get(primary).cloned() else {
                        continue;
                    };
                    backend.name.clone_from(&route);
                    backend.canary = Some((canary_backend.clone(), canary.clone()));
                    self.model.backends.insert(route.clone(), backend);
                    location.target = Target::Backend(route);
                    attached = true;
                }
                if !attached {
                    self.problem(
                        ingress,
                        format!(
                            "canary path {:?} on host {:?} has no primary Ingress (or already has a \
                             canary); ignored",
                            path_rule.path,
                            host.spelling()
                        ),
                    );
                }
            }
        }
    }

    fn finish(mut self) -> Model {
        let ssl_redirect = self.model.global.ssl_redirect;
        for (host, mut draft) in std::mem::take(&mut self.servers) {
            shield_auto_redirects(&mut draft);
            let has_tls = draft.certificate.is_some();
            let locations = draft
                .locations
                .into_values()
                .map(|mut location| {
                    let a = &location.annotations;
                    location.ssl_redirect =
                        a.force_ssl_redirect || (has_tls && a.ssl_redirect.unwrap_or(ssl_redirect));
                    location
                })
                .collect();
            self.model.servers.push(Server {
                host,
                default_tls: draft.default_tls && draft.certificate.is_none(),
                certificate: draft.certificate,
                default_target: draft.default_target.unwrap_or(Target::NotFound),
                locations,
            });
        }
        self.model
    }
}
