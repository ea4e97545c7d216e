//! The election record (client-go's `LeaderElectionRecord`) and its two stored forms.
//!
//! - [`Record::encode_lease_spec`] / [`Record::decode_lease_spec`]: the `spec` of a
//!   `coordination.k8s.io/v1` Lease (`docs/leader-lease.md` §1.2): `leaseTransitions`, `MicroTime`
//!   times, optional fields omitted when empty.
//! - [`Record::encode_annotation`] / [`Record::decode_annotation`]: the compact JSON once stored
//!   in the [`ANNOTATION_KEY`] annotation of a ConfigMap or Endpoints (`docs/leader-lease.md`
//!   §1.3): `leaderTransitions`, whole-second times, `null` for a missing time.
//!
//! Reading is tolerant as Go's `encoding/json` is: unknown and missing fields, `null`s, and any
//! RFC 3339 form are accepted. Writing uses exactly the key names and formats above.

#[cfg(feature = "alloc")]
use alloc::string::String;
use core::fmt;

#[cfg(feature = "alloc")]
use crate::error::{DecodeError, DecodeErrorKind};
#[cfg(feature = "alloc")]
use crate::json::{self, Node, Value};
use crate::json_string::write_string;
use crate::micro_time::{MicroTime, Precision};
use crate::text::Text;

/// The annotation that held the record in ConfigMap and Endpoints locks.
pub const ANNOTATION_KEY: &str = "control-plane.alpha.kubernetes.io/leader";

/// Who holds the lease, for how long, and how often it changed hands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Record {
    /// The holder; empty means released: anyone may take it at once.
    pub holder_identity: Text,
    /// The holder's lease duration; readers judge expiry by this, never by their own setting.
    pub lease_duration_seconds: i32,
    /// When the current holder acquired the lease (kept across renewals).
    pub acquire_time: Option<MicroTime>,
    /// The holder's last renewal, for humans only: never compared with a local clock.
    pub renew_time: Option<MicroTime>,
    /// How many times a *different* identity took over (`leaseTransitions` in a Lease).
    pub leader_transitions: i32,
    /// Coordinated-election strategy (KEP-4355), set by the apiserver's election controller.
    pub strategy: Option<Text>,
    /// Set by the election controller to ask the holder to step down in favour of this one.
    pub preferred_holder: Option<Text>,
}

/// Which stored form is being read or written: the key names and time precision differ.
#[derive(Clone, Copy)]
enum Form {
    LeaseSpec,
    Annotation,
}

impl Form {
    fn transitions_key(self) -> &'static str {
        match self {
            Form::LeaseSpec => "leaseTransitions",
            Form::Annotation => "leaderTransitions",
        }
    }

    fn precision(self) -> Precision {
        match self {
            Form::LeaseSpec => Precision::Micros,
            Form::Annotation => Precision::Seconds,
        }
    }
}

impl Record {
    /// Whether nobody holds the lease (an empty `holderIdentity`).
    pub fn is_released(&self) -> bool {
        self.holder_identity.is_empty()
    }

    /// Reads the JSON `spec` object of a Lease.
    #[cfg(feature = "alloc")]
    pub fn decode_lease_spec(text: &str) -> Result<Self, DecodeError> {
        Self::decode(text, Form::LeaseSpec)
    }

    /// Writes the JSON `spec` object of a Lease.
    #[cfg(feature = "alloc")]
    pub fn encode_lease_spec(&self) -> String {
        let mut out = String::with_capacity(256);
        // Writing into a String cannot fail.
        let _ = self.write_lease_spec(&mut out);
        out
    }

    /// Writes the JSON `spec` object of a Lease into `out`, without allocating.
    pub fn write_lease_spec(&self, out: &mut impl fmt::Write) -> fmt::Result {
        self.write(out, Form::LeaseSpec)
    }

    /// Reads the value of the [`ANNOTATION_KEY`] annotation.
    #[cfg(feature = "alloc")]
    pub fn decode_annotation(text: &str) -> Result<Self, DecodeError> {
        Self::decode(text, Form::Annotation)
    }

    /// Writes the value of the [`ANNOTATION_KEY`] annotation (times truncated to seconds).
    #[cfg(feature = "alloc")]
    pub fn encode_annotation(&self) -> String {
        let mut out = String::with_capacity(256);
        // Writing into a String cannot fail.
        let _ = self.write_annotation(&mut out);
        out
    }

