//! A fake Kubernetes API server on 127.0.0.1 that answers from a script of recorded responses.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use futures::StreamExt;
use tokio::task::JoinHandle;

/// One response: a status code and a JSON body.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    pub fn ok(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            body: body.into(),
        }
    }
}

/// One watch response: newline-delimited events, then the stream closes or stays open.
#[derive(Debug, Clone)]
pub struct Watch {
    pub events: String,
    pub close: bool,
}

/// A request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub path: String,
    pub query: String,
    pub content_type: String,
    pub body: String,
}

impl Seen {
    /// The value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key == name).then(|| value.to_owned())
        })
    }

    pub fn is_watch(&self) -> bool {
        self.param("watch")
            .is_some_and(|value| value == "true" || value == "1")
    }
}

/// What the server answers, by path. Lists: the replies in order, the last one repeated.
/// Watches: the replies in order, then a stream that stays open with no events. Other methods:
/// the reply for the path, 404 without one.
#[derive(Debug, Default)]
pub struct Script {
    lists: HashMap<String, VecDeque<Reply>>,
    watches: HashMap<String, VecDeque<Watch>>,
    writes: HashMap<(Method, String), Reply>,
    seen: Vec<Seen>,
}

impl Script {
    pub fn list(&mut self, path: &str, reply: Reply) -> &mut Self {
        self.lists
            .entry(path.to_owned())
            .or_default()
            .push_back(reply);
        self
    }

    pub fn watch(&mut self, path: &str, events: &str, close: bool) -> &mut Self {
        let watch = Watch {
            events: events.to_owned(),
            close,
        };
        self.watches
            .entry(path.to_owned())
            .or_default()
            .push_back(watch);
        self
    }

    pub fn write(&mut self, method: Method, path: &str, reply: Reply) -> &mut Self {
        self.writes.insert((method, path.to_owned()), reply);
        self
    }
}

/// The running server; dropping it stops it.
pub struct FakeApi {
    pub url: String,
    script: Arc<Mutex<Script>>,
    server: JoinHandle<()>,
}

impl FakeApi {
    pub async fn start(script: Script) -> Self {
        let script = Arc::new(Mutex::new(script));
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url,
            script,
            server,
        }
    }

    /// A client for this server (plain HTTP, no credentials).
    pub fn client(&self) -> kube::Client {
        let config = kube::Config::new(self.url.parse().unwrap());
        kube::Client::try_from(config).unwrap()
    }

    /// The requests seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.script.lock().unwrap().seen.clone()
    }

    /// Polls until the requests seen satisfy `done` (20 s at most), and returns them.
    pub async fn wait_for_requests(&self, done: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let seen = self.seen();
            if done(&seen) {
                return seen;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "requests so far: {seen:#?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn answer(
    State(script): State<Arc<Mutex<Script>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let seen = Seen {
        method: method.clone(),
        path: uri.path().to_owned(),
        query: uri.query().unwrap_or_default().to_owned(),
        content_type: headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let mut script = script.lock().unwrap();
    script.seen.push(seen.clone());
    if method == Method::GET && seen.is_watch() {
        let watch = script
            .watches
            .get_mut(&seen.path)
            .and_then(VecDeque::pop_front);
        let (events, close) = watch.map_or((String::new(), false), |w| (w.events, w.close));
        let lines = futures::stream::iter(
            events
                .lines()
                .map(|line| Ok::<_, std::io::Error>(Bytes::from(format!("{line}\n"))))
                .collect::<Vec<_>>(),
        );
        let body = if close {
            Body::from_stream(lines)
        } else {
            Body::from_stream(lines.chain(futures::stream::pending()))
        };
        return json(200, body);
    }
    let reply = if method == Method::GET {
        script.lists.get_mut(&seen.path).and_then(|replies| {
            if replies.len() > 1 {
                replies.pop_front()
            } else {
                replies.front().cloned()
            }
        })
    } else {
        script.writes.get(&(method, seen.path.clone())).cloned()
    };
    let reply = reply.unwrap_or_else(|| Reply {
        status: 404,
        body: format!(
            r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{} not scripted","reason":"NotFound","code":404}}"#,
            seen.path
        ),
    });
    json(reply.status, Body::from(reply.body))
}

fn json(status: u16, body: Body) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .unwrap()
}
