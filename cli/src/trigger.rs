//! What a flight recorder's `--trigger` says: which event asks for a
//! dump. (`--trigger-span`'s rule is `usertrace_output::SlowSpan`, which
//! `--tail` shares.)

use std::cmp::Ordering;
use std::fmt;

use usertrace_consumer::{find_field, Event, FieldValue, Pattern};

/// `PATTERN[:FIELD OP VALUE]`.
#[derive(Debug, Clone)]
pub struct Trigger {
    text: String,
    pattern: Pattern,
    condition: Option<Condition>,
}

#[derive(Debug, Clone)]
struct Condition {
    field: String,
    op: Op,
    value: Operand,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Operand {
    Number(f64),
    Text(String),
}

/// The operators, longest first so that `>=` is not read as `>`.
const OPS: [(&str, Op); 6] = [("==", Op::Eq), ("!=", Op::Ne), ("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)];

impl Trigger {
    /// Reads `myapp_error`, `myapp_request:status>=500` or
    /// `user_events:myapp_log:level=="error"`. A pattern has colons of its
    /// own (SYSTEM:NAME, PROVIDER:L5), so the condition is what follows
    /// the last colon before the first operator.
    pub fn parse(text: &str) -> Result<Trigger, String> {
        let first_op = text.find(['=', '!', '<', '>']);
        let (pattern, condition) = match first_op {
            None => (text, None),
            Some(op_at) => {
                let colon = text[..op_at].rfind(':').ok_or_else(|| {
                    format!("`{text}`: a condition follows the pattern after a colon, as in myapp_request:status>=500")
                })?;
                (&text[..colon], Some(Condition::parse(&text[colon + 1..])?))
            }
        };
        let pattern = Pattern::parse(pattern).map_err(|e| e.to_string())?;
        Ok(Trigger { text: text.to_owned(), pattern, condition })
    }

    /// What the dump says triggered it, if `event` fires this trigger.
    pub fn fires(&self, event: &Event) -> Option<String> {
        if !self.pattern.matches(&event.format.system, event.name()) {
            return None;
        }
        let Some(condition) = &self.condition else { return Some(format!("event {}", event.name())) };
        let fields = event.fields().ok()?;
        // `pt.x` is member `x` of an EventHeader struct `pt`.
        let value = find_field(&fields, &condition.field)?;
        condition.holds(value).then(|| format!("event {} with {}={value}", event.name(), condition.field))
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Condition {
    fn parse(text: &str) -> Result<Condition, String> {
        let hint = "give FIELD OP VALUE, OP one of == != < <= > >=, VALUE a number or a quoted string \
                    (FIELD may be STRUCT.MEMBER for an EventHeader struct)";
        let (at, token, op) = OPS
            .iter()
            .filter_map(|(token, op)| text.find(token).map(|at| (at, *token, *op)))
            // The earliest, and at the same place the longest (listed first).
            .min_by_key(|(at, _, _)| *at)
            .ok_or_else(|| format!("`{text}`: {hint}"))?;
        let field = text[..at].trim();
        // A dotted path names a member of an EventHeader struct.
        let is_name = |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !field.split('.').all(is_name) {
            return Err(format!("`{text}`: `{field}` is not a field name: {hint}"));
        }
        let value = text[at + token.len()..].trim();
        let quoted = |q: char| value.len() >= 2 && value.starts_with(q) && value.ends_with(q);
        let value = if quoted('"') || quoted('\'') {
            Operand::Text(value[1..value.len() - 1].to_owned())
        } else {
            match value.parse::<f64>() {
                Ok(n) if n.is_finite() => Operand::Number(n),
                _ => return Err(format!("`{value}` is neither a number nor a quoted string: {hint}")),
            }
        };
        Ok(Condition { field: field.to_owned(), op, value })
    }

    fn holds(&self, value: &FieldValue<'_>) -> bool {
        let ordering = match (&self.value, value) {
            (Operand::Number(want), FieldValue::Unsigned(v)) => (*v as f64).partial_cmp(want),
            (Operand::Number(want), FieldValue::Signed(v)) => (*v as f64).partial_cmp(want),
            (Operand::Number(want), FieldValue::F32(v)) => f64::from(*v).partial_cmp(want),
            (Operand::Number(want), FieldValue::F64(v)) => v.partial_cmp(want),
            (Operand::Number(want), FieldValue::Bool(v)) => f64::from(u8::from(*v)).partial_cmp(want),
            (Operand::Text(want), FieldValue::Str(v)) => Some(v.as_ref().cmp(want.as_str())),
            // A number against a string, or a string against bytes: no
            // order, so only != holds.
            _ => None,
        };
        match (ordering, self.op) {
            (None, op) => op == Op::Ne,
            (Some(o), Op::Eq) => o == Ordering::Equal,
            (Some(o), Op::Ne) => o != Ordering::Equal,
            (Some(o), Op::Lt) => o == Ordering::Less,
            (Some(o), Op::Le) => o != Ordering::Greater,
            (Some(o), Op::Gt) => o == Ordering::Greater,
            (Some(o), Op::Ge) => o != Ordering::Less,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn holds(text: &str, value: FieldValue<'_>) -> bool {
        Trigger::parse(text).unwrap().condition.unwrap().holds(&value)
    }

    #[test]
    fn a_pattern_alone_has_no_condition() {
        for text in ["myapp_error", "user_events:myapp_*", "MyProvider:L4"] {
            let t = Trigger::parse(text).unwrap();
            assert!(t.condition.is_none(), "{text}");
        }
    }

    #[test]
    fn the_condition_follows_the_last_colon_before_the_operator() {
        let t = Trigger::parse("user_events:myapp_request:status>=500").unwrap();
        assert_eq!(t.pattern.as_str(), "user_events:myapp_request");
        let c = t.condition.unwrap();
        assert_eq!((c.field.as_str(), c.op, c.value), ("status", Op::Ge, Operand::Number(500.0)));
    }

    #[test]
    fn numbers_compare_as_numbers_of_every_kind() {
        assert!(holds("r:status>=500", FieldValue::Unsigned(500)));
        assert!(!holds("r:status>=500", FieldValue::Unsigned(499)));
        assert!(holds("r:status>500", FieldValue::Unsigned(501)));
        assert!(!holds("r:status>500", FieldValue::Unsigned(500)));
        assert!(holds("r:delta<0", FieldValue::Signed(-3)));
        assert!(holds("r:delta<=-3", FieldValue::Signed(-3)));
        assert!(holds("r:ratio==0.5", FieldValue::F64(0.5)));
        assert!(holds("r:ratio!=0.5", FieldValue::F32(0.25)));
        assert!(holds("r:ok==1", FieldValue::Bool(true)));
    }

    #[test]
    fn strings_compare_with_quoted_values_only() {
        assert!(holds("log:level=='error'", FieldValue::Str(Cow::Borrowed("error"))));
        assert!(holds("log:level==\"error\"", FieldValue::Str(Cow::Borrowed("error"))));
        assert!(!holds("log:level=='error'", FieldValue::Str(Cow::Borrowed("warn"))));
        assert!(holds("log:level!='error'", FieldValue::Str(Cow::Borrowed("warn"))));
        // A number against a string has no order: only != holds.
        assert!(!holds("log:level==5", FieldValue::Str(Cow::Borrowed("5"))));
        assert!(holds("log:level!=5", FieldValue::Str(Cow::Borrowed("5"))));
    }

    /// `P_L4K1 E { struct pt { u8 x = 7 } }`, an EventHeader event as
    /// LinuxTracepoints lays it out: the header (flags 7, level 4), the
    /// metadata extension (event name; `pt`, a struct of one member; `x`,
    /// Value8), the data.
    fn eventheader_struct_event() -> Event {
        let header: String = ["eventheader_flags", "version", "id", "tag", "opcode", "level"]
            .iter()
            .zip([("u8", 8, 1), ("u8", 9, 1), ("u16", 10, 2), ("u16", 12, 2), ("u8", 14, 1), ("u8", 15, 1)])
            .map(|(name, (ty, offset, size))| format!("\tfield:{ty} {name};\toffset:{offset};\tsize:{size};\tsigned:0;\n"))
            .collect();
        let format = usertrace_consumer::EventFormat::parse("user_events", &format!("name: P_L4K1\nID: 3\n{header}")).unwrap();
        let metadata = b"E\0pt\0\x81\x01x\0\x02";
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(&[7, 0, 0, 0, 0, 0, 0, 4]);
        raw.extend_from_slice(&(metadata.len() as u16).to_le_bytes());
        raw.extend_from_slice(&[1, 0]);
        raw.extend_from_slice(metadata);
        raw.push(7);
        Event {
            time_ns: 1,
            cpu: 0,
            pid: 2,
            tid: 2,
            comm: "c".into(),
            process: "c".into(),
            namespaces: None,
            format: std::sync::Arc::new(format),
            raw: raw.into(),
            stack: Box::default(),
        }
    }

    #[test]
    fn a_condition_on_a_struct_member_names_it_by_its_path() {
        let event = eventheader_struct_event();
        let fires = |text: &str| Trigger::parse(text).unwrap().fires(&event);
        assert_eq!(fires("P:L4:pt.x==7").as_deref(), Some("event P_L4K1 with pt.x=7"));
        assert_eq!(fires("P:L4:pt.x>7"), None);
        assert_eq!(fires("P:L4:pt.y==7"), None);
    }

    #[test]
    fn bad_triggers_say_what_to_write() {
        assert!(Trigger::parse("status>=500").unwrap_err().contains("after a colon"));
        assert!(Trigger::parse("r:status>=many").unwrap_err().contains("neither a number nor a quoted string"));
        assert!(Trigger::parse("r:sta tus==1").unwrap_err().contains("not a field name"));
        assert!(Trigger::parse("r:pt..x==1").unwrap_err().contains("not a field name"));
    }
}