    /// Writes the value of the [`ANNOTATION_KEY`] annotation into `out`, without allocating.
    pub fn write_annotation(&self, out: &mut impl fmt::Write) -> fmt::Result {
        self.write(out, Form::Annotation)
    }

    #[cfg(feature = "alloc")]
    fn decode(text: &str, form: Form) -> Result<Self, DecodeError> {
        let root = json::parse(text)?;
        if !matches!(root.value, Value::Object(_)) {
            return Err(wrong_type(&root, "record", "an object"));
        }
        Ok(Record {
            holder_identity: text_field(&root, "holderIdentity")?.unwrap_or_default(),
            lease_duration_seconds: int_field(&root, "leaseDurationSeconds")?,
            acquire_time: time_field(&root, "acquireTime")?,
            renew_time: time_field(&root, "renewTime")?,
            leader_transitions: int_field(&root, form.transitions_key())?,
            strategy: text_field(&root, "strategy")?,
            preferred_holder: text_field(&root, "preferredHolder")?,
        })
    }

    fn write(&self, out: &mut impl fmt::Write, form: Form) -> fmt::Result {
        out.write_str("{\"holderIdentity\":")?;
        write_string(out, &self.holder_identity)?;
        write!(
            out,
            ",\"leaseDurationSeconds\":{}",
            self.lease_duration_seconds
        )?;
        for (key, time) in [
            ("acquireTime", self.acquire_time),
            ("renewTime", self.renew_time),
        ] {
            match (time, form) {
                (Some(t), _) => write!(out, ",\"{key}\":\"{}\"", t.display(form.precision()))?,
                // metav1.Time marshals its zero value as null; the Lease omits nil pointers.
                (None, Form::Annotation) => write!(out, ",\"{key}\":null")?,
                (None, Form::LeaseSpec) => {}
            }
        }
        write!(
            out,
            ",\"{}\":{}",
            form.transitions_key(),
            self.leader_transitions
        )?;
        for (key, value) in [
            ("strategy", &self.strategy),
            ("preferredHolder", &self.preferred_holder),
        ] {
            if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
                write!(out, ",\"{key}\":")?;
                write_string(out, value)?;
            }
        }
        out.write_char('}')
    }
}

#[cfg(feature = "alloc")]
fn wrong_type(node: &Node<'_>, field: &'static str, expected: &'static str) -> DecodeError {
    DecodeError {
        offset: node.offset,
        kind: DecodeErrorKind::WrongType { field, expected },
    }
}

#[cfg(feature = "alloc")]
/// A string member; absent or `null` gives `None`.
fn string_field(root: &Node<'_>, field: &'static str) -> Result<Option<String>, DecodeError> {
    match root.get(field) {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => Ok(None),
        Some(Node {
            value: Value::String(s),
            ..
        }) => Ok(Some(s.clone())),
        Some(other) => Err(wrong_type(other, field, "a string")),
    }
}

/// A string member that must fit a [`Text`]; absent or `null` gives `None`.
#[cfg(feature = "alloc")]
fn text_field(root: &Node<'_>, field: &'static str) -> Result<Option<Text>, DecodeError> {
    let Some(value) = string_field(root, field)? else {
        return Ok(None);
    };
    Text::try_from(value.as_str())
        .map(Some)
        .map_err(|too_long| DecodeError {
            offset: root.get(field).map_or(0, |n| n.offset),
            kind: DecodeErrorKind::TooLong {
                field,
                len: too_long.len,
            },
        })
}

#[cfg(feature = "alloc")]
/// An `int32` member; absent or `null` gives 0, as Go leaves the zero value.
fn int_field(root: &Node<'_>, field: &'static str) -> Result<i32, DecodeError> {
    match root.get(field) {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => Ok(0),
        Some(
            node @ Node {
                value: Value::Number(text),
                ..
            },
        ) => text.parse::<i32>().map_err(|_| DecodeError {
            offset: node.offset,
            kind: DecodeErrorKind::OutOfRange { field },
        }),
        Some(other) => Err(wrong_type(other, field, "a number")),
    }
}

