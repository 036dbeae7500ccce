//! The handle-integrity pass: every handle in bounds, tables consistent. Later
//! passes index freely once this one has passed.

use cranelift_entity::{EntityRef, SecondaryMap};

use super::{Location, Rule, Sink};
use crate::entities::{FuncId, Inst, Ty};
use crate::function::ValueDef;
use crate::instructions::InstData;
use crate::types::TyKind;

/// Types refer only to earlier types, so layouts and displays terminate.
pub(super) fn check_types(sink: &mut Sink<'_>) -> bool {
    let mut ok = true;
    let types = &sink.module.types;
    let mut bad = Vec::new();
    for (ty, kind) in types.iter() {
        let parts: Vec<Ty> = match kind {
            TyKind::Int(_) | TyKind::F32 | TyKind::F64 => vec![],
            TyKind::Ptr { pointee, .. } => vec![*pointee],
            TyKind::Array { elem, .. } => vec![*elem],
            TyKind::Struct { fields, .. } => fields.clone(),
        };
        for part in parts {
            if part.index() >= ty.index() {
                bad.push((ty, part));
            }
        }
    }
    for (ty, part) in bad {
        ok = false;
        sink.report(
            Location::Type(ty),
            Rule::Handle,
            format!("refers to {part}, which is not an earlier type"),
        );
    }
    ok
}

pub(super) fn check_globals(sink: &mut Sink<'_>) -> bool {
    let m = sink.module;
    let mut ok = true;
    for (id, g) in m.globals.iter() {
        for r in g.init.iter().flat_map(|i| &i.relocations) {
            let exists = match r.target {
                crate::global::RelocTarget::Global(t) => m.globals.is_valid(t),
                crate::global::RelocTarget::Func(f) => m.functions.is_valid(f),
            };
            if !exists {
                ok = false;
                sink.report(
                    Location::Global(id),
                    Rule::Handle,
                    format!(
                        "relocation at offset {} targets {}, which does not exist",
                        r.offset, r.target
                    ),
                );
            }
        }
    }
    ok
}

/// Checks one function's handles. Returns whether later checks may index freely.
pub(super) fn check_function(sink: &mut Sink<'_>, fid: FuncId) -> bool {
    let m = sink.module;
    let f = &m.functions[fid];
    let mut errs: Vec<(Location, String)> = Vec::new();
    let ty_ok = |ty: Ty| m.types.contains(ty);
    for &p in &f.sig.params {
        if !ty_ok(p) {
            errs.push((
                Location::Function(fid),
                format!("parameter type {p} does not exist"),
            ));
        }
    }
    if let Some(r) = f.sig.ret
        && !ty_ok(r)
    {
        errs.push((
            Location::Function(fid),
            format!("return type {r} does not exist"),
        ));
    }
    let Some(body) = &f.body else {
        return report_all(sink, errs);
    };
    if body.blocks.is_empty() {
        errs.push((
            Location::Function(fid),
            "has a body with no blocks".to_owned(),
        ));
        return report_all(sink, errs);
    }
    // Values: types and definitions.
    for (v, data) in body.values.iter() {
        if !ty_ok(data.ty) {
            errs.push((
                Location::Function(fid),
                format!("{v} has type {}, which does not exist", data.ty),
            ));
        }
        let consistent = match data.def {
            ValueDef::Result(inst) => {
                body.insts.is_valid(inst) && body.results[inst].expand() == Some(v)
            }
            ValueDef::Param(block, n) => body
                .blocks
                .get(block)
                .and_then(|b| b.params.get(n as usize))
                .is_some_and(|&p| p == v),
        };
        if !consistent {
            errs.push((
                Location::Function(fid),
                format!("{v}'s definition {:?} does not list it", data.def),
            ));
        }
    }
    // Blocks: parameters and instruction membership.
    let mut seen: SecondaryMap<Inst, u32> = SecondaryMap::new();
    for (block, data) in body.blocks.iter() {
        for &p in &data.params {
            if !body.values.is_valid(p) {
                errs.push((
                    Location::Block(fid, block),
                    format!("parameter {p} does not exist"),
                ));
            }
        }
        for &inst in &data.insts {
            if !body.insts.is_valid(inst) {
                errs.push((
                    Location::Block(fid, block),
                    format!("lists {inst}, which does not exist"),
                ));
                continue;
            }
            seen[inst] += 1;
        }
    }
    for (inst, data) in body.insts.iter() {
        if seen[inst] != 1 {
            errs.push((
                Location::Inst(fid, inst),
                format!(
                    "appears in {} places in the layout; it must appear in exactly one",
                    seen[inst]
                ),
            ));
        }
        if let Some(r) = body.results[inst].expand()
            && body.values.get(r).map(|d| d.def) != Some(ValueDef::Result(inst))
        {
            errs.push((
                Location::Inst(fid, inst),
                format!("result {r} is not defined by it"),
            ));
        }
        data.for_each_operand(|v| {
            if !body.values.is_valid(v) {
                errs.push((
                    Location::Inst(fid, inst),
                    format!("uses {v}, which does not exist"),
                ));
            }
        });
        for call in data.branch_targets() {
            if !body.blocks.is_valid(call.block) {
                errs.push((
                    Location::Inst(fid, inst),
                    format!("targets {}, which does not exist", call.block),
                ));
            }
        }
        let mut tys: Vec<Ty> = Vec::new();
        match data {
            InstData::Iconst { ty, .. }
            | InstData::Fconst { ty, .. }
            | InstData::Null { ty }
            | InstData::Undef { ty }
            | InstData::Alloca { ty, .. }
            | InstData::Load { ty, .. }
            | InstData::Cast { ty, .. }
            | InstData::AtomicLoad { ty, .. } => tys.push(*ty),
            InstData::GlobalAddr { global, ty } => {
                tys.push(*ty);
                if !m.globals.is_valid(*global) {
                    errs.push((
                        Location::Inst(fid, inst),
                        format!("names {global}, which does not exist"),
                    ));
                }
            }
            InstData::FuncAddr { func, ty } => {
                tys.push(*ty);
                if !m.functions.is_valid(*func) {
                    errs.push((
                        Location::Inst(fid, inst),
                        format!("names {func}, which does not exist"),
                    ));
                }
            }
            InstData::Call { func, .. } if !m.functions.is_valid(*func) => {
                errs.push((
                    Location::Inst(fid, inst),
                    format!("calls {func}, which does not exist"),
                ));
            }
            InstData::InlineAsm { ret: Some(ty), .. } => tys.push(*ty),
            InstData::CallIndirect { sig, .. } => tys.extend(sig.params.iter().chain(&sig.ret)),
            _ => {}
        }
        for ty in tys {
            if !ty_ok(ty) {
                errs.push((
                    Location::Inst(fid, inst),
                    format!("names type {ty}, which does not exist"),
                ));
            }
        }
    }
    report_all(sink, errs)
}

fn report_all(sink: &mut Sink<'_>, errs: Vec<(Location, String)>) -> bool {
    let ok = errs.is_empty();
    for (loc, msg) in errs {
        sink.report(loc, Rule::Handle, msg);
    }
    ok
}
