//! The structuring walk over the flattened control-flow graph.
//!
//! `Extractor::region` walks from a node to a stop node, emitting each
//! block's statements and following its terminator. Branches are in
//! `extract/branch.rs`, loops in `extract/loops.rs`, calls that are not
//! inlined in `extract/calls.rs`, and values in [`super::value`]. This file holds the
//! extractor's state, the walk, local bindings and the program's assembly.

use std::collections::BTreeMap;

use mir_import::model::{Local, Operand, Place, StatementKind, TerminatorKind, Ty as MirTy};

use crate::flat::{Flat, NodeId};
use crate::live::Liveness;
use crate::value::{Resolved, Sym};
use crate::{ExtractError, Extraction, Launch, Warning, WarningKind};
use memory_model::lang::{Access, BinOp, Expr, InitStore, Program, Reg, Stmt, StmtId, Value};

/// The state of one extraction.
pub struct Extractor<'f, 'k> {
    pub(super) flat: &'f Flat<'k>,
    pub(super) launch: &'f Launch,
    pub(super) name: String,
    /// The symbolic value of each flat local.
    pub(super) env: Vec<Option<Sym>>,
    /// Definitions of each flat local in the graph: more than one means a register.
    pub(super) defs: Vec<u32>,
    /// The register of each register-backed local.
    pub(super) reg_of: BTreeMap<usize, Reg>,
    /// Registers whose value is a known constant at the current point.
    pub(super) known: BTreeMap<Reg, Value>,
    /// Registers whose value ranges over a known set (counted-loop variables).
    pub(super) ranges: BTreeMap<Reg, Vec<Value>>,
    /// Conditions known to hold at the current point.
    pub(super) assumptions: Vec<Expr>,
    pub(super) stmts: Vec<Stmt>,
    pub(super) regs: Vec<String>,
    /// Global buffers by parameter, and shared statics by allocation.
    pub(super) names: BTreeMap<Value, String>,
    pub(super) init: Vec<InitStore>,
    pub(super) shared: BTreeMap<mir_import::model::AllocId, Sym>,
    pub(super) next_shared: Value,
    /// The node being translated, for messages.
    pub(super) cur: NodeId,
    /// The statement being translated (`None`: the terminator), for liveness.
    pub(super) cur_stmt: Option<usize>,
    /// Liveness of flat locals.
    pub(super) live: Liveness,
    /// The user name of the local being assigned, for a load's register.
    pub(super) hint: Option<String>,
    pub(super) warnings: Vec<Warning>,
    pub(super) notes: Vec<String>,
}

