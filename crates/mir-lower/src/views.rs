//! Typed views of constant globals (DESIGN.md, "Typed views").
//!
//! A reference constant reads its global's bytes as its pointee type. Before
//! the lowering hands out such a pointer, it asks const-alloc to validate the
//! view against the bytes: it fits, is aligned, its pointer slots are exactly
//! the relocations there, and every scalar it reads is initialized and valid.
//! A view into the inside of an allocation whose pointee layout cannot be
//! proven from rustc's own report is refused.

use const_alloc::{SimpleLayout, Validity};
use device_ir::layout::POINTER_SIZE;
use mir_import::eval::layout::{Encoding, Layouts, Shape, UnknownLayout};
use mir_import::eval::{EvalAlloc, Memory};
use mir_import::model::{Crate, GenericArg, Ty};

use crate::diag::{Diagnostic, Rule};
use crate::globals::Ctx;

/// What a pointer of type `ty` points to: `&T`, `*const T`, and the payload of
/// a nullable `Option<&T>`.
fn pointee(ty: &Ty) -> Option<Ty> {
    if let Some(p) = ty.pointee() {
        return Some(p.clone());
    }
    if let Ty::Adt(p) = ty
        && p.def_path().ends_with("option::Option")
        && let [GenericArg::Type(inner)] = p.generic_args()
    {
        return inner.pointee().cloned();
    }
    None
}

/// The slots of `ty` at `base`, as far as rustc's report proves them. Struct
/// fields of ADTs carry no types in that report, so an ADT contributes its tag
/// only; primitives, pointers, arrays and tuples contribute every slot.
fn slots(
    krate: &Crate,
    layouts: &Layouts,
    ty: &Ty,
    base: u64,
    relocs: &[u64],
    out: &mut SimpleLayout,
    budget: &mut usize,
) -> Result<(), UnknownLayout> {
    if *budget == 0 {
        return Ok(());
    }
    *budget -= 1;
    let l = layouts.of(ty)?;
    match ty {
        Ty::Bool => out.slots.push(const_alloc::Slot::Scalar {
            offset: base,
            size: 1,
            validity: Validity::BOOL,
        }),
        Ty::Char => out.slots.push(const_alloc::Slot::Scalar {
            offset: base,
            size: 4,
            validity: Validity::Range {
                start: 0,
                end: 0x10_FFFF,
            },
        }),
        Ty::Int(_) | Ty::Float(_) => out.slots.push(const_alloc::Slot::Scalar {
            offset: base,
            size: l.size,
            validity: Validity::Any,
        }),
        Ty::Ref(..) => {
            out.slots.push(const_alloc::Slot::Pointer { offset: base });
            if matches!(l.shape, Shape::FatPointer) {
                out.slots.push(const_alloc::Slot::Scalar {
                    offset: base + POINTER_SIZE,
                    size: POINTER_SIZE,
                    validity: Validity::Any,
                });
            }
        }
        Ty::Array(e, _) => {
            if let Shape::Array { count, stride, .. } = l.shape {
                for i in 0..count {
                    slots(krate, layouts, e, base + i * stride, relocs, out, budget)?;
                }
            }
        }
        Ty::Tuple(es) => {
            if let Shape::Struct { fields } = &l.shape {
                for (i, e) in es.iter().enumerate() {
                    if let Some(o) = fields.get(&i.to_string()) {
                        slots(krate, layouts, e, base + o, relocs, out, budget)?;
                    }
                }
            }
        }
        Ty::Adt(_) => {
            // rustc's report gives field offsets and sizes but not field types.
            // A struct field whose type the kernel source states is checked
            // slot by slot. Inside any other field, a relocation is accepted as
            // a pointer slot where the report leaves room for a pointer
            // (aligned, inside one field of at least pointer size, off the
            // tag); anywhere else the view is refused.
            let typed = typed_fields(krate, layouts, ty);
            for (off, fty) in &typed {
                slots(krate, layouts, fty, base + off, relocs, out, budget)?;
            }
            let covered = |at: u64| {
                typed.iter().any(|(off, fty)| {
                    let size = layouts.of(fty).map_or(0, |l| l.size);
                    at >= base + off && at < base + off + size
                })
            };
            for r in relocs.iter().filter(|r| **r >= base && **r < base + l.size) {
                if r % POINTER_SIZE == 0 && !covered(*r) && pointer_fits(layouts, ty, r - base) {
                    out.slots.push(const_alloc::Slot::Pointer { offset: *r });
                }
            }
            if let Shape::Enum {
                encoding: Encoding::Direct { offset, size },
                variants,
            } = &l.shape
            {
                let tags: Vec<u128> = variants.iter().filter_map(|v| v.tag_value).collect();
                if let (Some(lo), Some(hi)) = (tags.iter().min(), tags.iter().max())
                    && tags.len() == variants.len()
                    && (hi - lo + 1) as usize == tags.len()
                {
                    out.slots.push(const_alloc::Slot::Scalar {
                        offset: base + offset,
                        size: *size,
                        validity: Validity::Range {
                            start: *lo,
                            end: *hi,
                        },
                    });
                }
            }
        }
        // A `fn` pointer is never null: it holds a function's address.
        Ty::FnPtr(..) => out.slots.push(const_alloc::Slot::Pointer { offset: base }),
        // A raw pointer may be null, dangling or an integer: it is a pointer
        // slot only where the bytes hold a relocation.
        Ty::RawPtr(..) if relocs.contains(&base) => {
            out.slots.push(const_alloc::Slot::Pointer { offset: base });
        }
        _ => {}
    }
    Ok(())
}

