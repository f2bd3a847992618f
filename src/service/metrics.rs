//! The server's Prometheus metrics, served as text at `GET /metrics` on the serving port: live
//! games, open streams and connections, calls by method and code, refusals by reason, moves by
//! outcome, server moves and time-outs, and the store's append latency.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// A call's method and status code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    /// `/package.Service/Method`, or `other` for paths nobody serves.
    pub method: String,
    /// The gRPC status code's name, e.g. `Ok`, `InvalidArgument`.
    pub code: String,
}

/// A refusal's ErrorInfo reason.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    /// The stable reason, e.g. `NOT_YOUR_TURN`.
    pub reason: String,
}

/// A move's outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// `accepted` or `refused`.
    pub outcome: &'static str,
}

/// A notification sink (`webhook:<url>`, `nats:<stream>`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SinkLabels {
    /// The sink.
    pub sink: String,
}

/// A notification delivery's outcome, per sink.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DeliveryLabels {
    /// The sink.
    pub sink: String,
    /// `ok`, `failed` (to be tried again) or `dropped` (given up).
    pub result: &'static str,
}

/// Every metric of one server.
pub struct Metrics {
    registry: Registry,
    /// Games live in this server's memory.
    pub live_games: Gauge,
    /// Open game streams and firehose streams.
    pub open_streams: Gauge,
    /// Open client connections.
    pub connections: Gauge,
    /// Connections closed at once: too many open (in all or from one address).
    pub connections_refused: Counter,
    /// Calls answered, by method and code.
    pub calls: Family<CallLabels, Counter>,
    /// Refusals, by reason.
    pub refusals: Family<ReasonLabels, Counter>,
    /// Moves sent by seats, by outcome.
    pub moves: Family<OutcomeLabels, Counter>,
    /// Moves the server made for its seats (bots, seats left).
    pub server_moves: Counter,
    /// Moves the server made because a turn timer ran out.
    pub time_outs: Counter<u64, AtomicU64>,
    /// Seconds each store append took (until durable).
    pub store_appends: Histogram,
    /// Events a stream found waiting for it each time it read (how far behind it was).
    pub stream_lag: Histogram,
    /// Reads of the store by firehose streams behind the shared ring (starting further back,
    /// or fallen behind).
    pub firehose_store_reads: Counter,
    /// 1 while this server holds the publisher's lease (`serve --publish`).
    pub publishing: Gauge,
    /// Events the NATS stream is behind the store, while this server publishes.
    pub publish_lag: Gauge,
    /// Events published to NATS and acknowledged.
    pub published: Counter,
    /// Publishes JetStream acknowledged as duplicates (already in the stream).
    pub publish_duplicates: Counter,
    /// Times the publisher stopped on a failure of the broker or the store, and started over.
    pub publish_errors: Counter,
    /// Notification deliveries, by sink and outcome.
    pub notify_deliveries: Family<DeliveryLabels, Counter>,
    /// Events each notification sink is behind the store.
    pub notify_lag: Family<SinkLabels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric at zero, registered under the `unoflip_` prefix.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("unoflip");
        let metrics = Metrics {
            live_games: Gauge::default(),
            open_streams: Gauge::default(),
            connections: Gauge::default(),
            connections_refused: Counter::default(),
            calls: Family::default(),
            refusals: Family::default(),
            moves: Family::default(),
            server_moves: Counter::default(),
            time_outs: Counter::default(),
            // 50 us to about 1.6 s.
            store_appends: Histogram::new(
                prometheus_client::metrics::histogram::exponential_buckets(0.000_05, 2.0, 16),
            ),
            // 1 to 4096 events.
            stream_lag: Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
                1.0, 2.0, 13,
            )),
            firehose_store_reads: Counter::default(),
            publishing: Gauge::default(),
            publish_lag: Gauge::default(),
            published: Counter::default(),
            publish_duplicates: Counter::default(),
            publish_errors: Counter::default(),
            notify_deliveries: Family::default(),
            notify_lag: Family::default(),
            registry: Registry::default(),
        };
        registry.register(
            "live_games",
            "Games live in this server's memory",
            metrics.live_games.clone(),
        );
        registry.register(
            "open_streams",
            "Open game and firehose streams",
            metrics.open_streams.clone(),
        );
        registry.register(
            "connections",
            "Open client connections",
            metrics.connections.clone(),
        );
        registry.register(
            "connections_refused",
            "Connections closed at once because too many were open",
            metrics.connections_refused.clone(),
        );
        registry.register(
            "calls",
            "Calls answered, by method and gRPC code",
            metrics.calls.clone(),
        );
        registry.register(
            "refusals",
            "Refused calls, by ErrorInfo reason",
            metrics.refusals.clone(),
        );
        registry.register(
            "moves",
            "Moves sent by seats, by outcome",
            metrics.moves.clone(),
        );
        registry.register(
            "server_moves",
            "Moves the server made for its seats",
            metrics.server_moves.clone(),
        );
        registry.register(
            "time_outs",
            "Moves made because a turn timer ran out",
            metrics.time_outs.clone(),
        );
        registry.register(
            "store_append_seconds",
            "Time for a store append to be durable",
            metrics.store_appends.clone(),
        );
        registry.register(
            "stream_lag_events",
            "Events a stream found waiting each time it read: how far behind it was",
            metrics.stream_lag.clone(),
        );
        registry.register(
            "firehose_store_reads",
            "Store reads by firehose streams behind the shared ring",
            metrics.firehose_store_reads.clone(),
        );
        registry.register(
            "publishing",
            "1 while this server publishes events to NATS (holds the publisher's lease)",
            metrics.publishing.clone(),
        );
        registry.register(
            "publish_lag_events",
            "Events stored but not yet in the NATS stream (counted up to a million)",
            metrics.publish_lag.clone(),
        );
        registry.register(
            "published_events",
            "Events published to NATS and acknowledged",
            metrics.published.clone(),
        );
        registry.register(
            "publish_duplicates",
            "Publishes NATS acknowledged as duplicates of messages already in the stream",
            metrics.publish_duplicates.clone(),
        );
        registry.register(
            "publish_errors",
            "Times the publisher stopped on a failure of the broker or the store and started over",
            metrics.publish_errors.clone(),
        );
        registry.register(
            "notify_deliveries",
            "Notification deliveries, by sink and result (ok, failed and tried again, dropped)",
            metrics.notify_deliveries.clone(),
        );
        registry.register(
            "notify_lag_events",
            "Events a notification sink is behind the store (counted up to a million)",
            metrics.notify_lag.clone(),
        );
        Metrics {
            registry,
            ..metrics
        }
    }

    /// Registers the host sign-in's metrics: JWKS reads by result, keys in use.
    pub fn register_sign_in(&mut self, sign_in: &crate::service::accounts::sign_in::SignInMetrics) {
        self.registry.register(
            "sign_in_key_refreshes",
            "Reads of the sign-in's JWKS, by result (a failed one leaves the last good keys in use)",
            sign_in.refreshes.clone(),
        );
        self.registry.register(
            "sign_in_keys",
            "Keys of the sign-in's JWKS in use",
            sign_in.keys.clone(),
        );
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }

    /// Records that a stream found `events` waiting for it.
    pub fn observe_lag(&self, events: usize) {
        self.stream_lag.observe(events as f64);
    }

    /// Counts a move's outcome.
    pub fn move_done(&self, accepted: bool) {
        let outcome = if accepted { "accepted" } else { "refused" };
        self.moves.get_or_create(&OutcomeLabels { outcome }).inc();
    }
}

/// Counts one open stream (or connection) while it lives.
pub struct Open(Gauge);

impl Open {
    /// One more on `gauge` until dropped.
    pub fn new(gauge: &Gauge) -> Open {
        gauge.inc();
        Open(gauge.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_every_metric_and_counts() {
        let metrics = Metrics::new();
        metrics.move_done(true);
        metrics.move_done(false);
        metrics.move_done(true);
        metrics
            .refusals
            .get_or_create(&ReasonLabels {
                reason: "NOT_YOUR_TURN".into(),
            })
            .inc();
        metrics.store_appends.observe(0.0002);
        let open = Open::new(&metrics.open_streams);
        let text = metrics.render();
        assert!(
            text.contains(r#"unoflip_moves_total{outcome="accepted"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(r#"unoflip_moves_total{outcome="refused"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"unoflip_refusals_total{reason="NOT_YOUR_TURN"} 1"#),
            "{text}"
        );
        assert!(text.contains("unoflip_open_streams 1"), "{text}");
        assert!(
            text.contains("unoflip_store_append_seconds_count 1"),
            "{text}"
        );
        drop(open);
        assert!(metrics.render().contains("unoflip_open_streams 0"));
    }
}
