//! Wall-clock timestamps of the record (`acquireTime`, `renewTime`): RFC 3339 text.
//!
//! These are for humans: the election never compares them with a clock (`docs/leader-lease.md`
//! §3.4). The Lease writes Kubernetes `MicroTime` (`2026-11-30T10:00:00.123456Z`, exactly six
//! fractional digits); the old annotation writes `metav1.Time` (`2017-02-22T07:09:59Z`, whole
//! seconds). Reading accepts either, any number of fractional digits (truncated to microseconds),
//! `Z` or a numeric offset, and a lower-case `t`/`z`, as RFC 3339 §5.6 allows.

use core::fmt;
use core::ops::RangeInclusive;

use nom::bytes::complete::take_while_m_n;
use nom::character::complete::{char, digit0, one_of};
use nom::combinator::opt;
use nom::{IResult, Parser};

const MICROS_PER_SEC: i64 = 1_000_000;
const SECS_PER_DAY: i64 = 86_400;

/// A UTC wall-clock instant with microsecond precision. Parsing yields years 0000 to 9999
/// ([`MicroTime::MIN`]..=[`MicroTime::MAX`]); other values print with wider years.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MicroTime(i64);

/// How many fractional digits [`MicroTime::display`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Exactly six digits: Kubernetes `MicroTime` (Lease objects).
    Micros,
    /// None, truncated: `metav1.Time` (the old annotation record).
    Seconds,
}

/// Why a timestamp did not parse; `offset` is the byte offset inside the timestamp text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeError {
    /// Byte offset of the first offending byte.
    pub offset: usize,
    /// What was expected there.
    pub expected: &'static str,
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid RFC 3339 timestamp at byte {}: expected {} (like 2026-11-30T10:00:00.123456Z)",
            self.offset, self.expected
        )
    }
}

impl core::error::Error for TimeError {}

impl MicroTime {
    /// The Unix epoch, 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH: Self = Self(0);
    /// The earliest time RFC 3339 can write: 0000-01-01T00:00:00Z.
    pub const MIN: Self = Self(-62_167_219_200 * MICROS_PER_SEC);
    /// The latest time RFC 3339 can write: 9999-12-31T23:59:59.999999Z.
    pub const MAX: Self = Self(253_402_300_800 * MICROS_PER_SEC - 1);

    /// The instant `micros` microseconds after the Unix epoch (negative: before it).
    pub const fn from_unix_micros(micros: i64) -> Self {
        Self(micros)
    }

    /// Microseconds since the Unix epoch.
    pub const fn unix_micros(self) -> i64 {
        self.0
    }

    /// This instant plus one microsecond (saturating).
    pub const fn next_micro(self) -> Self {
        Self(self.0.saturating_add(1))
    }

    /// Parses an RFC 3339 date-time.
    pub fn parse(text: &str) -> Result<Self, TimeError> {
        let bytes = text.as_bytes();
        match date_time(bytes) {
            Ok((_, time)) => Ok(time),
            Err(Expected { rest, what }) => Err(TimeError {
                offset: bytes.len() - rest.len(),
                expected: what,
            }),
        }
    }

    /// Formats with the given precision (see [`Precision`]).
    pub fn display(self, precision: Precision) -> impl fmt::Display {
        Formatted {
            time: self,
            precision,
        }
    }
}

struct Formatted {
    time: MicroTime,
    precision: Precision,
}

impl fmt::Display for Formatted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.time.0.div_euclid(MICROS_PER_SEC);
        let micros = self.time.0.rem_euclid(MICROS_PER_SEC);
        let days = secs.div_euclid(SECS_PER_DAY);
        let of_day = secs.rem_euclid(SECS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            of_day / 3600,
            of_day / 60 % 60,
            of_day % 60
        )?;
        if self.precision == Precision::Micros {
            write!(f, ".{micros:06}")?;
        }
        f.write_str("Z")
    }
}

impl fmt::Display for MicroTime {
    /// Kubernetes `MicroTime` form: six fractional digits, `Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display(Precision::Micros).fmt(f)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (valid for every `year`, month 1–12).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Count from 0000-03-01 so the leap day ends the year; eras are 400-year cycles.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Where the grammar stopped: the input left at that point and what was expected there.
struct Expected<'a> {
    rest: &'a [u8],
    what: &'static str,
}

/// One step of the grammar: the rest of the input and the value read.
type Step<'a, T> = Result<(&'a [u8], T), Expected<'a>>;