/// The fields of struct `ty` whose types the kernel source states, with their
/// offsets from rustc's report.
fn typed_fields(krate: &Crate, layouts: &Layouts, ty: &Ty) -> Vec<(u64, Ty)> {
    let Ty::Adt(p) = ty else { return Vec::new() };
    let Some(types) = krate
        .attrs
        .get(&p.def_path())
        .and_then(|a| a.field_types.as_ref())
    else {
        return Vec::new();
    };
    let Ok(l) = layouts.of(ty) else {
        return Vec::new();
    };
    let Shape::Struct { fields } = &l.shape else {
        return Vec::new();
    };
    types
        .iter()
        .enumerate()
        .filter_map(|(i, src)| {
            let off = *fields.get(&i.to_string())?;
            let fty = mir_import::attrs::resolve_source_type(src, krate)?;
            Some((off, fty))
        })
        .collect()
}

/// Whether rustc's report leaves room for a pointer at offset `o` of ADT
/// `ty`: inside one field (of a struct, or of any enum variant) of at least
/// pointer size, and not over a direct tag.
fn pointer_fits(layouts: &Layouts, ty: &Ty, o: u64) -> bool {
    let Some(entry) = layouts.table.get(&ty.to_string()) else {
        return false;
    };
    let inside = |f: &mir_import::layout::FieldLayout| {
        f.size >= POINTER_SIZE && f.offset <= o && o + POINTER_SIZE <= f.offset + f.size
    };
    match &entry.shape {
        mir_import::layout::TypeShape::Struct { fields } => fields.iter().any(inside),
        mir_import::layout::TypeShape::Enum { variants, tag } => {
            let over_tag = matches!(tag,
                mir_import::layout::TagLayout::Direct { offset, size } if o < offset + size && *offset < o + POINTER_SIZE);
            !over_tag && variants.iter().any(|v| v.fields.iter().any(inside))
        }
    }
}

/// The typed view that a pointer of type `ty` to `alloc` + `addend` in `mem`
/// makes, for [`crate::globals::Globals::alloc_global`] to validate; `None`
/// when the pointer is not a reference to a sized value. `item` names the
/// function being lowered, for the diagnostic.
pub fn view_layout(
    cx: &Ctx,
    mem: &Memory,
    alloc: EvalAlloc,
    addend: u64,
    ty: &Ty,
    item: &str,
) -> Result<Option<SimpleLayout>, Diagnostic> {
    let Some(pointee) = pointee(ty) else {
        return Ok(None);
    };
    let layouts = cx.layouts;
    if layouts.is_unsized(&pointee) {
        return Ok(None);
    }
    let alloc_size = mem.allocs[alloc].size();
    let layout = match layouts.of(&pointee) {
        Ok(l) => l,
        Err(e) => {
            return if addend != 0 || alloc_size == 0 {
                Err(Diagnostic::new(
                    Rule::InteriorViewUnprovable,
                    item,
                    format!(
                        "a reference into constant memory at offset {addend} is read as `{pointee}`, \
                         whose layout rustc's report does not prove ({e})"
                    ),
                ))
            } else {
                Err(Diagnostic::new(
                    Rule::InteriorViewUnprovable,
                    item,
                    format!("the view `{pointee}` of a constant cannot be proven: {e}"),
                ))
            };
        }
    };
    let mut view = SimpleLayout::new(layout.size, layout.align);
    let mut budget = 4096;
    // The relocations inside the view, relative to its start.
    let relocs: Vec<u64> = mem.allocs[alloc]
        .relocs
        .keys()
        .filter(|o| **o >= addend && **o < addend + layout.size)
        .map(|o| o - addend)
        .collect();
    slots(
        cx.krate,
        layouts,
        &pointee,
        0,
        &relocs,
        &mut view,
        &mut budget,
    )
    .map_err(|e| Diagnostic::new(Rule::InteriorViewUnprovable, item, e.to_string()))?;
    Ok(Some(view))
}
