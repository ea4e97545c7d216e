//! AdmissionReview `admission.k8s.io/v1`, the little of it a validating webhook reads and
//! writes (k8s-openapi has no admission types: they are not in the API server's OpenAPI
//! document). The request: `request.uid`, `.kind`, `.operation`, `.namespace`, `.object`.
//! The answer: the same `uid`, `allowed`, and for a refusal a `status` with `code` and
//! `message` (what `kubectl` prints after "admission webhook … denied the request").
//!
//! What is reviewed, as ingress-nginx (`internal/admission/controller/main.go`,
//! `CheckIngress`): `networking.k8s.io/v1` Ingresses; an object that does not decode as one is
//! refused with the decoder's message and code 400; an Ingress being deleted
//! (`deletionTimestamp`) and a DELETE (no `object`) are allowed unchecked. Another kind is
//! refused here with a message (ingress-nginx answers HTTP 500, which a `failurePolicy: Fail`
//! also turns into a refusal, without saying why).

use k8s_openapi::api::networking::v1::Ingress;
use serde::{Deserialize, Serialize};

/// The one AdmissionReview version served.
pub const API_VERSION: &str = "admission.k8s.io/v1";
/// The longest message of an answer, in bytes (problems of many annotations add up).
pub const MESSAGE_LIMIT: usize = 8 * 1024;

/// What the API server sends.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Review {
    api_version: String,
    kind: String,
    request: Option<Request>,
}

/// `group`, `version`, `kind`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct GroupVersionKind {
    /// API group (empty for the core group).
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
}

/// The request part of an AdmissionReview.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Identifies this review; the answer echoes it.
    pub uid: String,
    /// The kind of the object under review.
    pub kind: GroupVersionKind,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    #[serde(default)]
    pub operation: String,
    /// The namespace of the object.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The name of the object.
    #[serde(default)]
    pub name: Option<String>,
    /// The object as it would be stored (absent for a DELETE).
    #[serde(default)]
    pub object: Option<serde_json::Value>,
}

/// The outcome of a review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed.
    Allowed,
    /// Refused because of the object: code 400, with why.
    Refused(String),
    /// Refused because the check itself failed (nginx would not run, time ran out): code 500.
    Failed(String),
}

/// What a request asks of the checker.
#[derive(Debug)]
pub enum Subject {
    /// This Ingress is to be checked.
    Ingress(Box<Ingress>),
    /// Decided without a check.
    Decided(Verdict),
}

/// Reads an AdmissionReview.
///
/// # Errors
///
/// Why the body is not an `admission.k8s.io/v1` AdmissionReview with a request (an HTTP 400:
/// without a request there is no `uid` to answer).
pub fn parse(body: &[u8]) -> Result<Request, String> {
    let review: Review = serde_json::from_slice(body)
        .map_err(|e| format!("the body is not an AdmissionReview: {e}"))?;
    if review.api_version != API_VERSION || review.kind != "AdmissionReview" {
        return Err(format!(
            "expected an AdmissionReview of {API_VERSION}, got {:?} of {:?}",
            review.kind, review.api_version
        ));
    }
    review
        .request
        .ok_or_else(|| "the AdmissionReview has no request".to_owned())
}

impl Request {
    /// What to check: the Ingress under review (its namespace filled from the request's when
    /// the object leaves it out), or the verdict when there is nothing to check.
    pub fn subject(&self) -> Subject {
        let kind = &self.kind;
        if (
            kind.group.as_str(),
            kind.version.as_str(),
            kind.kind.as_str(),
        ) != ("networking.k8s.io", "v1", "Ingress")
        {
            return Subject::Decided(Verdict::Refused(format!(
                "this webhook reviews networking.k8s.io/v1 Ingresses, not {}/{} {}",
                kind.group, kind.version, kind.kind
            )));
        }
        let Some(object) = &self.object else {
            // A DELETE carries only the old object: nothing new reaches nginx.
            return Subject::Decided(if self.operation == "DELETE" {
                Verdict::Allowed
            } else {
                Verdict::Refused(format!("{} without an object", self.operation))
            });
        };
        let mut ingress = match Ingress::deserialize(object) {
            Ok(ingress) => ingress,
            Err(e) => {
                return Subject::Decided(Verdict::Refused(format!(
                    "the object is not a valid Ingress: {e}"
                )));
            }
        };
        if ingress.metadata.deletion_timestamp.is_some() {
            return Subject::Decided(Verdict::Allowed);
        }
        if ingress
            .metadata
            .namespace
            .as_deref()
            .is_none_or(str::is_empty)
        {
            ingress.metadata.namespace.clone_from(&self.namespace);
        }
        Subject::Ingress(Box::new(ingress))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Answer<'a> {
    api_version: &'static str,
    kind: &'static str,
    response: Response<'a>,
}

#[derive(Serialize)]
struct Response<'a> {
    uid: &'a str,
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status<'a>>,
}

