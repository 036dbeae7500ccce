//! Diagnostics: what the lowering refuses, naming the item, the MIR location
//! and the rule.

use serde::Serialize;

/// The rule a diagnostic enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Rule {
    /// A MIR construct the lowering does not support.
    Unsupported,
    /// A constant the evaluator and rustc's twin could not evaluate.
    ConstEval,
    /// A constant, constant table or static initializer that stores a
    /// relocation and whose type holds a pointer to shared memory.
    SharedPointerInConstant,
    /// A stored pointer to a `SharedArray` or `Barrier` static.
    SharedStaticRelocation,
    /// An interior view whose pointee layout cannot be proven.
    InteriorViewUnprovable,
    /// A typed view that does not match the bytes of its global.
    ViewMismatch,
    /// Interning the constants failed.
    Interning,
    /// The lowered module failed the device-IR verifier.
    Verifier,
}

impl Rule {
    /// A short stable name for the rule.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Unsupported => "unsupported-construct",
            Rule::ConstEval => "constant-evaluation",
            Rule::SharedPointerInConstant => "shared-pointer-in-constant",
            Rule::SharedStaticRelocation => "shared-static-relocation",
            Rule::InteriorViewUnprovable => "interior-view-unprovable",
            Rule::ViewMismatch => "view-mismatch",
            Rule::Interning => "interning",
            Rule::Verifier => "device-ir-verifier",
        }
    }
}

/// One refusal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("error[{}]: {item}{}: {message}", rule.name(), location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default())]
pub struct Diagnostic {
    /// The rule.
    pub rule: Rule,
    /// The item (`kernel::helper`, `kernel::HOLDER`).
    pub item: String,
    /// The MIR location (`bb2[3]`), if any.
    pub location: Option<String>,
    /// What was refused and why.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic without a location.
    pub fn new(rule: Rule, item: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            item: item.into(),
            location: None,
            message: message.into(),
        }
    }

    /// The same diagnostic at `location`.
    pub fn at(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }
}

/// Every refusal of one lowering, in a stable order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}", .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))]
pub struct Diagnostics(pub Vec<Diagnostic>);
