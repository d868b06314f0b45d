//! The command line, declared once with clap: parsing, `--help`,
//! `help CMD` and `--version` all come from these types, so the help text
//! cannot drift from what is parsed. Each subcommand's options live in its
//! own file; this one ties them together.

use clap::{ArgAction, Parser, Subcommand, ValueEnum};

use crate::completions::CompletionsArgs;
use crate::dump::DumpArgs;
use crate::man_pages::ManPagesArgs;
use crate::verbosity::Verbosity;
use crate::{convert::ConvertArgs, export::ExportArgs, list::ListArgs, record::RecordArgs, report::ReportArgs, stat::StatArgs, status::StatusArgs};

/// What `usertrace --help` shows under the commands.
const EXIT_STATUS: &str = "\
`usertrace help COMMAND` or `usertrace COMMAND --help` tells more.

Exit status:
  0      success (record and stat stopped by Ctrl-C or --duration too)
  1      a runtime error: user_events unavailable, no such event, a failed
         session or write, an unwritable -o, a bad line in a recording;
         the message on stderr says what to do
  2      a usage error: an unknown option or a bad value
  127    record or stat could not start CMD
  other  record or stat with CMD: CMD's own exit status (128+N if signal N
         killed it)";

#[derive(Debug, Parser)]
#[command(
    name = "usertrace",
    version,
    about = "Inspect, record and count Linux user_events; view recordings in Perfetto",
    after_help = "`usertrace help COMMAND` or `usertrace COMMAND --help` tells more.",
    after_long_help = EXIT_STATUS,
    arg_required_else_help = true,
    // Each command's man page is dated by the version, and says it.
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print no progress and no notes; errors, and warnings that events
    /// were lost, dropped or undecodable, still print
    // Global, so that perf's habit of `usertrace record -q` works as
    // well as `usertrace -q record`.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Also print how a session is set up, and progress every second
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,
}

impl Cli {
    /// How much the command says on stderr, from -q and -v.
    pub fn verbosity(&self) -> Verbosity {
        Verbosity::from_flags(self.quiet, self.verbose)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    // Each command's help is the doc comment of its arguments' type, in
    // the command's own file.
    Status(StatusArgs),
    List(ListArgs),
    Record(RecordArgs),
    Dump(DumpArgs),
    Stat(StatArgs),
    Convert(ConvertArgs),
    Export(ExportArgs),
    Report(ReportArgs),
    Completions(CompletionsArgs),
    ManPages(ManPagesArgs),
}

/// How a command prints what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::error::ErrorKind;
    use clap::CommandFactory;

    use super::*;
    use crate::trace_format::TraceFormat;

    fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("usertrace").chain(args.iter().copied())).map(|c| c.command)
    }

    fn record(args: &[&str]) -> RecordArgs {
        match parse(&[&["record"], args].concat()) {
            Ok(Command::Record(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    fn stat(args: &[&str]) -> StatArgs {
        match parse(&[&["stat"], args].concat()) {
            Ok(Command::Stat(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    fn error(args: &[&str]) -> clap::Error {
        parse(args).expect_err("should not parse")
    }

    #[test]
    fn the_declaration_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn version_prints_the_crate_version() {
        let e = error(&["--version"]);
        assert_eq!(e.kind(), ErrorKind::DisplayVersion);
        assert_eq!(e.to_string(), format!("usertrace {}\n", env!("CARGO_PKG_VERSION")));
        assert_eq!(e.exit_code(), 0);
    }

    #[test]
    fn every_command_has_help_both_ways() {
        for cmd in ["status", "list", "record", "stat", "convert", "export", "report", "completions", "man-pages"] {
            let e = error(&["help", cmd]);
            assert_eq!(e.kind(), ErrorKind::DisplayHelp, "help {cmd}");
            assert!(e.to_string().contains(&format!("usertrace {cmd}")), "help {cmd}: {e}");
            let e = error(&[cmd, "--help"]);
            assert_eq!(e.kind(), ErrorKind::DisplayHelp, "{cmd} --help");
            assert_eq!(e.exit_code(), 0);
        }
    }

    #[test]
    fn top_level_help_documents_the_exit_status() {
        let e = error(&["--help"]);
        assert!(e.to_string().contains("Exit status:"), "{e}");
        assert!(e.to_string().contains("127"), "{e}");
    }

    #[test]
    fn no_command_is_a_usage_error_with_help() {
        let e = error(&[]);
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("record"), "{e}");
    }

    #[test]
    fn options_take_their_value_with_an_equals_sign() {
        let r = record(&["--event=a", "--format=json", "--output=/tmp/x", "--buffer-size=8", "--pid=3", "--duration=1.5"]);
        assert_eq!(r.run.patterns, ["a"]);
        assert_eq!(r.format, Some(TraceFormat::Json));
        assert_eq!(r.output, [std::path::PathBuf::from("/tmp/x")]);
        assert_eq!(r.run.ring_pages, Some(8));
        assert_eq!(r.run.pids, [3]);
        assert_eq!(r.run.duration, Some(Duration::from_millis(1500)));
    }

    fn cli(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("usertrace").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn perfs_a_q_and_v_are_taken_before_or_after_the_command() {
        assert!(record(&["-a", "-e", "x"]).run.all_cpus);
        assert!(stat(&["--all-cpus", "-e", "x"]).run.all_cpus);
        assert_eq!(cli(&["record", "-q", "-e", "x"]).verbosity(), Verbosity::Quiet);
        assert_eq!(cli(&["-q", "stat", "-e", "x"]).verbosity(), Verbosity::Quiet);
        assert_eq!(cli(&["record", "-e", "x", "-v"]).verbosity(), Verbosity::Verbose);
        assert_eq!(cli(&["-vv", "convert", "a", "b"]).verbosity(), Verbosity::Verbose);
        assert_eq!(cli(&["report", "a"]).verbosity(), Verbosity::Normal);
        let e = error(&["record", "-q", "-v", "-e", "x"]);
        assert_eq!(e.kind(), ErrorKind::ArgumentConflict);
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn every_command_says_the_version() {
        let e = error(&["record", "--version"]);
        assert_eq!(e.kind(), ErrorKind::DisplayVersion);
    }

    #[test]
    fn events_may_be_repeated_or_comma_separated() {
        assert_eq!(record(&["-e", "a", "-e", "b"]).run.patterns, ["a", "b"]);
        assert_eq!(record(&["-e", "a,b", "-e", "c"]).run.patterns, ["a", "b", "c"]);
        assert_eq!(stat(&["-ea,sys:b*"]).run.patterns, ["a", "sys:b*"]);
    }

    #[test]
    fn an_event_pattern_is_required() {
        let e = error(&["record"]);
        assert_eq!(e.kind(), ErrorKind::MissingRequiredArgument);
        assert!(e.to_string().contains("--event <PATTERN>"), "{e}");
    }

    #[test]
    fn pids_may_be_repeated_or_comma_separated() {
        assert_eq!(record(&["-e", "a", "-p", "10", "--pid", "20"]).run.pids, [10, 20]);
        assert_eq!(stat(&["-e", "a", "-p", "10,20"]).run.pids, [10, 20]);
        assert!(error(&["stat", "-e", "a", "-p", "-3"]).to_string().contains("not a process id"));
        let e = error(&["record", "-e", "a", "-p", "me"]);
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("not a process id"), "{e}");
    }

    #[test]
    fn duration_is_in_seconds_and_must_be_positive() {
        assert_eq!(stat(&["-e", "a", "--duration", "10"]).run.duration, Some(Duration::from_secs(10)));
        assert_eq!(record(&["-e", "a", "--duration", "0.25"]).run.duration, Some(Duration::from_millis(250)));
        for bad in ["0", "-1", "soon", "inf", "NaN"] {
            let e = error(&["stat", "-e", "a", "--duration", bad]);
            assert_eq!(e.kind(), ErrorKind::ValueValidation, "{bad}");
            assert!(e.to_string().contains("seconds"), "{bad}: {e}");
        }
    }

    #[test]
    fn buffer_size_must_be_a_power_of_two() {
        assert_eq!(stat(&["-e", "a", "--buffer-size", "1"]).run.ring_pages, Some(1));
        let e = error(&["stat", "-e", "a", "--buffer-size", "3"]);
        assert!(e.to_string().contains("power of two"), "{e}");
        let e = error(&["stat", "-e", "a", "--buffer-size", "many"]);
        assert!(e.to_string().contains("number of pages"), "{e}");
    }

    #[test]
    fn a_command_may_follow_without_a_double_dash() {
        let r = record(&["-e", "a", "/bin/sh", "-c", "exit 7"]);
        assert_eq!(r.run.command, ["/bin/sh", "-c", "exit 7"]);
        // Options after the command belong to the command.
        let s = stat(&["-e", "a", "prog", "-e", "b", "--format", "json"]);
        assert_eq!(s.run.patterns, ["a"]);
        assert_eq!(s.run.command, ["prog", "-e", "b", "--format", "json"]);
        assert_eq!(s.format, Format::Text);
    }

    #[test]
    fn record_takes_its_format_from_the_option_then_the_extension() {
        assert_eq!(record(&["-e", "a"]).outputs().unwrap().format, TraceFormat::Text);
        assert_eq!(record(&["-e", "a", "-o", "t.pftrace"]).outputs().unwrap().format, TraceFormat::Perfetto);
        assert_eq!(record(&["-e", "a", "-o", "t.perfetto-trace"]).outputs().unwrap().format, TraceFormat::Perfetto);
        assert_eq!(record(&["-e", "a", "-o", "t.json"]).outputs().unwrap().format, TraceFormat::Chrome);
        assert_eq!(record(&["-e", "a", "-o", "t.jsonl"]).outputs().unwrap().format, TraceFormat::Json);
        assert_eq!(record(&["-e", "a", "-o", "t.txt"]).outputs().unwrap().format, TraceFormat::Text);
        assert_eq!(record(&["-e", "a", "-o", "t.json", "--format", "json"]).outputs().unwrap().format, TraceFormat::Json);
        assert_eq!(record(&["-e", "a", "--format", "chrome"]).outputs().unwrap().format, TraceFormat::Chrome);
        assert!(record(&["-e", "a", "--report"]).report);
    }

    #[test]
    fn record_writes_an_archive_and_one_other_output_at_most() {
        use std::path::Path;
        let outputs = |args: &[&str]| record(args).outputs().map(|o| (o.archive.map(Path::to_owned), o.output.map(Path::to_owned), o.format));
        let p = |s: &str| Some(Path::new(s).to_owned());
        assert_eq!(outputs(&["-e", "a", "-o", "t.data"]), Ok((p("t.data"), None, TraceFormat::PerfData)));
        assert_eq!(outputs(&["-e", "a", "-o", "t", "--format", "perf-data"]), Ok((p("t"), None, TraceFormat::PerfData)));
        assert_eq!(outputs(&["-e", "a", "-o", "t.jsonl", "-o", "t.data"]), Ok((p("t.data"), p("t.jsonl"), TraceFormat::Json)));
        assert_eq!(outputs(&["-e", "a", "-o", "t.data", "-o", "t.txt", "--format", "json"]), Ok((p("t.data"), p("t.txt"), TraceFormat::Json)));
        for refused in [&["-e", "a", "-o", "a.jsonl", "-o", "b.jsonl"][..], &["-e", "a", "-o", "a.data", "-o", "b.data"], &["-e", "a", "-o", "a.data", "-o", "b", "-o", "c"]] {
            assert!(outputs(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn convert_and_report_take_their_files() {
        match parse(&["convert", "in.jsonl", "out.pftrace"]) {
            Ok(Command::Convert(c)) => {
                assert_eq!((c.input.to_str(), c.output.as_deref().and_then(|o| o.to_str()), c.format), (Some("in.jsonl"), Some("out.pftrace"), None));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse(&["convert", "a", "b", "--format", "chrome"]), Ok(Command::Convert(c)) if c.format == Some(TraceFormat::Chrome)));
        assert_eq!(error(&["convert", "only-one"]).exit_code(), 2);
        assert!(matches!(parse(&["report", "r.jsonl", "--format", "json"]), Ok(Command::Report(r)) if r.format == Format::Json));
        assert_eq!(error(&["report"]).exit_code(), 2);
    }

    #[test]
    fn export_takes_its_file_and_otlp_options_and_record_takes_them_too() {
        match parse(&["export", "r.jsonl", "--otlp", "http://c:4318", "--service", "shop", "--compression", "gzip", "--timeout", "5"]) {
            Ok(Command::Export(e)) => {
                assert_eq!(e.input.to_str(), Some("r.jsonl"));
                assert_eq!(e.otlp.url.as_deref(), Some("http://c:4318"));
                assert_eq!((e.otlp.service.as_deref(), e.otlp.compression.as_deref(), e.timeout), (Some("shop"), Some("gzip"), 5));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(error(&["export"]).exit_code(), 2);
        let r = record(&["-e", "a", "--otlp=http://c:4318", "-o", "r.jsonl", "prog"]);
        assert_eq!((r.otlp.url.as_deref(), r.run.command.as_slice()), (Some("http://c:4318"), &["prog".to_owned()][..]));
        assert_eq!(record(&["-e", "a"]).otlp.url, None);
    }

    #[test]
    fn a_double_dash_still_starts_the_command() {
        let r = record(&["-e", "a", "--", "prog", "--help"]);
        assert_eq!(r.run.command, ["prog", "--help"]);
        let r = record(&["-e", "a", "--", "-prog"]);
        assert_eq!(r.run.command, ["-prog"]);
    }

    #[test]
    fn an_unknown_option_is_not_taken_for_the_command() {
        let e = error(&["record", "-e", "a", "--formt", "json"]);
        assert_eq!(e.kind(), ErrorKind::UnknownArgument);
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn every_command_takes_format_json() {
        assert!(matches!(parse(&["status", "--format", "json"]), Ok(Command::Status(s)) if s.format == Format::Json));
        assert!(matches!(parse(&["list", "--format=json", "x*"]), Ok(Command::List(l)) if l.format == Format::Json));
        assert_eq!(record(&["-e", "a", "--format", "json"]).format, Some(TraceFormat::Json));
        assert_eq!(stat(&["-e", "a", "--format", "json"]).format, Format::Json);
        assert_eq!(stat(&["-e", "a"]).format, Format::Text);
    }

    #[test]
    fn a_bad_format_names_the_value_and_the_choices() {
        let e = error(&["record", "-e", "a", "--format", "xml"]);
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(text.contains("'xml'") && text.contains("text") && text.contains("json"), "{text}");
        assert!(!text.contains("Some("), "{text}");
    }

    #[test]
    fn call_graph_fp_is_taken_and_dwarf_is_a_usage_error_naming_fp() {
        use crate::record::CallGraph;
        assert_eq!(record(&["--call-graph", "fp", "-e", "a"]).call_graph, Some(CallGraph::Fp));
        assert_eq!(record(&["--call-graph=fp", "-e", "a"]).call_graph, Some(CallGraph::Fp));
        assert_eq!(record(&["-e", "a"]).call_graph, None);
        let e = error(&["record", "--call-graph", "dwarf", "-e", "a"]);
        assert_eq!((e.kind(), e.exit_code()), (ErrorKind::ValueValidation, 2));
        assert!(e.to_string().contains("dwarf is not supported") && e.to_string().contains("--call-graph fp"), "{e}");
        // As for perf, a mode must be given.
        assert_eq!(error(&["record", "-e", "a", "--call-graph"]).exit_code(), 2);
    }

    #[test]
    fn call_graph_may_choose_events_or_span_begins_and_needs_a_mode_to() {
        use usertrace_consumer::Stacks;
        assert_eq!(record(&["-e", "a"]).stacks(), Stacks::None);
        assert_eq!(record(&["--call-graph", "fp", "-e", "a"]).stacks(), Stacks::All);
        assert_eq!(record(&["--call-graph", "fp", "--call-graph-spans", "-e", "a"]).stacks(), Stacks::SpanBegins);
        assert_eq!(
            record(&["--call-graph", "fp", "--call-graph-events", "a_*", "--call-graph-events=b", "-e", "a*"]).stacks(),
            Stacks::Matching(vec!["a_*".into(), "b".into()])
        );
        for args in [
            &["record", "--call-graph-spans", "-e", "a"][..],
            &["record", "--call-graph-events", "a", "-e", "a"],
            &["record", "--call-graph", "fp", "--call-graph-spans", "--call-graph-events", "a", "-e", "a"],
            &["record", "--call-graph", "fp", "--call-graph-events", "a:b:c", "-e", "a"],
        ] {
            assert_eq!(error(args).exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn status_takes_no_argument() {
        assert_eq!(error(&["status", "extra"]).exit_code(), 2);
    }

    #[test]
    fn list_takes_at_most_one_pattern() {
        assert!(matches!(parse(&["list"]), Ok(Command::List(l)) if l.pattern.is_none()));
        assert!(matches!(parse(&["list", "a*"]), Ok(Command::List(l)) if l.pattern.as_deref() == Some("a*")));
        assert_eq!(error(&["list", "a", "b"]).exit_code(), 2);
    }

    #[test]
    fn containers_take_selectors_and_a_bad_one_is_a_usage_error_that_says_why() {
        use usertrace_consumer::ContainerSelector;
        let r = record(&["--containers", "pod:1b4f0d2e-7c3a-4e5b-9c2e-0a1b2c3d4e5f,cgroup:/kubepods.slice", "-e", "a"]);
        assert_eq!(
            r.run.containers,
            vec![ContainerSelector::PodUid("1b4f0d2e-7c3a-4e5b-9c2e-0a1b2c3d4e5f".into()), ContainerSelector::CgroupPrefix("/kubepods.slice".into())]
        );
        assert!(record(&["-e", "a"]).run.containers.is_empty(), "every container by default");
        let e = parse(&["stat", "--containers", "id:xyz", "-e", "a"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(e.to_string().contains("a container id is 12 to 64 hex digits"), "{e}");
    }
}
