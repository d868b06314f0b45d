//! A CA of the test's own (rcgen), and an https server on 127.0.0.1
//! (rustls) that answers 200 to each request it reads, and counts the
//! handshakes tried and the requests served. A real collector is not
//! needed to check whom the exporter trusts; this one is made to present
//! a certificate of our CA, and to ask for a client certificate.

#![allow(dead_code)] // each test file uses its own part

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA, a server certificate for 127.0.0.1 and a client certificate it
/// signed, written as PEM files in a directory of their own.
pub struct Pki {
    pub dir: PathBuf,
    pub ca_pem: PathBuf,
    pub client_pem: PathBuf,
    pub client_key_pem: PathBuf,
    ca_der: CertificateDer<'static>,
    server_der: CertificateDer<'static>,
    server_key: Vec<u8>,
}

impl Pki {
    pub fn new(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("usertrace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "usertrace test CA");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let server_key = KeyPair::generate().unwrap();
        let server = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap().signed_by(&server_key, &ca).unwrap();
        let client_key = KeyPair::generate().unwrap();
        let mut client = CertificateParams::new(vec!["usertrace-agent".to_owned()]).unwrap();
        client.distinguished_name.push(DnType::CommonName, "usertrace agent");
        let client = client.signed_by(&client_key, &ca).unwrap();
        let write = |file: &str, text: String| {
            let path = dir.join(file);
            std::fs::write(&path, text).unwrap();
            path
        };
        Pki {
            ca_pem: write("ca.pem", ca.pem()),
            client_pem: write("client.pem", client.pem()),
            client_key_pem: write("client.key", client_key.serialize_pem()),
            ca_der: ca.der().clone(),
            server_der: server.der().clone(),
            server_key: server_key.serialize_der(),
            dir,
        }
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An https server for `pki`'s certificate; asking every client for a
/// certificate of the CA if `mutual`.
pub struct HttpsServer {
    pub port: u16,
    pub handshakes: Arc<AtomicUsize>,
    pub served: Arc<AtomicUsize>,
}

impl HttpsServer {
    pub fn start(pki: &Pki, mutual: bool) -> HttpsServer {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider)).with_safe_default_protocol_versions().unwrap();
        let builder = if mutual {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(pki.ca_der.clone()).unwrap();
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider).build().unwrap();
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.server_key.clone()));
        let config = Arc::new(builder.with_single_cert(vec![pki.server_der.clone()], key).unwrap());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (handshakes, served) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (h, s) = (Arc::clone(&handshakes), Arc::clone(&served));
        // Serves until the test's process ends.
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                h.fetch_add(1, Ordering::SeqCst);
                let Ok(connection) = rustls::ServerConnection::new(Arc::clone(&config)) else { continue };
                let mut tls = rustls::StreamOwned::new(connection, stream);
                if read_request(&mut tls).is_some() {
                    // Counted before the answer: a client that has its 200
                    // and reads `served()` at once must find it counted.
                    s.fetch_add(1, Ordering::SeqCst);
                    let _ = tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    let _ = tls.flush();
                }
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
        });
        HttpsServer { port, handshakes, served }
    }

    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    pub fn handshakes(&self) -> usize {
        self.handshakes.load(Ordering::SeqCst)
    }

    pub fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

/// Reads one request's head and its Content-Length body; `None` if the
/// handshake or the read failed.
fn read_request(stream: &mut impl Read) -> Option<()> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
            let length: usize = head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
            while data.len() < end + 4 + length {
                let n = stream.read(&mut buf).ok()?;
                if n == 0 {
                    return None;
                }
                data.extend_from_slice(&buf[..n]);
            }
            return Some(());
        }
    }
}