const fn expected<'a, T>(rest: &'a [u8], what: &'static str) -> Step<'a, T> {
    Err(Expected { rest, what })
}

/// Exactly `n` decimal digits whose value lies in `range`; a value out of range is reported at
/// its first digit, a missing digit where it is missing.
fn number<'a>(
    input: &'a [u8],
    n: usize,
    range: RangeInclusive<i64>,
    what: &'static str,
) -> Step<'a, i64> {
    let run: IResult<&[u8], &[u8]> = take_while_m_n(0, n, |b: u8| b.is_ascii_digit()).parse(input);
    let Ok((rest, digits)) = run else {
        return expected(input, what);
    };
    if digits.len() < n {
        return expected(rest, what);
    }
    let value = decimal(digits);
    if range.contains(&value) {
        Ok((rest, value))
    } else {
        expected(input, what)
    }
}

/// The value of a run of ASCII digits (at most 18, so it cannot overflow).
fn decimal(digits: &[u8]) -> i64 {
    digits
        .iter()
        .fold(0, |value, b| value * 10 + i64::from(b - b'0'))
}

/// One of the bytes of `accept`.
fn one_byte<'a>(input: &'a [u8], accept: &'static str, what: &'static str) -> Step<'a, u8> {
    let read: IResult<&[u8], char> = one_of(accept).parse(input);
    match read {
        Ok((rest, c)) => Ok((rest, c as u8)),
        Err(_) => expected(input, what),
    }
}

/// An optional fraction of a second, `.` and at least one digit, as microseconds (digits past
/// the sixth are dropped).
fn fraction(input: &[u8]) -> Step<'_, i64> {
    let dot: IResult<&[u8], Option<char>> = opt(char('.')).parse(input);
    let Ok((rest, Some(_))) = dot else {
        return Ok((input, 0));
    };
    let run: IResult<&[u8], &[u8]> = digit0.parse(rest);
    match run {
        Ok((after, digits)) if !digits.is_empty() => {
            let kept = digits.get(..6).unwrap_or(digits);
            let scale = 10i64.pow(6 - kept.len() as u32);
            Ok((after, decimal(kept) * scale))
        }
        _ => expected(rest, "a digit after '.'"),
    }
}

/// `Z` (0) or a numeric offset `+hh:mm` / `-hh:mm`, in seconds east of UTC.
fn zone_offset(input: &[u8]) -> Step<'_, i64> {
    let (rest, sign) = one_byte(input, "Zz+-", "'Z' or a numeric offset")?;
    let sign = match sign {
        b'+' => 1,
        b'-' => -1,
        _ => return Ok((rest, 0)),
    };
    let (rest, hours) = number(rest, 2, 0..=23, "an offset hour 00-23")?;
    let (rest, _) = one_byte(rest, ":", "':'")?;
    let (rest, minutes) = number(rest, 2, 0..=59, "an offset minute 00-59")?;
    Ok((rest, sign * (hours * 3600 + minutes * 60)))
}

