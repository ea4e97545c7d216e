//! Fuzz targets for the `leader-lease` crate.
//!
//! - `lease_record_decode`: both record codecs and the RFC 3339 reader on arbitrary text; what
//!   decodes must re-encode to a fixed point.
//! - `lease_machine`: an arbitrary sequence of inputs to the election state machine; it must not
//!   panic and its invariants must hold after every step.

use arbitrary::{Arbitrary, Unstructured};
use leader_lease::{
    Action, Config, Duration, Elector, Event, Instant, MicroTime, Record, StoreError, Stored, Text,
    Version,
};

use crate::Target;

/// The `leader-lease` targets.
pub const TARGETS: &[Target] = &[
    Target {
        name: "lease_record_decode",
        run: lease_record_decode,
    },
    Target {
        name: "lease_machine",
        run: lease_machine,
    },
];

/// Decodes `data` as a Lease spec, an annotation and a timestamp; re-encodes what decoded.
pub fn lease_record_decode(data: &[u8]) {
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    if let Ok(record) = Record::decode_lease_spec(text) {
        let once = record.encode_lease_spec();
        let again = Record::decode_lease_spec(&once).expect("our own Lease spec decodes");
        assert_eq!(
            again.encode_lease_spec(),
            once,
            "Lease spec encoding is not a fixed point"
        );
    }
    if let Ok(record) = Record::decode_annotation(text) {
        let once = record.encode_annotation();
        let again = Record::decode_annotation(&once).expect("our own annotation decodes");
        assert_eq!(
            again.encode_annotation(),
            once,
            "annotation encoding is not a fixed point"
        );
    }
    if let Ok(time) = MicroTime::parse(text) {
        assert_eq!(MicroTime::parse(&time.to_string()), Ok(time));
    }
}

/// One input to the machine.
#[derive(Arbitrary, Debug)]
enum Input {
    /// Let time pass (milliseconds), then fire timers.
    Wait(u16),
    /// Jump to the machine's own next deadline.
    WaitForTimeout,
    /// Ask for the next action.
    Poll,
    /// Answer a read: nothing, a record, or an error.
    Got(Option<(u8, i8, i8, bool, u8)>),
    GetFailed(u8),
    /// Answer a write.
    Wrote(u8),
    WriteFailed(u8),
    Release,
}

const HOLDERS: [&str; 4] = ["me", "other", "", "third"];

fn store_error(code: u8) -> StoreError {
    match code % 3 {
        0 => StoreError::Conflict,
        1 => StoreError::NotFound,
        _ => StoreError::Unavailable,
    }
}

/// Runs arbitrary inputs through an [`Elector`], checking its invariants after each.
pub fn lease_machine(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok((timing, honor, seed)) = <(u8, bool, u64)>::arbitrary(&mut u) else {
        return;
    };
    let (ld, rd, rp) =
        [(15, 10_000, 2_000), (8, 5_000, 1_000), (30, 15_000, 7_500)][usize::from(timing % 3)];
    let config = Config::builder("me")
        .lease_duration(Duration::from_secs(ld))
        .renew_deadline(Duration::from_millis(rd))
        .retry_period(Duration::from_millis(rp))
        .honor_preferred_holder(honor)
        .build()
        .expect("valid timings");
    let mut elector = Elector::new(config, seed);
    let mut now = Instant::ZERO;
    let mut leading = false;
    // `Unstructured` yields default values once exhausted: stop when the bytes run out.
    while !u.is_empty() {
        let Ok(input) = Input::arbitrary(&mut u) else {
            return;
        };
        match input {
            Input::Wait(ms) => {
                now = now + Duration::from_millis(u64::from(ms));
                elector.handle_timeout(now);
            }
            Input::WaitForTimeout => {
                if let Some(t) = elector.poll_timeout() {
                    now = now.max(t);
                }
                elector.handle_timeout(now);
            }
            Input::Poll => {
                let wall = MicroTime::from_unix_micros((now.as_nanos() / 1000) as i64);
                let action = elector.poll_action(now, wall);
                assert!(
                    !(elector.is_released() && action.is_some()),
                    "action after release"
                );
                match action {
                    Some(Action::Create(record)) | Some(Action::Update { record, .. }) => {
                        let ours = record.holder_identity == "me"
                            && record.lease_duration_seconds == i32::try_from(ld).unwrap();
                        let release = record.is_released() && record.lease_duration_seconds == 1;
                        assert!(ours || release, "unexpected write {record:?}");
                    }
                    Some(Action::Get) | None => {}
                }
            }
            Input::Got(record) => {
                let stored = record.map(|(holder, duration, transitions, preferred, version)| {
                    let holder = HOLDERS[usize::from(holder % 4)];
                    Stored {
                        record: Record {
                            holder_identity: Text::try_from(holder).unwrap_or_default(),
                            lease_duration_seconds: i32::from(duration),
                            leader_transitions: i32::from(transitions),
                            preferred_holder: preferred
                                .then(|| Text::try_from("third").unwrap_or_default()),
                            ..Record::default()
                        },
                        version: Version(u64::from(version)),
                    }
                });
                elector.handle_get(now, Ok(stored));
            }
            Input::GetFailed(code) => elector.handle_get(now, Err(store_error(code))),
            Input::Wrote(version) => elector.handle_write(now, Ok(Version(u64::from(version)))),
            Input::WriteFailed(code) => elector.handle_write(now, Err(store_error(code))),
            Input::Release => elector.request_release(now),
        }
        while let Some(event) = elector.poll_event() {
            match event {
                Event::StartedLeading { .. } => {
                    assert!(!leading, "started twice");
                    leading = true;
                }
                Event::StoppedLeading { .. } => {
                    assert!(leading, "stopped without starting");
                    leading = false;
                }
                Event::NewLeader(_) => {}
            }
        }
        if elector.is_leader(now) {
            assert!(leading, "leads without a StartedLeading event");
            let valid_until = elector.valid_until().expect("a leader has a deadline");
            assert!(now < valid_until, "leads past valid_until");
            assert!(elector.fencing_token().is_some());
        }
    }
}
