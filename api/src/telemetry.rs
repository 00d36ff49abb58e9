//! Logs (text or JSON, every line inside a request carries its request id)
//! and, when `telemetry.otlp_endpoint` is set, OpenTelemetry traces over OTLP.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::config::TelemetryConfig;

/// Flushes traces when dropped at shutdown.
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(Err(error)) = self.provider.take().map(|provider| provider.shutdown()) {
            eprintln!("could not flush traces: {error}");
        }
    }
}

/// Installs the global subscriber. Call once, at start-up.
pub fn init(config: &TelemetryConfig) -> anyhow::Result<TelemetryGuard> {
    let filter = EnvFilter::try_new(&config.log_filter)?;
    let fmt = match config.log_format.as_str() {
        "json" => tracing_subscriber::fmt::layer().json().with_current_span(true).boxed(),
        _ => tracing_subscriber::fmt::layer().boxed(),
    };
    let mut provider = None;
    let otel = if config.otlp_endpoint.is_empty() {
        None
    } else {
        let exporter =
            opentelemetry_otlp::SpanExporter::builder().with_tonic().with_endpoint(&config.otlp_endpoint).build()?;
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(
                opentelemetry_sdk::Resource::builder().with_service_name(config.service_name.clone()).build(),
            )
            .build();
        let tracer = tracer_provider.tracer("moke-gateway");
        provider = Some(tracer_provider);
        Some(tracing_opentelemetry::layer().with_tracer(tracer))
    };
    tracing_subscriber::registry().with(filter).with(fmt).with(otel).try_init()?;
    Ok(TelemetryGuard { provider })
}
