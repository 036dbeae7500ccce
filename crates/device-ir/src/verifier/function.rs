//! Function-level checks: shape, entry block, terminators, branch arguments and
//! dominance. Per-instruction checks are in `insts`.

use cranelift_entity::{EntityRef, SecondaryMap};

use super::{Location, Rule, Sink, insts};
use crate::entities::Ty;
use crate::entities::{Block, FuncId, Inst, Value};
use crate::function::{Body, FunctionData, FunctionKind, ParamAttrs, ValueDef};
use crate::global::Linkage;
use crate::module::Module;
use crate::types::{AddressSpace, TyKind};

pub(super) fn check_function(sink: &mut Sink<'_>, fid: FuncId) {
    let m = sink.module;
    let f = &m.functions[fid];
    let floc = Location::Function(fid);
    if f.linkage == Linkage::ExternallyInitialized {
        sink.report(
            floc,
            Rule::FunctionShape,
            "a function cannot be externally initialized; that linkage is for globals the host writes",
        );
    }
    match (f.kind, &f.body) {
        (FunctionKind::Kernel, body) => {
            if let Some(ret) = f.sig.ret {
                sink.report(
                    floc,
                    Rule::FunctionShape,
                    format!(
                        "a kernel returns {}; kernels return nothing",
                        m.types.display(ret)
                    ),
                );
            }
            if f.linkage != Linkage::External {
                sink.report(
                    floc,
                    Rule::FunctionShape,
                    "a kernel must have external linkage",
                );
            }
            if body.is_none() {
                sink.report(floc, Rule::FunctionShape, "a kernel must have a body");
            }
        }
        (FunctionKind::Device, None) => {
            if f.linkage != Linkage::External {
                sink.report(
                    floc,
                    Rule::FunctionShape,
                    "a declaration (no body) must have external linkage",
                );
            }
        }
        (FunctionKind::Device, Some(_)) => {}
    }
    check_param_attrs(sink, fid);
    let Some(body) = &f.body else { return };

    // Entry block parameters are the signature's.
    let entry = body.entry();
    let entry_tys: Vec<_> = body.blocks[entry]
        .params
        .iter()
        .map(|&p| body.values[p].ty)
        .collect();
    if entry_tys != f.sig.params {
        sink.report(
            Location::Block(fid, entry),
            Rule::EntryBlock,
            "the entry block's parameters differ from the function's signature",
        );
    }

    // Terminators.
    for (block, data) in body.blocks.iter() {
        match data.insts.last() {
            None => sink.report(
                Location::Block(fid, block),
                Rule::Terminator,
                "the block is empty",
            ),
            Some(&last) if !body.insts[last].is_terminator() => sink.report(
                Location::Block(fid, block),
                Rule::Terminator,
                "the block does not end with a terminator",
            ),
            _ => {}
        }
        for &inst in data.insts.iter().rev().skip(1) {
            if body.insts[inst].is_terminator() {
                sink.report(
                    Location::Inst(fid, inst),
                    Rule::Terminator,
                    "a terminator in the middle of a block",
                );
            }
        }
    }

    check_branches(sink, fid, body);
    check_dominance(sink, fid, body);
    for (block, data) in body.blocks.iter() {
        for &inst in &data.insts {
            insts::check_inst(sink, fid, body, block, inst);
        }
    }
}

fn check_branches(sink: &mut Sink<'_>, fid: FuncId, body: &Body) {
    let t = &sink.module.types;
    let mut errs = Vec::new();
    for (_, data) in body.blocks.iter() {
        let Some(&term) = data.insts.last() else {
            continue;
        };
        let targets = body.insts[term].branch_targets();
        for (i, call) in targets.iter().enumerate() {
            if call.block == body.entry() {
                errs.push((
                    Rule::EntryBlock,
                    term,
                    "branches to the entry block, which may have no predecessors".to_owned(),
                ));
                continue;
            }
            let params = &body.blocks[call.block].params;
            if params.len() != call.args.len() {
                errs.push((
                    Rule::BranchArgs,
                    term,
                    format!(
                        "passes {} arguments to {}, which has {} parameters",
                        call.args.len(),
                        call.block,
                        params.len()
                    ),
                ));
            } else {
                for (k, (&arg, &param)) in call.args.iter().zip(params).enumerate() {
                    let (at, pt) = (body.values[arg].ty, body.values[param].ty);
                    if at != pt {
                        errs.push((
                            Rule::BranchArgs,
                            term,
                            format!(
                                "argument {k} to {} is {arg} of type {}, but {param} has type {}",
                                call.block,
                                t.display(at),
                                t.display(pt)
                            ),
                        ));
                    }
                }
            }
            if let Some(other) = targets[..i].iter().find(|c| c.block == call.block)
                && other.args != call.args
            {
                errs.push((
                    Rule::BranchArgs,
                    term,
                    format!("two edges to {} pass different arguments; one phi entry per predecessor needs equal ones", call.block),
                ));
            }
        }
    }
    for (rule, inst, msg) in errs {
        sink.report(Location::Inst(fid, inst), rule, msg);
    }
}

/// The successors of `block`, in terminator order.
fn successors(body: &Body, block: Block) -> Vec<Block> {
    body.last_inst(block)
        .map(|t| {
            body.insts[t]
                .branch_targets()
                .iter()
                .map(|c| c.block)
                .collect()
        })
        .unwrap_or_default()
}

