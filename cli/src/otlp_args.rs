//! The OTLP options `export` and `record` share, and turning them (with
//! the standard `OTEL_*` variables) into exporter settings before any
//! recording or upload starts, so a bad URL is an error now.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use usertrace_output::otlp::config::{self, parse_resource_attributes};
use usertrace_output::otlp::tail::TailLimits;
use usertrace_output::otlp::{Clock, ConfigError, Endpoint, EndpointArgs, Exporter, ExporterSettings, QueueLimits, ResourceSettings, TailPolicy, TailRule};

use crate::config_file::{ConfigFile, ConfigFileError};

/// How long `record` and `stat` give the exporter, after the session
/// ends, to send what is queued; what is left then is counted as dropped.
pub const RECORD_GRACE: Duration = Duration::from_secs(5);

/// Options of OTLP export.
#[derive(Debug, Clone, Default, Args)]
pub struct OtlpArgs {
    /// Send spans and events to this OTLP/HTTP endpoint (a base URL such
    /// as http://127.0.0.1:4318; /v1/traces and /v1/logs are appended)
    /// [default: $OTEL_EXPORTER_OTLP_ENDPOINT for export]
    #[arg(long = "otlp", value_name = "URL")]
    pub url: Option<String>,

    /// service.name of every process [default: $OTEL_SERVICE_NAME, else
    /// service.name in $OTEL_RESOURCE_ATTRIBUTES, else each process's name]
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,

    /// gzip or none [default: $OTEL_EXPORTER_OTLP_COMPRESSION, else none]
    #[arg(long, value_name = "COMPRESSION")]
    pub compression: Option<String>,

    /// PEM file of CA certificates to trust over https, besides the
    /// platform's store and the bundled roots [default:
    /// $OTEL_EXPORTER_OTLP_CERTIFICATE]
    #[arg(long = "otlp-certificate", value_name = "FILE")]
    pub certificate: Option<String>,

    /// PEM file of the client certificate (chain) for mutual TLS, with
    /// --otlp-client-key [default: $OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE]
    #[arg(long = "otlp-client-certificate", value_name = "FILE")]
    pub client_certificate: Option<String>,

    /// PEM file of the client's private key for mutual TLS [default:
    /// $OTEL_EXPORTER_OTLP_CLIENT_KEY]
    #[arg(long = "otlp-client-key", value_name = "FILE")]
    pub client_key: Option<String>,

    /// Tail-based export: send only the traces holding a span that breaks
    /// RULE, `NAME>DURATION` (a span named NAME, wildcards allowed, longer
    /// than DURATION) or `error` (a span that failed); repeat for more
    /// rules. Other traces are counted and dropped here. A trace waits 5 s
    /// after its root span ends, 60 s at most, within 32 MiB held; log
    /// records outside any span are sent as without --tail
    #[arg(long = "tail", value_name = "RULE", value_parser = TailRule::parse)]
    pub tail: Vec<TailRule>,

    /// Leave each process's command line (process.command_line, which
    /// may hold a password or token) out of what is exported
    #[arg(long = "otlp-no-command-line")]
    pub no_command_line: bool,

    /// A TOML file with the [otlp] endpoint, service, compression,
    /// timeout_ms, headers, resource_attributes, command_line (false to
    /// leave it out), certificate, client_certificate, client_key, [otlp.queue]
    /// max_batch_records, max_batch_age_ms, memory_cap_mib and [record]
    /// containers (as --containers); the command line wins over it, it
    /// over the OTEL_* variables
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Settings that cannot work, found before anything starts.
#[derive(Debug)]
pub enum SettingsError {
    /// A bad value, wherever it came from.
    Otlp(ConfigError),
    /// The --config file.
    File(ConfigFileError),
    /// A queue setting of the --config file out of its range.
    OutOfRange {
        /// Its key.
        key: &'static str,
        /// As given.
        value: u64,
        /// What it may be.
        range: &'static str,
    },
}

/// The longest `max_batch_age_ms`: a batch older than this would hold its
/// records back from the collector for longer than anyone waits to see
/// them.
pub const MAX_BATCH_AGE: Duration = Duration::from_secs(600);

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::Otlp(e) => e.fmt(f),
            SettingsError::File(e) => e.fmt(f),
            SettingsError::OutOfRange { key, value, range } => write!(f, "{key} = {value} in the config file is out of range: it must be {range}"),
        }
    }
}

impl From<ConfigError> for SettingsError {
    fn from(e: ConfigError) -> SettingsError {
        SettingsError::Otlp(e)
    }
}

impl OtlpArgs {
    /// The exporter these options ask for, started; `None` without
    /// --otlp or --config. Bad settings are refused here, before the
    /// session starts (`Err`: the exit code, the reason printed as
    /// `usertrace COMMAND: ...`).
    pub fn start_exporter(&self, command: &str) -> Result<Option<Exporter>, ExitCode> {
        if !self.enabled() {
            if !self.tail.is_empty() {
                eprintln!("usertrace {command}: --tail chooses which traces --otlp sends: give --otlp URL (or --config FILE) too");
                return Err(ExitCode::from(2));
            }
            return Ok(None);
        }
        let settings = self.settings().map_err(|e| {
            eprintln!("usertrace {command}: {e}");
            ExitCode::from(2)
        })?;
        Exporter::start(settings).map(Some).map_err(|e| {
            eprintln!("usertrace {command}: cannot start the OTLP exporter thread: {e}");
            ExitCode::from(1)
        })
    }