/// RFC 3339 §5.6 `date-time`, the whole input.
fn date_time(input: &[u8]) -> Step<'_, MicroTime> {
    let (rest, year) = number(input, 4, 0..=9999, "a four-digit year")?;
    let (rest, _) = one_byte(rest, "-", "'-'")?;
    let (rest, month) = number(rest, 2, 1..=12, "a month 01-12")?;
    let (rest, _) = one_byte(rest, "-", "'-'")?;
    let last_day = days_in_month(year, month);
    let (rest, day) = number(rest, 2, 1..=last_day, "a day of that month")?;
    let (rest, _) = one_byte(rest, "Tt", "'T'")?;
    let (rest, hour) = number(rest, 2, 0..=23, "an hour 00-23")?;
    let (rest, _) = one_byte(rest, ":", "':'")?;
    let (rest, minute) = number(rest, 2, 0..=59, "a minute 00-59")?;
    let (rest, _) = one_byte(rest, ":", "':'")?;
    // 60 is a leap second; like Go, fold it into the next minute.
    let (rest, second) = number(rest, 2, 0..=60, "a second 00-60")?;
    let (rest, micros) = fraction(rest)?;
    let (rest, offset_secs) = zone_offset(rest)?;
    if !rest.is_empty() {
        return expected(rest, "the end of the timestamp");
    }
    let secs =
        days_from_civil(year, month, day) * SECS_PER_DAY + hour * 3600 + minute * 60 + second
            - offset_secs;
    let time = MicroTime(secs * MICROS_PER_SEC + micros);
    if !(MicroTime::MIN..=MicroTime::MAX).contains(&time) {
        // An offset (or leap second) pushed it out of the four-digit years.
        return expected(input, "a time within years 0000-9999 once converted to UTC");
    }
    Ok((rest, time))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use proptest::prelude::*;

    fn parse(s: &str) -> MicroTime {
        MicroTime::parse(s).unwrap()
    }

    #[test]
    fn epoch_and_known_instants() {
        assert_eq!(parse("1970-01-01T00:00:00Z"), MicroTime::UNIX_EPOCH);
        // `date -u -d 2017-02-22T07:09:59Z +%s` = 1487747399 (kubernetes/kubernetes#41956).
        assert_eq!(
            parse("2017-02-22T07:09:59Z").unix_micros(),
            1_487_747_399_000_000
        );
        assert_eq!(
            parse("2026-11-30T10:00:00.123456Z").unix_micros(),
            1_796_032_800_123_456
        );
        assert_eq!(
            parse("2000-02-29T00:00:00Z").unix_micros(),
            951_782_400_000_000
        );
    }

    /// `docs/leader-lease.md` §1.2: MicroTime is written with exactly six fractional digits and
    /// `Z`.
    #[test]
    fn writes_kubernetes_forms() {
        let t = parse("2026-11-30T10:04:58.654321Z");
        assert_eq!(t.to_string(), "2026-11-30T10:04:58.654321Z");
        assert_eq!(
            t.display(Precision::Seconds).to_string(),
            "2026-11-30T10:04:58Z"
        );
        assert_eq!(
            parse("2026-11-30T10:04:58Z").to_string(),
            "2026-11-30T10:04:58.000000Z"
        );
        assert_eq!(
            MicroTime::from_unix_micros(-1).to_string(),
            "1969-12-31T23:59:59.999999Z"
        );
    }

    /// `docs/leader-lease.md` §1.3: read tolerantly: fractional or whole seconds, offsets, lower
    /// case.
    #[test]
    fn reads_tolerantly() {
        assert_eq!(
            parse("2017-02-22T07:09:59.5Z").unix_micros(),
            1_487_747_399_500_000
        );
        assert_eq!(
            parse("2017-02-22T07:09:59.123456789Z").unix_micros(),
            1_487_747_399_123_456
        );
        assert_eq!(
            parse("2017-02-22t09:09:59+02:00"),
            parse("2017-02-22T07:09:59z")
        );
        assert_eq!(
            parse("2017-02-22T06:39:59-00:30"),
            parse("2017-02-22T07:09:59Z")
        );
    }

    #[test]
    fn rejects_with_position() {
        let e = MicroTime::parse("2017-02-30T07:09:59Z").unwrap_err();
        assert_eq!(
            e,
            TimeError {
                offset: 8,
                expected: "a day of that month"
            }
        );
        assert_eq!(
            MicroTime::parse("2017-02-22T07:09:59").unwrap_err().offset,
            19
        );
        assert_eq!(
            MicroTime::parse("2017-02-22T07:09:59.Z")
                .unwrap_err()
                .offset,
            20
        );
        assert_eq!(
            MicroTime::parse("2017-02-22T07:09:59Zx")
                .unwrap_err()
                .offset,
            20
        );
        assert_eq!(MicroTime::parse("").unwrap_err().offset, 0);
        assert!(MicroTime::parse("２017-02-22T07:09:59Z").is_err());
        let e = MicroTime::parse("0000-01-01T00:00:00+00:01").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(MicroTime::parse("9999-12-31T23:59:60Z").is_err());
        assert_eq!(
            MicroTime::parse("9999-12-31T23:59:59.999999Z"),
            Ok(MicroTime::MAX)
        );
        assert_eq!(MicroTime::parse("0000-01-01T00:00:00Z"), Ok(MicroTime::MIN));
    }

    proptest! {
        #[test]
        fn micros_round_trip(micros in MicroTime::MIN.0..=MicroTime::MAX.0) {
            let t = MicroTime::from_unix_micros(micros);
            prop_assert_eq!(MicroTime::parse(&t.to_string()), Ok(t));
        }

        #[test]
        fn days_round_trip(days in -719_528i64..2_932_897) {
            let (y, m, d) = civil_from_days(days);
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
