//! Which tracepoints record the emitting thread's user stack: what
//! [`Stacks`] asks for, decided once per tracepoint as it is attached (a
//! stack is a property of the perf event, `PERF_SAMPLE_CALLCHAIN`, not of
//! a sample).

use usertrace::span::SPAN_BEGIN_FIELD;
use usertrace::{Pattern, PatternError};

use crate::format::EventFormat;

/// Which recorded events carry their emitting thread's user stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Stacks {
    /// None: the default.
    #[default]
    None,
    /// Every event recorded.
    All,
    /// The events of the tracepoints matching these `[SYSTEM:]NAME`
    /// patterns (`*` and `?`), among those recorded.
    Matching(Vec<String>),
    /// Span begins only: tracepoints whose first field is `span_begin`
    /// (see `usertrace::span`), where a span's stack says what began it.
    SpanBegins,
}

/// [`Stacks`] with its patterns parsed.
#[derive(Debug, Default)]
pub(crate) enum StackScope {
    #[default]
    None,
    All,
    Matching(Vec<Pattern>),
    SpanBegins,
}

impl StackScope {
    pub(crate) fn new(stacks: &Stacks) -> Result<StackScope, PatternError> {
        Ok(match stacks {
            Stacks::None => StackScope::None,
            Stacks::All => StackScope::All,
            Stacks::Matching(patterns) => StackScope::Matching(patterns.iter().map(|p| Pattern::parse(p)).collect::<Result<_, _>>()?),
            Stacks::SpanBegins => StackScope::SpanBegins,
        })
    }

    /// Whether any event may carry a stack: mappings are then kept.
    pub(crate) fn any(&self) -> bool {
        !matches!(self, StackScope::None)
    }

    /// Whether `format`'s events carry a stack.
    pub(crate) fn includes(&self, format: &EventFormat) -> bool {
        match self {
            StackScope::None => false,
            StackScope::All => true,
            StackScope::Matching(patterns) => patterns.iter().any(|p| p.matches(&format.system, &format.name)),
            StackScope::SpanBegins => format.fields.first().is_some_and(|f| f.name == SPAN_BEGIN_FIELD),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(name: &str, first_field: &str) -> EventFormat {
        EventFormat::parse("user_events", &format!("name: {name}\nID: 1\n\tfield:u64 {first_field};\toffset:8;\tsize:8;\tsigned:0;\n")).unwrap()
    }

    #[test]
    fn each_choice_takes_the_tracepoints_it_names() {
        let (begin, end, plain) = (format("app_request", "span_begin"), format("app_span_end", "span_end"), format("app_tick", "n"));
        let takes = |stacks: Stacks| {
            let scope = StackScope::new(&stacks).unwrap();
            [&begin, &end, &plain].map(|f| scope.includes(f))
        };
        assert_eq!(takes(Stacks::None), [false, false, false]);
        assert_eq!(takes(Stacks::All), [true, true, true]);
        assert_eq!(takes(Stacks::SpanBegins), [true, false, false]);
        assert_eq!(takes(Stacks::Matching(vec!["app_t*".into(), "user_events:app_span_end".into()])), [false, true, true]);
        assert!(StackScope::new(&Stacks::Matching(vec!["a:b:c".into()])).is_err());
        assert!(!StackScope::new(&Stacks::None).unwrap().any());
    }
}