    /// Whether OTLP export was asked for (--otlp or --config).
    pub fn enabled(&self) -> bool {
        self.url.is_some() || self.config.is_some()
    }

    /// The exporter settings: these options, then the --config file, then
    /// the environment.
    pub fn settings(&self) -> Result<ExporterSettings, SettingsError> {
        let file = match &self.config {
            Some(path) => ConfigFile::read(path).map_err(SettingsError::File)?,
            None => ConfigFile::default(),
        };
        let var = |name: &str| file.var(name).or_else(|| std::env::var(name).ok().filter(|v| !v.is_empty()));
        let service = self.service.clone().or_else(|| file.otlp.service.clone());
        let args = EndpointArgs {
            url: self.url.clone(),
            compression: self.compression.clone(),
            certificate: self.certificate.clone(),
            client_certificate: self.client_certificate.clone(),
            client_key: self.client_key.clone(),
        };
        let endpoint = Endpoint::resolve(&args, var)?;
        let attributes = match var(config::RESOURCE_ATTRIBUTES_VAR) {
            Some(v) => parse_resource_attributes(&v)?,
            None => Vec::new(),
        };
        let resource = ResourceSettings {
            service_name: service.or_else(|| var(config::SERVICE_NAME_VAR)),
            host_name: host_name(),
            attributes,
            omit_command_line: self.no_command_line || file.otlp.command_line == Some(false),
        };
        let mut settings = ExporterSettings::new(endpoint, resource, Clock::from_reading(&crate::clock::now()));
        settings.tail = (!self.tail.is_empty()).then(|| TailPolicy { rules: self.tail.clone(), limits: TailLimits::default() });
        let (q, default) = (&file.otlp.queue, QueueLimits::default());
        let out_of_range = |key, value: u64, range| SettingsError::OutOfRange { key, value, range };
        if q.max_batch_records == Some(0) {
            return Err(out_of_range("otlp.queue.max_batch_records", 0, "at least 1"));
        }
        if let Some(ms) = q.max_batch_age_ms.filter(|&ms| ms == 0 || Duration::from_millis(ms) > MAX_BATCH_AGE) {
            return Err(out_of_range("otlp.queue.max_batch_age_ms", ms, "from 1 to 600000 (10 minutes)"));
        }
        if q.memory_cap_mib == Some(0) {
            return Err(out_of_range("otlp.queue.memory_cap_mib", 0, "at least 1"));
        }
        settings.limits = QueueLimits {
            max_batch_records: q.max_batch_records.unwrap_or(default.max_batch_records),
            max_batch_age: q.max_batch_age_ms.map_or(default.max_batch_age, Duration::from_millis),
            memory_cap_bytes: q.memory_cap_mib.map_or(default.memory_cap_bytes, |mib| mib.saturating_mul(1 << 20)),
        };
        Ok(settings)
    }
}

/// The kernel's host name (what `hostname` prints).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_owned()).unwrap_or_default()
}


#[cfg(test)]
mod tests {
    use clap::Args;
    use usertrace_output::otlp::tail::{DECISION_WAIT, MAX_HELD_BYTES, MAX_HOLD};

    use super::OtlpArgs;

    #[test]
    fn the_tail_help_states_the_limits_the_sampler_holds_traces_by() {
        let command = OtlpArgs::augment_args(clap::Command::new("record"));
        let tail = command.get_arguments().find(|a| a.get_id() == "tail").unwrap();
        let help = tail.get_long_help().or(tail.get_help()).unwrap().to_string().replace('\n', " ");
        for limit in [format!("{} s after its root", DECISION_WAIT.as_secs()), format!("{} s at most", MAX_HOLD.as_secs()), format!("{} MiB", MAX_HELD_BYTES >> 20)] {
            assert!(help.contains(&limit), "`{limit}` not in: {help}");
        }
    }

    #[test]
    fn tail_rules_are_read_as_the_sampler_reads_them() {
        let command = OtlpArgs::augment_args(clap::Command::new("record").no_binary_name(true));
        let matches = command.clone().try_get_matches_from(["--otlp", "http://127.0.0.1:4318", "--tail", "handle>250ms", "--tail", "error"]).unwrap();
        let args = <OtlpArgs as clap::FromArgMatches>::from_arg_matches(&matches).unwrap();
        assert_eq!(args.tail.iter().map(ToString::to_string).collect::<Vec<_>>(), ["handle>250ms", "error"]);
        let e = command.try_get_matches_from(["--tail", "slow"]).unwrap_err().to_string();
        assert!(e.contains("NAME>DURATION"), "{e}");
    }
}
