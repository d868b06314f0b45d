//! Whom the exporter trusts over https, and the certificate it shows when
//! the collector asks for one (mutual TLS).
//!
//! A collector's certificate is checked against the platform's trust
//! store (`/etc/ssl/certs`, or `SSL_CERT_FILE` and `SSL_CERT_DIR` when
//! set, as OpenSSL reads them), the bundled Mozilla roots, and the CA
//! certificates of `OTEL_EXPORTER_OTLP_CERTIFICATE`. The files are read
//! and parsed when the settings are, so a missing or broken one is an
//! error before anything starts.
//!
//! One connection carries both signals to one host, so the per-signal
//! variables (`OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE`, `..._LOGS_...`)
//! stand in for the general one when it is unset; if the traces and logs
//! variables name different files, that is an error, since only one can
//! be used.
//!
//! References: the OpenTelemetry specification, "OpenTelemetry Protocol
//! Exporter" (protocol/exporter.md): Certificate File, Client Certificate
//! File, Client Key File.

use std::fmt;

use ureq::tls::{parse_pem, Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig};

use super::{ConfigError, EndpointArgs};

/// PEM file of CA certificates to trust besides the platform's.
pub const CERTIFICATE_VAR: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE";
/// PEM file of the client's certificate chain, for mutual TLS.
pub const CLIENT_CERTIFICATE_VAR: &str = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE";
/// PEM file of the client's private key, for mutual TLS.
pub const CLIENT_KEY_VAR: &str = "OTEL_EXPORTER_OTLP_CLIENT_KEY";

/// The three settings: the command-line flag, the general variable and
/// its traces and logs variants.
const SETTINGS: [[&str; 4]; 3] = [
    ["--otlp-certificate", CERTIFICATE_VAR, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE"],
    ["--otlp-client-certificate", CLIENT_CERTIFICATE_VAR, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE"],
    ["--otlp-client-key", CLIENT_KEY_VAR, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY"],
];

/// The certificates read for an endpoint.
#[derive(Clone, Default)]
pub struct Tls {
    /// CA certificates trusted besides the platform's and the bundled ones.
    pub extra_roots: Vec<Certificate<'static>>,
    /// The chain and key shown to a collector that asks (mutual TLS).
    pub client: Option<ClientCert>,
    /// The files they came from, for `Debug`.
    files: Vec<String>,
}

impl Tls {
    /// The files `args` names, else the variables `var` gives, read and
    /// parsed.
    pub fn resolve(args: &EndpointArgs, var: &impl Fn(&str) -> Option<String>) -> Result<Tls, ConfigError> {
        let given = [&args.certificate, &args.client_certificate, &args.client_key];
        let mut paths: [Option<(String, String)>; 3] = Default::default();
        for (i, [flag, general, traces, logs]) in SETTINGS.into_iter().enumerate() {
            paths[i] = match (given[i], var(general), var(traces), var(logs)) {
                (Some(path), ..) => Some((flag.to_owned(), path.clone())),
                (None, Some(path), ..) => Some((general.to_owned(), path)),
                (None, None, Some(t), Some(l)) if t != l => {
                    return Err(ConfigError::SignalsDisagree { traces: traces.to_owned(), logs: logs.to_owned() })
                }
                (None, None, Some(path), _) => Some((traces.to_owned(), path)),
                (None, None, None, Some(path)) => Some((logs.to_owned(), path)),
                (None, None, None, None) => None,
            };
        }
        let [certificate, client_certificate, client_key] = paths;
        let mut tls = Tls::default();
        if let Some((setting, path)) = certificate {
            tls.extra_roots = certificates(&setting, &path)?;
            tls.files.push(path);
        }
        match (client_certificate, client_key) {
            (Some((setting, chain_path)), Some((key_setting, key_path))) => {
                let chain = certificates(&setting, &chain_path)?;
                let key = private_key(&key_setting, &key_path)?;
                tls.client = Some(ClientCert::new_with_certs(&chain, key));
                tls.files.extend([chain_path, key_path]);
            }
            (Some((setting, _)), None) | (None, Some((setting, _))) => return Err(ConfigError::HalfAClientCertificate { given: setting }),
            (None, None) => {}
        }
        Ok(tls)
    }

    /// The agent's TLS configuration: the platform's roots, the bundled
    /// ones and the extra ones; the client certificate if any.
    pub fn agent_config(&self) -> TlsConfig {
        // The platform store is read as OpenSSL would (SSL_CERT_FILE,
        // SSL_CERT_DIR, else the distribution's bundle); a certificate it
        // cannot parse is skipped, as OpenSSL skips it.
        let platform = rustls_native_certs::load_native_certs().certs;
        let bundled = webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().map(|der| Certificate::from_der(der.as_ref()));
        let roots: Vec<Certificate<'static>> = platform
            .iter()
            .map(|der| Certificate::from_der(der.as_ref()).to_owned())
            .chain(bundled)
            .chain(self.extra_roots.iter().cloned())
            .collect();
        TlsConfig::builder().root_certs(RootCerts::from(roots)).client_cert(self.client.clone()).build()
    }
}

/// Every certificate in the PEM file at `path`; at least one.
fn certificates(setting: &str, path: &str) -> Result<Vec<Certificate<'static>>, ConfigError> {
    let mut certs = Vec::new();
    for item in parse_pem(&read(setting, path)?) {
        match item {
            Ok(PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(bad_file(setting, path, format!("it is not valid PEM ({e})"))),
        }
    }
    if certs.is_empty() {
        return Err(bad_file(setting, path, "it holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into()));
    }
    Ok(certs)
}

/// The first private key in the PEM file at `path`.
fn private_key(setting: &str, path: &str) -> Result<PrivateKey<'static>, ConfigError> {
    for item in parse_pem(&read(setting, path)?) {
        match item {
            Ok(PemItem::PrivateKey(key)) => return Ok(key),
            Ok(_) => {}
            // The parser's message says where, never what the key holds.
            Err(_) => return Err(bad_file(setting, path, "it is not valid PEM".into())),
        }
    }
    Err(bad_file(setting, path, "it holds no PEM private key (-----BEGIN PRIVATE KEY-----)".into()))
}

fn read(setting: &str, path: &str) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|e| bad_file(setting, path, format!("cannot read it: {e}")))
}

fn bad_file(setting: &str, path: &str, why: String) -> ConfigError {
    ConfigError::BadCertificateFile { setting: setting.to_owned(), path: path.to_owned(), why }
}

impl fmt::Debug for Tls {
    /// The files, never a key's bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls").field("files", &self.files).finish_non_exhaustive()
    }
}

impl PartialEq for Tls {
    fn eq(&self, other: &Tls) -> bool {
        let ders = |certs: &[Certificate<'static>]| certs.iter().map(|c| c.der().to_vec()).collect::<Vec<_>>();
        let client = |t: &Tls| t.client.as_ref().map(|c| (ders(c.certs()), c.private_key().der().to_vec()));
        ders(&self.extra_roots) == ders(&other.extra_roots) && client(self) == client(other)
    }
}

impl Eq for Tls {}
