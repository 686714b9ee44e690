//! Unix milliseconds, the store's times, as UTC dates for people and
//! payloads: [`rfc3339`] (`2025-11-25T00:01:01.500Z`) and [`readable`]
//! (`2025-11-25 00:01:01 UTC`, the CLI reports). UTC only: there is no
//! time zone database here, so the zone is always named.

/// Unix ms as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
///
/// ```
/// assert_eq!(toolwarden_store::utc::rfc3339(0), "1970-01-01T00:00:00.000Z");
/// ```
pub fn rfc3339(ms: i64) -> String {
    let t = Civil::of(ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milli
    )
}

/// Unix ms as `YYYY-MM-DD HH:MM:SS UTC`, for a report read by people.
///
/// ```
/// assert_eq!(toolwarden_store::utc::readable(1_764_028_861_500), "2025-11-25 00:01:01 UTC");
/// ```
pub fn readable(ms: i64) -> String {
    let t = Civil::of(ms);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// A UTC calendar date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    milli: i64,
}

// === impl Civil ===

impl Civil {
    fn of(ms: i64) -> Civil {
        let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Civil {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: rem / 3_600_000,
            minute: rem / 60_000 % 60,
            second: rem / 1000 % 60,
            milli: rem % 1000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_764_028_861_500), "2025-11-25T00:01:01.500Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn readable_dates_name_the_zone() {
        assert_eq!(readable(1_795_965_739_005), "2026-11-29 15:22:19 UTC");
    }
}
