//! Counters and the added-latency histogram, rendered in Prometheus' text exposition format
//! (`GET /metrics`). Every family is prefixed `turnkeeper_proxy_`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::family::Family;

/// Each counter family with its help text. A family not listed here is a bug (debug builds
/// assert it).
const FAMILIES: &[(&str, &str)] = &[
    (
        "requests_total",
        "Requests received, by route (messages, chat, responses, gemini, other).",
    ),
    (
        "upstream_responses_total",
        "Responses from the upstream, by status code.",
    ),
    (
        "forwarded_unchanged_total",
        "Requests forwarded byte-identical, by route and reason (valid, too_large, unparsable, not_a_request, guard, undecodable).",
    ),
    (
        "repairs_total",
        "Changes made to requests before sending, by route and rule id.",
    ),
    (
        "restores_total",
        "Assistant turns restored from the turn store, by route.",
    ),
    (
        "store_lookups_total",
        "Turn store lookups for assistant messages, by route and result (hit, miss, error).",
    ),
    (
        "records_total",
        "Responses recorded in the turn store, by route and result (stored, incomplete, not_a_turn, error, too_large).",
    ),
    (
        "recoveries_total",
        "Recoverable 400s retried once, by route, action and the retry's status class.",
    ),
    (
        "recovery_skipped_total",
        "400s not retried, by route and reason (not_repairable, no_change, failed).",
    ),
    (
        "streams_aborted_total",
        "Responses cut short, by route and side (client, upstream).",
    ),
    (
        "upstream_errors_total",
        "Requests the upstream could not be reached for, by route.",
    ),
    (
        "upstream_retries_total",
        "Requests sent again on a fresh connection after the upstream connection failed before any response byte, by route and result (ok, failed).",
    ),
    (
        "clients_gone_total",
        "Clients that left before the response headers were sent (while the proxy read, repaired or waited for the upstream), by route.",
    ),
    (
        "messages_reused_total",
        "Request messages whose reading was taken from the same bytes in an earlier request of the conversation instead of being scanned again, by route.",
    ),
    (
        "decoded_total",
        "Request bodies decoded from their Content-Encoding to be judged, by route and encoding.",
    ),
];

/// Upper bounds (seconds) of the latency histogram's buckets.
const BUCKETS: &[f64] = &[
    0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// The proxy's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    counters: Mutex<BTreeMap<(&'static str, String), u64>>,
    in_flight: AtomicI64,
    /// The added latency, one histogram per family (`Family::index`).
    added: [Histogram; 4],
    /// Of it, the proxy's own part: from the body's last byte to forwarding.
    judged: [Histogram; 4],
}

#[derive(Debug, Default)]
struct Histogram {
    buckets: [AtomicU64; 12],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Histogram {
    fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        for (i, le) in BUCKETS.iter().enumerate() {
            if secs <= *le {
                self.buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The sum of the observed durations, in seconds.
    fn sum_seconds(&self) -> f64 {
        self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }
}

/// Writes the histograms `per_family` (one per family, labelled by route) as the Prometheus
/// histogram `turnkeeper_proxy_{name}`.
fn render_histograms(out: &mut String, name: &str, help: &str, per_family: &[Histogram; 4]) {
    let _ = writeln!(
        out,
        "# HELP turnkeeper_proxy_{name} {help}\n# TYPE turnkeeper_proxy_{name} histogram"
    );
    for f in Family::ALL {
        let h = &per_family[f.index()];
        let route = f.label();
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "turnkeeper_proxy_{name}_bucket{{route=\"{route}\",le=\"{le}\"}} {}",
                h.buckets[i].load(Ordering::Relaxed)
            );
        }
        let count = h.count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "turnkeeper_proxy_{name}_bucket{{route=\"{route}\",le=\"+Inf\"}} {count}"
        );
        let sum = h.sum_seconds();
        let _ = writeln!(
            out,
            "turnkeeper_proxy_{name}_sum{{route=\"{route}\"}} {sum}"
        );
        let _ = writeln!(
            out,
            "turnkeeper_proxy_{name}_count{{route=\"{route}\"}} {count}"
        );
    }
}

/// Decrements the in-flight gauge when dropped.
pub(crate) struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn label_text(labels: &[(&str, &str)]) -> String {
    let mut s = String::new();
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{k}=\"");
        for c in v.chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                '\n' => s.push_str("\\n"),
                c => s.push(c),
            }
        }
        s.push('"');
    }
    s
}

impl Metrics {
    /// Adds one to counter `name` with `labels`.
    pub fn inc(&self, name: &'static str, labels: &[(&str, &str)]) {
        self.add(name, labels, 1);
    }

    /// Adds `n` to counter `name` with `labels`.
    pub fn add(&self, name: &'static str, labels: &[(&str, &str)], n: u64) {
        debug_assert!(
            FAMILIES.iter().any(|(f, _)| *f == name),
            "metric family {name} has no help text"
        );
        let key = (name, label_text(labels));
        if let Ok(mut c) = self.counters.lock() {
            *c.entry(key).or_insert(0) += n;
        }
    }