/// Immediate dominators of the blocks reachable from the entry (Cooper, Harvey and
/// Kennedy's iterative algorithm). Unreachable blocks map to `None`.
pub(crate) fn dominators(body: &Body) -> SecondaryMap<Block, Option<Block>> {
    let n = body.blocks.len();
    // Reverse postorder by an explicit DFS.
    let mut order = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    let mut stack: Vec<(Block, usize)> = vec![(body.entry(), 0)];
    visited[0] = true;
    while let Some((b, i)) = stack.pop() {
        let succs = successors(body, b);
        if i < succs.len() {
            stack.push((b, i + 1));
            let s = succs[i];
            if !visited[s.index()] {
                visited[s.index()] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    let mut rpo_index = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        rpo_index[b.index()] = i;
    }
    let mut preds: Vec<Vec<Block>> = vec![Vec::new(); n];
    for &b in &order {
        for s in successors(body, b) {
            preds[s.index()].push(b);
        }
    }
    let mut idom: SecondaryMap<Block, Option<Block>> = SecondaryMap::with_capacity(n);
    idom[body.entry()] = Some(body.entry());
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new: Option<Block> = None;
            for &p in &preds[b.index()] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(cur) => intersect(&idom, &rpo_index, p, cur),
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

fn intersect(
    idom: &SecondaryMap<Block, Option<Block>>,
    rpo: &[usize],
    a: Block,
    b: Block,
) -> Block {
    let (mut x, mut y) = (a, b);
    while x != y {
        while rpo[x.index()] > rpo[y.index()] {
            x = idom[x].unwrap_or(x);
        }
        while rpo[y.index()] > rpo[x.index()] {
            y = idom[y].unwrap_or(y);
        }
    }
    x
}

fn dominates(idom: &SecondaryMap<Block, Option<Block>>, a: Block, b: Block) -> bool {
    let mut cur = b;
    loop {
        if cur == a {
            return true;
        }
        match idom[cur] {
            Some(up) if up != cur => cur = up,
            _ => return false,
        }
    }
}

fn check_dominance(sink: &mut Sink<'_>, fid: FuncId, body: &Body) {
    let idom = dominators(body);
    // Position of each instruction in its block.
    let mut pos: SecondaryMap<Inst, (Block, usize)> =
        SecondaryMap::with_default((Block::from_u32(0), 0));
    for (block, data) in body.blocks.iter() {
        for (i, &inst) in data.insts.iter().enumerate() {
            pos[inst] = (block, i);
        }
    }
    let mut errs = Vec::new();
    for (block, data) in body.blocks.iter() {
        let reachable = idom[block].is_some();
        for (i, &inst) in data.insts.iter().enumerate() {
            body.insts[inst].for_each_operand(|v: Value| {
                let (def_block, def_pos) = match body.values[v].def {
                    ValueDef::Result(d) => (pos[d].0, Some(pos[d].1)),
                    ValueDef::Param(b, _) => (b, None),
                };
                if def_block == block {
                    if def_pos.is_some_and(|p| p >= i) {
                        errs.push((inst, format!("uses {v} before its definition")));
                    }
                } else if reachable
                    && (idom[def_block].is_none() || !dominates(&idom, def_block, block))
                {
                    errs.push((
                        inst,
                        format!(
                            "uses {v}, whose definition in {def_block} does not dominate {block}"
                        ),
                    ));
                }
            });
        }
    }
    for (inst, msg) in errs {
        sink.report(Location::Inst(fid, inst), Rule::Dominance, msg);
    }
}

/// Parameter attributes: one set per parameter (or none at all), and only
/// on pointers, since `noalias` and `readonly` promise something about
/// memory.
fn check_param_attrs(sink: &mut Sink<'_>, fid: FuncId) {
    let m = sink.module;
    let f = &m.functions[fid];
    let floc = Location::Function(fid);
    if f.param_attrs.is_empty() {
        return;
    }
    if f.param_attrs.len() != f.sig.params.len() {
        sink.report(
            floc,
            Rule::FunctionShape,
            format!(
                "{} parameter attribute sets for {} parameters",
                f.param_attrs.len(),
                f.sig.params.len()
            ),
        );
        return;
    }
    for (i, (attrs, &ty)) in f.param_attrs.iter().zip(&f.sig.params).enumerate() {
        if !attrs.is_empty() && !m.types.is_ptr(ty) {
            sink.report(
                floc,
                Rule::FunctionShape,
                format!(
                    "parameter {i} of type {} has pointer attributes {attrs:?}",
                    m.types.display(ty)
                ),
            );
        } else if attrs.contains(ParamAttrs::BYVAL)
            && let Some(why) = byval_refusal(m, f, *attrs, ty)
        {
            sink.report(
                floc,
                Rule::FunctionShape,
                format!("parameter {i} is `byval` but {why}"),
            );
        }
    }
}

/// Why a `byval` parameter of type `ty` is malformed, if it is: the launch
/// form (a kernel's generic pointer to an array of bytes' worth, nothing
/// else promised) is the only one any device or the printer implements.
fn byval_refusal(m: &Module, f: &FunctionData, attrs: ParamAttrs, ty: Ty) -> Option<&'static str> {
    let (pointee, space) = m.types.ptr_parts(ty)?;
    if f.kind != FunctionKind::Kernel {
        Some("the function is not a kernel")
    } else if attrs != ParamAttrs::BYVAL {
        Some("carries other promises too")
    } else if space != AddressSpace::Generic {
        Some("is not a generic pointer")
    } else if !matches!(m.types.kind(pointee), TyKind::Array { len, .. } if *len > 0) {
        Some("does not point at a non-empty array")
    } else {
        None
    }
}
