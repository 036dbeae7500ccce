//! A reader for the small subset of herd's PTX litmus format that the kernel
//! language can express, used to run published litmus tests (the Dat3M PTX
//! suite in `shared/litmus/dat3m-ptx`) as extra inputs.
//!
//! The subset covers:
//! - global variables with initial values, and register initial values of zero;
//! - `st.{weak,relaxed,release}[.scope] x, N` and
//!   `ld.{weak,relaxed,acquire}[.scope] r, x`;
//! - `exists`, `~exists` or `forall` over a conjunction of `P:r == N` or
//!   `P:r != N`.
//!
//! Anything else is refused with a reason and never approximated: fences, RMW,
//! barriers, register arithmetic, disjunctions, and threads in different CTAs
//! or GPUs (the model has no scopes). The scope qualifier of an accepted
//! instruction is dropped, which is sound only because every thread must then
//! sit in the same CTA.

use std::collections::BTreeMap;

use crate::consistency::{self, Variant};
use crate::lang::{
    Access, Builder, IllFormed, InitStore, Loc, Program, Reg, Space, StmtId, Ty, Value,
};
use crate::relaxed::{self, Search};

/// The quantifier of a litmus condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// Some execution satisfies the condition.
    Exists,
    /// No execution satisfies it.
    NotExists,
    /// Every execution satisfies it.
    Forall,
}

/// One conjunct: thread, register, equal or not, value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    /// The thread.
    pub thread: u32,
    /// The register.
    pub reg: Reg,
    /// `==` when true, `!=` when false.
    pub equal: bool,
    /// The value compared with.
    pub value: Value,
}

/// A parsed litmus test.
#[derive(Clone, Debug)]
pub struct Litmus {
    /// The test's name.
    pub name: String,
    /// The program, one thread per column.
    pub program: Program,
    /// The quantifier.
    pub quantifier: Quantifier,
    /// The conjunction.
    pub atoms: Vec<Atom>,
}

/// Why a test is outside the subset, or not a test at all: the reason and,
/// where one construct is at fault, the line (from 1) it is on. The text is
/// external, so nothing here panics on it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", line.map_or_else(String::new, |l| format!("line {l}: ")))]
pub struct Refused {
    /// The line of the input, from 1, where a single line is at fault.
    pub line: Option<usize>,
    /// The construct that is not supported, or what is malformed.
    pub reason: String,
    /// The verifier's errors, when the text built an ill-formed program.
    #[source]
    pub ill_formed: Option<IllFormed>,
}

fn refuse<T>(why: impl Into<String>) -> Result<T, Refused> {
    Err(Refused {
        line: None,
        reason: why.into(),
        ill_formed: None,
    })
}

/// The text after the header, with the line of every byte offset, so that a
/// refusal found in a slice of it can name its line.
struct Body {
    text: String,
    /// `(offset in text, line in the input)` for each kept line.
    starts: Vec<(usize, usize)>,
}

impl Body {
    /// The input line of `part`, a slice of [`Body::text`] (found by its
    /// address: every row is a sub-slice of the text, never a copy).
    fn line_of(&self, part: &str) -> Option<usize> {
        let offset = (part.as_ptr() as usize).checked_sub(self.text.as_ptr() as usize)?;
        if offset > self.text.len() {
            return None;
        }
        let i = self.starts.partition_point(|&(start, _)| start <= offset);
        i.checked_sub(1).map(|i| self.starts[i].1)
    }
}

/// Gives a refusal the line of `part` unless it has one.
fn at(body: &Body, part: &str) -> impl Fn(Refused) -> Refused {
    let line = body.line_of(part);
    move |r| Refused {
        line: r.line.or(line),
        ..r
    }
}

