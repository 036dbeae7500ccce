//! Mutants of compiled PTX: each weakens one synchronization the source
//! relies on, and the refinement check must catch it with a counterexample.
//! A check that passed them all would be vacuous (a translation that drops
//! ordering tags, scopes or barriers).

use std::fmt;

/// A mutation of PTX text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutant {
    /// Every `ld.acquire` becomes `ld.relaxed`.
    AcquireToRelaxed,
    /// Every `st.release` becomes `st.relaxed`.
    ReleaseToRelaxed,
    /// The `n`-th `bar.sync` (from 0) is removed.
    DropBarrier(usize),
    /// Every `.gpu` and `.sys` scope becomes `.cta`.
    NarrowScope,
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mutant::AcquireToRelaxed => f.write_str("acquire load weakened to relaxed"),
            Mutant::ReleaseToRelaxed => f.write_str("release store weakened to relaxed"),
            Mutant::DropBarrier(n) => write!(f, "bar.sync #{n} removed"),
            Mutant::NarrowScope => f.write_str("scopes narrowed to .cta"),
        }
    }
}

/// The mutant does not apply: the PTX has nothing it would change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("mutant `{0}` changes nothing in this PTX")]
pub struct NotApplicable(pub Mutant);

impl Mutant {
    /// The mutated PTX.
    ///
    /// # Errors
    /// [`NotApplicable`] when the text has nothing to mutate, so that a
    /// test can never pass on an unchanged program.
    pub fn apply(self, ptx: &str) -> Result<String, NotApplicable> {
        let out = match self {
            Mutant::AcquireToRelaxed => ptx.replace("ld.acquire.", "ld.relaxed."),
            Mutant::ReleaseToRelaxed => ptx.replace("st.release.", "st.relaxed."),
            Mutant::DropBarrier(n) => {
                let mut seen = 0;
                let mut lines = Vec::new();
                for line in ptx.lines() {
                    if line.trim_start().starts_with("bar.sync") {
                        seen += 1;
                        if seen == n + 1 {
                            continue;
                        }
                    }
                    lines.push(line);
                }
                let mut text = lines.join("\n");
                text.push('\n');
                text
            }
            Mutant::NarrowScope => {
                ptx.lines()
                    .map(|l| {
                        let t = l.trim_start();
                        if t.starts_with("ld.")
                            || t.starts_with("st.")
                            || t.starts_with("atom.")
                            || t.starts_with("red.")
                        {
                            l.replace(".gpu.", ".cta.").replace(".sys.", ".cta.")
                        } else {
                            l.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
                    + "\n"
            }
        };
        if out.trim_end() == ptx.trim_end() {
            return Err(NotApplicable(self));
        }
        Ok(out)
    }
}
