//! A fake Kubernetes API server for tests (feature `fake-api`): it answers on 127.0.0.1 from a
//! script of recorded responses, and keeps the objects of chosen collections the way the API
//! server does (create, get, replace with `resourceVersion` as a compare-and-swap guard).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use cluster_state::fake_api::{FakeApi, Reply, Script};
//! use cluster_state::{Kind, Source};
//!
//! let mut script = Script::default();
//! script.list("/api/v1/services", Reply::ok(r#"{"kind":"ServiceList","apiVersion":"v1",
//!     "metadata":{"resourceVersion":"1"},"items":[]}"#));
//! let api = FakeApi::start(script).await?;
//! let source = Source::api(api.client()?, &[Kind::Service]);
//! # Ok(())
//! # }
//! ```

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// One response: a status code and a JSON body.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body.
    pub body: String,
}

impl Reply {
    /// A 200 with `body`.
    pub fn ok(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            body: body.into(),
        }
    }

    /// A `Status` failure, as the API server reports errors.
    pub fn status(code: u16, reason: &str, message: &str) -> Self {
        let body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        });
        Self {
            status: code,
            body: body.to_string(),
        }
    }
}

/// A request the server answered.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The method.
    pub method: Method,
    /// The path.
    pub path: String,
    /// The query string.
    pub query: String,
    /// The `Content-Type` header.
    pub content_type: String,
    /// The body.
    pub body: String,
}

impl Seen {
    /// The value of the query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key == name).then_some(value)
        })
    }

    /// Whether this is a watch request.
    pub fn is_watch(&self) -> bool {
        self.method == Method::GET && matches!(self.param("watch"), Some("true" | "1"))
    }
}

/// What the server answers, by path.
///
/// - GET of a scripted list: its replies in order, the last one repeated.
/// - GET with `watch=true`: the scripted watch replies in order (newline-delimited events,
///   then the stream closes or stays open), then a stream that stays open without events.
/// - Collections made with [`Script::store`]: POST creates (409 if the name exists), GET of an
///   object reads it (404 if absent), PUT replaces it if the body's `resourceVersion` is the
///   stored one (409 otherwise); every write takes the next `resourceVersion`.
/// - Other requests: the reply scripted with [`Script::write`] for the method and path, else 404.
#[derive(Debug, Default)]
pub struct Script {
    lists: HashMap<String, VecDeque<Reply>>,
    watches: HashMap<String, VecDeque<(String, bool)>>,
    writes: HashMap<(Method, String), Reply>,
    stores: HashSet<String>,
    objects: HashMap<String, Value>,
    last_version: u64,
    seen: Vec<Seen>,
}

impl Script {
    /// Adds a reply to GETs of the list at `path`.
    pub fn list(&mut self, path: &str, reply: Reply) -> &mut Self {
        self.lists
            .entry(path.to_owned())
            .or_default()
            .push_back(reply);
        self
    }

    /// Adds a watch reply at `path`: `events` (one JSON event per line), then the stream closes
    /// (`close`) or stays open.
    pub fn watch(&mut self, path: &str, events: &str, close: bool) -> &mut Self {
        let reply = (events.to_owned(), close);
        self.watches
            .entry(path.to_owned())
            .or_default()
            .push_back(reply);
        self
    }

    /// Sets the reply to `method` requests at `path`.
    pub fn write(&mut self, method: Method, path: &str, reply: Reply) -> &mut Self {
        self.writes.insert((method, path.to_owned()), reply);
        self
    }

    /// Keeps the objects of the collection at `path` (e.g.
    /// `/apis/coordination.k8s.io/v1/namespaces/default/leases`) like the API server.
    pub fn store(&mut self, path: &str) -> &mut Self {
        self.stores.insert(path.trim_end_matches('/').to_owned());
        self
    }

    fn answer(&mut self, request: &Seen) -> Reply {
        let collection = request.path.rsplit_once('/').map(|(parent, _)| parent);
        let stored_object = collection.is_some_and(|c| self.stores.contains(c));
        match request.method {
            Method::POST if self.stores.contains(&request.path) => self.create(request),
            Method::GET if stored_object => match self.objects.get(&request.path) {
                Some(object) => Reply::ok(object.to_string()),
                None => Reply::status(404, "NotFound", "not found"),
            },
            Method::PUT if stored_object => self.replace(request),
            Method::GET => {
                let replies = self.lists.get_mut(&request.path);
                let reply = replies.and_then(|replies| {
                    if replies.len() > 1 {
                        replies.pop_front()
                    } else {
                        replies.front().cloned()
                    }
                });
                reply.unwrap_or_else(|| not_scripted(request))
            }
            _ => {
                let key = (request.method.clone(), request.path.clone());
                self.writes
                    .get(&key)
                    .cloned()
                    .unwrap_or_else(|| not_scripted(request))
            }
        }
    }

