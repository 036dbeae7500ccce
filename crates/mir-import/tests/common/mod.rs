//! Shared helpers for the corpus tests: a compact, stable summary of an
//! imported crate for snapshots, and the `//@` fact checker.

#![allow(dead_code)]

use std::fmt::Write;

use mir_import::Crate;
use mir_import::layout::TypeShape;
use mir_import::model::{BodyKind, DebugValue, StatementKind, TerminatorKind};

/// The corpus directory.
pub fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every corpus source, sorted by name.
pub fn corpus_files() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(corpus_dir())
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
}

fn is_kernel_item(path: &str) -> bool {
    path.starts_with("kernel::")
}

/// A summary of everything the kernel module contributed: bodies (shape, not
/// every statement), allocations of its statics, and its layouts. The prelude's
/// own bodies are left out, since they are the same in every source.
/// Absolute paths (in `<impl at /abs/file.rs:..>` and `{closure@/abs/..}`) are
/// replaced by `<corpus>` so the snapshots hold on any checkout.
pub fn summary(k: &Crate) -> String {
    let dir = corpus_dir().display().to_string();
    summary_raw(k).replace(&dir, "<corpus>")
}

fn summary_raw(k: &Crate) -> String {
    let mut s = String::new();
    for (_, b) in k.bodies.iter() {
        let path = b.path.to_string();
        if !is_kernel_item(&path) {
            continue;
        }
        let kind = match &b.kind {
            BodyKind::Fn { ctfe: false } => "fn".to_string(),
            BodyKind::Fn { ctfe: true } => "fn(ctfe)".to_string(),
            BodyKind::Const => "const".to_string(),
            BodyKind::Static(m) => format!("static({m:?})"),
            BodyKind::Promoted { index, .. } => format!("promoted[{index}]"),
        };
        let stmts: usize = b.blocks.values().map(|bb| bb.statements.len()).sum();
        let storage: usize = b
            .blocks
            .values()
            .flat_map(|bb| &bb.statements)
            .filter(|st| {
                matches!(
                    st.kind,
                    StatementKind::StorageLive(_) | StatementKind::StorageDead(_)
                )
            })
            .count();
        let terms: Vec<&str> = b
            .blocks
            .values()
            .map(|bb| match &bb.terminator.kind {
                TerminatorKind::Goto(_) => "goto",
                TerminatorKind::SwitchInt { .. } => "switch",
                TerminatorKind::Return => "return",
                TerminatorKind::Unreachable => "unreachable",
                TerminatorKind::UnwindResume => "resume",
                TerminatorKind::Terminate => "terminate",
                TerminatorKind::Assert { .. } => "assert",
                TerminatorKind::Drop { .. } => "drop",
                TerminatorKind::Call { .. } => "call",
                TerminatorKind::InlineAsm { .. } => "asm",
            })
            .collect();
        let _ = writeln!(
            s,
            "{kind} {path} -> {}: args {}, locals {}, blocks {} [{}], statements {} ({} storage), debug {}",
            b.return_ty,
            b.arg_count,
            b.locals.len(),
            b.blocks.len(),
            terms.join(" "),
            stmts,
            storage,
            b.debug.len() + b.scopes.len(),
        );
        if let Some(v) = &b.value {
            let _ = writeln!(s, "    = {v:?}");
        }
    }
    for a in k.allocs.values() {
        let Some(sp) = a.static_path.as_deref().filter(|p| is_kernel_item(p)) else {
            continue;
        };
        let uninit = a.bytes.iter().filter(|b| b.is_none()).count();
        let _ = write!(
            s,
            "alloc static {sp}: size {}, align {}, uninit {uninit}",
            a.size, a.align
        );
        for r in &a.relocations {
            let target = k.allocs.get(&r.target).and_then(|t| t.static_path.clone());
            let target = target
                .or_else(|| k.static_names.get(&r.target).cloned())
                .unwrap_or_else(|| "anon".into());
            let _ = write!(s, ", reloc @{} -> {target}+{}", r.offset, r.addend);
        }
        s.push('\n');
    }
    for (name, l) in &k.layouts.types {
        if !name.starts_with("kernel::") {
            continue;
        }
        let _ = write!(s, "layout {name}: size {}, align {}", l.size, l.align);
        match &l.shape {
            TypeShape::Struct { fields } => {
                for f in fields {
                    let _ = write!(s, ", .{}@{}", f.name, f.offset);
                }
            }
            TypeShape::Enum { tag, variants } => {
                let _ = write!(s, ", tag {tag:?}");
                for v in variants {
                    let fs: Vec<String> = v
                        .fields
                        .iter()
                        .map(|f| format!(".{}@{}", f.name, f.offset))
                        .collect();
                    let _ = write!(s, ", {}({})", v.name, fs.join(" "));
                }
            }
        }
        s.push('\n');
    }
    s
}