impl<'f, 'k> Extractor<'f, 'k> {
    /// An extractor for the kernel at the root of `flat`.
    pub fn new(flat: &'f Flat<'k>, launch: &'f Launch, name: &str) -> Extractor<'f, 'k> {
        Extractor {
            flat,
            launch,
            name: name.to_string(),
            env: vec![None; flat.n_locals],
            defs: count_defs(flat),
            reg_of: BTreeMap::new(),
            known: BTreeMap::new(),
            ranges: BTreeMap::new(),
            assumptions: Vec::new(),
            stmts: Vec::new(),
            regs: Vec::new(),
            names: BTreeMap::new(),
            init: Vec::new(),
            shared: BTreeMap::new(),
            next_shared: 0,
            cur: 0,
            cur_stmt: None,
            live: Liveness::compute(flat),
            hint: None,
            warnings: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Extracts the kernel.
    ///
    /// # Errors
    /// A program that fails the verifier (a bug here), or an unsupported
    /// parameter type.
    pub fn run(mut self) -> Result<Extraction, ExtractError> {
        self.params()?;
        let mut out = Vec::new();
        self.region(0, None, &mut out);
        let body = self.push(Stmt::Seq(out));
        let program = Program {
            name: format!("extracted.{}", self.name),
            stmts: self.stmts,
            bodies: vec![body; (self.launch.threads * self.launch.ctas.max(1)) as usize],
            regs: self.regs,
            init: self.init,
            names: self.names,
            cta_size: self.launch.threads,
        };
        program.verify().map_err(|errors| {
            ExtractError::Verify(memory_model::lang::IllFormed {
                name: program.name.clone(),
                errors,
            })
        })?;
        Ok(Extraction {
            kernel: self.name,
            program,
            warnings: self.warnings,
            notes: self.notes,
        })
    }

    // ---- emission helpers ----

    pub(super) fn push(&mut self, stmt: Stmt) -> StmtId {
        self.stmts.push(stmt);
        StmtId((self.stmts.len() - 1) as u32)
    }

    pub(super) fn fresh_reg(&mut self, name: &str) -> Reg {
        let mut unique = name.to_string();
        let mut k = 1;
        while self.regs.contains(&unique) {
            k += 1;
            unique = format!("{name}{k}");
        }
        self.regs.push(unique);
        Reg((self.regs.len() - 1) as u16)
    }

    pub(super) fn warn(&mut self, kind: WarningKind, construct: &str, message: &str) {
        let (function, block) = self.flat.describe(self.cur);
        let w = Warning {
            kind,
            function,
            block,
            construct: construct.to_string(),
            message: message.to_string(),
        };
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// A value the model does not track: a register that nothing assigns (it
    /// reads 0), named `?N`, with a warning.
    pub(super) fn opaque(&mut self, kind: WarningKind, construct: &str, message: &str) -> Sym {
        let n = self.regs.iter().filter(|r| r.starts_with('?')).count();
        let r = self.fresh_reg(&format!("?{}", n + 1));
        let name = self.regs[usize::from(r.0)].clone();
        self.warn(kind, construct, &format!("{message} (register {name})"));
        Sym::Val(Expr::Reg(r))
    }

    pub(super) fn note(&mut self, text: String) {
        let (function, block) = self.flat.describe(self.cur);
        self.notes.push(format!("{function} {block}: {text}"));
    }

    /// Binds a local to a value. A register-backed local gets an assignment.
    pub(super) fn bind(&mut self, flat_local: usize, sym: Sym, out: &mut Vec<StmtId>) {
        if self.defs[flat_local] > 1
            && let Sym::Val(e) = &sym
        {
            let r = self.reg_for(flat_local);
            self.snapshot_stale(flat_local, r, out);
            match e {
                Expr::Const(v) => {
                    self.known.insert(r, *v);
                }
                _ => {
                    self.known.remove(&r);
                }
            }
            self.ranges.remove(&r);
            out.push(self.push(Stmt::Assign {
                dst: r,
                val: e.clone(),
            }));
            self.env[flat_local] = Some(Sym::Val(Expr::Reg(r)));
            return;
        }
        self.env[flat_local] = Some(sym);
    }

    /// Before `r` is assigned: every other live local whose value reads `r`
    /// is made to read a copy of `r`'s old value instead.
    fn snapshot_stale(&mut self, flat_local: usize, r: Reg, out: &mut Vec<StmtId>) {
        let live = self.live.after(self.flat, self.cur, self.cur_stmt);
        let stale: Vec<usize> = live
            .into_iter()
            .filter(|&l| l != flat_local && self.env[l].as_ref().is_some_and(|s| s.mentions(r)))
            .collect();
        if stale.is_empty() {
            return;
        }
        let old = self.fresh_reg(&format!("{}.old", self.regs[usize::from(r.0)]));
        out.push(self.push(Stmt::Assign {
            dst: old,
            val: Expr::Reg(r),
        }));
        for l in stale {
            self.env[l] = self.env[l].as_ref().map(|s| s.rename(r, old));
        }
    }

    pub(super) fn reg_for(&mut self, flat_local: usize) -> Reg {
        if let Some(r) = self.reg_of.get(&flat_local) {
            return *r;
        }
        let name = self.local_name(flat_local);
        let r = self.fresh_reg(&name);
        self.reg_of.insert(flat_local, r);
        r
    }

    /// A user variable's name from the debug info, or `fn._N`.
    pub(super) fn local_name(&self, flat_local: usize) -> String {
        self.debug_name(flat_local).unwrap_or_else(|| {
            let frame = self.frame_of(flat_local);
            let local = flat_local - self.flat.frames[frame].base;
            let f = self.flat.frames[frame]
                .name
                .rsplit("::")
                .next()
                .unwrap_or("");
            format!("{f}._{local}")
        })
    }

    fn frame_of(&self, flat_local: usize) -> usize {
        self.flat
            .frames
            .iter()
            .rposition(|f| f.base <= flat_local)
            .unwrap_or(0)
    }

    /// The register name for a load: the assigned user variable, or `ld`.
    pub(super) fn load_name(&self) -> String {
        self.hint.clone().unwrap_or_else(|| "ld".to_string())
    }

    /// A user variable's name from the debug info, when it is a plain name.
    pub(super) fn debug_name(&self, flat_local: usize) -> Option<String> {
        let frame = self.frame_of(flat_local);
        let body = self.flat.body(frame);
        let local = Local::from_u32((flat_local - self.flat.frames[frame].base) as u32);
        let mut found = None;
        let mut stack: Vec<&mir_import::model::Scope> = body.scopes.iter().collect();
        let mut debug: Vec<&mir_import::model::DebugInfo> = body.debug.iter().collect();
        while let Some(s) = stack.pop() {
            debug.extend(s.debug.iter());
            stack.extend(s.children.iter());
        }
        for d in debug {
            if let mir_import::model::DebugValue::Place(p) = &d.value
                && p.local == local
                && p.projection.is_empty()
                && d.name.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                found = Some(d.name.clone());
            }
        }
        found
    }

    /// Assigns to a place: a local binding, or a store through a pointer.
    pub(super) fn assign(&mut self, frame: usize, place: &Place, sym: Sym, out: &mut Vec<StmtId>) {
        if place.projection.is_empty() {
            let l = self.flat.local(frame, place.local);
            self.bind(l, sym, out);
            return;
        }
        match self.resolve(frame, place) {
            Resolved::Mem { space, addr, ty } => {
                let val = self.value_expr(sym, "stored value");
                out.push(self.push(Stmt::Store {
                    space,
                    addr,
                    ty,
                    val,
                    access: Access::Plain,
                }));
            }
            _ => {
                self.warn(
                    WarningKind::Action,
                    &format!("assignment to {place:?}"),
                    "not a local and not memory; dropped",
                );
            }
        }
    }

    pub(super) fn value_expr(&mut self, sym: Sym, what: &str) -> Expr {
        match sym {
            Sym::Val(e) => e,
            _ => match self.opaque(
                WarningKind::Value,
                what,
                "not an integer; an unconstrained value",
            ) {
                Sym::Val(e) => e,
                _ => Expr::Const(0),
            },
        }
    }

    // ---- the walk ----

    /// Emits the statements from `start` up to (not including) `stop`.
    pub(super) fn region(&mut self, start: NodeId, stop: Option<NodeId>, out: &mut Vec<StmtId>) {
        let mut b = start;
        loop {
            if Some(b) == stop {
                return;
            }
            self.cur = b;
            if self.flat.loops.contains_key(&b) {
                match self.loop_at(b, stop, out) {
                    Some(next) => {
                        b = next;
                        continue;
                    }
                    None => return,
                }
            }
            self.statements(b, out);
            match self.terminator(b, stop, out) {
                Some(next) => b = next,
                None => return,
            }
        }
    }

    /// Emits a node's statements.
    pub(super) fn statements(&mut self, b: NodeId, out: &mut Vec<StmtId>) {
        let node = self.flat.nodes[b];
        let body = self.flat.body(node.frame);
        for (i, st) in body.blocks[node.bb].statements.iter().enumerate() {
            self.cur = b;
            self.cur_stmt = Some(i);
            match &st.kind {
                StatementKind::Assign(place, rv) => {
                    let dest_ty = place
                        .projection
                        .is_empty()
                        .then(|| &body.locals[place.local].ty);
                    self.hint = place
                        .projection
                        .is_empty()
                        .then(|| self.debug_name(self.flat.local(node.frame, place.local)))
                        .flatten();
                    let sym = self.rvalue(node.frame, rv, dest_ty, out);
                    self.hint = None;
                    self.assign(node.frame, place, sym, out);
                }
                StatementKind::StorageLive(_)
                | StatementKind::StorageDead(_)
                | StatementKind::Nop
                | StatementKind::PlaceMention(_)
                | StatementKind::ConstEvalCounter
                | StatementKind::Assume(_) => {}
                other => self.warn(
                    WarningKind::Action,
                    &format!("{other:?}"),
                    "statement not modelled; dropped",
                ),
            }
        }
    }

    /// Follows a node's terminator: `Some(next)` to continue the walk.
    pub(super) fn terminator(
        &mut self,
        b: NodeId,
        stop: Option<NodeId>,
        out: &mut Vec<StmtId>,
    ) -> Option<NodeId> {
        self.cur = b;
        self.cur_stmt = None;
        let node = self.flat.nodes[b];
        let term = &self.flat.body(node.frame).blocks[node.bb].terminator.kind;
        match term {
            TerminatorKind::Goto(_) | TerminatorKind::Drop { .. } => {
                if matches!(term, TerminatorKind::Drop { .. }) {
                    self.warn(WarningKind::Action, "drop", "no drop glue is modelled");
                }
                self.flat.succs[b].first().copied()
            }
            TerminatorKind::InlineAsm { .. } => {
                self.warn(
                    WarningKind::Action,
                    "asm",
                    "inline assembly is not modelled",
                );
                self.flat.succs[b].first().copied()
            }
            TerminatorKind::Assert {
                cond,
                expected,
                msg,
                ..
            } => {
                let target = self.flat.succs[b].first().copied()?;
                let c = self.operand(node.frame, cond, out);
                let c = self.value_expr(c, "assert condition");
                let holds = if *expected {
                    c
                } else {
                    crate::value::bin(BinOp::Eq, c, Expr::Const(0))
                };
                self.guard(holds, target, stop, &format!("assert ({msg})"), out)
            }
            TerminatorKind::Return => {
                let frame = &self.flat.frames[node.frame];
                let (call, after) = frame.caller?;
                let ret = self.local_sym(node.frame, Local::from_u32(0));
                let cn = self.flat.nodes[call];
                if let TerminatorKind::Call { destination, .. } =
                    &self.flat.body(cn.frame).blocks[cn.bb].terminator.kind
                {
                    self.assign(cn.frame, destination, ret, out);
                }
                after
            }
            TerminatorKind::Unreachable
            | TerminatorKind::UnwindResume
            | TerminatorKind::Terminate => None,
            TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            } => {
                let d = self.operand(node.frame, discr, out);
                let d = self.value_expr(d, "switch discriminant");
                let other = self.flat.node(node.frame, *otherwise);
                let is_bool = match discr {
                    Operand::Copy(p) | Operand::Move(p) => {
                        p.projection.is_empty()
                            && self.flat.body(node.frame).locals[p.local].ty == MirTy::Bool
                    }
                    Operand::Const(_) => false,
                };
                let arms: Vec<(Expr, NodeId)> = match targets.as_slice() {
                    // `switchInt(c) -> [0: a, otherwise: b]` reads `if c { b } else { a }`
                    // for a bool, and `if x == 0 { a } else { b }` for an integer.
                    [(0, zero)] if is_bool => vec![
                        (d.clone(), other),
                        (Expr::Const(1), self.flat.node(node.frame, *zero)),
                    ],
                    _ => targets
                        .iter()
                        .map(|(v, t)| {
                            let cond = d.clone().equals(Expr::Const(*v as Value));
                            (cond, self.flat.node(node.frame, *t))
                        })
                        .chain([(Expr::Const(1), other)])
                        .collect(),
                };
                self.switch(b, arms, stop, out)
            }
            TerminatorKind::Call {
                func,
                args,
                destination,
                target,
                ..
            } => {
                if let Some(&callee) = self.flat.inlined.get(&b) {
                    let params: Vec<Sym> = args
                        .iter()
                        .map(|a| self.operand(node.frame, a, out))
                        .collect();
                    for (i, s) in params.into_iter().enumerate() {
                        let l = self.flat.local(callee, Local::from_u32(i as u32 + 1));
                        self.bind(l, s, out);
                    }
                    return self.flat.succs[b].first().copied();
                }
                self.call(node.frame, func, args, destination, out);
                target.map(|t| self.flat.node(node.frame, t))
            }
        }
    }

    pub(super) fn set_range(&mut self, r: Reg, values: Option<Vec<Value>>) {
        match values {
            Some(v) => {
                self.known.remove(&r);
                self.ranges.insert(r, v);
            }
            None => {
                self.ranges.remove(&r);
            }
        }
    }

    pub(super) fn known_value(&self, r: Reg) -> Option<Value> {
        self.known.get(&r).copied()
    }

    pub(super) fn set_known(&mut self, r: Reg, v: Value) {
        self.known.insert(r, v);
    }

    pub(super) fn reg_local(&self, r: Reg) -> Option<usize> {
        self.reg_of.iter().find(|(_, q)| **q == r).map(|(l, _)| *l)
    }

    pub(super) fn note_here(&mut self, text: String) {
        self.note(text);
    }

    pub(super) fn clear_known(&mut self) {
        self.known.clear();
    }

    pub(super) fn reg_name(&self, r: Reg) -> String {
        self.regs[usize::from(r.0)].clone()
    }

    pub(super) fn n_regs(&self) -> usize {
        self.regs.len()
    }
}

pub(super) fn collect_regs(e: &Expr, out: &mut Vec<Reg>) {
    match e {
        Expr::Reg(r) => out.push(*r),
        Expr::Bin(_, a, b) => {
            collect_regs(a, out);
            collect_regs(b, out);
        }
        Expr::Const(_) | Expr::Tid => {}
    }
}

/// How many times each flat local is defined in the graph: by an assignment,
/// a call's destination (once per callee `return` when inlined), or an
/// argument binding.
fn count_defs(flat: &Flat<'_>) -> Vec<u32> {
    let mut defs = vec![0u32; flat.n_locals];
    let body0 = flat.body(0);
    for i in 1..=body0.arg_count {
        defs[flat.local(0, Local::from_u32(i))] += 1;
    }
    for (id, node) in flat.nodes.iter().enumerate() {
        let block = &flat.body(node.frame).blocks[node.bb];
        for st in &block.statements {
            if let StatementKind::Assign(p, _) = &st.kind
                && p.projection.is_empty()
            {
                defs[flat.local(node.frame, p.local)] += 1;
            }
        }
        let TerminatorKind::Call {
            destination, args, ..
        } = &block.terminator.kind
        else {
            continue;
        };
        if let Some(&callee) = flat.inlined.get(&id) {
            for i in 0..args.len() {
                defs[flat.local(callee, Local::from_u32(i as u32 + 1))] += 1;
            }
            let returns = flat
                .body(callee)
                .blocks
                .values()
                .filter(|b| matches!(b.terminator.kind, TerminatorKind::Return))
                .count() as u32;
            if destination.projection.is_empty() {
                defs[flat.local(node.frame, destination.local)] += returns;
            }
        } else if destination.projection.is_empty() {
            defs[flat.local(node.frame, destination.local)] += 1;
        }
    }
    defs
}