/// Parses a test, or says why it is outside the subset.
///
/// # Errors
/// [`Refused`], naming the construct that is not supported and, where one
/// line is at fault, its line. Malformed text is refused too, never a panic.
pub fn parse(text: &str) -> Result<Litmus, Refused> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (_, header) = lines.next().unwrap_or_default();
    let Some(name) = header.strip_prefix("PTX ") else {
        return refuse("not a PTX litmus test").map_err(|r| Refused { line: Some(1), ..r });
    };
    let mut body = Body {
        text: String::new(),
        starts: Vec::new(),
    };
    for (n, line) in lines {
        if !body.text.is_empty() {
            body.text.push('\n');
        }
        body.starts.push((body.text.len(), n));
        body.text.push_str(line);
    }
    let (Some(open), Some(close)) = (body.text.find('{'), body.text.find('}')) else {
        return refuse("no init block");
    };
    if close < open {
        return refuse("`}` before the init block's `{`").map_err(at(&body, &body.text[close..]));
    }
    let body_text = body.text.as_str();
    let mut vars: BTreeMap<String, Value> = BTreeMap::new();
    let mut init = Vec::new();
    for entry in body_text[open + 1..close]
        .split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let here = at(&body, entry);
        let Some((lhs, rhs)) = entry.split_once('=') else {
            return refuse(format!("init entry `{entry}`")).map_err(here);
        };
        let (lhs, rhs) = (lhs.trim(), rhs.trim());
        let Ok(value) = rhs.parse::<Value>() else {
            return refuse(format!("init value `{rhs}`")).map_err(here);
        };
        if lhs.contains(':') {
            if value != 0 {
                return refuse(format!("register {lhs} starts at {value}")).map_err(here);
            }
            continue;
        }
        if lhs.contains(' ') || lhs.contains('[') {
            return refuse(format!("typed or array init `{lhs}`")).map_err(here);
        }
        let addr = vars.len() as Value;
        vars.insert(lhs.to_string(), addr);
        init.push(InitStore {
            loc: Loc {
                space: Space::Global,
                addr,
            },
            ty: Ty::U32,
            val: value,
        });
    }
    let after_init = &body_text[close + 1..];
    let rows: Vec<&str> = after_init
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let cond_at = rows
        .iter()
        .position(|l| {
            l.starts_with("exists") || l.starts_with("~exists") || l.starts_with("forall")
        })
        .map_or_else(|| refuse("no final condition"), Ok)?;
    let Some(&head) = rows.first() else {
        return refuse("no thread header");
    };
    if cond_at == 0 {
        return refuse("the final condition comes before the thread header")
            .map_err(at(&body, head));
    }
    let mut ctas = Vec::new();
    for col in columns(head) {
        let Some((_, placement)) = col.split_once('@') else {
            return refuse(format!("thread `{col}` has no placement")).map_err(at(&body, head));
        };
        ctas.push(placement.replace(' ', ""));
    }
    if ctas.iter().any(|c| *c != ctas[0]) {
        return refuse(format!(
            "threads in different CTAs or GPUs ({}): scopes are not modelled",
            ctas.join(" | ")
        ))
        .map_err(at(&body, head));
    }
    let threads = ctas.len();
    let mut b = Builder::new();
    let mut regs: BTreeMap<(usize, String), Reg> = BTreeMap::new();
    let mut code: Vec<Vec<StmtId>> = vec![Vec::new(); threads];
    let globals = vars.clone();
    for row in &rows[1..cond_at] {
        let here = at(&body, row);
        let cols = columns(row);
        if cols.len() != threads {
            return refuse(format!(
                "row `{row}` has {} columns, not {threads}",
                cols.len()
            ))
            .map_err(here);
        }
        for (t, col) in cols.iter().enumerate() {
            if col.is_empty() {
                continue;
            }
            let stmt = instruction(&mut b, &globals, &mut regs, t, col).map_err(&here)?;
            code[t].push(stmt);
        }
    }
    let bodies: Vec<StmtId> = code.into_iter().map(|c| b.seq(c)).collect();
    let (quantifier, atoms) =
        condition(&rows[cond_at..].join(" "), &regs).map_err(at(&body, rows[cond_at]))?;
    let names: Vec<(Value, String)> = vars.iter().map(|(n, a)| (*a, n.clone())).collect();
    let names: Vec<(Value, &str)> = names.iter().map(|(a, n)| (*a, n.as_str())).collect();
    let program = b
        .try_finish(name.trim(), bodies, init, &names)
        .map_err(|e| Refused {
            line: None,
            reason: "the test builds an ill-formed program".to_string(),
            ill_formed: Some(e),
        })?;
    Ok(Litmus {
        name: name.trim().to_string(),
        program,
        quantifier,
        atoms,
    })
}