#[cfg(feature = "alloc")]
/// An RFC 3339 time member; absent or `null` gives `None`.
fn time_field(root: &Node<'_>, field: &'static str) -> Result<Option<MicroTime>, DecodeError> {
    let Some(text) = string_field(root, field)? else {
        return Ok(None);
    };
    MicroTime::parse(&text)
        .map(Some)
        .map_err(|error| DecodeError {
            // Exact unless the string used escapes before the error; then it is close.
            offset: root.get(field).map_or(0, |n| n.offset + 1 + error.offset),
            kind: DecodeErrorKind::Time { field, error },
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::text;
    use alloc::string::ToString;
    use proptest::prelude::*;

    fn t(text: &str) -> Option<MicroTime> {
        Some(MicroTime::parse(text).unwrap())
    }

    /// `docs/leader-lease.md` §1.2: the Lease example.
    const SPEC_EXAMPLE: &str = r#"{"holderIdentity":"ingress-7d9f-abcde","leaseDurationSeconds":15,"acquireTime":"2026-11-30T10:00:00.123456Z","renewTime":"2026-11-30T10:04:58.654321Z","leaseTransitions":3}"#;

    /// `docs/leader-lease.md` §1.3: the annotation example from kubernetes/kubernetes#41956.
    const ANNOTATION_EXAMPLE: &str = r#"{"holderIdentity":"node-a","leaseDurationSeconds":15,"acquireTime":"2017-02-22T07:09:59Z","renewTime":"2017-02-22T07:11:01Z","leaderTransitions":0}"#;

    #[test]
    fn lease_spec_example_round_trips_byte_for_byte() {
        let r = Record::decode_lease_spec(SPEC_EXAMPLE).unwrap();
        assert_eq!(
            r,
            Record {
                holder_identity: text("ingress-7d9f-abcde"),
                lease_duration_seconds: 15,
                acquire_time: t("2026-11-30T10:00:00.123456Z"),
                renew_time: t("2026-11-30T10:04:58.654321Z"),
                leader_transitions: 3,
                strategy: None,
                preferred_holder: None,
            }
        );
        assert_eq!(r.encode_lease_spec(), SPEC_EXAMPLE);
    }

    #[test]
    fn annotation_example_round_trips_byte_for_byte() {
        let r = Record::decode_annotation(ANNOTATION_EXAMPLE).unwrap();
        assert_eq!(r.holder_identity, "node-a");
        assert_eq!(r.renew_time, t("2017-02-22T07:11:01Z"));
        assert_eq!(r.encode_annotation(), ANNOTATION_EXAMPLE);
    }

    /// `docs/leader-lease.md` §1.2: the counter is `leaseTransitions` in a Lease,
    /// `leaderTransitions` in the record.
    #[test]
    fn transitions_key_depends_on_the_form() {
        let r = Record {
            leader_transitions: 7,
            ..Record::default()
        };
        assert!(r.encode_lease_spec().contains("\"leaseTransitions\":7"));
        assert!(r.encode_annotation().contains("\"leaderTransitions\":7"));
        assert_eq!(
            Record::decode_annotation(r#"{"leaseTransitions":7}"#)
                .unwrap()
                .leader_transitions,
            0
        );
    }

    /// `docs/leader-lease.md` §1.3: missing fields are zero values, `null` times are absent,
    /// unknown keys ignored.
    #[test]
    fn reads_tolerantly() {
        let r = Record::decode_annotation(
            r#"{"acquireTime":null,"renewTime":"2017-02-22T07:11:01.5Z","x":[{}]}"#,
        )
        .unwrap();
        assert_eq!(
            r,
            Record {
                renew_time: t("2017-02-22T07:11:01.5Z"),
                ..Record::default()
            }
        );
        assert!(r.is_released());
        assert_eq!(
            Record::decode_lease_spec(" {} ").unwrap(),
            Record::default()
        );
    }

    /// `docs/leader-lease.md` §1.2: `strategy` and `preferredHolder` are `omitempty` and must
    /// round-trip.
    #[test]
    fn coordinated_fields_round_trip_and_are_omitted_when_empty() {
        let r = Record {
            holder_identity: text("a"),
            strategy: Some(text("OldestEmulationVersion")),
            preferred_holder: Some(text("b")),
            ..Record::default()
        };
        let text = r.encode_lease_spec();
        assert_eq!(
            text,
            r#"{"holderIdentity":"a","leaseDurationSeconds":0,"leaseTransitions":0,"strategy":"OldestEmulationVersion","preferredHolder":"b"}"#
        );
        assert_eq!(Record::decode_lease_spec(&text).unwrap(), r);
        assert_eq!(
            Record::default().encode_annotation(),
            r#"{"holderIdentity":"","leaseDurationSeconds":0,"acquireTime":null,"renewTime":null,"leaderTransitions":0}"#
        );
    }

    /// Records are stored inline: a holder longer than [`crate::TEXT_CAPACITY`] bytes is an
    /// error naming the field, never a truncation.
    #[test]
    fn oversized_strings_are_refused() {
        let long = "h".repeat(crate::TEXT_CAPACITY + 1);
        let json = alloc::format!(r#"{{"leaseDurationSeconds":15,"holderIdentity":"{long}"}}"#);
        let e = Record::decode_lease_spec(&json).unwrap_err();
        assert_eq!(e.offset, 44);
        assert_eq!(
            e.to_string(),
            "at byte 44: field \"holderIdentity\" is 257 bytes long; a record holds at most 256"
        );
    }

    /// The allocation-free writer gives the same text as the `String` encoder.
    #[test]
    fn writers_match_the_encoders() {
        let r = Record {
            holder_identity: text("a"),
            lease_duration_seconds: 15,
            ..Record::default()
        };
        let mut buffer = heapless::String::<256>::new();
        r.write_lease_spec(&mut buffer).unwrap();
        assert_eq!(buffer.as_str(), r.encode_lease_spec());
        buffer.clear();
        r.write_annotation(&mut buffer).unwrap();
        assert_eq!(buffer.as_str(), r.encode_annotation());
    }

    #[test]
    fn errors_name_the_field_and_offset() {
        let e = Record::decode_lease_spec(r#"{"leaseDurationSeconds":"15"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "at byte 24: field \"leaseDurationSeconds\" must be a number"
        );
        let e = Record::decode_lease_spec(r#"{"leaseTransitions":2147483648}"#).unwrap_err();
        assert_eq!(
            e.kind,
            DecodeErrorKind::OutOfRange {
                field: "leaseTransitions"
            }
        );
        assert!(Record::decode_lease_spec(r#"{"leaseDurationSeconds":1.0}"#).is_err());
        let e = Record::decode_lease_spec(r#"{"renewTime":"2017-02-22 07:11:01Z"}"#).unwrap_err();
        assert_eq!(e.offset, 24);
        assert!(
            e.to_string()
                .starts_with("at byte 24: field \"renewTime\": invalid RFC 3339 timestamp")
        );
        assert_eq!(Record::decode_annotation("[]").unwrap_err().offset, 0);
    }

    fn arb_time() -> impl Strategy<Value = Option<MicroTime>> {
        proptest::option::of((0i64..253_402_300_799_999_999).prop_map(MicroTime::from_unix_micros))
    }

    fn arb_record() -> impl Strategy<Value = Record> {
        (
            ".{0,100}",
            any::<i32>(),
            arb_time(),
            arb_time(),
            any::<i32>(),
            proptest::option::of(".{1,100}"),
            proptest::option::of(".{1,100}"),
        )
            .prop_map(
                |(holder, duration, acquire, renew, transitions, strategy, preferred)| Record {
                    holder_identity: text(&holder),
                    lease_duration_seconds: duration,
                    acquire_time: acquire,
                    renew_time: renew,
                    leader_transitions: transitions,
                    strategy: strategy.as_deref().map(text),
                    preferred_holder: preferred.as_deref().map(text),
                },
            )
    }

    fn truncate_to_seconds(time: Option<MicroTime>) -> Option<MicroTime> {
        time.map(|t| MicroTime::from_unix_micros(t.unix_micros().div_euclid(1_000_000) * 1_000_000))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn lease_spec_round_trips(r in arb_record()) {
            prop_assert_eq!(Record::decode_lease_spec(&r.encode_lease_spec()), Ok(r));
        }

        #[test]
        fn annotation_round_trips_up_to_seconds(r in arb_record()) {
            let expected = Record {
                acquire_time: truncate_to_seconds(r.acquire_time),
                renew_time: truncate_to_seconds(r.renew_time),
                ..r.clone()
            };
            prop_assert_eq!(Record::decode_annotation(&r.encode_annotation()), Ok(expected));
        }
    }
}
