//! The check of one Ingress under review, as a sync would apply it: the objects the
//! controller last built its model from, with the candidate in place of its stored version
//! (or added), through [`model::build`] and [`render::render`]; then `nginx -t` on that
//! configuration rendered for a private prefix made for this check alone.
//!
//! Refused: an Ingress the model reports problems for (with the messages of its events), and
//! one whose configuration nginx refuses (with nginx's message). Not refused for the state of
//! its TLS Secret (missing, or refused on its own): cert-manager creates the Secret after the
//! Ingress, and ingress-nginx does not refuse on it either; that problem stays an event.
//!
//! Nothing of the request becomes a file path: the check's directory is
//! `PREFIX/webhook/check-PID-N` (nginx's private prefix `validate/` in it, as
//! [`crate::nginx`] lays it out), created fresh and removed afterwards; what nginx reads there is
//! the rendered text (every value one quoted argument, see [`render`]) and the certificates of
//! the Secrets the cluster already holds, written as [`certs`] writes them. One check runs at a
//! time, within [`CHECK_TIMEOUT`] (`nginx -t` is killed when the time runs out).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cluster_state::ObjectRef;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use tokio::sync::{Semaphore, watch};

use super::review::Verdict;
use crate::class::Selection;
use crate::metrics::admission::{AdmissionMetrics, Review};
use crate::model::{self, Model, Problem};
use crate::nginx::{Nginx, NginxError};
use crate::objects::Objects;
use crate::{certs, render};

/// The longest a review may take, waiting for its turn included: the API server's default
/// webhook `timeoutSeconds` is 10.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(9);

/// What the model says of a candidate, before nginx sees it.
#[derive(Debug)]
pub enum Prepared {
    /// Not this controller's Ingress (another class, a namespace not watched): allowed, as
    /// ingress-nginx allows them.
    Skipped,
    /// Refused, with the messages of the problems the model reports for it.
    Refused(String),
    /// The model with the candidate, for `nginx -t`.
    Model(Box<Model>),
}

/// Builds the model of `objects` with `candidate` in place of its stored version, as a sync
/// would, and renders it with `options` (a value the emitter refuses is a refusal too).
pub fn prepare(
    objects: &Objects,
    selection: &Selection,
    options: &render::Options,
    mut candidate: Ingress,
) -> Prepared {
    let namespaces = selection.selected_namespaces(&objects.namespaces);
    if !selection.selects(&candidate, &objects.ingress_classes, namespaces.as_ref()) {
        return Prepared::Skipped;
    }
    // The API server sets it before validating webhooks run; a review without one is a new
    // Ingress, the youngest.
    if candidate.metadata.creation_timestamp.is_none() {
        candidate.metadata.creation_timestamp = Some(Time(Timestamp::now()));
    }
    let subject = ObjectRef::from_meta(&candidate.metadata);
    let mut objects = objects.clone();
    objects
        .ingresses
        .insert(subject.clone(), std::sync::Arc::new(candidate));
    let model = model::build(&objects, selection);
    let messages: Vec<&str> = model
        .problems
        .iter()
        .filter(|p| p.ingress == subject && !about_its_secret(p))
        .map(|p| p.message.as_str())
        .collect();
    if !messages.is_empty() {
        return Prepared::Refused(messages.join("; "));
    }
    if let Err(e) = render::render(&model, options) {
        return Prepared::Refused(e.to_string());
    }
    Prepared::Model(Box::new(model))
}

/// Whether `problem` is the state of a TLS Secret the Ingress names (not found, or refused on
/// its own) rather than something of the Ingress.
fn about_its_secret(problem: &Problem) -> bool {
    problem.reason == crate::model::Reason::InvalidTlsSecret
}

/// Reviews Ingresses against the objects the controller last applied.
#[derive(Debug)]
pub struct Checker {
    nginx: PathBuf,
    options: render::Options,
    selection: Selection,
    objects: watch::Receiver<Arc<Objects>>,
    /// One check (and so one `nginx -t`) at a time.
    turn: Semaphore,
    /// The number of the next private prefix.
    next: AtomicU64,
    /// What accepted reviews measured.
    metrics: AdmissionMetrics,
}

impl Checker {
    /// A checker running `nginx` with the controller's `options` and `selection`, on the
    /// objects `objects` holds (the controller sends each set it applies), measuring accepted
    /// reviews in `metrics`. Check directories a killed controller left behind are removed.
    pub fn new(
        nginx: PathBuf,
        options: render::Options,
        selection: Selection,
        objects: watch::Receiver<Arc<Objects>>,
        metrics: AdmissionMetrics,
    ) -> Self {
        let _ = std::fs::remove_dir_all(scratch_root(&options));
        Self {
            nginx,
            options,
            selection,
            objects,
            turn: Semaphore::new(1),
            next: AtomicU64::new(0),
            metrics,
        }
    }

    /// The verdict on `candidate`.
    pub async fn check(&self, candidate: Ingress) -> Verdict {
        match tokio::time::timeout(CHECK_TIMEOUT, self.check_in_turn(candidate)).await {
            Ok(verdict) => verdict,
            Err(_) => Verdict::Failed(format!(
                "the configuration was not checked within {} s",
                CHECK_TIMEOUT.as_secs()
            )),
        }
    }

