//! What a check reports: the verdict, the counts, and a witness execution
//! or the closest rejected candidate, in text and in JSON.

use std::fmt;

use serde::Serialize;

use crate::model::{Axiom, Violation};
use crate::paths::{Event, Tags};
use crate::syntax::{Quantifier, Test};

/// The verdict on a test's condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// `exists`: some consistent execution satisfies the condition.
    Allowed,
    /// `exists`: none does.
    Forbidden,
    /// `forall` or `~exists`: the property holds in every consistent execution.
    Holds,
    /// `forall` or `~exists`: some consistent execution breaks it.
    Fails,
}

impl Verdict {
    /// Dat3M's PASS bit: 1 for `Allowed` and `Holds`.
    #[must_use]
    pub fn dat3m_pass(self) -> bool {
        matches!(self, Verdict::Allowed | Verdict::Holds)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Allowed => "allowed",
            Verdict::Forbidden => "forbidden",
            Verdict::Holds => "holds",
            Verdict::Fails => "fails",
        })
    }
}

/// One event, for printing.
#[derive(Clone, Debug, Serialize)]
pub struct EventView {
    /// Its index in the execution (`e<index>`).
    pub index: usize,
    /// `P<n>`, or `init`.
    pub thread: String,
    /// The instruction's text.
    pub instruction: String,
    /// `R`, `W`, `F`, with ordering tags, e.g. `W.REL.gpu x = 1`.
    pub action: String,
}

impl EventView {
    /// Describes event `index` of thread `thread` (`None` for initial writes).
    #[must_use]
    pub fn new(test: &Test, index: usize, thread: Option<usize>, e: &Event) -> Self {
        let kind = if e.tags.contains(Tags::BAR) {
            "BAR"
        } else if e.tags.contains(Tags::R) {
            "R"
        } else if e.tags.contains(Tags::W) {
            "W"
        } else {
            "F"
        };
        let mut action = kind.to_string();
        for (tag, name) in [
            (Tags::RLX, "RLX"),
            (Tags::ACQ, "ACQ"),
            (Tags::REL, "REL"),
            (Tags::ACQ_REL, "ACQ_REL"),
            (Tags::SC, "SC"),
            (Tags::RMW, "RMW"),
        ] {
            if e.tags.contains(tag) {
                action.push('.');
                action.push_str(name);
            }
        }
        if let Some(scope) = e.scope {
            action.push_str(&format!(".{scope}"));
        }
        if let Some(loc) = e.loc {
            action.push_str(&format!(" {} = {}", test.loc_name(loc), e.value));
        }
        if let Some(b) = e.barrier {
            action.push_str(&format!(" instance {}", b.instance));
            if let Some(id) = b.id {
                action.push_str(&format!(" id {id}"));
            }
        }
        let (thread, instruction) = match thread {
            None => ("init".to_string(), String::new()),
            Some(t) => {
                let th = &test.threads[t];
                (
                    format!("P{}", th.id),
                    th.code
                        .get(e.line)
                        .map_or_else(String::new, |l| l.text.clone()),
                )
            }
        };
        EventView {
            index,
            thread,
            instruction,
            action,
        }
    }
}

/// A candidate execution, printed with its relations.
#[derive(Clone, Debug, Serialize)]
pub struct Witness {
    /// The events.
    pub events: Vec<EventView>,
    /// Named relations, as pairs of event indices (identity pairs and, for
    /// `cause`, pairs with initial writes left out).
    pub relations: Vec<(String, Vec<(usize, usize)>)>,
    /// Final register values.
    pub registers: Vec<(String, i64)>,
    /// The axioms it breaks: empty for a consistent witness.
    pub violations: Vec<Violation>,
    /// For a witness found with axioms dropped from the model: the dropped
    /// axioms it breaks (so the full model would reject it for these alone).
    pub breaks_dropped: Vec<Axiom>,
}

impl fmt::Display for Witness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.events {
            writeln!(
                f,
                "    e{:<3} {:<5} {:<34} {}",
                e.index, e.thread, e.instruction, e.action
            )?;
        }
        for (name, pairs) in &self.relations {
            if pairs.is_empty() {
                continue;
            }
            let text: Vec<String> = pairs.iter().map(|(a, b)| format!("e{a}->e{b}")).collect();
            writeln!(f, "    {name:<13} {}", text.join(" "))?;
        }
        if !self.registers.is_empty() {
            let regs: Vec<String> = self
                .registers
                .iter()
                .map(|(r, v)| format!("{r}={v}"))
                .collect();
            writeln!(f, "    registers     {}", regs.join(" "))?;
        }
        if !self.breaks_dropped.is_empty() {
            let names: Vec<&str> = self.breaks_dropped.iter().map(|a| a.name()).collect();
            writeln!(
                f,
                "    consistent only because the model leaves out {}",
                names.join(", ")
            )?;
        }
        for v in &self.violations {
            let events: Vec<String> = v.events.iter().map(|e| format!("e{e}")).collect();
            writeln!(
                f,
                "    breaks {}: {} ({})",
                v.axiom,
                v.what,
                events.join(" -> ")
            )?;
        }
        Ok(())
    }
}

/// The result of checking one test.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The test's name.
    pub name: String,
    /// Its quantifier.
    pub quantifier: Quantifier,
    /// The verdict.
    pub verdict: Verdict,
    /// Candidate executions in which every thread terminates.
    pub candidates: u64,
    /// Those the axioms accept.
    pub consistent: u64,
    /// Consistent ones that satisfy the condition (`exists`, `~exists`) or
    /// break it (`forall`).
    pub reaching: u64,
    /// Combinations of thread paths left out because a barrier blocks.
    pub blocked: u64,
    /// Thread paths left out because they exceed the loop bound.
    pub cut_paths: usize,
    /// The axioms checked.
    pub axioms: Vec<Axiom>,
    /// Time taken, in milliseconds.
    pub millis: f64,
    /// When the condition is reachable: a consistent execution that reaches it.
    pub witness: Option<Witness>,
    /// When it is not: the candidate that reaches it breaking the fewest axioms.
    pub closest: Option<Witness>,
}

impl Outcome {
    /// One line: name, verdict, counts, time.
    #[must_use]
    pub fn line(&self) -> String {
        format!(
            "{:<44} {:<9} {:>9} candidates {:>7} consistent {:>9.2} ms",
            self.name,
            self.verdict.to_string(),
            self.candidates,
            self.consistent,
            self.millis
        )
    }

    /// The verdict with its evidence: the witness, or the closest candidate
    /// and the axioms that reject it.
    #[must_use]
    pub fn explain(&self) -> String {
        let mut out = format!("{}\n", self.line());
        if let Some(w) = &self.witness {
            out.push_str(&format!(
                "  witness ({} {}):\n{w}",
                self.quantifier,
                if self.quantifier == Quantifier::Exists {
                    "reached"
                } else {
                    "broken"
                }
            ));
        } else if let Some(c) = &self.closest {
            let axioms: Vec<String> = c.violations.iter().map(|v| v.axiom.to_string()).collect();
            out.push_str(&format!(
                "  closest candidate, rejected by {}:\n{c}",
                axioms.join(", ")
            ));
        } else {
            out.push_str("  no candidate reaches the condition at all\n");
        }
        if self.blocked > 0 || self.cut_paths > 0 {
            out.push_str(&format!(
                "  left out: {} path combinations blocked at a barrier, {} paths cut by the loop bound\n",
                self.blocked, self.cut_paths
            ));
        }
        out
    }
}