/// Checks the `//@` facts written in a corpus source against its import.
/// Returns how many facts were checked; panics with the failing fact otherwise.
///
/// Fact forms:
/// - `//@ local PATH _N: TYPE` — the local's type in fn/const/static PATH
/// - `//@ reloc STATIC OFFSET -> TARGET` — a relocation in the static's dumped
///   allocation; TARGET is `anon` or a static's path
/// - `//@ field TYPE .NAME @ OFFSET` — a field offset in rustc's layout
/// - `//@ size TYPE = N` — a type's size in rustc's layout
/// - `//@ body KIND PATH` — a body of that kind (`fn`, `const`, `static`, `promoted`) exists
/// - `//@ bytes STATIC OFFSET = HEX HEX ..` — bytes of a static's dumped allocation
pub fn check_facts(k: &Crate, source: &str, file: &str) -> usize {
    let mut n = 0;
    for line in source.lines() {
        let Some(fact) = line.trim().strip_prefix("//@ ") else {
            continue;
        };
        check_fact(k, fact).unwrap_or_else(|e| panic!("{file}: fact `{fact}` failed: {e}"));
        n += 1;
    }
    n
}

fn check_fact(k: &Crate, fact: &str) -> Result<(), String> {
    let (kind, rest) = fact.split_once(' ').ok_or("fact has no arguments")?;
    match kind {
        "local" => {
            let (path, rest) = rest.split_once(' ').ok_or("local: no local")?;
            let (local, ty) = rest.split_once(": ").ok_or("local: no type")?;
            let idx: usize = local
                .trim_start_matches('_')
                .parse()
                .map_err(|_| "local: bad _N")?;
            let body = k
                .bodies
                .values()
                .find(|b| {
                    b.path.to_string() == path && !matches!(b.kind, BodyKind::Promoted { .. })
                })
                .ok_or(format!("no body {path}"))?;
            let decl = body
                .locals
                .values()
                .nth(idx)
                .ok_or(format!("no local _{idx}"))?;
            let got = decl.ty.to_string();
            (got == ty)
                .then_some(())
                .ok_or(format!("local _{idx} has type `{got}`"))
        }
        "reloc" => {
            let mut it = rest.split_whitespace();
            let (sp, off, arrow, target) = (it.next(), it.next(), it.next(), it.next());
            let (Some(sp), Some(off), Some("->"), Some(target)) = (sp, off, arrow, target) else {
                return Err("reloc: expected STATIC OFFSET -> TARGET".into());
            };
            let off: u64 = off.parse().map_err(|_| "reloc: bad offset")?;
            let a = k
                .static_alloc(sp)
                .ok_or(format!("no dumped allocation for {sp}"))?;
            let r = a
                .relocations
                .iter()
                .find(|r| r.offset == off)
                .ok_or(format!("no relocation at {off} (have {:?})", a.relocations))?;
            let got = k
                .allocs
                .get(&r.target)
                .and_then(|t| t.static_path.clone())
                .or_else(|| k.static_names.get(&r.target).cloned())
                .unwrap_or_else(|| "anon".into());
            (got == target)
                .then_some(())
                .ok_or(format!("relocation targets {got}"))
        }
        "field" => {
            let (ty, rest) = rest.rsplit_once(" @ ").ok_or("field: no offset")?;
            let (ty, name) = ty.rsplit_once(" .").ok_or("field: no name")?;
            let off: u64 = rest.parse().map_err(|_| "field: bad offset")?;
            let l = k.layouts.get(ty).ok_or(format!("no layout for {ty}"))?;
            let TypeShape::Struct { fields } = &l.shape else {
                return Err(format!("{ty} is not a struct"));
            };
            let f = fields
                .iter()
                .find(|f| f.name == name)
                .ok_or(format!("no field .{name}"))?;
            (f.offset == off)
                .then_some(())
                .ok_or(format!("field .{name} is at {}", f.offset))
        }
        "size" => {
            let (ty, n) = rest.rsplit_once(" = ").ok_or("size: no `=`")?;
            let n: u64 = n.parse().map_err(|_| "size: bad number")?;
            let l = k.layouts.get(ty).ok_or(format!("no layout for {ty}"))?;
            (l.size == n)
                .then_some(())
                .ok_or(format!("size is {}", l.size))
        }
        "body" => {
            let (want, path) = rest.split_once(' ').ok_or("body: expected KIND PATH")?;
            let found = k.bodies.values().any(|b| {
                let kind = match &b.kind {
                    BodyKind::Fn { .. } => "fn",
                    BodyKind::Const => "const",
                    BodyKind::Static(_) => "static",
                    BodyKind::Promoted { .. } => "promoted",
                };
                kind == want && b.path.to_string() == path
            });
            found.then_some(()).ok_or(format!("no {want} body {path}"))
        }
        "bytes" => {
            let (head, hex) = rest.split_once(" = ").ok_or("bytes: no `=`")?;
            let (sp, off) = head
                .split_once(' ')
                .ok_or("bytes: expected STATIC OFFSET")?;
            let off: usize = off.parse().map_err(|_| "bytes: bad offset")?;
            let a = k
                .static_alloc(sp)
                .ok_or(format!("no dumped allocation for {sp}"))?;
            for (i, h) in hex.split_whitespace().enumerate() {
                let want = u8::from_str_radix(h, 16).map_err(|_| "bytes: bad hex")?;
                let got = a.bytes.get(off + i).copied().flatten();
                if got != Some(want) {
                    return Err(format!("byte {} is {got:?}, not {want:#04x}", off + i));
                }
            }
            Ok(())
        }
        "debug" => {
            // `//@ debug PATH NAME => _N`: a debug line maps a variable to a
            // local; `=> const C`, to a constant (a function item's path).
            let (path, rest) = rest.split_once(' ').ok_or("debug: no name")?;
            let (name, local) = rest.split_once(" => ").ok_or("debug: no `=>`")?;
            let body = k
                .bodies
                .values()
                .find(|b| b.path.to_string() == path)
                .ok_or(format!("no body {path}"))?;
            let in_scopes = |want: &dyn Fn(&DebugValue) -> bool| {
                let mut stack: Vec<&mir_import::model::Scope> = body.scopes.iter().collect();
                let mut found = body.debug.iter().any(|d| d.name == name && want(&d.value));
                while let Some(s) = stack.pop() {
                    found |= s.debug.iter().any(|d| d.name == name && want(&d.value));
                    stack.extend(s.children.iter());
                }
                found
            };
            let hit = match local.strip_prefix("const ") {
                Some(c) => in_scopes(&|v| matches!(v, DebugValue::Const(k) if k.to_string() == c)),
                None => body.debug.iter().any(|d| {
                    d.name == name
                        && matches!(&d.value, DebugValue::Place(p) if p.projection.is_empty() && p.local.to_string() == local)
                }),
            };
            hit.then_some(())
                .ok_or(format!("no `debug {name} => {local}`"))
        }
        _ => Err(format!("unknown fact kind `{kind}`")),
    }
}