fn columns(row: &str) -> Vec<String> {
    let row = row.trim().trim_end_matches(';');
    row.split('|').map(|c| c.trim().to_string()).collect()
}

fn instruction(
    b: &mut Builder,
    vars: &BTreeMap<String, Value>,
    regs: &mut BTreeMap<(usize, String), Reg>,
    t: usize,
    text: &str,
) -> Result<StmtId, Refused> {
    let Some((op, args)) = text.split_once(' ') else {
        return refuse(format!("instruction `{text}` is outside the subset"));
    };
    let parts: Vec<&str> = op.split('.').collect();
    let args: Vec<&str> = args.split(',').map(str::trim).collect();
    let access = match parts.get(1).copied() {
        Some("weak") => Access::Plain,
        Some("relaxed") => Access::RELAXED,
        Some("acquire") if parts[0] == "ld" => Access::ACQUIRE,
        Some("release") if parts[0] == "st" => Access::RELEASE,
        _ => return refuse(format!("instruction `{text}` is outside the subset")),
    };
    let var = |name: &str| {
        vars.get(name).copied().map_or_else(
            || refuse(format!("`{name}` is not a declared variable")),
            Ok,
        )
    };
    match (parts[0], args.as_slice()) {
        ("st", [x, v]) => {
            let Ok(v) = v.parse::<Value>() else {
                return refuse(format!("stored value `{v}` is not a constant"));
            };
            Ok(b.store(Space::Global, var(x)?, Ty::U32, v, access))
        }
        ("ld", [r, x]) => {
            let addr = var(x)?;
            let reg = *regs
                .entry((t, r.to_string()))
                .or_insert_with(|| b.reg(&format!("P{t}:{r}")));
            Ok(b.load(reg, Space::Global, addr, Ty::U32, access))
        }
        _ => refuse(format!("instruction `{text}` is outside the subset")),
    }
}

fn condition(
    text: &str,
    regs: &BTreeMap<(usize, String), Reg>,
) -> Result<(Quantifier, Vec<Atom>), Refused> {
    let text = text.trim();
    let (quantifier, rest) = if let Some(r) = text.strip_prefix("~exists") {
        (Quantifier::NotExists, r)
    } else if let Some(r) = text.strip_prefix("exists") {
        (Quantifier::Exists, r)
    } else if let Some(r) = text.strip_prefix("forall") {
        (Quantifier::Forall, r)
    } else {
        return refuse("unknown quantifier");
    };
    if rest.contains("\\/") {
        return refuse("disjunctive condition");
    }
    let inner = rest.trim().trim_start_matches('(').trim_end_matches(')');
    let mut atoms = Vec::new();
    for conj in inner.split("/\\").map(str::trim) {
        let (lhs, equal, rhs) = if let Some((l, r)) = conj.split_once("!=") {
            (l, false, r)
        } else if let Some((l, r)) = conj.split_once("==") {
            (l, true, r)
        } else {
            return refuse(format!("condition `{conj}`"));
        };
        let Some((p, r)) = lhs.trim().split_once(':') else {
            return refuse(format!("memory in condition `{conj}`"));
        };
        let Some(Ok(thread)) = p.trim().strip_prefix('P').map(str::parse::<usize>) else {
            return refuse(format!("thread `{p}`"));
        };
        let Some(&reg) = regs.get(&(thread, r.trim().to_string())) else {
            return refuse(format!("register `{lhs}` is never loaded"));
        };
        let Ok(value) = rhs.trim().parse::<Value>() else {
            return refuse(format!("value `{rhs}`"));
        };
        atoms.push(Atom {
            thread: thread as u32,
            reg,
            equal,
            value,
        });
    }
    Ok((quantifier, atoms))
}

