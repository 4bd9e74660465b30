//! Serde helpers: a [`Duration`] as whole milliseconds.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// Serialize a duration as milliseconds.
pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Deserialize milliseconds into a duration.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    u64::deserialize(d).map(Duration::from_millis)
}

/// The same for `Option<Duration>` (`null` when absent).
pub(crate) mod option {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Serialize an optional duration as milliseconds or `null`.
    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    /// Deserialize milliseconds or `null`.
    #[allow(dead_code)]
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        Option::<u64>::deserialize(d).map(|o| o.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Waits {
        #[serde(with = "super")]
        after: Duration,
        #[serde(with = "super::option")]
        maybe: Option<Duration>,
    }

    /// Serialises `w`, compares the JSON, and reads it back.
    fn check(w: Waits, json: &str) {
        assert_eq!(serde_json::to_string(&w).ok().as_deref(), Some(json));
        assert_eq!(serde_json::from_str::<Waits>(json).ok(), Some(w));
    }

    #[test]
    fn durations_are_whole_milliseconds() {
        check(
            Waits {
                after: Duration::from_millis(644),
                maybe: Some(Duration::from_millis(20_000)),
            },
            r#"{"after":644,"maybe":20000}"#,
        );
        check(
            Waits {
                after: Duration::ZERO,
                maybe: None,
            },
            r#"{"after":0,"maybe":null}"#,
        );
        assert!(serde_json::from_str::<Waits>(r#"{"after":-1,"maybe":null}"#).is_err());
        assert!(serde_json::from_str::<Waits>(r#"{"after":1,"maybe":"x"}"#).is_err());
    }
}