    /// The value of counter `name` with exactly `labels` (0 when never incremented).
    pub fn get(&self, name: &'static str, labels: &[(&str, &str)]) -> u64 {
        let key = (name, label_text(labels));
        self.counters
            .lock()
            .map(|c| c.get(&key).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// The sum of counter `name` over all its labels.
    pub fn total(&self, name: &'static str) -> u64 {
        self.counters
            .lock()
            .map(|c| {
                c.iter()
                    .filter(|((n, _), _)| *n == name)
                    .map(|(_, v)| *v)
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Counts a request in flight until the guard is dropped.
    pub(crate) fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }

    /// Records the latency the proxy added before sending a request of `family` upstream
    /// (receiving the body, decoding, store lookups, repair), and of it `judged`, the part
    /// after the body's last byte arrived.
    pub(crate) fn observe_added(&self, family: Family, added: Duration, judged: Duration) {
        self.added[family.index()].observe(added);
        self.judged[family.index()].observe(judged);
    }

    /// How many requests of the route labelled `route` had their added latency observed.
    pub fn added_count(&self, route: &str) -> u64 {
        Family::of_label(route).map_or(0, |f| self.added[f.index()].count.load(Ordering::Relaxed))
    }

    /// For the route labelled `route`: the seconds added in all (the body arriving included) and
    /// of them the seconds judged (after the body's last byte), summed over its requests.
    pub fn added_and_judged_seconds(&self, route: &str) -> (f64, f64) {
        Family::of_label(route).map_or((0.0, 0.0), |f| {
            (
                self.added[f.index()].sum_seconds(),
                self.judged[f.index()].sum_seconds(),
            )
        })
    }

    /// Prometheus text format, version 0.0.4.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let counters = self.counters.lock().map(|c| c.clone()).unwrap_or_default();
        for (family, help) in FAMILIES {
            let _ = writeln!(out, "# HELP turnkeeper_proxy_{family} {help}");
            let _ = writeln!(out, "# TYPE turnkeeper_proxy_{family} counter");
            for ((name, labels), v) in &counters {
                if name == family {
                    if labels.is_empty() {
                        let _ = writeln!(out, "turnkeeper_proxy_{family} {v}");
                    } else {
                        let _ = writeln!(out, "turnkeeper_proxy_{family}{{{labels}}} {v}");
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "# HELP turnkeeper_proxy_in_flight Requests of the routes the proxy reads being handled.\n# TYPE turnkeeper_proxy_in_flight gauge\nturnkeeper_proxy_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        render_histograms(
            &mut out,
            "added_seconds",
            "Time from the start of a request to its forwarding: the body arriving, then decoded, read, looked up in the turn store and repaired, by route.",
            &self.added,
        );
        render_histograms(
            &mut out,
            "judged_seconds",
            "The proxy's own part of the added time: from the request body's last byte to its forwarding (decoding, reading, store lookups, repair), by route.",
            &self.judged,
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_gauge_and_histogram_in_text_format() {
        let m = Metrics::default();
        m.inc("repairs_total", &[("rule", "AN-05")]);
        m.add("repairs_total", &[("rule", "AN-05")], 2);
        m.inc("restores_total", &[]);
        m.observe_added(
            Family::Chat,
            Duration::from_micros(300),
            Duration::from_micros(90),
        );
        let text = m.render();
        // Whole lines of the exposition, each of which must be there.
        for line in [
            "turnkeeper_proxy_repairs_total{rule=\"AN-05\"} 3",
            "turnkeeper_proxy_restores_total 1",
            "# TYPE turnkeeper_proxy_repairs_total counter",
            "turnkeeper_proxy_added_seconds_bucket{route=\"chat\",le=\"0.00025\"} 0",
            "turnkeeper_proxy_added_seconds_bucket{route=\"chat\",le=\"0.0005\"} 1",
            "turnkeeper_proxy_added_seconds_count{route=\"chat\"} 1",
            "turnkeeper_proxy_added_seconds_count{route=\"gemini\"} 0",
            "turnkeeper_proxy_added_seconds_sum{route=\"chat\"} 0.0003",
            // The judged part, in its own histogram: 90 µs falls in the first bucket.
            "# TYPE turnkeeper_proxy_judged_seconds histogram",
            "turnkeeper_proxy_judged_seconds_bucket{route=\"chat\",le=\"0.0001\"} 1",
            "turnkeeper_proxy_judged_seconds_sum{route=\"chat\"} 0.00009",
            "turnkeeper_proxy_judged_seconds_count{route=\"chat\"} 1",
            "turnkeeper_proxy_judged_seconds_count{route=\"messages\"} 0",
            "turnkeeper_proxy_in_flight 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from:\n{text}"
            );
        }
        assert_eq!(m.added_count("chat"), 1);
        assert_eq!(m.added_and_judged_seconds("chat"), (0.0003, 0.00009));
        assert_eq!(m.added_and_judged_seconds("gemini"), (0.0, 0.0));
        assert_eq!(m.added_and_judged_seconds("other"), (0.0, 0.0));
        assert_eq!(m.get("repairs_total", &[("rule", "AN-05")]), 3);
        assert_eq!(m.total("repairs_total"), 3);
        {
            let _g = m.in_flight();
            assert!(m.render().contains("turnkeeper_proxy_in_flight 1\n"));
        }
        // The guard gone, the request is no longer in flight.
        assert!(m.render().contains("turnkeeper_proxy_in_flight 0\n"));
        assert_eq!(m.added_count("gemini"), 0);
        assert_eq!(m.added_count("other"), 0);
        assert_eq!(label_text(&[("a", "x\"y")]), "a=\"x\\\"y\"");
        assert_eq!(
            label_text(&[("route", "chat"), ("rule", "a\\b\nc")]),
            "route=\"chat\",rule=\"a\\\\b\\nc\""
        );
    }
}