    /// One check at a time: the model of a large cluster is built on a blocking thread (the
    /// controller's loop shares the runtime), then `nginx -t` runs.
    /// A review that reaches `nginx -t` and passes is measured, as ingress-nginx measures its
    /// accepted reviews.
    async fn check_in_turn(&self, candidate: Ingress) -> Verdict {
        let started = Instant::now();
        let Ok(_turn) = self.turn.acquire().await else {
            return Verdict::Failed("the checker is closed".into());
        };
        let objects = Arc::clone(&self.objects.borrow());
        let (selection, options) = (self.selection.clone(), self.options.clone());
        let rendering = Instant::now();
        let prepared =
            tokio::task::spawn_blocking(move || prepare(&objects, &selection, &options, candidate))
                .await;
        let render = rendering.elapsed();
        match prepared {
            Ok(Prepared::Skipped) => Verdict::Allowed,
            Ok(Prepared::Refused(message)) => Verdict::Refused(message),
            Ok(Prepared::Model(model)) => {
                let testing = Instant::now();
                let (verdict, size) = self.validate(&model).await;
                if let (Verdict::Allowed, Some(size)) = (&verdict, size) {
                    self.metrics.reviewed(&Review {
                        ingresses: model.ingresses.len(),
                        render,
                        test: testing.elapsed(),
                        size,
                        roundtrip: started.elapsed(),
                    });
                }
                verdict
            }
            Err(e) => Verdict::Failed(format!("the check stopped: {e}")),
        }
    }

    /// `nginx -t` on `model` in a fresh private prefix; the size of the configuration it
    /// read, once written.
    async fn validate(&self, model: &Model) -> (Verdict, Option<usize>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let dir = scratch_root(&self.options).join(format!("check-{}-{n}", std::process::id()));
        let scratch = match Scratch::create(dir) {
            Ok(scratch) => scratch,
            Err(e) => {
                return (
                    Verdict::Failed(format!("cannot prepare nginx -t: {e}")),
                    None,
                );
            }
        };
        let verdict = match validate_in(&self.nginx, &self.options, model, &scratch.0).await {
            Ok(size) => return (Verdict::Allowed, Some(size)),
            Err(NginxError::Invalid(output)) => Verdict::Refused(format!(
                "nginx -t refuses the configuration with this Ingress: {}",
                nginx_message(&output)
            )),
            Err(NginxError::Render(e)) => Verdict::Refused(e.to_string()),
            Err(e) => Verdict::Failed(format!("cannot run nginx -t: {e}")),
        };
        (verdict, None)
    }
}

/// `PREFIX/webhook`, where the checks' directories are made.
fn scratch_root(options: &render::Options) -> PathBuf {
    options.prefix.join("webhook")
}

/// nginx's error output as a reader of the refusal wants it: each `DATE TIME [level] PID#TID:
/// message` line as `[level] message`, without the closing "configuration file … test
/// failed" line (a path of the check's directory, gone by then).
fn nginx_message(output: &str) -> String {
    let tidy = |line: &str| -> Option<String> {
        let (_, rest) = line.split_once(" [")?;
        let (level, rest) = rest.split_once("] ")?;
        let (ids, message) = rest.split_once(": ")?;
        ids.bytes()
            .all(|b| b.is_ascii_digit() || b == b'#')
            .then(|| format!("[{level}] {message}"))
    };
    output
        .lines()
        .filter(|line| !(line.starts_with("nginx: configuration file") && line.ends_with("failed")))
        .map(|line| tidy(line).unwrap_or_else(|| line.to_owned()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes `model`'s certificates and configuration into the empty directory `dir` and runs
/// `nginx -t` there, as the controller validates (see [`crate::nginx`]); the configuration's
/// size in bytes.
async fn validate_in(
    binary: &Path,
    options: &render::Options,
    model: &Model,
    dir: &Path,
) -> Result<usize, NginxError> {
    let nginx = Nginx::new(binary.to_owned(), dir.to_owned())?;
    let private = options.with_prefix(nginx.validation_prefix());
    certs::write_all(&private, &model.certificates).map_err(|source| NginxError::Io {
        what: "write the certificates to check".into(),
        source,
    })?;
    let text = render::render(model, &private)?;
    nginx.validate(&text).await?;
    Ok(text.len())
}

/// A directory made for one check (mode 0700, under a 0700 parent), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn create(dir: PathBuf) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt as _;
        if let Some(parent) = dir.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)?;
        }
        // Left by a controller that was killed mid-check, with the same pid.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_messages_lose_their_stamps_and_the_closing_line() {
        let output = "2026/12/05 03:15:51 [emerg] 31526#31526: could not build server_names_hash, \
                      you should increase server_names_hash_bucket_size: 256\n\
                      nginx: configuration file /p/webhook/check-1-2/validate/nginx.conf test failed";
        assert_eq!(
            nginx_message(output),
            "[emerg] could not build server_names_hash, you should increase \
             server_names_hash_bucket_size: 256"
        );
        // Lines of another shape are kept as they are.
        assert_eq!(nginx_message("nginx: [alert] x"), "nginx: [alert] x");
        assert_eq!(nginx_message("a [b] c: d"), "a [b] c: d");
    }
}