    fn create(&mut self, request: &Seen) -> Reply {
        let Ok(mut object) = serde_json::from_str::<Value>(&request.body) else {
            return Reply::status(400, "BadRequest", "the body is not JSON");
        };
        let Some(name) = object["metadata"]["name"].as_str() else {
            return Reply::status(422, "Invalid", "metadata.name: Required value");
        };
        let path = format!("{}/{name}", request.path);
        if self.objects.contains_key(&path) {
            return Reply::status(409, "AlreadyExists", "already exists");
        }
        self.last_version += 1;
        object["metadata"]["resourceVersion"] = json!(self.last_version.to_string());
        self.objects.insert(path, object.clone());
        Reply {
            status: 201,
            body: object.to_string(),
        }
    }

    fn replace(&mut self, request: &Seen) -> Reply {
        let Ok(mut object) = serde_json::from_str::<Value>(&request.body) else {
            return Reply::status(400, "BadRequest", "the body is not JSON");
        };
        let Some(stored) = self.objects.get(&request.path) else {
            return Reply::status(404, "NotFound", "not found");
        };
        let expected = &object["metadata"]["resourceVersion"];
        if expected != &stored["metadata"]["resourceVersion"] {
            let message = "Operation cannot be fulfilled: the object has been modified; \
                           please apply your changes to the latest version and try again";
            return Reply::status(409, "Conflict", message);
        }
        self.last_version += 1;
        object["metadata"]["resourceVersion"] = json!(self.last_version.to_string());
        self.objects.insert(request.path.clone(), object.clone());
        Reply::ok(object.to_string())
    }
}

fn not_scripted(request: &Seen) -> Reply {
    let message = format!("{} {} is not scripted", request.method, request.path);
    Reply::status(404, "NotFound", &message)
}

/// The running server; dropping it stops it.
#[derive(Debug)]
pub struct FakeApi {
    url: Uri,
    script: Arc<Mutex<Script>>,
    server: JoinHandle<()>,
}

impl FakeApi {
    /// Starts answering from `script` on a free port of 127.0.0.1.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        let script = Arc::new(Mutex::new(script));
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let url = format!("http://{address}")
            .parse()
            .map_err(std::io::Error::other)?;
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "the fake API server stopped");
            }
        });
        Ok(Self {
            url,
            script,
            server,
        })
    }

    /// The server's URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &Uri {
        &self.url
    }

    /// A client for this server: plain HTTP, no credentials.
    pub fn client(&self) -> Result<kube::Client, kube::Error> {
        kube::Client::try_from(kube::Config::new(self.url.clone()))
    }

    /// The requests answered so far.
    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.script).seen.clone()
    }

    /// The stored object at `path`.
    pub fn object(&self, path: &str) -> Option<Value> {
        lock(&self.script).objects.get(path).cloned()
    }

    /// Waits until the requests answered satisfy `done`, polling every 10 ms; `None` if they
    /// still do not after `patience`.
    pub async fn wait_for_requests(
        &self,
        patience: std::time::Duration,
        done: impl Fn(&[Seen]) -> bool,
    ) -> Option<Vec<Seen>> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let seen = self.seen();
            if done(&seen) {
                return Some(seen);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn lock(script: &Mutex<Script>) -> MutexGuard<'_, Script> {
    script.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn answer(
    State(script): State<Arc<Mutex<Script>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    let request = Seen {
        method,
        path: uri.path().to_owned(),
        query: uri.query().unwrap_or_default().to_owned(),
        content_type: content_type.unwrap_or_default().to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let mut script = lock(&script);
    script.seen.push(request.clone());
    if request.is_watch() {
        let watch = script
            .watches
            .get_mut(&request.path)
            .and_then(VecDeque::pop_front);
        let (events, close) = watch.unwrap_or_default();
        let lines: Vec<_> = events
            .lines()
            .map(|line| Ok::<_, std::io::Error>(Bytes::from(format!("{line}\n"))))
            .collect();
        let events = futures::stream::iter(lines);
        let body = if close {
            Body::from_stream(events)
        } else {
            Body::from_stream(events.chain(futures::stream::pending()))
        };
        return json_response(200, body);
    }
    let reply = script.answer(&request);
    json_response(reply.status, Body::from(reply.body))
}

fn json_response(status: u16, body: Body) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
