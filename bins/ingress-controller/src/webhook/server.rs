//! The webhook's HTTPS server: TLS with the [`Identity`] of the moment, HTTP/1.1 through
//! hyper, an AdmissionReview `POST`ed to any path (ingress-nginx's chart posts to
//! `/networking/v1/ingresses`) answered with the [`Checker`]'s verdict.
//!
//! Bounds on what a client can hold: [`MAX_CONNECTIONS`] connections (more wait in the listen
//! queue), [`HANDSHAKE_TIMEOUT`] for the TLS handshake, [`HEADER_TIMEOUT`] for a request head,
//! [`BODY_TIMEOUT`] and [`MAX_BODY`] for the body. A body that is not an AdmissionReview is a
//! 400 with the decoder's message; a review is answered 200 whatever its verdict.
//!
//! Decoded, a body of 3 MiB can take tens of times that in memory (a JSON value per array
//! element): bodies are decoded and checked [`DECODING`] at a time; the others wait as bytes,
//! as long as a check may take (then a 503: without the decoded `uid` there is no review to
//! answer).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tracing::{info, warn};

use super::check::{CHECK_TIMEOUT, Checker};
use super::review::{self, Subject, Verdict};
use super::tls::Identity;

/// Open connections at once.
pub const MAX_CONNECTIONS: usize = 64;
/// Time for the TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Time for a request head to arrive whole.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// Time for a request body to arrive whole.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest body read: the API server's own limit for a request's object is 3 MiB.
pub const MAX_BODY: usize = 3 * 1024 * 1024;
/// Bodies decoded (and held decoded) at once: one being checked, one waiting its turn.
pub const DECODING: usize = 2;

/// What the request handler shares.
struct Reviewer {
    checker: Arc<Checker>,
    decoding: Semaphore,
}

/// Serves reviews on `listener` until the task is aborted.
pub async fn serve(listener: TcpListener, identity: Arc<Identity>, checker: Arc<Checker>) {
    let reviewer = Reviewer {
        checker,
        decoding: Semaphore::new(DECODING),
    };
    let router = Router::new()
        .fallback(review)
        .with_state(Arc::new(reviewer));
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, typically: wait instead of spinning.
                warn!("the webhook cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let service = TowerToHyperService::new(router.clone());
        let config = identity.server_config();
        tokio::spawn(async move {
            connection(stream, config, service).await;
            drop(permit);
        });
    }
}

async fn connection(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    service: TowerToHyperService<Router>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await else {
        return;
    };
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(tls), service)
        .await;
}

/// One request: an AdmissionReview in, its answer out.
async fn review(State(reviewer): State<Arc<Reviewer>>, method: Method, body: Body) -> Response {
    if method != Method::POST {
        return (StatusCode::METHOD_NOT_ALLOWED, "POST an AdmissionReview\n").into_response();
    }
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, MAX_BODY)).await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            let message = format!("the body could not be read whole (at most {MAX_BODY} bytes)\n");
            return (StatusCode::PAYLOAD_TOO_LARGE, message).into_response();
        }
        Err(_) => {
            return (StatusCode::REQUEST_TIMEOUT, "the body came too slowly\n").into_response();
        }
    };
    let Ok(Ok(_turn)) = tokio::time::timeout(CHECK_TIMEOUT, reviewer.decoding.acquire()).await
    else {
        let message = "too many reviews at once; this one was not checked in time\n";
        return (StatusCode::SERVICE_UNAVAILABLE, message).into_response();
    };
    let request = match review::parse(&bytes) {
        Ok(request) => request,
        Err(message) => return (StatusCode::BAD_REQUEST, message).into_response(),
    };
    let verdict = match request.subject() {
        Subject::Ingress(ingress) => reviewer.checker.check(*ingress).await,
        Subject::Decided(verdict) => verdict,
    };
    let namespace = request.namespace.as_deref().unwrap_or_default();
    let name = request.name.as_deref().unwrap_or_default();
    match &verdict {
        Verdict::Allowed => info!(namespace, name, "admission review: allowed"),
        Verdict::Refused(why) | Verdict::Failed(why) => {
            warn!(namespace, name, "admission review: refused: {why}");
        }
    }
    let answer = review::answer(&request.uid, &verdict);
    ([(header::CONTENT_TYPE, "application/json")], answer).into_response()
}