/// The verdict as Dat3M reports it (`true` = PASS) over the consistent
/// candidates of the canonical space, and the number of candidates explored.
pub fn verdict(litmus: &Litmus, model: &Variant) -> (bool, u64) {
    let (cands, stats) = relaxed::candidates(&litmus.program, Search::Naive);
    let satisfied: Vec<bool> = cands
        .iter()
        .filter(|c| consistency::consistent(&c.exec, model))
        .map(|c| {
            litmus.atoms.iter().all(|a| {
                let v = c.threads[a.thread as usize].reg(a.reg);
                (v == a.value) == a.equal
            })
        })
        .collect();
    let pass = match litmus.quantifier {
        Quantifier::Exists => satisfied.iter().any(|&s| s),
        Quantifier::NotExists => !satisfied.iter().any(|&s| s),
        Quantifier::Forall => satisfied.iter().all(|&s| s),
    };
    (pass, stats.complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MP_SYS: &str = "PTX MP-sys\n\"doc\"\n{\nx=0;\ny=0;\nP1:r1=0;\nP1:r2=0;\n}\n \
        P0@cta 0,gpu 0         | P1@cta 0,gpu 0         ;\n \
        st.weak x, 1           | ld.acquire.sys r1, y   ;\n \
        st.release.sys y, 1    | ld.weak r2, x          ;\n~exists\n(P1:r1 == 1 /\\ P1:r2 != 1)";

    #[test]
    fn parses_message_passing() {
        let l = parse(MP_SYS).expect("in the subset");
        assert_eq!(l.name, "MP-sys");
        assert_eq!(l.program.threads(), 2);
        assert_eq!(l.quantifier, Quantifier::NotExists);
        assert_eq!(l.atoms.len(), 2);
        assert!(verdict(&l, &Variant::REFERENCE_SUBSET).0);
        assert!(!verdict(&l, &Variant::NO_SW).0);
    }

    /// Malformed text is refused with its line, never a panic: a `}` before
    /// the init block's `{` used to slice the text backwards, and a
    /// condition before the thread header used to slice the rows backwards.
    #[test]
    fn malformed_text_is_refused_with_its_line_not_a_panic() {
        let backwards = "PTX t\n}\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1)";
        let r = parse(backwards).expect_err("`}` before `{`");
        assert_eq!(r.line, Some(2), "{r}");
        assert_eq!(r.to_string(), "line 2: `}` before the init block's `{`");

        let cond_first = "PTX t\n{ x=0; }\nexists (P0:r0 == 1) @cta 0\n P0@cta 0,gpu 0 ;\n";
        let r = parse(cond_first).expect_err("condition first");
        assert_eq!(r.line, Some(3), "{r}");

        let bad_row = MP_SYS.replace("st.release.sys y, 1    |", "st.release.sys y, 1    ");
        let r = parse(&bad_row).expect_err("a row with one column");
        assert_eq!(r.line, Some(11), "{r}");
        assert!(r.reason.contains("columns"), "{r}");

        let bad_init = MP_SYS.replace("y=0;", "y=zero;");
        let r = parse(&bad_init).expect_err("a non-numeric init value");
        assert_eq!((r.line, r.reason.as_str()), (Some(5), "init value `zero`"));

        for text in ["", "PTX", "PTX t", "PTX t\n{", "PTX t\n{}\n|\nexists"] {
            assert!(parse(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn refuses_scopes_and_fences() {
        let cta = MP_SYS.replace("P1@cta 0", "P1@cta 1");
        assert!(
            parse(&cta)
                .expect_err("scopes")
                .reason
                .contains("scopes are not modelled")
        );
        let fence = MP_SYS.replace("st.weak x, 1  ", "fence.sc.gpu  ");
        assert!(
            parse(&fence)
                .expect_err("fences")
                .reason
                .contains("outside the subset")
        );
    }
}