/// A `metav1.Status` of a refusal.
#[derive(Serialize)]
struct Status<'a> {
    status: &'static str,
    code: u16,
    reason: &'static str,
    message: &'a str,
}

/// The AdmissionReview answering review `uid` with `verdict` (JSON).
pub fn answer(uid: &str, verdict: &Verdict) -> Vec<u8> {
    let status = match verdict {
        Verdict::Allowed => None,
        Verdict::Refused(message) => Some((400, "BadRequest", message)),
        Verdict::Failed(message) => Some((500, "InternalError", message)),
    };
    let answer = Answer {
        api_version: API_VERSION,
        kind: "AdmissionReview",
        response: Response {
            uid,
            allowed: status.is_none(),
            status: status.map(|(code, reason, message)| Status {
                status: "Failure",
                code,
                reason,
                message: cluster_state::truncate_utf8(message, MESSAGE_LIMIT),
            }),
        },
    };
    // Strings and integers only: serialising cannot fail.
    serde_json::to_vec(&answer).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn review(request: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": request,
        }))
        .unwrap()
    }

    fn ingress_kind() -> Value {
        json!({"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"})
    }

    #[test]
    fn an_ingress_is_checked_with_the_request_namespace() {
        let body = review(json!({
            "uid": "u-1", "kind": ingress_kind(), "operation": "CREATE", "namespace": "demo",
            "object": {"metadata": {"name": "web"}, "spec": {"ingressClassName": "nginx"}},
        }));
        let request = parse(&body).unwrap();
        assert_eq!(request.uid, "u-1");
        let Subject::Ingress(ingress) = request.subject() else {
            panic!("not checked");
        };
        assert_eq!(ingress.metadata.namespace.as_deref(), Some("demo"));
    }

    #[test]
    fn deletions_and_other_kinds_are_decided_unchecked() {
        let delete = review(json!({"uid": "u", "kind": ingress_kind(), "operation": "DELETE"}));
        assert!(matches!(
            parse(&delete).unwrap().subject(),
            Subject::Decided(Verdict::Allowed)
        ));
        let deleting = review(json!({
            "uid": "u", "kind": ingress_kind(), "operation": "UPDATE",
            "object": {"metadata": {"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z"}},
        }));
        assert!(matches!(
            parse(&deleting).unwrap().subject(),
            Subject::Decided(Verdict::Allowed)
        ));
        let service = review(json!({
            "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Service"},
            "operation": "CREATE", "object": {},
        }));
        let Subject::Decided(Verdict::Refused(message)) = parse(&service).unwrap().subject() else {
            panic!("a Service was not refused");
        };
        assert!(message.contains("Service"), "{message}");
        let v1beta1 = review(json!({
            "uid": "u", "kind": {"group": "networking.k8s.io", "version": "v1beta1", "kind": "Ingress"},
            "operation": "CREATE", "object": {},
        }));
        assert!(matches!(
            parse(&v1beta1).unwrap().subject(),
            Subject::Decided(Verdict::Refused(_))
        ));
    }

    #[test]
    fn an_object_that_is_no_ingress_is_refused_with_the_decoder_message() {
        let body = review(json!({
            "uid": "u", "kind": ingress_kind(), "operation": "CREATE",
            "object": {"metadata": {"name": 7}},
        }));
        let Subject::Decided(Verdict::Refused(message)) = parse(&body).unwrap().subject() else {
            panic!("not refused");
        };
        assert!(
            message.starts_with("the object is not a valid Ingress"),
            "{message}"
        );
    }

    #[test]
    fn malformed_bodies_are_errors_not_panics() {
        let deep = "[".repeat(100_000);
        for body in [
            &b""[..],
            b"{",
            b"null",
            b"\0\xff",
            deep.as_bytes(),
            br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u","kind":{}}}"#,
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{}}}"#,
        ] {
            assert!(parse(body).is_err(), "{:?}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn answers_echo_the_uid() {
        let allowed: Value = serde_json::from_slice(&answer("u-7", &Verdict::Allowed)).unwrap();
        assert_eq!(
            allowed,
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                   "response": {"uid": "u-7", "allowed": true}})
        );
        let long = "é".repeat(MESSAGE_LIMIT);
        let refused: Value =
            serde_json::from_slice(&answer("u-8", &Verdict::Refused(long))).unwrap();
        let response = &refused["response"];
        assert_eq!(response["uid"], "u-8");
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 400);
        assert_eq!(response["status"]["reason"], "BadRequest");
        assert!(response["status"]["message"].as_str().unwrap().len() <= MESSAGE_LIMIT);
        let failed: Value =
            serde_json::from_slice(&answer("u", &Verdict::Failed("x".into()))).unwrap();
        assert_eq!(failed["response"]["status"]["code"], 500);
    }
}
