//! What an `info!` costs while nobody listens: through the usertrace layer
//! (`registry().with(usertrace_tracing::layer())`, its tracepoint
//! registered or, without user_events, not: disabled either way) against
//! the same `info!` in a program with no subscriber at all, `tracing`'s
//! floor. Also a `log::info!` through this crate's logger against `log`
//! with no logger. Between the two `info!`s, `tracing-subscriber`'s own
//! share: a layer behind a per-layer filter that is asked at each record
//! and says no at once (what the usertrace layer's filter adds to it is the
//! callsite's lookup and the enable word's load). Needs no kernel:
//! `cargo bench -p usertrace-tracing --bench disabled`.
//!
//! A process has one global subscriber and logger, so each configuration
//! runs in a process of its own: this program runs itself once per
//! configuration per round, the configurations taking turns, so that a
//! burst of load from other jobs hits them alike. Each process reports its
//! best timing; the best of all rounds is printed beside its baseline,
//! with the ratio.

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use tracing_subscriber::prelude::*;

const CONFIG_ENV: &str = "USERTRACE_TRACING_BENCH_CONFIG";
const ROUNDS: usize = 5;
const TIMINGS: usize = 5;
const ITERATIONS: u64 = 2_000_000;

/// `(name, what it measures)`, baselines after what they are the baseline of.
const CONFIGS: [(&str, &str); 5] = [
    ("layer", "info! through the usertrace layer, disabled"),
    ("none", "info! with no subscriber"),
    ("filter_says_no", "a layer whose per-layer filter says no"),
    ("logger", "log::info! through the usertrace logger, disabled"),
    ("no_logger", "log::info! with no logger"),
];

/// Best ns per call of `f` over `TIMINGS` timings of `ITERATIONS` calls.
fn best(mut f: impl FnMut()) -> f64 {
    f(); // The first record registers the callsite.
    (0..TIMINGS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..ITERATIONS {
                f();
                black_box(());
            }
            start.elapsed().as_nanos() as f64 / ITERATIONS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn info() {
    tracing::info!(answer = 42u64, name = "x", "hello");
}

fn log_info() {
    log::info!("hello {}", 42);
}

/// Runs one configuration in this process and prints its figure.
fn run(config: &str) {
    let provider = usertrace::Provider::new(format!("ut_bench_{}", std::process::id())).unwrap();
    let ns = match config {
        "layer" => {
            tracing_subscriber::registry().with(usertrace_tracing::layer_for(provider)).init();
            best(info)
        }
        "none" => best(info),
        // tracing-subscriber's own share: the same dispatch to a layer
        // behind a per-layer filter that is asked at every record, as the
        // usertrace layer's is, and says no at once.
        "filter_says_no" => {
            let says_no = tracing_subscriber::filter::DynFilterFn::new(|_, _| black_box(false));
            tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new().with_filter(says_no)).init();
            best(info)
        }
        "logger" => {
            let logger = usertrace_tracing::log::Logger::new(&provider);
            assert!(!logger.tracepoint().enabled(), "nobody listens to a name this process just made");
            usertrace_tracing::log::init_with(logger, log::LevelFilter::Trace).unwrap();
            best(log_info)
        }
        "no_logger" => best(log_info),
        other => panic!("unknown configuration {other}"),
    };
    println!("{ns}");
}

fn main() {
    if let Ok(config) = std::env::var(CONFIG_ENV) {
        return run(&config);
    }
    let exe = std::env::current_exe().unwrap();
    let mut figures = [f64::INFINITY; CONFIGS.len()];
    for _ in 0..ROUNDS {
        for (i, (name, _)) in CONFIGS.iter().enumerate() {
            let out = Command::new(&exe).env(CONFIG_ENV, name).output().unwrap();
            assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
            let ns: f64 = String::from_utf8(out.stdout).unwrap().trim().parse().unwrap();
            figures[i] = figures[i].min(ns);
        }
    }
    let row = |what: usize, baseline: usize| {
        let ((_, a), (_, b)) = (CONFIGS[what], CONFIGS[baseline]);
        let (ns, base) = (figures[what], figures[baseline]);
        println!("{a:<52} {ns:>8.2} ns   {b:<28} {base:>8.2} ns   ratio {:>6.2}", ns / base);
    };
    row(0, 1);
    row(0, 2);
    row(3, 4);
}
